package instrument

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// typedReasons are the errors a method may legitimately be skipped with.
var typedReasons = []error{
	ErrTooLarge, ErrBranchOverflow, ErrCtorFlow, ErrNoStackMap,
	ErrTruncated, ErrBadOpcode, ErrBadWide, ErrBadSwitch, ErrBadBranch, ErrBadOffset, ErrBadFrames, ErrBadPoolRef,
	classfile.ErrPoolFull, classfile.ErrTooLarge,
}

// isTyped reports whether err is one of the package's or classfile's typed errors.
func isTyped(err error) bool {
	_, ok := reasonOf(err)
	return ok || errors.As(err, new(*CodeError)) || errors.As(err, new(*classfile.FormatError))
}

func reasonOf(err error) (error, bool) {
	for _, r := range typedReasons {
		if errors.Is(err, r) {
			return r, true
		}
	}
	return nil, false
}

// typeAnnotations counts the Code type annotation attributes checkClass saw.
var typeAnnotations int

// checkClass re-parses an instrumented class and checks every instrumented
// method's code: instructions, branch targets, tables and frames.
func checkClass(out []byte, res *ClassResult) error {
	c, err := classfile.Parse(out)
	if err != nil {
		return fmt.Errorf("re-parse: %w", err)
	}
	done := map[string]bool{}
	for _, m := range res.Methods {
		if m.Err == nil {
			done[m.Name+m.Desc] = true
		}
	}
	for i := range c.Methods {
		m := &c.Methods[i]
		if !done[c.MemberName(m)+c.MemberDesc(m)] {
			continue
		}
		cc, err := m.Code(c.Pool)
		if err != nil {
			return fmt.Errorf("%s: decode code: %w", c.MemberName(m), err)
		}
		code := fromClassfile(cc)
		insns, err := Decode(code.Bytecode, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", c.MemberName(m), err)
		}
		idx := index(insns, len(code.Bytecode), nil)
		if err := checkTargets(code.Bytecode, insns, idx, nil); err != nil {
			return fmt.Errorf("%s: %w", c.MemberName(m), err)
		}
		if err := checkTables(code, idx, len(insns)); err != nil {
			return fmt.Errorf("%s: %w", c.MemberName(m), err)
		}
		if c.Major >= frameVersion && !code.HasFrames {
			return fmt.Errorf("%s: no StackMapTable", c.MemberName(m))
		}
		for _, a := range cc.Attrs {
			if a.Kind != classfile.CodeAttrRaw || !isTypeAnnotations(c.Pool, a.Name) {
				continue
			}
			as, err := classfile.DecodeTypeAnnotations(a.Data, -1)
			if err != nil {
				return fmt.Errorf("%s: type annotations: %w", c.MemberName(m), err)
			}
			for _, ta := range as {
				if ta.Target.HasOffset() && at(idx, int(ta.Offset)) < 0 {
					return fmt.Errorf("%s: type annotation offset %d not at an instruction", c.MemberName(m), ta.Offset)
				}
				for _, v := range ta.LocalVars {
					if at(idx, int(v.StartPC)) < 0 || at(idx, int(v.StartPC+v.Length)) < 0 {
						return fmt.Errorf("%s: type annotation local %+v", c.MemberName(m), v)
					}
				}
			}
			typeAnnotations++
		}
		last := code.Handlers[len(code.Handlers)-1]
		if last.CatchType != 0 || int(last.EndPC) != int(last.HandlerPC) || Opcode(code.Bytecode[len(code.Bytecode)-1]) != OpAthrow {
			return fmt.Errorf("%s: catch-all %+v", c.MemberName(m), last)
		}
	}
	return nil
}

func TestJDKWalk(t *testing.T) {
	jdkcorpus.Require(t)
	cfg := DefaultConfig()
	cfg.Exclude = nil
	x, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	var classes, changed, methods, instrumented, parseErrs int
	reasons := map[string]int{}
	err = jdkcorpus.Walk(func(path string, b []byte) error {
		classes++
		out, res, err := x.InstrumentClass(b)
		if err != nil {
			if !isTyped(err) {
				t.Errorf("%s: untyped error %v", path, err)
			}
			parseErrs++
			return nil
		}
		for _, m := range res.Methods {
			methods++
			if m.Err == nil {
				instrumented++
				continue
			}
			r, ok := reasonOf(m.Err)
			if !ok {
				t.Errorf("%s.%s%s: untyped error %v", res.Class, m.Name, m.Desc, m.Err)
				continue
			}
			reasons[r.Error()]++
			if testing.Verbose() && reasons[r.Error()] <= 3 {
				t.Logf("skipped %s.%s%s: %v", res.Class, m.Name, m.Desc, m.Err)
			}
		}
		if out == nil {
			return nil
		}
		changed++
		if err := checkClass(out, res); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("JDK corpus: %d Code type annotation attributes mapped", typeAnnotations)
	t.Logf("JDK corpus: %d classes, %d rewritten, %d class errors; %d methods selected, %d instrumented",
		classes, changed, parseErrs, methods, instrumented)
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("  skipped %6d: %s", reasons[k], k)
	}
	if instrumented == 0 || instrumented < methods*9/10 {
		t.Errorf("only %d of %d methods instrumented", instrumented, methods)
	}
}
