/*
 * api.c: the public C API of include/tadpole.h, the tadpole_* entry points,
 * over the recorder (recorder.c). The Go side (the tadpoleGo* exports)
 * owns the agent. See doc.go for the design.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "_cgo_export.h"

static _Atomic int32_t tp_method_max; /* highest method handle registered */
static _Atomic int32_t tp_exc_max;    /* highest exception handle registered */

/* Out of line: its message buffer stays off the hot path's stack frame. */
__attribute__((noinline, cold)) static int tp_bad_handle(const char *what) {
	char msg[64];
	snprintf(msg, sizeof msg, "tadpole: unknown %s handle", what);
	return tp_fail(TADPOLE_EBADF, msg);
}

static inline int tp_bad_method(int32_t m) {
	return (uint32_t)m - 1u >= (uint32_t)atomic_load_explicit(&tp_method_max, memory_order_relaxed);
}

static inline int tp_bad_exc(int32_t e) {
	return (uint32_t)e - 1u >= (uint32_t)atomic_load_explicit(&tp_exc_max, memory_order_relaxed);
}

/* tp_event records an event without strings: the hot path. */
static inline int tp_event(uint8_t kind, uint8_t flags, uint16_t line, int32_t m, int32_t e) {
	struct tp_thread *t = tp_self;
	/* The clock is read before the epoch (acquire keeps the order): an
	 * event that finds tracing on is stamped no later than the moment it
	 * looked, so none is stamped inside a suspend or pause taken after. */
	int64_t now = atomic_load_explicit(&tp_clock, memory_order_acquire);
	if (TP_LIKELY(t != NULL && t->ok_epoch == atomic_load_explicit(&tp_epoch, memory_order_relaxed))) {
		uint32_t pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
		if (TP_LIKELY(pos <= TP_BUF_SIZE - TP_HDR)) {
			tp_put_header(t->buf + pos, kind, flags, line, m, e, 0, 0, now);
			atomic_store_explicit(&t->pos, pos + TP_HDR, memory_order_release);
			return 0;
		}
		return tp_append(t, kind, flags, line, m, e, NULL, 0, NULL, 0);
	}
	/* Its own variable: t's address never escapes, so the fast path above
	 * keeps t in a register. */
	struct tp_thread *st = t;
	int rc = tp_enter_slow(&st);
	if (rc != 0)
		return rc > 0 ? 0 : rc;
	return tp_append(st, kind, flags, line, m, e, NULL, 0, NULL, 0);
}

static inline uint16_t tp_line(int line) {
	return line < 0 || line >= TP_NO_LINE ? TP_NO_LINE : (uint16_t)line;
}

/* ---- Recording calls with strings (UTF-8, or modified UTF-8 from jni) ---- */

/* tp_marker is tadpole_marker; flags is 0 or TP_FLAG_MUTF8. A modified
 * UTF-8 string has no 00 byte, and its characters' continuation bytes are
 * UTF-8's, so the same length and cut rules apply. */
int tp_marker(const char *key, const char *value, uint8_t flags) {
	if (key == NULL)
		return tp_fail(TADPOLE_EINVAL, "tadpole: marker key is NULL");
	struct tp_thread *t = tp_self;
	if (t == NULL || t->ok_epoch != atomic_load_explicit(&tp_epoch, memory_order_relaxed)) {
		int rc = tp_enter_slow(&t);
		if (rc != 0)
			return rc > 0 ? 0 : rc;
	}
	return tp_append(t, TP_KIND_MARKER, flags, 0, 0, 0, key, tp_utf8_len(key, TADPOLE_MAX_STRING), value,
	                 tp_utf8_len(value, TADPOLE_MAX_STRING));
}

/* tp_thread_name is tadpole_thread_name; flags as for tp_marker. The flags
 * stay with the name: every later check-in announces it again. */
