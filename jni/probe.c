/*
 * probe.c: method tracing. The class file load hook hands classes to the Go
 * rewriter (jvm/instrument, policy in probe.go); the probes call
 * io.tadpole.Probe, which the agent puts on the bootstrap class path in a
 * generated one-package jar and whose natives are bound here. A thread's
 * events sit in its Java long[] buffer; flush0 copies a full buffer once
 * into a buffer of the hand-over pool and pushes it onto the hand-over
 * queue (lock-free), and one Go goroutine (the converter, probe.go) turns
 * the queued buffers into host batches, oldest first: the traced thread
 * pays a copy, not the conversion. A buffer of probe words alone is lent
 * to the agent as it is (host.HandProbes): its drain encodes the words in
 * place and gives the buffer back (tpj_q_release). ThreadEnd and VMDeath flush what the
 * buffers hold, after the queue: each thread's Probe$Buf is kept as a
 * global reference in a registry. See doc.go, Method tracing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jvmhost.h"
#include "recorder.h"
#include "tpjc.h"
#include "tpjp.h"
#include "_cgo_export.h"

/* 1 once the hook may call the Go side (the jar is on the boot class path). */
static atomic_int tpj_hook_on;
/* 1 once Probe's natives are bound. */
static atomic_int tpj_probe_bound;
/* 1 once the class file load hook is enabled: at VM start when the agent
 * started or call sites are rewritten without HQ (tpj_sites_only), else
 * when tracing first begins (then the loaded classes are retransformed). */
static atomic_int tpj_hook_enabled;
static void tpj_enable_hook(void);
/* 1 once classes get method probes: the agent started, or tracing began. */
static atomic_int tpj_methods_on;
/* 1 when classes that call java.util.logging.Logger get call-site probes
 * even when no method is traced (LTTng recording with its source, no HQ
 * run, or HQ not tracing the class): the JUL handler then names a
 * record's source without a stack walk. */
static atomic_int tpj_sites_only;

static jclass tpj_probe_class; /* global ref */
static _Atomic(jobject) tpj_tick_thread; /* global ref: the agent's own, left out of the trace */
static jfieldID tpj_probe_on, tpj_probe_now, tpj_probe_tick, tpj_probe_epoch;
static jfieldID tpj_probe_hot; /* Probe.HOT, the Buf per thread id slot */
static jfieldID tpj_buf_a, tpj_buf_n, tpj_buf_tid, tpj_buf_gen, tpj_probe_gen, tpj_buf_last;
/* 1 when the loaded classes are to be retransformed (HQ's filters changed). */
static atomic_int tpj_retransform_wanted;

/* The calling thread's Probe$Buf (a global ref), and its copy buffer. */
static __thread jobject tpj_my_buf;
static __thread int64_t *tpj_my_copy;
/* 1 once the thread handed a probe buffer over: its C API records (its
 * name) went first. */
static __thread int tpj_my_flushed;
/* 1 when the thread logged into its C API buffer since its last probe
 * flush: that buffer goes first at the next one (jul_order=on). */
static __thread int tpj_my_logged;
/* 1 when the thread queued a buffer for the converter since its last
 * synchronous hand-over. */
static __thread int tpj_my_queued;
/* jul_order=on: JUL records keep their order with the thread's calls. */
static int tpj_jul_order;
/* JUL records in the probe buffers (JulHandler → Probe.JUL_SINK): the Buf
 * whose chars the hand-over under way takes (tpj_jul_take), the calling
 * thread's copy of them for synchronous hand-overs, and whether it queued
 * a buffer holding JUL records since its last synchronous hand-over. */
static __thread jobject tpj_jul_src;
static __thread uint16_t *tpj_my_chars;
static __thread int tpj_my_capc;
static __thread int tpj_my_queued_jul;
/* Buffers the tick thread queued for quiet threads (tpj_jul_idle), and
 * how many of them the calling thread has taken into account: one of
 * them may be its own, which its next native JUL record must not pass. */
static atomic_uint tpj_idle_pushes;
static __thread unsigned tpj_my_idle_seen;
static jfieldID tpj_buf_chars, tpj_buf_nc;
static int tpj_jul_take(JNIEnv *env, uint16_t **dst, int *cap);
static void tpj_jul_fields(JNIEnv *env, jclass probe, jclass buf);
static void tpj_jul_init(JNIEnv *env, jclass tadpole);
static void tpj_jul_route(JNIEnv *env);
static void tpj_jul_death(JNIEnv *env);
static void tpj_jul_idle(JNIEnv *env);

/* The registry of every live thread's buffer, for VMDeath. */
static pthread_mutex_t tpj_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static jobject *tpj_reg;
static int tpj_nreg, tpj_capreg;

/* Bytes of one copy: Probe.SIZE longs. */
#define TPJ_PROBE_SIZE 8192

/* TPJ_LOGGER is the class whose calls are call sites (jni/sites.go). */
static const char TPJ_LOGGER[] = "java/util/logging/Logger";

/* tpj_calls_logger reports whether class file data may call
 * java.util.logging.Logger: whether its constant pool holds the class
 * name as a Utf8 entry (the name of a CONSTANT_Class, which every call
 * of a Logger method refers to). A pool it cannot read answers 1: the
 * rewriter then decides. About as fast as reading the pool once. */
static int tpj_calls_logger(const unsigned char *d, jint len) {
	if (d == NULL || len < 10)
		return 1;
	const unsigned char *p = d + 10, *end = d + len;
	unsigned n = (unsigned)d[8] << 8 | d[9];
	for (unsigned i = 1; i < n; i++) {
		if (p >= end)
			return 1;
		size_t sz;
		switch (*p) {
		case 1: /* Utf8 */
			if (end - p < 3)
				return 1;
			sz = (size_t)p[1] << 8 | p[2];
			if (sz == sizeof TPJ_LOGGER - 1 && (size_t)(end - p - 3) >= sz && memcmp(p + 3, TPJ_LOGGER, sz) == 0)
				return 1;
			sz += 3;
			break;
		case 7: case 8: case 16: case 19: case 20: /* Class, String, MethodType, Module, Package */
			sz = 3;
			break;
		case 15: /* MethodHandle */
			sz = 4;
			break;
		case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18:
			sz = 5;
			break;
		case 5: case 6: /* Long, Double: two slots */
			sz = 9;
			i++;
			break;
		default:
			return 1;
		}
		p += sz;
	}
	return 0;
}

