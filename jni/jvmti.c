/*
 * jvmti.c: the JVMTI entry points of libtadpole.so (Agent_OnLoad,
 * Agent_OnAttach, Agent_OnUnload), the SA_ONSTACK fix-up, the embedded
 * helper classes and the agent's lifecycle. See doc.go.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvmhost.h"
#include "tpj4p.h"
#include "tpjc.h"
#include "tpjp.h" /* method tracing (probe.c) */
#include "_cgo_export.h"

#define TPJ_EXPORT __attribute__((visibility("default")))

jvmtiEnv *tpj_jvmti;

/* java.lang.Thread.getId, resolved in tpj_bind (Thread is never unloaded). */
static jmethodID tpj_thread_get_id;

static struct {
	const char *name;
	const void *bytes;
	size_t len;
} tpj_classes[TPJ_MAX_CLASSES];
static int tpj_nclasses;

/* Options of Agent_OnLoad, kept for VMInit. */
static char *tpj_options;
/* 1 once the agent is loaded (OnLoad or OnAttach): a second load is
 * refused. */
static atomic_int tpj_loaded;
/* 1 while a run started by this agent is on. */
static atomic_int tpj_started;
/* The agent's JUL thread (a global reference), left out of the trace. */
static _Atomic(jobject) tpj_own_thread;

void tpj_add_class(const char *name, const void *bytes, size_t len) {
	if (tpj_nclasses < TPJ_MAX_CLASSES) {
		tpj_classes[tpj_nclasses].name = name;
		tpj_classes[tpj_nclasses].bytes = bytes;
		tpj_classes[tpj_nclasses].len = len;
		tpj_nclasses++;
	}
}

/* tpj_log_opts: the options of the first load, which say where the bridge's
 * own problems are logged (log=, log_level=). */
static char *tpj_log_opts;

static void tpj_vlog(int error, const char *fmt, va_list ap) {
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	tpjGoLog(tpj_log_opts, error, msg);
}

void tpj_warn(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	tpj_vlog(0, fmt, ap);
	va_end(ap);
}

static void tpj_error(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	tpj_vlog(1, fmt, ap);
	va_end(ap);
}

/*
 * Signals whose handlers must run on the alternate signal stack: the JVM
 * installs some without SA_ONSTACK (SIGINT, SIGTERM, SIGHUP from Java code,
 * after the agent loaded), and a handler running on a goroutine's small
 * stack crashes the process ("non-Go code set up signal handler without
 * SA_ONSTACK flag").
 */
static const int tpj_onstack_signals[] = {
	SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGPIPE, SIGXFSZ, SIGQUIT, SIGINT, SIGTERM, SIGHUP, SIGUSR2,
};

/* tpj_fix_onstack adds SA_ONSTACK to every installed handler of those
 * signals that lacks it, and returns how many it changed. */
static int tpj_fix_onstack(void) {
	int fixed = 0;
	for (size_t i = 0; i < sizeof tpj_onstack_signals / sizeof tpj_onstack_signals[0]; i++) {
		struct sigaction a;
		if (sigaction(tpj_onstack_signals[i], NULL, &a) != 0)
			continue;
		if (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN || (a.sa_flags & SA_ONSTACK))
			continue;
		a.sa_flags |= SA_ONSTACK;
		if (sigaction(tpj_onstack_signals[i], &a, NULL) == 0)
			fixed++;
	}
	return fixed;
}

/* tpj_libjsig reports whether libjsig is preloaded: it virtualises
 * sigaction, so the fix-up cannot work and Go's handlers end up behind the
 * JVM's. */
static int tpj_libjsig(void) { return dlsym(RTLD_DEFAULT, "JVM_begin_signal_setting") != NULL; }

static int tpj_exception(JNIEnv *env) {
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionClear(env);
		return 1;
	}
	return 0;
}

/* tpj_system_loader returns the system class loader (a local ref) or NULL. */
static jobject tpj_system_loader(JNIEnv *env, jclass *cl) {
	*cl = (*env)->FindClass(env, "java/lang/ClassLoader");
	if (*cl == NULL) {
		tpj_exception(env);
		return NULL;
	}
	jmethodID m = (*env)->GetStaticMethodID(env, *cl, "getSystemClassLoader", "()Ljava/lang/ClassLoader;");
	if (m == NULL) {
		tpj_exception(env);
		return NULL;
	}
	jobject l = (*env)->CallStaticObjectMethod(env, *cl, m);
	if (tpj_exception(env))
		return NULL;
	return l;
}

