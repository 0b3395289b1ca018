/* modes.c THREADS: THREADS named threads record calls (and a record of
 * logger ctest.modes every 256 calls) until stdin closes,
 * while HQ pauses and suspends tracing. Each prints the longest time one
 * recording call took (a pause blocks it) and how many of its calls found
 * tracing off (a suspend drops them). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define MAX_THREADS 16

static tadpole_method m;
static tadpole_logger lg;
static atomic_int quit;

static long long now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct result {
	long long max_stall;
	long untraced;
	long calls;
};

static struct result results[MAX_THREADS];

static void *worker(void *arg) {
	int i = (int)(long)arg;
	char name[32];
	snprintf(name, sizeof name, "mode-%d", i);
	CHECK_RC(tadpole_thread_name(name), TADPOLE_OK);
	struct result *r = &results[i];
	for (long long t = now_ns(); !atomic_load_explicit(&quit, memory_order_relaxed);) {
		if (!tadpole_tracing())
			r->untraced++;
		CHECK_RC(tadpole_enter(m), TADPOLE_OK);
		CHECK_RC(tadpole_exit(m), TADPOLE_OK);
		r->calls++;
		if (r->calls % 256 == 0)
			tadpole_log(lg, TADPOLE_LEVEL_INFO, NULL, "tick"); /* recorded when enabled */
		long long t2 = now_ns();
		if (t2 - t > r->max_stall)
			r->max_stall = t2 - t;
		t = t2;
		if (r->calls % 16 == 0) {
			struct timespec d = {0, 20000};
			nanosleep(&d, NULL);
			t = now_ns();
		}
	}
	return NULL;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	int n = atoi(argv[1]);
	CHECK(n > 0 && n <= MAX_THREADS);
	m = tadpole_method_register("ctest/Modes.run;1;()V");
	lg = tadpole_logger_register("ctest.modes");
	CHECK_RC(tadpole_start(NULL), TADPOLE_OK);
	pthread_t th[MAX_THREADS];
	for (int i = 0; i < n; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)(long)i) == 0);
	char buf[64];
	while (read(0, buf, sizeof buf) > 0) {
	}
	atomic_store(&quit, 1);
	for (int i = 0; i < n; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	CHECK_RC(tadpole_stop(), TADPOLE_OK);
	for (int i = 0; i < n; i++)
		printf("thread %d calls %ld untraced %ld max_stall_ms %lld\n", i, results[i].calls, results[i].untraced,
		       results[i].max_stall / 1000000);
	return 0;
}