static void JNICALL tpj_cflh(jvmtiEnv *jvmti, JNIEnv *env, jclass redefined, jobject loader, const char *name,
                             jobject pd, jint len, const unsigned char *data, jint *new_len,
                             unsigned char **new_data) {
	(void)env, (void)pd;
	if (name == NULL || !atomic_load_explicit(&tpj_hook_on, memory_order_relaxed))
		return;
	if (strncmp(name, "io/tadpole/", 11) == 0)
		return;
	int methods = atomic_load_explicit(&tpj_methods_on, memory_order_relaxed);
	int logs = atomic_load_explicit(&tpj_sites_only, memory_order_relaxed) && loader != NULL &&
	           tpj_calls_logger(data, len);
	if (!methods && !logs)
		return; /* no run, no log call: the Go side is not even asked */
	void *out = NULL;
	int outlen = 0;
	int rc = tpjGoTransform((char *)name, loader == NULL ? 1 : 0, redefined != NULL ? 1 : 0, methods, logs,
	                        (void *)data, (int)len, &out, &outlen);
	if (rc == 1 && out != NULL && outlen > 0) {
		unsigned char *mem = NULL;
		if ((*jvmti)->Allocate(jvmti, (jlong)outlen, &mem) == JVMTI_ERROR_NONE) {
			memcpy(mem, out, (size_t)outlen);
			*new_data = mem;
			*new_len = outlen;
		}
	}
	free(out);
}

char *tpj_probe_onload(jvmtiEnv *jvmti, const char *options) {
	char *rest = tpjGoProbeOptions((char *)(options != NULL ? options : ""));
	if (tpjGoProbeOff())
		return rest; /* trace=none: no hook, no probes */
	tpj_jul_order = tpjGoJulOrder();
	char path[4096];
	if (tpjGoProbeJar(path, (int)sizeof path) != 0) {
		tpj_warn("cannot write the probe jar: methods are not traced");
		return rest;
	}
	if ((*jvmti)->AddToBootstrapClassLoaderSearch(jvmti, path) != JVMTI_ERROR_NONE) {
		tpj_warn("cannot add %s to the boot class path: methods are not traced", path);
		return rest;
	}
	jvmtiCapabilities want, have;
	memset(&want, 0, sizeof want);
	memset(&have, 0, sizeof have);
	(*jvmti)->GetPotentialCapabilities(jvmti, &have);
	want.can_retransform_classes = have.can_retransform_classes;
	want.can_suspend = have.can_suspend; /* JUL records of quiet threads (tpj_jul_idle) */
	if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE) {
		memset(&want, 0, sizeof want);
	}
	/* The hook is enabled at VMInit: the JDK's classes loaded before are
	 * not the application's, and hooking them would cost start-up time. */
	atomic_store(&tpj_hook_on, 1);
	return rest;
}

void tpj_probe_callbacks(jvmtiEventCallbacks *cb) { cb->ClassFileLoadHook = tpj_cflh; }

/* --- natives of io.tadpole.Probe --- */

static int64_t *tpj_copy_buf(void) {
	if (tpj_my_copy == NULL)
		tpj_my_copy = malloc(TPJ_PROBE_SIZE * sizeof(int64_t));
	return tpj_my_copy;
}

/*
 * The hand-over queue. A thread's full Java buffer is copied into a pool
 * buffer and pushed here (newest first, one CAS); the converter goroutine
 * (probe.go, tpj_q_drain) takes the whole queue, hands the buffers to the
 * agent oldest first, each as one host.SubmitProbes, and puts them back in
 * the pool. Every hand-over of probe words holds tpj_conv_mu and first
 * drains the queue, so a thread's buffers reach the agent in its order,
 * whoever converts them. The synchronous hand-overs (thread end, VM death,
 * a JUL record with jul_order=on) thus also wait for the buffers queued
 * before them: the thread's BatchEnd record, tadpole_stop and the log
 * record come after its calls.
 *
 * Back-pressure: at most TPJ_POOL_MAX buffers exist. A thread that finds
 * none free waits (without CPU) until the converter puts one back: the
 * converter itself waits only where any hand-over waits while HQ is behind
 * (stall_timeout bounds that; a paused run holds it, as it holds every
 * recording thread). Should the converter be gone, the thread converts its
 * buffer itself, under tpj_conv_mu after the queue. Nothing is dropped.
 *
 * While the queue is empty the converter waits in Go on a pipe; a thread
 * that pushes the TPJ_Q_WAKE-th buffer since the converter last took the
 * queue then writes a byte to it (tpj_q_sleeping, as capi's drain), and so
 * does the tick thread (state0, every millisecond while tracing) for
 * fewer, and a thread about to wait for a free buffer. A converter woken
 * per buffer costs a pipe write on the traced thread and a thread switch
 * or two per 8192 words; woken per TPJ_Q_WAKE buffers, it hands them over
 * in one go. Without the converter (no pipe) every hand-over converts on
 * the calling thread, as the fallback does.
 */
struct tpj_pbuf {
	struct tpj_pbuf *next;
	int64_t tid;
	int n;
	int64_t w[TPJ_PROBE_SIZE];
	/* The chars of the JUL records among w (Probe.Buf.chars), nc of
	 * them, in c (malloc'd, capc chars; kept with the buffer). */
	uint16_t *c;
	int nc, capc;
};

#define TPJ_POOL_MAX 32

static _Atomic(struct tpj_pbuf *) tpj_q;
static pthread_mutex_t tpj_conv_mu = PTHREAD_MUTEX_INITIALIZER;
/* Under tpj_pool_mu: the free buffers and how many exist. */
static pthread_mutex_t tpj_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tpj_pbuf *tpj_pool;
static int tpj_nbufs;
static int tpj_pool_waiters;
static int tpj_nfree; /* buffers in tpj_pool */
/* Free buffers a waiting thread waits for. */
#define TPJ_POOL_LOW (TPJ_POOL_MAX / 4)
static pthread_cond_t tpj_pool_cv = PTHREAD_COND_INITIALIZER;
/* The converter's pipe (write end; -1 without converter). */
static _Atomic int tpj_q_fd = -1;
static atomic_int tpj_q_sleeping;
/* Buffers pushed since the converter last took the queue (about: a push
 * counts after the converter may have taken its buffer). */
static atomic_int tpj_q_len;
#define TPJ_Q_WAKE 4
static void tpj_q_wake(void);

/* How long a thread waiting for a free buffer sleeps before it checks
 * that the converter still runs (ns). */
#define TPJ_POOL_WAIT_NS 10000000

/* tpj_pool_take returns a free buffer, a new one while fewer than
 * TPJ_POOL_MAX exist, or waits for the converter to put one back. NULL
 * when there is no converter (or out of memory): the caller converts. */
static struct tpj_pbuf *tpj_pool_take(void) {
	pthread_mutex_lock(&tpj_pool_mu);
	struct tpj_pbuf *b;
	int waited = 0;
	for (;;) {
		b = tpj_pool;
		/* Having waited, it wakes with TPJ_POOL_LOW buffers free at least
		 * (or after a timeout): one sleep per several hand-overs, not one
		 * per buffer, while the converter is behind. */
		if (b != NULL) {
			tpj_pool = b->next;
			tpj_nfree--;
			break;
		}
		if (tpj_nbufs < TPJ_POOL_MAX) {
			if ((b = calloc(1, sizeof *b)) != NULL)
				tpj_nbufs++;
			break;
		}
		if (atomic_load(&tpj_q_fd) < 0)
			break;
		tpj_q_wake(); /* what is queued goes first */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += TPJ_POOL_WAIT_NS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		tpj_pool_waiters++;
		do
			waited = pthread_cond_timedwait(&tpj_pool_cv, &tpj_pool_mu, &ts);
		while (waited == 0 && tpj_nfree < TPJ_POOL_LOW && atomic_load(&tpj_q) != NULL &&
		       atomic_load(&tpj_q_fd) >= 0);
		tpj_pool_waiters--;
	}
	pthread_mutex_unlock(&tpj_pool_mu);
	return b;
}

