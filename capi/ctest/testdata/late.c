/* late.c CALLS: starts with an HQ that is not listening yet and prints how
 * long tadpole_start took; the calls it makes meanwhile find tracing off.
 * Once HQ appears and tracing begins (at most 20 s), it records CALLS calls
 * and stops. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

static double now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	int calls = atoi(argv[1]);
	tadpole_method m = tadpole_method_register("ctest/Late.call;1;()V");
	double t0 = now_ms();
	int rc = tadpole_start(NULL);
	printf("start_rc %d start_ms %.1f\n", rc, now_ms() - t0);
	fflush(stdout);
	CHECK_RC(rc, TADPOLE_OK);
	CHECK(!tadpole_tracing());
	CHECK_RC(tadpole_enter(m), TADPOLE_ENOTCONN);
	for (double end = now_ms() + 20000; !tadpole_tracing() && now_ms() < end;) {
		struct timespec d = {0, 5000000};
		nanosleep(&d, NULL);
	}
	CHECK(tadpole_tracing());
	for (int i = 0; i < calls; i++) {
		CHECK_RC(tadpole_enter(m), TADPOLE_OK);
		CHECK_RC(tadpole_exit(m), TADPOLE_OK);
	}
	CHECK_RC(tadpole_stop(), TADPOLE_OK);
	printf("done\n");
	return 0;
}
