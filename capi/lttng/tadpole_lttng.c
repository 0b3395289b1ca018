/*
 * libtadpole-lttng.so: the LTTng tracepoint providers of the agent
 * domains (lttng_jul:event, lttng_log4j:event, lttng_python:event), built
 * against lttng-ust and dlopen'ed by libtadpole.so when it is present, so
 * that libtadpole.so itself never depends on lttng-ust. Each function
 * records one log record into whatever LTTng sessions enabled the event;
 * lttng-ust applies the sessions' filters and never blocks the caller
 * (its channels discard or overwrite when full). NULL strings are "".
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tp_jul.h"
#include "tp_log4j.h"
#include "tp_python.h"

#include <string.h>

#define TL_API __attribute__((visibility("default")))
#define TL_S(s) ((s) != 0 ? (s) : "")

/* The interface version libtadpole.so checks before using the others. */
#define TADPOLE_LTTNG_ABI 2

/* Domains, as the session daemon numbers them. */
#define TL_JUL 3
#define TL_LOG4J 4
#define TL_PYTHON 5

TL_API int tadpole_lttng_abi(void) { return TADPOLE_LTTNG_ABI; }

/* tadpole_lttng_enabled reports whether an LTTng session records the
 * domain's event now: one load, for callers to skip building a record. */
TL_API int tadpole_lttng_enabled(int domain) {
	switch (domain) {
	case TL_JUL:
		return lttng_ust_tracepoint_enabled(lttng_jul, event) ? 1 : 0;
	case TL_LOG4J:
		return lttng_ust_tracepoint_enabled(lttng_log4j, event) ? 1 : 0;
	case TL_PYTHON:
		return lttng_ust_tracepoint_enabled(lttng_python, event) ? 1 : 0;
	}
	return 0;
}

/* tadpole_lttng_state returns the address of the word lttng-ust sets
 * while a session records the domain's event (the tracepoint's state,
 * what tadpole_lttng_enabled reads), for callers to test it with one load
 * and no call; NULL for an unknown domain. */
TL_API const int *tadpole_lttng_state(int domain) {
	switch (domain) {
	case TL_JUL:
		return &lttng_ust_tracepoint_lttng_jul___event.state;
	case TL_LOG4J:
		return &lttng_ust_tracepoint_lttng_log4j___event.state;
	case TL_PYTHON:
		return &lttng_ust_tracepoint_lttng_python___event.state;
	}
	return NULL;
}

/*
 * tadpole_lttng_jul_n records lttng_jul:event from strings whose lengths
 * the caller knows (bytes before the NUL each one ends with; NULL is "").
 * The event's descriptors, its registration and the metadata the session
 * daemon writes are those lttng-ust's macros generate from tp_jul.h; only
 * the serialization differs, and not in its bytes: where the generated
 * probe measures each string (strlen) and copies it byte by byte looking
 * for its NUL (the ring buffer's strcpy), tl_jul_probe copies the known
 * bytes and their NUL at once. Filters get the same interpreter stack
 * (the generated function prepares it), notifiers (event rules) the
 * generated probe, and probes that are not the generated one (none in
 * lttng-ust 2.13) are called as the tracepoint would call them.
 */

/* The generated probe and tracepoint of lttng_jul:event (tp_jul.h). */
#define TL_JUL_PROBE lttng_ust__event_probe__lttng_jul___event
#define TL_JUL_TP lttng_ust_tracepoint_lttng_jul___event

typedef void (*tl_jul_fn)(void *, const char *, const char *, const char *, const char *, long, int, int);

/* A JUL record: the four strings NUL-terminated, with their lengths. */
struct tl_jul {
	const char *s[4]; /* msg, logger_name, class_name, method_name */
	size_t n[4];
	long millis;
	int level, tid;
};

/* Payload bytes assembled on the stack for one ring-buffer write. */
#define TL_PACK 1024

