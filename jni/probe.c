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

#include "jvmhost.h"
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
static jfieldID tpj_probe_on;
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
/* jul_order=on: JUL records keep their order with the thread's calls. */
static int tpj_jul_order;

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
	if (!tpj_my_flushed || tpj_my_logged) {
		/* The thread's C API buffer (its name from ThreadStart, its log
		 * records) goes first, so that HQ names the thread before its first
		 * call and gets its log records in order with its calls. */
		tadpole_flush();
		tpj_my_flushed = 1;
		tpj_my_logged = 0;
	}
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

/* Probe.siteGen, and the state it was last set for (1: an LTTng session
 * records JUL events). */
static jfieldID tpj_probe_site_gen;
static atomic_int tpj_sites_live;
static atomic_int tpj_site_gen_next;

void tpj_probe_sites_live(JNIEnv *env) {
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

static jint JNICALL tpj_probe_state(JNIEnv *env, jclass cls) {
	(void)cls;
	tpj_probe_sites_live(env);
	int tracing = tadpole_tracing();
	if (tracing && atomic_load(&tpj_hook_on) && !atomic_load(&tpj_methods_on)) {
		/* The first run began after VM start: the loaded classes it traces,
		 * and those rewritten with call sites only, get method probes. */
		atomic_store(&tpj_methods_on, 1);
		tpj_enable_hook();
		atomic_store(&tpj_retransform_wanted, 1);
	}
	return (tracing ? 1 : 0) | (atomic_exchange(&tpj_retransform_wanted, 0) ? 2 : 0);
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

/* tpj_flush_buf hands what buf holds to the agent and empties it. */
static void tpj_flush_buf(JNIEnv *env, jobject buf) {
	jlongArray a = (jlongArray)(*env)->GetObjectField(env, buf, tpj_buf_a);
	jint n = (*env)->GetIntField(env, buf, tpj_buf_n);
	if ((*env)->GetIntField(env, buf, tpj_buf_gen) != (*env)->GetStaticIntField(env, tpj_probe_class, tpj_probe_gen))
		n = 0; /* events of an earlier tracing generation: not this run's */
	jlong tid = (*env)->GetLongField(env, buf, tpj_buf_tid);
	(*env)->SetIntField(env, buf, tpj_buf_n, 0);
	(*env)->SetLongField(env, buf, tpj_buf_last, -1); /* the next event writes a time word first */
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
}

static const char *tpj_probe_classes[] = {"io/tadpole/Probe$Buf", "io/tadpole/Probe$Tick", "io/tadpole/Probe$1"};

/* tpj_enable_hook enables the class file load hook once. */
static void tpj_enable_hook(void) {
	if (!atomic_exchange(&tpj_hook_enabled, 1))
		(*tpj_jvmti)->SetEventNotificationMode(tpj_jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
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
		tpj_buf_a = (*env)->GetFieldID(env, buf, "a", "[J");
		tpj_buf_n = (*env)->GetFieldID(env, buf, "n", "I");
		tpj_buf_tid = (*env)->GetFieldID(env, buf, "tid", "J");
		tpj_buf_gen = (*env)->GetFieldID(env, buf, "bufGen", "I");
		tpj_buf_last = (*env)->GetFieldID(env, buf, "last", "J");
		tpj_probe_gen = (*env)->GetStaticFieldID(env, c, "gen", "I");
		tpj_probe_site_gen = (*env)->GetStaticFieldID(env, c, "siteGen", "I");
		if (tpj_probe_site_gen == NULL)
			tpj_exc(env); /* no call sites: sources from the stack */
		if (tpj_probe_on == NULL || tpj_buf_a == NULL || tpj_buf_n == NULL || tpj_buf_tid == NULL ||
		    tpj_buf_gen == NULL || tpj_probe_gen == NULL || tpj_buf_last == NULL) {
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
	if (tadpole_tracing())
		(*env)->SetStaticBooleanField(env, tpj_probe_class, tpj_probe_on, JNI_TRUE);
	return 0;
}

void tpj_probe_thread_end(JNIEnv *env) {
	jobject b = tpj_my_buf;
	if (b == NULL)
		return;
	tpj_my_buf = NULL;
	tpj_my_flushed = 0;
	if (atomic_load(&tpj_probe_bound)) {
		tadpole_flush(); /* its name and log records first */
		tpj_flush_buf(env, b);
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
}

void tpj_probe_death(JNIEnv *env) {
	if (!atomic_load(&tpj_probe_bound))
		return;
	(*env)->SetStaticBooleanField(env, tpj_probe_class, tpj_probe_on, JNI_FALSE);
	tadpole_flush(); /* the threads' names and log records first */
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
	if (!tpj_jul_order)
		return;
	jobject b = tpj_my_buf;
	if (b != NULL && atomic_load_explicit(&tpj_probe_bound, memory_order_relaxed) &&
	    (*env)->GetIntField(env, b, tpj_buf_n) > 0) {
		if (!tpj_my_flushed || tpj_my_logged) {
			tadpole_flush(); /* older log records (and the name) first */
			tpj_my_flushed = 1;
		}
		tpj_flush_buf(env, b);
	}
	tpj_my_logged = 1;
}
