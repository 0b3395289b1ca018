/*
 * tadpole.h: the C API of libtadpole, an in-process tracing agent that
 * streams the Bytefrog protocol to an HQ and registers with the LTTng
 * session daemon.
 *
 * Build and link (the library is built by ./build.sh lib into out/):
 *
 *     cc -std=c99 -I include app.c -L out -ltadpole -Wl,-rpath,$PWD/out -pthread
 *     cc app.c $(PKG_CONFIG_PATH=out pkg-config --cflags --libs tadpole)
 *
 * Run against an HQ:
 *
 *     TADPOLE_HQ=127.0.0.1:8765 ./app          (options from the environment)
 *     TADPOLE_HQ=unix:/run/tadpole/hq.sock ./app   (HQ on this host: a Unix socket)
 *     out/tadpole-hq -exec ./app               (a private reference HQ)
 *
 * A typical program:
 *
 *     static tadpole_method m_handle;
 *
 *     int main(void) {
 *         m_handle = tadpole_method_register("shop/Shop.handle;1;(I)V");
 *         if (tadpole_start(NULL) != TADPOLE_OK) {      // TADPOLE_HQ etc.
 *             char why[256];
 *             tadpole_errmsg(why, sizeof why);
 *             fprintf(stderr, "untraced: %s\n", why);  // the program goes on
 *         }
 *         ...
 *         tadpole_enter(m_handle);  handle(...);  tadpole_exit(m_handle);
 *         ...
 *         tadpole_stop();
 *     }
 *
 * Conventions of every call:
 *
 *   - Calls never abort the process and never write to stdout. They return
 *     TADPOLE_OK (0) or a negative TADPOLE_E* code; registrations return a
 *     positive handle or a negative code. tadpole_errmsg() describes the
 *     calling thread's last failure.
 *   - Every call is thread-safe. Strings passed in are copied before the
 *     call returns; the caller keeps ownership.
 *   - Recording calls (tadpole_enter ... tadpole_log) return TADPOLE_ENOTCONN
 *     and record nothing before tadpole_start, after tadpole_stop, and after
 *     HQ ended the run. While HQ has paused tracing they block until it
 *     resumes; while HQ has suspended tracing they drop the event and return
 *     TADPOLE_OK.
 *   - Registrations (tadpole_*_register) and tadpole_thread_name work at any
 *     time, before tadpole_start too: handles are process-wide and stay valid
 *     across stop and start.
 *   - After fork(), every call in the child returns TADPOLE_ECHILD and records
 *     nothing; the parent's trace is unaffected. Only the parent traces: the
 *     agent's threads do not exist in a fork child. A daemon that forks to
 *     detach should load libtadpole after the fork (dlopen) to be traced.
 *   - No call is async-signal-safe: do not call tadpole from signal handlers.
 *
 * Events are encoded by the calling thread into a buffer it owns (the
 * thread-local state is one pointer) and handed to the agent in batches:
 * when the buffer is full, every 50 ms, on tadpole_flush(), tadpole_stop()
 * and at thread exit. A recording call costs a few nanoseconds; it takes
 * no lock but the thread's own (uncontended) one, once per full buffer.
 * Event times have the 1 ms resolution of the Bytefrog protocol. Each
 * thread that records holds a 128 KiB buffer until it exits.
 *
 * One Go runtime per process: libtadpole contains the Go runtime, so do not
 * load a second Go-based shared library into the same process.
 */
#ifndef TADPOLE_H
#define TADPOLE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define TADPOLE_API __attribute__((visibility("default")))
#else
#define TADPOLE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header and the library it belongs to. */
#define TADPOLE_VERSION_MAJOR 0
#define TADPOLE_VERSION_MINOR 1

/*
 * Return codes: TADPOLE_OK, or the negated Linux errno value that best fits.
 */