/* tpj_pool_put puts the buffers of list (linked by next) back and wakes
 * the threads waiting for some. */
static void tpj_pool_put(struct tpj_pbuf *list) {
	if (list == NULL)
		return;
	int n = 1;
	struct tpj_pbuf *last = list;
	for (; last->next != NULL; n++)
		last = last->next;
	pthread_mutex_lock(&tpj_pool_mu);
	last->next = tpj_pool;
	tpj_pool = list;
	tpj_nfree += n;
	if (tpj_pool_waiters > 0 && (tpj_nfree >= TPJ_POOL_LOW || atomic_load(&tpj_q) == NULL))
		pthread_cond_broadcast(&tpj_pool_cv);
	pthread_mutex_unlock(&tpj_pool_mu);
}

/* tpj_q_wake wakes the converter if it sleeps and the queue holds a
 * buffer. */
static void tpj_q_wake(void) {
	/* After the push: a converter going to sleep sets the flag, then looks
	 * at the queue (both sequentially consistent). */
	if (atomic_load(&tpj_q) != NULL && atomic_load(&tpj_q_sleeping) && atomic_exchange(&tpj_q_sleeping, 0)) {
		int fd = atomic_load(&tpj_q_fd);
		if (fd >= 0) {
			ssize_t r = write(fd, "p", 1); /* non-blocking: a full pipe has a wake-up pending */
			(void)r;
		}
	}
}

static void tpj_q_push(struct tpj_pbuf *b) {
	struct tpj_pbuf *head = atomic_load_explicit(&tpj_q, memory_order_relaxed);
	do {
		b->next = head;
	} while (!atomic_compare_exchange_weak(&tpj_q, &head, b));
	if (atomic_fetch_add(&tpj_q_len, 1) + 1 >= TPJ_Q_WAKE)
		tpj_q_wake();
}

/* tpj_q_drain_locked hands every queued buffer to the agent, oldest
 * first; tpj_conv_mu is held. It returns the number of buffers. */
static int tpj_q_drain_locked(void) {
	struct tpj_pbuf *l = atomic_exchange(&tpj_q, NULL);
	struct tpj_pbuf *fifo = NULL;
	int n = 0;
	while (l != NULL) {
		struct tpj_pbuf *b = l;
		l = b->next;
		b->next = fifo;
		fifo = b;
		n++;
	}
	if (n > 0)
		atomic_fetch_sub(&tpj_q_len, n);
	/* Buffers without JUL records are lent to the agent, which reads them
	 * in place and gives each back (tpj_q_release) once encoded; the
	 * others, and those it does not take, go back now. */
	struct tpj_pbuf *back = NULL;
	while (fifo != NULL) {
		struct tpj_pbuf *b = fifo;
		fifo = b->next;
		b->next = NULL;
		if (b->nc > 0)
			tpjGoProbeFlushJul(b->tid, b->w, b->n, b->c, b->nc);
		else if (b->n > 0 && tpjGoProbeHand(b->tid, b->w, b->n, b))
			continue;
		b->next = back;
		back = b;
	}
	tpj_pool_put(back);
	return n;
}

void tpj_q_release(void *token) {
	struct tpj_pbuf *b = token;
	if (b == NULL)
		return;
	b->next = NULL;
	b->nc = 0;
	tpj_pool_put(b);
}

int tpj_q_drain(void) {
	pthread_mutex_lock(&tpj_conv_mu);
	int n = tpj_q_drain_locked();
	pthread_mutex_unlock(&tpj_conv_mu);
	return n;
}

int tpj_q_idle(void) {
	atomic_store(&tpj_q_sleeping, 1);
	if (atomic_load(&tpj_q) == NULL)
		return 0;
	atomic_store(&tpj_q_sleeping, 0);
	return 1;
}

void tpj_q_set_fd(int fd) { atomic_store(&tpj_q_fd, fd); }

/* tpj_flush_sync hands n words of a to the agent from the calling thread,
 * after every queued buffer. */
static void tpj_flush_sync(JNIEnv *env, jlongArray a, jint n, jlong tid) {
	int nc = tpj_jul_take(env, &tpj_my_chars, &tpj_my_capc);
	int64_t *p = n > 0 && a != NULL ? tpj_copy_buf() : NULL;
	if (p != NULL) {
		(*env)->GetLongArrayRegion(env, a, 0, n, (jlong *)p);
		if ((*env)->ExceptionCheck(env)) {
			(*env)->ExceptionClear(env);
			p = NULL;
		}
	}
	pthread_mutex_lock(&tpj_conv_mu);
	tpj_q_drain_locked();
	if (p != NULL && nc > 0)
		tpjGoProbeFlushJul((int64_t)tid, p, (int)n, tpj_my_chars, nc);
	else if (p != NULL)
		tpjGoProbeFlush((int64_t)tid, p, (int)n);
	pthread_mutex_unlock(&tpj_conv_mu);
	tpj_my_queued = 0;
	tpj_my_queued_jul = 0;
}

/* tpj_flush_array hands n words of a over: queued for the converter, or
 * (sync, no converter, no free buffer) converted by the calling thread
 * after what is queued. */
static void tpj_flush_array(JNIEnv *env, jlongArray a, jint n, jlong tid, int sync) {
	if (n > TPJ_PROBE_SIZE)
		n = TPJ_PROBE_SIZE;
	if (n <= 0 || a == NULL)
		n = 0;
	struct tpj_pbuf *b = NULL;
	if (!sync && n > 0 && atomic_load_explicit(&tpj_q_fd, memory_order_relaxed) >= 0)
		b = tpj_pool_take();
	if (b == NULL) {
		if (n > 0 || sync)
			tpj_flush_sync(env, a, n, tid);
		tpj_jul_src = NULL;
		return;
	}
	/* a is the Buf's own long[SIZE] and n <= SIZE: no exception to check. */
	(*env)->GetLongArrayRegion(env, a, 0, n, (jlong *)b->w);
	b->tid = (int64_t)tid;
	b->n = (int)n;
	if ((b->nc = tpj_jul_take(env, &b->c, &b->capc)) > 0)
		tpj_my_queued_jul = 1;
	tpj_q_push(b);
	tpj_my_queued = 1;
}

static void JNICALL tpj_probe_flush(JNIEnv *env, jclass cls, jlongArray a, jint n, jlong tid) {
	(void)cls;
	if (!tpj_my_flushed || tpj_my_logged) {
		/* The thread's C API buffer (its name from ThreadStart, its log
		 * records) goes first, so that HQ names the thread before its first
		 * call and gets its log records in order with its calls. */
		tadpole_flush();
		tpj_my_flushed = 1;
		tpj_my_logged = 0;
	}
	if (!tadpole_tracing())
		n = 0; /* as tpj_flush_buf: not collecting now */
	tpj_jul_src = tpj_my_buf; /* its JUL records' chars go along */
	tpj_flush_array(env, a, n, tid, 0);
}

