package io.tadpole;

/**
 * The method probes that libtadpole.so's class file load hook puts into
 * traced classes (see jni/doc.go, Method tracing). The agent puts this class
 * on the bootstrap class path, so every class loader and module resolves it,
 * and binds its natives at VM start.
 *
 * <p>Each event is one long (two for exceptions) appended to the calling
 * thread's buffer: {@code line << 48 | id << 8 | kind}. A time record
 * ({@code ms << 8 | TIME}) goes first whenever the millisecond tick changed.
 * A full buffer crosses JNI once (flush0), as does one whose events are
 * AGE ms old when the thread records again; the agent flushes the rest at
 * thread end and at VM death. A probe reads one volatile word, NOW: the
 * millisecond tick while tracing, OFF while not; with tracing off that read
 * is all it does. The probes never throw.
 */
public final class Probe {
	private Probe() {}

	/** True while the agent records (NOW is not OFF then). */
	public static volatile boolean on;

	/** Milliseconds of System.nanoTime, kept by the tick thread. */
	static volatile long tick = System.nanoTime() / 1000000L;

	/** The value of NOW while tracing is off. */
	static final long OFF = Long.MIN_VALUE;

	/**
	 * The probes' one read: tick while on, OFF while off. Whoever turns
	 * the probes on sets on, then NOW; whoever turns them off sets on, then
	 * NOW to OFF (the tick thread sets NOW while on, then looks at on
	 * again). Public: leaf methods of every module read it at their entry.
	 */
	public static volatile long now = OFF;

	/**
	 * The tracing epoch of the agent (state0) that gen was last raised
	 * for, so that a suspend or stop shorter than the tick thread's sleep
	 * (or one it slept through, busy retransforming) still starts a new
	 * generation. The tick thread's own.
	 */
	static int epoch = -1;

	/**
	 * The tracing generation: it changes each time the probes turn on
	 * again (a tracing epoch after the first the tick thread saw). A
	 * buffer still holding events of an earlier generation (recorded before
	 * a stop or suspend, never handed over) drops them.
	 */
	static volatile int gen;

	/**
	 * The millisecond the tick thread last turned the probes on for a new
	 * tracing epoch: a leaf call (leaf) whose entry tick is older began
	 * before it, and its entry is not recorded.
	 */
	static volatile long onAt;

	static final long ENTRY = 0, EXIT = 1, THROWN = 2, BUBBLE = 3, TIME = 4;

	/** Longs per thread buffer. */
	static final int SIZE = 8192;

	/**
	 * Milliseconds a thread that keeps recording keeps events before it hands
	 * them over, full or not: HQ sees a busy thread's calls within about this.
	 */
	static final long AGE = 50;

	static final ThreadLocal<Buf> BUF = new ThreadLocal<Buf>();

	/** Slots of HOT, a power of two (TPJ_NHOT in jni/probe.c). */
	static final int NHOT = 1024;

	/**
	 * Per thread id modulo NHOT, the Buf of a live thread that used it
	 * last: a probe finds its thread's Buf with one array read and one
	 * compare, ThreadLocal.get only on a miss. The agent clears a thread's
	 * slot at its end.
	 */
	static final Buf[] HOT = new Buf[NHOT];

	static Buf buf() {
		Thread t = Thread.currentThread();
		int i = (int) t.getId() & (NHOT - 1);
		Buf b = HOT[i];
		if (b != null && b.owner == t)
			return b;
		b = BUF.get();
		if (b == null && (b = Buf.make()) == null)
			return null;
		HOT[i] = b;
		return b;
	}

	// enter and exit stay within C2's MaxInlineSize (35 bytes of bytecode),
	// so that C2 inlines them at every call site, not only at hot ones: the
	// thread lookup and the append are in record. C1 inlines neither: it
	// also wants a callee's max_stack + max_locals - parameter slots to be
	// at most C1InlineStackLimit (5); enter has 7, exit(J) 6, record 6.

	public static void enter(int id) {
		long t = now;
		if (t != OFF)
			record(t, (long) id << 8); // | ENTRY, which is 0
	}

	public static void exit(int id, int line) {
		long t = now;
		if (t != OFF)
			record(t, (long) (line & 0xFFFF) << 48 | (long) id << 8 | EXIT);
	}

	/**
	 * exit with the event word whole: {@code line << 48 | id << 8 | EXIT},
	 * one ldc2_w constant at the call site (jvm/instrument's PackedWords),
	 * so the probe is 8 bytes of the caller's bytecode instead of 12.
	 */
	public static void exit(long w) {
		long t = now;
		if (t != OFF)
			record(t, w);
	}

