import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.commons.AdviceAdapter;

/**
 * The Bytefrog agent's transformation with ASM 9: ClassReader(EXPAND_FRAMES)
 * → AdviceAdapter (enter after super() in constructors, exit before each
 * return, thrown before each athrow, catch-all handler calling bubble and
 * rethrowing) → ClassWriter(reader, COMPUTE_MAXS). Input: a file of records
 * (u4 length, class bytes). Prints one line per round:
 * "round wall-ns-per-class cpu-ns-per-class", after warm-up rounds.
 *
 * Usage: java AsmBench records warmupRounds rounds
 */
public class AsmBench {
    static final String H = "io/tadpole/Probe";
    static int nextId;

    static final class MV extends AdviceAdapter {
        final int id;
        final boolean frames;
        int line = 0xFFFF;
        final Label start = new Label(), end = new Label(), handler = new Label();

        MV(MethodVisitor mv, int access, String name, String desc, boolean frames) {
            super(Opcodes.ASM9, mv, access, name, desc);
            this.id = nextId++;
            this.frames = frames;
        }

        @Override
        protected void onMethodEnter() {
            push(id);
            visitMethodInsn(INVOKESTATIC, H, "enter", "(I)V", false);
            visitLabel(start);
        }

        @Override
        public void visitLineNumber(int l, Label s) {
            line = l;
            super.visitLineNumber(l, s);
        }

        @Override
        protected void onMethodExit(int opcode) {
            push(id);
            push(line);
            visitMethodInsn(INVOKESTATIC, H, opcode == ATHROW ? "thrown" : "exit", "(II)V", false);
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            // The handler goes straight to the writer: through the adapter its
            // athrow would get a thrown probe.
            mv.visitLabel(end);
            mv.visitTryCatchBlock(start, end, handler, null);
            mv.visitLabel(handler);
            if (frames) mv.visitFrame(F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"});
            mv.visitLdcInsn(id);
            mv.visitMethodInsn(INVOKESTATIC, H, "bubble", "(I)V", false);
            mv.visitInsn(ATHROW);
            super.visitMaxs(maxStack, maxLocals);
        }
    }

    static final class CV extends ClassVisitor {
        boolean frames;

        CV(ClassVisitor cv) { super(Opcodes.ASM9, cv); }

        @Override
        public void visit(int version, int access, String name, String sig, String sup, String[] itfs) {
            frames = (version & 0xFFFF) >= 50;
            super.visit(version, access, name, sig, sup, itfs);
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exc) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, exc);
            if ((access & (ACC_ABSTRACT | ACC_NATIVE | ACC_BRIDGE)) != 0) return mv;
            return new MV(mv, access, name, desc, frames);
        }

        static final int ACC_ABSTRACT = Opcodes.ACC_ABSTRACT, ACC_NATIVE = Opcodes.ACC_NATIVE, ACC_BRIDGE = Opcodes.ACC_BRIDGE;
    }

    static int failures;

    static long round(List<byte[]> classes) {
        long sink = 0;
        for (byte[] b : classes) {
            try {
                ClassReader cr = new ClassReader(b);
                ClassWriter cw = new ClassWriter(cr, ClassWriter.COMPUTE_MAXS);
                cr.accept(new CV(cw), ClassReader.EXPAND_FRAMES);
                sink += cw.toByteArray().length;
            } catch (RuntimeException e) {
                if (failures++ == 0 && System.getenv("ASMBENCH_DEBUG") != null) e.printStackTrace();
            }
        }
        return sink;
    }

    public static void main(String[] args) throws Exception {
        List<byte[]> classes = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(args[0]), 1 << 20))) {
            while (true) {
                int n;
                try {
                    n = in.readInt();
                } catch (EOFException e) {
                    break;
                }
                byte[] b = new byte[n];
                in.readFully(b);
                classes.add(b);
            }
        }
        int warm = Integer.parseInt(args[1]), rounds = Integer.parseInt(args[2]);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (int i = 0; i < warm; i++) round(classes);
        failures = 0;
        for (int i = 0; i < rounds; i++) {
            long c0 = os.getProcessCpuTime(), t0 = System.nanoTime();
            round(classes);
            long t1 = System.nanoTime(), c1 = os.getProcessCpuTime();
            System.out.println("round " + (t1 - t0) / classes.size() + " " + (c1 - c0) / classes.size());
        }
        System.out.println("failures " + failures / rounds);
    }
}
