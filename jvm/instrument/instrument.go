package instrument

import (
	"encoding/binary"
	"math"
	"sort"

	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// Instrumenter adds probes to methods. It is not safe for concurrent use;
// use one per goroutine.
type Instrumenter struct {
	cfg   Config
	next  int32 // next id when Config.MethodID is nil
	refs  probeRefs
	leafs leafRefs
	sites siteRefs
	// scratch reused across methods
	insns   []Insn
	idx     []int32
	targets []int
	chunks  []Chunk
	layout  Layout
	codes   classfile.CodeArena // decoded and re-encoded Code attributes of the current class
	arena   []byte              // probe chunks of the current method
}

// New returns an Instrumenter for cfg; nil means DefaultConfig().
func New(cfg *Config) (*Instrumenter, error) {
	c := DefaultConfig()
	if cfg != nil {
		c = *cfg
	}
	if err := c.Verify(); err != nil {
		return nil, err
	}
	return &Instrumenter{cfg: c}, nil
}

// Config returns the instrumenter's configuration.
func (x *Instrumenter) Config() *Config { return &x.cfg }

// methodID returns the id of a method, ok false to leave it alone.
func (x *Instrumenter) methodID(class, name, desc string, access int, sig func() string) (int32, bool) {
	if x.cfg.MethodSig != nil {
		return x.cfg.MethodSig(class, name, desc, access, sig())
	}
	if x.cfg.MethodID != nil {
		return x.cfg.MethodID(class, name, desc)
	}
	id := x.next
	x.next++
	return id, true
}

// wants reports whether a method with these flags is instrumented at all.
func (x *Instrumenter) wants(access uint16) bool {
	if access&(AccAbstract|AccNative) != 0 {
		return false
	}
	return x.cfg.Bridges || access&AccBridge == 0
}

// frameVersion is the first class-file major version with StackMapTable.
const frameVersion = 50

// probeStack is what the probes add to max_stack: two ints on top of what is
// there (exit: id, line over the return value); the handler needs the
// exception and the id.
const probeStack = 2

// dupHead is the head of the thrown and bubble probes with PassThrowable.
var dupHead = []byte{byte(OpDup)}

// InstrumentCode returns a new Code for m with the entry, exit, thrown and
// bubble probes for id. pool is the class's constant pool (probe references
// are appended to it); major is the class-file major version. m.Code is not
// modified. A method that cannot be instrumented returns a typed error and
// should be kept as it is.
func (x *Instrumenter) InstrumentCode(m *Method, id int32, major uint16, pool Pool) (*Code, error) {
	return x.instrumentCode(m, id, major, pool, x.cfg.Leaves && !x.cfg.SitesOnly)
}

func (x *Instrumenter) instrumentCode(m *Method, id int32, major uint16, pool Pool, leaves bool) (*Code, error) {
	c := m.Code
	code := c.Bytecode
	if len(code) == 0 {
		return nil, codeErr(0, ErrTruncated, "empty code")
	}
	var err error
	if x.insns, err = Decode(code, x.insns[:0]); err != nil {
		return nil, err
	}
	insns := x.insns
	x.idx = index(insns, len(code), x.idx)
	idx := x.idx
	if err := checkTargets(code, insns, idx, x.targets); err != nil {
		return nil, err
	}
	if err := checkTables(c, idx, len(insns)); err != nil {
		return nil, err
	}
	hasFrames := c.HasFrames
	if major >= frameVersion && !hasFrames && needsFrames(code, insns, c.Handlers, x.targets) {
		return nil, codeErr(0, ErrNoStackMap, "")
	}
	entry := 0
	var preSuper []bool                                      // constructors: instructions that run before super()
	if m.Name == "<init>" && m.Class != "java/lang/Object" { // Object() has no super()
		if entry, preSuper, err = superCall(code, insns, idx, c.Handlers, pool); err != nil {
			return nil, err
		}
	}
	sitesOnly := x.cfg.SitesOnly
	if sitesOnly {
		if x.refs.throwable == 0 {
			if x.refs.throwable, err = pool.Class("java/lang/Throwable"); err != nil {
				return nil, err
			}
		}
	} else if err := x.refs.resolve(&x.cfg, pool); err != nil {
		return nil, err
	}
	// tick is the slot of a leaf method's tick local, -1 for other methods.
	tick := -1
	if leaves {
		if lp, ok := isLeaf(m, code, insns, pool, x.cfg.LeafCalls); ok {
			if err := x.leafs.resolve(&x.cfg, lp, pool); err != nil {
				return nil, err
			}
			tick = int(c.MaxLocals)
		}
	}
	lines := newLineTable(c.Lines)
	x.arena = x.arena[:0]
	// The id is pushed the same way by every probe: one pool lookup.
	var idBuf [3]byte
	idPush, err := pushInt(idBuf[:0], id, pool)
	if err != nil {
		return nil, err
	}
	chunks := x.chunks[:0]
	sites := len(x.cfg.Sites) > 0 && x.cfg.SiteID != nil
	for i, in := range insns {
		if sites {
			if chunks, err = x.siteChunks(chunks, m, insns, i, code, pool, lines); err != nil {
				return nil, err
			}
		}
		if sitesOnly {
			continue
		}
		if i == entry && tick >= 0 {
			b := binary.BigEndian.AppendUint16([]byte{byte(OpGetstatic)}, x.leafs.now)
			var c []byte
			x.arena, c = padded(x.arena, localOp(b, opLstore, tick))
			chunks = append(chunks, Chunk{At: in.Off, Bytes: c})
		} else if i == entry {
			var b []byte
			x.arena, b, err = probe(x.arena, x.refs.enter, pool, nil, idPush, false, 0)
			if err != nil {
				return nil, err
			}
			chunks = append(chunks, Chunk{At: in.Off, Bytes: b})
		}
		var ref, wordRef uint16
		var kind int32
		switch {
		case in.Op.IsReturn():
			ref, wordRef, kind = x.refs.exit, x.refs.exitWord, KindExit
		case in.Op == OpAthrow:
			if preSuper != nil && preSuper[i] {
				continue // before the entry probe: no event for this frame yet
			}
			ref, wordRef, kind = x.refs.thrown, x.refs.thrownWord, KindThrown
		default:
			continue
		}
		var head []byte
		if kind == KindThrown && x.cfg.PassThrowable {
			head = dupHead
		}
		line := lines.line(in.Off)
		var b []byte
		var wordBuf [3]byte
		w, ok := wordBuf[:0], false
		if wordRef != 0 {
			w, ok = pushWord(w, kind, id, line, pool)
		}
		if tick >= 0 {
			if !ok {
				return x.instrumentCode(m, id, major, pool, false)
			}
			var lb [16]byte
			body := append(localOp(lb[:0], opLload, tick), w...)
			body = binary.BigEndian.AppendUint16(append(body, byte(OpInvokestatic)), x.leafs.leaf)
			x.arena, b = padded(x.arena, body)
		} else if ok {
			x.arena, b, err = probeHead(x.arena, wordRef, pool, head, nil, w, false, 0)
		} else {
			x.arena, b, err = probeHead(x.arena, ref, pool, head, nil, idPush, true, line)
		}
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, Chunk{At: in.Off, Owned: true, Bytes: b})
	}
	if sitesOnly && len(chunks) == 0 {
		return nil, errNoSites
	}
	if sites {
		sortChunks(chunks)
	}
	x.chunks = chunks
	var hasFrame, spot func(int) bool
	if hasFrames {
		hasFrame = frameSet(c.Frames)
		spot = trampolineSpot(insns, c.Handlers, hasFrame)
	}
	l := &x.layout
	if err := l.relocate(code, insns, idx, chunks, hasFrame, spot); err != nil {
		return nil, err
	}
	var handler []byte
	var hhead []byte
	stack := probeStack
	if x.cfg.PassThrowable {
		hhead, stack = dupHead, probeStack+1
	}
	if sitesOnly {
		// The site probe pushes its id over the call's operands; the
		// handler holds the exception alone.
		x.arena, handler, err = probe(x.arena, x.sites.end, pool, []byte{byte(OpAthrow)}, nil, false, 0)
		stack = 1
	} else if tick >= 0 {
		var hb [16]byte
		b := append(append(hb[:0], hhead...), idPush...)
		b = localOp(b, opLload, tick)
		b = binary.BigEndian.AppendUint16(append(b, byte(OpInvokestatic)), x.leafs.bubble)
		x.arena, handler = padded(x.arena, append(b, byte(OpAthrow)))
		stack = leafStack
	} else {
		x.arena, handler, err = probeHead(x.arena, x.refs.bubble, pool, hhead, []byte{byte(OpAthrow)}, idPush, false, 0)
	}
	if err != nil {
		return nil, err
	}
	hpc := len(l.Code)
	if hpc+len(handler) > MaxCodeLen {
		return nil, codeErr(0, ErrTooLarge, "%d bytes", hpc+len(handler))
	}
	maxStack, maxLocals := int(c.MaxStack)+stack, c.MaxLocals
	if tick >= 0 {
		maxStack, maxLocals = max(maxStack, leafHandlerStack), uint16(tick+2)
	}
	out := &Code{
		MaxStack:  uint16(min(maxStack, math.MaxUint16)),
		MaxLocals: maxLocals,
		Bytecode:  append(l.Code, handler...),
		HasFrames: hasFrames || major >= frameVersion,
	}
	for _, h := range c.Handlers {
		s, _ := l.Start(int(h.StartPC))
		e, _ := l.End(int(h.EndPC))
		hp, _ := l.Start(int(h.HandlerPC))
		out.Handlers = append(out.Handlers, Handler{StartPC: uint16(s), EndPC: uint16(e), HandlerPC: uint16(hp), CatchType: h.CatchType})
	}
	// The catch-all starts after the entry probe (an exception from enter()
	// must not bubble) and ends before itself (its athrow must not be caught
	// again).
	cs, _ := l.Start(insns[entry].Off)
	out.Handlers = append(out.Handlers, Handler{StartPC: uint16(cs), EndPC: uint16(hpc), HandlerPC: uint16(hpc)})
	for _, t := range c.Lines {
		nt := make([]LineNumber, len(t))
		for i, e := range t {
			s, _ := l.Start(int(e.StartPC))
			nt[i] = LineNumber{StartPC: uint16(s), Line: e.Line}
		}
		out.Lines = append(out.Lines, nt)
	}
	out.LocalVars = mapLocals(l, c.LocalVars)
	out.LocalVarTypes = mapLocals(l, c.LocalVarTypes)
	if out.HasFrames {
		out.Frames = make([]Frame, 0, len(c.Frames)+1+len(l.tramps))
		for _, f := range c.Frames {
			nf := f
			nf.Offset, _ = l.Start(f.Offset)
			nf.Locals = mapUninit(l, f.Locals)
			nf.Stack = mapUninit(l, f.Stack)
			out.Frames = append(out.Frames, nf)
		}
		if len(l.tramps) > 0 {
			if out.Frames, err = x.trampolineFrames(m, pool, l, c.Frames, out.Frames); err != nil {
				return nil, err
			}
		}
		// Empty locals are assignable from every frame in the range (in a
		// constructor the range starts after super(), where this is initialized).
		// A leaf's tick local is set before the range and never changed.
		var hlocals []VType
		if tick >= 0 {
			if err := leafFrames(m, pool, out.Frames, tick); err != nil {
				return nil, err
			}
			hlocals = withTick(nil, tick)
		}
		out.Frames = append(out.Frames, Frame{
			Offset: hpc, Kind: classfile.FrameFull, Locals: hlocals,
			Stack: []VType{{Tag: classfile.VObject, Index: x.refs.throwable}},
		})
	}
	return out, nil
}

