/*
 * recorder.h: the C side's internal header, shared by recorder.c (the
 * recorder: thread states, event buffers, the full queue and spare pool,
 * wake pipes, flushing, fork handling), api.c (the public C API) and
 * jvmhost.c (the JVM host's tp_j* functions). C only: no Go preamble
 * includes it. Everything declared here is hidden (the package builds with
 * -fvisibility=hidden, and TP_INTERNAL says so again): libtadpole.so
 * exports only tadpole_* and the JVMTI entry points.
 *
 * Lock order: tp_submit_mu, tp_reg_mu, a thread's mu, tp_q_mu (tp_reg_mu
 * and tp_q_mu are recorder.c's own).
 */
#ifndef TADPOLE_CAPI_RECORDER_H
#define TADPOLE_CAPI_RECORDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "tp.h"

#define TP_LIKELY(x) __builtin_expect(!!(x), 1)
#define TP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TP_CACHE_LINE 64

/*
 * The epoch is what a recording call tests: (counter << 8) | mode. The
 * counter grows with every mode change, so a thread whose cached epoch
 * matches knows that tracing is on and that it already announced itself
 * since the last change. TP_EPOCH_NEVER is a value no epoch takes (mode
 * 0xFF), the cached value of a thread that never recorded.
 */
#define TP_EPOCH_MODE(e) ((uint8_t)((e) & 0xFF))
#define TP_EPOCH_NEVER 0xFFFFFFFFu
/* Spins of a paused thread waiting for the mode to follow the agent's. */
#define TP_GATE_SPINS 1000

/* A logger's tp_logger_acc word: TP_ACCEPT_* in the low byte, the level in
 * the high 32 bits. */
#define TP_ACC_KIND(a) ((int)((a) & 0xFF))
#define TP_ACC_LEVEL(a) ((int32_t)(uint32_t)((a) >> 32))

/* struct tp_lkey is a logger's marker key, "log:<name>", in the encoding
 * of its first registration (flags 0 or TP_FLAG_MUTF8); set once, never
 * freed. */
struct tp_lkey {
	uint16_t len;
	uint8_t flags;
	char s[];
};
#define TP_LOG_PREFIX "log:"
#define TP_LOG_PREFIX_LEN (sizeof TP_LOG_PREFIX - 1)

/* struct tp_buf is an event buffer (recorder.c). */
struct tp_buf;

/*
 * struct tp_thread is one OS thread's state; the thread-local variable
 * tp_self points to it. The owner thread appends records at pos without a
 * lock and publishes them with a release store of pos. A flusher (the Go
 * timer, tadpole_flush, tadpole_stop) takes mu and hands over
 * [sent, pos); the owner takes mu only to hand over a full buffer and
 * rewind it. So the owner's hot path has no atomic read-modify-write and
 * no lock, and the flusher never reads bytes the owner is writing.
 */
struct tp_thread {
	/* Written by the owner only. */
	uint32_t ok_epoch;    /* the epoch this thread last checked in at */
	_Atomic uint32_t pos; /* end of the records written; flushers load it */
	unsigned char *buf;   /* bh->data, TP_BUF_SIZE bytes; set under mu */
	struct tp_buf *bh;    /* the buffer; NULL while waiting for a spare */

	/* Under mu (owner and flushers). */
	pthread_mutex_t mu;
	uint32_t sent; /* records before it were handed over */
	uint32_t gen;  /* session generation of the records in buf */

	/* Under tp_reg_mu. */
	struct tp_thread *next, *prev;
	int registered;

	/* Immutable, or owner only. */
	uint64_t key; /* SubmitBatch thread key: a Java thread id when java */
	pid_t tid;
	uint8_t java;      /* bound to a Java thread (tp_jbind) */
	int32_t name_hash; /* Java: the name's String.hashCode */
	uint8_t resv;      /* a record begun by tp_reserve_log is open */
	uint16_t name_len;
	uint8_t name_flags; /* TP_FLAG_MUTF8 for a name from the JVM */
	char name[TADPOLE_MAX_THREAD_NAME + 1];
	char err[TP_ERR_SIZE]; /* last error message */
};

