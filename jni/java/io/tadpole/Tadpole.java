/*
 * Tadpole: the public Java API of the tadpole JVM agent (libtadpole.so loaded
 * with -agentpath). The agent defines this class in the system class loader
 * when the JVM starts and binds its natives. Compile against jni/classes;
 * an application may also bundle jni/classes to run without the agent, in
 * which case every call does nothing.
 */
package io.tadpole;

public final class Tadpole {
	/* Set by the agent once the natives are bound. */
	private static volatile boolean bound;

	/* The last name each thread announced, compared by identity. */
	private static final ThreadLocal<String> NAMES = new ThreadLocal<String>();

	private Tadpole() {
	}

	/** Whether events are recorded now: the agent traces into an HQ. */
	public static boolean tracing() {
		return bound && tracing0();
	}

	/**
	 * Records a marker, a key/value event in the trace (UTF-8, at most 8192
	 * bytes each; longer strings are truncated).
	 */
	public static void marker(String key, String value) {
		if (!bound || key == null) {
			return;
		}
		checkName();
		marker0(key, value == null ? "" : value);
	}

	/**
	 * Announces the calling thread's current name. The agent names threads at
	 * start and whenever they log or record a marker after Thread.setName;
	 * call this to make a rename visible at once.
	 */
	public static void threadName() {
		if (bound) {
			String n = Thread.currentThread().getName();
			NAMES.set(n);
			threadName0(n);
		}
	}

	/**
	 * Makes the JUL loggers' state follow the agent now instead of within the
	 * next 100 ms: loggers created since are registered, enabled ones get
	 * the agent's handler, disabled ones lose it.
	 */
	public static void syncLoggers() {
		if (bound) {
			JulSync.sync();
		}
	}

	/* checkName announces the thread's name when it changed since the last
	 * announcement (Thread.setName is no JVMTI event). */
	static void checkName() {
		String n = Thread.currentThread().getName();
		if (NAMES.get() != n) {
			NAMES.set(n);
			threadName0(n);
		}
	}

	static native boolean tracing0();

	static native void marker0(String key, String value);

	static native void threadName0(String name);

	static native int loggerRegister0(String name);

	static native boolean loggerEnabled0(int handle);

	static native void log0(int handle, int level, String levelName, String msg);

	static native boolean initialized0(Class<?> c);

	static native int selfTest0(int what);
}
