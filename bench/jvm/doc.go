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
package jvm
