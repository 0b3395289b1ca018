/*
 * natives.c: the native methods of io.tadpole.Tadpole, bound with
 * RegisterNatives. They call capi's internal tp_j* functions (capi/jvmhost.h),
 * which encode events into the calling thread's C buffer: no Go crossing
 * per event. Strings stay in Java's modified UTF-8 (GetStringUTFRegion),
 * flagged as such, so U+0000 and supplementary characters arrive intact.
 * Every native that records passes the thread's current name and its
 * hashCode: a hash other than the one the thread announced is a rename.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "jvmhost.h"
#include "tpjc.h"
#include "tpjp.h"
#include "_cgo_export.h"

/* Bytes of a string copied on the stack; longer strings are malloc'd. */
#define TPJ_STACK_STR 1024
/* Bytes of modified UTF-8 one UTF-16 unit may take. */
#define TPJ_UTF8_PER_CHAR 3

/* tpj_str is a Java string copied as NUL-terminated modified UTF-8. */
struct tpj_str {
	char *p;
	char *heap;
	char stack[TPJ_STACK_STR];
};

/* tpj_utf copies s (at most TADPOLE_MAX_STRING UTF-16 units: tadpole
 * truncates at that many bytes anyway) into str; NULL s gives "". It
 * returns 0, or -1 when out of memory. */
static int tpj_utf(JNIEnv *env, jstring s, struct tpj_str *str) {
	str->heap = NULL;
	str->p = str->stack;
	if (s == NULL) {
		str->stack[0] = 0;
		return 0;
	}
	jsize n = (*env)->GetStringLength(env, s);
	if (n <= TADPOLE_MAX_STRING) {
		jsize b = (*env)->GetStringUTFLength(env, s);
		if ((size_t)b + 1 > sizeof str->stack) {
			str->heap = malloc((size_t)b + 1);
			if (str->heap == NULL)
				return -1;
			str->p = str->heap;
		}
		(*env)->GetStringUTFRegion(env, s, 0, n, str->p);
		str->p[b] = 0;
		return 0;
	}
	/* Truncated: the byte length of a prefix is not known beforehand. */
	str->heap = calloc((size_t)TADPOLE_MAX_STRING * TPJ_UTF8_PER_CHAR + 1, 1);
	if (str->heap == NULL)
		return -1;
	str->p = str->heap;
	(*env)->GetStringUTFRegion(env, s, 0, TADPOLE_MAX_STRING, str->p);
	return 0;
}

static void tpj_str_free(struct tpj_str *str) { free(str->heap); }

static jboolean JNICALL tpj_tracing(JNIEnv *env, jclass cls) {
	(void)env, (void)cls;
	return tadpole_tracing() ? JNI_TRUE : JNI_FALSE;
}

/* tpj_ready brings the calling Java thread from state st (tp_jenter) to
 * TP_J_RECORD, or TP_J_DROP: it binds the thread to its Java thread, or
 * records its new name (name, hashCode hash). */
static int tpj_ready(JNIEnv *env, int st, jstring name, jint hash) {
	for (int i = 0; i < 3 && st != TP_J_RECORD && st != TP_J_DROP; i++) {
		if (st == TP_J_BIND) {
			if (tpj_bind_current(env) != 0)
				return TP_J_DROP;
		} else {
			struct tpj_str n;
			if (tpj_utf(env, name, &n) == 0)
				tp_jrename(n.p, hash);
			tpj_str_free(&n);
		}
		st = tp_jenter(hash);
	}
	return st == TP_J_RECORD ? TP_J_RECORD : TP_J_DROP;
}

static void JNICALL tpj_marker(JNIEnv *env, jclass cls, jstring key, jstring value, jstring tname, jint hash) {
	(void)cls;
	int st = tp_jenter(hash);
	if (st != TP_J_RECORD && tpj_ready(env, st, tname, hash) != TP_J_RECORD)
		return;
	struct tpj_str k, v;
	if (tpj_utf(env, key, &k) == 0 && tpj_utf(env, value, &v) == 0) {
		tp_jmarker(k.p, v.p);
		tpj_str_free(&v);
	}
	tpj_str_free(&k);
}

