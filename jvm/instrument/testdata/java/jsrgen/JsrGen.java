import java.nio.file.Files;
import java.nio.file.Path;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import static org.objectweb.asm.Opcodes.*;

/**
 * Writes tadpole/test/Jsr.class, a Java 1.4 (version 48) class whose
 * try/finally uses jsr/ret subroutines as javac did before Java 6:
 *
 *   static int fin(int x) { try { if (x < 0) throw new IllegalArgumentException(); return x * 2; }
 *                           finally { count++; } }
 *   public static long run() { fin(3) + fin(-1) caught + count }
 *
 * Usage: java JsrGen <classes dir>
 */
public class JsrGen {
    public static void main(String[] args) throws Exception {
        ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        cw.visit(V1_4, ACC_PUBLIC | ACC_SUPER, "tadpole/test/Jsr", null, "java/lang/Object", null);
        cw.visitField(ACC_STATIC, "count", "I", null, null).visitEnd();

        MethodVisitor mv = cw.visitMethod(ACC_PUBLIC, "<init>", "()V", null, null);
        mv.visitCode();
        mv.visitVarInsn(ALOAD, 0);
        mv.visitMethodInsn(INVOKESPECIAL, "java/lang/Object", "<init>", "()V", false);
        mv.visitInsn(RETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();

        mv = cw.visitMethod(ACC_STATIC, "fin", "(I)I", null, null);
        mv.visitCode();
        Label start = new Label(), ok = new Label(), end = new Label(), handler = new Label(), sub = new Label();
        mv.visitTryCatchBlock(start, end, handler, null);
        mv.visitLabel(start);
        mv.visitVarInsn(ILOAD, 0);
        mv.visitJumpInsn(IFGE, ok);
        mv.visitTypeInsn(NEW, "java/lang/IllegalArgumentException");
        mv.visitInsn(DUP);
        mv.visitMethodInsn(INVOKESPECIAL, "java/lang/IllegalArgumentException", "<init>", "()V", false);
        mv.visitInsn(ATHROW);
        mv.visitLabel(ok);
        mv.visitVarInsn(ILOAD, 0);
        mv.visitInsn(ICONST_2);
        mv.visitInsn(IMUL);
        mv.visitVarInsn(ISTORE, 1);
        mv.visitJumpInsn(JSR, sub);
        mv.visitVarInsn(ILOAD, 1);
        mv.visitInsn(IRETURN);
        mv.visitLabel(end);
        mv.visitLabel(handler);
        mv.visitVarInsn(ASTORE, 2);
        mv.visitJumpInsn(JSR, sub);
        mv.visitVarInsn(ALOAD, 2);
        mv.visitInsn(ATHROW);
        mv.visitLabel(sub);
        mv.visitVarInsn(ASTORE, 3);
        mv.visitFieldInsn(GETSTATIC, "tadpole/test/Jsr", "count", "I");
        mv.visitInsn(ICONST_1);
        mv.visitInsn(IADD);
        mv.visitFieldInsn(PUTSTATIC, "tadpole/test/Jsr", "count", "I");
        mv.visitVarInsn(RET, 3);
        mv.visitMaxs(0, 0);
        mv.visitEnd();

        mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "run", "()J", null, null);
        mv.visitCode();
        Label t0 = new Label(), t1 = new Label(), h = new Label(), after = new Label();
        mv.visitTryCatchBlock(t0, t1, h, "java/lang/IllegalArgumentException");
        mv.visitInsn(ICONST_3);
        mv.visitMethodInsn(INVOKESTATIC, "tadpole/test/Jsr", "fin", "(I)I", false);
        mv.visitInsn(I2L);
        mv.visitVarInsn(LSTORE, 0);
        mv.visitLabel(t0);
        mv.visitInsn(ICONST_M1);
        mv.visitMethodInsn(INVOKESTATIC, "tadpole/test/Jsr", "fin", "(I)I", false);
        mv.visitInsn(POP);
        mv.visitLabel(t1);
        mv.visitJumpInsn(GOTO, after);
        mv.visitLabel(h);
        mv.visitInsn(POP);
        mv.visitVarInsn(LLOAD, 0);
        mv.visitLdcInsn(100L);
        mv.visitInsn(LADD);
        mv.visitVarInsn(LSTORE, 0);
        mv.visitLabel(after);
        mv.visitVarInsn(LLOAD, 0);
        mv.visitFieldInsn(GETSTATIC, "tadpole/test/Jsr", "count", "I");
        mv.visitInsn(I2L);
        mv.visitInsn(LADD);
        mv.visitInsn(LRETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
        cw.visitEnd();

        Path out = Path.of(args[0], "tadpole", "test", "Jsr.class");
        Files.createDirectories(out.getParent());
        Files.write(out, cw.toByteArray());
    }
}
