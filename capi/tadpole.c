/*
 * tadpole.c: the C side of libtadpole's C API: the tadpole_* entry points,
 * per-thread event buffers, flushing and fork handling. See doc.go for the
 * design; the Go side (the tadpoleGo* exports) owns the agent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tp.h"
#include "_cgo_export.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the batch record layout is little-endian; this encoder assumes a little-endian CPU"
#endif

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

/* Read by every recording call; written on mode changes only. */
static _Alignas(TP_CACHE_LINE) _Atomic uint32_t tp_epoch;
static _Atomic int32_t tp_method_max; /* highest method handle registered */
static _Atomic int32_t tp_exc_max;    /* highest exception handle registered */
static _Atomic int32_t tp_logger_max; /* highest logger handle registered */
/* The event clock: CLOCK_MONOTONIC ns, refreshed every millisecond by the
 * Go side while a run is on (the resolution of Bytefrog times). */
static _Alignas(TP_CACHE_LINE) _Atomic int64_t tp_clock;
/* How each logger handle's records are decided: TP_ACCEPT_* in the low
 * byte, the level in the high 32 bits; one load decides a record. */
static _Alignas(TP_CACHE_LINE) _Atomic uint64_t tp_logger_acc[TADPOLE_MAX_LOGGERS + 1];
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
static _Atomic(struct tp_lkey *) tp_logger_key[TADPOLE_MAX_LOGGERS + 1];
#define TP_LOG_PREFIX "log:"
#define TP_LOG_PREFIX_LEN (sizeof TP_LOG_PREFIX - 1)

static _Atomic int tp_forked;       /* set in the child of a fork */
static _Atomic uint32_t tp_gen;     /* session generation, from 1 */
static _Atomic int tp_running;      /* between tp_begin and tp_end */
static _Atomic uint64_t tp_next_key = 1;

/*
 * struct tp_buf is an event buffer: the bytes a thread records into and,
 * while it waits in the full queue for the Go drain, which of them to hand
 * over under which thread key. Buffers are interchangeable: a thread whose
 * buffer fills queues it and goes on in a spare one.
 */
struct tp_buf {
	struct tp_buf *next; /* in the full queue or the spare list */
	uint64_t key;        /* queued: the thread key of the records */
	uint32_t from, to;   /* queued: the records to hand over */
	uint32_t gen;        /* queued: their session generation */
	_Alignas(TP_ALIGN) unsigned char data[TP_BUF_SIZE + TP_BUF_SLACK];
};

/*
 * The full queue: a thread whose buffer fills pushes it here (lock-free,
 * newest first) instead of calling into Go, and takes a spare buffer. One
 * Go goroutine (tp_drain, tp_drain_idle) takes the queue, hands the buffers
 * to the agent oldest first and puts them back on the spare list. While
 * the queue is empty it waits in Go, on a pipe (tp_drain_fd) that the
 * first thread to queue a buffer then writes a byte to: a goroutine
 * blocked in a C call would hold on to its P and keep the Go runtime's
 * monitor thread waking every 20 µs to take it back. Every
 * hand-over to the agent (the drain, flushes, the Go path of tp_log) holds
 * tp_submit_mu, and a flush of a thread's open buffer first drains the
 * queue while it holds the thread's mu: a thread's records reach the agent
 * in order. At most TP_QUEUE_MAX buffers wait for the drain; a thread that
 * finds none spare then waits (back-pressure, nothing is dropped).
 *
 * Lock order: tp_submit_mu, tp_reg_mu, a thread's mu, tp_q_mu.
 */
#define TP_QUEUE_MAX 16
/* How long a thread waiting for a spare buffer sleeps before it checks
 * that the run is still on (ns). */
#define TP_SPARE_WAIT_NS 10000000
static _Atomic(struct tp_buf *) tp_full;
static _Atomic int tp_queued; /* buffers pushed and not yet put back */
static pthread_mutex_t tp_submit_mu = PTHREAD_MUTEX_INITIALIZER;
/* Under tp_q_mu: the spare list, the sleeps of threads waiting for a
 * spare buffer (tp_spare_cv), and the drain's pipe. */
static pthread_mutex_t tp_q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tp_spare_cv;
static struct tp_buf *tp_spares;
static int tp_spare_len;
static int tp_spare_waiters;
static int tp_drain_fd = -1;          /* write end of the drain's pipe */
static _Atomic int tp_drain_sleeping; /* the drain waits on its pipe */
static _Atomic int tp_drain_stop;     /* the drain is to end */

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

static __thread struct tp_thread *tp_self __attribute__((tls_model("initial-exec")));

