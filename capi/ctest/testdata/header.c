/* header.c: uses every declaration of tadpole.h. It is compiled as C99 and
 * as C++11 with every warning an error, and linked against the library. */
#include "tadpole.h"

#include <stddef.h>

int main(void) {
	tadpole_method m = tadpole_method_register("hdr/H.m;1;()V");
	tadpole_exc e = tadpole_exc_register("hdr/E");
	tadpole_logger l = tadpole_logger_register("hdr");
	char buf[TADPOLE_MAX_THREAD_NAME + 1];
	size_t n;
	int rc = tadpole_start(NULL);
	rc |= tadpole_thread_name("hdr");
	rc |= tadpole_enter(m);
	rc |= tadpole_exception(m, e, TADPOLE_NO_LINE);
	rc |= tadpole_bubble(m, e);
	rc |= tadpole_enter(m);
	rc |= tadpole_exit_line(m, 1);
	rc |= tadpole_enter(m);
	rc |= tadpole_exit(m);
	rc |= tadpole_marker("k", NULL);
	if (tadpole_logger_enabled(l))
		rc |= tadpole_log(l, TADPOLE_LEVEL_INFO, "INFO", "message");
	rc |= tadpole_tracing();
	rc |= tadpole_flush();
	rc |= tadpole_stop();
	n = tadpole_errmsg(buf, sizeof buf);
	return (rc == TADPOLE_OK && n < sizeof buf && tadpole_strerror(rc)[0] != 0 && TADPOLE_VERSION_MAJOR >= 0 &&
	        TADPOLE_MAX_LOGGERS > 0 && TADPOLE_MAX_STRING > 0)
	           ? 0
	           : 1;
}