#define TADPOLE_OK 0
/* A handle that no registration returned. */
#define TADPOLE_EBADF (-9)
/* Called in the child of a fork(): the library is inert there. */
#define TADPOLE_ECHILD (-10)
/* Out of memory. */
#define TADPOLE_ENOMEM (-12)
/* A bad argument, or a bad or unknown key in the options string. */
#define TADPOLE_EINVAL (-22)
/* Too many loggers (TADPOLE_MAX_LOGGERS). */
#define TADPOLE_ENOSPC (-28)
/* HQ broke the Bytefrog protocol. */
#define TADPOLE_EPROTO (-71)
/* Not tracing: before tadpole_start, after tadpole_stop, or HQ ended the run. */
#define TADPOLE_ENOTCONN (-107)
/* HQ accepted the agent but did not send Start within start_timeout. */
#define TADPOLE_ETIMEDOUT (-110)
/* HQ is not reachable within connect_timeout, or it rejected the agent. */
#define TADPOLE_ECONNREFUSED (-111)
/* tadpole_start while already tracing. */
#define TADPOLE_EALREADY (-114)
/* An internal error, reported instead of crashing the process. */
#define TADPOLE_EINTERNAL (-131)

/* Longest marker key or value in bytes; longer strings are truncated at a
 * UTF-8 character boundary. */
#define TADPOLE_MAX_STRING 8192
/* Longest thread name in bytes (longer names are truncated likewise). */
#define TADPOLE_MAX_THREAD_NAME 255
/* Most loggers a process can register through this API. */
#define TADPOLE_MAX_LOGGERS 4096
/* Line number meaning "unknown". */
#define TADPOLE_NO_LINE (-1)

/* Handles: positive integers returned by the registrations. */
typedef int32_t tadpole_method; /* a method signature */
typedef int32_t tadpole_exc;    /* an exception type */
typedef int32_t tadpole_logger; /* a named logger */

/* ---- Lifecycle -------------------------------------------------------- */

/*
 * tadpole_start connects to HQ, sends Hello, takes HQ's configuration and
 * waits for HQ's Start, then returns: tracing has begun. options is a
 * "key=value,key=value" string (NULL or "" for none), applied over the
 * defaults and the TADPOLE_<KEY> environment variables; the keys are those
 * of the -agentpath options (hq, connect_timeout, start_timeout, protocol,
 * flavor, log, log_level, logs, lttng, lttng_domain, ...). Without an hq key
 * or TADPOLE_HQ nothing is traced. hq is host:port (TCP), unix:/path (a
 * Unix-domain socket file, cheaper per byte for an HQ on this host) or
 * @name (an abstract Unix socket); a malformed one is TADPOLE_EINVAL.
 *
 * When HQ refuses or does not answer within 50 ms, it returns TADPOLE_OK at
 * once: the program runs untraced (recording calls return TADPOLE_ENOTCONN,
 * tadpole_tracing() is 0) while the agent tries again every hq_retry
 * (default 1 s) in the background, and tracing begins when HQ answers and
 * sends Start. With hq_retry=0 (the seed's blocking start) it blocks for at
 * most connect_timeout (default 5 s) when HQ is absent and then fails. Once
 * connected it waits at most start_timeout (default 10 s) for Start.
 * Recording calls made by other threads meanwhile return TADPOLE_ENOTCONN.
 *
 * Returns TADPOLE_OK, TADPOLE_EINVAL (bad options, no HQ address),
 * TADPOLE_ECONNREFUSED, TADPOLE_ETIMEDOUT, TADPOLE_EPROTO, TADPOLE_EALREADY,
 * TADPOLE_ECHILD or TADPOLE_EINTERNAL. After a failure the program goes on
 * untraced and may call tadpole_start again. A failure other than
 * TADPOLE_EALREADY or a missing hq address is also logged, once, where the
 * log and log_level options say (log=none: nowhere).
 */
TADPOLE_API int tadpole_start(const char *options);

/*
 * tadpole_stop hands every thread's buffered events to the agent, then ends
 * the run: the 'X' heartbeat, every recorded event sent, the connections
 * closed. It waits up to 10 s for HQ (and for the end of a pause HQ
 * imposed). tadpole_start may be called again afterwards.
 *
 * Returns TADPOLE_OK, TADPOLE_ENOTCONN (not started), TADPOLE_ECHILD, or the
 * code of the error that ended the run.
 */
TADPOLE_API int tadpole_stop(void);

