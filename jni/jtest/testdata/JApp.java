import io.tadpole.Tadpole;

import java.lang.reflect.Method;
import java.util.logging.Level;
import java.util.logging.Logger;

/* JApp is the jni tests' Java program; its first argument picks a case. */
public class JApp {
	public static void main(String[] args) throws Exception {
		String mode = args.length > 0 ? args[0] : "basic";
		if (mode.equals("basic")) {
			basic();
		} else if (mode.equals("npe")) {
			npeStorm(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
		} else if (mode.equals("selftest")) {
			selfTest();
		} else if (mode.equals("procs")) {
			System.out.println("procs " + selfTest0(4));
		} else if (mode.equals("await")) {
			Tadpole.marker("waiting", "");
			System.out.println("JApp ready");
			System.out.flush();
			System.in.read();
			Tadpole.marker("woke", "");
		} else if (mode.equals("none")) {
			return;
		} else if (mode.equals("logloop")) {
			logLoop(Long.parseLong(args[1]));
		} else if (mode.equals("mutf8")) {
			mutf8();
		} else if (mode.equals("lttng")) {
			lttng();
		} else if (mode.equals("threads")) {
			threads(Integer.parseInt(args[1]));
		} else if (mode.equals("records")) {
			records(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
		} else if (mode.equals("quiet")) {
			quiet();
		} else if (mode.equals("churn")) {
			churn(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
		}
		System.out.println("JApp done " + mode + " tracing=" + Tadpole.tracing());
	}

	static void basic() throws Exception {
		Logger a = Logger.getLogger("shop.orders");
		Logger b = Logger.getLogger("shop.pay");
		a.setUseParentHandlers(false);
		b.setUseParentHandlers(false);
		b.setLevel(Level.ALL);
		Tadpole.syncLoggers();
		Tadpole.marker("k1", "v1");
		a.info("order 1");
		b.fine("pay " + 2);
		b.log(Level.WARNING, "declined {0}", "card");
		Thread t = new Thread(new Runnable() {
			public void run() {
				Tadpole.marker("in", "worker");
				Thread.currentThread().setName("renamed-worker");
				Tadpole.marker("in", "renamed");
			}
		}, "worker-1");
		t.start();
		t.join();
		Tadpole.marker("k2", "v\u00e9");
	}

	/* S holds U+0000 and a supplementary character (U+1F600), which
	 * modified UTF-8 encodes differently from UTF-8. */
	static final String S = "a\u0000b\uD83D\uDE00";

	static void mutf8() throws Exception {
		Logger l = Logger.getLogger("shop." + S);
		l.setUseParentHandlers(false);
		Tadpole.syncLoggers();
		Tadpole.marker("k" + S, S);
		l.info(S);
		l.log(Level.WARNING, "{0}!", S);
		Thread t = new Thread(new Runnable() {
			public void run() {
				Tadpole.marker("named", S);
			}
		}, "t-" + S);
		t.start();
		t.join();
	}

	/* lttng logs on shop.orders and shop.pay and records a marker "tick"
	 * with the iteration every 2 ms until stdin closes; the records say
	 * "tick <i>" too. */
	static void lttng() throws Exception {
		Logger a = Logger.getLogger("shop.orders");
		Logger b = Logger.getLogger("shop.pay");
		a.setUseParentHandlers(false);
		b.setUseParentHandlers(false);
		final boolean[] eof = new boolean[1];
		Thread r = new Thread(new Runnable() {
			public void run() {
				try {
					while (System.in.read() >= 0) {
					}
				} catch (java.io.IOException e) {
				}
				synchronized (eof) {
					eof[0] = true;
				}
			}
		}, "stdin");
		r.setDaemon(true);
		r.start();
		for (int i = 0;; i++) {
			synchronized (eof) {
				if (eof[0]) {
					break;
				}
			}
			a.info("tick " + i);
			b.info("tick " + i);
			Tadpole.marker("tick", Integer.toString(i));
			Thread.sleep(2);
		}
	}

	static void npeStorm(int threads, final int each) throws Exception {
		Thread[] ts = new Thread[threads];
		final long[] caught = new long[threads];
		for (int i = 0; i < threads; i++) {
			final int me = i;
			ts[i] = new Thread(new Runnable() {
				public void run() {
					Tadpole.marker("npe", "start");
					String s = null;
					for (int j = 0; j < each; j++) {
						try {
							if (j % 2 == 0) {
								s = null;
							} else {
								s = "x";
							}
							caught[me] += s.length();
						} catch (NullPointerException e) {
							caught[me]++;
						}
					}
				}
			}, "npe-" + i);
			ts[i].start();
		}
		long sum = 0;
		for (int i = 0; i < threads; i++) {
			ts[i].join();
			sum += caught[i];
		}
		Tadpole.marker("npe", "caught " + sum);
		System.out.println("npe caught " + sum);
	}

	/* selfTest0 calls the agent's private self-test native (jni/tpj.h:
	 * 1 Go panic, 2 broken pipe, 3 thread states, 4 GOMAXPROCS). */
	static int selfTest0(int what) throws Exception {
		Method m = Tadpole.class.getDeclaredMethod("selfTest0", int.class);
		m.setAccessible(true);
		return (Integer) m.invoke(null, what);
	}

	static void selfTest() throws Exception {
		int panic = selfTest0(1);
		int epipe = selfTest0(2);
		Tadpole.marker("selftest", panic + " " + epipe);
		System.out.println("selftest " + panic + " " + epipe);
	}

	static void logLoop(long ms) throws Exception {
		Logger l = Logger.getLogger("loop");
		Tadpole.syncLoggers();
		System.out.println("JApp looping tracing=" + Tadpole.tracing());
		System.out.flush();
		long end = System.currentTimeMillis() + ms;
		int i = 0;
		while (System.currentTimeMillis() < end) {
			l.info("tick " + i++);
			Thread.sleep(1);
		}
	}

	/* quiet: once tracing, thread "q" logs "alone" and waits; "JApp quiet
	 * logged" on stdout says so; a line on stdin lets it log "after" and
	 * end. Its first record must reach HQ while it waits. */
	static void quiet() throws Exception {
		for (int i = 0; i < 5000 && !Tadpole.tracing(); i++) {
			Thread.sleep(1);
		}
		final Logger l = Logger.getLogger("quiet");
		l.setUseParentHandlers(false);
		Tadpole.syncLoggers();
		final Object lock = new Object();
		final boolean[] go = new boolean[1];
		Thread q = new Thread(new Runnable() {
			public void run() {
				l.info("alone");
				synchronized (lock) {
					while (!go[0]) {
						try {
							lock.wait();
						} catch (InterruptedException e) {
							return;
						}
					}
				}
				l.info("after");
			}
		}, "q");
		q.start();
		Thread.sleep(20);
		System.out.println("JApp quiet logged");
		System.out.flush();
		System.in.read();
		synchronized (lock) {
			go[0] = true;
			lock.notifyAll();
		}
		q.join();
	}

	/* threads starts n threads "w-<i>" that log, rename themselves
	 * "r-<i>", log again and end. */
	static void threads(int n) throws Exception {
		final Logger l = Logger.getLogger("thr");
		l.setUseParentHandlers(false);
		Tadpole.syncLoggers();
		Thread[] ts = new Thread[n];
		for (int i = 0; i < n; i++) {
			final int me = i;
			ts[i] = new Thread(new Runnable() {
				public void run() {
					l.info("before " + me);
					Thread.currentThread().setName("r-" + me);
					l.info("after " + me);
				}
			}, "w-" + i);
			ts[i].start();
		}
		for (Thread t : ts) {
			t.join();
		}
	}

	/* churn runs total short threads "c-<i>", par at a time, each logging
	 * one record, then prints how many thread states the agent's C side
	 * holds ("churn states=<n>"). */
	static void churn(int total, int par) throws Exception {
		final Logger l = Logger.getLogger("churn");
		l.setUseParentHandlers(false);
		Tadpole.syncLoggers();
		int before = selfTest0(3);
		for (int i = 0; i < total; i += par) {
			Thread[] ts = new Thread[Math.min(par, total - i)];
			for (int j = 0; j < ts.length; j++) {
				final int me = i + j;
				ts[j] = new Thread(new Runnable() {
					public void run() {
						l.info("c " + me);
					}
				}, "c-" + me);
				ts[j].start();
			}
			for (Thread t : ts) {
				t.join();
			}
		}
		int after = selfTest0(3);
		Tadpole.marker("churn", before + " " + after);
		System.out.println("churn states=" + before + " " + after);
	}

	static final class Notice extends Level {
		Notice() {
			super("NOTICE", 850);
		}
	}

	/* recordMsg is record i of thread t: mostly plain ASCII, and every 50
	 * records a NUL, a Latin-1 letter, a '?', a 3000-character message, a
	 * supplementary character, a lone surrogate and a message longer than
	 * a marker holds (records_test.go). */
	static String recordMsg(int t, int i) {
		String id = t + "." + i;
		switch (i % 50) {
		case 7:
			return "nul\u0000" + id;
		case 13:
			return "caf\u00e9 " + id;
		case 21:
			return "q? " + id;
		case 29:
			return "big " + id + " " + new String(new char[3000]).replace('\0', 'x');
		case 33:
			return "pair \uD83D\uDE00 " + id;
		case 41:
			return "lone \uD800 " + id;
		case 45:
			return "huge " + id + " " + new String(new char[9000]).replace('\0', 'y');
		}
		return "m " + id;
	}

	/* records runs n threads "rec-<t>" that each log each records on
	 * logger "rec" (NOTICE every 37th, INFO otherwise) and record the
	 * marker "rec-mark" = "<t>.<i>" every 100th. */
	static void records(int n, final int each) throws Exception {
		final Logger l = Logger.getLogger("rec");
		l.setUseParentHandlers(false);
		l.setLevel(Level.ALL);
		Tadpole.syncLoggers();
		final Level notice = new Notice();
		Thread[] ts = new Thread[n];
		for (int i = 0; i < n; i++) {
			final int t = i;
			ts[i] = new Thread(new Runnable() {
				public void run() {
					for (int i = 0; i < each; i++) {
						l.log(i % 37 == 5 ? notice : Level.INFO, recordMsg(t, i));
						if (i % 100 == 0) {
							Tadpole.marker("rec-mark", t + "." + i);
						}
					}
				}
			}, "rec-" + t);
			ts[i].start();
		}
		for (Thread t : ts) {
			t.join();
		}
	}
}
