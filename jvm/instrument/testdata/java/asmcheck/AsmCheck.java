import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.io.BufferedInputStream;
import java.util.List;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.SimpleVerifier;
import org.objectweb.asm.util.CheckClassAdapter;

/**
 * Checks class files with ASM: CheckClassAdapter's structural checks (frames
 * included) and an Analyzer over SimpleVerifier for every method. Input: a
 * file of records (u4 length, class bytes). Output: one "FAIL class method
 * message" line per problem, then "CHECKED classes methods failures".
 */
public class AsmCheck {
    public static void main(String[] args) throws Exception {
        long classes = 0, methods = 0, failures = 0;
        ClassLoader loader = ClassLoader.getSystemClassLoader();
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
                classes++;
                ClassNode cn = new ClassNode();
                String name = "?";
                try {
                    ClassReader cr = new ClassReader(b);
                    name = cr.getClassName();
                    cr.accept(new CheckClassAdapter(Opcodes.ASM9, cn, false) {}, 0);
                } catch (Throwable t) {
                    failures++;
                    System.out.println("FAIL " + name + " <class> " + oneLine(t));
                    continue;
                }
                Type sup = cn.superName == null ? null : Type.getObjectType(cn.superName);
                List<String> itfs = cn.interfaces;
                Type[] itypes = new Type[itfs.size()];
                for (int i = 0; i < itypes.length; i++) itypes[i] = Type.getObjectType(itfs.get(i));
                boolean isItf = (cn.access & Opcodes.ACC_INTERFACE) != 0;
                for (MethodNode mn : cn.methods) {
                    if (mn.instructions.size() == 0) continue;
                    methods++;
                    SimpleVerifier v = new SimpleVerifier(Opcodes.ASM9, Type.getObjectType(cn.name), sup, List.of(itypes), isItf) {};
                    v.setClassLoader(loader);
                    try {
                        new Analyzer<BasicValue>(v).analyze(cn.name, mn);
                    } catch (Throwable t) {
                        failures++;
                        System.out.println("FAIL " + cn.name + " " + mn.name + mn.desc + " " + oneLine(t));
                    }
                }
            }
        }
        System.out.println("CHECKED " + classes + " " + methods + " " + failures);
    }

    static String oneLine(Throwable t) {
        String s = t.toString();
        Throwable c = t.getCause();
        if (c != null) s += " / " + c;
        return s.replace('\n', ' ');
    }
}
