/*
 * recorder.c: the recorder under the C API (api.c) and the JVM host
 * (jvmhost.c): per-thread event buffers, the full queue and its spare pool,
 * the wake pipes of the Go drain and of early flushes, the thread registry,
 * session generations, flushing and fork handling. See doc.go for the
 * design; recorder.h declares what api.c and jvmhost.c use of it.
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

#include "jvmhost.h" /* tp_thread_count */
#include "recorder.h"
#include "_cgo_export.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the batch record layout is little-endian; this encoder assumes a little-endian CPU"
#endif

/* Read by every recording call; written on mode changes only. */
_Alignas(TP_CACHE_LINE) _Atomic uint32_t tp_epoch;
_Atomic int32_t tp_logger_max; /* highest logger handle registered */
/* The event clock: CLOCK_MONOTONIC ns, refreshed every millisecond by the
 * Go side while a run is on (the resolution of Bytefrog times). */
_Alignas(TP_CACHE_LINE) _Atomic int64_t tp_clock;
/* How each logger handle's records are decided: TP_ACCEPT_* in the low
 * byte, the level in the high 32 bits; one load decides a record. */
_Alignas(TP_CACHE_LINE) _Atomic uint64_t tp_logger_acc[TADPOLE_MAX_LOGGERS + 1];
_Atomic(struct tp_lkey *) tp_logger_key[TADPOLE_MAX_LOGGERS + 1];

_Atomic int tp_forked;       /* set in the child of a fork */
_Atomic uint32_t tp_gen;     /* session generation, from 1 */
_Atomic int tp_running;      /* between tp_begin and tp_end */
_Atomic uint64_t tp_next_key = 1; /* the next thread key */

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
pthread_mutex_t tp_submit_mu = PTHREAD_MUTEX_INITIALIZER;
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

/* The calling thread's state (recorder.h). */
__thread struct tp_thread *tp_self __attribute__((tls_model("initial-exec")));

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

pthread_key_t tp_key;
int tp_key_ok;

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
int tp_drain_locked(void) {
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
uint16_t tp_utf8_len(const char *s, size_t max) {
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

void tp_set_err(struct tp_thread *t, const char *msg) {
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
struct tp_thread *tp_thread_get(void) {
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
/* tp_thread_exit is the pthread key destructor. It never calls into Go
 * (the Go runtime's own key destructor may have released this thread's M
 * already): a buffer with events goes to the orphan list, which the next
 * flush hands over. */
void tp_thread_exit(void *p) {
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

/* tp_rewind gives the owner's unsent records to the agent and starts an
 * empty buffer: the full one goes to the queue for the Go drain, and a
 * spare one replaces it (the thread waits for one when TP_QUEUE_MAX wait
 * already). Without a run the records are dropped; should no buffer be
 * had at all (out of memory), they are handed over at once, through Go. */
int tp_rewind(struct tp_thread *t) {
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

/* tp_append appends one record with strings; the thread is checked in. */
int tp_append(struct tp_thread *t, uint8_t kind, uint8_t flags, uint16_t line, int32_t m, int32_t e,
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
int tp_check_in(struct tp_thread *t, uint32_t epoch) {
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

int tp_fail(int code, const char *msg) {
	tp_set_err(tp_thread_get(), msg);
	return code;
}

const char tp_msg_forked[] = "tadpole: called in the child of fork(): the library is inert there";
const char tp_msg_not_tracing[] = "tadpole: not tracing (not started, stopped, or HQ ended the run)";

/* tp_enter_slow brings the calling thread to a state where it may record.
 * It returns 0 to record, 1 to drop the event (suspended), or an error. */
int tp_enter_slow(struct tp_thread **tp) {
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
/* tp_reserve_log begins logger key k's marker with room for a value of at
 * most max bytes (at most TADPOLE_MAX_STRING), plus one byte past it that
 * the caller may overwrite (the buffer's slack), and returns where the
 * value goes; tp_commit_log ends it with the value's length. */
char *tp_reserve_log(struct tp_thread *t, const struct tp_lkey *k, uint8_t flags, uint32_t max) {
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

int tp_thread_count(void) {
	int n = 0;
	pthread_mutex_lock(&tp_reg_mu);
	for (struct tp_thread *t = tp_threads; t != NULL; t = t->next)
		n++;
	n += tp_orphan_len;
	pthread_mutex_unlock(&tp_reg_mu);
	return n;
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