/* ---- The recorder's state (recorder.c) ---- */

/* Read by every recording call; written on mode changes only. */
TP_INTERNAL extern _Alignas(TP_CACHE_LINE) _Atomic uint32_t tp_epoch;
/* The event clock: CLOCK_MONOTONIC ns, refreshed every millisecond by the
 * Go side while a run is on (the resolution of Bytefrog times). */
TP_INTERNAL extern _Alignas(TP_CACHE_LINE) _Atomic int64_t tp_clock;
/* The calling thread's state; NULL before its first call. */
TP_INTERNAL extern __thread struct tp_thread *tp_self __attribute__((tls_model("initial-exec")));

TP_INTERNAL extern _Atomic int32_t tp_logger_max; /* highest logger handle registered */
/* How each logger handle's records are decided (TP_ACC_KIND, TP_ACC_LEVEL):
 * one load decides a record. */
TP_INTERNAL extern _Alignas(TP_CACHE_LINE) _Atomic uint64_t tp_logger_acc[TADPOLE_MAX_LOGGERS + 1];
TP_INTERNAL extern _Atomic(struct tp_lkey *) tp_logger_key[TADPOLE_MAX_LOGGERS + 1];

TP_INTERNAL extern _Atomic int tp_forked;       /* set in the child of a fork */
TP_INTERNAL extern _Atomic uint32_t tp_gen;     /* session generation, from 1 */
TP_INTERNAL extern _Atomic int tp_running;      /* between tp_begin and tp_end */
TP_INTERNAL extern _Atomic uint64_t tp_next_key; /* the next thread key */
/* Held by every hand-over to the agent: a thread's records reach it in
 * order. */
TP_INTERNAL extern pthread_mutex_t tp_submit_mu;
/* The key whose destructor (tp_thread_exit) ends a thread's state. */
TP_INTERNAL extern pthread_key_t tp_key;
TP_INTERNAL extern int tp_key_ok;

TP_INTERNAL extern const char tp_msg_forked[];
TP_INTERNAL extern const char tp_msg_not_tracing[];

/* ---- The recorder's calls (recorder.c) ---- */

/* tp_thread_get returns the calling thread's state, creating it (NULL: out
 * of memory). */
TP_INTERNAL struct tp_thread *tp_thread_get(void);
/* tp_thread_exit is the pthread key destructor: it ends t's state, its
 * unsent records going to the orphans the next flush hands over. */
TP_INTERNAL void tp_thread_exit(void *t);
/* tp_utf8_len is the length of s capped at max bytes, cut at a UTF-8
 * character boundary. */
TP_INTERNAL uint16_t tp_utf8_len(const char *s, size_t max);
/* tp_set_err sets t's last error message (t may be NULL). */
TP_INTERNAL void tp_set_err(struct tp_thread *t, const char *msg);
/* tp_fail sets the calling thread's last error message and returns code. */
TP_INTERNAL int tp_fail(int code, const char *msg);
/* tp_enter_slow brings the calling thread (*tp) to a state where it may
 * record: 0 to record, 1 to drop the event (suspended), or an error. */
TP_INTERNAL int tp_enter_slow(struct tp_thread **tp);
/* tp_check_in makes t record into the current session (epoch), announcing
 * its name. */
TP_INTERNAL int tp_check_in(struct tp_thread *t, uint32_t epoch);
/* tp_append appends one record with strings; the thread is checked in. */
TP_INTERNAL int tp_append(struct tp_thread *t, uint8_t kind, uint8_t flags, uint16_t line, int32_t m, int32_t e,
                          const char *s1, uint16_t l1, const char *s2, uint16_t l2);
/* tp_rewind hands t's unsent records over (to the full queue) and starts
 * an empty buffer. */
TP_INTERNAL int tp_rewind(struct tp_thread *t);
/* tp_drain_locked hands every queued buffer to the agent, oldest first;
 * tp_submit_mu is held. It returns the number of buffers taken. */
