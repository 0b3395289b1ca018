/*
 * j4p.c: the JNI side of the JVM's platform MBeans on the management
 * endpoint (j4p.go). Requests are queued in C (tpj_j4p_submit) for a small
 * pool of C threads, each attached to the JVM once as the daemon thread
 * "tadpole-j4p-<n>" and detached before it ends (after TPJ_J4P_IDLE_S idle
 * seconds). A worker calls io.tadpole.J4P.call once per request (byte
 * arrays in and out, every local reference released) and writes the
 * finished job's address to the completion pipe, which a Go goroutine
 * reads through the runtime's poller. So the Java work runs beside the Go
 * side (whose one P goes on serving HTTP), no Go thread is ever attached
 * to the JVM, and a Java call that never returns holds one worker only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tpj4p.h"
#include "tpjc.h"

#define TPJ_J4P_WORKERS 4
#define TPJ_J4P_IDLE_S 30

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

static pthread_mutex_t tpj_j4p_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tpj_j4p_cv = PTHREAD_COND_INITIALIZER;
static struct tpj_j4p_job *tpj_j4p_head, *tpj_j4p_tail;
static int tpj_j4p_fd = -1;     /* completion pipe, write end */
static int tpj_j4p_threads;     /* running workers */
static int tpj_j4p_idle;        /* workers waiting for a job */
static int tpj_j4p_seq;         /* names of workers */
static int tpj_j4p_broken;      /* a worker found no J4P class: fail fast */

int tpj_j4p_init(int fd) {
	if (tpj_j4p_vm() == NULL)
		return -1;
	pthread_mutex_lock(&tpj_j4p_mu);
	tpj_j4p_fd = fd;
	pthread_mutex_unlock(&tpj_j4p_mu);
	return 0;
}

/* tpj_j4p_complete hands a finished job to the Go side. The pipe is
 * blocking: a job is never lost (the reader drains it). */
static void tpj_j4p_complete(struct tpj_j4p_job *j) {
	uint64_t p = (uint64_t)(uintptr_t)j;
	const char *b = (const char *)&p;
	size_t off = 0;
	while (off < sizeof p) {
		ssize_t w = write(tpj_j4p_fd, b + off, sizeof p - off);
		if (w > 0) {
			off += (size_t)w;
		} else if (w < 0 && errno == EAGAIN) {
			struct pollfd pf = {.fd = tpj_j4p_fd, .events = POLLOUT};
			poll(&pf, 1, 100);
		} else if (w < 0 && errno == EINTR) {
			continue;
		} else {
			return; /* the endpoint is gone; the job leaks, once */
		}
	}
}

/* tpj_j4p_run makes the one JNI call of a job. */
static void tpj_j4p_run(JNIEnv *env, jclass cls, jmethodID call, struct tpj_j4p_job *j) {
	j->out = NULL;
	j->outlen = 0;
	j->failed = 1;
	if (j->n > 0x7fffffff || (*env)->PushLocalFrame(env, 4) != 0) {
		if ((*env)->ExceptionCheck(env))
			(*env)->ExceptionClear(env);
		return;
	}
	jbyteArray in = (*env)->NewByteArray(env, (jsize)j->n);
	if (in != NULL) {
		(*env)->SetByteArrayRegion(env, in, 0, (jsize)j->n, (const jbyte *)j->req);
		jbyteArray r = (jbyteArray)(*env)->CallStaticObjectMethod(env, cls, call, in);
		if (!(*env)->ExceptionCheck(env) && r != NULL) {
			jsize len = (*env)->GetArrayLength(env, r);
			j->out = malloc(len > 0 ? (size_t)len : 1);
			if (j->out != NULL) {
				(*env)->GetByteArrayRegion(env, r, 0, len, (jbyte *)j->out);
				j->outlen = (size_t)len;
				j->failed = 0;
			}
		}
	}
	if ((*env)->ExceptionCheck(env)) { /* OutOfMemoryError and the like */
		(*env)->ExceptionClear(env);
		free(j->out);
		j->out = NULL;
		j->outlen = 0;
		j->failed = 1;
	}
	(*env)->PopLocalFrame(env, NULL);
}

/* tpj_j4p_take waits for a job, at most TPJ_J4P_IDLE_S seconds; NULL
 * means the worker is to end (it is no longer counted). */