// trampolineSpot returns whether a trampoline may go before instruction j:
// after an instruction that does not fall through, where the StackMapTable
// has a frame already, outside every original exception range (the
// trampoline's frame, a copy of its target's, must satisfy no handler).
func trampolineSpot(insns []Insn, handlers []Handler, hasFrame func(int) bool) func(int) bool {
	return func(j int) bool {
		if j <= 0 || j >= len(insns) || !insns[j-1].Op.endsBlock() || !hasFrame(insns[j].Off) {
			return false
		}
		off := insns[j].Off
		for _, h := range handlers {
			if int(h.StartPC) <= off && off < int(h.EndPC) {
				return false
			}
		}
		return true
	}
}

// trampolineFrames adds to frames (the mapped frames, in the order of old) a
// full frame for each trampoline, equal to its target's, and turns the
// frame after each trampoline into a full frame, since it can no longer be
// encoded relative to its old predecessor.
func (x *Instrumenter) trampolineFrames(m *Method, pool Pool, l *Layout, old, frames []Frame) ([]Frame, error) {
	init, err := initialLocals(m, pool)
	if err != nil {
		return nil, err
	}
	locals, err := expandLocals(old, init)
	if err != nil {
		return nil, err
	}
	for _, tr := range l.Trampolines() {
		t := searchFrame(old, tr.Target)
		j := searchFrame(old, tr.At)
		if t >= len(old) || old[t].Offset != tr.Target || j >= len(old) || old[j].Offset != tr.At {
			return nil, codeErr(tr.Target, ErrBadFrames, "no frame at a trampoline's target or spot")
		}
		frames[j].Kind, frames[j].Locals, frames[j].Chop = classfile.FrameFull, mapUninit(l, locals[j]), 0
		frames = append(frames, Frame{Offset: tr.Pos, Kind: classfile.FrameFull,
			Locals: mapUninit(l, locals[t]), Stack: mapUninit(l, old[t].Stack)})
	}
	sort.SliceStable(frames, func(a, b int) bool { return frames[a].Offset < frames[b].Offset })
	return frames, nil
}

