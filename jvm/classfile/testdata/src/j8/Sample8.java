import java.util.ArrayList;
import java.util.List;
import java.util.function.IntBinaryOperator;

// Compiled with: javac --release 8 -g -d ../classes j8/Sample8.java
public class Sample8 extends ArrayList<String> {
    static final long BIG = 1234567890123L;
    static final double PI2 = 6.283185307179586;
    static int counter;
    private final int size;

    static {
        counter = (int) (BIG % 1000);
    }

    Sample8(int n) {
        super(n > 10 ? n * 2 : pick(n, "small"));
        this.size = n;
    }

    static int pick(int n, String why) {
        return why.length() + n;
    }

    synchronized int sum(int... xs) {
        int s = 0;
        for (int x : xs) {
            s += x;
        }
        return s;
    }

    static String day(int d) {
        switch (d) {
            case 0: return "sun";
            case 1: return "mon";
            case 2: return "tue";
            case 3: return "wed";
            default: return "?";
        }
    }

    static int sparse(int k) {
        switch (k) {
            case -100: return 1;
            case 7: return 2;
            case 100000: return 3;
            default: return 0;
        }
    }

    static double risky(List<String> xs) throws Exception {
        double acc = PI2;
        try {
            for (String s : xs) {
                acc += Double.parseDouble(s);
            }
        } catch (NumberFormatException e) {
            throw new Exception("bad", e);
        } finally {
            counter++;
        }
        return acc;
    }

    static int apply(int a, int b) {
        IntBinaryOperator op = (x, y) -> x * y + counter;
        return op.applyAsInt(a, b);
    }

    class Inner {
        int get() {
            return size;
        }
    }
}