/* tpj_load_existing finds a helper class the loader already has (a second
 * agent instance, or the application bundled it). */
static jclass tpj_load_existing(JNIEnv *env, jclass cl, jobject loader, const char *name) {
	char dotted[128];
	snprintf(dotted, sizeof dotted, "%s", name);
	for (char *p = dotted; *p; p++)
		if (*p == '/')
			*p = '.';
	jmethodID m = (*env)->GetMethodID(env, cl, "loadClass", "(Ljava/lang/String;)Ljava/lang/Class;");
	if (m == NULL) {
		tpj_exception(env);
		return NULL;
	}
	jstring s = (*env)->NewStringUTF(env, dotted);
	if (s == NULL) {
		tpj_exception(env);
		return NULL;
	}
	jclass c = (jclass)(*env)->CallObjectMethod(env, loader, m, s);
	(*env)->DeleteLocalRef(env, s);
	if (tpj_exception(env))
		return NULL;
	return c;
}

/* io.tadpole.Tadpole, a global ref once tpj_bind defined it. */
static jclass tpj_tadpole;

/* tpj_bind defines the helper classes in the system class loader, binds
 * Tadpole's natives and marks them bound. It returns the JulSync class (a
 * local ref) or NULL. */
static jclass tpj_bind(JNIEnv *env) {
	jclass cl;
	jobject loader = tpj_system_loader(env, &cl);
	if (loader == NULL) {
		tpj_warn("no system class loader: Java API and JUL unavailable");
		return NULL;
	}
	jclass tadpole = NULL, sync = NULL;
	for (int i = 0; i < tpj_nclasses; i++) {
		const char *name = tpj_classes[i].name;
		jclass c = (*env)->DefineClass(env, name, loader, tpj_classes[i].bytes, (jsize)tpj_classes[i].len);
		if (c == NULL) {
			tpj_exception(env);
			c = tpj_load_existing(env, cl, loader, name);
		}
		if (c == NULL) {
			tpj_warn("cannot define %s: Java API and JUL unavailable", name);
			return NULL;
		}
		if (strcmp(name, "io/tadpole/Tadpole") == 0)
			tadpole = c;
		else if (strcmp(name, "io/tadpole/JulSync") == 0)
			sync = c;
		else
			(*env)->DeleteLocalRef(env, c);
	}
	if (tadpole != NULL)
		tpj_tadpole = (jclass)(*env)->NewGlobalRef(env, tadpole);
	if (tadpole == NULL || sync == NULL || tpj_register_natives(env, tadpole) != 0) {
		tpj_warn("cannot bind io.tadpole.Tadpole's natives: Java API and JUL unavailable");
		return NULL;
	}
	jclass thread = (*env)->FindClass(env, "java/lang/Thread");
	if (thread != NULL)
		tpj_thread_get_id = (*env)->GetMethodID(env, thread, "getId", "()J");
	if (thread == NULL || tpj_thread_get_id == NULL) {
		tpj_exception(env);
		tpj_warn("no java.lang.Thread.getId: Java API and JUL unavailable");
		return NULL;
	}
	(*env)->DeleteLocalRef(env, thread);
	jfieldID f = (*env)->GetStaticFieldID(env, tadpole, "bound", "Z");
	if (f == NULL) {
		tpj_exception(env);
		return NULL;
	}
	(*env)->SetStaticBooleanField(env, tadpole, f, JNI_TRUE);
	return sync;
}

