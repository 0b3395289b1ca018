package tadpolebench.asmagent;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.concurrent.atomic.AtomicInteger;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.commons.AdviceAdapter;

/**
 * A -javaagent with the Bytefrog agent's probes, on ASM 9: for each method of
 * a class whose internal name starts with one of the agent's prefixes
 * (agent argument, comma-separated, e.g. "work/,com/sun/tools/javac/"):
 * enter(id) on entry (after super() in constructors), exit(id, line) before
 * each return, thrown(id, line) before each athrow, and a catch-all handler
 * that calls bubble(id) and rethrows. Abstract, native and bridge methods are
 * left alone. ClassReader(EXPAND_FRAMES) → AdviceAdapter →
 * ClassWriter(COMPUTE_MAXS). A class that fails to transform loads unchanged;
 * the agent counts it and prints the count at exit.
 */
public final class AsmAgent implements ClassFileTransformer {
	static final String PROBE = "tadpolebench/probe/Probe";
	static final AtomicInteger NEXT_ID = new AtomicInteger();
	static final AtomicInteger TRANSFORMED = new AtomicInteger(), FAILED = new AtomicInteger();

	final String[] prefixes;

	AsmAgent(String[] prefixes) {
		this.prefixes = prefixes;
	}

	public static void premain(String args, Instrumentation inst) {
		String[] p = (args == null ? "" : args).split(",");
		inst.addTransformer(new AsmAgent(p));
		Runtime.getRuntime().addShutdownHook(new Thread(() -> System.err.println(
				"asm-classes transformed=" + TRANSFORMED.get() + " failed=" + FAILED.get()), "asm-agent-exit"));
	}

	boolean selected(String name) {
		for (String p : prefixes) {
			if (!p.isEmpty() && name.startsWith(p)) {
				return true;
			}
		}
		return false;
	}

	@Override
	public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined, ProtectionDomain pd,
			byte[] bytes) {
		if (name == null || redefined != null || !selected(name)) {
			return null;
		}
		try {
			ClassReader cr = new ClassReader(bytes);
			ClassWriter cw = new ClassWriter(cr, ClassWriter.COMPUTE_MAXS);
			cr.accept(new CV(cw), ClassReader.EXPAND_FRAMES);
			byte[] out = cw.toByteArray();
			TRANSFORMED.incrementAndGet();
			return out;
		} catch (Throwable t) {
			if (FAILED.getAndIncrement() == 0) {
				System.err.println("asm-agent: " + name + ": " + t);
			}
			return null;
		}
	}

	static final class CV extends ClassVisitor {
		boolean frames;

		CV(ClassVisitor cv) {
			super(Opcodes.ASM9, cv);
		}

		@Override
		public void visit(int version, int access, String name, String sig, String sup, String[] itfs) {
			frames = (version & 0xFFFF) >= 50;
			super.visit(version, access, name, sig, sup, itfs);
		}

		@Override
		public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exc) {
			MethodVisitor mv = super.visitMethod(access, name, desc, sig, exc);
			if ((access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE | Opcodes.ACC_BRIDGE)) != 0) {
				return mv;
			}
			return new MV(mv, access, name, desc, frames);
		}
	}

	static final class MV extends AdviceAdapter {
		final int id = NEXT_ID.getAndIncrement();
		final boolean frames;
		int line = 0xFFFF;
		boolean entered;
		final Label start = new Label(), end = new Label(), handler = new Label();

		MV(MethodVisitor mv, int access, String name, String desc, boolean frames) {
			super(Opcodes.ASM9, mv, access, name, desc);
			this.frames = frames;
		}

		@Override
		protected void onMethodEnter() {
			// Straight to the writer, as all the probes: the adapter's stack
			// tracking of a constructor before super() must not see them.
			mv.visitLdcInsn(id);
			mv.visitMethodInsn(INVOKESTATIC, PROBE, "enter", "(I)V", false);
			mv.visitLabel(start);
			entered = true;
		}

		@Override
		public void visitLineNumber(int l, Label s) {
			line = l;
			super.visitLineNumber(l, s);
		}

		@Override
		protected void onMethodExit(int opcode) {
			if (!entered) {
				return; // a constructor's exit before super(): no entry either
			}
			mv.visitLdcInsn(id);
			mv.visitLdcInsn(line);
			mv.visitMethodInsn(INVOKESTATIC, PROBE, opcode == ATHROW ? "thrown" : "exit", "(II)V", false);
		}

		@Override
		public void visitMaxs(int maxStack, int maxLocals) {
			// The handler goes straight to the writer: through the adapter its
			// athrow would get a thrown probe.
			if (!entered) {
				super.visitMaxs(maxStack, maxLocals);
				return;
			}
			mv.visitLabel(end);
			mv.visitTryCatchBlock(start, end, handler, null);
			mv.visitLabel(handler);
			if (frames) {
				mv.visitFrame(F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"});
			}
			mv.visitLdcInsn(id);
			mv.visitMethodInsn(INVOKESTATIC, PROBE, "bubble", "(I)V", false);
			mv.visitInsn(ATHROW);
			super.visitMaxs(maxStack, maxLocals);
		}
	}
}