// initialLocals returns the locals of the implicit first frame (JVMS
// §4.10.1.6), in StackMapTable form (long and double one entry each).
func initialLocals(m *Method, pool Pool) ([]VType, error) {
	var ls []VType
	if m.Access&AccStatic == 0 {
		if m.Name == "<init>" && m.Class != "java/lang/Object" {
			ls = append(ls, VType{Tag: classfile.VUninitializedThis})
		} else {
			i, err := pool.Class(m.Class)
			if err != nil {
				return nil, err
			}
			ls = append(ls, VType{Tag: classfile.VObject, Index: i})
		}
	}
	d := m.Desc
	if len(d) == 0 || d[0] != '(' {
		return nil, codeErr(0, ErrBadPoolRef, "descriptor %q", d)
	}
	for i := 1; i < len(d) && d[i] != ')'; {
		_, n := typeSlots(d[i:])
		if n <= 0 {
			return nil, codeErr(0, ErrBadPoolRef, "descriptor %q", d)
		}
		t := d[i : i+n]
		i += n
		var v VType
		switch t[0] {
		case 'B', 'C', 'I', 'S', 'Z':
			v.Tag = classfile.VInteger
		case 'F':
			v.Tag = classfile.VFloat
		case 'J':
			v.Tag = classfile.VLong
		case 'D':
			v.Tag = classfile.VDouble
		default:
			name := t
			if t[0] == 'L' {
				name = t[1 : len(t)-1]
			}
			idx, err := pool.Class(name)
			if err != nil {
				return nil, err
			}
			v = VType{Tag: classfile.VObject, Index: idx}
		}
		ls = append(ls, v)
	}
	return ls, nil
}

