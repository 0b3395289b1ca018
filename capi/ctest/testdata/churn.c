/* churn.c THREADS CALLS: THREADS short-lived threads, one after the other,
 * each record CALLS calls and exit without flushing. Odd threads name
 * themselves with pthread_setname_np only, even ones not at all, so the
 * trace shows the default names. The program prints its resident memory
 * after the first quarter of the threads and at the end: exited threads'
 * state must be freed or reused. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static tadpole_method m;
static int calls;

static void *worker(void *arg) {
	long i = (long)arg;
	if (i % 2 == 1) {
		char name[16];
		snprintf(name, sizeof name, "churn-%d", (int)(i % 100000));
		CHECK(pthread_setname_np(pthread_self(), name) == 0);
	}
	for (int k = 0; k < calls; k++) {
		CHECK_RC(tadpole_enter(m), TADPOLE_OK);
		CHECK_RC(tadpole_exit(m), TADPOLE_OK);
	}
	printf("tid %ld %d\n", i, gettid());
	return NULL;
}

static long rss_kib(void) {
	FILE *f = fopen("/proc/self/statm", "r");
	CHECK(f != NULL);
	long size, resident;
	CHECK(fscanf(f, "%ld %ld", &size, &resident) == 2);
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv) {
	CHECK(argc == 3);
	int n = atoi(argv[1]);
	calls = atoi(argv[2]);
	m = tadpole_method_register("ctest/Churn.run;1;()V");
	CHECK_RC(tadpole_start(NULL), TADPOLE_OK);
	CHECK_RC(tadpole_marker("main", "start"), TADPOLE_OK);
	for (long i = 0; i < n; i++) {
		pthread_t th;
		CHECK(pthread_create(&th, NULL, worker, (void *)i) == 0);
		CHECK(pthread_join(th, NULL) == 0);
		if (i == n / 4 - 1) {
			CHECK_RC(tadpole_flush(), TADPOLE_OK);
			printf("rss-quarter %ld\n", rss_kib());
		}
	}
	CHECK_RC(tadpole_flush(), TADPOLE_OK);
	printf("rss-end %ld\n", rss_kib());
	CHECK_RC(tadpole_enter(m), TADPOLE_OK);
	CHECK_RC(tadpole_exit(m), TADPOLE_OK);
	CHECK_RC(tadpole_stop(), TADPOLE_OK);
	return 0;
}
