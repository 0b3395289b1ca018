/*
 * tpj.h: declarations shared by jni's C side (agent.c, natives.c) and its
 * Go side. No jni.h here: cgo copies the preambles that include this file
 * into _cgo_export.h.
 */
#ifndef TADPOLE_JNI_TPJ_H
#define TADPOLE_JNI_TPJ_H

#include <stddef.h>

/* Most embedded helper classes. */
#define TPJ_MAX_CLASSES 8

/* tpj_add_class records an embedded class, name in JVM internal form
 * ("io/tadpole/Tadpole"), in definition order (superclasses first). The
 * bytes stay owned by the Go side, which never frees them. */
void tpj_add_class(const char *name, const void *bytes, size_t len);

/* Self-test codes of Tadpole.selfTest0 (tests only). */
#define TPJ_SELFTEST_PANIC 1
#define TPJ_SELFTEST_EPIPE 2
#define TPJ_SELFTEST_THREADS 3 /* thread states the C API holds */
#define TPJ_SELFTEST_PROCS 4   /* the Go runtime's GOMAXPROCS */
/* JUL records into LTTng whose source was looked for on the stack or asked
 * of the record, not named by a call site (natives.c). */
#define TPJ_SELFTEST_SOURCE_WALKS 5

/* tpj_probe_want_retransform asks the probes' tick thread to retransform
 * the loaded classes (probe.c; called by the Go side). */
void tpj_probe_want_retransform(void);

/* The probes' hand-over queue (probe.c), for the converter goroutine
 * (probe.go): tpj_q_drain hands every queued buffer to the agent and
 * returns their number; tpj_q_idle returns 0 when the converter may sleep
 * on its pipe (the next push writes a byte to it), 1 when something was
 * queued meanwhile; tpj_q_set_fd gives the pipe's write end. */
int tpj_q_drain(void);
int tpj_q_idle(void);
void tpj_q_set_fd(int fd);
/* tpj_q_release gives back a hand-over buffer the agent was lent
 * (tpjGoProbeHand): the token it was lent with. */
void tpj_q_release(void *token);

#endif /* TADPOLE_JNI_TPJ_H */
