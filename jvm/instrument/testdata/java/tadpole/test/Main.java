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
        mix(Leaves.run());
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

/**
 * Leaf methods (Config.Leaves): they call nothing, so their entry and exit
 * go through one probe. Loops, try/catch, an exception out of the leaf,
 * synchronized, a static initializer, long and double locals, and a tick
 * local past slot 255 (wide lload/lstore).
 */
class Leaves {
    static int counter;
    static final int[] TABLE;
    static long seed = 7;

    static {
        TABLE = new int[] {3, 1, 4, 1, 5, 9, 2, 6};
        counter = TABLE.length;
    }

    final int key;
    final double weight;

    Leaves(int key, double weight) {
        this.key = key;
        this.weight = weight;
    }

    int key() { return key; }

    int compareTo(Leaves o) { return key < o.key ? -1 : key == o.key ? 0 : 1; }

    boolean same(Object o) { return o instanceof Leaves && ((Leaves) o).key == key; }

    static int sum(int[] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) s += a[i];
        return s;
    }

    static double mean(double x, long y, double z) {
        double d = x + y + z;
        long n = y;
        while (n > 3) n >>= 1;
        return d / (n + 1);
    }

    /** Divides, catching the ArithmeticException inside the leaf. */
    static int safeDiv(int a, int b) {
        try {
            return a / b;
        } catch (ArithmeticException e) {
            return -1;
        }
    }

    /** Throws an ArithmeticException or an ArrayIndexOutOfBoundsException out of the leaf. */
    static int div(int a, int b) { return TABLE[a] / b; }

    static synchronized int syncLeaf(int n) {
        counter += n;
        return counter;
    }

    static long next() {
        seed = seed * 6364136223846793005L + 1442695040888963407L;
        return seed >>> 33;
    }

    /** Leaves calling untraced JDK statics (Config.LeafCalls); floorDiv throws on 0. */
    int cmp(Leaves o) { return Integer.compare(key, o.key); }

    static int clampDiv(int a, int b) { return Math.max(-5, Math.min(Math.floorDiv(a, b), 5)); }

    static String name(int i) { return i % 2 == 0 ? "even" : "odd"; }

    static int lengthOf(Object o) { return ((int[]) o).length; }

    static long wide(long n) {
        long a0 = n, a1 = a0 * 3 + 1, a2 = a1 * 3 + 2, a3 = a2 * 3 + 3, a4 = a3 * 3 + 4, a5 = a4 * 3 + 5, a6 = a5 * 3 + 6, a7 = a6 * 3 + 7, a8 = a7 * 3 + 8, a9 = a8 * 3 + 9, a10 = a9 * 3 + 10, a11 = a10 * 3 + 11, a12 = a11 * 3 + 12, a13 = a12 * 3 + 13, a14 = a13 * 3 + 14, a15 = a14 * 3 + 15, a16 = a15 * 3 + 16, a17 = a16 * 3 + 17, a18 = a17 * 3 + 18, a19 = a18 * 3 + 19, a20 = a19 * 3 + 20, a21 = a20 * 3 + 21, a22 = a21 * 3 + 22, a23 = a22 * 3 + 23, a24 = a23 * 3 + 24, a25 = a24 * 3 + 25, a26 = a25 * 3 + 26, a27 = a26 * 3 + 27, a28 = a27 * 3 + 28, a29 = a28 * 3 + 29, a30 = a29 * 3 + 30, a31 = a30 * 3 + 31, a32 = a31 * 3 + 32, a33 = a32 * 3 + 33, a34 = a33 * 3 + 34, a35 = a34 * 3 + 35, a36 = a35 * 3 + 36, a37 = a36 * 3 + 37, a38 = a37 * 3 + 38, a39 = a38 * 3 + 39, a40 = a39 * 3 + 40, a41 = a40 * 3 + 41, a42 = a41 * 3 + 42, a43 = a42 * 3 + 43, a44 = a43 * 3 + 44, a45 = a44 * 3 + 45, a46 = a45 * 3 + 46, a47 = a46 * 3 + 47, a48 = a47 * 3 + 48, a49 = a48 * 3 + 49, a50 = a49 * 3 + 50, a51 = a50 * 3 + 51, a52 = a51 * 3 + 52, a53 = a52 * 3 + 53, a54 = a53 * 3 + 54, a55 = a54 * 3 + 55, a56 = a55 * 3 + 56, a57 = a56 * 3 + 57, a58 = a57 * 3 + 58, a59 = a58 * 3 + 59, a60 = a59 * 3 + 60, a61 = a60 * 3 + 61, a62 = a61 * 3 + 62, a63 = a62 * 3 + 63, a64 = a63 * 3 + 64, a65 = a64 * 3 + 65, a66 = a65 * 3 + 66, a67 = a66 * 3 + 67, a68 = a67 * 3 + 68, a69 = a68 * 3 + 69, a70 = a69 * 3 + 70, a71 = a70 * 3 + 71, a72 = a71 * 3 + 72, a73 = a72 * 3 + 73, a74 = a73 * 3 + 74, a75 = a74 * 3 + 75, a76 = a75 * 3 + 76, a77 = a76 * 3 + 77, a78 = a77 * 3 + 78, a79 = a78 * 3 + 79, a80 = a79 * 3 + 80, a81 = a80 * 3 + 81, a82 = a81 * 3 + 82, a83 = a82 * 3 + 83, a84 = a83 * 3 + 84, a85 = a84 * 3 + 85, a86 = a85 * 3 + 86, a87 = a86 * 3 + 87, a88 = a87 * 3 + 88, a89 = a88 * 3 + 89, a90 = a89 * 3 + 90, a91 = a90 * 3 + 91, a92 = a91 * 3 + 92, a93 = a92 * 3 + 93, a94 = a93 * 3 + 94, a95 = a94 * 3 + 95, a96 = a95 * 3 + 96, a97 = a96 * 3 + 97, a98 = a97 * 3 + 98, a99 = a98 * 3 + 99, a100 = a99 * 3 + 100, a101 = a100 * 3 + 101, a102 = a101 * 3 + 102, a103 = a102 * 3 + 103, a104 = a103 * 3 + 104, a105 = a104 * 3 + 105, a106 = a105 * 3 + 106, a107 = a106 * 3 + 107, a108 = a107 * 3 + 108, a109 = a108 * 3 + 109, a110 = a109 * 3 + 110, a111 = a110 * 3 + 111, a112 = a111 * 3 + 112, a113 = a112 * 3 + 113, a114 = a113 * 3 + 114, a115 = a114 * 3 + 115, a116 = a115 * 3 + 116, a117 = a116 * 3 + 117, a118 = a117 * 3 + 118, a119 = a118 * 3 + 119, a120 = a119 * 3 + 120, a121 = a120 * 3 + 121, a122 = a121 * 3 + 122, a123 = a122 * 3 + 123, a124 = a123 * 3 + 124, a125 = a124 * 3 + 125, a126 = a125 * 3 + 126, a127 = a126 * 3 + 127, a128 = a127 * 3 + 128, a129 = a128 * 3 + 129;
        return a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7 ^ a8 ^ a9 ^ a10 ^ a11 ^ a12 ^ a13 ^ a14 ^ a15 ^ a16 ^ a17 ^ a18 ^ a19 ^ a20 ^ a21 ^ a22 ^ a23 ^ a24 ^ a25 ^ a26 ^ a27 ^ a28 ^ a29 ^ a30 ^ a31 ^ a32 ^ a33 ^ a34 ^ a35 ^ a36 ^ a37 ^ a38 ^ a39 ^ a40 ^ a41 ^ a42 ^ a43 ^ a44 ^ a45 ^ a46 ^ a47 ^ a48 ^ a49 ^ a50 ^ a51 ^ a52 ^ a53 ^ a54 ^ a55 ^ a56 ^ a57 ^ a58 ^ a59 ^ a60 ^ a61 ^ a62 ^ a63 ^ a64 ^ a65 ^ a66 ^ a67 ^ a68 ^ a69 ^ a70 ^ a71 ^ a72 ^ a73 ^ a74 ^ a75 ^ a76 ^ a77 ^ a78 ^ a79 ^ a80 ^ a81 ^ a82 ^ a83 ^ a84 ^ a85 ^ a86 ^ a87 ^ a88 ^ a89 ^ a90 ^ a91 ^ a92 ^ a93 ^ a94 ^ a95 ^ a96 ^ a97 ^ a98 ^ a99 ^ a100 ^ a101 ^ a102 ^ a103 ^ a104 ^ a105 ^ a106 ^ a107 ^ a108 ^ a109 ^ a110 ^ a111 ^ a112 ^ a113 ^ a114 ^ a115 ^ a116 ^ a117 ^ a118 ^ a119 ^ a120 ^ a121 ^ a122 ^ a123 ^ a124 ^ a125 ^ a126 ^ a127 ^ a128 ^ a129;
    }

    static long run() {
        long s = 0;
        Leaves[] ls = new Leaves[20];
        for (int i = 0; i < ls.length; i++) ls[i] = new Leaves((i * 7) % 11, i / 3.0);
        for (int i = 0; i < ls.length; i++)
            for (int j = 0; j < ls.length; j++) s += ls[i].compareTo(ls[j]) + (ls[i].same(ls[j]) ? 1 : 0) + ls[j].key();
        s += sum(TABLE) + (long) mean(1.5, 40, 2.5) + safeDiv(7, 0) + safeDiv(9, 2) + syncLeaf(3) + next() + name(3).length();
        s += lengthOf(TABLE) + wide(5) + ls[3].cmp(ls[4]) + clampDiv(70, 3);
        try {
            s += clampDiv(1, 0);
        } catch (ArithmeticException e) {
            s += 13;
        }
        for (int i = 0; i < 12; i++) {
            try {
                s += div(i, i % 4);
            } catch (ArithmeticException e) {
                s += 100;
            } catch (ArrayIndexOutOfBoundsException e) {
                s += 1000;
            }
        }
        try {
            s += ls[0].compareTo(null);
        } catch (NullPointerException e) {
            s += 7;
        }
        try {
            s += lengthOf("x");
        } catch (ClassCastException e) {
            s += 11;
        }
        return s;
    }
}