int32_t tpj_name_hash(const char *mutf8) {
	uint32_t h = 0;
	const unsigned char *p = (const unsigned char *)mutf8;
	while (*p != 0) {
		uint32_t c = p[0];
		if ((p[0] & 0xE0) == 0xC0 && p[1] != 0) {
			c = (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
			p += 2;
		} else if ((p[0] & 0xF0) == 0xE0 && p[1] != 0 && p[2] != 0) {
			c = (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
			p += 3;
		} else {
			p++;
		}
		h = 31 * h + c;
	}
	return (int32_t)h;
}

int tpj_bind_thread(jvmtiEnv *jvmti, JNIEnv *env, jthread thread) {
	if (tpj_thread_get_id == NULL || thread == NULL)
		return -1;
	jlong id = (*env)->CallLongMethod(env, thread, tpj_thread_get_id);
	if (tpj_exception(env))
		return -1;
	jvmtiThreadInfo info;
	memset(&info, 0, sizeof info);
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
		return -1;
	const char *name = info.name != NULL ? info.name : "";
	int rc = tp_jbind(id, name, tpj_name_hash(name));
	(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
	if (info.thread_group != NULL)
		(*env)->DeleteLocalRef(env, info.thread_group);
	if (info.context_class_loader != NULL)
		(*env)->DeleteLocalRef(env, info.context_class_loader);
	return rc < 0 ? -1 : 0;
}

int tpj_bind_current(JNIEnv *env) {
	jthread self = NULL;
	if (tpj_jvmti == NULL || (*tpj_jvmti)->GetCurrentThread(tpj_jvmti, &self) != JVMTI_ERROR_NONE)
		return -1;
	int rc = tpj_bind_thread(tpj_jvmti, env, self);
	(*env)->DeleteLocalRef(env, self);
	return rc;
}

/* tpj_begin binds the helpers, starts tracing (waiting for HQ at most the
 * connect and start timeouts) and, when tracing or registered with the
 * LTTng session daemon (which tadpole_start does with or without HQ), the
 * JUL thread. The JVM goes on untraced after one warning when HQ is
 * absent, its JUL loggers still listed and recorded into LTTng sessions. */
static int tpj_start_jul(JNIEnv *env, jclass sync);

/* TPJ_DEFAULTS are the JVM agent's own defaults, put before the user's
 * options (which override them) unless TADPOLE_PROCS is set: procs=1, as
 * the agent's Go work then takes least from the JVM's logging threads on
 * a machine of few cores (README, Measured). */
#define TPJ_DEFAULTS "procs=1,"

static void tpj_begin(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, const char *options) {
	tpj_fix_onstack();
	jclass sync = tpj_bind(env);
	char *opts = NULL;
	if (getenv("TADPOLE_PROCS") == NULL && (opts = malloc(sizeof TPJ_DEFAULTS + strlen(options))) != NULL) {
		memcpy(opts, TPJ_DEFAULTS, sizeof TPJ_DEFAULTS - 1);
		strcpy(opts + sizeof TPJ_DEFAULTS - 1, options);
	}
	int rc = tadpole_start(opts != NULL ? opts : options);
	free(opts);
	if (tpj_probe_begin(env, rc == TADPOLE_OK) == 0) /* method tracing: probes on once tracing */
		tpj_probe_sites(env, tpj_tadpole);
	if (rc != TADPOLE_OK && !tp_lttng_registered())
		return; /* tadpole_start logged why, once, as the options say */
	if (rc == TADPOLE_OK) {
		atomic_store(&tpj_started, 1);
		if (thread != NULL)
			tpj_bind_thread(jvmti, env, thread);
	}
	/* Without HQ, the JUL loggers still follow the LTTng sessions. */
	if (sync != NULL && tpj_start_jul(env, sync) != 0)
		tpj_warn("cannot start the JUL thread: JUL records are not traced");
}

/* tpj_start_jul creates the agent's JUL thread, notes it so that the trace
 * leaves it out, and starts it. It returns 0, or -1 (exception cleared). */
static int tpj_start_jul(JNIEnv *env, jclass sync) {
	jmethodID create = (*env)->GetStaticMethodID(env, sync, "create", "()Ljava/lang/Thread;");
	if (create == NULL) {
		tpj_exception(env);
		return -1;
	}
	jobject t = (*env)->CallStaticObjectMethod(env, sync, create);
	if (tpj_exception(env))
		return -1;
	if (t == NULL)
		return 0; /* no java.logging: nothing to keep in step */
	atomic_store(&tpj_own_thread, (*env)->NewGlobalRef(env, t));
	jclass c = (*env)->GetObjectClass(env, t);
	jmethodID start = (*env)->GetMethodID(env, c, "start", "()V");
	if (start != NULL)
		(*env)->CallVoidMethod(env, t, start);
	(*env)->DeleteLocalRef(env, c);
	(*env)->DeleteLocalRef(env, t);
	return tpj_exception(env) || start == NULL ? -1 : 0;
}

static void JNICALL tpj_vm_init(jvmtiEnv *jvmti, JNIEnv *env, jthread thread) {
	tpj_begin(jvmti, env, thread, tpj_options);
}

static void JNICALL tpj_vm_death(jvmtiEnv *jvmti, JNIEnv *env) {
	(void)jvmti;
	tpj_probe_death(env); /* method tracing: every thread's buffer */
	if (atomic_exchange(&tpj_started, 0))
		tadpole_stop();
}

/* ThreadStart binds the new thread to its Java id and name while a run is
 * on (other threads bind at their first record). */
static void JNICALL tpj_thread_start(jvmtiEnv *jvmti, JNIEnv *env, jthread thread) {
	if (!atomic_load_explicit(&tpj_started, memory_order_relaxed))
		return;
	jobject own = atomic_load(&tpj_own_thread);
	if (own != NULL && (*env)->IsSameObject(env, thread, own))
		return; /* the agent's own JUL thread is not part of the application's trace */
	if (tpj_probe_own(env, thread))
		return; /* nor is the probes' tick thread */
	if (tpj_j4p_own_thread())
		return; /* nor are the management endpoint's workers (j4p.c) */
	tpj_bind_thread(jvmti, env, thread);
}

/* ThreadEnd ends the thread in the trace (a BatchEnd record) and hands its
 * buffer to the next flush; its C state is retired. */
static void JNICALL tpj_thread_end(jvmtiEnv *jvmti, JNIEnv *env, jthread thread) {
	(void)jvmti, (void)thread;
	tpj_probe_thread_end(env); /* method tracing: the thread's buffer first */
	tp_jend();
}

/* tpj_init checks the environment, loads the Go side and gets a JVMTI
 * environment with the callbacks set. It returns 0, or -1 when the agent
 * must stay inert (the JVM always goes on). */
static int tpj_init(JavaVM *vm, int live) {
	if (atomic_exchange(&tpj_loaded, 1)) {
		tpj_warn("agent loaded twice: the second load is ignored");
		return -1;
	}
	if (tpj_libjsig()) {
		tpj_error("libjsig is preloaded (LD_PRELOAD=libjsig.so): it hides the signal handlers tadpole needs, "
		          "so the agent refuses to start. Remove libjsig: tadpole already forwards signals to the JVM. "
		          "The JVM runs untraced.");
		return -1;
	}
	if (tpjGoLoad() < 0)
		return -1;
	jvmtiEnv *jvmti = NULL;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL) {
		tpj_warn("no JVMTI 1.2 environment: the JVM runs untraced");
		return -1;
	}
	tpj_jvmti = jvmti;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.VMInit = tpj_vm_init;
	cb.VMDeath = tpj_vm_death;
	cb.ThreadStart = tpj_thread_start;
	cb.ThreadEnd = tpj_thread_end;
	tpj_probe_callbacks(&cb);
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE) {
		tpj_warn("cannot set JVMTI callbacks: the JVM runs untraced");
		return -1;
	}
	if (!live)
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_END, NULL);
	tp_jhost();
	return 0;
}

