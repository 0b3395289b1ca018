package instrument

// Pool is the constant pool of the class being instrumented: lookups, and
// appends that leave existing indexes valid.
type Pool interface {
	// Member returns the name and descriptor of the Fieldref, Methodref,
	// InterfaceMethodref or InvokeDynamic entry at idx.
	Member(idx uint16) (name, desc string, err error)
	// Methodref returns the index of a CONSTANT_Methodref, appended if absent.
	Methodref(class, name, desc string) (uint16, error)
	// Class returns the index of a CONSTANT_Class, appended if absent.
	Class(name string) (uint16, error)
	// Integer returns the index of a CONSTANT_Integer, appended if absent.
	Integer(v int32) (uint16, error)
	// Long returns the index of a CONSTANT_Long, appended if absent.
	Long(v int64) (uint16, error)
}

// stack-effect table for the constructor prologue: slots popped and pushed by
// fixed-effect opcodes; -1 marks opcodes handled case by case.
var stackPop, stackPush [256]int8

func init() {
	set := func(lo, hi Opcode, pop, push int8) {
		for op := int(lo); op <= int(hi); op++ {
			stackPop[op], stackPush[op] = pop, push
		}
	}
	set(0x00, 0xff, -1, -1)
	set(0x00, 0x00, 0, 0)              // nop
	set(0x01, 0x08, 0, 1)              // aconst_null, iconst_*
	set(0x09, 0x0a, 0, 2)              // lconst_*
	set(0x0b, 0x0d, 0, 1)              // fconst_*
	set(0x0e, 0x0f, 0, 2)              // dconst_*
	set(0x10, 0x13, 0, 1)              // bipush, sipush, ldc, ldc_w
	set(0x14, 0x14, 0, 2)              // ldc2_w
	set(0x15, 0x15, 0, 1)              // iload
	set(0x16, 0x16, 0, 2)              // lload
	set(0x17, 0x17, 0, 1)              // fload
	set(0x18, 0x18, 0, 2)              // dload
	set(0x19, 0x19, 0, 1)              // aload
	set(0x1a, 0x1d, 0, 1)              // iload_n
	set(0x1e, 0x21, 0, 2)              // lload_n
	set(0x22, 0x25, 0, 1)              // fload_n
	set(0x26, 0x29, 0, 2)              // dload_n
	set(0x2a, 0x2d, 0, 1)              // aload_n
	set(0x2e, 0x2e, 2, 1)              // iaload
	set(0x2f, 0x2f, 2, 2)              // laload
	set(0x30, 0x30, 2, 1)              // faload
	set(0x31, 0x31, 2, 2)              // daload
	set(0x32, 0x35, 2, 1)              // aaload, baload, caload, saload
	set(0x36, 0x36, 1, 0)              // istore
	set(0x37, 0x37, 2, 0)              // lstore
	set(0x38, 0x38, 1, 0)              // fstore
	set(0x39, 0x39, 2, 0)              // dstore
	set(0x3a, 0x3a, 1, 0)              // astore
	set(0x3b, 0x3e, 1, 0)              // istore_n
	set(0x3f, 0x42, 2, 0)              // lstore_n
	set(0x43, 0x46, 1, 0)              // fstore_n
	set(0x47, 0x4a, 2, 0)              // dstore_n
	set(0x4b, 0x4e, 1, 0)              // astore_n
	set(0x4f, 0x4f, 3, 0)              // iastore
	set(0x50, 0x50, 4, 0)              // lastore
	set(0x51, 0x51, 3, 0)              // fastore
	set(0x52, 0x52, 4, 0)              // dastore
	set(0x53, 0x56, 3, 0)              // aastore, bastore, castore, sastore
	set(0x57, 0x57, 1, 0)              // pop
	set(0x58, 0x58, 2, 0)              // pop2
	for op := 0x60; op <= 0x73; op++ { // add, sub, mul, div, rem: i l f d
		if op%2 == 0 {
			stackPop[op], stackPush[op] = 2, 1
		} else {
			stackPop[op], stackPush[op] = 4, 2
		}
	}
	set(0x74, 0x74, 1, 1)              // ineg
	set(0x75, 0x75, 2, 2)              // lneg
	set(0x76, 0x76, 1, 1)              // fneg
	set(0x77, 0x77, 2, 2)              // dneg
	for op := 0x78; op <= 0x7d; op++ { // shifts: int 2→1, long 3→2
		if op%2 == 0 {
			stackPop[op], stackPush[op] = 2, 1
		} else {
			stackPop[op], stackPush[op] = 3, 2
		}
	}
	for op := 0x7e; op <= 0x83; op++ { // and, or, xor
		if op%2 == 0 {
			stackPop[op], stackPush[op] = 2, 1
		} else {
			stackPop[op], stackPush[op] = 4, 2
		}
	}
	set(0x84, 0x84, 0, 0) // iinc
	conv := []int8{1, 2, 1, 1, 1, 2, 2, 1, 2, 1, 2, 2, 1, 1, 1, 2, 1, 2, 2, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1}
	for k := 0; k < len(conv); k += 2 { // i2l … i2s (0x85–0x93)
		op := 0x85 + k/2
		stackPop[op], stackPush[op] = conv[k], conv[k+1]
	}
	set(0x94, 0x94, 4, 1) // lcmp
	set(0x95, 0x96, 2, 1) // fcmpl, fcmpg
	set(0x97, 0x98, 4, 1) // dcmpl, dcmpg
	set(0xbb, 0xbb, 0, 1) // new
	set(0xbc, 0xbe, 1, 1) // newarray, anewarray, arraylength
	set(0xc0, 0xc1, 1, 1) // checkcast, instanceof
	set(0xc2, 0xc3, 1, 0) // monitorenter, monitorexit
}