/* The registry of live threads, the threads that exited with events still
 * buffered, and a pool of states (with their buffers) of exited threads for
 * new threads to reuse: a program that starts and ends threads all the time
 * then neither mallocs nor frees per thread (frees from the flushing thread
 * made glibc's per-thread arenas grow). Lock order: tp_reg_mu, then a
 * thread's mu. */
static pthread_mutex_t tp_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tp_thread *tp_threads;
static struct tp_thread *tp_orphans;
static struct tp_thread *tp_pool;
static int tp_pool_len;
#define TP_POOL_MAX 64
/* A program whose threads come and go quickly leaves an orphan per thread:
 * every TP_ORPHAN_WAKE orphans, a byte on tp_wake_fd (a pipe the Go side
 * reads) asks for a flush before the timer's. Both under tp_reg_mu. */
static int tp_orphan_len;
static int tp_wake_fd = -1;
#define TP_ORPHAN_WAKE 16

static pthread_key_t tp_key;
static int tp_key_ok;

static void tp_thread_exit(void *p);
static void tp_atfork_child(void);

__attribute__((constructor)) static void tp_init(void) {
	tp_key_ok = pthread_key_create(&tp_key, tp_thread_exit) == 0;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&tp_spare_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_atfork(NULL, NULL, tp_atfork_child);
}

/* In the child of a fork only the forking thread lives and the Go runtime
 * cannot run: the library goes inert. The parent's state is untouched. */
static void tp_atfork_child(void) {
	atomic_store(&tp_forked, 1);
	atomic_store(&tp_epoch, TP_MODE_NONE);
}

static int64_t tp_mono_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline uint32_t tp_align(uint32_t n) { return (n + TP_ALIGN - 1) & ~(uint32_t)(TP_ALIGN - 1); }

/* tp_spare_take returns a spare buffer, or a new one while fewer than
 * TP_QUEUE_MAX wait for the drain; NULL when the caller must wait (or out
 * of memory). It never blocks. */
static struct tp_buf *tp_spare_take(void) {
	pthread_mutex_lock(&tp_q_mu);
	struct tp_buf *b = tp_spares;
	if (b != NULL) {
		tp_spares = b->next;
		tp_spare_len--;
	}
	pthread_mutex_unlock(&tp_q_mu);
	if (b == NULL && atomic_load(&tp_queued) <= TP_QUEUE_MAX)
		b = malloc(sizeof *b);
	return b;
}

/* tp_spare_put puts the n buffers of list (linked by next) on the spare
 * list, freeing those beyond TP_QUEUE_MAX spares, and wakes the threads
 * waiting for one; queued of them came from the full queue. */
static void tp_spare_put(struct tp_buf *list, int queued) {
	pthread_mutex_lock(&tp_q_mu);
	while (list != NULL) {
		struct tp_buf *b = list;
		list = b->next;
		if (tp_spare_len >= TP_QUEUE_MAX) {
			free(b);
			continue;
		}
		b->next = tp_spares;
		tp_spares = b;
		tp_spare_len++;
	}
	atomic_fetch_sub(&tp_queued, queued);
	if (tp_spare_waiters > 0)
		pthread_cond_broadcast(&tp_spare_cv);
	pthread_mutex_unlock(&tp_q_mu);
}

/* tp_live reports whether records of generation gen may reach the agent. */
static int tp_live(uint32_t gen) { return gen == atomic_load(&tp_gen) && atomic_load(&tp_running); }

/* tp_drain_locked hands every queued buffer to the agent, oldest first,
 * and puts them back on the spare list; buffers of an ended session are
 * put back unsent. tp_submit_mu is held. It returns the number of buffers
 * taken. */
static int tp_drain_locked(void) {
	struct tp_buf *l = atomic_exchange(&tp_full, NULL);
	if (l == NULL)
		return 0;
	struct tp_buf *fifo = NULL;
	int n = 0;
	while (l != NULL) {
		struct tp_buf *b = l;
		l = b->next;
		b->next = fifo;
		fifo = b;
		n++;
	}
	for (struct tp_buf *b = fifo; b != NULL; b = b->next)
		if (b->to > b->from && tp_live(b->gen))
			tadpoleGoSubmit(b->key, b->data + b->from, (size_t)(b->to - b->from), NULL, 0);
	tp_spare_put(fifo, n);
	return n;
}

/* tp_drain_wake writes a byte to the drain's pipe (non-blocking: a full
 * pipe has a wake-up pending already). */
