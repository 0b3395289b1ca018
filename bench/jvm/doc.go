// Package jvm benchmarks one java.util.logging record on an enabled logger
// through tadpole's JVM agent, against a no-op JUL Handler (the floor) and
// the LTTng-UST JUL agent (LttngLogHandler, with an active session). Each
// benchmark runs java as a subprocess (JulBench.java) that logs b.N records
// after a warm-up and reports ns/record; the tadpole case also checks at
// the reference HQ that no record was lost, the LTTng case that the
// session discarded none.
//
//	cd bench && go test -run '^$' -bench JUL -benchmem ./jvm
package jvm
