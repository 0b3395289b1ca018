/*
 * The lttng_log4j:event tracepoint, as lttng-ust 2.13's
 * liblttng-ust-log4j-jni declares it (provider, event, field names, types
 * and order).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER lttng_log4j

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp_log4j.h"

#if !defined(TADPOLE_TP_LOG4J_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TADPOLE_TP_LOG4J_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(lttng_log4j, event,
	LTTNG_UST_TP_ARGS(const char *, msg, const char *, logger_name, const char *, class_name,
		const char *, method_name, const char *, file_name, int, line_number, long, timestamp,
		int, log_level, const char *, thread_name),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(msg, msg)
		lttng_ust_field_string(logger_name, logger_name)
		lttng_ust_field_string(class_name, class_name)
		lttng_ust_field_string(method_name, method_name)
		lttng_ust_field_string(filename, file_name)
		lttng_ust_field_integer(int, line_number, line_number)
		lttng_ust_field_integer(long, timestamp, timestamp)
		lttng_ust_field_integer(int, int_loglevel, log_level)
		lttng_ust_field_string(thread_name, thread_name)
	)
)

#endif

#include <lttng/tracepoint-event.h>