static void JNICALL tpj_probe_register(JNIEnv *env, jclass cls, jobject buf) {
	(void)cls;
	if (buf == NULL || tpj_my_buf != NULL)
		return;
	jobject g = (*env)->NewGlobalRef(env, buf);
	if (g == NULL)
		return;
	pthread_mutex_lock(&tpj_reg_mu);
	if (tpj_nreg == tpj_capreg) {
		int c = tpj_capreg ? 2 * tpj_capreg : 64;
		jobject *r = realloc(tpj_reg, (size_t)c * sizeof *r);
		if (r == NULL) {
			pthread_mutex_unlock(&tpj_reg_mu);
			(*env)->DeleteGlobalRef(env, g);
			return;
		}
		tpj_reg = r;
		tpj_capreg = c;
	}
	tpj_reg[tpj_nreg++] = g;
	pthread_mutex_unlock(&tpj_reg_mu);
	tpj_my_buf = g;
}

static jint JNICALL tpj_probe_exc_type(JNIEnv *env, jclass cls, jstring name) {
	(void)cls;
	if (name == NULL)
		return 0;
	const char *s = (*env)->GetStringUTFChars(env, name, NULL);
	if (s == NULL) {
		(*env)->ExceptionClear(env);
		return 0;
	}
	jint id = tpjGoExcType((char *)s);
	(*env)->ReleaseStringUTFChars(env, name, s);
	return id;
}

/* Probe.siteGen, and the state it was last set for (1: an LTTng session
 * records JUL events). */
static jfieldID tpj_probe_site_gen;
static atomic_int tpj_sites_live;
static atomic_int tpj_site_gen_next;

void tpj_probe_sites_live(JNIEnv *env) {
	tpj_jul_route(env);
	if (!atomic_load_explicit(&tpj_probe_bound, memory_order_acquire) || tpj_probe_site_gen == NULL)
		return;
	int live = tp_lttng_live() ? 1 : 0;
	int was = atomic_load_explicit(&tpj_sites_live, memory_order_relaxed);
	if (live == was || !atomic_compare_exchange_strong(&tpj_sites_live, &was, live))
		return;
	/* A race with another thread's change is undone at the next tick: the
	 * probes then cost a little while no session records, or records take
	 * their source from the stack for a tick. */
	jint g = 0;
	while (live && g == 0)
		g = (jint)(atomic_fetch_add(&tpj_site_gen_next, 1) + 1);
	(*env)->SetStaticIntField(env, tpj_probe_class, tpj_probe_site_gen, g);
}

/* tpj_epoch_bits is what state0 says of the C API's mode, epoch the value
 * of tp_epoch: bit 0 tracing, bits 2-31 the count of its mode changes
 * (Probe.epoch), which tells the tick thread of a suspend or stop it never
 * saw. */
static jint tpj_epoch_bits(uint32_t epoch) {
	return (jint)(((epoch >> 8) & 0x3FFFFFFFu) << 2 | (TP_EPOCH_MODE(epoch) == TP_MODE_TRACING ? 1u : 0u));
}

static jint JNICALL tpj_probe_state(JNIEnv *env, jclass cls) {
	(void)cls;
	tpj_probe_sites_live(env);
	jint bits = tpj_epoch_bits(atomic_load(&tp_epoch));
	int tracing = bits & 1;
	if (tracing)
		tpj_jul_idle(env); /* JUL records of threads that went quiet */
	if (tracing && atomic_load(&tpj_hook_on) && !atomic_load(&tpj_methods_on)) {
		/* The first run began after VM start: the loaded classes it traces,
		 * and those rewritten with call sites only, get method probes. */
		atomic_store(&tpj_methods_on, 1);
		tpj_enable_hook();
		atomic_store(&tpj_retransform_wanted, 1);
	}
	tpj_q_wake(); /* fewer than TPJ_Q_WAKE buffers queued: they wait a tick at most */
	return bits | (atomic_exchange(&tpj_retransform_wanted, 0) ? 2 : 0);
}

void tpj_probe_want_retransform(void) { atomic_store(&tpj_retransform_wanted, 1); }

/* Classes retransformed per RetransformClasses call. */
#define TPJ_RETRANSFORM_CHUNK 64

static void tpj_retransform(jvmtiEnv *jvmti, jclass *cs, int n) {
	for (int i = 0; i < n; i += TPJ_RETRANSFORM_CHUNK) {
		int m = n - i < TPJ_RETRANSFORM_CHUNK ? n - i : TPJ_RETRANSFORM_CHUNK;
		if ((*jvmti)->RetransformClasses(jvmti, m, cs + i) == JVMTI_ERROR_NONE)
			continue;
		for (int j = i; j < i + m; j++) /* one by one: a class that fails is left as it is */
			(*jvmti)->RetransformClasses(jvmti, 1, cs + j);
	}
}

void tpj_probe_retransform(JNIEnv *env) {
	jvmtiEnv *jvmti = tpj_jvmti;
	if (jvmti == NULL || !atomic_load(&tpj_hook_on))
		return;
	jint n = 0;
	jclass *cs = NULL;
	if ((*jvmti)->GetLoadedClasses(jvmti, &n, &cs) != JVMTI_ERROR_NONE || cs == NULL)
		return;
	(*env)->EnsureLocalCapacity(env, n + 16);
	jclass *sel = malloc((size_t)(n > 0 ? n : 1) * sizeof *sel);
	int k = 0;
	char name[1024];
	for (jint i = 0; i < n; i++) {
		jboolean mod = JNI_FALSE;
		char *sig = NULL;
		jobject loader = NULL;
		int want = 0;
		if (sel != NULL && (*jvmti)->IsModifiableClass(jvmti, cs[i], &mod) == JVMTI_ERROR_NONE && mod &&
		    (*jvmti)->GetClassSignature(jvmti, cs[i], &sig, NULL) == JVMTI_ERROR_NONE && sig != NULL &&
		    sig[0] == 'L' && (*jvmti)->GetClassLoader(jvmti, cs[i], &loader) == JVMTI_ERROR_NONE) {
			size_t l = strlen(sig);
			if (l >= 3 && l - 2 < sizeof name) {
				memcpy(name, sig + 1, l - 2);
				name[l - 2] = 0;
				want = tpjGoRetransformWanted(name, loader == NULL ? 1 : 0);
			}
		}
		if (sig != NULL)
			(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
		if (loader != NULL)
			(*env)->DeleteLocalRef(env, loader);
		if (want)
			sel[k++] = cs[i];
		else
			(*env)->DeleteLocalRef(env, cs[i]);
	}
	if (k > 0)
		tpj_retransform(jvmti, sel, k);
	for (int i = 0; i < k; i++)
		(*env)->DeleteLocalRef(env, sel[i]);
	free(sel);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)cs);
}

