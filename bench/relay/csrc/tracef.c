/* Emits N lttng-ust tracef events (lttng_ust_tracef:event, a 29-byte
 * message each), the LTTng side of the live read-rate benchmark. */
#include <lttng/tracef.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 200000;
	for (long i = 0; i < n; i++) {
		tracef("tadpole relay bench %09ld", i);
	}
	printf("emitted %ld\n", n);
	return 0;
}
