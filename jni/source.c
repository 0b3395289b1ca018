/*
 * source.c: the source (class and method) of a JUL record for the LTTng
 * event, as LogRecord.getSourceClassName / getSourceMethodName infer it,
 * but without their StackWalker walk (about 3 µs a record): one JVMTI
 * GetStackTrace of the calling thread, whose methods' names are cached
 * per jmethodID. The rule is JUL's (LogRecord.CallerFinder): skip frames
 * up to the first java.util.logging.Logger frame, then the logging
 * machinery (java.util.logging.*, sun.util.logging.*, jdk.internal.logger.*,
 * method handles, reflection); the next frame is the caller. A record
 * whose source may have been given explicitly (Logger.logp, logrb,
 * entering, exiting, throwing, or log(LogRecord) called by the
 * application), or a stack the walk cannot read, asks the record itself.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpj.h"
#include "tpjc.h"

/* Frames read per record: the caller of Logger.info is 6 deep; a deeper
 * caller is asked of the record. */
#define TPJ_SRC_DEPTH 16
/* Cached methods (a power of two). */
#define TPJ_SRC_SLOTS 4096

enum { TPJ_F_OTHER, TPJ_F_LOGGER, TPJ_F_EXPLICIT, TPJ_F_FILTERED };

/* tpj_msrc is one method's names, set once and never freed while cached. */
struct tpj_msrc {
	jmethodID m;
	int kind;
	const char *cls;  /* binary name with dots, as Class.getName */
	const char *name; /* method name */
};

static _Atomic(struct tpj_msrc *) tpj_srcs[TPJ_SRC_SLOTS];

static int tpj_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* tpj_kind classifies a frame of class cls, method name and signature sig. */
static int tpj_kind(const char *cls, const char *name, const char *sig) {
	if (strcmp(cls, "java.util.logging.Logger") == 0 || tpj_prefix(cls, "sun.util.logging.PlatformLogger")) {
		if (strcmp(name, "logp") == 0 || strcmp(name, "logrb") == 0 || strcmp(name, "entering") == 0 ||
		    strcmp(name, "exiting") == 0 || strcmp(name, "throwing") == 0 ||
		    (strcmp(name, "log") == 0 && sig != NULL && strcmp(sig, "(Ljava/util/logging/LogRecord;)V") == 0))
			return TPJ_F_EXPLICIT;
		return TPJ_F_LOGGER;
	}
	if (tpj_prefix(cls, "jdk.internal.logger.BootstrapLogger$LogEvent"))
		return TPJ_F_OTHER;
	static const char *const filtered[] = {
		"sun.util.logging.",          "sun.rmi.runtime.Log",         "jdk.internal.logger.",
		"java.util.logging.",         "java.lang.invoke.MethodHandle", "java.lang.invoke.LambdaForm",
		"java.security.AccessController", "jdk.internal.reflect.",     "java.lang.reflect.Method",
	};
	for (size_t i = 0; i < sizeof filtered / sizeof filtered[0]; i++)
		if (tpj_prefix(cls, filtered[i]))
			return TPJ_F_FILTERED;
	return TPJ_F_OTHER;
}

/* tpj_msrc_new reads method m's names; NULL on failure. */
static struct tpj_msrc *tpj_msrc_new(JNIEnv *env, jvmtiEnv *jvmti, jmethodID m) {
	char *name = NULL, *sig = NULL, *csig = NULL;
	jclass k = NULL;
	struct tpj_msrc *e = NULL;
	if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetMethodDeclaringClass(jvmti, m, &k) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetClassSignature(jvmti, k, &csig, NULL) != JVMTI_ERROR_NONE)
		goto out;
	/* "Lpkg/Name;" → "pkg.Name" */
	size_t cl = strlen(csig), nl = strlen(name);
	if (cl < 2 || csig[0] != 'L')
		goto out;
	e = malloc(sizeof *e + (cl - 2 + 1) + (nl + 1));
	if (e == NULL)
		goto out;
	char *c = (char *)(e + 1), *n = c + (cl - 2 + 1);
	for (size_t i = 0; i < cl - 2; i++)
		c[i] = csig[i + 1] == '/' ? '.' : csig[i + 1];
	c[cl - 2] = 0;
	memcpy(n, name, nl + 1);
	e->m = m;
	e->cls = c;
	e->name = n;
	e->kind = tpj_kind(c, n, sig);
out:
	if (k != NULL)
		(*env)->DeleteLocalRef(env, k);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	return e;
}

/* tpj_msrc_get returns method m's names, cached; *tmp is set to an entry
 * the caller frees when the slot was taken by another method. */
