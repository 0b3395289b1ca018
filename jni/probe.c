/*
 * probe.c: method tracing. The class file load hook hands classes to the Go
 * rewriter (jvm/instrument, policy in probe.go); the probes call
 * io.tadpole.Probe, which the agent puts on the bootstrap class path in a
 * generated one-package jar and whose natives are bound here. A thread's
 * events sit in its Java long[] buffer; flush0 copies a full buffer once
 * and hands it to the Go side (one crossing per buffer). ThreadEnd and
 * VMDeath flush what the buffers hold: each thread's Probe$Buf is kept as a
 * global reference in a registry. See doc.go, Method tracing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tp.h"
#include "tpjc.h"
#include "tpjp.h"
#include "_cgo_export.h"

/* 1 once the hook may call the Go side (the jar is on the boot class path). */
static atomic_int tpj_hook_on;
/* 1 once Probe's natives are bound. */
static atomic_int tpj_probe_bound;

static jclass tpj_probe_class; /* global ref */
static _Atomic(jobject) tpj_tick_thread; /* global ref: the agent's own, left out of the trace */
static jfieldID tpj_probe_on;
static jfieldID tpj_buf_a, tpj_buf_n, tpj_buf_tid;

/* The calling thread's Probe$Buf (a global ref), and its copy buffer. */
static __thread jobject tpj_my_buf;
static __thread int64_t *tpj_my_copy;

/* The registry of every live thread's buffer, for VMDeath. */
static pthread_mutex_t tpj_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static jobject *tpj_reg;
static int tpj_nreg, tpj_capreg;

/* Bytes of one copy: Probe.SIZE longs. */
#define TPJ_PROBE_SIZE 8192

static void JNICALL tpj_cflh(jvmtiEnv *jvmti, JNIEnv *env, jclass redefined, jobject loader, const char *name,
                             jobject pd, jint len, const unsigned char *data, jint *new_len,
                             unsigned char **new_data) {
	(void)env, (void)pd;
	if (name == NULL || !atomic_load_explicit(&tpj_hook_on, memory_order_relaxed))
		return;
	if (strncmp(name, "io/tadpole/", 11) == 0)
		return;
	void *out = NULL;
	int outlen = 0;
	int rc = tpjGoTransform((char *)name, loader == NULL ? 1 : 0, redefined != NULL ? 1 : 0, (void *)data, (int)len,
	                        &out, &outlen);
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
	if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE) {
		memset(&want, 0, sizeof want);
	}
	atomic_store(&tpj_hook_on, 1);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
	return rest;
}

void tpj_probe_callbacks(jvmtiEventCallbacks *cb) { cb->ClassFileLoadHook = tpj_cflh; }

/* --- natives of io.tadpole.Probe --- */

static int64_t *tpj_copy_buf(void) {
	if (tpj_my_copy == NULL)
		tpj_my_copy = malloc(TPJ_PROBE_SIZE * sizeof(int64_t));
	return tpj_my_copy;
}

static void tpj_flush_array(JNIEnv *env, jlongArray a, jint n, jlong tid) {
	if (n <= 0 || a == NULL)
		return;
	if (n > TPJ_PROBE_SIZE)
		n = TPJ_PROBE_SIZE;
	int64_t *p = tpj_copy_buf();
	if (p == NULL)
		return;
	(*env)->GetLongArrayRegion(env, a, 0, n, (jlong *)p);
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionClear(env);
		return;
	}
	tpjGoProbeFlush((int64_t)tid, p, (int)n);
}

static void JNICALL tpj_probe_flush(JNIEnv *env, jclass cls, jlongArray a, jint n, jlong tid) {
	(void)cls;
	tpj_flush_array(env, a, n, tid);
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

static jboolean JNICALL tpj_probe_tracing(JNIEnv *env, jclass cls) {
	(void)env, (void)cls;
	return tadpole_tracing() ? JNI_TRUE : JNI_FALSE;
}

static JNINativeMethod tpj_probe_methods[] = {
	{"flush0", "([JIJ)V", (void *)tpj_probe_flush},
	{"register0", "(Lio/tadpole/Probe$Buf;)V", (void *)tpj_probe_register},
	{"excType0", "(Ljava/lang/String;)I", (void *)tpj_probe_exc_type},
	{"tracing0", "()Z", (void *)tpj_probe_tracing},
};

/* tpj_flush_buf hands what buf holds to the agent and empties it. */
static void tpj_flush_buf(JNIEnv *env, jobject buf) {
	jlongArray a = (jlongArray)(*env)->GetObjectField(env, buf, tpj_buf_a);
	jint n = (*env)->GetIntField(env, buf, tpj_buf_n);
	jlong tid = (*env)->GetLongField(env, buf, tpj_buf_tid);
	(*env)->SetIntField(env, buf, tpj_buf_n, 0);
	tpj_flush_array(env, a, n, tid);
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

static const char *tpj_probe_classes[] = {"io/tadpole/Probe$Buf", "io/tadpole/Probe$Tick", "io/tadpole/Probe$1"};

int tpj_probe_begin(JNIEnv *env) {
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
		tpj_buf_a = (*env)->GetFieldID(env, buf, "a", "[J");
		tpj_buf_n = (*env)->GetFieldID(env, buf, "n", "I");
		tpj_buf_tid = (*env)->GetFieldID(env, buf, "tid", "J");
		if (tpj_probe_on == NULL || tpj_buf_a == NULL || tpj_buf_n == NULL || tpj_buf_tid == NULL) {
			tpj_exc(env);
			tpj_warn("io.tadpole.Probe lacks its fields: methods are not traced");
			return -1;
		}
		tpj_probe_class = (jclass)(*env)->NewGlobalRef(env, c);
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
	if (tadpole_tracing())
		(*env)->SetStaticBooleanField(env, tpj_probe_class, tpj_probe_on, JNI_TRUE);
	return 0;
}

void tpj_probe_thread_end(JNIEnv *env) {
	jobject b = tpj_my_buf;
	if (b == NULL)
		return;
	tpj_my_buf = NULL;
	if (atomic_load(&tpj_probe_bound))
		tpj_flush_buf(env, b);
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
}

void tpj_probe_death(JNIEnv *env) {
	if (!atomic_load(&tpj_probe_bound))
		return;
	(*env)->SetStaticBooleanField(env, tpj_probe_class, tpj_probe_on, JNI_FALSE);
	pthread_mutex_lock(&tpj_reg_mu);
	for (int i = 0; i < tpj_nreg; i++)
		tpj_flush_buf(env, tpj_reg[i]);
	pthread_mutex_unlock(&tpj_reg_mu);
}

int tpj_probe_own(JNIEnv *env, jthread thread) {
	jobject t = atomic_load(&tpj_tick_thread);
	return t != NULL && (*env)->IsSameObject(env, thread, t);
}
