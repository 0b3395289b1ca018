/*
 * tp.h: declarations shared by capi's C side (recorder.c, api.c, lttng.c)
 * and its Go side; the JVM host's are in jvmhost.h, the C side's internals
 * in recorder.h.
 * Declarations and macros only: cgo copies the preambles that include it
 * into _cgo_export.h.
 */
#ifndef TADPOLE_CAPI_TP_H
#define TADPOLE_CAPI_TP_H

#include <stddef.h>
#include <stdint.h>

#include "tadpole.h"

/* Hidden: internal to libtadpole.so, never among its dynamic symbols. */
#define TP_INTERNAL __attribute__((visibility("hidden")))

/* Batch record layout of agent/batch.go (checked against it in Go). */
#define TP_OFF_KIND 0
#define TP_OFF_FLAGS 1
#define TP_OFF_LINE 2
#define TP_OFF_METHOD 4
#define TP_OFF_EXC 8
#define TP_OFF_LEN1 12
#define TP_OFF_LEN2 14
#define TP_OFF_TIME 16
#define TP_HDR (1 + 1 + 2 + 4 + 4 + 2 + 2 + 8)
#define TP_ALIGN 8

#define TP_KIND_ENTRY 1
#define TP_KIND_EXIT 2
#define TP_KIND_THROW 3
#define TP_KIND_BUBBLE 4
#define TP_KIND_MARKER 5
#define TP_KIND_NAME 6
#define TP_KIND_END 7

#define TP_FLAG_THROWN 1
#define TP_FLAG_MUTF8 2
#define TP_NO_LINE 0xFFFF

/* Bytefrog modes (bytefrog.Mode) as the C side keeps them; TP_MODE_NONE
 * means no run: before start, after stop, in a fork child. */
#define TP_MODE_NONE 0
#define TP_MODE_INITIALIZING 'I'
#define TP_MODE_TRACING 'T'
#define TP_MODE_PAUSED 'P'
#define TP_MODE_SUSPENDED 'S'
#define TP_MODE_SHUTDOWN 'X'

/* Bytes of a thread's event buffer (malloc'd at its first event). */
#define TP_BUF_SIZE (128 * 1024)
/* Bytes allocated past TP_BUF_SIZE: GetStringUTFRegion writes a NUL after
 * the string it copies into a reserved record (tp_jlog_reserve). */
#define TP_BUF_SLACK TP_ALIGN

/* How a logger's records are decided in C (agent.LogAcceptKind): none,
 * all, level >= value, level == value, or only by the agent (Logger.Log:
 * a filter expression). */
#define TP_ACCEPT_NONE 0
#define TP_ACCEPT_ALL 1
#define TP_ACCEPT_RANGE 2
#define TP_ACCEPT_SINGLE 3
#define TP_ACCEPT_LOG 4

/* Decisions of tp_jlog_accept. */
#define TP_LOG_DROP 0   /* not recorded */
#define TP_LOG_RECORD 1 /* recorded in C: tp_jlog_reserve, tp_jlog_commit */
#define TP_LOG_GO 2     /* the agent decides: tp_jlog */

/* Bytes of a thread's last error message. */
#define TP_ERR_SIZE 256

/* Called by the Go side. */

/* tp_begin opens a new session generation: buffers of older ones are
 * discarded, the event clock is set. Mode stays TP_MODE_NONE. */
void tp_begin(void);
/* tp_end closes the generation and frees the buffers of exited threads. */
void tp_end(void);
/* tp_set_mode publishes the mode every recording call tests; a mode equal
 * to the published one changes nothing. */
void tp_set_mode(uint8_t mode);
/* tp_clock_tick refreshes the event clock (CLOCK_MONOTONIC ns). */
void tp_clock_tick(void);
/* tp_flush_all hands every thread's buffered events to the agent; with
 * skip_paused it gives up while the mode is TP_MODE_PAUSED instead of
 * blocking. It returns the number of buffers handed over. */
int tp_flush_all(int skip_paused);
/* tp_drain hands every buffer of the full queue to the agent, oldest
 * first, and returns how many it took. */
int tp_drain(void);
/* tp_drain_idle tells that the Go drain goroutine found the queue empty:
 * 0 means it may wait on its pipe (a thread that queues a buffer then
 * writes to it), 1 that buffers came or the drain is to end meanwhile. */
