package instrument

import "encoding/binary"

// MaxCodeLen is the largest code_length a method may have (JVMS §4.7.3).
const MaxCodeLen = 65535

// Chunk is bytecode inserted before the original instruction at At. Its length
// must be a multiple of 4, so that switch padding never changes. An Owned
// chunk belongs to the instruction: branches, handlers and frames that
// pointed at the instruction now point at the chunk (an exit probe before a
// return). A chunk that is not owned sits before the owned ones and is skipped
// by branches (the entry probe: a loop back to offset 0 must not enter again).
type Chunk struct {
	At    int
	Owned bool
	Bytes []byte
}

// Widening sizes: goto/jsr → nop nop goto_w/jsr_w (+4);
// if<c> L → if<!c> +11; nop nop nop; goto_w L (+8).
const (
	handlerMax = 8 // room for the handler appended after the relocated code
	widenJump  = 4
	widenCond  = 8
	condSkip   = 11 // if<!c> (3) + 3 nops + goto_w (5)
	condGotoW  = 6  // offset of the goto_w in a widened conditional
	jumpGotoW  = 2  // offset of the goto_w/jsr_w in a widened goto/jsr
)

// Layout is the new code of a method and the map from old offsets to new.
type Layout struct {
	Code []byte // the relocated code with the chunks inserted

	insns []Insn
	idx   []int32
	widen []uint8
	pre   []int32 // per instruction and end: where its chunks start
	start []int32 // per instruction and end: where its owned chunk starts (branch target)
	pos   []int32 // per instruction: where the instruction itself starts

	tramps    []tramp
	trampHead []int32 // per instruction: 1 + first trampoline placed before it, 0 none
	redirect  []int32 // per instruction: 1 + the trampoline it branches to, 0 none
}

// Start maps an old offset that is a branch target, handler, frame, line or
// local-variable start to its new offset. ok is false when old is not the
// start of an instruction or the end of the code.
func (l *Layout) Start(old int) (int, bool) {
	i := at(l.idx, old)
	if i < 0 {
		return 0, false
	}
	return int(l.start[i]), true
}

// End maps an exclusive end offset (end_pc, start_pc+length) to its new
// offset: before all the chunks inserted at old.
func (l *Layout) End(old int) (int, bool) {
	i := at(l.idx, old)
	if i < 0 {
		return 0, false
	}
	return int(l.pre[i]), true
}

// Insn maps the offset of an original instruction to the new offset of the
// instruction itself (after its chunks); used for Uninitialized(offset).
func (l *Layout) Insn(old int) (int, bool) {
	i := at(l.idx, old)
	if i < 0 || i >= len(l.insns) {
		return 0, false
	}
	return int(l.pos[i]), true
}

// Relocate inserts chunks (sorted by At; At must be an instruction offset)
// into code, recomputes every branch and switch offset and widens 16-bit
// branches that no longer fit. hasFrame(old) tells whether the
// StackMapTable has a frame at an old offset; nil means the method has no
// StackMapTable. A widened conditional branch needs a frame at its
// fall-through; without one Relocate returns ErrBranchOverflow.
func Relocate(code []byte, chunks []Chunk, hasFrame func(int) bool) (*Layout, error) {
	insns, err := Decode(code, nil)
	if err != nil {
		return nil, err
	}
	idx := index(insns, len(code), nil)
	if err := checkTargets(code, insns, idx, nil); err != nil {
		return nil, err
	}
	l := new(Layout)
	if err := l.relocate(code, insns, idx, chunks, hasFrame, nil); err != nil {
		return nil, err
	}
	return l, nil
}

