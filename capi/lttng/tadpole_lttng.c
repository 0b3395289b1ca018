/*
 * libtadpole-lttng.so: the LTTng tracepoint providers of the agent
 * domains (lttng_jul:event, lttng_log4j:event, lttng_python:event), built
 * against lttng-ust and dlopen'ed by libtadpole.so when it is present, so
 * that libtadpole.so itself never depends on lttng-ust. Each function
 * records one log record into whatever LTTng sessions enabled the event;
 * lttng-ust applies the sessions' filters and never blocks the caller
 * (its channels discard or overwrite when full). NULL strings are "".
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tp_jul.h"
#include "tp_log4j.h"
#include "tp_python.h"

#define TL_API __attribute__((visibility("default")))
#define TL_S(s) ((s) != 0 ? (s) : "")

/* The interface version libtadpole.so checks before using the others. */
#define TADPOLE_LTTNG_ABI 1

/* Domains, as the session daemon numbers them. */
#define TL_JUL 3
#define TL_LOG4J 4
#define TL_PYTHON 5

TL_API int tadpole_lttng_abi(void) { return TADPOLE_LTTNG_ABI; }

/* tadpole_lttng_enabled reports whether an LTTng session records the
 * domain's event now: one load, for callers to skip building a record. */
TL_API int tadpole_lttng_enabled(int domain) {
	switch (domain) {
	case TL_JUL:
		return lttng_ust_tracepoint_enabled(lttng_jul, event) ? 1 : 0;
	case TL_LOG4J:
		return lttng_ust_tracepoint_enabled(lttng_log4j, event) ? 1 : 0;
	case TL_PYTHON:
		return lttng_ust_tracepoint_enabled(lttng_python, event) ? 1 : 0;
	}
	return 0;
}

TL_API void tadpole_lttng_jul(const char *msg, const char *logger, const char *class_name, const char *method_name,
                              long millis, int level, int thread_id) {
	lttng_ust_tracepoint(lttng_jul, event, TL_S(msg), TL_S(logger), TL_S(class_name), TL_S(method_name), millis,
	                     level, thread_id);
}

TL_API void tadpole_lttng_log4j(const char *msg, const char *logger, const char *class_name, const char *method_name,
                                const char *file_name, int line, long timestamp, int level, const char *thread_name) {
	lttng_ust_tracepoint(lttng_log4j, event, TL_S(msg), TL_S(logger), TL_S(class_name), TL_S(method_name),
	                     TL_S(file_name), line, timestamp, level, TL_S(thread_name));
}

TL_API void tadpole_lttng_python(const char *asctime, const char *msg, const char *logger, const char *func_name,
                                 int lineno, int level, int thread, const char *thread_name) {
	lttng_ust_tracepoint(lttng_python, event, TL_S(asctime), TL_S(msg), TL_S(logger), TL_S(func_name), lineno,
	                     level, thread, TL_S(thread_name));
}