static void JNICALL tpj_probe_retransform0(JNIEnv *env, jclass cls) {
	(void)cls;
	tpj_probe_retransform(env);
}

static JNINativeMethod tpj_probe_methods[] = {
	{"flush0", "([JIJ)V", (void *)tpj_probe_flush},
	{"register0", "(Lio/tadpole/Probe$Buf;)V", (void *)tpj_probe_register},
	{"excType0", "(Ljava/lang/String;)I", (void *)tpj_probe_exc_type},
	{"state0", "()I", (void *)tpj_probe_state},
	{"retransform0", "()V", (void *)tpj_probe_retransform0},
};

/* tpj_flush_buf hands what buf holds to the agent, after every queued
 * buffer, and empties it. */
static void tpj_flush_buf(JNIEnv *env, jobject buf) {
	jlongArray a = (jlongArray)(*env)->GetObjectField(env, buf, tpj_buf_a);
	jint n = (*env)->GetIntField(env, buf, tpj_buf_n);
	if ((*env)->GetIntField(env, buf, tpj_buf_gen) != (*env)->GetStaticIntField(env, tpj_probe_class, tpj_probe_gen))
		n = 0; /* events of an earlier tracing generation: not this run's */
	if (!tadpole_tracing())
		n = 0; /* suspended, paused or stopped: what the buffer holds would be
		        * dropped by the next generation anyway, and its last events
		        * may be stamped after the agent stopped collecting (the
		        * tick thread turns the probes off up to a tick late) */
	jlong tid = (*env)->GetLongField(env, buf, tpj_buf_tid);
	(*env)->SetIntField(env, buf, tpj_buf_n, 0);
	(*env)->SetLongField(env, buf, tpj_buf_last, -1); /* the next event writes a time word first */
	tpj_jul_src = buf; /* its JUL records' chars go along */
	tpj_flush_array(env, a, n, tid, 1);
	if (a != NULL)
		(*env)->DeleteLocalRef(env, a);
}

static int tpj_exc(JNIEnv *env) {
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionClear(env);
		return 1;
	}
	return 0;
}

void tpj_probe_sites(JNIEnv *env, jclass tadpole) {
	if (!atomic_load(&tpj_probe_bound) || tadpole == NULL)
		return;
	jfieldID pf = (*env)->GetStaticFieldID(env, tpj_probe_class, "SITES", "Ljava/util/function/IntSupplier;");
	jobject s = pf != NULL ? (*env)->GetStaticObjectField(env, tpj_probe_class, pf) : NULL;
	jfieldID tf = (*env)->GetStaticFieldID(env, tadpole, "sites", "Ljava/util/function/IntSupplier;");
	if (s != NULL && tf != NULL)
		(*env)->SetStaticObjectField(env, tadpole, tf, s);
	if (tpj_exc(env))
		tpj_warn("no call sites: JUL records' sources come from the stack");
	if (s != NULL)
		(*env)->DeleteLocalRef(env, s);
	tpj_jul_init(env, tadpole);
}

static const char *tpj_probe_classes[] = {"io/tadpole/Probe$Buf", "io/tadpole/Probe$Tick", "io/tadpole/Probe$1",
                                          "io/tadpole/Probe$Jul"};