static void JNICALL tpj_thread_name(JNIEnv *env, jclass cls, jstring name, jint hash) {
	(void)cls;
	int st = tp_jenter(hash);
	if (st == TP_J_BIND) {
		if (tpj_bind_current(env) != 0)
			return;
		st = tp_jenter(hash);
	}
	if (st == TP_J_DROP)
		return;
	struct tpj_str n;
	if (tpj_utf(env, name, &n) == 0 && n.p[0] != 0)
		tp_jrename(n.p, hash);
	tpj_str_free(&n);
}

static jint JNICALL tpj_logger_register(JNIEnv *env, jclass cls, jstring name) {
	(void)cls;
	struct tpj_str n;
	jint h = TADPOLE_ENOMEM;
	if (tpj_utf(env, name, &n) == 0)
		h = tp_jlogger_register(n.p);
	tpj_str_free(&n);
	return h;
}

/* A logger needs the agent's JUL handler while its records go to HQ or
 * into LTTng sessions. */
static jboolean JNICALL tpj_logger_enabled(JNIEnv *env, jclass cls, jint h) {
	(void)cls;
	tpj_probe_sites_live(env); /* the sync sees sessions begin before the next tick */
	return tadpole_logger_enabled(h) || tp_lttng_on(h) ? JNI_TRUE : JNI_FALSE;
}

/* Bytes of a source class or method name found by tpj_source. */
#define TPJ_SRC_NAME 512

/* tpj_record_str calls the record's String getter name (()Ljava/lang/String;)
 * and copies its result into str; -1 on failure (exception cleared). */
static int tpj_record_str(JNIEnv *env, jobject record, const char *name, struct tpj_str *str) {
	jclass c = (*env)->GetObjectClass(env, record);
	jmethodID m = c != NULL ? (*env)->GetMethodID(env, c, name, "()Ljava/lang/String;") : NULL;
	jstring s = m != NULL ? (jstring)(*env)->CallObjectMethod(env, record, m) : NULL;
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionClear(env);
		s = NULL;
	}
	int rc = tpj_utf(env, s, str);
	if (s != NULL)
		(*env)->DeleteLocalRef(env, s);
	if (c != NULL)
		(*env)->DeleteLocalRef(env, c);
	return rc;
}

/* Records whose source was not named by a call site (TPJ_SELFTEST_SOURCE_WALKS). */
static _Atomic long tpj_source_walks;

/* tpj_lttng_any records one JUL record into the LTTng sessions as
 * lttng_jul:event, with the fields the official LTTng Java agent fills,
 * in every case tpj_lttng leaves to it: the source class and method are
 * those of the call site when the calling class was rewritten, else found
 * from the stack as JUL finds them (source.c), or asked of the record
 * (LogRecord.getSourceClassName) when it may carry its own; the logger's
 * name is the one kept in C, else asked of the record; a long message is
 * copied to the heap. */