// grow returns s resized to n zeroed elements, reusing its array.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// relocate fills l, reusing its slices; l.Code is always newly allocated.
// spot(i), when not nil, tells whether a trampoline may go before
// instruction i (see Trampolines).
func (l *Layout) relocate(code []byte, insns []Insn, idx []int32, chunks []Chunk, hasFrame func(int) bool, spot func(int) bool) error {
	for k, c := range chunks {
		if len(c.Bytes)%4 != 0 {
			return codeErr(c.At, ErrBadOffset, "chunk of %d bytes", len(c.Bytes))
		}
		if i := at(idx, c.At); i < 0 || i >= len(insns) || k > 0 && c.At < chunks[k-1].At {
			return codeErr(c.At, ErrBadOffset, "chunk not at an instruction, or unsorted")
		}
	}
	n := len(insns)
	l.insns, l.idx = insns, idx
	l.widen = grow(l.widen, n)
	l.pre = grow(l.pre, n+1)
	l.start = grow(l.start, n+1)
	l.pos = grow(l.pos, n)
	l.trampHead = grow(l.trampHead, n)
	l.redirect = grow(l.redirect, n)
	l.tramps = l.tramps[:0]
	for {
		total := l.place(chunks)
		if total > MaxCodeLen {
			return codeErr(0, ErrTooLarge, "%d bytes", total)
		}
		changed := false
		for i, in := range insns {
			if l.widen[i] != 0 || in.Wide || !in.Op.isBranch16() {
				continue
			}
			t := int(idx[in.Off+i16(code[in.Off+1:])])
			rel := int(l.start[t]) - int(l.pos[i])
			if r := l.redirect[i]; r != 0 {
				rel = int(l.tramps[r-1].pos) - int(l.pos[i])
			}
			if fits16(rel) {
				continue
			}
			if l.redirect[i] != 0 {
				return codeErr(in.Off, ErrBranchOverflow, "%v to its trampoline by %d", in.Op, rel)
			}
			changed = true
			if !in.Op.isCond() {
				l.widen[i] = widenJump
				continue
			}
			// The instruction after the goto_w is reached only by a jump:
			// the verifier needs a frame there. Without one, jump to a
			// trampoline placed where a frame already is.
			if hasFrame == nil || hasFrame(in.Off+in.Len) {
				l.widen[i] = widenCond
			} else if !l.trampoline(i, t, spot) {
				return codeErr(in.Off, ErrBranchOverflow, "%v by %d", in.Op, rel)
			}
		}
		if !changed {
			l.Code = l.emit(code, chunks, make([]byte, 0, total+handlerMax))
			return nil
		}
	}
}

func fits16(rel int) bool { return rel >= -0x8000 && rel <= 0x7fff }

// trampLen is the size of a trampoline: nop nop nop goto_w.
const trampLen = 8

// trampReach is how far from a branch a trampoline is placed, leaving room
// for code that later iterations insert in between.
const trampReach = 0x7000

// tramp is a goto_w placed before instruction at, reached by 16-bit
// conditional branches whose target (instruction target) is too far.
type tramp struct {
	at, target, next int
	pos              int32
}

// Trampoline is a goto_w inserted by relocation.
type Trampoline struct {
	Pos    int // new offset of the trampoline (a jump target: it needs a frame)
	At     int // old offset of the instruction it was placed before
	Target int // old offset of the instruction it jumps to
}

// Trampolines lists the trampolines of the layout. A conditional branch
// that must be widened where the fall-through has no frame jumps instead to
// a trampoline nop nop nop goto_w target, placed after an unconditional
// instruction (where a frame already is, so no frame must be inferred); it
// needs a frame equal to the target's.
func (l *Layout) Trampolines() []Trampoline {
	out := make([]Trampoline, len(l.tramps))
	for k, t := range l.tramps {
		out[k] = Trampoline{Pos: int(t.pos), At: l.insns[t.at].Off, Target: l.insns[t.target].Off}
	}
	return out
}