// superCall finds, in a constructor, the invokespecial <init> that
// initializes this (the super() or this() call) by simulating the operand
// stack from offset 0 along every path, as far as that call. Every path must
// reach the same call or end in athrow, with the same stack at each join; no
// return, jsr or ret, and no exception handler may cover that code. It
// returns the index of the instruction after the call, and which
// instructions run before it.
func superCall(code []byte, insns []Insn, idx []int32, handlers []Handler, pool Pool) (int, []bool, error) {
	type state struct {
		stack []bool // one entry per slot: true for uninitializedThis
		this0 bool   // local 0 still holds uninitializedThis
	}
	states := make([]*state, len(insns))
	states[0] = &state{this0: true}
	work := []int{0}
	super := -1
	var targets []int
	merge := func(j int, st *state) error {
		if o := states[j]; o != nil {
			if o.this0 != st.this0 || len(o.stack) != len(st.stack) {
				return codeErr(insns[j].Off, ErrCtorFlow, "paths before super() disagree")
			}
			for k := range o.stack {
				if o.stack[k] != st.stack[k] {
					return codeErr(insns[j].Off, ErrCtorFlow, "paths before super() disagree")
				}
			}
			return nil
		}
		states[j] = &state{stack: append([]bool(nil), st.stack...), this0: st.this0}
		work = append(work, j)
		return nil
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		in := insns[i]
		st := &state{stack: append([]bool(nil), states[i].stack...), this0: states[i].this0}
		for _, h := range handlers {
			if int(h.StartPC) <= in.Off && in.Off < int(h.EndPC) {
				return 0, nil, codeErr(in.Off, ErrCtorFlow, "handler covers code before super()")
			}
		}
		op := in.Op
		pop, push := int(stackPop[op]), int(stackPush[op])
		fallsThrough := true
		targets = targets[:0]
		switch {
		case op == OpAload0 || op == OpAload && localOperand(code, in) == 0:
			pop, push = 0, 0
			st.stack = append(st.stack, st.this0)
		case op == OpAstore0 || op == OpAstore && localOperand(code, in) == 0:
			st.this0 = false
		case op >= OpGetstatic && op <= OpPutfield:
			_, desc, err := pool.Member(uint16(u16(code[in.Off+1:])))
			if err != nil {
				return 0, nil, codeErr(in.Off, ErrBadPoolRef, "%v", err)
			}
			n := fieldSlots(desc)
			if n < 0 {
				return 0, nil, codeErr(in.Off, ErrBadPoolRef, "field descriptor %q", desc)
			}
			pop, push = [4]int{0, n, 1, 1 + n}[op-OpGetstatic], [4]int{n, 0, n, 0}[op-OpGetstatic]
		case op >= OpInvokevirtual && op <= OpInvokedynamic:
			name, desc, err := pool.Member(uint16(u16(code[in.Off+1:])))
			if err != nil {
				return 0, nil, codeErr(in.Off, ErrBadPoolRef, "%v", err)
			}
			args, ret, ok := methodSlots(desc)
			if !ok {
				return 0, nil, codeErr(in.Off, ErrBadPoolRef, "method descriptor %q", desc)
			}
			if op != OpInvokestatic && op != OpInvokedynamic {
				args++
			}
			if op == OpInvokespecial && name == "<init>" {
				if len(st.stack) < args {
					return 0, nil, codeErr(in.Off, ErrCtorFlow, "stack underflow")
				}
				if st.stack[len(st.stack)-args] {
					if super >= 0 && super != i {
						return 0, nil, codeErr(in.Off, ErrCtorFlow, "several super() calls")
					}
					if i+1 == len(insns) {
						return 0, nil, codeErr(in.Off, ErrCtorFlow, "code ends at super()")
					}
					super = i
					continue // this path is done
				}
			}
			pop, push = args, ret
		case op == OpMultianewarray:
			pop, push = int(code[in.Off+3]), 1
		case op >= OpDup && op <= OpSwap:
			var err error
			if st.stack, err = dupOp(st.stack, op); err != nil {
				return 0, nil, codeErr(in.Off, err, "%v", op)
			}
			pop, push = 0, 0
		case op.isCond():
			pop, push = 1, 0
			if op >= OpIfeq+6 && op <= OpIfAcmpne { // if_icmp*, if_acmp*
				pop = 2
			}
			targets = Targets(code, in, targets)
		case op == OpGoto || op == OpGotoW:
			pop, push, fallsThrough = 0, 0, false
			targets = Targets(code, in, targets)
		case op == OpTableswitch || op == OpLookupswitch:
			pop, push, fallsThrough = 1, 0, false
			targets = Targets(code, in, targets)
		case op == OpAthrow:
			continue // the exception leaves before any probe ran
		}
		if pop < 0 || push < 0 || in.Wide && op == OpRet {
			return 0, nil, codeErr(in.Off, ErrCtorFlow, "%v before super()", op)
		}
		if len(st.stack) < pop {
			return 0, nil, codeErr(in.Off, ErrCtorFlow, "stack underflow")
		}
		st.stack = st.stack[:len(st.stack)-pop]
		for ; push > 0; push-- {
			st.stack = append(st.stack, false)
		}
		if fallsThrough {
			if i+1 >= len(insns) {
				return 0, nil, codeErr(in.Off, ErrCtorFlow, "code ends before super()")
			}
			targets = append(targets, in.Off+in.Len)
		}
		for _, t := range targets {
			if err := merge(int(idx[t]), st); err != nil {
				return 0, nil, err
			}
		}
	}
	if super < 0 {
		return 0, nil, codeErr(len(code), ErrCtorFlow, "no super() call")
	}
	pre := make([]bool, len(insns))
	for i, s := range states {
		pre[i] = s != nil
	}
	return super + 1, pre, nil
}