static struct tpj_j4p_job *tpj_j4p_take(void) {
	pthread_mutex_lock(&tpj_j4p_mu);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += TPJ_J4P_IDLE_S;
	while (tpj_j4p_head == NULL) {
		tpj_j4p_idle++;
		int rc = pthread_cond_timedwait(&tpj_j4p_cv, &tpj_j4p_mu, &until);
		tpj_j4p_idle--;
		if (rc == ETIMEDOUT && tpj_j4p_head == NULL) {
			tpj_j4p_threads--;
			pthread_mutex_unlock(&tpj_j4p_mu);
			return NULL;
		}
	}
	struct tpj_j4p_job *j = tpj_j4p_head;
	tpj_j4p_head = j->next;
	if (tpj_j4p_head == NULL)
		tpj_j4p_tail = NULL;
	pthread_mutex_unlock(&tpj_j4p_mu);
	return j;
}

/* tpj_j4p_fail_queued fails every queued job (no worker can serve them). */
static void tpj_j4p_fail_queued(void) {
	for (;;) {
		pthread_mutex_lock(&tpj_j4p_mu);
		struct tpj_j4p_job *j = tpj_j4p_head;
		if (j != NULL) {
			tpj_j4p_head = j->next;
			if (tpj_j4p_head == NULL)
				tpj_j4p_tail = NULL;
		}
		pthread_mutex_unlock(&tpj_j4p_mu);
		if (j == NULL)
			return;
		j->failed = 1;
		tpj_j4p_complete(j);
	}
}

/* Set on the endpoint's worker threads before they attach. */
static __thread int tpj_j4p_self;

int tpj_j4p_own_thread(void) { return tpj_j4p_self; }

static void *tpj_j4p_worker(void *arg) {
	tpj_j4p_self = 1;
	char name[32];
	snprintf(name, sizeof name, "tadpole-j4p-%d", (int)(intptr_t)arg);
	JavaVM *vm = tpj_j4p_vm();
	JNIEnv *env = NULL;
	JavaVMAttachArgs a;
	a.version = JNI_VERSION_1_6;
	a.name = name;
	a.group = NULL;
	if (vm == NULL || (*vm)->AttachCurrentThreadAsDaemon(vm, (void **)&env, &a) != JNI_OK || env == NULL) {
		pthread_mutex_lock(&tpj_j4p_mu);
		tpj_j4p_threads--;
		tpj_j4p_broken = 1;
		pthread_mutex_unlock(&tpj_j4p_mu);
		tpj_j4p_fail_queued();
		return NULL;
	}
	/* An attached thread without Java frames finds classes in the system
	 * class loader, where the agent defined J4P. */
	jclass c = (*env)->FindClass(env, "io/tadpole/J4P");
	jmethodID call = c != NULL ? (*env)->GetStaticMethodID(env, c, "call", "([B)[B") : NULL;
	jclass cls = call != NULL ? (jclass)(*env)->NewGlobalRef(env, c) : NULL;
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	if (c != NULL)
		(*env)->DeleteLocalRef(env, c);
	if (cls == NULL) {
		(*vm)->DetachCurrentThread(vm);
		pthread_mutex_lock(&tpj_j4p_mu);
		tpj_j4p_threads--;
		tpj_j4p_broken = 1;
		pthread_mutex_unlock(&tpj_j4p_mu);
		tpj_j4p_fail_queued();
		return NULL;
	}
	struct tpj_j4p_job *j;
	while ((j = tpj_j4p_take()) != NULL) {
		tpj_j4p_run(env, cls, call, j);
		tpj_j4p_complete(j);
	}
	(*env)->DeleteGlobalRef(env, cls);
	(*vm)->DetachCurrentThread(vm);
	return NULL;
}

int tpj_j4p_submit(struct tpj_j4p_job *j) {
	j->next = NULL;
	pthread_mutex_lock(&tpj_j4p_mu);
	if (tpj_j4p_fd < 0 || tpj_j4p_broken) {
		pthread_mutex_unlock(&tpj_j4p_mu);
		return -1;
	}
	if (tpj_j4p_tail != NULL)
		tpj_j4p_tail->next = j;
	else
		tpj_j4p_head = j;
	tpj_j4p_tail = j;
	int rc = 0;
	if (tpj_j4p_idle == 0 && tpj_j4p_threads < TPJ_J4P_WORKERS) {
		pthread_attr_t attr;
		pthread_t t;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, tpj_j4p_worker, (void *)(intptr_t)(++tpj_j4p_seq)) == 0)
			tpj_j4p_threads++;
		else if (tpj_j4p_threads == 0)
			rc = -1; /* nobody to serve it */
		pthread_attr_destroy(&attr);
		if (rc != 0) {
			/* take the job back out: it is the tail */
			struct tpj_j4p_job **pp = &tpj_j4p_head;
			tpj_j4p_tail = NULL;
			while (*pp != NULL && *pp != j) {
				tpj_j4p_tail = *pp;
				pp = &(*pp)->next;
			}
			*pp = NULL;
		}
	}
	pthread_cond_signal(&tpj_j4p_cv);
	pthread_mutex_unlock(&tpj_j4p_mu);
	return rc;
}
