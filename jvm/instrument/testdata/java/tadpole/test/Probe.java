package tadpole.test;

import java.util.ArrayList;
import java.util.List;

/**
 * Probe helper for the instrumenter's end-to-end test. Every thread keeps a
 * stack of method ids: enter pushes, exit and bubble pop and must pop the same
 * id. At VM exit a shutdown hook prints one line per thread and a verdict on
 * stderr: no mismatch, and entries = exits + bubbles + the frames still live
 * (listed as live=id,id…: those of a thread that called System.exit).
 */
public final class Probe {
    static final class State {
        final String thread;
        int[] stack = new int[64];
        int depth;
        long enters, exits, bubbles, throwns, leaves, mismatches;
        String firstMismatch;

        State(String thread) { this.thread = thread; }

        void push(int id) {
            if (depth == stack.length) {
                int[] s = new int[depth * 2];
                System.arraycopy(stack, 0, s, 0, depth);
                stack = s;
            }
            stack[depth++] = id;
        }

        void pop(int id, String what) {
            if (depth == 0 || stack[depth - 1] != id) {
                mismatches++;
                if (firstMismatch == null) {
                    firstMismatch = what + " id " + id + " top " + (depth == 0 ? "none" : "" + stack[depth - 1]);
                }
                return;
            }
            depth--;
        }
    }

    private static final List<State> ALL = new ArrayList<>();
    private static final ThreadLocal<State> STATE = new ThreadLocal<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(Probe::report));
    }

    private static State state() {
        State s = STATE.get();
        if (s == null) {
            s = new State(Thread.currentThread().getName());
            STATE.set(s);
            synchronized (ALL) {
                ALL.add(s);
            }
        }
        return s;
    }

    public static void enter(int id) {
        State s = state();
        s.enters++;
        s.push(id);
    }

    public static void exit(int id, int line) {
        State s = state();
        s.exits++;
        s.pop(id, "exit");
    }

    public static void thrown(int id, int line) {
        state().throwns++;
    }

    /** exit with Config.PackedWords: line << 48 | id << 8 | 1. */
    public static void exit(long w) {
        State s = state();
        s.exits++;
        s.pop((int) (w >>> 8), (w & 0xFF) == 1 ? "exit" : "exit word of kind " + (w & 0xFF));
        if ((w & 0xFF) != 1) s.mismatches++;
    }

    /** thrown with Config.PackedWords: line << 48 | id << 8 | 2. */
    public static void thrown(long w) {
        State s = state();
        s.throwns++;
        if ((w & 0xFF) != 2) {
            s.mismatches++;
            if (s.firstMismatch == null) s.firstMismatch = "thrown word of kind " + (w & 0xFF);
        }
    }

    /**
     * The tick the rewriter's leaf methods (Config.Leaves) store at their
     * entry: never changed, so leaf and bubbleLeaf can check that t0 is it.
     */
    public static long now = 0x1234_5678_9ABCL;

    /** A leaf method's return: its entry and exit at once. */
    public static void leaf(long t0, long w) {
        State s = state();
        s.leaves++;
        if (t0 != now) {
            s.mismatches++;
            if (s.firstMismatch == null) s.firstMismatch = "leaf t0 " + t0;
        }
        int id = (int) (w >>> 8);
        s.enters++;
        s.push(id);
        exit(w);
    }

    /** A leaf method's catch-all: its deferred entry, then the bubble. */
    public static void bubbleLeaf(int id, long t0) {
        State s = state();
        s.leaves++;
        if (t0 != now) {
            s.mismatches++;
            if (s.firstMismatch == null) s.firstMismatch = "bubbleLeaf t0 " + t0;
        }
        s.enters++;
        s.push(id);
        bubble(id);
    }

    public static void bubble(int id) {
        State s = state();
        s.bubbles++;
        s.pop(id, "bubble");
    }

    private static void report() {
        boolean ok = true;
        long enters = 0;
        synchronized (ALL) {
            for (State s : ALL) {
                boolean good = s.enters == s.exits + s.bubbles + s.depth && s.mismatches == 0;
                StringBuilder live = new StringBuilder();
                for (int i = 0; i < s.depth; i++) live.append(i == 0 ? "" : ",").append(s.stack[i]);
                ok &= good;
                enters += s.enters;
                System.err.println("probe: thread=" + s.thread + " enters=" + s.enters + " exits=" + s.exits
                        + " bubbles=" + s.bubbles + " thrown=" + s.throwns + " leaves=" + s.leaves + " depth=" + s.depth + " live=" + live
                        + " mismatches=" + s.mismatches + (s.firstMismatch == null ? "" : " first=" + s.firstMismatch)
                        + (good ? "" : " BAD"));
            }
            System.err.println("probe: threads=" + ALL.size() + " enters=" + enters + (ok && enters > 0 ? " OK" : " FAIL"));
        }
    }
}