int tp_thread_name(const char *name, uint8_t flags) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	if (name == NULL || name[0] == 0)
		return tp_fail(TADPOLE_EINVAL, "tadpole: thread name is NULL or empty");
	struct tp_thread *t = tp_thread_get();
	if (t == NULL)
		return TADPOLE_ENOMEM;
	uint16_t n = tp_utf8_len(name, TADPOLE_MAX_THREAD_NAME);
	memcpy(t->name, name, n);
	t->name[n] = 0;
	t->name_len = n;
	t->name_flags = flags;
	/* A thread checked in announces the new name at this point of the
	 * trace; any other announces it when it checks in. */
	if (t->ok_epoch == atomic_load_explicit(&tp_epoch, memory_order_relaxed))
		return tp_append(t, TP_KIND_NAME, t->name_flags, 0, 0, 0, t->name, t->name_len, NULL, 0);
	return TADPOLE_OK;
}

static void tp_raise_max(_Atomic int32_t *max, int32_t id) {
	int32_t cur = atomic_load(max);
	while (id > cur && !atomic_compare_exchange_weak(max, &cur, id)) {
	}
}

/* tp_set_key gives logger h its marker key unless it has one. A name too
 * long for a marker key leaves none: its records go through the agent. */
static void tp_set_key(int32_t h, const char *name, uint8_t flags) {
	if (atomic_load_explicit(&tp_logger_key[h], memory_order_acquire) != NULL)
		return;
	size_t n = strnlen(name, TADPOLE_MAX_STRING + 1);
	if (n + TP_LOG_PREFIX_LEN > TADPOLE_MAX_STRING)
		return;
	struct tp_lkey *k = malloc(sizeof *k + TP_LOG_PREFIX_LEN + n);
	if (k == NULL)
		return;
	k->len = (uint16_t)(TP_LOG_PREFIX_LEN + n);
	k->flags = flags;
	memcpy(k->s, TP_LOG_PREFIX, TP_LOG_PREFIX_LEN);
	memcpy(k->s + TP_LOG_PREFIX_LEN, name, n);
	struct tp_lkey *none = NULL;
	if (!atomic_compare_exchange_strong_explicit(&tp_logger_key[h], &none, k, memory_order_release,
	                                             memory_order_relaxed))
		free(k);
}
/* tp_logger_register is tadpole_logger_register; mutf8 says how the Go
 * side reads name. */
int32_t tp_logger_register(const char *name, int mutf8) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	if (name == NULL || name[0] == 0)
		return tp_fail(TADPOLE_EINVAL, "tadpole: logger name is NULL or empty");
	struct tp_thread *t = tp_thread_get();
	if (t == NULL)
		return TADPOLE_ENOMEM;
	int32_t h = tadpoleGoLogger((char *)name, mutf8, t->err, sizeof t->err);
	if (h > 0 && h <= TADPOLE_MAX_LOGGERS) {
		tp_set_key(h, name, mutf8 ? TP_FLAG_MUTF8 : 0);
		tp_lttng_name(h, name);
		tp_raise_max(&tp_logger_max, h);
	}
	return h;
}

/* Bytes of a level name kept in a record decided in C. */
#define TP_LEVEL_NAME_MAX 64

/* tp_log is tadpole_log; mutf8 says how the strings are encoded. A record
 * whose logger's rules C can apply (no filter expression) is recorded here
 * as a marker in the thread's buffer; otherwise one Go crossing applies
 * Logger.Log. */
