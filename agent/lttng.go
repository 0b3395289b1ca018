package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tadpole-trace/tadpole/agent/internal/filter"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// LogPolicy decides which loggers' records are recorded.
type LogPolicy uint8

// Log policies (option logs=).
const (
	// LogsAuto records every logger until an LTTng session daemon enables
	// events for this process; from then on, and while that daemon stays
	// connected, only what it enables.
	LogsAuto LogPolicy = iota
	// LogsLTTng records only what an LTTng session daemon enables.
	LogsLTTng
	// LogsAll records every logger whatever LTTng says.
	LogsAll
	// LogsNone records no log record.
	LogsNone
)

var logPolicyNames = [...]string{"auto", "lttng", "all", "none"}

func (p LogPolicy) String() string {
	if int(p) < len(logPolicyNames) {
		return logPolicyNames[p]
	}
	return fmt.Sprintf("LOGS_%d", uint8(p))
}

// ParseLogPolicy parses auto, lttng, all or none.
func ParseLogPolicy(s string) (LogPolicy, error) {
	for i, n := range logPolicyNames {
		if s == n {
			return LogPolicy(i), nil
		}
	}
	return LogsAuto, errors.New("want auto, lttng, all or none")
}

// LogDest says where the records of a logger that an LTTng session
// enabled go (option logs=POLICY:TO).
type LogDest uint8

// Log destinations.
const (
	// LogsToBoth records them into the LTTng sessions and to HQ.
	LogsToBoth LogDest = iota
	// LogsToHQ records them to HQ only.
	LogsToHQ
	// LogsToLTTng records them into the LTTng sessions only.
	LogsToLTTng
)

var logDestNames = [...]string{"both", "hq", "lttng"}

func (d LogDest) String() string {
	if int(d) < len(logDestNames) {
		return logDestNames[d]
	}
	return fmt.Sprintf("LOGS_TO_%d", uint8(d))
}

// ParseLogDest parses both, hq or lttng.
func ParseLogDest(s string) (LogDest, error) {
	for i, n := range logDestNames {
		if s == n {
			return LogDest(i), nil
		}
	}
	return LogsToBoth, errors.New("want both, hq or lttng after the colon")
}

// enabledName is what one daemon connection enabled under one name: the
// sessiond sends one DISABLE per variant whose count drops to zero, so the
// agent counts per (connection, name) and keeps every variant until the
// count is zero.
type enabledName struct {
	count    int
	variants []*filter.Rule
}

// logControl is the process-wide state that decides, per logger, whether
// records are recorded and through which rules.
var logControl struct {
	mu     sync.Mutex
	policy LogPolicy
	to     LogDest
	// conns holds what each daemon connection enabled; a connection is in
	// the map from its first ENABLE until it closes.
	conns map[*lttngagent.Conn]map[string]*enabledName
}

// SetLogPolicy changes the log policy of the process.
func SetLogPolicy(p LogPolicy) {
	logControl.mu.Lock()
	logControl.policy = p
	logControl.mu.Unlock()
	refreshLoggers()
}

// refreshLoggers recomputes every logger's rules and enabled flag.
func refreshLoggers() {
	for _, l := range Loggers() {
		refreshLogger(l)
	}
}

// refreshLogger decides one logger's state from the policy and the rules.
func refreshLogger(l *Logger) {
	logControl.mu.Lock()
	defer logControl.mu.Unlock()
	var rules []*filter.Rule
	for _, names := range logControl.conns {
		for _, e := range names {
			for _, r := range e.variants {
				if r.Name.Match(l.name) {
					rules = append(rules, r)
				}
			}
		}
	}
	all := false
	switch logControl.policy {
	case LogsAll:
		all = true
	case LogsAuto:
		all = len(logControl.conns) == 0
	}
	on := all || len(rules) > 0
	lt := LogAccept{Kind: AcceptNone}
	if len(rules) > 0 && logControl.policy != LogsNone && logControl.to != LogsToHQ {
		lt = summarise(rules)
	}
	if len(rules) > 0 && logControl.to == LogsToLTTng {
		on = false // the sessions' records go to LTTng alone
	}
	switch LoggerOverride(l.override.Load()) {
	case OverrideOn:
		all, on = true, true
	case OverrideOff:
		all, on = false, false
	}
	changed := l.lttng.Swap(packAccept(lt)) != packAccept(lt)
	lttngWarn(lt)
	if all || !on {
		changed = l.rules.Swap(nil) != nil || changed
	} else {
		old := l.rules.Swap(&rules)
		changed = changed || old == nil || !sameRules(*old, rules)
	}
	// Hosts copying the logger's state (Accept) hear of every change.
	if l.enabled.Swap(on) != on || changed || !l.announced {
		l.announced = true
		notifyLogger(l, on)
	}
}

