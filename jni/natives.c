/*
 * natives.c: the native methods of io.tadpole.Tadpole, bound with
 * RegisterNatives. They copy Java strings into stack buffers and call the C
 * API (capi/tadpole.c), which encodes events into the calling thread's
 * buffer: no Go crossing but for tp_jlog's one. Strings go through capi's
 * internal tp_j* variants (capi/tp.h) of the tadpole_* calls: they read
 * Java's modified UTF-8, so U+0000 and supplementary characters arrive
 * intact.
 */
#include <stdlib.h>
#include <string.h>

#include "tp.h"
#include "tpjc.h"
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

static void JNICALL tpj_marker(JNIEnv *env, jclass cls, jstring key, jstring value) {
	(void)cls;
	struct tpj_str k, v;
	if (tpj_utf(env, key, &k) == 0 && tpj_utf(env, value, &v) == 0) {
		tp_jmarker(k.p, v.p);
		tpj_str_free(&v);
	}
	tpj_str_free(&k);
}

static void JNICALL tpj_thread_name(JNIEnv *env, jclass cls, jstring name) {
	(void)cls;
	struct tpj_str n;
	if (tpj_utf(env, name, &n) == 0 && n.p[0] != 0)
		tp_jthread_name(n.p);
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

static jboolean JNICALL tpj_logger_enabled(JNIEnv *env, jclass cls, jint h) {
	(void)env, (void)cls;
	return tadpole_logger_enabled(h) ? JNI_TRUE : JNI_FALSE;
}

static void JNICALL tpj_log(JNIEnv *env, jclass cls, jint h, jint level, jstring level_name, jstring msg) {
	(void)cls;
	struct tpj_str ln, m;
	if (tpj_utf(env, level_name, &ln) == 0 && tpj_utf(env, msg, &m) == 0) {
		tp_jlog(h, level, ln.p[0] != 0 ? ln.p : NULL, m.p);
		tpj_str_free(&m);
	}
	tpj_str_free(&ln);
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
	return tpjGoSelfTest(what);
}

static JNINativeMethod tpj_methods[] = {
	{"tracing0", "()Z", (void *)tpj_tracing},
	{"marker0", "(Ljava/lang/String;Ljava/lang/String;)V", (void *)tpj_marker},
	{"threadName0", "(Ljava/lang/String;)V", (void *)tpj_thread_name},
	{"loggerRegister0", "(Ljava/lang/String;)I", (void *)tpj_logger_register},
	{"loggerEnabled0", "(I)Z", (void *)tpj_logger_enabled},
	{"log0", "(IILjava/lang/String;Ljava/lang/String;)V", (void *)tpj_log},
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
