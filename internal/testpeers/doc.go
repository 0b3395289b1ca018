// Package testpeers starts real peer programs for integration tests:
// lttng-sessiond 2.13 (Sessiond) and the lttng CLI bound to it.
//
// Tests call its helpers with their *testing.T; a missing binary skips the
// test with a message, or fails it when the environment has CI=true. Every
// process a helper starts is stopped by pid in t.Cleanup.
package testpeers