// trampoline redirects branch i (to instruction t) to a trampoline: an
// existing one to t in reach, or a new one at the nearest allowed spot.
func (l *Layout) trampoline(i, t int, spot func(int) bool) bool {
	if spot == nil {
		return false
	}
	p := int(l.pos[i])
	for k, tr := range l.tramps {
		if tr.target == t && abs(int(tr.pos)-p) < trampReach {
			l.redirect[i] = int32(k + 1)
			return true
		}
	}
	for d := 0; ; d++ {
		up, down := i+1+d, i-d
		upOK := up < len(l.insns) && int(l.pre[up])-p < trampReach
		downOK := down > 0 && p-int(l.pre[down]) < trampReach
		if !upOK && !downOK {
			return false
		}
		for _, j := range [2]int{up, down} {
			if (j == up && upOK || j == down && downOK) && spot(j) {
				l.tramps = append(l.tramps, tramp{at: j, target: t, next: int(l.trampHead[j]) - 1})
				l.trampHead[j] = int32(len(l.tramps))
				l.redirect[i] = int32(len(l.tramps))
				return true
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// place computes pre, start and pos from the chunks, trampolines and
// widenings; it returns the new code length.
func (l *Layout) place(chunks []Chunk) int {
	p, c := 0, 0
	for i, in := range l.insns {
		l.pre[i] = int32(p)
		for k := int(l.trampHead[i]) - 1; k >= 0; k = l.tramps[k].next {
			l.tramps[k].pos = int32(p)
			p += trampLen
		}
		for ; c < len(chunks) && chunks[c].At == in.Off && !chunks[c].Owned; c++ {
			p += len(chunks[c].Bytes)
		}
		l.start[i] = int32(p)
		for ; c < len(chunks) && chunks[c].At == in.Off; c++ {
			p += len(chunks[c].Bytes)
		}
		l.pos[i] = int32(p)
		p += in.Len + int(l.widen[i])
	}
	n := len(l.insns)
	l.pre[n], l.start[n] = int32(p), int32(p)
	return p
}

func (l *Layout) emit(code []byte, chunks []Chunk, out []byte) []byte {
	be := binary.BigEndian
	c := 0
	for i, in := range l.insns {
		for k := int(l.trampHead[i]) - 1; k >= 0; k = l.tramps[k].next {
			tr := &l.tramps[k]
			out = append(out, byte(OpNop), byte(OpNop), byte(OpNop), byte(OpGotoW))
			out = be.AppendUint32(out, uint32(l.start[tr.target]-(tr.pos+trampLen-5)))
		}
		for ; c < len(chunks) && chunks[c].At == in.Off && !chunks[c].Owned; c++ {
			out = append(out, chunks[c].Bytes...)
		}
		for ; c < len(chunks) && chunks[c].At == in.Off; c++ {
			out = append(out, chunks[c].Bytes...)
		}
		p := len(out)
		target := func(rel int) int32 { return l.start[l.idx[in.Off+rel]] }
		switch op := in.Op; {
		case in.Wide:
			out = append(out, code[in.Off:in.Off+in.Len]...)
		case op.isBranch16():
			t := target(i16(code[in.Off+1:]))
			if r := l.redirect[i]; r != 0 {
				t = l.tramps[r-1].pos
			}
			switch l.widen[i] {
			case 0:
				out = append(out, byte(op))
				out = be.AppendUint16(out, uint16(int16(t-int32(p))))
			case widenJump:
				w := OpGotoW
				if op == OpJsr {
					w = OpJsrW
				}
				out = append(out, byte(OpNop), byte(OpNop), byte(w))
				out = be.AppendUint32(out, uint32(t-int32(p+jumpGotoW)))
			default:
				out = append(out, byte(op.invert()))
				out = be.AppendUint16(out, condSkip)
				out = append(out, byte(OpNop), byte(OpNop), byte(OpNop), byte(OpGotoW))
				out = be.AppendUint32(out, uint32(t-int32(p+condGotoW)))
			}
		case op == OpGotoW || op == OpJsrW:
			out = append(out, byte(op))
			out = be.AppendUint32(out, uint32(target(i32(code[in.Off+1:]))-int32(p)))
		case op == OpTableswitch || op == OpLookupswitch:
			// Every chunk and widening is a multiple of 4: the padding is unchanged.
			q := in.Off + 1 + switchPad(in.Off)
			out = append(out, code[in.Off:q]...)
			out = be.AppendUint32(out, uint32(target(i32(code[q:]))-int32(p)))
			if op == OpTableswitch {
				out = append(out, code[q+switchWord:q+tableHeaderLen]...)
				for r := q + tableHeaderLen; r < in.Off+in.Len; r += switchWord {
					out = be.AppendUint32(out, uint32(target(i32(code[r:]))-int32(p)))
				}
			} else {
				out = append(out, code[q+switchWord:q+lookupHeaderLen]...)
				for r := q + lookupHeaderLen; r < in.Off+in.Len; r += lookupPairLen {
					out = append(out, code[r:r+switchWord]...)
					out = be.AppendUint32(out, uint32(target(i32(code[r+switchWord:]))-int32(p)))
				}
			}
		default:
			out = append(out, code[in.Off:in.Off+in.Len]...)
		}
	}
	return out
}