static void tp_drain_wake(void) {
	pthread_mutex_lock(&tp_q_mu);
	if (tp_drain_fd >= 0) {
		ssize_t r = write(tp_drain_fd, "d", 1);
		(void)r;
	}
	pthread_mutex_unlock(&tp_q_mu);
}

/* tp_full_push queues b for the drain and wakes the drain if it sleeps. */
static void tp_full_push(struct tp_buf *b) {
	atomic_fetch_add(&tp_queued, 1);
	struct tp_buf *head = atomic_load_explicit(&tp_full, memory_order_relaxed);
	do {
		b->next = head;
	} while (!atomic_compare_exchange_weak(&tp_full, &head, b));
	/* Seen after the push: a drain going to sleep sets the flag, then
	 * looks at the queue (both sequentially consistent). The first to
	 * clear the flag wakes it. */
	if (atomic_load(&tp_drain_sleeping) && atomic_exchange(&tp_drain_sleeping, 0))
		tp_drain_wake();
}

/* tp_spare_wait waits for a spare buffer after the caller queued one (so
 * that one at least comes back). Should the run end meanwhile with buffers
 * left in the queue (no drain to put them back), it puts them back itself;
 * the agent gets none of them then, as the run is over. */
static struct tp_buf *tp_spare_wait(void) {
	for (;;) {
		struct tp_buf *b = tp_spare_take();
		if (b != NULL)
			return b;
		pthread_mutex_lock(&tp_q_mu);
		if (tp_spares == NULL) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += TP_SPARE_WAIT_NS;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			tp_spare_waiters++;
			pthread_cond_timedwait(&tp_spare_cv, &tp_q_mu, &ts);
			tp_spare_waiters--;
		}
		pthread_mutex_unlock(&tp_q_mu);
		if (!atomic_load(&tp_running) && atomic_load(&tp_full) != NULL &&
		    pthread_mutex_trylock(&tp_submit_mu) == 0) {
			tp_drain_locked();
			pthread_mutex_unlock(&tp_submit_mu);
		}
	}
}

/* tp_utf8_len is the length of s capped at max bytes, cut at a UTF-8
 * character boundary. */
static uint16_t tp_utf8_len(const char *s, size_t max) {
	if (s == NULL)
		return 0;
	size_t n = strnlen(s, max + 1);
	if (n <= max)
		return (uint16_t)n;
	size_t cut = max;
	for (int k = 0; k < 3 && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80; k++)
		cut--;
	if (((unsigned char)s[cut] & 0xC0) == 0x80)
		cut = max; /* not UTF-8 here: cut anywhere */
	return (uint16_t)cut;
}

static void tp_set_err(struct tp_thread *t, const char *msg) {
	if (t == NULL)
		return;
	size_t n = strlen(msg);
	if (n >= sizeof t->err)
		n = sizeof t->err - 1;
	memcpy(t->err, msg, n);
	t->err[n] = 0;
}

static void tp_default_name(struct tp_thread *t) {
	char n[16] = "";
	const char *prog = program_invocation_short_name;
	size_t plen = strnlen(prog, 15);
	int named = pthread_getname_np(pthread_self(), n, sizeof n) == 0 && n[0] != 0 &&
	            !(strlen(n) == plen && strncmp(n, prog, plen) == 0);
	int len;
	if (named)
		len = snprintf(t->name, sizeof t->name, "%s", n);
	else if (t->tid == getpid())
		len = snprintf(t->name, sizeof t->name, "main");
	else
		len = snprintf(t->name, sizeof t->name, "thread-%d", (int)t->tid);
	t->name_len = len < 0 ? 0 : (uint16_t)len;
	t->name_flags = 0;
}

/* tp_thread_get returns the calling thread's state, creating it. In a fork
 * child the state is not registered: the registry lock may be held forever
 * there. */
static struct tp_thread *tp_thread_get(void) {
	struct tp_thread *t = tp_self;
	if (TP_LIKELY(t != NULL))
		return t;
	int forked = atomic_load(&tp_forked);
	struct tp_buf *bh = NULL;
	if (!forked) {
		pthread_mutex_lock(&tp_reg_mu);
		t = tp_pool;
		if (t != NULL) {
			tp_pool = t->next;
			tp_pool_len--;
		}
		pthread_mutex_unlock(&tp_reg_mu);
	}
	if (t != NULL) {
		bh = t->bh;
		pthread_mutex_destroy(&t->mu);
		memset(t, 0, sizeof *t);
	} else if ((t = calloc(1, sizeof *t)) == NULL) {
		return NULL;
	}
	pthread_mutex_init(&t->mu, NULL);
	t->bh = bh; /* its records belong to no session: gen 0 */
	t->buf = bh != NULL ? bh->data : NULL;
	t->ok_epoch = TP_EPOCH_NEVER;
	t->tid = (pid_t)syscall(SYS_gettid);
	t->key = atomic_fetch_add(&tp_next_key, 1);
	tp_default_name(t);
	if (!forked) {
		pthread_mutex_lock(&tp_reg_mu);
		t->next = tp_threads;
		if (tp_threads != NULL)
			tp_threads->prev = t;
		tp_threads = t;
		t->registered = 1;
		pthread_mutex_unlock(&tp_reg_mu);
	}
	if (tp_key_ok)
		pthread_setspecific(tp_key, t);
	tp_self = t;
	return t;
}

