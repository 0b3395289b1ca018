package filter

// Rule is one enabled event as an agent applies it: the logger name
// pattern, the level rule and the filter expression (nil when there is
// none). It is immutable and safe for concurrent use.
type Rule struct {
	Name   Glob
	Level  Level
	Filter *Program
}

// NewRule compiles the parts of an ENABLE. An empty filter means none.
func NewRule(name string, level Level, filter string) (*Rule, error) {
	r := &Rule{Name: CompileGlob(name), Level: level}
	if filter != "" {
		p, err := Compile(filter)
		if err != nil {
			return nil, err
		}
		r.Filter = p
	}
	return r, nil
}

// Match reports whether the record passes the name pattern, the level rule
// and the filter, in that order (the cheapest first).
func (r *Rule) Match(rec *Record) bool {
	return r.Name.Match(rec.LoggerName) && r.Level.Match(rec.Level) &&
		(r.Filter == nil || r.Filter.Eval(rec))
}