/* tpj_note_log_opts keeps the first load's options for the bridge's log. */
static void tpj_note_log_opts(const char *options) {
	if (tpj_log_opts == NULL)
		tpj_log_opts = strdup(options != NULL ? options : "");
}

TPJ_EXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
	(void)reserved;
	tpj_note_log_opts(options);
	if (tpj_init(vm, 0) != 0)
		return JNI_OK;
	tpj_options = tpj_probe_onload(tpj_jvmti, options); /* the rest, without trace= */
	if (tpj_options == NULL)
		tpj_options = strdup(options != NULL ? options : "");
	return JNI_OK;
}

TPJ_EXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved) {
	(void)reserved;
	tpj_note_log_opts(options);
	if (tpj_init(vm, 1) != 0)
		return JNI_OK;
	JNIEnv *env = NULL;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK || env == NULL) {
		tpj_warn("no JNI environment in Agent_OnAttach: the JVM runs untraced");
		return JNI_OK;
	}
	jthread self = NULL;
	(*tpj_jvmti)->GetCurrentThread(tpj_jvmti, &self);
	char *rest = tpj_probe_onload(tpj_jvmti, options); /* the rest, without trace= */
	tpj_begin(tpj_jvmti, env, self, rest != NULL ? rest : options != NULL ? options : "");
	free(rest);
	tpj_probe_retransform(env); /* classes loaded before the attach get their probes */
	return JNI_OK;
}

TPJ_EXPORT void JNICALL Agent_OnUnload(JavaVM *vm) {
	(void)vm;
	if (atomic_exchange(&tpj_started, 0))
		tadpole_stop();
}
