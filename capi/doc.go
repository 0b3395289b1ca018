// Package capi is the C API of libtadpole.so: the functions declared in
// include/tadpole.h, implemented in C over the Go agent core (package
// agent). Only the c-shared main package, cmd/libtadpole, and package jni
// (the JVM agent, which records through the same C side) import it.
//
// # Files
//
// The C side is three files over one internal header, recorder.h:
//
//   - recorder.c, the recorder: per-thread event buffers, the full queue
//     and its spare pool, the wake pipes of the Go drain and of early
//     flushes, the thread registry, session generations, flushing and fork
//     handling, and the tp_* calls of the Go side (tp.h);
//   - api.c, the public C API: the tadpole_* functions of tadpole.h;
//   - jvmhost.c, the JVM host's tp_j* functions (jvmhost.h) that package jni
//     calls; jni imports capi for them and includes jvmhost.h from capi/.
//
// tp.h holds what the C and Go sides share (record layout, modes, the Go
// side's calls); lttng.c records into LTTng sessions.
//
// # Boundary
//
// The public C functions (tadpole_*) are C code. They call private Go
// exports (tadpoleGoStart, tadpoleGoSubmit, …) for everything but the hot
// path; the library's version script keeps those, and cgo's own symbols,
// out of the dynamic symbol table. Only C types cross the boundary: handles
// are positive int32 ids (a method's id is its wire id), strings are
// NUL-terminated and copied before a call returns. Every Go export recovers
// from panics and returns TADPOLE_EINTERNAL instead; failures return a
// negative errno-style code and leave their text in the calling thread's
// error buffer, read with tadpole_errmsg (like errno: success does not clear
// it).
//
// # Hot path
//
// Each OS thread that records has a struct tp_thread, reached through one
// initial-exec __thread pointer (large TLS blocks break dlopen of a
// STATIC_TLS library). It holds a 128 KiB malloc'd buffer of records in the
// layout of agent/batch.go, a thread key from a process-wide counter (the
// SubmitBatch thread id; in a JVM the Java thread id, see package jni, and
// other threads count from 2^32) and the thread's name. A recording call:
//
//  1. compares the thread's cached epoch with the global epoch (one relaxed
//     load): equal means tracing, and this thread has announced itself since
//     the last mode change;
//  2. checks the handle against the highest one registered (one load);
//  3. writes the 24-byte record at pos and publishes it with a release store
//     of pos (a plain store on x86-64 and a store-release on arm64).
//
// There is no lock and no atomic read-modify-write on the hot path. The
// timestamp is the event clock, CLOCK_MONOTONIC nanoseconds refreshed every
// millisecond by a Go ticker while a run is on: Bytefrog times have a 1 ms
// resolution, and reading the clock per event would cost more than the
// rest of the call (34 ns on the reference VM).
//
// # Handing buffers over
//
// Records reach the agent by SubmitBatch, one Go crossing per buffer (a
// batch takes one slot of the agent's lanes, however many records it
// holds), and never from a recording thread's full buffer: that thread does not call into Go (no cgo callback, no wait for a
// Go P, no SubmitBatch on the application's thread). Each thread's buffer
// has a mutex that only the hand-over paths take:
//
//   - the owner, when its buffer is full: it pushes the buffer, with the
//     range [sent, pos) and its thread key, on a lock-free queue and goes
//     on in a spare buffer. One Go goroutine, started with the run, hands
//     the queued buffers to the agent, oldest first, and puts them back on
//     the spare list. While the queue is empty it waits in Go on a
//     non-blocking pipe, which the first owner to queue a buffer then
//     writes a byte to. Waiting in C instead (on a condition variable)
//     would keep its P in a system call, and the Go runtime's monitor
//     thread would wake every 20 µs to take it back: measured, a third of
//     the process's context switches in a JUL benchmark run. At most 16 buffers wait: an owner that finds no spare
//     then sleeps until one comes back (back-pressure; nothing is dropped
//     while a run is on). Without a run the records are dropped in place,
//     as before any queueing;
//   - a flusher (the Go timer every 50 ms, tadpole_flush, tadpole_stop): it
//     hands over [sent, pos) as published by the owner's release store and
//     advances sent, without rewinding — the owner may be writing past pos.
//
// Every hand-over holds one submit mutex, and a flusher drains the queue
// while it holds the thread's mutex before it hands over the open buffer,
// so a thread's records reach the agent in order. A flusher never reads
// bytes the owner is writing, and the owner's fast path never waits for a
// flusher. An idle thread's events reach HQ within the flush period plus
// the agent's flush_interval.
//
// A thread that exits (pthread key destructor) does not call into Go: the
// Go runtime's own key destructor may already have released the thread's M.
// Its state moves to an orphan list that the next flush hands over; every
// 16 orphans the destructor writes a byte to a non-blocking pipe whose Go
// reader flushes at once, so a program whose threads come and go quickly
// does not pile up buffers between timer flushes. Retired states, buffers
// included, go to a pool of 64 that new threads take from before malloc.
//
// # Modes
//
// The agent's mode hook publishes the epoch: (counter << 8) | mode, the
// counter growing with every change. The hook re-reads the agent's mode
// under a mutex, so hooks running out of order still leave the latest mode
// published; the flush timer publishes it again every period, in case
// another host in the process replaced the hook (agent hooks have one
// subscriber). A recording call that finds its
// cached epoch stale takes the slow path: Tracing — check in (a new session
// generation discards what an older run left in the buffer; every check-in
// appends a thread-name record, since a suspended or new run may have lost
// it) and record; Paused — block in host.Gate until HQ unpauses; Suspended
// — drop the event and return TADPOLE_OK (events buffered before the suspend
// are handed over and dropped by the agent while it lasts); anything else
// — TADPOLE_ENOTCONN.
//
// # Loggers
//
// tadpole_logger_register registers an agent.Logger, so C loggers are listed
// by the LTTng session daemon and obey enable-event/disable-event. The
// logger hook copies each logger's summary (agent.Logger.Accept: none, all,
// level >= N, level == N, or "Logger.Log decides") into a 64-bit word per
// handle, and registration keeps the logger's marker key "log:<name>" in
// C: tadpole_logger_enabled is two loads, and tadpole_log with a level name
// decides in C and appends the marker "log:<name>" = "<level> <message>"
// (agent.LogMarker) to the thread's buffer like any event. Only a logger
// whose rules carry a filter expression, or a record without a level name
// (the agent names it on its domain's scale), costs a Go crossing: it first
// hands over the thread's buffered records (so the record keeps its place
// among the thread's events) and then calls Logger.Log.
//
// # LTTng sessions
//
// tadpole_start registers the process with the LTTng session daemon before
// it tries HQ (agent.RegisterLTTng: with or without HQ, for the process's
// life) and dlopen()s libtadpole-lttng.so (lttng.go, lttng.c; source
// capi/lttng), the tracepoint providers of lttng-ust 2.13's agents, from
// libtadpole.so's directory (dladdr) or lttng_lib. The logger hook also
// copies each logger's LTTng summary (agent.Logger.LTTngAccept) into a
// second table: tadpole_log fires the domain's event (lttng_jul:event by
// default) in C when the level passes and a session records the event,
// before and whatever the HQ side decides; lttng-ust applies the
// sessions' filters. libtadpole.so never links lttng-ust: without the
// companion, one warning when a session first enables a logger.
//
// # The JVM agent's strings
//
// Package jni passes strings in Java's modified UTF-8. jvmhost.h declares hidden
// variants of the string calls for it (tp_jmarker, tp_jthread_name,
// tp_jlogger_register, tp_jlog) and its hot path (tp_jenter, tp_jbind,
// tp_jrename, tp_jend, tp_jlog_accept, tp_jlog_reserve, tp_jlog_commit):
// markers, log records decided in C and thread names carry
// host.BatchFlagMUTF8, which the agent decodes; logger names and records
// that go through Logger.Log are converted with bytefrog.String first.
//
// # fork
//
// A pthread_atfork child handler marks the library dead in the child: the Go
// runtime's threads do not exist there. Every call in the child returns
// TADPOLE_ECHILD without calling Go and without touching the registry (its
// lock may be held by a thread that is gone); the child's copies of the
// buffers are never sent. The parent's trace is unaffected.
//
// # Lifecycle
//
// tadpole_start loads the configuration (defaults, TADPOLE_* variables, the
// options string), starts the agent, opens a session generation and starts
// the clock and flush timers and the drain. tadpole_stop stops publishing the
// tracing mode (recording calls then return TADPOLE_ENOTCONN), stops the
// drain, hands every buffer over (queued ones first), shuts the agent down
// and frees the orphans; while HQ keeps the run paused the buffered records
// are not handed over (the drain's wait ends with the agent's shutdown), so
// stop never waits for HQ to unpause. Start after stop begins a new
// run; handles stay valid.
package capi
