package tadpole.test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;

/** End-to-end program for the instrumenter: its output must not change when instrumented. */
public class Main {
    static long checksum;

    static void mix(long v) { checksum = checksum * 31 + v; }

    /** Calls tadpole.test.Jsr (version 48, jsr/ret), written by JsrGen when ASM is installed. */
    static long oldJsrClass() throws Exception {
        Class<?> c;
        try {
            c = Class.forName("tadpole.test.Jsr");
        } catch (ClassNotFoundException e) {
            System.err.println("main: no Jsr class");
            return 0;
        }
        return (Long) c.getMethod("run").invoke(null);
    }

    public static void main(String[] args) throws Exception {
        mix(Recursion.run());
        mix(Exceptions.run());
        mix(Ctors.run());
        mix(Switches.run());
        mix(Huge.run());
        mix(Misc.run());
        mix(oldJsrClass());
        mix(TypeAnnos.run("four"));
        List<Thread> ts = new ArrayList<>();
        long[] results = new long[4];
        for (int i = 0; i < results.length; i++) {
            final int k = i;
            Thread t = new Thread(null, () -> results[k] = Exceptions.run() + Switches.run() + k, "worker-" + i, 1 << 24);
            ts.add(t);
            t.start();
        }
        for (Thread t : ts) t.join();
        for (long r : results) mix(r);
        System.out.println("checksum " + checksum);
    }
}

class Recursion {
    static int depth(int n) { return n == 0 ? 0 : 1 + depth(n - 1); }

    static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    static long run() throws InterruptedException {
        long[] r = new long[1];
        Thread t = new Thread(null, () -> r[0] = depth(10_000) + fib(18), "deep", 1 << 26);
        t.start();
        t.join();
        return r[0];
    }
}

class Exceptions {
    static int thrower(int n, int at, long[] acc) {
        if (n == at) throw new IllegalStateException("at " + n);
        try {
            return thrower(n + 1, at, acc) + 1;
        } finally {
            acc[0] += n;
        }
    }

    static long catcher(int depth) {
        long[] acc = new long[1];
        try {
            return thrower(0, depth, acc);
        } catch (IllegalStateException e) {
            return acc[0] - e.getMessage().length();
        }
    }

    static int rethrow(int n) throws Exception {
        try {
            if (n > 3) return rethrow(n - 1);
            throw new Exception("leaf");
        } catch (RuntimeException e) {
            return 0;
        }
    }

    static synchronized int sync(int n) {
        if (n % 2 == 0) throw new ArithmeticException();
        return n;
    }

    static long run() {
        long s = 0;
        for (int d = 1; d < 300; d += 37) s += catcher(d);
        try {
            rethrow(40);
        } catch (Exception e) {
            s += 7;
        }
        for (int i = 0; i < 10; i++) {
            try {
                s += sync(i);
            } catch (ArithmeticException e) {
                s--;
            }
        }
        try {
            Object o = null;
            o.hashCode();
        } catch (NullPointerException e) {
            s += 3;
        }
        return s;
    }
}

class Base {
    final int v;

    Base(int v) {
        if (v < 0) throw new IllegalArgumentException("negative");
        this.v = v;
    }
}

class Derived extends Base {
    final String name;

    Derived(int v) {
        super(check(v) * 2);
        if (v == 13) throw new IllegalStateException("unlucky");
        name = "d" + v;
    }

    Derived(String s) {
        this(s.length());
    }

    Derived(int a, int b) {
        super(a > b ? a : b); // a branch before super()
        name = "max";
    }

    static int check(int v) {
        if (v > 1000) throw new IllegalArgumentException("big");
        return v;
    }
}

class Ctors {
    static long run() {
        long s = 0;
        for (int v : new int[] {1, -1, 13, 2000, 7}) {
            try {
                s += new Derived(v).v;
            } catch (IllegalArgumentException e) {
                s += 100;
            } catch (IllegalStateException e) {
                s += 1000;
            }
        }
        s += new Derived("abcd").v + new Derived(3, 9).v;
        try {
            new Derived("").toString();
        } catch (RuntimeException e) {
            s++;
        }
        return s;
    }
}

enum Color { RED, GREEN, BLUE, CYAN }

class Switches {
    static int table(int k) {
        switch (k) {
            case 0: return 10;
            case 1: return 11;
            case 2:
            case 3: return 13;
            case 4: k += 5; break;
            case 5: return 15;
            case 6: throw new IllegalArgumentException("six");
            default: k *= 2;
        }
        return k;
    }

    static int lookup(int k) {
        switch (k) {
            case -100000: return 1;
            case 7: return 2;
            case 1000: return 3;
            case 99999: return 4;
            default: return k & 3;
        }
    }

    static int strings(String s) {
        switch (s) {
            case "alpha": return 1;
            case "beta": return 2;
            case "gamma": return 3;
            default: return s.length();
        }
    }

    static int colors(Color c) {
        switch (c) {
            case RED: return 1;
            case GREEN: return 2;
            default: return 3;
        }
    }

    static long run() {
        long s = 0;
        for (int i = -2; i < 12; i++) {
            try {
                s += table(i);
            } catch (IllegalArgumentException e) {
                s += 66;
            }
            s += lookup(i * 1000) + lookup(7) + lookup(99999);
        }
        for (String x : new String[] {"alpha", "beta", "gamma", "delta"}) s += strings(x);
        for (Color c : Color.values()) s += colors(c);
        return s;
    }
}

interface Shape {
    double area();

    default String describe() { return getClass().getSimpleName() + area(); }
}

class Misc {
    static int sum(int... xs) {
        int s = 0;
        for (int x : xs) s += x;
        return s;
    }

    static final int[] TABLE;

    static {
        TABLE = new int[16];
        for (int i = 0; i < TABLE.length; i++) TABLE[i] = i * i;
    }

    static long run() {
        IntUnaryOperator f = x -> x * 3 + 1;
        Shape sq = () -> 4.0;
        Runnable r = new Runnable() {
            int n;

            public void run() { n = sum(1, 2, 3); }
        };
        r.run();
        Comparable<String> cmp = "b"::compareTo;
        return sum(TABLE) + f.applyAsInt(5) + sq.describe().length() + cmp.compareTo("a");
    }
}

@java.lang.annotation.Target({java.lang.annotation.ElementType.TYPE_USE})
@java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.RUNTIME)
@interface TA {}

class TypeAnnos {
    static int run(Object x) {
        @TA String s = (@TA String) x;
        List<String> l = new @TA ArrayList<>();
        l.add(s);
        if (x instanceof @TA CharSequence) return l.size() + s.length();
        return 0;
    }
}