static const struct tpj_msrc *tpj_msrc_get(JNIEnv *env, jvmtiEnv *jvmti, jmethodID m, struct tpj_msrc **tmp) {
	size_t i = (size_t)(((uint64_t)(uintptr_t)m * 0x9E3779B97F4A7C15ull) >> 52) & (TPJ_SRC_SLOTS - 1);
	struct tpj_msrc *e = atomic_load_explicit(&tpj_srcs[i], memory_order_acquire);
	if (e != NULL && e->m == m)
		return e;
	struct tpj_msrc *n = tpj_msrc_new(env, jvmti, m);
	if (n == NULL)
		return NULL;
	struct tpj_msrc *none = NULL;
	if (e == NULL && atomic_compare_exchange_strong(&tpj_srcs[i], &none, n))
		return n;
	*tmp = n;
	return n;
}

int tpj_source(JNIEnv *env, char *cls, size_t clen, char *method, size_t mlen) {
	jvmtiEnv *jvmti = tpj_jvmti;
	if (jvmti == NULL)
		return -1;
	jvmtiFrameInfo fr[TPJ_SRC_DEPTH];
	jint n = 0;
	if ((*jvmti)->GetStackTrace(jvmti, NULL, 0, TPJ_SRC_DEPTH, fr, &n) != JVMTI_ERROR_NONE)
		return -1;
	int looking = 1, last = TPJ_F_LOGGER, rc = -1;
	for (jint i = 0; i < n && rc < 0; i++) {
		struct tpj_msrc *tmp = NULL;
		const struct tpj_msrc *e = tpj_msrc_get(env, jvmti, fr[i].method, &tmp);
		if (e == NULL) {
			rc = -2;
		} else if (looking) {
			if (e->kind == TPJ_F_LOGGER || e->kind == TPJ_F_EXPLICIT) {
				looking = 0;
				last = e->kind;
			}
		} else if (e->kind == TPJ_F_LOGGER || e->kind == TPJ_F_EXPLICIT) {
			last = e->kind;
		} else if (e->kind != TPJ_F_FILTERED) {
			if (last == TPJ_F_EXPLICIT) {
				rc = -2; /* the application may have named the source */
			} else {
				size_t c = strlen(e->cls), m = strlen(e->name);
				if (c < clen && m < mlen) {
					memcpy(cls, e->cls, c + 1);
					memcpy(method, e->name, m + 1);
					rc = 0;
				} else {
					rc = -2;
				}
			}
		}
		free(tmp);
	}
	return rc == 0 ? 0 : -1;
}

/* Call sites: the class and method of each java.util.logging call the
 * rewriter gave a site id (jvm/instrument call sites), in pages of
 * TPJ_SITE_PAGE entries allocated on first use and never freed. */
#define TPJ_SITE_PAGE 4096

struct tpj_site {
	const char *cls, *method;
	uint32_t cls_len, method_len;
};

static _Atomic(struct tpj_site *) tpj_site_pages[TPJ_MAX_SITES / TPJ_SITE_PAGE + 1];

int tpj_site_set(int id, const char *cls, const char *method) {
	if (id <= 0 || id > TPJ_MAX_SITES)
		return -1;
	_Atomic(struct tpj_site *) *slot = &tpj_site_pages[id / TPJ_SITE_PAGE];
	struct tpj_site *page = atomic_load_explicit(slot, memory_order_acquire);
	if (page == NULL) {
		struct tpj_site *p = calloc(TPJ_SITE_PAGE, sizeof *p);
		if (p == NULL)
			return -1;
		if (atomic_compare_exchange_strong(slot, &page, p))
			page = p;
		else
			free(p); /* another thread's page won; page holds it */
	}
	size_t cl = strlen(cls), ml = strlen(method);
	if (cl > UINT32_MAX / 4 || ml > UINT32_MAX / 4)
		return -1;
	char *c = malloc(cl + 1 + ml + 1);
	if (c == NULL)
		return -1;
	memcpy(c, cls, cl + 1);
	memcpy(c + cl + 1, method, ml + 1);
	struct tpj_site *e = &page[id % TPJ_SITE_PAGE];
	e->method = c + cl + 1;
	e->cls_len = (uint32_t)cl;
	e->method_len = (uint32_t)ml;
	/* cls last, released: a reader that sees it sees the method too. */
	atomic_store_explicit((_Atomic(const char *) *)&e->cls, c, memory_order_release);
	return 0;
}

int tpj_site_get(int id, const char **cls, size_t *cls_len, const char **method, size_t *method_len) {
	if (id <= 0 || id > TPJ_MAX_SITES)
		return -1;
	struct tpj_site *page = atomic_load_explicit(&tpj_site_pages[id / TPJ_SITE_PAGE], memory_order_acquire);
	if (page == NULL)
		return -1;
	struct tpj_site *e = &page[id % TPJ_SITE_PAGE];
	const char *c = atomic_load_explicit((_Atomic(const char *) *)&e->cls, memory_order_acquire);
	if (c == NULL)
		return -1;
	*cls = c;
	*cls_len = e->cls_len;
	*method = e->method;
	*method_len = e->method_len;
	return 0;
}
