/* lttngrec.c: two loggers, capp.alpha and capp.beta, for the LTTng
 * recording test. It starts tadpole with the options of argv[1] (HQ or
 * not), prints "ready", then for each line "emit P" on stdin logs one
 * batch and prints "emitted P"; at EOF it stops and exits. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "check.h"

/* Without HQ a record no LTTng session takes is "not tracing". */
#define LOG(call)                                                                   \
	do {                                                                        \
		int rc_ = (call);                                                   \
		CHECK(rc_ == TADPOLE_OK || rc_ == TADPOLE_ENOTCONN);                \
	} while (0)

int main(int argc, char **argv) {
	tadpole_logger alpha = tadpole_logger_register("capp.alpha");
	tadpole_logger beta = tadpole_logger_register("capp.beta");
	CHECK(alpha > 0 && beta > 0);
	int rc = tadpole_start(argc > 1 ? argv[1] : NULL);
	printf("ready %d\n", rc);
	fflush(stdout);
	char line[128];
	while (fgets(line, sizeof line, stdin) != NULL) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "emit ", 5) != 0)
			continue;
		const char *p = line + 5;
		for (int i = 0; i < 3; i++) {
			char msg[192];
			snprintf(msg, sizeof msg, "%s info %d", p, i);
			LOG(tadpole_log(alpha, TADPOLE_LEVEL_INFO, "INFO", msg));
			snprintf(msg, sizeof msg, "%s warn %d", p, i);
			LOG(tadpole_log(alpha, TADPOLE_LEVEL_WARNING, NULL, msg));
			snprintf(msg, sizeof msg, "%s binfo %d", p, i);
			LOG(tadpole_log(beta, TADPOLE_LEVEL_INFO, "INFO", msg));
			snprintf(msg, sizeof msg, "%s severe %d", p, i);
			LOG(tadpole_log(beta, TADPOLE_LEVEL_SEVERE, "SEVERE", msg));
		}
		tadpole_flush();
		printf("emitted %s\n", p);
		fflush(stdout);
	}
	if (rc == TADPOLE_OK)
		CHECK_RC(tadpole_stop(), TADPOLE_OK);
	return 0;
}
