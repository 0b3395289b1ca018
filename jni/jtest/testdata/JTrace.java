import java.io.ByteArrayOutputStream;
import java.io.InputStream;

/**
 * The method-tracing test program (jni/jtest/trace_test.go): runs package jt's
 * traced work on the main thread and on N more threads, a class from a class
 * loader of its own, then prints what jt counted of itself:
 * "JTrace calls=C bubbles=B throws=T skipped=S".
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

	public static void main(String[] args) throws Exception {
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
