/*
 * The lttng_python:event tracepoint, as lttng-ust 2.13's
 * liblttng-ust-python-agent declares it (provider, event, field names,
 * types and order).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER lttng_python

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp_python.h"

#if !defined(TADPOLE_TP_PYTHON_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TADPOLE_TP_PYTHON_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(lttng_python, event,
	LTTNG_UST_TP_ARGS(const char *, asctime, const char *, msg, const char *, logger_name,
		const char *, funcName, int, lineno, int, int_loglevel, int, thread, const char *, threadName),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(asctime, asctime)
		lttng_ust_field_string(msg, msg)
		lttng_ust_field_string(logger_name, logger_name)
		lttng_ust_field_string(funcName, funcName)
		lttng_ust_field_integer(unsigned int, lineno, lineno)
		lttng_ust_field_integer(unsigned int, int_loglevel, int_loglevel)
		lttng_ust_field_integer(unsigned int, thread, thread)
		lttng_ust_field_string(threadName, threadName)
	)
)

#endif

#include <lttng/tracepoint-event.h>
