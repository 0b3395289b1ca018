/*
 * jvmticount: a JVMTI agent that counts MethodEntry and MethodExit events of
 * the methods of classes whose internal name starts with one of its
 * comma-separated option prefixes (e.g. -agentpath:libjvmticount.so=work/),
 * leaving out native and bridge methods as the probe agents do. A method's
 * verdict is looked up once (GetMethodModifiers, GetMethodDeclaringClass,
 * GetClassSignature) and cached by jmethodID in a lock-free table. It prints
 * "jvmti-total entries=N exits=M bubbles=B" to stderr at VM death, and
 * implements MethodBench.jvmtiCounts() for the counts of a timed window.
 */
#include <jvmti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_BITS 20
#define CACHE_SIZE (1u << CACHE_BITS)
#define MAX_PREFIXES 16

struct slot {
	jmethodID id;
	int verdict; /* 0 unknown, 1 traced, 2 not */
};

static struct slot *cache;
static char *prefixes[MAX_PREFIXES];
static int nprefixes;
static long entries, exits, bubbles;

static uint32_t hash(jmethodID m) {
	return (uint32_t)(((uint64_t)(uintptr_t)m * 0x9E3779B97F4A7C15ull) >> (64 - CACHE_BITS));
}

static int resolve(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m) {
	jint mods = 0;
	if ((*jvmti)->GetMethodModifiers(jvmti, m, &mods) != JVMTI_ERROR_NONE || (mods & (0x0100 | 0x0040)) != 0) {
		return 2; /* native or bridge */
	}
	jclass k = NULL;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &k) != JVMTI_ERROR_NONE) {
		return 2;
	}
	char *sig = NULL;
	int v = 2;
	if ((*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) == JVMTI_ERROR_NONE && sig != NULL) {
		/* A hidden class (a lambda's proxy: Lwork/Coll$$Lambda$14.0x…;)
		 * never reaches a class file hook, so no probe agent sees it. */
		for (int i = 0; i < nprefixes && strchr(sig, '.') == NULL; i++) {
			if (sig[0] == 'L' && strncmp(sig + 1, prefixes[i], strlen(prefixes[i])) == 0) {
				v = 1;
				break;
			}
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	}
	if (jni != NULL) {
		(*jni)->DeleteLocalRef(jni, k);
	}
	return v;
}

static int traced(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m) {
	uint32_t h = hash(m);
	for (uint32_t n = 0; n < CACHE_SIZE; n++, h = (h + 1) & (CACHE_SIZE - 1)) {
		jmethodID k = __atomic_load_n(&cache[h].id, __ATOMIC_ACQUIRE);
		if (k == m) {
			int v = __atomic_load_n(&cache[h].verdict, __ATOMIC_ACQUIRE);
			if (v != 0) {
				return v == 1;
			}
			break;
		}
		if (k == NULL) {
			break;
		}
	}
	int v = resolve(jvmti, jni, m);
	h = hash(m);
	for (uint32_t n = 0; n < CACHE_SIZE; n++, h = (h + 1) & (CACHE_SIZE - 1)) {
		jmethodID k = __atomic_load_n(&cache[h].id, __ATOMIC_ACQUIRE);
		if (k == NULL) {
			jmethodID expected = NULL;
			if (!__atomic_compare_exchange_n(&cache[h].id, &expected, m, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				k = expected;
			} else {
				k = m;
			}
		}
		if (k == m) {
			__atomic_store_n(&cache[h].verdict, v, __ATOMIC_RELEASE);
			break;
		}
	}
	return v == 1;
}

static void JNICALL onEntry(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jmethodID m) {
	(void)t;
	if (traced(jvmti, jni, m)) {
		__atomic_fetch_add(&entries, 1, __ATOMIC_RELAXED);
	}
}

static void JNICALL onExit(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jmethodID m, jboolean popped, jvalue rv) {
	(void)t;
	(void)rv;
	if (traced(jvmti, jni, m)) {
		__atomic_fetch_add(popped ? &bubbles : &exits, 1, __ATOMIC_RELAXED);
	}
}

static void JNICALL onDeath(jvmtiEnv *jvmti, JNIEnv *jni) {
	(void)jvmti;
	(void)jni;
	fprintf(stderr, "jvmti-total entries=%ld exits=%ld bubbles=%ld\n", __atomic_load_n(&entries, __ATOMIC_RELAXED),
		__atomic_load_n(&exits, __ATOMIC_RELAXED), __atomic_load_n(&bubbles, __ATOMIC_RELAXED));
}

JNIEXPORT jlongArray JNICALL Java_MethodBench_jvmtiCounts(JNIEnv *jni, jclass c) {
	(void)c;
	jlong v[3] = {__atomic_load_n(&entries, __ATOMIC_RELAXED), __atomic_load_n(&exits, __ATOMIC_RELAXED),
		__atomic_load_n(&bubbles, __ATOMIC_RELAXED)};
	jlongArray a = (*jni)->NewLongArray(jni, 3);
	if (a != NULL) {
		(*jni)->SetLongArrayRegion(jni, a, 0, 3, v);
	}
	return a;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
	(void)reserved;
	jvmtiEnv *jvmti = NULL;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		fprintf(stderr, "jvmticount: no JVMTI\n");
		return JNI_ERR;
	}
	cache = calloc(CACHE_SIZE, sizeof *cache);
	char *opts = strdup(options != NULL ? options : "");
	if (cache == NULL || opts == NULL) {
		return JNI_ERR;
	}
	for (char *save = NULL, *p = strtok_r(opts, ",", &save); p != NULL && nprefixes < MAX_PREFIXES;
	     p = strtok_r(NULL, ",", &save)) {
		prefixes[nprefixes++] = p;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_generate_method_entry_events = 1;
	caps.can_generate_method_exit_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "jvmticount: capabilities refused\n");
		return JNI_ERR;
	}
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.MethodEntry = onEntry;
	cb.MethodExit = onExit;
	cb.VMDeath = onDeath;
	(*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_ENTRY, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_EXIT, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	return JNI_OK;
}
