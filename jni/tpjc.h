/*
 * tpjc.h: declarations private to jni's C files (jvmti.c, natives.c). It
 * includes jni.h, so no Go preamble includes it.
 */
#ifndef TADPOLE_JNI_TPJC_H
#define TADPOLE_JNI_TPJC_H

#include <jni.h>
#include <jvmti.h>
#include <stdint.h>

#include "tadpole.h"
#include "tpj.h"

/* The agent's JVMTI environment (NULL before Agent_OnLoad/OnAttach). */
extern jvmtiEnv *tpj_jvmti;

/* tpj_register_natives binds Tadpole's natives; 0 or -1 (exception
 * cleared). */
int tpj_register_natives(JNIEnv *env, jclass tadpole);

/* tpj_bind_thread binds the calling thread's C state to thread, the
 * current Java thread: its id (Thread.getId) becomes the thread key, its
 * name is announced. 0, or -1 (exception cleared). */
int tpj_bind_thread(jvmtiEnv *jvmti, JNIEnv *env, jthread thread);

/* tpj_bind_current is tpj_bind_thread for the current thread. */
int tpj_bind_current(JNIEnv *env);

/* tpj_name_hash is Java's String.hashCode of a modified UTF-8 string. */
int32_t tpj_name_hash(const char *mutf8);

/* tpj_warn writes "tadpole: [WARN] <message>" to stderr. */
void tpj_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* tpj_source writes the source class (binary name) and method of the JUL
 * record being logged on the calling thread, found as JUL finds it, into
 * cls and method (source.c). It returns 0, or -1 when the record itself
 * must be asked (its source may have been given, or the stack is unread). */
int tpj_source(JNIEnv *env, char *cls, size_t clen, char *method, size_t mlen);

/* TPJ_MAX_SITES bounds the call sites (ids 1..TPJ_MAX_SITES) the agent
 * names: beyond, records' sources come from the stack. */
#define TPJ_MAX_SITES (1 << 20)

/* tpj_site_set names call site id (1..TPJ_MAX_SITES): the calling class
 * (binary name) and method, copied; once per id. 0, or -1 when id is out
 * of range or memory is short. */
int tpj_site_set(int id, const char *cls, const char *method);
/* tpj_site_get returns the names of call site id and their lengths; -1
 * when it has none. */
int tpj_site_get(int id, const char **cls, size_t *cls_len, const char **method, size_t *method_len);

#endif /* TADPOLE_JNI_TPJC_H */
