/*
 * jvmhost.c: what the JVM agent (package jni, in the same library) records
 * through: the tp_j* functions of jvmhost.h, over the recorder
 * (recorder.c) and the C API's calls (api.c).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "jvmhost.h"
#include "recorder.h"

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

int tp_jrun(void) { return tp_live_mode(TP_EPOCH_MODE(atomic_load_explicit(&tp_epoch, memory_order_relaxed))); }

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

void tp_jlog_commit(uint32_t value_len) {
	struct tp_thread *t = tp_self;
	if (t != NULL && t->resv)
		tp_commit_log(t, value_len);
}

const _Atomic uint64_t *tp_jlog_acc(int32_t *max) {
	*max = atomic_load_explicit(&tp_logger_max, memory_order_acquire);
	return tp_logger_acc;
}

const char *tp_jlog_key(int32_t h, uint32_t *len, int *mutf8) {
	if ((uint32_t)h - 1u >= (uint32_t)atomic_load_explicit(&tp_logger_max, memory_order_relaxed))
		return NULL;
	const struct tp_lkey *k = atomic_load_explicit(&tp_logger_key[h], memory_order_acquire);
	if (k == NULL)
		return NULL;
	*len = k->len;
	*mutf8 = k->flags == TP_FLAG_MUTF8;
	return k->s;
}
