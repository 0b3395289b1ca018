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

	/**
	 * The call site of the running java.util.logging call (Probe.SITES),
	 * set by the agent when it rewrites classes with call-site probes.
	 */
	static volatile java.util.function.IntSupplier sites;

	/**
	 * Probe.JUL_SINK while JulHandler's records of HQ loggers go into the
	 * threads' probe buffers (HQ traces, no LTTng session records JUL
	 * events), else null; set by the agent.
	 */
	static volatile java.util.function.ObjLongConsumer<String> jul;

	/*
	 * The C API's logger states (tp_logger_acc, a word per handle: kind in
	 * the low byte, level in the high 32 bits), which the agent mirrors
	 * here within a millisecond of a change (and at every syncLoggers);
	 * null until it does.
	 */
	static volatile long[] julAcc;

	/* julAccept's answers, and the kinds of the logger states. */
	static final int JUL_DROP = 0, JUL_RECORD = 1, JUL_NATIVE = 2;
	private static final int ACC_ALL = 1, ACC_RANGE = 2, ACC_SINGLE = 3;

	/*
	 * julAccept decides on a record of logger h at level as the C API
	 * does (tp_accept): JUL_RECORD, JUL_DROP, or JUL_NATIVE when a filter
	 * expression decides (the native path asks the agent) or the handle is
	 * not mirrored yet.
	 */
	static int julAccept(int h, int level) {
		long[] t = julAcc;
		if (t == null || h <= 0 || h >= t.length) {
			return JUL_NATIVE;
		}
		long a = t[h];
		int v = (int) (a >>> 32);
		switch ((int) a & 0xFF) {
		case ACC_ALL:
			return JUL_RECORD;
		case ACC_RANGE:
			return level >= v ? JUL_RECORD : JUL_DROP;
		case ACC_SINGLE:
			return level == v ? JUL_RECORD : JUL_DROP;
		case 0:
			return JUL_DROP;
		default:
			return JUL_NATIVE;
		}
	}

	/*
	 * julRecords reports whether julAccept would answer JUL_RECORD for a
	 * logger that records all levels or a range of them, the common states,
	 * in a few instructions (JulHandler.publish inlines it); false sends the
	 * record to julAccept.
	 */
	static boolean julRecords(int h, int level) {
		long[] t = julAcc;
		if (t == null || h <= 0 || h >= t.length) {
			return false;
		}
		long a = t[h];
		int k = (int) a & 0xFF;
		return k == ACC_ALL || k == ACC_RANGE && level >= (int) (a >>> 32);
	}

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
		String n = Thread.currentThread().getName();
		marker0(key, value == null ? "" : value, n, n.hashCode());
	}

	/**
	 * Announces the calling thread's current name. The agent names threads at
	 * start and whenever they log or record a marker after Thread.setName;
	 * call this to make a rename visible at once.
	 */
	public static void threadName() {
		if (bound) {
			String n = Thread.currentThread().getName();
			threadName0(n, n.hashCode());
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

	static native boolean tracing0();

	/* The natives that record take the thread's current name and its
	 * hashCode (cached in the String): the agent compares the hash with the
	 * one it announced to see Thread.setName, which is no JVMTI event. */
	static native void marker0(String key, String value, String threadName, int nameHash);

	static native void threadName0(String name, int nameHash);

	static native int loggerRegister0(String name);

	static native boolean loggerEnabled0(int handle);

	/* Records a JUL record (record, a java.util.logging.LogRecord) of logger
	 * handle into HQ and the LTTng sessions that want it. levelName is null
	 * for java.util.logging's standard levels; msgLength is msg.length();
	 * millis and threadId are the record's; site is its call site (when
	 * the calling class was rewritten; 0: none), from which the native
	 * names the LTTng event's source, or else finds it. */
	static native void log0(int handle, int level, String levelName, String msg, int msgLength, String threadName,
			int nameHash, Object record, long millis, int threadId, int site);

	/* Records a JUL record of logger handle into the LTTng sessions that want
	 * it, as log0 does, when no HQ run is on and the record needs nothing
	 * but these values (its call site named, or no source wanted; its
	 * logger's name known in C; a short message), and returns true: the
	 * record is done. Else it records nothing and returns false: the
	 * record takes log0. */
	static native boolean lttng0(int handle, int level, String msg, int msgLength, long millis, int threadId,
			int site);

	static native boolean initialized0(Class<?> c);

	static native int selfTest0(int what);
}