static __attribute__((noinline)) void tpj_lttng_any(JNIEnv *env, jint h, jobject record, jstring msg, jint msg_len,
                                                    jlong millis, jint level, jint tid, jint site) {
	struct tpj_str m, l, c, f;
	m.heap = l.heap = c.heap = f.heap = NULL;
	char sc[TPJ_SRC_NAME], sm[TPJ_SRC_NAME];
	const char *cp = sc, *mp = sm;
	size_t cn = 0, mn = 0;
	if (!tp_lttng_source()) {
		cp = mp = ""; /* lttng_source=off */
	} else if (site > 0 && tpj_site_get(site, &cp, &cn, &mp, &mn) == 0) {
		/* the call site: the rewriter named the calling method */
	} else {
		atomic_fetch_add_explicit(&tpj_source_walks, 1, memory_order_relaxed);
		if (tpj_source(env, sc, sizeof sc, sm, sizeof sm) != 0) {
			if (record == NULL || tpj_record_str(env, record, "getSourceClassName", &c) != 0 ||
			    tpj_record_str(env, record, "getSourceMethodName", &f) != 0)
				goto out;
			cp = c.p, mp = f.p;
		}
		cn = strlen(cp);
		mn = strlen(mp);
	}
	const char *logger = NULL; /* the name kept in C */
	if (!tp_lttng_named(h)) {
		if (record == NULL || tpj_record_str(env, record, "getLoggerName", &l) != 0)
			goto out;
		logger = l.p;
	}
	if (tpj_utf(env, msg, &m) != 0)
		goto out;
	tp_lttng_jul(h, m.p, strlen(m.p), logger, cp, cn, mp, mn, (int64_t)millis, level, tid);
out:
	if (m.heap != NULL)
		tpj_str_free(&m);
	if (f.heap != NULL)
		tpj_str_free(&f);
	if (c.heap != NULL)
		tpj_str_free(&c);
	if (l.heap != NULL)
		tpj_str_free(&l);
}

/* tpj_lttng_fast records one JUL record into the LTTng sessions in the
 * common case, with no JNI call but the message's copy: the call site
 * named by the rewriter (no stack walk; or lttng_source=off), the logger's
 * name kept in C since its registration, all with their lengths, and a
 * message of up to TPJ_STACK_STR / TPJ_UTF8_PER_CHAR chars (msg_len,
 * msg.length()) copied with one GetStringUTFRegion onto the stack; the
 * event is written from them (tp_lttng_jul) without measuring them again.
 * It returns -1, having recorded nothing, for any other record, which
 * tpj_lttng_any records. */
static inline int tpj_lttng_fast(JNIEnv *env, jint h, jstring msg, jint msg_len, jlong millis, jint level, jint tid,
                                 jint site) {
	const char *cp = "", *mp = "";
	size_t cn = 0, mn = 0;
	if ((tp_lttng_source() && (site <= 0 || tpj_site_get(site, &cp, &cn, &mp, &mn) != 0)) || !tp_lttng_named(h) ||
	    msg == NULL || msg_len < 0 || (size_t)msg_len * TPJ_UTF8_PER_CHAR >= TPJ_STACK_STR)
		return -1;
	char m[TPJ_STACK_STR];
	size_t mb = 0;
	m[0] = 0;
	if (msg_len > 0) {
		/* HotSpot ends the copy with a NUL; bounded, should a JVM not. */
		m[(size_t)msg_len * TPJ_UTF8_PER_CHAR] = 0;
		/* msg_len is msg.length() (JulHandler): never out of bounds, so no
		 * ExceptionCheck (a JNI call of its own). Modified UTF-8 has no 00
		 * byte: the first NUL ends the copy. */
		(*env)->GetStringUTFRegion(env, msg, 0, msg_len, m);
		mb = strnlen(m, (size_t)msg_len * TPJ_UTF8_PER_CHAR);
	}
	tp_lttng_jul(h, m, mb, NULL, cp, cn, mp, mn, (int64_t)millis, level, tid);
	return 0;
}

/* tpj_lttng records one JUL record into the LTTng sessions (tpj_log calls
 * it when a session wants the record): tpj_lttng_fast, else
 * tpj_lttng_any. */
static inline void tpj_lttng(JNIEnv *env, jint h, jobject record, jstring msg, jint msg_len, jlong millis,
                             jint level, jint tid, jint site) {
	if (tpj_lttng_fast(env, h, msg, msg_len, millis, level, tid, site) != 0)
		tpj_lttng_any(env, h, record, msg, msg_len, millis, level, tid, site);
}

