package jt;

import jx.Count;

/** Defined by JTrace's own class loader, not the application's. */
public class Loaded implements Runnable {
	public Loaded() {
		Count.call();
	}

	@Override
	public void run() {
		Count.call();
		Work.fib(6);
	}
}