/* tpj_enable_hook enables the class file load hook once. */
static void tpj_enable_hook(void) {
	if (!atomic_exchange(&tpj_hook_enabled, 1))
		(*tpj_jvmti)->SetEventNotificationMode(tpj_jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
}

/* tpj_probe_turn_on turns the probes on when the agent traces, in the
 * tracing epoch it is in (Probe.epoch): Probe's fields are bound, the tick
 * thread not started yet. */
static void tpj_probe_turn_on(JNIEnv *env) {
	jint bits = tpj_epoch_bits(atomic_load(&tp_epoch));
	if (!(bits & 1))
		return;
	(*env)->SetStaticIntField(env, tpj_probe_class, tpj_probe_epoch, bits >> 2);
	(*env)->SetStaticBooleanField(env, tpj_probe_class, tpj_probe_on, JNI_TRUE);
	jlong ms = (*env)->GetStaticLongField(env, tpj_probe_class, tpj_probe_tick);
	(*env)->SetStaticLongField(env, tpj_probe_class, tpj_probe_now, ms);
}

int tpj_probe_begin(JNIEnv *env, int started) {
	if (!atomic_load(&tpj_hook_on))
		return -1;
	if (!atomic_load(&tpj_probe_bound)) {
		jclass c = (*env)->FindClass(env, "io/tadpole/Probe");
		if (c == NULL) {
			tpj_exc(env);
			tpj_warn("io.tadpole.Probe not found on the boot class path: methods are not traced");
			return -1;
		}
		jclass buf = NULL;
		for (size_t i = 0; i < sizeof tpj_probe_classes / sizeof tpj_probe_classes[0]; i++) {
			jclass k = (*env)->FindClass(env, tpj_probe_classes[i]);
			if (k == NULL) {
				tpj_exc(env);
				tpj_warn("%s not found: methods are not traced", tpj_probe_classes[i]);
				return -1;
			}
			if (i == 0)
				buf = k;
			else
				(*env)->DeleteLocalRef(env, k);
		}
		tpjGoProbeJarDone();
		jint n = (jint)(sizeof tpj_probe_methods / sizeof tpj_probe_methods[0]);
		if ((*env)->RegisterNatives(env, c, tpj_probe_methods, n) != JNI_OK) {
			tpj_exc(env);
			tpj_warn("cannot bind io.tadpole.Probe's natives: methods are not traced");
			return -1;
		}
		tpj_probe_on = (*env)->GetStaticFieldID(env, c, "on", "Z");
		tpj_probe_now = (*env)->GetStaticFieldID(env, c, "now", "J");
		tpj_probe_tick = (*env)->GetStaticFieldID(env, c, "tick", "J");
		tpj_probe_epoch = (*env)->GetStaticFieldID(env, c, "epoch", "I");
		tpj_buf_a = (*env)->GetFieldID(env, buf, "a", "[J");
		tpj_buf_n = (*env)->GetFieldID(env, buf, "n", "I");
		tpj_buf_tid = (*env)->GetFieldID(env, buf, "tid", "J");
		tpj_buf_gen = (*env)->GetFieldID(env, buf, "bufGen", "I");
		tpj_buf_last = (*env)->GetFieldID(env, buf, "last", "J");
		tpj_probe_gen = (*env)->GetStaticFieldID(env, c, "gen", "I");
		tpj_probe_site_gen = (*env)->GetStaticFieldID(env, c, "siteGen", "I");
		if (tpj_probe_site_gen == NULL)
			tpj_exc(env); /* no call sites: sources from the stack */
		tpj_probe_hot = (*env)->GetStaticFieldID(env, c, "HOT", "[Lio/tadpole/Probe$Buf;");
		tpj_jul_fields(env, c, buf); /* JUL records in the buffers: optional */
		if (tpj_probe_on == NULL || tpj_probe_now == NULL || tpj_probe_tick == NULL || tpj_probe_epoch == NULL ||
		    tpj_buf_a == NULL || tpj_buf_n == NULL || tpj_buf_tid == NULL ||
		    tpj_buf_gen == NULL || tpj_probe_gen == NULL || tpj_buf_last == NULL || tpj_probe_hot == NULL) {
			tpj_exc(env);
			tpj_warn("io.tadpole.Probe lacks its fields: methods are not traced");
			return -1;
		}
		tpj_probe_class = (jclass)(*env)->NewGlobalRef(env, c);
		if (tpjGoProbeConverter() != 0)
			tpj_warn("no probe converter: traced threads convert their own events");
		/* The probes turn on before the tick thread starts: else its first
		 * look would find a tracing epoch it has not seen and start a new
		 * generation, dropping what the threads recorded meanwhile. */
		tpj_probe_turn_on(env);
		jmethodID start = (*env)->GetStaticMethodID(env, c, "start", "()Ljava/lang/Thread;");
		if (start == NULL) {
			tpj_exc(env);
			return -1;
		}
		jobject t = (*env)->CallStaticObjectMethod(env, c, start);
		if (tpj_exc(env))
			return -1;
		if (t != NULL) {
			atomic_store(&tpj_tick_thread, (*env)->NewGlobalRef(env, t));
			(*env)->DeleteLocalRef(env, t);
		}
		(*env)->DeleteLocalRef(env, buf);
		(*env)->DeleteLocalRef(env, c);
		atomic_store(&tpj_probe_bound, 1);
	}
	/* Without a run (no HQ configured) the hook waits for tracing to begin:
	 * no class gets method probes in a JVM that is never traced. Classes
	 * that call java.util.logging get call-site probes from now on when
	 * their records' sources go into LTTng sessions (the companion is
	 * loaded, lttng_source on, logs= routes to LTTng). */
	if (started)
		atomic_store(&tpj_methods_on, 1);
	if (tpjGoSitesOn() && tp_lttng_ready())
		atomic_store(&tpj_sites_only, 1);
	if (started || atomic_load(&tpj_sites_only))
		tpj_enable_hook();
	return 0;
}

/* Probe.NHOT: the slots of Probe.HOT. */
#define TPJ_NHOT 1024

/* tpj_unhot clears the slot of Probe.HOT that holds buf (of an ending
 * thread), so that HOT keeps live threads' buffers only. */
static void tpj_unhot(JNIEnv *env, jobject buf) {
	jobjectArray hot = (jobjectArray)(*env)->GetStaticObjectField(env, tpj_probe_class, tpj_probe_hot);
	if (hot == NULL)
		return;
	jsize i = (jsize)((*env)->GetLongField(env, buf, tpj_buf_tid) & (TPJ_NHOT - 1));
	jobject e = (*env)->GetObjectArrayElement(env, hot, i);
	if (!tpj_exc(env) && e != NULL && (*env)->IsSameObject(env, e, buf))
		(*env)->SetObjectArrayElement(env, hot, i, NULL);
	tpj_exc(env);
	if (e != NULL)
		(*env)->DeleteLocalRef(env, e);
	(*env)->DeleteLocalRef(env, hot);
}

void tpj_probe_thread_end(JNIEnv *env) {
	jobject b = tpj_my_buf;
	if (b == NULL)
		return;
	tpj_my_buf = NULL;
	tpj_my_flushed = 0;
	tpj_my_queued = 0;
	if (atomic_load(&tpj_probe_bound)) {
		tadpole_flush(); /* its name and log records first */
		tpj_flush_buf(env, b);
		tpj_unhot(env, b);
	}
	pthread_mutex_lock(&tpj_reg_mu);
	for (int i = 0; i < tpj_nreg; i++) {
		if (tpj_reg[i] == b) {
			tpj_reg[i] = tpj_reg[--tpj_nreg];
			break;
		}
	}
	pthread_mutex_unlock(&tpj_reg_mu);
	(*env)->DeleteGlobalRef(env, b);
	free(tpj_my_copy);
	tpj_my_copy = NULL;
	free(tpj_my_chars);
	tpj_my_chars = NULL;
	tpj_my_capc = 0;
}

void tpj_probe_death(JNIEnv *env) {
	if (!atomic_load(&tpj_probe_bound))
		return;
	/* on, then the probes' word: the tick thread, which sets the word while
	 * on, looks at on again after (Probe.Tick). */
	(*env)->SetStaticBooleanField(env, tpj_probe_class, tpj_probe_on, JNI_FALSE);
	(*env)->SetStaticLongField(env, tpj_probe_class, tpj_probe_now, (jlong)INT64_MIN);
	tpj_jul_death(env); /* JUL records take the native path from now on */
	tadpole_flush(); /* the threads' names and log records first */
	tpj_q_drain(); /* then what waits for the converter */
	pthread_mutex_lock(&tpj_reg_mu);
	for (int i = 0; i < tpj_nreg; i++)
		tpj_flush_buf(env, tpj_reg[i]);
	pthread_mutex_unlock(&tpj_reg_mu);
}

int tpj_probe_own(JNIEnv *env, jthread thread) {
	jobject t = atomic_load(&tpj_tick_thread);
	return t != NULL && (*env)->IsSameObject(env, thread, t);
}

void tpj_probe_before_log(JNIEnv *env) {
	jobject b = tpj_my_buf;
	if (b == NULL || !atomic_load_explicit(&tpj_probe_bound, memory_order_relaxed)) {
		tpj_my_logged = 1;
		return;
	}
	int flush;
	unsigned idle = atomic_load_explicit(&tpj_idle_pushes, memory_order_acquire);
	if (idle != tpj_my_idle_seen) {
		flush = 1; /* the tick thread may have queued its buffer */
		tpj_my_idle_seen = idle;
	} else if (tpj_jul_order) {
		flush = tpj_my_queued || (*env)->GetIntField(env, b, tpj_buf_n) > 0;
	} else { /* JUL records it put into its probe buffer go first */
		flush = tpj_my_queued_jul || (tpj_buf_nc != NULL && (*env)->GetIntField(env, b, tpj_buf_nc) > 0);
	}
	if (flush) {
		if (!tpj_my_flushed || tpj_my_logged) {
			tadpole_flush(); /* older log records (and the name) first */
			tpj_my_flushed = 1;
		}
		tpj_flush_buf(env, b);
	}
	tpj_my_logged = 1;
}

/* --- JUL records in the probe buffers ---
 *
 * JulHandler appends a record of an HQ logger to its thread's Probe.Buf
 * through Probe.JUL_SINK, which the agent puts into Tadpole.jul while HQ
 * traces and no LTTng session records JUL events (else, and for what the
 * Java side does not decide, the native path, natives.c). The words carry
 * the logger's handle, the level and where the message's chars are in
 * Buf.chars; a hand-over copies those chars with the words (one
 * GetCharArrayRegion) and the converter (jul.go) makes the markers. */

static jclass tpj_jul_tadpole; /* global ref */
static jfieldID tpj_jul_field; /* Tadpole.jul */
static jobject tpj_jul_sink;   /* global ref: Probe.JUL_SINK */
static atomic_int tpj_jul_on;  /* Tadpole.jul is the sink */
static atomic_int tpj_jul_dead; /* VMDeath: the sink stays out */

static void tpj_jul_fields(JNIEnv *env, jclass probe, jclass buf) {
	tpj_buf_chars = (*env)->GetFieldID(env, buf, "chars", "[C");
	tpj_buf_nc = tpj_buf_chars != NULL ? (*env)->GetFieldID(env, buf, "nc", "I") : NULL;
	jfieldID sf = tpj_buf_nc != NULL
	                  ? (*env)->GetStaticFieldID(env, probe, "JUL_SINK", "Ljava/util/function/ObjLongConsumer;")
	                  : NULL;
	if (sf == NULL) {
		tpj_exc(env);
		tpj_buf_chars = tpj_buf_nc = NULL;
		return;
	}
	/* Reading it initialises Probe (its natives are bound). */
	jobject s = (*env)->GetStaticObjectField(env, probe, sf);
	if (tpj_exc(env) || s == NULL)
		return;
	tpj_jul_sink = (*env)->NewGlobalRef(env, s);
	(*env)->DeleteLocalRef(env, s);
}

/* tpj_jul_take takes the chars of the Buf tpj_jul_src names (Buf.chars[0,
 * nc)) into *dst (grown to *cap chars as needed), empties them and
 * returns their number: 0 when there are none or on failure. */
static int tpj_jul_take(JNIEnv *env, uint16_t **dst, int *cap) {
	jobject buf = tpj_jul_src;
	tpj_jul_src = NULL;
	if (buf == NULL || tpj_buf_nc == NULL)
		return 0;
	jint nc = (*env)->GetIntField(env, buf, tpj_buf_nc);
	if (nc <= 0)
		return 0;
	(*env)->SetIntField(env, buf, tpj_buf_nc, 0);
	jcharArray c = (jcharArray)(*env)->GetObjectField(env, buf, tpj_buf_chars);
	if (c == NULL)
		return 0;
	int rc = 0;
	if (nc > *cap) {
		uint16_t *p = realloc(*dst, (size_t)nc * sizeof *p);
		if (p == NULL)
			goto out;
		*dst = p;
		*cap = nc;
	}
	(*env)->GetCharArrayRegion(env, c, 0, nc, (jchar *)*dst);
	if (!tpj_exc(env))
		rc = nc;
out:
	(*env)->DeleteLocalRef(env, c);
	return rc;
}

/* The loggers' states as Tadpole.julAcc holds them (tpj_jul_mirror),
 * under tpj_jul_mu; entries up to tpj_jul_max are mirrored. */
static pthread_mutex_t tpj_jul_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t tpj_jul_shadow[TADPOLE_MAX_LOGGERS + 1];
static int32_t tpj_jul_max;
static jlongArray tpj_jul_acc; /* global ref: Tadpole.julAcc */

/* tpj_jul_mirror copies the loggers' states that changed into
 * Tadpole.julAcc (the probes' tick and the JUL sync call it, through
 * tpj_jul_route): one relaxed load per registered logger when none did. */
static void tpj_jul_mirror(JNIEnv *env) {
	if (tpj_jul_acc == NULL)
		return;
	pthread_mutex_lock(&tpj_jul_mu);
	int32_t max = 0;
	const _Atomic uint64_t *acc = tp_jlog_acc(&max);
	if (max > TADPOLE_MAX_LOGGERS)
		max = TADPOLE_MAX_LOGGERS;
	int32_t lo = max + 1, hi = 0;
	for (int32_t h = 1; h <= max; h++) {
		uint64_t a = atomic_load_explicit(&acc[h], memory_order_relaxed);
		if (a != tpj_jul_shadow[h] || h > tpj_jul_max) {
			tpj_jul_shadow[h] = a;
			if (h < lo)
				lo = h;
			hi = h;
		}
	}
	if (lo <= hi)
		(*env)->SetLongArrayRegion(env, tpj_jul_acc, lo, hi - lo + 1, (const jlong *)tpj_jul_shadow + lo);
	tpj_jul_max = max;
	pthread_mutex_unlock(&tpj_jul_mu);
}

/* tpj_jul_init gives Tadpole the mirror of the loggers' states
 * (Tadpole.julAcc) and notes where its way into the probe buffers goes
 * (Tadpole.jul). */
static void tpj_jul_init(JNIEnv *env, jclass tadpole) {
	if (tpj_jul_sink == NULL || tadpole == NULL || tpj_jul_tadpole != NULL)
		return;
	jfieldID f = (*env)->GetStaticFieldID(env, tadpole, "jul", "Ljava/util/function/ObjLongConsumer;");
	jfieldID af = f != NULL ? (*env)->GetStaticFieldID(env, tadpole, "julAcc", "[J") : NULL;
	jlongArray a = af != NULL ? (*env)->NewLongArray(env, TADPOLE_MAX_LOGGERS + 1) : NULL;
	if (a == NULL) {
		tpj_exc(env);
		return; /* every record takes the native path */
	}
	tpj_jul_acc = (jlongArray)(*env)->NewGlobalRef(env, a);
	tpj_jul_field = f;
	tpj_jul_tadpole = (jclass)(*env)->NewGlobalRef(env, tadpole);
	if (tpj_jul_acc == NULL || tpj_jul_tadpole == NULL) {
		tpj_jul_tadpole = NULL;
		(*env)->DeleteLocalRef(env, a);
		return;
	}
	tpj_jul_mirror(env);
	(*env)->SetStaticObjectField(env, tadpole, af, a);
	(*env)->DeleteLocalRef(env, a);
	tpj_jul_route(env);
}

/* tpj_jul_set points Tadpole.jul at the sink (on) or at nothing. */
static void tpj_jul_set(JNIEnv *env, int on) {
	int was = atomic_load(&tpj_jul_on);
	if (was == on || !atomic_compare_exchange_strong(&tpj_jul_on, &was, on))
		return;
	(*env)->SetStaticObjectField(env, tpj_jul_tadpole, tpj_jul_field, on ? tpj_jul_sink : NULL);
}

/* tpj_jul_route keeps Tadpole.jul in step (the probes' tick and the JUL
 * sync call it): the sink while HQ traces and no LTTng session records
 * JUL events, whose records the native path takes to both. */
static void tpj_jul_route(JNIEnv *env) {
	if (tpj_jul_tadpole == NULL || !atomic_load_explicit(&tpj_probe_bound, memory_order_acquire))
		return;
	tpj_jul_mirror(env);
	tpj_jul_set(env, tadpole_tracing() && !tp_lttng_live() && !atomic_load(&tpj_jul_dead));
}

static void tpj_jul_death(JNIEnv *env) {
	atomic_store(&tpj_jul_dead, 1);
	if (tpj_jul_tadpole != NULL)
		tpj_jul_set(env, 0);
}

/*
 * Quiet threads. A thread hands its buffer over when it records into a
 * full one or one AGE ms old; one that logs and then goes quiet (blocks,
 * sleeps, runs untraced code) would keep its JUL records until it ends.
 * So every TPJ_IDLE_SCAN_MS the tick thread looks for buffers holding JUL
 * records TPJ_IDLE_MS old and hands them over itself: it suspends the
 * owner (JVMTI), and when none of the owner's top frames is the agent's
 * (io/tadpole/: Probe's appends and hand-overs, Tadpole's natives, the
 * JUL handler) and it has a Java frame (not in ThreadEnd), the buffer is
 * between two appends: its words and chars go onto the hand-over queue
 * (lock-free: a suspended thread may hold the agent's locks) in place of
 * the owner's next hand-over, which comes after them, and the owner
 * resumes. Without the converter, or without can_suspend, quiet threads
 * keep their records until their next append, their end or VM death.
 */
#define TPJ_IDLE_SCAN_MS 25
#define TPJ_IDLE_MS 100
/* Top frames looked at for the agent's. */
#define TPJ_IDLE_FRAMES 24

static jfieldID tpj_buf_first, tpj_buf_owner;
static int64_t tpj_idle_last; /* tick of the last scan; the tick thread's */
static int tpj_idle_off;      /* 1: cannot suspend or lacks fields */

/* tpj_idle_busy reports whether thread (suspended) may be inside the
 * agent's code, or has no Java frame. */
static int tpj_idle_busy(JNIEnv *env, jthread thread) {
	jvmtiFrameInfo f[TPJ_IDLE_FRAMES];
	jint n = 0;
	if ((*tpj_jvmti)->GetStackTrace(tpj_jvmti, thread, 0, TPJ_IDLE_FRAMES, f, &n) != JVMTI_ERROR_NONE || n == 0)
		return 1;
	for (jint i = 0; i < n; i++) {
		jclass c = NULL;
		char *sig = NULL;
		int ours = 1;
		if ((*tpj_jvmti)->GetMethodDeclaringClass(tpj_jvmti, f[i].method, &c) == JVMTI_ERROR_NONE &&
		    (*tpj_jvmti)->GetClassSignature(tpj_jvmti, c, &sig, NULL) == JVMTI_ERROR_NONE && sig != NULL)
			ours = strncmp(sig, "Lio/tadpole/", 12) == 0;
		if (sig != NULL)
			(*tpj_jvmti)->Deallocate(tpj_jvmti, (unsigned char *)sig);
		if (c != NULL)
			(*env)->DeleteLocalRef(env, c);
		if (ours)
			return 1;
	}
	return 0;
}

/* tpj_idle_flush hands over the JUL records (and the events before them)
 * of buf, whose owner went quiet, into pool buffer b; 1 when b was
 * queued, 0 when it is left to the caller. tpj_reg_mu is held. */
static int tpj_idle_flush(JNIEnv *env, jobject buf, struct tpj_pbuf *b) {
	jthread owner = (jthread)(*env)->GetObjectField(env, buf, tpj_buf_owner);
	if (owner == NULL)
		return 0;
	int queued = 0;
	if ((*tpj_jvmti)->SuspendThread(tpj_jvmti, owner) != JVMTI_ERROR_NONE) {
		(*env)->DeleteLocalRef(env, owner);
		return 0;
	}
	jint n = (*env)->GetIntField(env, buf, tpj_buf_n);
	if (n > 0 && n <= TPJ_PROBE_SIZE && (*env)->GetIntField(env, buf, tpj_buf_nc) > 0 && !tpj_idle_busy(env, owner) &&
	    (*env)->GetIntField(env, buf, tpj_buf_gen) ==
	        (*env)->GetStaticIntField(env, tpj_probe_class, tpj_probe_gen)) {
		jlongArray a = (jlongArray)(*env)->GetObjectField(env, buf, tpj_buf_a);
		if (a != NULL) {
			(*env)->GetLongArrayRegion(env, a, 0, n, (jlong *)b->w);
			(*env)->DeleteLocalRef(env, a);
		}
		if (a != NULL && !tpj_exc(env)) {
			b->tid = (int64_t)(*env)->GetLongField(env, buf, tpj_buf_tid);
			b->n = (int)n;
			tpj_jul_src = buf;
			b->nc = tpj_jul_take(env, &b->c, &b->capc);
			(*env)->SetIntField(env, buf, tpj_buf_n, 0);
			(*env)->SetLongField(env, buf, tpj_buf_last, -1); /* the next event writes a time word first */
			atomic_fetch_add_explicit(&tpj_idle_pushes, 1, memory_order_release);
			tpj_q_push(b);
			queued = 1;
		}
	}
	(*tpj_jvmti)->ResumeThread(tpj_jvmti, owner);
	(*env)->DeleteLocalRef(env, owner);
	return queued;
}

static void tpj_jul_idle(JNIEnv *env) {
	if (tpj_idle_off || tpj_buf_nc == NULL || atomic_load_explicit(&tpj_q_fd, memory_order_relaxed) < 0)
		return;
	if (tpj_buf_owner == NULL) {
		jclass buf = (*env)->FindClass(env, "io/tadpole/Probe$Buf");
		jvmtiCapabilities have;
		memset(&have, 0, sizeof have);
		if (buf == NULL || (*tpj_jvmti)->GetCapabilities(tpj_jvmti, &have) != JVMTI_ERROR_NONE || !have.can_suspend ||
		    (tpj_buf_first = (*env)->GetFieldID(env, buf, "first", "J")) == NULL ||
		    (tpj_buf_owner = (*env)->GetFieldID(env, buf, "owner", "Ljava/lang/Thread;")) == NULL) {
			tpj_exc(env);
			tpj_idle_off = 1;
		}
		if (buf != NULL)
			(*env)->DeleteLocalRef(env, buf);
		if (tpj_idle_off)
			return;
	}
	int64_t now = (*env)->GetStaticLongField(env, tpj_probe_class, tpj_probe_tick);
	if (now - tpj_idle_last < TPJ_IDLE_SCAN_MS)
		return;
	tpj_idle_last = now;
	struct tpj_pbuf *b = NULL;
	pthread_mutex_lock(&tpj_reg_mu);
	for (int i = 0; i < tpj_nreg; i++) {
		jobject buf = tpj_reg[i];
		if ((*env)->GetIntField(env, buf, tpj_buf_nc) <= 0 ||
		    now - (*env)->GetLongField(env, buf, tpj_buf_first) < TPJ_IDLE_MS)
			continue;
		if (b == NULL) {
			/* Not while a suspended thread may hold what it waits for. */
			pthread_mutex_unlock(&tpj_reg_mu);
			b = tpj_pool_take();
			pthread_mutex_lock(&tpj_reg_mu);
			if (b == NULL)
				break;
			i = -1; /* the registry may have changed meanwhile */
			continue;
		}
		if (tpj_idle_flush(env, buf, b))
			b = NULL;
	}
	pthread_mutex_unlock(&tpj_reg_mu);
	if (b != NULL) {
		b->next = NULL;
		tpj_pool_put(b);
	}
}
