package jt;

import jx.Count;

/** Traced work for JTrace: every method counts itself with Count.call(). */
public class Work {
	static int base;

	static {
		Count.call();
		base = 1;
	}

	public static int fib(int n) {
		Count.call();
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static void thrower(int d) {
		Count.call();
		if (d == 0) {
			Count.throwsHere.incrementAndGet();
			throw new IllegalStateException("deep"); // THROW-LINE
		}
		thrower(d - 1);
	}

	/** catcher catches what thrower(d) throws d+1 frames down. */
	static int catcher(int d) {
		Count.call();
		try {
			thrower(d);
		} catch (IllegalStateException e) {
			Count.bubbles.addAndGet(d + 1);
			return 1;
		}
		return 0;
	}

	/** parse lets the JDK's NumberFormatException bubble out of it. */
	static int parse(String s) {
		Count.call();
		return Integer.parseInt(s);
	}

	static int parseCaught() {
		Count.call();
		try {
			return parse("x");
		} catch (NumberFormatException e) {
			Count.bubbles.incrementAndGet();
			return -1;
		}
	}

	/** withFinally runs a finally block on a throwing path and a returning one. */
	static int withFinally(boolean fail) {
		Count.call();
		int r = 0;
		try {
			if (fail) {
				// Two throws: this one, and the finally block's rethrow
				// (javac copies the block into a catch-all handler ending in athrow).
				Count.throwsHere.addAndGet(2);
				throw new RuntimeException("fin");
			}
			r = 1;
		} finally {
			r += 10;
		}
		return r;
	}

	static int finallyCaught() {
		Count.call();
		try {
			return withFinally(true);
		} catch (RuntimeException e) {
			Count.bubbles.incrementAndGet();
			return withFinally(false);
		}
	}

	interface Greeter {
		default int greet() {
			Count.call();
			return hello() + 1;
		}

		int hello();
	}

	static final class Hello implements Greeter {
		Hello() {
			Count.call();
		}

		@Override
		public int hello() {
			Count.call();
			return 41;
		}
	}

	record Point(int x, int y) {
		Point {
			Count.call();
		}

		@Override
		public int x() {
			Count.call();
			return x;
		}
	}

	final class Inner {
		Inner() {
			Count.call();
		}

		int twice(int v) {
			Count.call();
			return 2 * v + base;
		}
	}

	Work() {
		Count.call();
	}

	/** logged logs record i between traced calls. */
	public static void logged(java.util.logging.Logger l, int i) {
		Count.call();
		fib(3);
		l.info("rec " + i);
		fib(2);
	}

		/** job is one thread's share: recursion, exceptions, a lambda, a record, an inner class, a default method. */
	public static long job(int k) {
		Count.call();
		long s = fib(12 + (k & 3));
		s += catcher(2 + (k & 1));
		s += parseCaught();
		s += finallyCaught();
		java.util.function.IntUnaryOperator f = v -> {
			Count.call();
			return v + 1;
		};
		s += f.applyAsInt(k);
		s += new Point(k, 2).x();
		s += new Work().new Inner().twice(k);
		s += new Hello().greet();
		return s;
	}
}
