// Package relay compares babeltrace2's read rate over the LTTng live
// protocol from a real lttng-relayd and from tadpole-hq's relay, on traces
// of the same event count (BenchmarkLiveRead).
package relay