// localOperand returns the local-variable index operand of a load or store.
func localOperand(code []byte, in Insn) int {
	if in.Wide {
		return u16(code[in.Off+2:])
	}
	return int(code[in.Off+1])
}

// dupOp applies a dup, dup_x*, dup2* or swap to a stack of slots.
func dupOp(s []bool, op Opcode) ([]bool, error) {
	// need: slots inspected; copy: slots duplicated from the top; depth: where they go.
	var need, copyN, depth int
	switch op {
	case OpDup:
		need, copyN, depth = 1, 1, 1
	case OpDupX1:
		need, copyN, depth = 2, 1, 2
	case OpDupX2:
		need, copyN, depth = 3, 1, 3
	case OpDup2:
		need, copyN, depth = 2, 2, 2
	case OpDup2X1:
		need, copyN, depth = 3, 2, 3
	case OpDup2X2:
		need, copyN, depth = 4, 2, 4
	default: // swap
		if len(s) < 2 {
			return s, ErrCtorFlow
		}
		s[len(s)-1], s[len(s)-2] = s[len(s)-2], s[len(s)-1]
		return s, nil
	}
	if len(s) < need {
		return s, ErrCtorFlow
	}
	top := append([]bool(nil), s[len(s)-copyN:]...)
	at := len(s) - depth
	s = append(s, top...)
	copy(s[at+copyN:], s[at:len(s)-copyN])
	copy(s[at:], top)
	return s, nil
}
