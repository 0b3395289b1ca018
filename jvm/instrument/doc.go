// Package instrument adds Bytefrog's method probes to JVM bytecode: an entry
// probe, an exit probe before every return, a thrown probe before every
// athrow, and a catch-all handler that reports the bubble and rethrows.
//
// # Probes
//
// Each probe is an invokestatic of a helper class whose name and method names
// come from Config (descriptors EnterDesc, ExitDesc, ThrownDesc, BubbleDesc:
// ints only, so the probes never touch the values on the operand stack):
//
//	entry   [nop*] push id; invokestatic enter(I)V            before the first instruction
//	exit    [nop*] push id; push line; invokestatic exit(II)V  before ireturn…return
//	thrown  [nop*] push id; push line; invokestatic thrown(II)V before athrow
//	handler [nop*] push id; invokestatic bubble(I)V; athrow    appended, catch_type 0
//
// With Config.PackedWords the exit and thrown probes push one long
// constant instead of the id and the line, Word(kind, id, line), and call
// the helper's overloads exit(J)V and thrown(J)V (thrown(Throwable, J)V
// with PassThrowable): 8 bytes per chunk instead of up to 12. A class whose
// constant pool is full gets the two ints.
//
// With Config.Leaves (and PackedWords) a leaf method, one that calls
// nothing (no invoke or invokedynamic, athrow, new, static field of
// another class, jsr, or ldc of a constant that runs code), gets one probe
// per return instead of two: its entry stores the helper's tick field in a
// long local appended to its locals (wide past slot 255; a method with
// max_locals above 65533 gets the usual probes), each return passes it
// with the exit word, and the catch-all passes it to bubbleLeaf:
//
//	entry   [nop*] getstatic now:J; lstore t                    before the first instruction
//	exit    [nop*] lload t; ldc2_w word; invokestatic leaf(JJ)V before ireturn…return
//	handler [nop*] [dup] push id; lload t; invokestatic bubbleLeaf; athrow
//
// Every frame of a leaf becomes a full frame holding the tick local.
//
// With Config.PassThrowable the thrown and bubble probes first dup the
// exception and pass it (ThrownThrowableDesc, BubbleThrowableDesc), so the
// helper can map its class; max_stack then grows by 3. Config.MethodSig
// gives ids by Bytefrog signature (Signature).
//
// The line is that of the LineNumberTable entry with the greatest start_pc at
// or before the instruction, NoLine without a table. Every chunk is padded to
// a multiple of 4 bytes with nops in front of the probe, so the padding of
// tableswitch and lookupswitch never changes, and the nops are reachable.
//
// # Relocation
//
// Branches to a return or athrow land on its probe; a branch to offset 0
// lands after the entry probe. A 16-bit branch that no longer fits is widened:
// goto → nop nop goto_w, jsr → nop nop jsr_w, if<c> L → if<!c> +11; nop*3;
// goto_w L, iterating to a fixed point. The widened conditional's
// fall-through needs a stack map frame: when the StackMapTable has none there,
// the branch jumps instead to a trampoline (nop nop nop goto_w L) placed after
// a nearby instruction that does not fall through, where a frame already is,
// with a full frame copied from L's (see Layout.Trampolines); without such a
// spot the method is left alone with ErrBranchOverflow. Code over 65535 bytes is
// ErrTooLarge. Exception ranges, line and local-variable tables, frame offsets
// and Uninitialized(offset) types are mapped through the same layout.
//
// # Constructors
//
// In <init>, the entry probe and the catch-all range start right after the
// invokespecial <init> that initializes this (found by simulating the operand
// stack from offset 0), as ASM's AdviceAdapter does: a handler cannot cover
// code both before and after that call, and an entry without a matching
// bubble would unbalance the trace when super() throws. Exceptions thrown
// while evaluating super()'s arguments are therefore not seen by that
// constructor's probes (a throw on a path before the call gets no thrown
// probe either). The paths before the call may branch, but must all reach
// the same call with the same stack, or end in athrow; otherwise, or when an
// exception handler covers that code, the constructor is left alone with
// ErrCtorFlow.
//
// # Frames
//
// The handler gets a full_frame with no locals and [java/lang/Throwable] on
// the stack (class files ≥ 50). max_stack grows by 2. Methods of old class
// files with jsr/ret are relocated the same way and need no frames.
package instrument
