/* frozen.c THREADS: THREADS threads record calls into an HQ that stops
 * reading. Each counts its calls and the longest one; once tadpole_tracing()
 * says the run has ended, each makes 100000 more calls and stops. Then main
 * calls tadpole_stop and prints how long each part took. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

#define MAX_THREADS 16

static tadpole_method m;

static long long now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long longest[MAX_THREADS];

static void *worker(void *arg) {
	int i = (int)(long)arg;
	long long deadline = now_ns() + 30000000000LL;
	while (tadpole_tracing() && now_ns() < deadline) {
		long long t = now_ns();
		/* Errors are expected once the run ends: only the time counts. */
		tadpole_enter(m);
		tadpole_exit(m);
		if (now_ns() - t > longest[i])
			longest[i] = now_ns() - t;
	}
	for (int k = 0; k < 100000; k++) {
		tadpole_enter(m);
		tadpole_exit(m);
	}
	return NULL;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	int n = atoi(argv[1]);
	CHECK(n > 0 && n <= MAX_THREADS);
	m = tadpole_method_register("ctest/Frozen.call;1;()V");
	long long t0 = now_ns();
	CHECK_RC(tadpole_start(NULL), TADPOLE_OK);
	pthread_t th[MAX_THREADS];
	for (int i = 0; i < n; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)(long)i) == 0);
	for (int i = 0; i < n; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	long long t1 = now_ns();
	int rc = tadpole_stop();
	long long t2 = now_ns();
	long long worst = 0;
	for (int i = 0; i < n; i++)
		if (longest[i] > worst)
			worst = longest[i];
	printf("run_ms %lld longest_call_ms %lld stop_ms %lld stop_rc %d\n", (t1 - t0) / 1000000, worst / 1000000,
	       (t2 - t1) / 1000000, rc);
	return 0;
}