/* tpj_lttng_only is Tadpole.lttng0, which JulHandler calls first for a
 * record: while no HQ run is on (log0 would give HQ nothing), it takes the
 * record into the LTTng sessions that want it when tpj_lttng_fast can,
 * and answers JNI_TRUE: the record is done. Otherwise it records nothing
 * and answers JNI_FALSE: the record takes log0, which sends it to HQ and
 * LTTng alike. So an LTTng-only record crosses with its seven values,
 * not log0's eleven (no thread name, no LogRecord), and skips the
 * thread's HQ check-in. */
static jboolean JNICALL tpj_lttng_only(JNIEnv *env, jclass cls, jint h, jint level, jstring msg, jint msg_len,
                                       jlong millis, jint tid, jint site) {
	(void)cls;
	if (tp_jrun())
		return JNI_FALSE;
	if (!tp_lttng_wants(h, level))
		return JNI_TRUE;
	return tpj_lttng_fast(env, h, msg, msg_len, millis, level, tid, site) == 0 ? JNI_TRUE : JNI_FALSE;
}

/* The names of java.util.logging's standard levels, which JulHandler
 * passes as NULL: the level's value names it. */
static const struct {
	jint level;
	const char *name;
} tpj_jul_levels[] = {
	{1000, "SEVERE"}, {900, "WARNING"}, {800, "INFO"}, {700, "CONFIG"},
	{500, "FINE"},    {400, "FINER"},   {300, "FINEST"},
};

static const char *tpj_jul_level(jint level) {
	for (size_t i = 0; i < sizeof tpj_jul_levels / sizeof tpj_jul_levels[0]; i++)
		if (tpj_jul_levels[i].level == level)
			return tpj_jul_levels[i].name;
	return NULL;
}

/* tpj_log_go hands a record to the agent's Logger.Log (one Go crossing):
 * for loggers with a filter expression, and strings too long for C. */
static void tpj_log_go(JNIEnv *env, jint h, jint level, const char *std, jstring level_name, jstring msg) {
	struct tpj_str ln, m;
	if (tpj_utf(env, level_name, &ln) == 0 && tpj_utf(env, msg, &m) == 0) {
		const char *name = std != NULL ? std : ln.p;
		tp_jlog(h, level, name[0] != 0 ? name : NULL, m.p);
		tpj_str_free(&m);
	}
	tpj_str_free(&ln);
}

/* tpj_log records one JUL record of logger h (JulHandler.publish: one
 * native a record, wherever it goes). Into the LTTng sessions that want
 * it: tpj_lttng, with the record's millis, thread id and call site (0:
 * none). Into HQ: the marker "log:<logger>" = "<level name> <message>"
 * (agent.LogMarker). level_name is NULL for a standard level; msg_len is
 * msg.length(); tname and hash are the thread's current name and its
 * hashCode. An accepted record is copied straight into the thread's
 * buffer with GetStringUTFRegion, the one JNI call of a record with a
 * standard level: room for the worst case (TPJ_UTF8_PER_CHAR bytes a
 * char) is reserved and the value's length taken from the NUL
 * GetStringUTFRegion writes (modified UTF-8 has no 00 byte). No Go
 * crossing. */