// sameRules reports whether a and b hold the same rules, in any order.
func sameRules(a, b []*filter.Rule) bool {
	if len(a) != len(b) {
		return false
	}
	for _, r := range a {
		if !slices.Contains(b, r) {
			return false
		}
	}
	return true
}

// cliFilter is the filter expression the lttng client generates for an
// agent-domain event from its name and level alone (lttng-ctl): the name
// unless it is "*", then the level unless it is ALL, each parenthesised
// once AND-ed.
func cliFilter(name string, t filter.LevelType, value int32) string {
	f := ""
	if name != "*" {
		f = `logger_name == "` + name + `"`
	}
	op := ""
	switch t {
	case filter.LevelRange:
		op = ">="
	case filter.LevelSingle:
		op = "=="
	default:
		return f
	}
	lv := "int_loglevel " + op + " " + strconv.Itoa(int(value))
	if f == "" {
		return lv
	}
	return "(" + f + ") && (" + lv + ")"
}

// ruleFilter is the filter a rule keeps: none when the expression is the
// one the client generates from the name and level, which the rule's own
// name and level tests already apply (so that hosts may decide on such
// records without evaluating it). A name holding a quote or a backslash
// keeps its expression: the string literal may not read as the name.
func ruleFilter(ev lttngagent.Event) string {
	if ev.Filter == "" || strings.ContainsAny(ev.Name, `"\`) {
		return ev.Filter
	}
	if ev.Filter == cliFilter(ev.Name, filter.LevelType(ev.LogLevelType), ev.LogLevel) {
		return ""
	}
	return ev.Filter
}

// lttngHandler answers the session daemon from the logger registry.
type lttngHandler struct{ log *logger }

func (h lttngHandler) List(*lttngagent.Conn) []string {
	ls := Loggers()
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.name
	}
	return names
}

func (h lttngHandler) Enable(c *lttngagent.Conn, ev lttngagent.Event) lttngagent.ReplyCode {
	level := filter.Level{Type: filter.LevelType(ev.LogLevelType), Value: ev.LogLevel}
	r, err := filter.NewRule(ev.Name, level, ruleFilter(ev))
	if err != nil {
		// Refusing would make the user's lttng command fail; record by name
		// and level instead, and say so once.
		h.log.oncef("filter:"+ev.Filter, LevelWarn, "LTTng filter %q not understood (%v): applying name and level only", ev.Filter, err)
		r, _ = filter.NewRule(ev.Name, level, "")
	}
	logControl.mu.Lock()
	if logControl.conns == nil {
		logControl.conns = make(map[*lttngagent.Conn]map[string]*enabledName)
	}
	names := logControl.conns[c]
	if names == nil {
		names = make(map[string]*enabledName)
		logControl.conns[c] = names
	}
	e := names[ev.Name]
	if e == nil {
		e = &enabledName{}
		names[ev.Name] = e
	}
	e.count++
	e.variants = append(e.variants, r)
	logControl.mu.Unlock()
	h.log.logf(LevelDebug, "LTTng %v enabled %v", c, ev)
	refreshLoggers()
	return lttngagent.ReplySuccess
}

func (h lttngHandler) Disable(c *lttngagent.Conn, name string) lttngagent.ReplyCode {
	logControl.mu.Lock()
	e := logControl.conns[c][name]
	if e == nil {
		logControl.mu.Unlock()
		return lttngagent.ReplyUnknownName
	}
	e.count--
	if e.count <= 0 {
		delete(logControl.conns[c], name)
	}
	logControl.mu.Unlock()
	h.log.logf(LevelDebug, "LTTng %v disabled %q", c, name)
	refreshLoggers()
	return lttngagent.ReplySuccess
}

func (h lttngHandler) AppContext(c *lttngagent.Conn, enable bool, provider, ctx string) lttngagent.ReplyCode {
	// Application contexts are not provided: a filter naming one is false.
	h.log.logf(LevelDebug, "LTTng %v app context $app.%s:%s enable=%v", c, provider, ctx, enable)
	return lttngagent.ReplySuccess
}

func (h lttngHandler) Closed(c *lttngagent.Conn) {
	logControl.mu.Lock()
	_, had := logControl.conns[c]
	delete(logControl.conns, c)
	logControl.mu.Unlock()
	if had {
		refreshLoggers()
	}
}

var lttngDomains = map[string]lttngagent.Domain{
	"jul":    lttngagent.DomainJUL,
	"log4j":  lttngagent.DomainLog4j,
	"python": lttngagent.DomainPython,
}

// lttngReg is the registration RegisterLTTng made: it lasts the
// process's life, and agents started later use it instead of their own.
var lttngReg struct {
	mu sync.Mutex
	c  *lttngagent.Client
}

// RegisterLTTng registers the process with the LTTng session daemon(s) in
// the background, with no HQ: `lttng list -j` lists its loggers and
// `lttng enable-event -j` enables them for recording into LTTng
// (Logger.LTTngAccept) from then on, for the rest of the process's life.
// It applies cfg's log policy and destination (logs=) and domain. An
// Agent started later shares this registration instead of making its own,
// so HQ and LTTng work side by side. It does nothing when cfg.LTTng is off
// or the process is already registered.
func RegisterLTTng(cfg Config) error {
	if err := cfg.Verify(); err != nil {
		return err
	}
	if !cfg.LTTng {
		return nil
	}
	lttngReg.mu.Lock()
	defer lttngReg.mu.Unlock()
	if lttngReg.c != nil {
		return nil
	}
	log, err := newLogger(cfg.Log, cfg.LogLevel)
	if err != nil {
		return err
	}
	domain.Store(cfg.LTTngDomain)
	logControl.mu.Lock()
	logControl.policy, logControl.to = cfg.Logs, cfg.LogsTo
	logControl.mu.Unlock()
	refreshLoggers()
	loadLTTngRecorder(cfg)
	c, err := newLTTngClient(cfg, log)
	if err != nil {
		log.oncef("lttng-start", LevelWarn, "not registering with LTTng: %v", err)
		log.close()
		return err
	}
	lttngReg.c = c
	return nil
}

// setLogDest changes where LTTng sessions' records go.
func setLogDest(d LogDest) {
	logControl.mu.Lock()
	logControl.to = d
	logControl.mu.Unlock()
	refreshLoggers()
}

// startLTTng is an agent's registration: none of its own when
// RegisterLTTng registered the process already (nil client).
func startLTTng(cfg Config, log *logger) (*lttngagent.Client, error) {
	setLogDest(cfg.LogsTo)
	loadLTTngRecorder(cfg)
	lttngReg.mu.Lock()
	shared := lttngReg.c != nil
	lttngReg.mu.Unlock()
	if shared {
		return nil, nil
	}
	return newLTTngClient(cfg, log)
}

// newLTTngClient registers the process with the LTTng session daemon(s) in the
// background. It waits for the registration only up to cfg.LTTngWait.
func newLTTngClient(cfg Config, log *logger) (*lttngagent.Client, error) {
	lc := lttngagent.DefaultConfig()
	lc.Domain = lttngDomains[cfg.LTTngDomain]
	if cfg.LTTngRetry > 0 {
		lc.RetryDelay = cfg.LTTngRetry
	}
	lc.Port = cfg.LTTngPort // > 0: that daemon only, no port files
	lc.Dialect = cfg.LTTngDialect
	if cfg.LTTngDialect == lttngagent.DialectRFC01 {
		lc.FallbackPort = lttngagent.RFC01Port
	}
	lc.Logger = lttngagent.NewFuncLogger(slog.LevelDebug, func(level slog.Level, line string) {
		l := LevelDebug
		switch {
		case level >= slog.LevelError:
			l = LevelError
		case level >= slog.LevelWarn:
			l = LevelWarn
		case level >= slog.LevelInfo:
			l = LevelInfo
		}
		log.logf(l, "%s", line)
	})
	c, err := lttngagent.NewClient(&lc, lttngHandler{log: log})
	if err != nil {
		return nil, err
	}
	if cfg.LTTngWait > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.LTTngWait)
		defer cancel()
		if err := c.WaitRegistered(ctx); err != nil {
			log.oncef("lttng-wait", LevelInfo, "no LTTng session daemon registered within %v", cfg.LTTngWait)
		}
	}
	return c, nil
}
