/*
 * The lttng_jul:event tracepoint, with the provider, event, field names,
 * types and order of lttng-ust 2.13's liblttng-ust-jul-jni, so that the
 * session daemon's filters and every viewer treat tadpole's JUL records
 * as the official LTTng Java agent's.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER lttng_jul

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp_jul.h"

#if !defined(TADPOLE_TP_JUL_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TADPOLE_TP_JUL_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(lttng_jul, event,
	LTTNG_UST_TP_ARGS(const char *, msg, const char *, logger_name, const char *, class_name,
		const char *, method_name, long, millis, int, log_level, int, thread_id),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(msg, msg)
		lttng_ust_field_string(logger_name, logger_name)
		lttng_ust_field_string(class_name, class_name)
		lttng_ust_field_string(method_name, method_name)
		lttng_ust_field_integer(long, long_millis, millis)
		lttng_ust_field_integer(int, int_loglevel, log_level)
		lttng_ust_field_integer(int, int_threadid, thread_id)
	)
)

#endif

#include <lttng/tracepoint-event.h>
