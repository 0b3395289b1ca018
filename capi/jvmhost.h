/*
 * jvmhost.h: what package capi offers the JVM agent (package jni) in the
 * same library: the tp_j* functions of jvmhost.c, which record through
 * the C API's recorder. Package jni imports package capi and includes this
 * header through its -I${SRCDIR}/../capi; declarations and macros only
 * (cgo copies preambles that include it into _cgo_export.h).
 */
#ifndef TADPOLE_CAPI_JVMHOST_H
#define TADPOLE_CAPI_JVMHOST_H

#include <stdint.h>

#include "tp.h"

/* States of the calling Java thread (tp_jenter). */
#define TP_J_RECORD 0 /* checked in, name unchanged: record */
#define TP_J_DROP 1   /* nothing is recorded now */
#define TP_J_BIND 2   /* not bound to its Java thread: tp_jbind, then again */
#define TP_J_RENAME 3 /* renamed since it last announced: tp_jrename, then again */

/* Thread keys the C API gives threads that are no Java thread, when the
 * JVM agent runs (tp_jhost): from here up, above every Java thread id. */
#define TP_KEY_BASE_JVM (UINT64_C(1) << 32)

/* tp_jmarker, tp_jthread_name, tp_jlogger_register and tp_jlog are
 * tadpole_marker, tadpole_thread_name, tadpole_logger_register and
 * tadpole_log for strings in Java's modified UTF-8 (GetStringUTFRegion:
 * U+0000 as C0 80, supplementary characters as two 3-byte surrogates).
 * Markers and thread names are recorded as such, flagged TP_FLAG_MUTF8, for
 * the agent to convert; logger names and log records are converted in Go. */
TP_INTERNAL int tp_jmarker(const char *key, const char *value);
TP_INTERNAL int tp_jthread_name(const char *name);
TP_INTERNAL int32_t tp_jlogger_register(const char *name);
TP_INTERNAL int tp_jlog(int32_t h, int level, const char *level_name, const char *msg);

/* The JVM agent's hot path. A Java thread's state is the C API's thread
 * state (one initial-exec __thread pointer) bound to the Java thread: its
 * thread key is the Java thread id (so HQ shows "thread-<id>" until the
 * name arrives) and it keeps the name's String.hashCode, which the natives
 * compare with the current name's to see Thread.setName (no JVMTI event).
 * All names are modified UTF-8. */

/* tp_jhost says the JVM agent runs: other threads' keys start at
 * TP_KEY_BASE_JVM. */
TP_INTERNAL void tp_jhost(void);
/* tp_jenter tells what the calling Java thread must do before recording
 * (TP_J_*); name_hash is its current name's hashCode. A thread that is
 * bound and checked in costs two loads. */
TP_INTERNAL int tp_jenter(int32_t name_hash);
/* tp_jrun reports whether an HQ run may record now: outside one,
 * tp_jenter answers TP_J_DROP. One load. */
TP_INTERNAL int tp_jrun(void);
/* tp_jbind binds the calling thread to Java thread java_id named name
 * (hash its hashCode). While tracing, it checks the thread in, which
 * records its name (a BatchName record) for HQ to map at once. */
TP_INTERNAL int tp_jbind(int64_t java_id, const char *name, int32_t name_hash);
/* tp_jrename records the calling thread's new name. */
TP_INTERNAL int tp_jrename(const char *name, int32_t name_hash);
/* tp_jend is ThreadEnd: the thread's buffer gets a BatchEnd record and
 * goes to the orphans that the next flush hands over; its state is
 * retired. */
TP_INTERNAL void tp_jend(void);
/* tp_jlog_accept decides on a record of logger h at level (TP_LOG_*); the
 * thread is checked in (tp_jenter gave TP_J_RECORD). */
TP_INTERNAL int tp_jlog_accept(int32_t h, int level);
/* tp_jlog_reserve begins logger h's marker in the calling thread's buffer
 * (header and key, "log:<name>") and returns where its value goes: room
 * for max bytes (at most TADPOLE_MAX_STRING) plus one byte the caller may
 * overwrite; NULL when the logger has no modified UTF-8 key. Nothing is
 * visible to flushers before tp_jlog_commit. */
TP_INTERNAL char *tp_jlog_reserve(int32_t h, uint32_t max);
/* tp_thread_count is the number of thread states the C API holds for
 * live threads and for exited ones whose buffers wait for a flush (tests:
 * thread churn must not pile them up). */
TP_INTERNAL int tp_thread_count(void);
/* tp_jlog_acc returns the loggers' states (tp_logger_acc: TADPOLE_MAX_LOGGERS
 * + 1 words, by handle, TP_ACCEPT_* in the low byte and the level in the
 * high 32 bits) and the highest handle registered, for the JVM agent to
 * mirror into Java, where its JUL handler decides records without a JNI
 * call. tp_jlog_key returns logger h's marker
 * key ("log:<name>", *len bytes, modified UTF-8 when *mutf8), NULL when it
 * has none. */
TP_INTERNAL const _Atomic uint64_t *tp_jlog_acc(int32_t *max);
TP_INTERNAL const char *tp_jlog_key(int32_t h, uint32_t *len, int *mutf8);
/* tp_jlog_commit ends and publishes the record tp_jlog_reserve began; its
 * value is value_len bytes, at most the max reserved. */
TP_INTERNAL void tp_jlog_commit(uint32_t value_len);

#endif /* TADPOLE_CAPI_JVMHOST_H */
