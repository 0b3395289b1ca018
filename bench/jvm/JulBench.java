/*
 * JulBench: the cost of one java.util.logging record on an enabled logger,
 * through a given handler. Usage: java ... JulBench MODE RECORDS [WARMUP], MODE one of
 *
 *   noop     a Handler whose publish does nothing (the floor);
 *   tadpole  tadpole's handler (run with -agentpath:libtadpole.so);
 *   lttng    the LTTng-UST JUL agent's LttngLogHandler (lttng-ust-agent-jul.jar
 *            on the class path, liblttng-ust-jul-jni on java.library.path,
 *            a session with the logger enabled).
 *
 * It logs WARMUP records (default 1000000) so that the JIT has compiled the
 * path, sleeps for the system property bench.pauseMs (default 0), then logs RECORDS records of a short message on one thread
 * and prints "records=N ns=T cpu=C proc=P flush=F alloc=A" (T the nanoseconds
 * of the timed loop, C the logging thread's CPU time in them, P the whole
 * process's, -1 when the JVM does not tell, F the nanoseconds the logging
 * thread spent handing tadpole's probe buffers over, waiting for free ones
 * included, 0 for the other handlers, A the bytes the logging thread
 * allocated, -1 when the JVM does not tell).
 */
import io.tadpole.Tadpole;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

public class JulBench {
	static final class Noop extends Handler {
		volatile long n;

		@Override
		public void publish(LogRecord r) {
			n++;
		}

		@Override
		public void flush() {
		}

		@Override
		public void close() {
		}
	}

	static final int WARMUP = 1000000;

	public static void main(String[] args) throws Exception {
		String mode = args[0];
		int records = Integer.parseInt(args[1]);
		int warmup = args.length > 2 ? Integer.parseInt(args[2]) : WARMUP;
		Logger log = Logger.getLogger("bench.jul");
		log.setUseParentHandlers(false);
		log.setLevel(Level.INFO);
		if (mode.equals("noop")) {
			log.addHandler(new Noop());
		} else if (mode.equals("tadpole")) {
			Tadpole.syncLoggers();
		} else if (mode.equals("lttng")) {
			Handler h = (Handler) Class.forName("org.lttng.ust.agent.jul.LttngLogHandler").getConstructor().newInstance();
			log.addHandler(h);
			Thread.sleep(Long.getLong("bench.lttngWaitMs", 1000L)); // the agent registers with the sessiond
		}
		for (int i = 0; i < warmup; i++) {
			log.info("warm-up record");
		}
		long pause = Long.getLong("bench.pauseMs", 0L); // the LTTng consumer daemon catches up
		if (pause > 0) {
			Thread.sleep(pause);
		}
		Tadpole.marker("bench", "start");
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
		com.sun.management.OperatingSystemMXBean pos = os instanceof com.sun.management.OperatingSystemMXBean
				? (com.sun.management.OperatingSystemMXBean) os : null;
		long p0 = pos != null ? pos.getProcessCpuTime() : -1;
		boolean tp = mode.equals("tadpole");
		long f0 = tp ? io.tadpole.Probe.flushNanos() : 0;
		com.sun.management.ThreadMXBean amx = mx instanceof com.sun.management.ThreadMXBean
				? (com.sun.management.ThreadMXBean) mx : null;
		long tid = Thread.currentThread().getId();
		long a0 = amx != null ? amx.getThreadAllocatedBytes(tid) : -1;
		long c0 = mx.getCurrentThreadCpuTime();
		long t0 = System.nanoTime();
		for (int i = 0; i < records; i++) {
			log.info("benchmark record");
		}
		long ns = System.nanoTime() - t0;
		long cpu = mx.getCurrentThreadCpuTime() - c0;
		long alloc = a0 >= 0 ? amx.getThreadAllocatedBytes(tid) - a0 : -1;
		long proc = p0 >= 0 ? pos.getProcessCpuTime() - p0 : -1;
		long flush = tp ? io.tadpole.Probe.flushNanos() - f0 : 0;
		Tadpole.marker("bench", "end");
		System.out.println("records=" + records + " ns=" + ns + " cpu=" + cpu + " proc=" + proc + " flush=" + flush + " alloc=" + alloc);
	}
}
