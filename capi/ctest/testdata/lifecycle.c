/* lifecycle.c: every call before start, after stop and with bad arguments
 * returns its documented code without recording; start, stop and start
 * again trace two runs. The HQ address comes from TADPOLE_HQ. */
#include <stdio.h>
#include <string.h>

#include "check.h"

static tadpole_method m;
static tadpole_exc e;
static tadpole_logger lg;

/* not_tracing checks that every recording call is a no-op returning
 * TADPOLE_ENOTCONN. */
static void not_tracing(void) {
	CHECK_RC(tadpole_enter(m), TADPOLE_ENOTCONN);
	CHECK_RC(tadpole_exit(m), TADPOLE_ENOTCONN);
	CHECK_RC(tadpole_exit_line(m, 7), TADPOLE_ENOTCONN);
	CHECK_RC(tadpole_exception(m, e, 7), TADPOLE_ENOTCONN);
	CHECK_RC(tadpole_bubble(m, e), TADPOLE_ENOTCONN);
	CHECK_RC(tadpole_marker("k", "v"), TADPOLE_ENOTCONN);
	CHECK_RC(tadpole_log(lg, TADPOLE_LEVEL_INFO, NULL, "msg"), TADPOLE_ENOTCONN);
	CHECK_RC(tadpole_flush(), TADPOLE_ENOTCONN);
	CHECK_RC(tadpole_stop(), TADPOLE_ENOTCONN);
	CHECK_RC(tadpole_tracing(), 0);
	CHECK_RC(tadpole_logger_enabled(lg), 0);
	char msg[256];
	CHECK(tadpole_errmsg(msg, sizeof msg) > 0);
	CHECK(strstr(msg, "not tracing") != NULL);
}

/* bad_arguments checks handles and arguments that no registration gave. */
static void bad_arguments(void) {
	CHECK_RC(tadpole_enter(0), TADPOLE_EBADF);
	CHECK_RC(tadpole_enter(-5), TADPOLE_EBADF);
	CHECK_RC(tadpole_exit(m + 1000), TADPOLE_EBADF);
	CHECK_RC(tadpole_exception(m, 0, 1), TADPOLE_EBADF);
	CHECK_RC(tadpole_bubble(m, e + 1000), TADPOLE_EBADF);
	CHECK_RC(tadpole_log(0, 800, NULL, "x"), TADPOLE_EBADF);
	CHECK_RC(tadpole_log(lg + 1000, 800, NULL, "x"), TADPOLE_EBADF);
	CHECK_RC(tadpole_logger_enabled(0), 0);
	CHECK_RC(tadpole_logger_enabled(1 << 30), 0);
	CHECK_RC(tadpole_marker(NULL, "v"), TADPOLE_EINVAL);
	CHECK_RC(tadpole_log(lg, 800, NULL, NULL), TADPOLE_EINVAL);
	CHECK_RC(tadpole_method_register(NULL), TADPOLE_EINVAL);
	CHECK_RC(tadpole_method_register(""), TADPOLE_EINVAL);
	CHECK_RC(tadpole_exc_register(NULL), TADPOLE_EINVAL);
	CHECK_RC(tadpole_logger_register(""), TADPOLE_EINVAL);
	CHECK_RC(tadpole_thread_name(NULL), TADPOLE_EINVAL);
	CHECK_RC(tadpole_thread_name(""), TADPOLE_EINVAL);
}

/* trace records one call, a marker and a log record. */
static void trace(const char *run) {
	CHECK_RC(tadpole_tracing(), 1);
	CHECK_RC(tadpole_enter(m), TADPOLE_OK);
	CHECK_RC(tadpole_marker("run", run), TADPOLE_OK);
	CHECK_RC(tadpole_exit(m), TADPOLE_OK);
	CHECK_RC(tadpole_logger_enabled(lg), 1);
	CHECK_RC(tadpole_log(lg, TADPOLE_LEVEL_WARNING, NULL, run), TADPOLE_OK);
	CHECK_RC(tadpole_flush(), TADPOLE_OK);
}

int main(void) {
	m = tadpole_method_register("ctest/Life.cycle;1;()V");
	CHECK(m > 0);
	CHECK_RC(tadpole_method_register("ctest/Life.cycle;1;()V"), m);
	e = tadpole_exc_register("ctest/Oops");
	CHECK(e > 0);
	lg = tadpole_logger_register("ctest.life");
	CHECK(lg > 0);
	CHECK_RC(tadpole_logger_register("ctest.life"), lg);
	CHECK_RC(tadpole_thread_name("life-main"), TADPOLE_OK);

	char msg[256];
	CHECK_RC((int)tadpole_errmsg(msg, sizeof msg), 0);
	CHECK(msg[0] == 0);

	not_tracing();
	bad_arguments();

	/* Failing starts: bad options, an HQ that is not there. */
	CHECK_RC(tadpole_start("nonsense=1"), TADPOLE_EINVAL);
	tadpole_errmsg(msg, sizeof msg);
	CHECK(strstr(msg, "nonsense") != NULL);
	CHECK_RC(tadpole_start("protocol=9"), TADPOLE_EINVAL);
	CHECK_RC(tadpole_start("hq=127.0.0.1:1,connect_timeout=200ms,hq_retry=0"), TADPOLE_ECONNREFUSED);
	not_tracing();

	/* Error text truncation: always NUL-terminated, full length returned. */
	size_t full = tadpole_errmsg(NULL, 0);
	CHECK(full > 8);
	char small[5];
	CHECK(tadpole_errmsg(small, sizeof small) == full);
	CHECK(strlen(small) == 4);

	/* Run 1. */
	CHECK_RC(tadpole_start(NULL), TADPOLE_OK);
	CHECK_RC(tadpole_start(NULL), TADPOLE_EALREADY);
	bad_arguments();
	trace("one");
	CHECK_RC(tadpole_stop(), TADPOLE_OK);
	not_tracing();

	/* Run 2, with the same handles. */
	CHECK_RC(tadpole_start(""), TADPOLE_OK);
	trace("two");
	CHECK_RC(tadpole_stop(), TADPOLE_OK);
	not_tracing();

	/* Every code has its own description. */
	int codes[] = {TADPOLE_OK,       TADPOLE_EBADF,    TADPOLE_ECHILD,       TADPOLE_ENOMEM,
	               TADPOLE_EINVAL,   TADPOLE_ENOSPC,   TADPOLE_EPROTO,       TADPOLE_ENOTCONN,
	               TADPOLE_ETIMEDOUT, TADPOLE_ECONNREFUSED, TADPOLE_EALREADY, TADPOLE_EINTERNAL, 12345};
	int n = (int)(sizeof codes / sizeof codes[0]);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			CHECK(strcmp(tadpole_strerror(codes[i]), tadpole_strerror(codes[j])) != 0);
	return 0;
}