	/**
	 * The probe of a leaf method (one that calls nothing: jvm/instrument's
	 * Leaves), before each of its returns: t0 is the value of now the
	 * method read at its entry (a long local, no call), w its exit word.
	 * It records the entry (w with line and kind cleared) and the exit
	 * with one thread lookup. The common case, the same millisecond
	 * as the entry, stays within C2's MaxInlineSize.
	 */
	public static void leaf(long t0, long w) {
		if (t0 == now) {
			if (t0 != OFF)
				pair(t0, w);
		} else
			leafSlow(t0, w);
	}

	/** pair appends the entry and the exit of the leaf call of exit word w at time t. */
	static void pair(long t, long w) {
		Buf b = buf();
		if (b != null)
			b.pair(t, w);
	}

	/**
	 * leafSlow is leaf across a millisecond or a change of tracing: the
	 * entry at its own time, unless the call began while tracing was off
	 * or in an earlier tracing epoch (then the exit alone, as exit records
	 * it); nothing when tracing is off now.
	 */
	static void leafSlow(long t0, long w) {
		long t = now;
		if (t == OFF)
			return;
		Buf b = buf();
		if (b == null)
			return;
		if (t0 != OFF && t0 >= onAt) {
			// Never before what the thread recorded last: the time
			// records of a buffer only go forward.
			b.put(Math.max(t0, Math.min(b.last, t)), w & 0x0000FFFFFFFFFF00L);
		}
		b.put(t, w);
	}

	/**
	 * bubbleLeaf is bubble in a leaf method's catch-all: the entry it
	 * deferred (at t0, by leafSlow's rules), then the bubble.
	 */
	public static void bubbleLeaf(Throwable x, int id, long t0) {
		long t = now;
		if (t == OFF)
			return;
		if (t0 != OFF && t0 >= onAt) {
			Buf b = buf();
			if (b != null)
				b.put(Math.max(t0, Math.min(b.last, t)), (long) id << 8);
		}
		bubble(x, id);
	}

	/** record appends the event word w at time t (a value of now). */
	static void record(long t, long w) {
		Buf b = buf();
		if (b != null)
			b.put(t, w);
	}

	public static void thrown(Throwable t, int id, int line) {
		thrown(t, (long) (line & 0xFFFF) << 48 | (long) id << 8 | THROWN);
	}

	/** thrown with the event word whole: {@code line << 48 | id << 8 | THROWN}. */
	public static void thrown(Throwable t, long w) {
		if (now == OFF)
			return;
		try {
			long e = type(t);
			Buf b = buf();
			if (b == null)
				return;
			b.put2(w, e);
		} catch (Throwable x) {
			// never into the application
		}
	}

	public static void bubble(Throwable t, int id) {
		siteEnd(); // a log call that threw out of this frame
		if (now == OFF)
			return;
		try {
			long e = type(t);
			Buf b = buf();
			if (b == null)
				return;
			b.put2((long) id << 8 | BUBBLE, e);
		} catch (Throwable x) {
			// never into the application
		}
	}

	/**
	 * Per thread, the call site of the java.util.logging call running on
	 * it (jvm/instrument's call-site probes; the agent maps the id to the
	 * calling class and method) with the site generation it was set in,
	 * {@code gen << 32 | id}, 0 outside one: the source of a record
	 * without a stack walk.
	 */
	static final ThreadLocal<long[]> SITE = new ThreadLocal<long[]>();

	/**
	 * The site generation, set by the agent: 0 while no LTTng session
	 * records JUL events (then the site probes cost one read), else a new
	 * value each time one begins to, so that a site set in an earlier
	 * generation and never cleared (its siteEnd came while off) is no
	 * record's source.
	 */
	static volatile int siteGen;

	public static void site(int id) {
		int g = siteGen;
		if (g == 0)
			return;
		try {
			long[] s = SITE.get();
			if (s == null) {
				s = new long[1];
				SITE.set(s);
			}
			s[0] = (long) g << 32 | (id & 0xFFFFFFFFL);
		} catch (Throwable x) {
			// never into the application
		}
	}

	public static void siteEnd() {
		if (siteGen == 0)
			return;
		try {
			long[] s = SITE.get();
			if (s != null)
				s[0] = 0;
		} catch (Throwable x) {
			// never into the application
		}
	}

	/**
	 * Sites hands the calling thread's call site to the agent's JUL handler
	 * (a class of another loader, which cannot name this one), and clears
	 * it, so that a record logged while this one is handled finds its own
	 * source. The agent puts SITES into Tadpole.sites.
	 */
	static final class Sites implements java.util.function.IntSupplier {
		@Override
		public int getAsInt() {
			int g = siteGen;
			if (g == 0)
				return 0;
			long[] s = SITE.get();
			if (s == null)
				return 0;
			long v = s[0];
			s[0] = 0;
			return (int) (v >>> 32) == g ? (int) v : 0;
		}
	}

