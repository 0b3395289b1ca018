/*
 * lttng.c: recording log records into LTTng sessions through
 * libtadpole-lttng.so (capi/lttng), loaded with dlopen() so that
 * libtadpole.so loads where lttng-ust is absent. The companion's functions
 * fire lttng-ust tracepoints identical to the official agents'
 * (lttng_jul:event, lttng_log4j:event, lttng_python:event); lttng-ust
 * applies the sessions' filters and never blocks the caller.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tp.h"

#define TP_LTTNG_ABI 2
#define TP_DOMAIN_JUL 3
#define TP_DOMAIN_LOG4J 4
#define TP_DOMAIN_PYTHON 5

typedef const int *(*tp_lttng_state_fn)(int domain);
typedef void (*tp_lttng_jul_n_fn)(const char *, size_t, const char *, size_t, const char *, size_t, const char *,
                                  size_t, long, int, int);
typedef void (*tp_lttng_log4j_fn)(const char *, const char *, const char *, const char *, const char *, int, long,
                                  int, const char *);
typedef void (*tp_lttng_python_fn)(const char *, const char *, const char *, const char *, int, int, int,
                                   const char *);

/* Set once by tp_lttng_open before tp_lttng_ready is published. */
static tp_lttng_jul_n_fn tp_lt_jul_n;
static tp_lttng_log4j_fn tp_lt_log4j;
static tp_lttng_python_fn tp_lt_python;
static int tp_lt_domain;
/* lttng-ust's word for "a session records the domain's event" (the
 * tracepoint's state, in the companion): read with one relaxed load. */
static const int *tp_lt_state;
static _Atomic int tp_lt_ready;
static _Atomic int tp_lt_registered;
static _Atomic int tp_lt_source = 1;

/* Per logger handle: TP_ACCEPT_* in the low byte, the level above. */
static _Atomic uint64_t tp_lt_acc[TADPOLE_MAX_LOGGERS + 1];
/* A logger's name as the events carry it: its bytes, NUL-terminated. */
struct tp_lt_name {
	size_t len;
	char s[];
};

/* Per logger handle: its name; set once, never freed. */
static _Atomic(struct tp_lt_name *) tp_lt_names[TADPOLE_MAX_LOGGERS + 1];

int tp_lttng_open(const char *path, int domain, char *err, size_t errlen) {
	if (atomic_load(&tp_lt_ready))
		return 0;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e != NULL ? e : path);
		return -1;
	}
	int (*abi)(void) = (int (*)(void))dlsym(h, "tadpole_lttng_abi");
	tp_lt_jul_n = (tp_lttng_jul_n_fn)dlsym(h, "tadpole_lttng_jul_n");
	tp_lttng_state_fn state = (tp_lttng_state_fn)dlsym(h, "tadpole_lttng_state");
	tp_lt_log4j = (tp_lttng_log4j_fn)dlsym(h, "tadpole_lttng_log4j");
	tp_lt_python = (tp_lttng_python_fn)dlsym(h, "tadpole_lttng_python");
	if (abi == NULL || abi() != TP_LTTNG_ABI || state == NULL || tp_lt_jul_n == NULL || tp_lt_log4j == NULL ||
	    tp_lt_python == NULL) {
		snprintf(err, errlen, "%s: not a libtadpole-lttng.so of interface %d", path, TP_LTTNG_ABI);
		dlclose(h);
		return -1;
	}
	tp_lt_domain = domain;
	tp_lt_state = state(domain);
	if (tp_lt_state == NULL) {
		snprintf(err, errlen, "%s: no tracepoint for domain %d", path, domain);
		dlclose(h);
		return -1;
	}
	atomic_store(&tp_lt_ready, 1);
	return 0;
}

int tp_lttng_ready(void) { return atomic_load(&tp_lt_ready); }

void tp_lttng_set_source(int on) { atomic_store(&tp_lt_source, on); }

int tp_lttng_source(void) { return atomic_load_explicit(&tp_lt_source, memory_order_relaxed); }

void tp_lttng_set_registered(int on) { atomic_store(&tp_lt_registered, on); }

int tp_lttng_registered(void) { return atomic_load(&tp_lt_registered); }

void tp_set_logger_lttng(int32_t h, int kind, int32_t level) {
	if ((uint32_t)h - 1u < TADPOLE_MAX_LOGGERS)
		atomic_store_explicit(&tp_lt_acc[h], (uint64_t)(uint32_t)level << 32 | (uint8_t)kind, memory_order_relaxed);
}

int tp_lttng_named(int32_t h) {
	return (uint32_t)h - 1u < TADPOLE_MAX_LOGGERS && atomic_load_explicit(&tp_lt_names[h], memory_order_acquire) != NULL;
}

void tp_lttng_name(int32_t h, const char *name) {
	if ((uint32_t)h - 1u >= TADPOLE_MAX_LOGGERS || atomic_load(&tp_lt_names[h]) != NULL)
		return;
	size_t len = strlen(name);
	struct tp_lt_name *n = malloc(sizeof *n + len + 1);
	if (n == NULL)
		return;
	n->len = len;
	memcpy(n->s, name, len + 1);
	struct tp_lt_name *none = NULL;
	if (!atomic_compare_exchange_strong(&tp_lt_names[h], &none, n))
		free(n);
}

