import java.util.Arrays;

// Compiled with: javac --release 8 -g -d ../classes -cp ../classes j8/Main8.java
// Prints results of Sample8 so tests can compare a rewritten class's run
// with the original's.
public class Main8 {
    public static void main(String[] args) throws Exception {
        Sample8 s = new Sample8(3);
        Sample8 big = new Sample8(20);
        System.out.println(s.sum(1, 2, 3) + " " + big.size());
        for (int d = -1; d < 5; d++) {
            System.out.print(Sample8.day(d) + Sample8.sparse(d == 4 ? 100000 : d * 107 - 100) + " ");
        }
        System.out.println();
        System.out.println(Sample8.risky(Arrays.asList("1.5", "2")));
        try {
            Sample8.risky(Arrays.asList("x"));
        } catch (Exception e) {
            System.out.println(e.getMessage() + " " + e.getCause().getClass().getName());
        }
        System.out.println(Sample8.apply(6, 7) + " " + s.new Inner().get());
    }
}