// expandLocals returns the full locals of each frame, resolving same, chop
// and append frames against their predecessors from the initial locals.
func expandLocals(frames []Frame, init []VType) ([][]VType, error) {
	out := make([][]VType, len(frames))
	cur := init
	for i, f := range frames {
		switch f.Kind {
		case classfile.FrameChop:
			if f.Chop > len(cur) {
				return nil, codeErr(f.Offset, ErrBadFrames, "chop %d of %d locals", f.Chop, len(cur))
			}
			cur = cur[: len(cur)-f.Chop : len(cur)-f.Chop]
		case classfile.FrameAppend:
			cur = append(cur[:len(cur):len(cur)], f.Locals...)
		case classfile.FrameFull:
			cur = f.Locals
		}
		out[i] = cur
	}
	return out, nil
}

func mapLocals(l *Layout, tables [][]LocalVar) [][]LocalVar {
	var out [][]LocalVar
	for _, t := range tables {
		nt := make([]LocalVar, len(t))
		for i, v := range t {
			s, _ := l.Start(int(v.StartPC))
			e, _ := l.End(int(v.StartPC) + int(v.Length))
			nv := v
			nv.StartPC, nv.Length = uint16(s), uint16(e-s)
			nt[i] = nv
		}
		out = append(out, nt)
	}
	return out
}

