/* loggers.c: two loggers, capp.alpha and capp.beta. Every 5 ms the main
 * thread marks "tick" = N, and each logger that tadpole_logger_enabled
 * reports on logs "tick N" at INFO and at WARNING. It runs until stdin
 * closes, then stops tracing. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static atomic_int quit;

static void *read_stdin(void *arg) {
	(void)arg;
	char buf[64];
	while (read(0, buf, sizeof buf) > 0) {
	}
	atomic_store(&quit, 1);
	return NULL;
}

int main(void) {
	tadpole_logger loggers[2] = {tadpole_logger_register("capp.alpha"), tadpole_logger_register("capp.beta")};
	CHECK(loggers[0] > 0 && loggers[1] > 0 && loggers[0] != loggers[1]);
	CHECK_RC(tadpole_start(NULL), TADPOLE_OK);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, read_stdin, NULL) == 0);
	for (long n = 0; !atomic_load(&quit); n++) {
		char msg[32];
		snprintf(msg, sizeof msg, "%ld", n);
		CHECK_RC(tadpole_marker("tick", msg), TADPOLE_OK);
		snprintf(msg, sizeof msg, "tick %ld", n);
		for (int i = 0; i < 2; i++) {
			if (!tadpole_logger_enabled(loggers[i]))
				continue;
			CHECK_RC(tadpole_log(loggers[i], TADPOLE_LEVEL_INFO, NULL, msg), TADPOLE_OK);
			CHECK_RC(tadpole_log(loggers[i], TADPOLE_LEVEL_WARNING, "WARNING", msg), TADPOLE_OK);
		}
		struct timespec d = {0, 5000000};
		nanosleep(&d, NULL);
	}
	CHECK(pthread_join(th, NULL) == 0);
	CHECK_RC(tadpole_stop(), TADPOLE_OK);
	return 0;
}