/*
 * tadpole_flush hands every thread's buffered events to the agent now, so
 * that HQ receives them within the agent's flush_interval. Buffers are also
 * flushed every 50 ms without it. It blocks while HQ has paused tracing.
 *
 * Returns TADPOLE_OK, TADPOLE_ENOTCONN or TADPOLE_ECHILD.
 */
TADPOLE_API int tadpole_flush(void);

/*
 * tadpole_tracing returns 1 while events are being recorded (started, and
 * HQ has neither paused, suspended nor stopped tracing), 0 otherwise. It is
 * one memory load.
 */
TADPOLE_API int tadpole_tracing(void);

/* ---- Registration ----------------------------------------------------- */

/*
 * tadpole_method_register returns the handle of a method signature,
 * registering it on first use; the same signature always gives the same
 * handle. JVM-style signatures read "pkg/Class.method;access;descriptor";
 * any stable text such as "server.c:handle_request" works. Register once
 * (at start-up) and keep the handle: registration takes a lock.
 *
 * Returns a handle > 0, or TADPOLE_EINVAL (NULL or empty signature),
 * TADPOLE_ECHILD, TADPOLE_EINTERNAL.
 */
TADPOLE_API tadpole_method tadpole_method_register(const char *signature);

/*
 * tadpole_exc_register returns the handle of an exception (error) type
 * name such as "java/io/IOException" or "ENOENT", like
 * tadpole_method_register.
 */
TADPOLE_API tadpole_exc tadpole_exc_register(const char *name);

/*
 * tadpole_thread_name names the calling thread in the trace, at this point
 * of it (a thread renamed while tracing is announced again). It works
 * before tadpole_start too; the name is sent when the thread first records.
 * A thread never named is called by its pthread name when one was set
 * (pthread_setname_np), "main" for the main thread, else "thread-<tid>".
 *
 * Returns TADPOLE_OK, TADPOLE_EINVAL (NULL or empty name), TADPOLE_ENOMEM or
 * TADPOLE_ECHILD.
 */
TADPOLE_API int tadpole_thread_name(const char *name);

/* ---- Events (hot path) ------------------------------------------------- */

/*
 * The recording calls. Each appends one event to the calling thread's
 * buffer: a few nanoseconds, no lock, no system call. They return
 * TADPOLE_OK (also when HQ suspended tracing and the event is dropped),
 * TADPOLE_ENOTCONN when not tracing, TADPOLE_EBADF for a bad handle,
 * TADPOLE_ECHILD after fork, TADPOLE_ENOMEM when the thread's buffer could
 * not be allocated. While HQ pauses tracing they block until it resumes.
 */

/* tadpole_enter records a MethodEntry of m. */
TADPOLE_API int tadpole_enter(tadpole_method m);

/* tadpole_exit records a MethodExit of m (line unknown). */
TADPOLE_API int tadpole_exit(tadpole_method m);

/* tadpole_exit_line records a MethodExit of m at a source line
 * (TADPOLE_NO_LINE or a value outside 0..65534 means unknown). */
TADPOLE_API int tadpole_exit_line(tadpole_method m, int line);

/* tadpole_exception records that method m raised exception type e at a
 * source line; the call goes on (use tadpole_bubble if it ends). */
TADPOLE_API int tadpole_exception(tadpole_method m, tadpole_exc e, int line);

/* tadpole_bubble records that m ended by letting exception type e pass
 * through: it takes the place of tadpole_exit for that call. */
TADPOLE_API int tadpole_bubble(tadpole_method m, tadpole_exc e);

/*
 * tadpole_marker records a marker: a key/value event in the trace. Strings
 * are UTF-8, NUL-terminated, at most TADPOLE_MAX_STRING bytes each (longer
 * ones are truncated); value may be NULL (empty). Returns as above, or
 * TADPOLE_EINVAL for a NULL key.
 */
TADPOLE_API int tadpole_marker(const char *key, const char *value);

/* ---- Loggers ----------------------------------------------------------- */

