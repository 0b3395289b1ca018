package tadpolebench.probe;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The probes of the ASM agent, in the Bytefrog agent's design: each event is
 * stamped with System.currentTimeMillis() since start and a global sequence
 * number and encoded as Bytefrog's wire record (type, time, sequence, method
 * id, [line,] thread id) into a per-thread byte buffer; a full buffer goes
 * into a queue that a consumer thread drains. The consumer only counts the
 * events (the Bytefrog agent sent them to HQ). Loaded by the bootstrap
 * loader (the agent jar's Boot-Class-Path), so every traced class sees it.
 */
public final class Probe {
	private Probe() {
	}

	static final int SIZE = 1 << 16;
	static final long START = System.currentTimeMillis();
	static final AtomicInteger SEQ = new AtomicInteger();
	static final AtomicInteger THREADS = new AtomicInteger();

	/** A full (or flushed) buffer with the counts of what it holds. */
	static final class Chunk {
		final byte[] buf;
		final int entries, exits, bubbles, throwsN;

		Chunk(byte[] buf, int entries, int exits, int bubbles, int throwsN) {
			this.buf = buf;
			this.entries = entries;
			this.exits = exits;
			this.bubbles = bubbles;
			this.throwsN = throwsN;
		}
	}

	static final LinkedBlockingQueue<Chunk> FULL = new LinkedBlockingQueue<>();
	static final ConcurrentLinkedQueue<byte[]> FREE = new ConcurrentLinkedQueue<>();
	static final ConcurrentLinkedQueue<Writer> ALL = new ConcurrentLinkedQueue<>();
	static final AtomicLong HANDED = new AtomicLong();
	static volatile long consumed, entries, exits, bubbles, throwsN;

	/** One thread's buffer. */
	static final class Writer {
		byte[] buf = new byte[SIZE];
		int pos, nEntries, nExits, nBubbles, nThrows;
		boolean busy;
		final short tid = (short) THREADS.incrementAndGet();

		void record(int type, int id, int line) {
			if (pos + 17 > SIZE) {
				handOver();
			}
			int time = (int) (System.currentTimeMillis() - START);
			int seq = SEQ.getAndIncrement();
			byte[] b = buf;
			int p = pos;
			b[p] = (byte) type;
			b[p + 1] = (byte) (time >>> 24);
			b[p + 2] = (byte) (time >>> 16);
			b[p + 3] = (byte) (time >>> 8);
			b[p + 4] = (byte) time;
			b[p + 5] = (byte) (seq >>> 24);
			b[p + 6] = (byte) (seq >>> 16);
			b[p + 7] = (byte) (seq >>> 8);
			b[p + 8] = (byte) seq;
			b[p + 9] = (byte) (id >>> 24);
			b[p + 10] = (byte) (id >>> 16);
			b[p + 11] = (byte) (id >>> 8);
			b[p + 12] = (byte) id;
			p += 13;
			if (line >= 0) {
				b[p] = (byte) (line >>> 8);
				b[p + 1] = (byte) line;
				p += 2;
			}
			b[p] = (byte) (tid >>> 8);
			b[p + 1] = (byte) tid;
			pos = p + 2;
		}

		synchronized void handOver() {
			if (pos == 0) {
				return;
			}
			HANDED.incrementAndGet();
			FULL.add(new Chunk(buf, nEntries, nExits, nBubbles, nThrows));
			byte[] b = FREE.poll();
			buf = b != null ? b : new byte[SIZE];
			pos = nEntries = nExits = nBubbles = nThrows = 0;
		}
	}

	static final ThreadLocal<Writer> TL = new ThreadLocal<Writer>() {
		@Override
		protected Writer initialValue() {
			Writer w = new Writer();
			ALL.add(w);
			return w;
		}
	};

	static {
		Thread t = new Thread(Probe::consume, "asm-probe-consumer");
		t.setDaemon(true);
		t.start();
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			long[] c = snapshotAll();
			System.err.println("asm-total entries=" + c[0] + " exits=" + c[1] + " bubbles=" + c[2] + " throws=" + c[3]);
		}, "asm-probe-exit"));
	}

	static void consume() {
		for (;;) {
			Chunk c;
			try {
				c = FULL.take();
			} catch (InterruptedException e) {
				return;
			}
			entries += c.entries;
			exits += c.exits;
			bubbles += c.bubbles;
			throwsN += c.throwsN;
			FREE.add(c.buf);
			consumed++;
		}
	}

	public static void enter(int id) {
		Writer w = TL.get();
		if (w.busy) {
			return;
		}
		w.busy = true;
		try {
			w.record(20, id, -1);
			w.nEntries++;
		} finally {
			w.busy = false;
		}
	}

	public static void exit(int id, int line) {
		Writer w = TL.get();
		if (w.busy) {
			return;
		}
		w.busy = true;
		try {
			w.record(21, id, line);
			w.nExits++;
		} finally {
			w.busy = false;
		}
	}

	public static void thrown(int id, int line) {
		Writer w = TL.get();
		if (w.busy) {
			return;
		}
		w.busy = true;
		try {
			w.record(22, id, line);
			w.nThrows++;
		} finally {
			w.busy = false;
		}
	}

	public static void bubble(int id) {
		Writer w = TL.get();
		if (w.busy) {
			return;
		}
		w.busy = true;
		try {
			w.record(23, id, -1);
			w.nBubbles++;
		} finally {
			w.busy = false;
		}
	}

	static long[] drained() {
		while (consumed != HANDED.get()) {
			Thread.onSpinWait();
		}
		return new long[] {entries, exits, bubbles, throwsN};
	}

	/**
	 * The counts so far of the calling thread's events and of every full
	 * buffer: {entries, exits, bubbles, throws}. Called outside the timed
	 * part of a single-threaded workload.
	 */
	public static long[] snapshot() {
		Writer w = TL.get();
		w.busy = true;
		w.handOver();
		w.busy = false;
		return drained();
	}

	/** Every thread's counts: at exit, when the traced threads are done. */
	static long[] snapshotAll() {
		for (Writer w : ALL) {
			w.handOver();
		}
		return drained();
	}
}
