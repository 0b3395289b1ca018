// Package lttngust records a Go program's log records into LTTng sessions,
// as the LTTng agents of Java and Python do: the records of loggers that
// `lttng enable-event -j` (or -l, -p under lttng_domain=log4j or python)
// enables become lttng_jul:event (lttng_log4j:event, lttng_python:event)
// events of lttng-ust 2.13, with the official providers' fields, so the
// session daemon's filters and every LTTng viewer treat them alike.
//
// A pure-Go program is listed by `lttng list -j` and obeys the session
// daemon without this package; recording into a session needs lttng-ust in
// the process, which only cgo can reach. Importing the package for its
// side effect is all a program does:
//
//	import _ "github.com/tadpole-trace/tadpole/agent/lttngust"
//
// When the program registers with LTTng (agent.RegisterLTTng, or an Agent
// started with the lttng option on), the package dlopen()s
// libtadpole-lttng.so, the companion library ./build.sh lib builds against
// lttng-ust: from the option lttng_lib, else next to the executable, else
// through the dynamic loader's search path (LD_LIBRARY_PATH). Without it,
// or without lttng-ust, the program runs, is listed and obeys the daemon as
// before, and says once, when a session first enables one of its loggers,
// why nothing is recorded.
//
// Fields: the logger name, the message, the level on the domain's scale,
// the time in Unix milliseconds, the goroutine id as the thread id, and,
// with lttng_source on (the default), the caller as class_name (package
// path and receiver, "example.com/shop.(*Cart)") and method_name ("Add").
// Recording never blocks: lttng-ust discards or overwrites as the
// session's channel says. Built without cgo, the package records nothing
// and the program says so once.
package lttngust
