/*
 * tpjp.h: method tracing (probe.c), called from jvmti.c. Private to jni's
 * C files: it includes jni.h through tpjc.h.
 */
#ifndef TADPOLE_JNI_TPJP_H
#define TADPOLE_JNI_TPJP_H

#include "tpjc.h"

/* tpj_probe_onload takes the method-tracing options (trace=) out of
 * options and returns the rest (malloc'd; NULL on failure), writes the
 * probe jar onto the boot class path and adds the capabilities. Method
 * tracing stays off when that fails. */
char *tpj_probe_onload(jvmtiEnv *jvmti, const char *options);
/* tpj_probe_callbacks sets the class file load hook in cb. */
void tpj_probe_callbacks(jvmtiEventCallbacks *cb);
/* tpj_probe_begin binds io.tadpole.Probe's natives, starts its tick
 * thread, enables the class hook when the agent started (started != 0;
 * else once tracing begins) and turns the probes on when tracing (VMInit,
 * OnAttach). */
int tpj_probe_begin(JNIEnv *env, int started);
/* tpj_probe_thread_end flushes the ending thread's buffer. */
void tpj_probe_thread_end(JNIEnv *env);
/* tpj_probe_death turns the probes off and flushes every buffer. */
void tpj_probe_death(JNIEnv *env);

/* tpj_probe_retransform retransforms the loaded classes whose probes the
 * policy may change (Agent_OnAttach; HQ's filters changed). */
void tpj_probe_retransform(JNIEnv *env);
/* tpj_probe_sites hands Probe.SITES, the call site of the running
 * java.util.logging call, to the JUL handler (Tadpole.sites), once Probe
 * is bound. */
void tpj_probe_sites(JNIEnv *env, jclass tadpole);
/* tpj_probe_before_log hands the calling thread's probe buffer over
 * before it records a log record into its C API buffer when the buffer
 * holds JUL records (with jul_order=on: any event), and notes that the C
 * API buffer goes first at its next probe flush: log records and calls
 * reach HQ in the thread's order. */
void tpj_probe_before_log(JNIEnv *env);
/* tpj_probe_sites_live turns the call-site probes on (a new site
 * generation) when an LTTng session records JUL events, off when none
 * does (the probes' tick thread, and the JUL sync, call it). */
void tpj_probe_sites_live(JNIEnv *env);
/* tpj_probe_own reports whether thread is the probes' tick thread. */
int tpj_probe_own(JNIEnv *env, jthread thread);

#endif /* TADPOLE_JNI_TPJP_H */