int tp_log(int32_t h, int level, const char *level_name, const char *msg, int mutf8) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	if ((uint32_t)h - 1u >= (uint32_t)atomic_load(&tp_logger_max))
		return tp_bad_handle("logger");
	if (msg == NULL)
		return tp_fail(TADPOLE_EINVAL, "tadpole: log message is NULL");
	/* Into the LTTng sessions that enabled the logger, HQ or not (the JVM
	 * agent records its own, with the record's source). */
	int lt = !mutf8 && tp_lttng_wants(h, level);
	if (lt)
		tp_lttng_log(h, msg, NULL, NULL, NULL, -1, level, -1);
	struct tp_thread *t = tp_self;
	if (t == NULL || t->ok_epoch != atomic_load_explicit(&tp_epoch, memory_order_relaxed)) {
		int rc = tp_enter_slow(&t);
		if (rc != 0)
			return rc > 0 || lt ? 0 : rc; /* recorded into LTTng: not an error */
	}
	int d = tp_accept(h, level);
	if (d == TP_LOG_DROP)
		return TADPOLE_OK;
	uint8_t flags = mutf8 ? TP_FLAG_MUTF8 : 0;
	const struct tp_lkey *k = atomic_load_explicit(&tp_logger_key[h], memory_order_acquire);
	if (d == TP_LOG_RECORD && level_name != NULL && k != NULL && k->flags == flags) {
		/* Decided here: the marker agent.LogMarker would build. */
		uint32_t ln = tp_utf8_len(level_name, TP_LEVEL_NAME_MAX);
		uint32_t mn = tp_utf8_len(msg, TADPOLE_MAX_STRING - ln - 1);
		char *v = tp_reserve_log(t, k, flags, ln + 1 + mn);
		memcpy(v, level_name, ln);
		v[ln] = ' ';
		memcpy(v + ln + 1, msg, mn);
		tp_commit_log(t, ln + 1 + mn);
		return TADPOLE_OK;
	}
	/* Hand the thread's records over first (the queued ones, then the
	 * open buffer's in the same crossing), so that the record keeps its
	 * place among the thread's events. */
	pthread_mutex_lock(&tp_submit_mu);
	pthread_mutex_lock(&t->mu);
	tp_drain_locked();
	uint32_t pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	uint32_t from = tp_current(t) ? t->sent : pos;
	int rc = tadpoleGoLog(t->key, t->buf + from, (size_t)(pos - from), h, level, (char *)level_name, (char *)msg,
	                      mutf8, t->err, sizeof t->err);
	t->sent = 0;
	atomic_store_explicit(&t->pos, 0, memory_order_relaxed);
	pthread_mutex_unlock(&t->mu);
	pthread_mutex_unlock(&tp_submit_mu);
	return rc;
}
/* ---- Public API ---- */

int tadpole_enter(tadpole_method m) {
	if (TP_UNLIKELY(tp_bad_method(m)))
		return tp_bad_handle("method");
	return tp_event(TP_KIND_ENTRY, 0, 0, m, 0);
}

int tadpole_exit(tadpole_method m) {
	if (TP_UNLIKELY(tp_bad_method(m)))
		return tp_bad_handle("method");
	return tp_event(TP_KIND_EXIT, 0, TP_NO_LINE, m, 0);
}

int tadpole_exit_line(tadpole_method m, int line) {
	if (TP_UNLIKELY(tp_bad_method(m)))
		return tp_bad_handle("method");
	return tp_event(TP_KIND_EXIT, 0, tp_line(line), m, 0);
}

int tadpole_exception(tadpole_method m, tadpole_exc e, int line) {
	if (TP_UNLIKELY(tp_bad_method(m)))
		return tp_bad_handle("method");
	if (TP_UNLIKELY(tp_bad_exc(e)))
		return tp_bad_handle("exception type");
	return tp_event(TP_KIND_THROW, 0, tp_line(line), m, e);
}

int tadpole_bubble(tadpole_method m, tadpole_exc e) {
	if (TP_UNLIKELY(tp_bad_method(m)))
		return tp_bad_handle("method");
	if (TP_UNLIKELY(tp_bad_exc(e)))
		return tp_bad_handle("exception type");
	return tp_event(TP_KIND_BUBBLE, TP_FLAG_THROWN, 0, m, e);
}

int tadpole_marker(const char *key, const char *value) { return tp_marker(key, value, 0); }

int tadpole_thread_name(const char *name) { return tp_thread_name(name, 0); }

int tadpole_start(const char *options) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	struct tp_thread *t = tp_thread_get();
	if (t == NULL)
		return TADPOLE_ENOMEM;
	return tadpoleGoStart((char *)(options != NULL ? options : ""), t->err, sizeof t->err);
}