static void JNICALL tpj_log(JNIEnv *env, jclass cls, jint h, jint level, jstring level_name, jstring msg,
                            jint msg_len, jstring tname, jint hash, jobject record, jlong millis, jint tid,
                            jint site) {
	(void)cls;
	if (tp_lttng_wants(h, level))
		tpj_lttng(env, h, record, msg, msg_len, millis, level, tid, site);
	int st = tp_jenter(hash);
	if (st != TP_J_RECORD && tpj_ready(env, st, tname, hash) != TP_J_RECORD)
		return;
	int d = tp_jlog_accept(h, level);
	if (d == TP_LOG_DROP)
		return;
	tpj_probe_before_log(env); /* method tracing: the thread's calls so far go first (probe.c) */
	const char *std = level_name == NULL ? tpj_jul_level(level) : NULL;
	/* JulHandler passes NULL for standard levels only; the agent names any
	 * other value on its domain's scale. */
	if (msg == NULL || d == TP_LOG_GO || (level_name == NULL && std == NULL)) {
		tpj_log_go(env, h, level, std, level_name, msg);
		return;
	}
	jsize ln = 0;
	size_t lb;
	if (std != NULL) {
		lb = strlen(std);
	} else {
		ln = (*env)->GetStringLength(env, level_name);
		lb = (size_t)ln * TPJ_UTF8_PER_CHAR;
	}
	size_t room = lb + 1 + (size_t)msg_len * TPJ_UTF8_PER_CHAR;
	if (room > TADPOLE_MAX_STRING && msg_len >= 0 && msg_len <= TADPOLE_MAX_STRING)
		room = lb + 1 + (size_t)(*env)->GetStringUTFLength(env, msg); /* a long message: its exact size */
	if (msg_len < 0 || room > TADPOLE_MAX_STRING) {
		tpj_log_go(env, h, level, std, level_name, msg);
		return;
	}
	char *v = tp_jlog_reserve(h, (uint32_t)room);
	if (v == NULL) {
		tpj_log_go(env, h, level, std, level_name, msg);
		return;
	}
	if (std != NULL) {
		memcpy(v, std, lb);
	} else {
		v[0] = 0;
		if (ln > 0)
			(*env)->GetStringUTFRegion(env, level_name, 0, ln, v);
		/* HotSpot ends the copy with a NUL; bounded, should a JVM not. */
		lb = strnlen(v, lb);
	}
	v[lb] = ' ';
	size_t mb = 0;
	if (msg_len > 0) {
		(*env)->GetStringUTFRegion(env, msg, 0, msg_len, v + lb + 1);
		mb = strnlen(v + lb + 1, room - lb - 1);
	}
	tp_jlog_commit((uint32_t)(lb + 1 + mb));
	return;
}

static jboolean JNICALL tpj_initialized(JNIEnv *env, jclass cls, jclass c) {
	(void)env, (void)cls;
	jint st = 0;
	if (c == NULL || tpj_jvmti == NULL || (*tpj_jvmti)->GetClassStatus(tpj_jvmti, c, &st) != JVMTI_ERROR_NONE)
		return JNI_FALSE;
	return (st & JVMTI_CLASS_STATUS_INITIALIZED) ? JNI_TRUE : JNI_FALSE;
}

static jint JNICALL tpj_self_test(JNIEnv *env, jclass cls, jint what) {
	(void)env, (void)cls;
	if (what == TPJ_SELFTEST_SOURCE_WALKS)
		return (jint)atomic_load(&tpj_source_walks);
	return tpjGoSelfTest(what);
}

static JNINativeMethod tpj_methods[] = {
	{"tracing0", "()Z", (void *)tpj_tracing},
	{"marker0", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;I)V", (void *)tpj_marker},
	{"threadName0", "(Ljava/lang/String;I)V", (void *)tpj_thread_name},
	{"loggerRegister0", "(Ljava/lang/String;)I", (void *)tpj_logger_register},
	{"loggerEnabled0", "(I)Z", (void *)tpj_logger_enabled},
	{"log0", "(IILjava/lang/String;Ljava/lang/String;ILjava/lang/String;ILjava/lang/Object;JII)V", (void *)tpj_log},
	{"lttng0", "(IILjava/lang/String;IJII)Z", (void *)tpj_lttng_only},
	{"initialized0", "(Ljava/lang/Class;)Z", (void *)tpj_initialized},
	{"selfTest0", "(I)I", (void *)tpj_self_test},
};

int tpj_register_natives(JNIEnv *env, jclass tadpole) {
	jint n = (jint)(sizeof tpj_methods / sizeof tpj_methods[0]);
	if ((*env)->RegisterNatives(env, tadpole, tpj_methods, n) != JNI_OK) {
		(*env)->ExceptionClear(env);
		return -1;
	}
	return 0;
}