static void tp_free_thread(struct tp_thread *t) {
	pthread_mutex_destroy(&t->mu);
	if (t->bh != NULL) {
		t->bh->next = NULL;
		tp_spare_put(t->bh, 0);
	}
	free(t);
}

/* tp_retire_locked pools an exited thread's state, or frees it when the pool
 * is full; tp_reg_mu is held. */
static void tp_retire_locked(struct tp_thread *t) {
	if (tp_pool_len >= TP_POOL_MAX) {
		tp_free_thread(t);
		return;
	}
	t->prev = NULL;
	t->next = tp_pool;
	tp_pool = t;
	tp_pool_len++;
}

/* tp_live_mode reports whether mode belongs to a run that may still record. */
static int tp_live_mode(uint8_t mode) {
	return mode == TP_MODE_TRACING || mode == TP_MODE_PAUSED || mode == TP_MODE_SUSPENDED;
}

/* tp_thread_exit is the pthread key destructor. It never calls into Go
 * (the Go runtime's own key destructor may have released this thread's M
 * already): a buffer with events goes to the orphan list, which the next
 * flush hands over. */
static void tp_thread_exit(void *p) {
	struct tp_thread *t = p;
	tp_self = NULL;
	if (!t->registered) {
		tp_free_thread(t);
		return;
	}
	if (atomic_load(&tp_forked))
		return; /* the registry may be locked forever: leave it */
	pthread_mutex_lock(&tp_reg_mu);
	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		tp_threads = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	uint32_t pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	int pending = t->buf != NULL && pos > t->sent && t->gen == atomic_load(&tp_gen) &&
	              atomic_load(&tp_running) && tp_live_mode(TP_EPOCH_MODE(atomic_load(&tp_epoch)));
	if (pending) {
		t->prev = NULL;
		t->next = tp_orphans;
		tp_orphans = t;
		if (++tp_orphan_len % TP_ORPHAN_WAKE == 0 && tp_wake_fd >= 0) {
			/* Non-blocking: a full pipe has a wake-up pending already. */
			ssize_t r = write(tp_wake_fd, "w", 1);
			(void)r;
		}
	} else {
		tp_retire_locked(t);
	}
	pthread_mutex_unlock(&tp_reg_mu);
}

/* tp_hand_over gives [from, to) of t's buffer to the agent; t->mu is held. */
static int tp_hand_over(struct tp_thread *t, uint32_t from, uint32_t to, char *err, size_t errlen) {
	if (to <= from)
		return 0;
	return tadpoleGoSubmit(t->key, t->buf + from, (size_t)(to - from), err, errlen);
}

/* tp_current reports whether t's buffer belongs to the running session. */
static int tp_current(struct tp_thread *t) {
	return t->gen == atomic_load(&tp_gen) && atomic_load(&tp_running);
}

/* tp_rewind gives the owner's unsent records to the agent and starts an
 * empty buffer: the full one goes to the queue for the Go drain, and a
 * spare one replaces it (the thread waits for one when TP_QUEUE_MAX wait
 * already). Without a run the records are dropped; should no buffer be
 * had at all (out of memory), they are handed over at once, through Go. */