static void tl_jul_probe(void *tp_data, const struct tl_jul *r) {
	struct lttng_ust_event_common *event = tp_data;
	if (event->type != LTTNG_UST_EVENT_TYPE_RECORDER) {
		/* notifiers (event rules): the generated probe */
		TL_JUL_PROBE(tp_data, r->s[0], r->s[1], r->s[2], r->s[3], r->millis, r->level, r->tid);
		return;
	}
	struct lttng_ust_event_recorder *rec = event->child;
	struct lttng_ust_channel_buffer *chan = rec->chan;
	struct lttng_ust_channel_common *common = chan->parent;
	if (caa_unlikely(!CMM_ACCESS_ONCE(common->session->active)) || caa_unlikely(!CMM_ACCESS_ONCE(common->enabled)) ||
	    caa_unlikely(!CMM_ACCESS_ONCE(event->enabled)))
		return;
	struct lttng_ust_probe_ctx pctx;
	pctx.struct_size = sizeof pctx;
	pctx.ip = __builtin_return_address(0);
	if (caa_unlikely(CMM_ACCESS_ONCE(event->eval_filter))) {
		/* 2 words a field (the generated probe's __interpreter_stack_data) */
		char stack[2 * sizeof(unsigned long) * 7];
		lttng_ust__event_prepare_interpreter_stack__lttng_jul___event(stack, tp_data, r->s[0], r->s[1], r->s[2],
		                                                            r->s[3], r->millis, r->level, r->tid);
		if (caa_likely(event->run_filter(event, stack, &pctx, NULL) != LTTNG_UST_EVENT_FILTER_ACCEPT))
			return;
	}
	/* The generated get_size: each string with its NUL, then the integers. */
	size_t len = 0;
	for (int i = 0; i < 4; i++)
		len += r->n[i] + 1;
	len += lttng_ust_ring_buffer_align(len, lttng_ust_rb_alignof(long));
	len += sizeof(long);
	len += lttng_ust_ring_buffer_align(len, lttng_ust_rb_alignof(int));
	len += sizeof(int);
	len += lttng_ust_ring_buffer_align(len, lttng_ust_rb_alignof(int));
	len += sizeof(int);
	size_t align = lttng_ust__event_get_align__lttng_jul___event(r->s[0], r->s[1], r->s[2], r->s[3], r->millis,
	                                                             r->level, r->tid);
	struct lttng_ust_ring_buffer_ctx ctx;
	lttng_ust_ring_buffer_ctx_init(&ctx, rec, len, align, &pctx);
	if (chan->ops->event_reserve(&ctx) < 0)
		return;
	long millis = r->millis;
	int level = r->level, tid = r->tid;
#ifndef LTTNG_UST_RING_BUFFER_NATURAL_ALIGN
	/* A packed ring buffer (no alignment, as on x86): the payload's bytes
	 * are the fields' bytes one after the other, written at once. */
	if (len <= TL_PACK) {
		char pack[TL_PACK];
		char *p = pack;
		for (int i = 0; i < 4; i++) {
			memcpy(p, r->s[i], r->n[i]);
			p += r->n[i];
			*p++ = 0;
		}
		memcpy(p, &millis, sizeof millis);
		memcpy(p + sizeof millis, &level, sizeof level);
		memcpy(p + sizeof millis + sizeof level, &tid, sizeof tid);
		chan->ops->event_write(&ctx, pack, len, 1);
		chan->ops->event_commit(&ctx);
		return;
	}
#endif
	for (int i = 0; i < 4; i++)
		chan->ops->event_write(&ctx, r->s[i], r->n[i] + 1, 1);
	chan->ops->event_write(&ctx, &millis, sizeof millis, lttng_ust_rb_alignof(millis));
	chan->ops->event_write(&ctx, &level, sizeof level, lttng_ust_rb_alignof(level));
	chan->ops->event_write(&ctx, &tid, sizeof tid, lttng_ust_rb_alignof(tid));
	chan->ops->event_commit(&ctx);
}

TL_API void tadpole_lttng_jul_n(const char *msg, size_t msg_len, const char *logger, size_t logger_len,
                                const char *class_name, size_t class_len, const char *method_name, size_t method_len,
                                long millis, int level, int thread_id) {
	if (caa_likely(!lttng_ust_tracepoint_enabled(lttng_jul, event)))
		return;
	if (caa_unlikely(!(lttng_ust_tracepoint_dlopen_ptr && lttng_ust_tracepoint_dlopen_ptr->rcu_read_lock_sym)))
		return;
	struct tl_jul r = {
		.s = {msg, logger, class_name, method_name},
		.n = {msg_len, logger_len, class_len, method_len},
		.millis = millis,
		.level = level,
		.tid = thread_id,
	};
	for (int i = 0; i < 4; i++)
		if (r.s[i] == NULL)
			r.s[i] = "", r.n[i] = 0;
	lttng_ust_tracepoint_dlopen_ptr->rcu_read_lock_sym();
	struct lttng_ust_tracepoint_probe *p = lttng_ust_tracepoint_dlopen_ptr->rcu_dereference_sym(TL_JUL_TP.probes);
	if (p != NULL) {
		do {
			if (p->func == (void (*)(void))TL_JUL_PROBE)
				tl_jul_probe(p->data, &r);
			else
				((tl_jul_fn)p->func)(p->data, r.s[0], r.s[1], r.s[2], r.s[3], millis, level, thread_id);
		} while ((++p)->func != NULL);
	}
	lttng_ust_tracepoint_dlopen_ptr->rcu_read_unlock_sym();
}

TL_API void tadpole_lttng_log4j(const char *msg, const char *logger, const char *class_name, const char *method_name,
                                const char *file_name, int line, long timestamp, int level, const char *thread_name) {
	lttng_ust_tracepoint(lttng_log4j, event, TL_S(msg), TL_S(logger), TL_S(class_name), TL_S(method_name),
	                     TL_S(file_name), line, timestamp, level, TL_S(thread_name));
}

TL_API void tadpole_lttng_python(const char *asctime, const char *msg, const char *logger, const char *func_name,
                                 int lineno, int level, int thread, const char *thread_name) {
	lttng_ust_tracepoint(lttng_python, event, TL_S(asctime), TL_S(msg), TL_S(logger), TL_S(func_name), lineno,
	                     level, thread, TL_S(thread_name));
}