int tp_lttng_on(int32_t h) {
	if ((uint32_t)h - 1u >= TADPOLE_MAX_LOGGERS || !atomic_load_explicit(&tp_lt_ready, memory_order_acquire))
		return 0;
	return (atomic_load_explicit(&tp_lt_acc[h], memory_order_relaxed) & 0xFF) != TP_ACCEPT_NONE;
}

/* tp_lt_enabled_now reports whether a session records the domain's event
 * now (tp_lt_ready set). */
static inline int tp_lt_enabled_now(void) {
	return __atomic_load_n((const int *)tp_lt_state, __ATOMIC_RELAXED) != 0;
}

int tp_lttng_live(void) { return atomic_load_explicit(&tp_lt_ready, memory_order_acquire) && tp_lt_enabled_now(); }

int tp_lttng_recording(int32_t h) { return tp_lttng_on(h) && tp_lt_enabled_now(); }

int tp_lttng_wants(int32_t h, int level) {
	if ((uint32_t)h - 1u >= TADPOLE_MAX_LOGGERS || !atomic_load_explicit(&tp_lt_ready, memory_order_acquire))
		return 0;
	uint64_t a = atomic_load_explicit(&tp_lt_acc[h], memory_order_relaxed);
	int32_t v = (int32_t)(uint32_t)(a >> 32);
	switch ((int)(a & 0xFF)) {
	case TP_ACCEPT_ALL:
	case TP_ACCEPT_LOG:
		break;
	case TP_ACCEPT_RANGE:
		if (level < v)
			return 0;
		break;
	case TP_ACCEPT_SINGLE:
		if (level != v)
			return 0;
		break;
	default:
		return 0;
	}
	return tp_lt_enabled_now();
}

/* tp_lt_jul_event records lttng_jul:event from strings of known lengths;
 * logger NULL is logger h's name. */
static void tp_lt_jul_event(int32_t h, const char *msg, size_t msg_len, const char *logger, size_t logger_len,
                            const char *class_name, size_t class_len, const char *method_name, size_t method_len,
                            int64_t millis, int level, int tid) {
	if (logger == NULL) {
		struct tp_lt_name *n = NULL;
		if ((uint32_t)h - 1u < TADPOLE_MAX_LOGGERS)
			n = atomic_load_explicit(&tp_lt_names[h], memory_order_acquire);
		logger = n != NULL ? n->s : "";
		logger_len = n != NULL ? n->len : 0;
	}
	tp_lt_jul_n(msg, msg_len, logger, logger_len, class_name, class_len, method_name, method_len, (long)millis, level,
	            tid);
}

void tp_lttng_jul(int32_t h, const char *msg, size_t msg_len, const char *logger, const char *class_name,
                  size_t class_len, const char *method_name, size_t method_len, int64_t millis, int level, int tid) {
	if (!atomic_load_explicit(&tp_lt_ready, memory_order_acquire))
		return;
	if (tp_lt_domain != TP_DOMAIN_JUL) {
		tp_lttng_log(h, msg, logger, class_name, method_name, millis, level, tid);
		return;
	}
	tp_lt_jul_event(h, msg, msg_len, logger, logger != NULL ? strlen(logger) : 0, class_name, class_len, method_name,
	                method_len, millis, level, tid);
}

void tp_lttng_log(int32_t h, const char *msg, const char *logger, const char *class_name, const char *method_name,
                  int64_t millis, int level, int tid) {
	if (!atomic_load_explicit(&tp_lt_ready, memory_order_acquire))
		return;
	if (logger == NULL && tp_lt_domain != TP_DOMAIN_JUL && (uint32_t)h - 1u < TADPOLE_MAX_LOGGERS) {
		struct tp_lt_name *n = atomic_load_explicit(&tp_lt_names[h], memory_order_acquire);
		logger = n != NULL ? n->s : NULL;
	}
	if (millis < 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		millis = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	if (tid < 0)
		tid = (int)syscall(SYS_gettid);
	switch (tp_lt_domain) {
	case TP_DOMAIN_LOG4J: {
		char tname[16] = "";
		pthread_getname_np(pthread_self(), tname, sizeof tname);
		tp_lt_log4j(msg, logger, class_name, method_name, "", -1, (long)millis, level, tname);
		break;
	}
	case TP_DOMAIN_PYTHON: {
		/* asctime as Python's logging formats it: local time, with ms. */
		char when[64] = "", tname[16] = "";
		time_t s = (time_t)(millis / 1000);
		struct tm tm;
		if (localtime_r(&s, &tm) != NULL) {
			size_t n = strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
			snprintf(when + n, sizeof when - n, ",%03d", (int)(millis % 1000));
		}
		pthread_getname_np(pthread_self(), tname, sizeof tname);
		tp_lt_python(when, msg, logger, method_name, 0, level, tid, tname);
		break;
	}
	default:
		msg = msg != NULL ? msg : "";
		class_name = class_name != NULL ? class_name : "";
		method_name = method_name != NULL ? method_name : "";
		tp_lt_jul_event(h, msg, strlen(msg), logger, logger != NULL ? strlen(logger) : 0, class_name,
		                strlen(class_name), method_name, strlen(method_name), millis, level, tid);
	}
}

int tp_lttng_self_path(char *buf, size_t len) {
	Dl_info info;
	if (dladdr((void *)tp_lttng_open, &info) == 0 || info.dli_fname == NULL)
		return -1;
	snprintf(buf, len, "%s", info.dli_fname);
	return 0;
}