int tadpole_stop(void) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	struct tp_thread *t = tp_thread_get();
	if (t == NULL)
		return TADPOLE_ENOMEM;
	return tadpoleGoStop(t->err, sizeof t->err);
}

int tadpole_flush(void) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	if (!atomic_load(&tp_running) || !tp_live_mode(TP_EPOCH_MODE(atomic_load(&tp_epoch))))
		return tp_fail(TADPOLE_ENOTCONN, tp_msg_not_tracing);
	tp_flush_all(0);
	return TADPOLE_OK;
}

int tadpole_tracing(void) {
	return TP_EPOCH_MODE(atomic_load_explicit(&tp_epoch, memory_order_relaxed)) == TP_MODE_TRACING;
}

tadpole_method tadpole_method_register(const char *signature) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	if (signature == NULL || signature[0] == 0)
		return tp_fail(TADPOLE_EINVAL, "tadpole: method signature is NULL or empty");
	struct tp_thread *t = tp_thread_get();
	if (t == NULL)
		return TADPOLE_ENOMEM;
	int32_t id = tadpoleGoMethod((char *)signature, t->err, sizeof t->err);
	if (id > 0)
		tp_raise_max(&tp_method_max, id);
	return id;
}

tadpole_exc tadpole_exc_register(const char *name) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	if (name == NULL || name[0] == 0)
		return tp_fail(TADPOLE_EINVAL, "tadpole: exception name is NULL or empty");
	struct tp_thread *t = tp_thread_get();
	if (t == NULL)
		return TADPOLE_ENOMEM;
	int32_t id = tadpoleGoExc((char *)name, t->err, sizeof t->err);
	if (id > 0)
		tp_raise_max(&tp_exc_max, id);
	return id;
}

tadpole_logger tadpole_logger_register(const char *name) { return tp_logger_register(name, 0); }

int tadpole_logger_enabled(tadpole_logger h) {
	if ((uint32_t)h - 1u >= TADPOLE_MAX_LOGGERS)
		return 0;
	return (TP_ACC_KIND(atomic_load_explicit(&tp_logger_acc[h], memory_order_relaxed)) != TP_ACCEPT_NONE &&
	        TP_EPOCH_MODE(atomic_load_explicit(&tp_epoch, memory_order_relaxed)) == TP_MODE_TRACING) ||
	       tp_lttng_recording(h);
}

int tadpole_log(tadpole_logger h, int level, const char *level_name, const char *msg) {
	return tp_log(h, level, level_name, msg, 0);
}

size_t tadpole_errmsg(char *buf, size_t len) {
	struct tp_thread *t = tp_self;
	const char *msg = t != NULL ? t->err : "";
	size_t n = strlen(msg);
	if (buf != NULL && len > 0) {
		size_t c = n < len - 1 ? n : len - 1;
		memcpy(buf, msg, c);
		buf[c] = 0;
	}
	return n;
}

const char *tadpole_strerror(int code) {
	switch (code) {
	case TADPOLE_OK:
		return "success";
	case TADPOLE_EBADF:
		return "unknown handle";
	case TADPOLE_ECHILD:
		return "called in the child of fork()";
	case TADPOLE_ENOMEM:
		return "out of memory";
	case TADPOLE_EINVAL:
		return "invalid argument or option";
	case TADPOLE_ENOSPC:
		return "too many loggers";
	case TADPOLE_EPROTO:
		return "HQ protocol error";
	case TADPOLE_ENOTCONN:
		return "not tracing";
	case TADPOLE_ETIMEDOUT:
		return "no Start from HQ in time";
	case TADPOLE_ECONNREFUSED:
		return "HQ not reachable or rejected the agent";
	case TADPOLE_EALREADY:
		return "already tracing";
	case TADPOLE_EINTERNAL:
		return "internal error";
	}
	return "unknown tadpole error code";
}
