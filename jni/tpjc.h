/*
 * tpjc.h: declarations private to jni's C files (jvmti.c, natives.c). It
 * includes jni.h, so no Go preamble includes it.
 */
#ifndef TADPOLE_JNI_TPJC_H
#define TADPOLE_JNI_TPJC_H

#include <jni.h>
#include <jvmti.h>

#include "tadpole.h"
#include "tpj.h"

/* The agent's JVMTI environment (NULL before Agent_OnLoad/OnAttach). */
extern jvmtiEnv *tpj_jvmti;

/* tpj_register_natives binds Tadpole's natives; 0 or -1 (exception
 * cleared). */
int tpj_register_natives(JNIEnv *env, jclass tadpole);

/* tpj_warn writes "tadpole: [WARN] <message>" to stderr. */
void tpj_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* TADPOLE_JNI_TPJC_H */
