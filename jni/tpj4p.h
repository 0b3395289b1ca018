/*
 * tpj4p.h: the JNI calls of the management endpoint's JVM MBeans (j4p.c),
 * for j4p.go. No jni.h here: cgo copies the preamble that includes this
 * file into _cgo_export.h.
 */
#ifndef TADPOLE_JNI_TPJ4P_H
#define TADPOLE_JNI_TPJ4P_H

#include <stddef.h>

/* A request for io.tadpole.J4P.call, allocated in C by the Go side. A
 * worker fills out (malloc'd, outlen bytes) or sets failed, then writes
 * the job's address to the completion pipe. */
struct tpj_j4p_job {
	void *req;
	size_t n;
	void *out;
	size_t outlen;
	int failed;
	struct tpj_j4p_job *next;
};

/* tpj_j4p_init sets the completion pipe's write end (a blocking fd). It
 * returns 0, or -1 when the process runs no JVM. */
int tpj_j4p_init(int fd);

/* tpj_j4p_submit queues a job for the workers, starting one if none is
 * idle and fewer than 4 run. It returns 0, or -1 when no worker can serve
 * it (no JVM, no helper class, no thread): the job is then not queued. */
int tpj_j4p_submit(struct tpj_j4p_job *j);

/* tpj_j4p_own_thread reports whether the calling thread is one of the
 * endpoint's workers: the trace leaves them out (jvmti.c, ThreadStart). */
int tpj_j4p_own_thread(void);

#endif /* TADPOLE_JNI_TPJ4P_H */