	public static final java.util.function.IntSupplier SITES = new Sites();

	/**
	 * JUL records: the agent's JUL handler (a class of the system loader,
	 * which reaches this one through JUL_SINK) appends a record of an HQ
	 * logger as two words, {@code len << 32 | handle << 8 | JUL} and
	 * {@code off << 32 | level}: the message is the chars [off, off+len) of
	 * the buffer's char array. A thread name the agent has not seen from
	 * this buffer goes first as {@code len << 32 | off << 8 | JNAME}, 0.
	 * The chars cross JNI with the words (flush0); the converter turns
	 * them into the marker "log:<logger>" = "<level> <message>" and a
	 * thread name. So a record costs no JNI call and keeps its place among
	 * the thread's calls.
	 */
	static final long JUL = 5, JNAME = 6;

	/** Chars of a thread's first JUL char array, and the most it grows to. */
	static final int JUL_CHARS = 4096, JUL_CHARS_MAX = 1 << 16;

	/** Chars of a thread name kept (the agent keeps 255 bytes). */
	static final int JUL_NAME_MAX = 256;

	static final class Jul implements java.util.function.ObjLongConsumer<String> {
		/** accept records msg (at most JulHandler.JUL_MSG_MAX chars) of logger hl >>> 32 at level (int) hl. */
		@Override
		public void accept(String msg, long hl) {
			try {
				Buf.jul(msg, hl);
			} catch (Throwable x) {
				// never into the application
			}
		}
	}

	/** The JUL handler's way in (the agent puts it into Tadpole.jul while HQ traces). */
	public static final java.util.function.ObjLongConsumer<String> JUL_SINK = new Jul();

	/** Exception type ids, one native call per Throwable class. */
	static final ClassValue<Integer> TYPES = new ClassValue<Integer>() {
		@Override
		protected Integer computeValue(Class<?> c) {
			return Integer.valueOf(excType0(c.getName()));
		}
	};

	static long type(Throwable t) {
		if (t == null) // athrow of null throws a NullPointerException
			return excType0("java.lang.NullPointerException");
		return TYPES.get(t.getClass()).intValue();
	}

	/** One thread's event buffer. */
	static final class Buf {
		final long[] a = new long[SIZE];
		int n;
		long last = -1;
		long first; // tick of the buffer's first time word
		int bufGen = gen;
		final long tid;
		final Thread owner = Thread.currentThread();
		/** Time spent handing full buffers over, and their count. */
		long flushNanos, flushes;
		/**
		 * The strings of the JUL records: chars[0, nc) (the agent takes them
		 * with the words and sets nc to 0), and the thread name last put.
		 */
		char[] chars;
		int nc;
		String jname;

		Buf(long tid) {
			this.tid = tid;
		}

		static Buf make() {
			try {
				Buf b = new Buf(Thread.currentThread().getId());
				BUF.set(b);
				register0(b);
				return b;
			} catch (Throwable x) {
				return null;
			}
		}

		/** put appends v at time t (a value of NOW, not OFF). */
		void put(long t, long v) {
			int i = n;
			if (t != last || i > SIZE - 2)
				i = room(t, i);
			a[i] = v;
			n = i + 1;
		}

		/** pair appends the entry and the exit of exit word w at time t (a value of NOW, not OFF). */
		void pair(long t, long w) {
			int i = n;
			if (t != last || i > SIZE - 2)
				i = room(t, i);
			long[] a = this.a;
			a[i] = w & 0x0000FFFFFFFFFF00L; // id << 8 | ENTRY
			a[i + 1] = w;
			n = i + 2;
		}

		void put2(long v, long w) {
			int i = room(tick, n);
			a[i] = v;
			a[i + 1] = w;
			n = i + 2;
		}

