// Package jvm benchmarks one java.util.logging record on an enabled logger
// through tadpole's JVM agent, against a no-op JUL Handler (the floor) and
// the LTTng-UST JUL agent (LttngLogHandler, with an active session). Each
// benchmark runs java as a subprocess (JulBench.java) that logs b.N records
// after a warm-up and reports ns/record; the tadpole case also checks at
// the reference HQ that no record was lost, the LTTng case that the
// session discarded none.
//
// Each reports ns/record (wall), cpu-ns/record (the logging thread's CPU
// time; the difference is time spent waiting for a CPU or for the
// consumers, which share the machine) and its ratio to the median of the
// cases measured before it in the same process: x-noop, and for LTTng
// x-tadpole. TestCompareJUL runs each case in 5 fresh JVMs, in turn, and
// prints min / median / max ns per record side by side, with the ratios
// of the medians: a fresh JVM's JIT decisions and the load of the 2-core
// machine vary from run to run, and the median is what a user would see.
//
//	cd bench && go test -run '^$' -bench JUL -benchmem ./jvm
//	cd bench && go test -run CompareJUL -v ./jvm
//
// BenchmarkMethodTracing compares JVM method tracing side by side in one
// run: four workloads (testdata/methods: recursive fib, collection-heavy
// code, a tree-walking interpreter, and javac compiling a source tree with
// every javac class traced), each run plain, with tadpole
// (-agentpath:libtadpole.so=hq=…,trace=…) into the reference HQ in this
// process, with an ASM 9.4 -javaagent doing the Bytefrog agent's probes
// (AsmAgent.java, Probe.java: per-thread buffers into a queue,
// currentTimeMillis and a global sequence per event, events counted, not
// sent), and with a JVMTI MethodEntry/MethodExit agent in C
// (jvmticount.c, built with gcc). The ASM agent's counts of the timed
// rounds give the traced calls; the JVMTI agent's must agree, and so must
// the workload's own for fib. The tadpole column fails unless HQ received,
// gap-free, as many entries and exits as the ASM agent saw in a run of the
// same rounds; javac's calls vary slightly from one JVM to the next, so
// there the count is checked to within 0.01 %, and exactly in a run of
// its own in which the JVMTI agent counts beside tadpole. It prints, per workload, added ns per traced call and
// slowdowns on the traced thread's CPU time and on the wall, and tadpole's
// ratios to the ASM and JVMTI agents. Each sub-benchmark is one JVM; with
// -count N the table gives the spread of N runs.
//
//	cd bench && go test -run '^$' -bench MethodTracing -benchtime 1x -timeout 2h ./jvm
//	TADPOLE_BENCH_WORKLOADS=fib,javac …   # only these workloads
//	TADPOLE_BENCH_NET=unix …              # the JVM reaches HQ through a Unix socket, not loopback TCP
package jvm
