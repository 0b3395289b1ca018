package jt;

import jx.Count;

/** Excluded by the tests' trace option or HQ's exclusions: it counts itself as skipped. */
public class Skip {
	public static int run(int n) {
		Count.skipped.incrementAndGet();
		return n + 1;
	}
}
