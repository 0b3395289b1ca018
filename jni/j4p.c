/*
 * j4p.c: the JNI side of the JVM's platform MBeans on the management
 * endpoint (j4p.go). Each worker goroutine of j4p.go is locked to its OS
 * thread, attaches it to the JVM as a daemon thread once
 * (tpj_j4p_attach), calls io.tadpole.J4P.call with one request at a time
 * (tpj_j4p_call: one JNI crossing, byte arrays in and out, every local
 * reference released) and detaches before it ends (tpj_j4p_detach).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "tpj4p.h"
#include "tpjc.h"

typedef jint(JNICALL *tpj_created_vms_fn)(JavaVM **, jsize, jsize *);

/* tpj_j4p_vm finds the JVM this library is loaded in, or NULL (a C host:
 * no libjvm). */
static JavaVM *tpj_j4p_vm(void) {
	tpj_created_vms_fn f = (tpj_created_vms_fn)dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
	if (f == NULL)
		return NULL;
	JavaVM *vm = NULL;
	jsize n = 0;
	if (f(&vm, 1, &n) != JNI_OK || n < 1)
		return NULL;
	return vm;
}

int tpj_j4p_available(void) { return tpj_j4p_vm() != NULL; }

/* The worker's state: one per attached thread, owned by its goroutine. */
struct tpj_j4p_worker {
	JavaVM *vm;
	JNIEnv *env;
	jclass cls; /* global ref of io.tadpole.J4P */
	jmethodID call;
};

void *tpj_j4p_attach(const char *name) {
	JavaVM *vm = tpj_j4p_vm();
	if (vm == NULL)
		return NULL;
	JNIEnv *env = NULL;
	JavaVMAttachArgs a;
	a.version = JNI_VERSION_1_6;
	a.name = (char *)name;
	a.group = NULL;
	if ((*vm)->AttachCurrentThreadAsDaemon(vm, (void **)&env, &a) != JNI_OK || env == NULL)
		return NULL;
	/* An attached thread without Java frames finds classes in the system
	 * class loader, where the agent defined J4P. */
	jclass c = (*env)->FindClass(env, "io/tadpole/J4P");
	jmethodID m = c != NULL ? (*env)->GetStaticMethodID(env, c, "call", "([B)[B") : NULL;
	if (c == NULL || m == NULL) {
		if ((*env)->ExceptionCheck(env))
			(*env)->ExceptionClear(env);
		if (c != NULL)
			(*env)->DeleteLocalRef(env, c);
		(*vm)->DetachCurrentThread(vm);
		return NULL;
	}
	struct tpj_j4p_worker *w = calloc(1, sizeof *w);
	if (w == NULL) {
		(*env)->DeleteLocalRef(env, c);
		(*vm)->DetachCurrentThread(vm);
		return NULL;
	}
	w->vm = vm;
	w->env = env;
	w->cls = (jclass)(*env)->NewGlobalRef(env, c);
	w->call = m;
	(*env)->DeleteLocalRef(env, c);
	return w;
}

void tpj_j4p_detach(void *worker) {
	struct tpj_j4p_worker *w = worker;
	if (w == NULL)
		return;
	(*w->env)->DeleteGlobalRef(w->env, w->cls);
	(*w->vm)->DetachCurrentThread(w->vm);
	free(w);
}

void *tpj_j4p_call(void *worker, const void *req, size_t n, size_t *outlen) {
	struct tpj_j4p_worker *w = worker;
	JNIEnv *env = w->env;
	*outlen = 0;
	if (n > 0x7fffffff || (*env)->PushLocalFrame(env, 4) != 0) {
		if ((*env)->ExceptionCheck(env))
			(*env)->ExceptionClear(env);
		return NULL;
	}
	void *out = NULL;
	jbyteArray in = (*env)->NewByteArray(env, (jsize)n);
	if (in != NULL) {
		(*env)->SetByteArrayRegion(env, in, 0, (jsize)n, (const jbyte *)req);
		jbyteArray r = (jbyteArray)(*env)->CallStaticObjectMethod(env, w->cls, w->call, in);
		if (!(*env)->ExceptionCheck(env) && r != NULL) {
			jsize len = (*env)->GetArrayLength(env, r);
			out = malloc(len > 0 ? (size_t)len : 1);
			if (out != NULL) {
				(*env)->GetByteArrayRegion(env, r, 0, len, (jbyte *)out);
				*outlen = (size_t)len;
			}
		}
	}
	if ((*env)->ExceptionCheck(env)) { /* OutOfMemoryError and the like */
		(*env)->ExceptionClear(env);
		free(out);
		out = NULL;
		*outlen = 0;
	}
	(*env)->PopLocalFrame(env, NULL);
	return out;
}
