// Package cbench compares, side by side in one C program (bench.c), the
// per-event cost of tadpole's C API with that of an LTTng-UST tracepoint
// recording into an active session: a real lttng-sessiond, started
// isolated by the test, and a reference HQ in the test process.
//
//	cd bench && go test ./c -run Compare -v                 # the comparison, logged
//	cd bench && go test ./c -run '^$' -bench . -benchmem    # as benchmark metrics
//
// It needs gcc, lttng-tools and liblttng-ust-dev (lttng-gen-tp); without
// them it skips, or fails when CI=true.
package cbench