TP_INTERNAL int tp_drain_locked(void);
/* tp_reserve_log begins logger key k's marker with room for a value of at
 * most max bytes plus one, and returns where the value goes;
 * tp_commit_log ends it. */
TP_INTERNAL char *tp_reserve_log(struct tp_thread *t, const struct tp_lkey *k, uint8_t flags, uint32_t max);

/* ---- The C API's calls with an encoding (api.c) ----
 * flags is 0 or TP_FLAG_MUTF8, mutf8 0 or 1: UTF-8 from a C host, Java's
 * modified UTF-8 from the JVM host. */

TP_INTERNAL int tp_marker(const char *key, const char *value, uint8_t flags);
TP_INTERNAL int tp_thread_name(const char *name, uint8_t flags);
TP_INTERNAL int32_t tp_logger_register(const char *name, int mutf8);
TP_INTERNAL int tp_log(int32_t h, int level, const char *level_name, const char *msg, int mutf8);

/* ---- Inline helpers ---- */

static inline uint32_t tp_align(uint32_t n) { return (n + TP_ALIGN - 1) & ~(uint32_t)(TP_ALIGN - 1); }

/* tp_live_mode reports whether mode belongs to a run that may still record. */
static inline int tp_live_mode(uint8_t mode) {
	return mode == TP_MODE_TRACING || mode == TP_MODE_PAUSED || mode == TP_MODE_SUSPENDED;
}

/* tp_current reports whether t's buffer belongs to the running session. */
static inline int tp_current(struct tp_thread *t) {
	return t->gen == atomic_load(&tp_gen) && atomic_load(&tp_running);
}

static inline void tp_put_header(unsigned char *r, uint8_t kind, uint8_t flags, uint16_t line, int32_t m,
                                 int32_t e, uint16_t l1, uint16_t l2, int64_t now) {
	uint64_t w0 = (uint64_t)kind | (uint64_t)flags << 8 | (uint64_t)line << 16 | (uint64_t)(uint32_t)m << 32;
	uint64_t w1 = (uint64_t)(uint32_t)e | (uint64_t)l1 << 32 | (uint64_t)l2 << 48;
	uint64_t w2 = (uint64_t)now;
	memcpy(r, &w0, 8);
	memcpy(r + 8, &w1, 8);
	memcpy(r + 16, &w2, 8);
}

/* tp_accept decides on a record of logger h (a valid handle) at level. */
static inline int tp_accept(int32_t h, int level) {
	uint64_t a = atomic_load_explicit(&tp_logger_acc[h], memory_order_relaxed);
	switch (TP_ACC_KIND(a)) {
	case TP_ACCEPT_ALL:
		return TP_LOG_RECORD;
	case TP_ACCEPT_RANGE:
		return level >= TP_ACC_LEVEL(a) ? TP_LOG_RECORD : TP_LOG_DROP;
	case TP_ACCEPT_SINGLE:
		return level == TP_ACC_LEVEL(a) ? TP_LOG_RECORD : TP_LOG_DROP;
	case TP_ACCEPT_LOG:
		return TP_LOG_GO;
	}
	return TP_LOG_DROP;
}

/* tp_commit_log ends the record tp_reserve_log began: its value is vlen
 * bytes (no more than reserved); the padding after it is zeroed. */
static inline void tp_commit_log(struct tp_thread *t, uint32_t vlen) {
	uint32_t pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	unsigned char *r = t->buf + pos;
	uint16_t klen, l2 = (uint16_t)vlen;
	memcpy(&klen, r + TP_OFF_LEN1, sizeof klen);
	memcpy(r + TP_OFF_LEN2, &l2, sizeof l2);
	uint32_t used = TP_HDR + (uint32_t)klen + vlen;
	uint32_t size = tp_align(used);
	memset(r + used, 0, size - used);
	atomic_store_explicit(&t->pos, pos + size, memory_order_release);
	t->resv = 0;
}

#endif /* TADPOLE_CAPI_RECORDER_H */
