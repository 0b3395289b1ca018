/*
 * tpj4p.h: the JNI calls of the management endpoint's JVM MBeans (j4p.c),
 * for j4p.go. No jni.h here: cgo copies the preamble that includes this
 * file into _cgo_export.h.
 */
#ifndef TADPOLE_JNI_TPJ4P_H
#define TADPOLE_JNI_TPJ4P_H

#include <stddef.h>

/* tpj_j4p_available reports whether the process runs a JVM. */
int tpj_j4p_available(void);

/* tpj_j4p_attach attaches the calling thread to the JVM as a daemon thread
 * named name and finds io.tadpole.J4P. It returns the worker state, or
 * NULL (not attached). */
void *tpj_j4p_attach(const char *name);

/* tpj_j4p_detach releases the worker state and detaches the calling thread
 * (the one that attached it). */
void tpj_j4p_detach(void *worker);

/* tpj_j4p_call passes the n bytes of req to J4P.call and returns its answer
 * (malloc'd, *outlen bytes; the caller frees it), or NULL when the call
 * failed in the JVM. */
void *tpj_j4p_call(void *worker, const void *req, size_t n, size_t *outlen);

#endif /* TADPOLE_JNI_TPJ4P_H */