		/**
		 * jul appends a JUL record (Jul.accept) to the calling thread's
		 * buffer, its thread's name first when it changed, making room as
		 * needed: it hands the buffer over when its words or chars are short
		 * (a char array that filled first grows). The common case goes first:
		 * the thread's name known, the millisecond of the last word, room for
		 * the record.
		 *
		 * <p>It is one method, larger than C2's FreqInlineSize (325 bytes of
		 * bytecode), on purpose: C2 calls it rather than inlining it into the
		 * handler. That keeps java.util.logging's Logger.log(LogRecord), with
		 * JulHandler.publish inlined, small enough (InlineSmallCode) for the
		 * logging call to inline it, and escape analysis then keeps the
		 * LogRecord off the heap, as it does for a handler that does nothing:
		 * 80 bytes and their allocation less per record.
		 */
		static void jul(String msg, long hl) {
			Buf b = buf();
			if (b == null)
				return;
			int ml = msg.length();
			int i = b.n;
			int c = b.nc;
			char[] cs = b.chars;
			String nm = b.owner.getName();
			long t = tick;
			long[] a = b.a;
			if (nm != b.jname || t != b.last || i > SIZE - 2 || cs == null || c > cs.length - ml) {
				int nl = nm == b.jname ? -1 : Math.min(nm.length(), JUL_NAME_MAX);
				int need = nl > 0 ? ml + nl : ml;
				if (t != b.last || i > SIZE - 6 || cs == null || c > cs.length - need) {
					// Room for a time record, four words and need chars.
					int g = gen;
					if (g != b.bufGen) {
						b.bufGen = g;
						i = 0;
						b.n = 0;
						b.last = -1;
					}
					if (i == 0)
						b.nc = 0; // no word refers to a char
					boolean full = cs == null || b.nc > cs.length - need;
					if (full || i > SIZE - 6) {
						if (i > 0)
							i = b.handOver(i); // takes the chars too
						b.nc = 0;
						int len = cs == null ? JUL_CHARS
								: full && cs.length < JUL_CHARS_MAX ? 2 * cs.length : cs.length;
						while (len < need)
							len *= 2;
						if (cs == null || len != cs.length)
							b.chars = new char[len];
					}
					i = b.room(t, i);
					cs = b.chars;
					c = b.nc;
				}
				if (nl >= 0) {
					nm.getChars(0, nl, cs, c);
					a[i] = (long) nl << 32 | (long) c << 8 | JNAME;
					a[i + 1] = 0;
					i += 2;
					c += nl;
					b.jname = nm;
				}
			}
			msg.getChars(0, ml, cs, c);
			a[i] = (long) ml << 32 | (hl >>> 32 & 0xFFFFFF) << 8 | JUL;
			a[i + 1] = (long) c << 32 | (hl & 0xFFFFFFFFL);
			b.nc = c + ml;
			b.n = i + 2;
		}

		/** handOver hands the buffer's first i words to the agent; it returns 0, where the next word goes. */
		int handOver(int i) {
			n = 0;
			last = -1;
			long t0 = System.nanoTime();
			flush0(a, i, tid);
			flushNanos += System.nanoTime() - t0;
			flushes++;
			return 0;
		}

		/** room makes room for a time record and two events at i. */
		int room(long t, int i) {
			int g = gen;
			if (g != bufGen) {
				bufGen = g;
				i = 0;
				last = -1;
			}
			if (i > SIZE - 3 || i > 0 && t - first >= AGE)
				i = handOver(i);
			if (t != last) {
				if (i == 0)
					first = t;
				a[i++] = t << 8 | TIME;
				last = t;
			}
			return i;
		}
	}

	/** The tick thread: the clock of the probes, and the agent's state. */
	static final class Tick extends Thread {
		Tick() {
			super("tadpole-tick");
			setDaemon(true);
		}

		@Override
		public void run() {
			for (;;) {
				int st = state0();
				// The clock after the state: a tick thread starved between
				// the two must not stamp events of a tracing epoch with a
				// time from before it began.
				long ms = System.nanoTime() / 1000000L;
				tick = ms;
				boolean t = (st & 1) != 0;
				int ep = st >>> 2;
				if (t && ep != epoch) {
					// A new tracing epoch, even when this thread never saw
					// the suspend or stop between it and the last one:
					// what the buffers hold from before is not of it. The
					// first one finds them empty (the agent sets epoch when
					// it turns the probes on at VM start).
					onAt = ms;
					if (epoch != -1)
						gen++;
					epoch = ep;
					on = true;
				} else if (!t && on) {
					on = false;
					now = OFF;
				}
				if (on) {
					now = ms;
					if (!on) // the agent turned the probes off meanwhile (VM death)
						now = OFF;
				}
				if ((st & 2) != 0)
					retransform0();
				try {
					Thread.sleep(t ? 1 : 20);
				} catch (InterruptedException e) {
					return;
				}
			}
		}
	}

	/**
	 * flushNanos returns the nanoseconds the calling thread spent handing
	 * full buffers to the agent (which waits while HQ is behind): a traced
	 * thread's time minus this is what its probes cost.
	 */
	public static long flushNanos() {
		Buf b = BUF.get();
		return b == null ? 0 : b.flushNanos;
	}

	/** start starts the tick thread (the agent calls it once). */
	static Thread start() {
		tick = System.nanoTime() / 1000000L;
		Thread t = new Tick();
		t.start();
		return t;
	}

	static native void flush0(long[] a, int n, long tid);

	static native void register0(Buf b);

	static native int excType0(String name);

	/**
	 * state0: bit 0 tracing, bit 1 loaded classes are to be retransformed,
	 * bits 2–31 the agent's tracing epoch (a count of its mode changes).
	 */
	static native int state0();

	/** retransform0 retransforms the loaded classes the policy may have changed for. */
	static native void retransform0();
}
