/* threads.c NTHREADS EVENTS: NTHREADS named threads each record EVENTS
 * calls of their own method; every 1000th call raises an exception that
 * bubbles out instead of exiting. The test checks the trace is gap-free and
 * each thread's events are in order under its name. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define MAX_THREADS 64

static tadpole_method methods[MAX_THREADS];
static tadpole_exc failure;
static int events;

static void *worker(void *arg) {
	int i = (int)(long)arg;
	char name[32];
	snprintf(name, sizeof name, "worker-%d", i);
	CHECK_RC(tadpole_thread_name(name), TADPOLE_OK);
	tadpole_method m = methods[i];
	for (int k = 0; k < events; k++) {
		CHECK_RC(tadpole_enter(m), TADPOLE_OK);
		if (k % 1000 == 999) {
			CHECK_RC(tadpole_exception(m, failure, 42), TADPOLE_OK);
			CHECK_RC(tadpole_bubble(m, failure), TADPOLE_OK);
		} else {
			CHECK_RC(tadpole_exit_line(m, k % 100), TADPOLE_OK);
		}
	}
	CHECK_RC(tadpole_marker("done", name), TADPOLE_OK);
	return NULL;
}

int main(int argc, char **argv) {
	CHECK(argc == 3);
	int n = atoi(argv[1]);
	events = atoi(argv[2]);
	CHECK(n > 0 && n <= MAX_THREADS && events > 0);
	for (int i = 0; i < n; i++) {
		char sig[64];
		snprintf(sig, sizeof sig, "ctest/Worker%d.run;1;()V", i);
		methods[i] = tadpole_method_register(sig);
		CHECK(methods[i] > 0);
	}
	failure = tadpole_exc_register("ctest/Failure");
	CHECK(failure > 0);
	CHECK_RC(tadpole_start(NULL), TADPOLE_OK);
	pthread_t th[MAX_THREADS];
	for (int i = 0; i < n; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)(long)i) == 0);
	for (int i = 0; i < n; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	CHECK_RC(tadpole_stop(), TADPOLE_OK);
	for (int i = 0; i < n; i++)
		printf("method %d %d\n", i, methods[i]);
	return 0;
}
