/*
 * MethodBench: one method-tracing workload, timed. Usage:
 *
 *   java ... MethodBench WORKLOAD WARMUP ROUNDS PARAM...
 *
 * WORKLOAD is fib (PARAM n: fib(n) per round), collections (PARAM items per
 * round), interpreter (PARAM n: the interpreted fib(n) and a loop of 100·n
 * per round) or javac (PARAM an @argfile of javac's arguments: one
 * compilation per round, in this JVM, through javax.tools). It runs WARMUP
 * untimed rounds, then ROUNDS timed ones, and prints
 *
 *   result ns=T cpu=C proc=P calls=N analytic=A handover=H
 *
 * T the wall nanoseconds of the timed rounds, C this thread's CPU time in
 * them, P the process's (every thread: JIT, GC, an agent's own threads), N the traced calls the counting agent saw in the timed rounds (-1
 * without one; system property bench.counter: "asm" asks the ASM agent's
 * probe class, "jvmti" the JVMTI agent through a native method it exports),
 * A the calls the workload knows it makes in them (-1 when it cannot say),
 * H the wall nanoseconds this thread spent in them handing full buffers to
 * tadpole's agent (io.tadpole.Probe.flushNanos; -1 without tadpole).
 * The classes under test (package work, or javac's) are traced; this class
 * is not.
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

public class MethodBench {
	static long sink;

	/** Implemented by the JVMTI counting agent: {entries, exits, bubbles}. */
	static native long[] jvmtiCounts();

	static long[] counts(String counter) throws Exception {
		if (counter.equals("asm")) {
			Method m = Class.forName("tadpolebench.probe.Probe").getMethod("snapshot");
			return (long[]) m.invoke(null);
		}
		if (counter.equals("jvmti")) {
			return jvmtiCounts();
		}
		return null;
	}

	/** handover is io.tadpole.Probe.flushNanos() of this thread, -1 without tadpole. */
	static long handover() {
		try {
			return (Long) Class.forName("io.tadpole.Probe").getMethod("flushNanos").invoke(null);
		} catch (ReflectiveOperationException | LinkageError x) {
			return -1;
		}
	}

	static long fibCalls(int n) {
		long a = 0, b = 1; // fib(0), fib(1)
		for (int i = 0; i < n + 1; i++) {
			long t = a + b;
			a = b;
			b = t;
		}
		return 2 * a - 1; // 2·fib(n+1) − 1
	}

	public static void main(String[] args) throws Exception {
		String workload = args[0];
		int warmup = Integer.parseInt(args[1]), rounds = Integer.parseInt(args[2]);
		String counter = System.getProperty("bench.counter", "none");
		Runnable round;
		long perRound = -1;
		switch (workload) {
		case "fib": {
			int n = Integer.parseInt(args[3]);
			perRound = fibCalls(n);
			round = () -> sink += work.Fib.fib(n);
			break;
		}
		case "collections": {
			int n = Integer.parseInt(args[3]);
			round = () -> sink += work.Coll.run(n);
			break;
		}
		case "interpreter": {
			int n = Integer.parseInt(args[3]);
			round = () -> sink += work.Interp.run(n);
			break;
		}
		case "javac": {
			JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
			String argfile = args[3];
			round = () -> {
				int rc = javac.run(null, null, null, argfile);
				if (rc != 0) {
					throw new IllegalStateException("javac exit status " + rc);
				}
			};
			break;
		}
		default:
			throw new IllegalArgumentException("workload " + workload);
		}
		for (int i = 0; i < warmup; i++) {
			round.run();
		}
		long[] before = counts(counter);
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		com.sun.management.OperatingSystemMXBean os =
				(com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
		long h0 = handover();
		long p0 = os.getProcessCpuTime();
		long c0 = mx.getCurrentThreadCpuTime();
		long t0 = System.nanoTime();
		for (int i = 0; i < rounds; i++) {
			round.run();
		}
		long ns = System.nanoTime() - t0;
		long cpu = mx.getCurrentThreadCpuTime() - c0;
		long proc = os.getProcessCpuTime() - p0;
		long h = handover();
		long[] after = counts(counter);
		long calls = before == null ? -1 : after[0] - before[0];
		System.out.println("result ns=" + ns + " cpu=" + cpu + " proc=" + proc + " calls=" + calls + " analytic="
				+ (perRound < 0 ? -1 : perRound * rounds) + " handover=" + (h < 0 || h0 < 0 ? -1 : h - h0)
				+ " sink=" + (sink & 1));
	}
}
