/* exit.c CALLS: events of threads that never flush reach HQ. Thread
 * "exiter" records CALLS calls and exits; thread "idler" records CALLS
 * calls and waits, alive; thread "last" records CALLS calls and exits right
 * before tadpole_stop. The program prints a line after each step and waits
 * for a line on stdin before the next, so that the test can watch HQ. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static tadpole_method m;
static int calls;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int release_idler;

static void record(void) {
	for (int k = 0; k < calls; k++) {
		CHECK_RC(tadpole_enter(m), TADPOLE_OK);
		CHECK_RC(tadpole_exit(m), TADPOLE_OK);
	}
}

static void *exiter(void *arg) {
	CHECK_RC(tadpole_thread_name((const char *)arg), TADPOLE_OK);
	record();
	return NULL;
}

static void *idler(void *arg) {
	(void)arg;
	CHECK_RC(tadpole_thread_name("idler"), TADPOLE_OK);
	record();
	pthread_mutex_lock(&mu);
	while (!release_idler)
		pthread_cond_wait(&cond, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void step(const char *what) {
	printf("%s\n", what);
	fflush(stdout);
	char line[64];
	CHECK(fgets(line, sizeof line, stdin) != NULL);
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	calls = atoi(argv[1]);
	m = tadpole_method_register("ctest/Exit.run;1;()V");
	CHECK(m > 0);
	CHECK_RC(tadpole_start(NULL), TADPOLE_OK);

	pthread_t a, b, c;
	CHECK(pthread_create(&a, NULL, exiter, "exiter") == 0);
	CHECK(pthread_join(a, NULL) == 0);
	step("exiter joined");

	CHECK(pthread_create(&b, NULL, idler, NULL) == 0);
	step("idler started");

	CHECK(pthread_create(&c, NULL, exiter, "last") == 0);
	CHECK(pthread_join(c, NULL) == 0);
	CHECK_RC(tadpole_stop(), TADPOLE_OK);

	pthread_mutex_lock(&mu);
	release_idler = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&mu);
	CHECK(pthread_join(b, NULL) == 0);
	printf("done\n");
	return 0;
}
