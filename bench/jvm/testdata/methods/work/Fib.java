package work;

/** Call-heavy: recursive fib, nothing but calls. fib(n) makes 2·fib(n+1) − 1 calls. */
public final class Fib {
	private Fib() {
	}

	public static int fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}
}