static int tp_rewind(struct tp_thread *t) {
	int rc = 0;
	pthread_mutex_lock(&t->mu);
	uint32_t pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	if (!tp_current(t) || pos <= t->sent) {
		t->sent = 0;
		atomic_store_explicit(&t->pos, 0, memory_order_relaxed);
		pthread_mutex_unlock(&t->mu);
		return 0;
	}
	struct tp_buf *nb = tp_spare_take();
	if (nb == NULL && atomic_load(&tp_queued) == 0) {
		rc = tp_hand_over(t, t->sent, pos, t->err, sizeof t->err);
		t->sent = 0;
		atomic_store_explicit(&t->pos, 0, memory_order_relaxed);
		pthread_mutex_unlock(&t->mu);
		return rc;
	}
	struct tp_buf *b = t->bh;
	b->key = t->key;
	b->from = t->sent;
	b->to = pos;
	b->gen = t->gen;
	tp_full_push(b);
	t->sent = 0;
	atomic_store_explicit(&t->pos, 0, memory_order_relaxed);
	t->bh = nb;
	t->buf = nb != NULL ? nb->data : NULL;
	pthread_mutex_unlock(&t->mu);
	if (nb == NULL) {
		/* Flushers skip the thread meanwhile: it has no buffer. */
		nb = tp_spare_wait();
		pthread_mutex_lock(&t->mu);
		t->bh = nb;
		t->buf = nb->data;
		pthread_mutex_unlock(&t->mu);
	}
	return 0;
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

/* tp_append appends one record with strings; the thread is checked in. */
static int tp_append(struct tp_thread *t, uint8_t kind, uint8_t flags, uint16_t line, int32_t m, int32_t e,
                     const char *s1, uint16_t l1, const char *s2, uint16_t l2) {
	uint32_t size = tp_align(TP_HDR + (uint32_t)l1 + (uint32_t)l2);
	uint32_t pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	int rc = 0;
	if (pos + size > TP_BUF_SIZE) {
		rc = tp_rewind(t);
		pos = 0;
	}
	unsigned char *r = t->buf + pos;
	tp_put_header(r, kind, flags, line, m, e, l1, l2, atomic_load_explicit(&tp_clock, memory_order_relaxed));
	if (l1 > 0)
		memcpy(r + TP_HDR, s1, l1);
	if (l2 > 0)
		memcpy(r + TP_HDR + l1, s2, l2);
	memset(r + TP_HDR + l1 + l2, 0, size - (TP_HDR + l1 + l2));
	atomic_store_explicit(&t->pos, pos + size, memory_order_release);
	return rc < 0 ? rc : 0;
}

/* tp_check_in makes t record into the current session: a new session
 * discards what an older one left in the buffer; every check-in announces
 * the thread's name, since a suspended or new run may not know it. */
static int tp_check_in(struct tp_thread *t, uint32_t epoch) {
	uint32_t gen = atomic_load(&tp_gen);
	if (t->gen != gen || t->buf == NULL) {
		pthread_mutex_lock(&t->mu);
		if (t->buf == NULL) {
			t->bh = tp_spare_take();
			if (t->bh == NULL)
				t->bh = malloc(sizeof *t->bh);
			t->buf = t->bh != NULL ? t->bh->data : NULL;
		}
		t->sent = 0;
		atomic_store_explicit(&t->pos, 0, memory_order_relaxed);
		t->gen = gen;
		pthread_mutex_unlock(&t->mu);
		if (t->buf == NULL) {
			tp_set_err(t, "tadpole: out of memory for the thread's event buffer");
			return TADPOLE_ENOMEM;
		}
	}
	t->ok_epoch = epoch;
	return tp_append(t, TP_KIND_NAME, t->name_flags, 0, 0, 0, t->name, t->name_len, NULL, 0);
}

static int tp_fail(int code, const char *msg) {
	tp_set_err(tp_thread_get(), msg);
	return code;
}

static const char tp_msg_forked[] = "tadpole: called in the child of fork(): the library is inert there";
static const char tp_msg_not_tracing[] = "tadpole: not tracing (not started, stopped, or HQ ended the run)";

/* tp_enter_slow brings the calling thread to a state where it may record.
 * It returns 0 to record, 1 to drop the event (suspended), or an error. */
static int tp_enter_slow(struct tp_thread **tp) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	struct tp_thread *t = tp_thread_get();
	if (t == NULL)
		return TADPOLE_ENOMEM;
	*tp = t;
	for (int spins = 0;;) {
		uint32_t epoch = atomic_load_explicit(&tp_epoch, memory_order_acquire);
		switch (TP_EPOCH_MODE(epoch)) {
		case TP_MODE_TRACING:
			if (t->ok_epoch == epoch)
				return 0;
			return tp_check_in(t, epoch);
		case TP_MODE_PAUSED:
			/* Blocks while the agent is paused; the published mode follows
			 * right after the agent's. */
			if (!tadpoleGoGate())
				return 1; /* suspended or ended meanwhile: not recorded */
			if (++spins > TP_GATE_SPINS)
				sched_yield();
			continue;
		case TP_MODE_SUSPENDED:
			return 1;
		default:
			tp_set_err(t, tp_msg_not_tracing);
			return TADPOLE_ENOTCONN;
		}
	}
}