// mapUninit returns vs with every Uninitialized(offset) mapped to the new
// offset of its new instruction; vs itself when there is none.
func mapUninit(l *Layout, vs []VType) []VType {
	var out []VType
	for i, v := range vs {
		if v.Tag != classfile.VUninitialized {
			continue
		}
		if out == nil {
			out = append([]VType(nil), vs...)
		}
		n, _ := l.Insn(int(v.Index))
		out[i].Index = uint16(n)
	}
	if out == nil {
		return vs
	}
	return out
}

func frameSet(frames []Frame) func(int) bool {
	return func(off int) bool {
		i := searchFrame(frames, off)
		return i < len(frames) && frames[i].Offset == off
	}
}

func searchFrame(frames []Frame, off int) int {
	lo, hi := 0, len(frames)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if frames[m].Offset < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// needsFrames reports whether code has a branch target or handler, which a
// version ≥ 50 method can only have with a StackMapTable.
func needsFrames(code []byte, insns []Insn, handlers []Handler, scratch []int) bool {
	if len(handlers) > 0 {
		return true
	}
	for _, in := range insns {
		if len(Targets(code, in, scratch[:0])) > 0 {
			return true
		}
	}
	return false
}

// checkTables verifies that every offset in the handler, line, local-variable
// tables and frames is at an instruction (ends may be the code length) and
// that Uninitialized types name a new instruction.
func checkTables(c *Code, idx []int32, n int) error {
	isStart := func(off int) bool { i := at(idx, off); return i >= 0 && i < n }
	isEnd := func(off int) bool { return at(idx, off) >= 0 }
	for _, h := range c.Handlers {
		if !isStart(int(h.StartPC)) || !isEnd(int(h.EndPC)) || h.EndPC <= h.StartPC || !isStart(int(h.HandlerPC)) {
			return codeErr(int(h.StartPC), ErrBadOffset, "exception table entry %v", h)
		}
	}
	for _, t := range c.Lines {
		for _, e := range t {
			if !isStart(int(e.StartPC)) {
				return codeErr(int(e.StartPC), ErrBadOffset, "line number entry")
			}
		}
	}
	for _, ts := range [][][]LocalVar{c.LocalVars, c.LocalVarTypes} {
		for _, t := range ts {
			for _, v := range t {
				if !isStart(int(v.StartPC)) || !isEnd(int(v.StartPC)+int(v.Length)) {
					return codeErr(int(v.StartPC), ErrBadOffset, "local variable entry")
				}
			}
		}
	}
	prev := -1
	for _, f := range c.Frames {
		if !isStart(f.Offset) || f.Offset <= prev {
			return codeErr(f.Offset, ErrBadFrames, "frame not at an instruction")
		}
		prev = f.Offset
		for _, vs := range [][]VType{f.Locals, f.Stack} {
			for _, v := range vs {
				if v.Tag == classfile.VUninitialized && !isStart(int(v.Index)) {
					return codeErr(f.Offset, ErrBadFrames, "uninitialized(%d)", v.Index)
				}
			}
		}
	}
	return nil
}
