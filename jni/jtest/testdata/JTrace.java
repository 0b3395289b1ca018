import java.io.ByteArrayOutputStream;
import java.io.InputStream;

/**
 * The method-tracing test program (jni/jtest/trace_test.go): runs package jt's
 * traced work on the main thread and on N more threads, a class from a class
 * loader of its own, then prints what jt counted of itself:
 * "JTrace calls=C bubbles=B throws=T skipped=S". With "attach N" it runs
 * jt once, waits for a line on stdin, then does the same with N threads.
 */
public class JTrace {
	/** ChildFirst defines jt.Loaded itself, from the class path's bytes. */
	static final class ChildFirst extends ClassLoader {
		ChildFirst(ClassLoader parent) {
			super(parent);
		}

		@Override
		protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
			if (!name.equals("jt.Loaded"))
				return super.loadClass(name, resolve);
			synchronized (getClassLoadingLock(name)) {
				Class<?> c = findLoadedClass(name);
				if (c != null)
					return c;
				try (InputStream in = getParent().getResourceAsStream("jt/Loaded.class")) {
					ByteArrayOutputStream out = new ByteArrayOutputStream();
					byte[] b = new byte[4096];
					for (int n; (n = in.read(b)) > 0;)
						out.write(b, 0, n);
					byte[] bytes = out.toByteArray();
					return defineClass(name, bytes, 0, bytes.length);
				} catch (java.io.IOException e) {
					throw new ClassNotFoundException(name, e);
				}
			}
		}
	}

	/**
	 * loop runs jt until the probes were switched off twice (HQ suspends,
	 * unsuspends, then stops), at most 60 s, and prints the switches it saw
	 * and the jt calls made while the probes were on.
	 */
	static void loop() throws Exception {
		java.lang.reflect.Field on = Class.forName("io.tadpole.Probe").getField("on");
		boolean was = false;
		int ons = 0, offs = 0;
		long deadline = System.nanoTime() + 60_000_000_000L;
		while (offs < 2 && System.nanoTime() < deadline) {
			jt.Work.fib(15);
			boolean now = on.getBoolean(null);
			if (now != was) {
				if (now)
					ons++;
				else
					offs++;
				was = now;
			}
		}
		System.out.println("JTrace loop ons=" + ons + " offs=" + offs + " on=" + on.getBoolean(null));
	}

	public static void main(String[] args) throws Exception {
		if (args.length > 0 && args[0].equals("attach")) {
			// Load and run jt before the agent comes: then wait for a line
			// on stdin (the test attaches the agent meanwhile) and count
			// afresh.
			jt.Work.job(-1);
			jx.Count.calls.set(0);
			jx.Count.bubbles.set(0);
			jx.Count.throwsHere.set(0);
			System.out.println("JTrace ready");
			System.out.flush();
			new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
			args = new String[] {args.length > 1 ? args[1] : "2"};
		}
		if (args.length > 0 && args[0].equals("log")) {
			// JUL records between traced calls: HQ must get them in between.
			java.util.logging.Logger l = java.util.logging.Logger.getLogger("jtrace");
			l.setUseParentHandlers(false);
			Class.forName("io.tadpole.Tadpole").getMethod("syncLoggers").invoke(null);
			for (int i = 0; i < 200; i++)
				jt.Work.logged(l, i);
			System.out.println("JTrace log done");
			return;
		}
		if (args.length > 0 && args[0].equals("loop")) {
			loop();
			return;
		}
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 2;
		long s = jt.Work.job(-1);
		Thread[] ts = new Thread[n];
		for (int i = 0; i < n; i++) {
			final int k = i;
			ts[i] = new Thread(() -> jt.Work.job(k), "jtrace-" + i);
			ts[i].start();
		}
		for (Thread t : ts)
			t.join();
		ClassLoader l = new ChildFirst(JTrace.class.getClassLoader());
		Class<?> c = l.loadClass("jt.Loaded");
		if (c.getClassLoader() != l)
			throw new AssertionError("jt.Loaded not defined by ChildFirst");
		((Runnable) c.getDeclaredConstructor().newInstance()).run();
		s += jt.Skip.run(1);
		System.out.println("JTrace calls=" + jx.Count.calls + " bubbles=" + jx.Count.bubbles + " throws="
				+ jx.Count.throwsHere + " skipped=" + jx.Count.skipped + " sum=" + s);
	}
}
