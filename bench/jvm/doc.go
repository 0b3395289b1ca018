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
// consumers, which share the machine) and its ratio to the cases measured
// before it in the same run: x-noop, and for LTTng x-tadpole.
// TestCompareJUL prints the three side by side with the ratios.
//
//	cd bench && go test -run '^$' -bench JUL -benchmem ./jvm
//	cd bench && go test -run CompareJUL -v ./jvm
package jvm
