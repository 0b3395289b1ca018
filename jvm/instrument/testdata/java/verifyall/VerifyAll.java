import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Links every class named in a file (one binary name a line) so that the
 * JVM's verifier checks it (run with -Xverify:all): Class.forName without
 * initialization, then getDeclaredMethods, which links the class. Prints
 * "VERIFY name message" per VerifyError, "OTHER name error" per other
 * failure, then "LINKED linked verifyErrors others".
 */
public class VerifyAll {
    public static void main(String[] args) throws Exception {
        List<String> names = Files.readAllLines(Path.of(args[0]));
        ClassLoader loader = ClassLoader.getSystemClassLoader();
        long linked = 0, verify = 0, other = 0;
        for (String n : names) {
            try {
                Class<?> c = Class.forName(n, false, loader);
                c.getDeclaredMethods();
                linked++;
            } catch (VerifyError e) {
                verify++;
                System.out.println("VERIFY " + n + " " + String.valueOf(e.getMessage()).replace('\n', ' '));
            } catch (Throwable t) {
                other++;
                System.out.println("OTHER " + n + " " + t.getClass().getName() + ": " + String.valueOf(t.getMessage()).replace('\n', ' '));
            }
        }
        System.out.println("LINKED " + linked + " " + verify + " " + other);
    }
}
