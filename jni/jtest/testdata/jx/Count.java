package jx;

import java.util.concurrent.atomic.AtomicLong;

/** What JTrace's traced classes (package jt) count of themselves: not traced (trace=jt/**). */
public final class Count {
	private Count() {}

	public static final AtomicLong calls = new AtomicLong();
	public static final AtomicLong bubbles = new AtomicLong();
	public static final AtomicLong throwsHere = new AtomicLong();
	public static final AtomicLong skipped = new AtomicLong();

	/** call counts one traced method call: every method of jt calls it first. */
	public static void call() {
		calls.incrementAndGet();
	}
}