int tp_drain_idle(void);
/* tp_drain_stopped reports whether the drain is to end. */
int tp_drain_stopped(void);
/* tp_set_drain_fd gives the write end of the drain's pipe (-1: none). */
void tp_set_drain_fd(int fd);
/* tp_drain_quit(1) tells the drain to end, waking it; tp_drain_quit(0)
 * undoes that for a new run. */
void tp_drain_quit(int quit);
/* tp_set_wake_fd gives the write end of the pipe that asks the Go side for
 * an early flush (-1: none). */
void tp_set_wake_fd(int fd);
/* tp_set_logger records how logger handle h's records are decided:
 * kind TP_ACCEPT_*, level its value. */
void tp_set_logger(int32_t h, int kind, int32_t level);

/* ---- Recording into LTTng sessions (lttng.c) ----
 * libtadpole-lttng.so, built against lttng-ust, holds the tracepoint
 * providers of the agent domains; libtadpole.so dlopen()s it at run time
 * and never links lttng-ust itself. */

/* tp_lttng_open loads the companion library at path and records into
 * domain (3 JUL, 4 log4j, 5 Python) from then on. It returns 0, or -1 with
 * the reason in err. Called once, from Go. */
int tp_lttng_open(const char *path, int domain, char *err, size_t errlen);
/* tp_lttng_ready reports whether tp_lttng_open loaded the companion;
 * tp_lttng_live whether a session records the domain's event now. */
TP_INTERNAL int tp_lttng_ready(void);
TP_INTERNAL int tp_lttng_live(void);
/* tp_lttng_set_source(0) leaves a JVM record's source out of its LTTng
 * event (option lttng_source=off); tp_lttng_source reports the setting. */
void tp_lttng_set_source(int on);
TP_INTERNAL int tp_lttng_source(void);
/* tp_lttng_self_path writes the path of the object holding libtadpole.so's
 * code (dladdr) into buf; it returns 0, or -1 when unknown. */
int tp_lttng_self_path(char *buf, size_t len);
/* tp_lttng_set_registered notes that the process is registered with the
 * LTTng session daemon(s) without an HQ run (the JVM agent then keeps its
 * JUL loggers in step anyway). */
void tp_lttng_set_registered(int on);
TP_INTERNAL int tp_lttng_registered(void);
/* tp_set_logger_lttng records how logger h's records are decided for
 * LTTng (TP_ACCEPT_*; TP_ACCEPT_LOG: lttng-ust's filter decides). */
void tp_set_logger_lttng(int32_t h, int kind, int32_t level);
/* tp_lttng_name keeps logger h's name as the LTTng event's logger_name. */
TP_INTERNAL void tp_lttng_name(int32_t h, const char *name);
/* tp_lttng_named reports whether logger h's name is kept: tp_lttng_log
 * then takes a NULL logger. */
TP_INTERNAL int tp_lttng_named(int32_t h);
/* tp_lttng_on reports whether logger h may have records for LTTng now
 * (enabled for LTTng); tp_lttng_wants whether a record at level is one
 * (enabled, the level passes, and a session records the event now). */
TP_INTERNAL int tp_lttng_on(int32_t h);
/* tp_lttng_recording: tp_lttng_on, and a session records the event now. */
TP_INTERNAL int tp_lttng_recording(int32_t h);
TP_INTERNAL int tp_lttng_wants(int32_t h, int level);
/* tp_lttng_log records one record into the LTTng sessions as the domain's
 * event: logger NULL is logger h's name; class_name, method_name (file
 * and function for a C host) may be NULL; millis < 0 and tid < 0 are
 * taken from the clock and the calling thread. */
TP_INTERNAL void tp_lttng_log(int32_t h, const char *msg, const char *logger, const char *class_name,
                              const char *method_name, int64_t millis, int level, int tid);
/* tp_lttng_jul is tp_lttng_log with the lengths of the strings known
 * (bytes before their NUL; msg, class_name and method_name not NULL),
 * for the JVM's JUL records: lttng_jul:event is written without measuring
 * or scanning them again. */
TP_INTERNAL void tp_lttng_jul(int32_t h, const char *msg, size_t msg_len, const char *logger, const char *class_name,
                              size_t class_len, const char *method_name, size_t method_len, int64_t millis, int level,
                              int tid);

#endif /* TADPOLE_CAPI_TP_H */
