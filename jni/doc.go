// Package jni is tadpole's JVM agent: the JVMTI entry points of
// libtadpole.so (Agent_OnLoad, Agent_OnAttach, Agent_OnUnload), written in
// C (jvmti.c, natives.c) over the C API of package capi, and the embedded
// Java helper classes (java/ → classes/, compiled by ./build.sh lib with
// javac --release 8). Only the c-shared main package imports it.
//
//	java -agentpath:/path/libtadpole.so=hq=127.0.0.1:8765 -jar app.jar
//	jcmd <pid> JVMTI.agent_load /path/libtadpole.so hq=127.0.0.1:8765
//
// The options string is the agent core's (agent.LoadConfig: hq,
// connect_timeout, logs, lttng, …; TADPOLE_* variables apply too), with
// one default of the JVM's own: procs=1, unless TADPOLE_PROCS is set. The
// agent's Go work then runs on one thread at a time, which takes least
// from the JVM's logging threads on a machine of few cores.
//
// # Start
//
// Agent_OnLoad refuses to start (one message on stderr, the JVM goes on)
// when libjsig is preloaded: it virtualises sigaction, so Go's handlers
// would end up behind the JVM's and Go code would take signals on goroutine
// stacks. Otherwise it loads the Go side, takes a JVMTI environment without
// capabilities (no JIT or exception cost) and enables VMInit, VMDeath,
// ThreadStart and ThreadEnd. VMInit (Agent_OnAttach for a running JVM):
//
//  1. adds SA_ONSTACK to the installed handlers of SIGSEGV, SIGBUS, SIGFPE,
//     SIGILL, SIGPIPE, SIGXFSZ, SIGQUIT, SIGINT, SIGTERM, SIGHUP and SIGUSR2
//     that lack it;
//  2. defines io.tadpole.Tadpole, JulHandler and JulSync in the system
//     class loader (or finds them there, when the application bundles
//     Tadpole) and binds Tadpole's natives with RegisterNatives;
//  3. calls tadpole_start: with an HQ that answers, the JVM waits for
//     HQ's Start at most start_timeout; an HQ that refuses or does not
//     answer within 50 ms holds it no longer: it goes on untraced after one
//     warning and the agent tries again every hq_retry, tracing once HQ
//     answers (hq_retry=0: the seed's wait of up to connect_timeout);
//  4. binds the thread (see Threads) and starts the daemon thread
//     "tadpole-jul", the agent's own, which the trace leaves out.
//
// VMDeath (and Agent_OnUnload) calls tadpole_stop: every buffer is flushed
// and the run ends. The agent never exits the JVM and never returns JNI_ERR.
//
// # Hot path
//
// The natives call capi's internal functions (capi/jvmhost.h, hidden from the
// library's dynamic symbols), which encode events into the calling
// thread's C buffer (one initial-exec __thread pointer). A full buffer
// goes on a queue in C, and the thread goes on in a spare one: the Java
// thread never calls into Go for it. One Go goroutine hands the queued
// buffers to the agent, one crossing per buffer, never per event. Strings
// stay in Java's modified UTF-8 (GetStringUTFRegion), flagged
// host.BatchFlagMUTF8 and converted by the agent, so U+0000 (C0 80) and
// supplementary characters (surrogate pairs) reach HQ intact. Every Go
// export of this package recovers from panics.
//
// While HQ traces and no LTTng session records JUL events, a JUL record of
// a standard level costs no JNI call: JulHandler decides it from the C
// API's logger states (mirrored into a Java long[] by the tick thread
// within a millisecond of a change, Tadpole.julAccept) and appends it to the thread's probe buffer
// (Probe.JUL_SINK, the agent's way in, put into Tadpole.jul), as two
// words among the method events, its message's chars (and a new thread
// name's) in the buffer's char array, which crosses JNI with the words; the
// converter turns them into the same markers (jul.go), in the thread's
// order with its calls. The tick thread hands over the buffers of threads
// that logged and then went quiet (suspending the owner between two
// appends). Other records take the native path below.
//
// A JUL record is otherwise one native, Tadpole.log0, and no Go crossing: the C
// side keeps each logger's accept state (agent.Logger.Accept: disabled,
// all, a level range or a single level, or "the agent decides"), updated
// by the agent's logger hook, and decides on the record; an accepted
// record is written as the marker agent.LogMarker builds, "log:<logger>" =
// "<level name> <message>", straight into the thread's buffer: the key is
// kept in C per logger, the level name of a standard level comes from its
// value, and the message is copied with one GetStringUTFRegion into room
// reserved for its worst case (3 bytes a char; its length is
// msg.length(), passed by Java). Only a logger whose rules carry a filter
// expression (other than the one the lttng client generates from the name
// and level) or a message too long for a marker (8192 bytes) takes the old
// path: one Go crossing to Logger.Log.
//
// # Threads
//
// A Java thread's C state is bound to the Java thread: its thread key is
// the Java thread id (java.lang.Thread.getId, a cached jmethodID), so the
// agent keys the thread hostThreadBit|id, and it holds the name (from
// GetThreadInfo) and the name's String.hashCode. ThreadStart binds each new
// thread while a run is on and announces its name (a BatchName record: HQ
// maps the thread at once, under a wire id of its own); threads that were
// running before (attach) bind at their first record. Thread.setName is no
// JVMTI event: every native that records gets the current name and its
// hashCode (cached in the String) from Java and compares the hash in C; a
// different hash announces the new name at that point of the trace.
// ThreadEnd appends a BatchEnd record (the drain forgets the thread), puts
// the buffer on the orphan list that the next flush (the 50 ms timer, or
// the wake-up every 16 orphans) hands over, and retires the state to the
// pool: a program whose threads come and go neither loses records nor
// piles up buffers. Per-thread state lives in the C API's thread-local
// pointer, never in goroutine-local storage.
//
// # java.util.logging
//
// The agent does not touch LogManager until the application initialised it
// (JulSync tests the class's JVMTI status every 100 ms), so applications
// choosing their own manager keep working. From then on, every 100 ms (or
// at Tadpole.syncLoggers()):
//
//   - every logger LogManager.getLoggerNames lists (the root logger "" aside)
//     is registered with the agent: these are the names the LTTng session
//     daemon's LIST shows (lttng list -j);
//   - a logger that is enabled (log policy, or lttng enable-event -j) gets a
//     JulHandler; a disabled one loses it. A handler records only records
//     of its own logger, so a record is never recorded twice through
//     parents. Records logged before the next sync after an enable are not
//     recorded. Level rules and disables apply at once (in C).
//
// A record becomes the marker "log:<logger>" = "<level name> <message>"
// (agent.LogMarker), its level the JUL Level.intValue(), which is the LTTng
// JUL domain's scale, so loglevel filters apply as for the LTTng JUL agent.
// The message is formatted with Formatter.formatMessage when it has
// parameters or a resource bundle.
//
// # LTTng sessions
//
// tadpole_start registers the JVM with the LTTng session daemon whether or
// not an HQ answers, so the JUL thread runs and the loggers are listed with
// no HQ too. A logger that a session enabled gets a JulHandler, whose one
// native a record records into LTTng when the record is one for LTTng
// (the logger's LTTng level rule passes and a session records
// lttng_jul:event now: one load in the companion library). While no HQ
// run is on, that native is lttng0, which takes the record's level,
// message, millis, thread id and call site alone, and hands the rare
// record it cannot complete from them (no named call site, a long
// message) to log0; under an HQ run it is log0, which records into HQ
// and LTTng alike. Either fires
// lttng_jul:event through libtadpole-lttng.so with the fields the official
// agent fills: the formatted message (one GetStringUTFRegion onto the
// stack), the logger (its name kept in C), the source class and method
// (the call site's, which the rewriter named, when the calling class was
// rewritten: with method probes under an HQ run, with call-site probes
// only otherwise; else source.c: one JVMTI GetStackTrace read with JUL's
// rule and the method names cached per jmethodID;
// LogRecord.getSourceClassName when the source may be explicit; empty with
// lttng_source=off), getMillis, the
// level and getThreadID. lttng-ust applies the sessions' filters.
//
// # Method tracing
//
// probe.c and probe.go (docs/jvm-tracing.md). Agent_OnLoad (and
// Agent_OnAttach) takes trace= out of the options (its patterns may be
// separated by commas; TADPOLE_TRACE applies too), writes the probes' helper
// io.tadpole.Probe (jni/java, with its nested classes) into a jar on the
// bootstrap class path and adds can_retransform_classes; trace=none skips
// all of it. VMInit binds Probe's natives, starts its tick thread
// ("tadpole-tick", left out of the trace) and enables the class file load
// hook, which hands each class to the rewriter (jvm/instrument) when the
// policy selects it: HQ's inclusions, HQ's exclusions, then trace= or
// application classes. Method ids are agent.NewMethod handles of the
// Bytefrog signatures, so a retransformed or reloaded class keeps them; each
// class is reported to HQ (ClassTransformed, ClassIgnored,
// ClassTransformFailed). A class that fails to rewrite loads unchanged.
//
// Probes append one long per event to the thread's Java buffer; a full
// buffer crosses JNI once (flush0), is copied into a pool buffer and queued
// (lock-free) for the converter goroutine, which lends each queued buffer
// to the agent (host.HandProbes), oldest first: the drain encodes the
// words where they are and gives the buffer back to the pool
// (tpj_q_release); a buffer holding JUL records is copied
// (host.SubmitProbes, jul.go) and freed at once. A thread that finds the
// pool empty waits for a buffer to come back. ThreadEnd flushes the ending thread's buffer, after the queue, before
// its BatchEnd record, VMDeath every registered buffer before tadpole_stop;
// the thread's C API buffer (its name) is handed over first. JUL records
// in the probe buffers keep the thread's order with its calls; a record
// that takes the native path (log0) first hands over the thread's probe
// buffer when it holds JUL records (with jul_order=on, when it holds
// anything), and the C API buffers then go before its next probe buffer. The tick
// thread keeps the probes' one word, Probe.now (the millisecond clock while
// tadpole_tracing, OFF while not), starts a new generation at each new
// tracing epoch of the C API (buffers drop what earlier ones left), and
// retransforms the loaded classes when HQ's class filters change;
// Agent_OnAttach retransforms them before it returns. A buffer handed over
// while the agent does not trace is dropped.
//
// # Management endpoint
//
// With j4p= the endpoint (agent.StartManagement) also serves the JVM's
// platform MBean server: j4p.go plugs an MBean server into it
// (host.SetPlatformMBeans) whose operations each make one call of the
// embedded io.tadpole.J4P (java/, defined with the other helpers), request
// and answer encoded by package j4pwire. The calls run on C threads of
// j4p.c attached to the JVM as daemon threads "tadpole-j4p-<n>" (at most
// 4, detached after 30 s idle, left out of the trace); finished calls
// return through a pipe the Go runtime polls. See docs/management.md.
//
// # Signals and panics
//
// Go forwards faults that do not come from Go code to the JVM's saved
// handlers (implicit null checks, safepoint polls), so the JVM's signal
// handling is unchanged; -Xcheck:jni reports the modified handlers once.
// The agent never calls signal.Notify. Tests: jni/jtest.
package jni