/*
 * Loggers are named sources of log records. They are listed by
 * "lttng list -j" (or -l, -p: option lttng_domain) once tadpole_start was
 * called, with or without an HQ, and
 * obey "lttng enable-event / disable-event" with their log level and filter
 * rules, per the option logs=auto|lttng|all|none. An enabled logger's record
 * becomes a Bytefrog marker: key "log:<logger name>", value
 * "<level name> <message>".
 */

/* Levels on the JUL scale (lttng_domain=jul, the default). With
 * lttng_domain=log4j use 50000 (FATAL) ... 5000 (TRACE); with python
 * 50 (CRITICAL) ... 10 (DEBUG). */
#define TADPOLE_LEVEL_SEVERE 1000
#define TADPOLE_LEVEL_WARNING 900
#define TADPOLE_LEVEL_INFO 800
#define TADPOLE_LEVEL_CONFIG 700
#define TADPOLE_LEVEL_FINE 500
#define TADPOLE_LEVEL_FINER 400
#define TADPOLE_LEVEL_FINEST 300

/*
 * tadpole_logger_register returns the handle of the logger named name
 * (dotted names such as "shop.orders" as JUL uses), registering it on first
 * use. Register at start-up and keep the handle.
 *
 * Returns a handle > 0, or TADPOLE_EINVAL, TADPOLE_ENOSPC, TADPOLE_ECHILD,
 * TADPOLE_EINTERNAL.
 */
TADPOLE_API tadpole_logger tadpole_logger_register(const char *name);

/*
 * tadpole_logger_enabled returns 1 when records of logger h are recorded
 * now (tracing, and the logger enabled by the log policy or LTTng; or, HQ
 * or not, an LTTng session records the logger, see below), else 0
 * (also for a bad handle). It is two memory loads: test it before
 * formatting a message. LTTng level and filter rules are applied by
 * tadpole_log, so an enabled logger may still drop a record.
 */
TADPOLE_API int tadpole_logger_enabled(tadpole_logger h);

/*
 * tadpole_log records one log record of logger h: level on the scale of the
 * LTTng domain (TADPOLE_LEVEL_*), level_name the name shown in the trace
 * (NULL: the domain's name for level, e.g. "WARNING"), msg the UTF-8
 * message; "<level_name> <msg>" is cut at TADPOLE_MAX_STRING bytes. The
 * record keeps its place among the thread's events. With a level_name and
 * no LTTng filter expression on the logger, the record is decided and
 * encoded into the thread's buffer like any event; otherwise (NULL
 * level_name, or a filter) it costs a crossing into the agent (a few
 * hundred nanoseconds), which first hands the thread's buffered events
 * over. A disabled logger costs a load.
 *
 * A record of a logger that "lttng enable-event" enabled also goes into the
 * LTTng sessions as the official agents' event (lttng_jul:event, or
 * lttng_log4j / lttng_python per lttng_domain), whether or not an HQ
 * traces, when libtadpole-lttng.so (built with lttng-ust) is next to
 * libtadpole.so; option logs=POLICY:TO chooses LTTng, HQ or both.
 * lttng-ust applies the session's filters and never blocks.
 *
 * Returns TADPOLE_OK (recorded, or dropped because the logger is disabled or
 * an LTTng rule rejects it), TADPOLE_ENOTCONN (not tracing, and not
 * recorded into LTTng), TADPOLE_EBADF, TADPOLE_EINVAL
 * (NULL msg), TADPOLE_ECHILD, TADPOLE_EINTERNAL.
 */
TADPOLE_API int tadpole_log(tadpole_logger h, int level, const char *level_name, const char *msg);

/* ---- Errors ------------------------------------------------------------ */

/*
 * tadpole_errmsg copies the description of the calling thread's last failed
 * call into buf, truncated to len-1 bytes and always NUL-terminated (when
 * len > 0), and returns the full length of the description (0 when no call
 * of this thread failed yet). Successful calls leave it unchanged, like
 * errno.
 */
TADPOLE_API size_t tadpole_errmsg(char *buf, size_t len);

/*
 * tadpole_strerror returns a static description of a return code, e.g.
 * "not tracing" for TADPOLE_ENOTCONN.
 */
TADPOLE_API const char *tadpole_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* TADPOLE_H */
