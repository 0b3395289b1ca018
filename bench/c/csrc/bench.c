/*
 * bench.c: per-event cost of tadpole and of an LTTng-UST tracepoint, side
 * by side in one program.
 *
 *     bench PAIRS THREADS ROUNDS
 *
 * Each round times, on THREADS threads at once, PAIRS method calls each
 * recorded as two events (entry and exit): first with tadpole_enter and
 * tadpole_exit (tracing into the HQ named by TADPOLE_HQ), then with two
 * LTTng-UST tracepoints (recording into the active session of the user's
 * lttng-sessiond), then with two calls of an empty function (the loop's
 * own cost), then with tadpole again timing only the recording calls
 * (bursts that fit in the thread's buffer, each handed over untimed). It
 * prints the median ns per event of each and the ratio of the first two.
 *
 * Build (the Go test in this directory does it, with a session daemon and
 * an HQ):
 *
 *     lttng-gen-tp tpbench.tp -o tpbench.h -o tpbench.c
 *     cc -std=c11 -O2 -I. -I../../include bench.c tpbench.c -L../../out -Wl,-rpath,$PWD/../../out \
 *         -ltadpole -llttng-ust -llttng-ust-common -ldl -pthread -o bench
 *     lttng create bench && lttng enable-event -u 'tadpole_bench:*' && lttng start
 *     TADPOLE_HQ=127.0.0.1:8765 ./bench 1000000 1 5
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tadpole.h"
#include "tpbench.h"

#define MAX_THREADS 16
#define MAX_ROUNDS 64
#define WARMUP_PAIRS 20000

enum { MODE_TADPOLE, MODE_LTTNG, MODE_CALL, MODE_RECORD, MODES };
static const char *mode_names[MODES] = {"tadpole", "lttng-ust", "empty-call", "tadpole-record"};

/* MODE_RECORD times only what the traced thread spends recording into its
 * buffer: bursts of RECORD_BURST calls, each followed by an untimed
 * tadpole_flush (the hand-over to the agent). */
#define RECORD_BURST 500

static tadpole_method method;
static long pairs;
static int threads;
static pthread_barrier_t barrier;

/* The baseline: a call the compiler cannot remove. */
__attribute__((noinline)) static void empty_probe(int kind, int m) { __asm__ volatile("" : : "r"(kind), "r"(m) : "memory"); }

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void loop(int mode, long n) {
	switch (mode) {
	case MODE_TADPOLE:
		for (long i = 0; i < n; i++) {
			tadpole_enter(method);
			tadpole_exit(method);
		}
		break;
	case MODE_LTTNG:
		for (long i = 0; i < n; i++) {
			lttng_ust_tracepoint(tadpole_bench, method, 1, method);
			lttng_ust_tracepoint(tadpole_bench, method, 2, method);
		}
		break;
	case MODE_CALL:
		for (long i = 0; i < n; i++) {
			empty_probe(1, method);
			empty_probe(2, method);
		}
		break;
	}
}

/* record_bursts returns the ns spent in bursts of recording calls. */
static double record_bursts(long n) {
	double spent = 0;
	for (long done = 0; done < n; done += RECORD_BURST) {
		long burst = n - done < RECORD_BURST ? n - done : RECORD_BURST;
		tadpole_flush();
		double t0 = now_ns();
		loop(MODE_TADPOLE, burst);
		spent += now_ns() - t0;
	}
	tadpole_flush();
	return spent;
}

struct job {
	int mode;
	double ns; /* this thread's time for pairs calls */
};

static void *worker(void *arg) {
	struct job *j = arg;
	if (j->mode == MODE_RECORD) {
		record_bursts(WARMUP_PAIRS);
		pthread_barrier_wait(&barrier);
		j->ns = record_bursts(pairs);
		return NULL;
	}
	loop(j->mode, WARMUP_PAIRS);
	pthread_barrier_wait(&barrier);
	double t0 = now_ns();
	loop(j->mode, pairs);
	j->ns = now_ns() - t0;
	return NULL;
}

/* run_round returns the mean ns per event over the threads. */
static double run_round(int mode) {
	pthread_t th[MAX_THREADS];
	struct job jobs[MAX_THREADS];
	for (int i = 0; i < threads; i++) {
		jobs[i].mode = mode;
		if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0) {
			fprintf(stderr, "bench: pthread_create failed\n");
			exit(1);
		}
	}
	double sum = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		sum += jobs[i].ns;
	}
	return sum / threads / (2.0 * (double)pairs);
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: bench PAIRS THREADS ROUNDS\n");
		return 2;
	}
	pairs = atol(argv[1]);
	threads = atoi(argv[2]);
	int rounds = atoi(argv[3]);
	if (pairs <= 0 || threads <= 0 || threads > MAX_THREADS || rounds <= 0 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "bench: bad arguments\n");
		return 2;
	}
	method = tadpole_method_register("bench/Bench.call;1;()V");
	if (tadpole_start(NULL) != TADPOLE_OK) {
		char why[256];
		tadpole_errmsg(why, sizeof why);
		fprintf(stderr, "bench: tadpole_start: %s\n", why);
		return 1;
	}
	pthread_barrier_init(&barrier, NULL, (unsigned)threads);
	double results[MODES][MAX_ROUNDS];
	for (int r = 0; r < rounds; r++)
		for (int m = 0; m < MODES; m++)
			results[m][r] = run_round(m);
	if (tadpole_stop() != TADPOLE_OK) {
		fprintf(stderr, "bench: tadpole_stop failed\n");
		return 1;
	}
	double median[MODES];
	for (int m = 0; m < MODES; m++) {
		qsort(results[m], (size_t)rounds, sizeof(double), cmp_double);
		median[m] = results[m][rounds / 2];
		printf("mode %s threads %d events %ld ns/event %.2f\n", mode_names[m], threads, 2 * pairs * threads,
		       median[m]);
	}
	printf("tadpole-events %ld\n", (long)rounds * threads * 2 * 2 * (pairs + WARMUP_PAIRS));
	printf("ratio tadpole/lttng-ust %.3f\n", median[MODE_TADPOLE] / median[MODE_LTTNG]);
	return 0;
}
