package instrument

import "fmt"

// Opcode is a JVM instruction opcode (JVMS §6.5).
type Opcode uint8

// Opcodes the instrumenter inspects or emits by name.
const (
	OpNop            Opcode = 0x00
	OpIconstM1       Opcode = 0x02
	OpIconst0        Opcode = 0x03
	OpIconst5        Opcode = 0x08
	OpBipush         Opcode = 0x10
	OpSipush         Opcode = 0x11
	OpLdc            Opcode = 0x12
	OpLdcW           Opcode = 0x13
	OpLdc2W          Opcode = 0x14
	OpIload          Opcode = 0x15
	OpAload          Opcode = 0x19
	OpAload0         Opcode = 0x2a
	OpIstore         Opcode = 0x36
	OpAstore         Opcode = 0x3a
	OpAstore0        Opcode = 0x4b
	OpPop            Opcode = 0x57
	OpPop2           Opcode = 0x58
	OpDup            Opcode = 0x59
	OpDupX1          Opcode = 0x5a
	OpDupX2          Opcode = 0x5b
	OpDup2           Opcode = 0x5c
	OpDup2X1         Opcode = 0x5d
	OpDup2X2         Opcode = 0x5e
	OpSwap           Opcode = 0x5f
	OpIinc           Opcode = 0x84
	OpIfeq           Opcode = 0x99
	OpIfAcmpne       Opcode = 0xa6
	OpGoto           Opcode = 0xa7
	OpJsr            Opcode = 0xa8
	OpRet            Opcode = 0xa9
	OpTableswitch    Opcode = 0xaa
	OpLookupswitch   Opcode = 0xab
	OpIreturn        Opcode = 0xac
	OpReturn         Opcode = 0xb1
	OpGetstatic      Opcode = 0xb2
	OpPutstatic      Opcode = 0xb3
	OpGetfield       Opcode = 0xb4
	OpPutfield       Opcode = 0xb5
	OpInvokevirtual  Opcode = 0xb6
	OpInvokespecial  Opcode = 0xb7
	OpInvokestatic   Opcode = 0xb8
	OpInvokeinterf   Opcode = 0xb9
	OpInvokedynamic  Opcode = 0xba
	OpNew            Opcode = 0xbb
	OpAthrow         Opcode = 0xbf
	OpWide           Opcode = 0xc4
	OpMultianewarray Opcode = 0xc5
	OpIfnull         Opcode = 0xc6
	OpIfnonnull      Opcode = 0xc7
	OpGotoW          Opcode = 0xc8
	OpJsrW           Opcode = 0xc9
)

// opVar marks an instruction whose length depends on its operands.
const opVar = 0xff

// opLen is the length of each fixed-size instruction, 0 for an opcode that
// is not valid in a class file, opVar for tableswitch, lookupswitch and wide.
var opLen = [256]uint8{
	// 0x00–0x0f: nop, aconst_null, iconst_*, lconst_*, fconst_*, dconst_*
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	// 0x10 bipush, sipush, ldc, ldc_w, ldc2_w, iload, lload, fload, dload, aload, *load_n
	2, 3, 2, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1,
	// 0x20 *load_n, *aload
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	// 0x30 *aload, istore…astore, *store_n
	1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1,
	// 0x40 *store_n
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	// 0x50 *astore, pop, pop2, dup…, swap
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	// 0x60–0x7f arithmetic
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	// 0x80 ior…, iinc (0x84), conversions
	1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	// 0x90 conversions, compares, if* (0x99…)
	1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3,
	// 0xa0 if*, goto, jsr, ret, tableswitch, lookupswitch, returns
	3, 3, 3, 3, 3, 3, 3, 3, 3, 2, opVar, opVar, 1, 1, 1, 1,
	// 0xb0 returns, field and invoke ops, new, newarray, anewarray, arraylength, athrow
	1, 1, 3, 3, 3, 3, 3, 3, 3, 5, 5, 3, 2, 3, 1, 1,
	// 0xc0 checkcast, instanceof, monitorenter, monitorexit, wide, multianewarray, ifnull, ifnonnull, goto_w, jsr_w
	3, 3, 1, 1, opVar, 4, 3, 3, 5, 5, 0, 0, 0, 0, 0, 0,
}

// IsReturn reports whether op is one of ireturn…return.
func (op Opcode) IsReturn() bool { return op >= OpIreturn && op <= OpReturn }

// isBranch16 reports whether op has one signed 16-bit branch offset.
func (op Opcode) isBranch16() bool {
	return op >= OpIfeq && op <= OpJsr || op == OpIfnull || op == OpIfnonnull
}

// isCond reports whether op is a conditional branch.
func (op Opcode) isCond() bool {
	return op >= OpIfeq && op <= OpIfAcmpne || op == OpIfnull || op == OpIfnonnull
}

// invert returns the conditional branch with the opposite condition.
func (op Opcode) invert() Opcode {
	if op == OpIfnull || op == OpIfnonnull {
		return op ^ 1 // 0xc6 ifnull <-> 0xc7 ifnonnull
	}
	return OpIfeq + ((op - OpIfeq) ^ 1) // pairs start at ifeq (0x99)
}

// endsBlock reports whether control never falls through op to the next instruction.
func (op Opcode) endsBlock() bool {
	switch op {
	case OpGoto, OpGotoW, OpRet, OpTableswitch, OpLookupswitch, OpAthrow:
		return true
	}
	return op.IsReturn()
}

var opNames = map[Opcode]string{
	OpNop: "nop", OpBipush: "bipush", OpSipush: "sipush", OpLdc: "ldc", OpLdcW: "ldc_w",
	OpLdc2W: "ldc2_w", OpGoto: "goto", OpJsr: "jsr", OpRet: "ret", OpTableswitch: "tableswitch",
	OpLookupswitch: "lookupswitch", OpReturn: "return", OpAthrow: "athrow", OpWide: "wide",
	OpInvokespecial: "invokespecial", OpInvokestatic: "invokestatic", OpNew: "new",
	OpIfnull: "ifnull", OpIfnonnull: "ifnonnull", OpGotoW: "goto_w", OpJsrW: "jsr_w",
	OpMultianewarray: "multianewarray", OpIinc: "iinc",
}

// String returns the mnemonic of op for the opcodes the package names, else
// "op_0xNN".
func (op Opcode) String() string {
	if s, ok := opNames[op]; ok {
		return s
	}
	if op.isCond() {
		return fmt.Sprintf("if_0x%02x", uint8(op))
	}
	return fmt.Sprintf("op_0x%02x", uint8(op))
}