static int tp_bad_handle(const char *what) {
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
	int rc = tp_enter_slow(&t);
	if (rc != 0)
		return rc > 0 ? 0 : rc;
	return tp_append(t, kind, flags, line, m, e, NULL, 0, NULL, 0);
}

static inline uint16_t tp_line(int line) {
	return line < 0 || line >= TP_NO_LINE ? TP_NO_LINE : (uint16_t)line;
}

/* ---- Recording calls with strings (UTF-8, or modified UTF-8 from jni) ---- */

/* tp_marker is tadpole_marker; flags is 0 or TP_FLAG_MUTF8. A modified
 * UTF-8 string has no 00 byte, and its characters' continuation bytes are
 * UTF-8's, so the same length and cut rules apply. */
static int tp_marker(const char *key, const char *value, uint8_t flags) {
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
static int tp_thread_name(const char *name, uint8_t flags) {
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

/* tp_reserve_log begins logger key k's marker with room for a value of at
 * most max bytes (at most TADPOLE_MAX_STRING), plus one byte past it that
 * the caller may overwrite (the buffer's slack), and returns where the
 * value goes; tp_commit_log ends it with the value's length. */
static char *tp_reserve_log(struct tp_thread *t, const struct tp_lkey *k, uint8_t flags, uint32_t max) {
	uint32_t size = tp_align(TP_HDR + (uint32_t)k->len + max);
	uint32_t pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	if (pos + size > TP_BUF_SIZE) {
		tp_rewind(t);
		pos = 0;
	}
	unsigned char *r = t->buf + pos;
	tp_put_header(r, TP_KIND_MARKER, flags, 0, 0, 0, k->len, 0,
	              atomic_load_explicit(&tp_clock, memory_order_relaxed));
	memcpy(r + TP_HDR, k->s, k->len);
	t->resv = 1;
	return (char *)r + TP_HDR + k->len;
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

/* tp_logger_register is tadpole_logger_register; mutf8 says how the Go
 * side reads name. */
static int32_t tp_logger_register(const char *name, int mutf8) {
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
static int tp_log(int32_t h, int level, const char *level_name, const char *msg, int mutf8) {
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

int tp_jmarker(const char *key, const char *value) { return tp_marker(key, value, TP_FLAG_MUTF8); }

int tp_jthread_name(const char *name) { return tp_thread_name(name, TP_FLAG_MUTF8); }

int32_t tp_jlogger_register(const char *name) { return tp_logger_register(name, 1); }

int tp_jlog(int32_t h, int level, const char *level_name, const char *msg) {
	return tp_log(h, level, level_name, msg, 1);
}

/* ---- The JVM agent's threads and records ---- */

void tp_jhost(void) {
	uint64_t cur = atomic_load(&tp_next_key);
	while (cur < TP_KEY_BASE_JVM && !atomic_compare_exchange_weak(&tp_next_key, &cur, TP_KEY_BASE_JVM)) {
	}
}

int tp_jenter(int32_t name_hash) {
	struct tp_thread *t = tp_self;
	if (TP_LIKELY(t != NULL && t->java && t->ok_epoch == atomic_load_explicit(&tp_epoch, memory_order_relaxed)))
		return t->name_hash == name_hash ? TP_J_RECORD : TP_J_RENAME;
	if (!tp_live_mode(TP_EPOCH_MODE(atomic_load_explicit(&tp_epoch, memory_order_relaxed))))
		return TP_J_DROP; /* no run: not even bound */
	if (t == NULL || !t->java)
		return TP_J_BIND;
	if (tp_enter_slow(&t) != 0)
		return TP_J_DROP;
	return t->name_hash == name_hash ? TP_J_RECORD : TP_J_RENAME;
}

/* tp_jset_name sets a Java thread's name and hash. */
static void tp_jset_name(struct tp_thread *t, const char *name, int32_t name_hash) {
	uint16_t n = tp_utf8_len(name, TADPOLE_MAX_THREAD_NAME);
	memcpy(t->name, name, n);
	t->name[n] = 0;
	t->name_len = n;
	t->name_flags = TP_FLAG_MUTF8;
	t->name_hash = name_hash;
}

int tp_jbind(int64_t java_id, const char *name, int32_t name_hash) {
	if (atomic_load(&tp_forked))
		return tp_fail(TADPOLE_ECHILD, tp_msg_forked);
	if (name == NULL || java_id <= 0)
		return tp_fail(TADPOLE_EINVAL, "tadpole: no Java thread id or name");
	struct tp_thread *t = tp_thread_get();
	if (t == NULL)
		return TADPOLE_ENOMEM;
	if (!t->java || t->key != (uint64_t)java_id) {
		if (t->buf != NULL && tp_current(t) && t->ok_epoch != TP_EPOCH_NEVER) {
			/* Records under the old key: end that thread, hand them over. */
			tp_append(t, TP_KIND_END, 0, 0, 0, 0, NULL, 0, NULL, 0);
			tp_rewind(t);
		}
		t->key = (uint64_t)java_id;
		t->java = 1;
		t->ok_epoch = TP_EPOCH_NEVER; /* checks in (announces itself) again */
	}
	tp_jset_name(t, name, name_hash);
	/* Announce the thread now while tracing; in any other mode at its first
	 * record (a paused run would block the caller here). */
	uint32_t epoch = atomic_load_explicit(&tp_epoch, memory_order_acquire);
	if (TP_EPOCH_MODE(epoch) == TP_MODE_TRACING && t->ok_epoch != epoch)
		return tp_check_in(t, epoch);
	return TADPOLE_OK;
}

int tp_jrename(const char *name, int32_t name_hash) {
	struct tp_thread *t = tp_self;
	if (t == NULL || !t->java || name == NULL)
		return TADPOLE_EINVAL;
	tp_jset_name(t, name, name_hash);
	if (t->ok_epoch == atomic_load_explicit(&tp_epoch, memory_order_relaxed))
		return tp_append(t, TP_KIND_NAME, t->name_flags, 0, 0, 0, t->name, t->name_len, NULL, 0);
	return TADPOLE_OK;
}

void tp_jend(void) {
	struct tp_thread *t = tp_self;
	if (t == NULL)
		return;
	if (t->buf != NULL && tp_current(t) && t->ok_epoch != TP_EPOCH_NEVER)
		tp_append(t, TP_KIND_END, 0, 0, 0, 0, NULL, 0, NULL, 0);
	/* What the key destructor would do at thread exit, now: the JVM may
	 * keep the OS thread (it does not, but nothing says so). */
	if (tp_key_ok)
		pthread_setspecific(tp_key, NULL);
	tp_thread_exit(t);
}

int tp_jlog_accept(int32_t h, int level) {
	if ((uint32_t)h - 1u >= (uint32_t)atomic_load_explicit(&tp_logger_max, memory_order_relaxed))
		return TP_LOG_DROP;
	return tp_accept(h, level);
}

char *tp_jlog_reserve(int32_t h, uint32_t max) {
	struct tp_thread *t = tp_self;
	if (t == NULL || t->buf == NULL || max > TADPOLE_MAX_STRING ||
	    (uint32_t)h - 1u >= (uint32_t)atomic_load_explicit(&tp_logger_max, memory_order_relaxed))
		return NULL;
	const struct tp_lkey *k = atomic_load_explicit(&tp_logger_key[h], memory_order_acquire);
	if (k == NULL || k->flags != TP_FLAG_MUTF8)
		return NULL;
	return tp_reserve_log(t, k, TP_FLAG_MUTF8, max);
}

int tp_thread_count(void) {
	int n = 0;
	pthread_mutex_lock(&tp_reg_mu);
	for (struct tp_thread *t = tp_threads; t != NULL; t = t->next)
		n++;
	n += tp_orphan_len;
	pthread_mutex_unlock(&tp_reg_mu);
	return n;
}

void tp_jlog_commit(uint32_t value_len) {
	struct tp_thread *t = tp_self;
	if (t != NULL && t->resv)
		tp_commit_log(t, value_len);
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

/* ---- Called by the Go side ---- */

void tp_begin(void) {
	pthread_mutex_lock(&tp_reg_mu);
	atomic_store(&tp_clock, tp_mono_ns());
	atomic_fetch_add(&tp_gen, 1);
	atomic_store(&tp_running, 1);
	pthread_mutex_unlock(&tp_reg_mu);
}

void tp_end(void) {
	pthread_mutex_lock(&tp_submit_mu);
	pthread_mutex_lock(&tp_reg_mu);
	atomic_store(&tp_running, 0);
	while (tp_orphans != NULL) {
		struct tp_thread *o = tp_orphans;
		tp_orphans = o->next;
		tp_retire_locked(o);
	}
	tp_orphan_len = 0;
	pthread_mutex_unlock(&tp_reg_mu);
	tp_drain_locked(); /* not running: puts them back unsent */
	pthread_mutex_unlock(&tp_submit_mu);
}

void tp_set_wake_fd(int fd) {
	pthread_mutex_lock(&tp_reg_mu);
	tp_wake_fd = fd;
	pthread_mutex_unlock(&tp_reg_mu);
}

void tp_set_mode(uint8_t mode) {
	uint32_t e = atomic_load(&tp_epoch);
	if (TP_EPOCH_MODE(e) == mode)
		return; /* no change: threads need not check in again */
	/* Tracing begins with the clock up to date: its ticker may be starved
	 * on a busy host, and no event from now on may carry an older time. */
	if (mode == TP_MODE_TRACING)
		tp_clock_tick();
	atomic_store_explicit(&tp_epoch, ((e >> 8) + 1) << 8 | mode, memory_order_release);
}

void tp_clock_tick(void) { atomic_store_explicit(&tp_clock, tp_mono_ns(), memory_order_release); }

void tp_set_logger(int32_t h, int kind, int32_t level) {
	if ((uint32_t)h - 1u < TADPOLE_MAX_LOGGERS)
		atomic_store_explicit(&tp_logger_acc[h], (uint64_t)(uint32_t)level << 32 | (uint8_t)kind,
		                      memory_order_relaxed);
}

int tp_flush_all(int skip_paused) {
	int n = 0;
	if (atomic_load(&tp_forked))
		return 0;
	pthread_mutex_lock(&tp_submit_mu);
	pthread_mutex_lock(&tp_reg_mu);
	if (!atomic_load(&tp_running) ||
	    (skip_paused && TP_EPOCH_MODE(atomic_load(&tp_epoch)) == TP_MODE_PAUSED)) {
		pthread_mutex_unlock(&tp_reg_mu);
		pthread_mutex_unlock(&tp_submit_mu);
		return 0;
	}
	uint32_t gen = atomic_load(&tp_gen);
	for (struct tp_thread *t = tp_threads; t != NULL; t = t->next) {
		if (skip_paused && TP_EPOCH_MODE(atomic_load(&tp_epoch)) == TP_MODE_PAUSED)
			break;
		pthread_mutex_lock(&t->mu);
		/* The thread's queued buffers go first: they hold its older
		 * records. */
		if (atomic_load(&tp_full) != NULL)
			n += tp_drain_locked();
		if (t->buf != NULL && t->gen == gen) {
			uint32_t pos = atomic_load_explicit(&t->pos, memory_order_acquire);
			if (pos > t->sent) {
				tp_hand_over(t, t->sent, pos, NULL, 0);
				t->sent = pos;
				n++;
			}
			/* The owner itself (tadpole_flush) may rewind: it is not
			 * writing now. */
			if (t == tp_self) {
				t->sent = 0;
				atomic_store_explicit(&t->pos, 0, memory_order_relaxed);
			}
		}
		pthread_mutex_unlock(&t->mu);
	}
	/* Exited threads queued their last full buffers before they exited. */
	if (!(skip_paused && TP_EPOCH_MODE(atomic_load(&tp_epoch)) == TP_MODE_PAUSED))
		n += tp_drain_locked();
	struct tp_thread *o = tp_orphans;
	tp_orphans = NULL;
	tp_orphan_len = 0;
	for (; o != NULL;) {
		struct tp_thread *next = o->next;
		uint32_t pos = atomic_load_explicit(&o->pos, memory_order_relaxed);
		if (o->gen == gen && pos > o->sent) {
			tp_hand_over(o, o->sent, pos, NULL, 0);
			n++;
		}
		tp_retire_locked(o);
		o = next;
	}
	pthread_mutex_unlock(&tp_reg_mu);
	pthread_mutex_unlock(&tp_submit_mu);
	return n;
}

int tp_drain_idle(void) {
	atomic_store(&tp_drain_sleeping, 1);
	if (atomic_load(&tp_full) == NULL && !atomic_load(&tp_drain_stop))
		return 0;
	atomic_store(&tp_drain_sleeping, 0);
	return 1;
}

int tp_drain_stopped(void) { return atomic_load(&tp_drain_stop); }

void tp_set_drain_fd(int fd) {
	pthread_mutex_lock(&tp_q_mu);
	tp_drain_fd = fd;
	pthread_mutex_unlock(&tp_q_mu);
}

int tp_drain(void) {
	pthread_mutex_lock(&tp_submit_mu);
	int n = tp_drain_locked();
	pthread_mutex_unlock(&tp_submit_mu);
	return n;
}

void tp_drain_quit(int quit) {
	atomic_store(&tp_drain_stop, quit);
	if (quit)
		tp_drain_wake();
}
