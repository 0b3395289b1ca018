/*
 * example.c: a multi-threaded C program traced by tadpole.
 *
 * Build and run (from the repository root):
 *
 *     ./build.sh lib && ./build.sh build        # out/libtadpole.so, out/tadpole-hq
 *     cd examples/c && make                     # ./example, linked against ../../out
 *     ../../out/tadpole-hq -exec ./example      # a private reference HQ; prints the run summary
 *
 * or against an HQ already listening:
 *
 *     ../../out/tadpole-hq -listen 127.0.0.1:8765 -dir traces/ &
 *     TADPOLE_HQ=127.0.0.1:8765 ./example
 *
 * Without TADPOLE_HQ the program runs untraced and says why on stderr. The
 * link line, without make:
 *
 *     cc -std=c99 -I../../include example.c -L../../out -Wl,-rpath,$PWD/../../out -ltadpole -pthread -o example
 *
 * Four worker threads take orders from a shared counter; each order is
 * processed by three traced functions, out-of-stock orders raise an
 * exception that bubbles out of reserve(), and two loggers (listed by
 * "lttng list -j" while the program runs) record warnings and payments.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "tadpole.h"

#define WORKERS 4
#define ORDERS 20000

static tadpole_method m_process, m_reserve, m_charge;
static tadpole_exc e_out_of_stock;
static tadpole_logger log_orders, log_payments;
static atomic_int next_order;
static atomic_long revenue;

/* reserve takes the order's items from stock; one order in 97 finds none. */
static int reserve(int order) {
	tadpole_enter(m_reserve);
	if (order % 97 == 0) {
		tadpole_exception(m_reserve, e_out_of_stock, __LINE__);
		tadpole_bubble(m_reserve, e_out_of_stock);
		return -1;
	}
	tadpole_exit_line(m_reserve, __LINE__);
	return 0;
}

/* charge bills the order; every 1000th payment is logged. */
static void charge(int order) {
	tadpole_enter(m_charge);
	atomic_fetch_add(&revenue, 10 + order % 7);
	if (order % 1000 == 0 && tadpole_logger_enabled(log_payments)) {
		char msg[64];
		snprintf(msg, sizeof msg, "order %d charged", order);
		tadpole_log(log_payments, TADPOLE_LEVEL_INFO, NULL, msg);
	}
	tadpole_exit(m_charge);
}

static void process(int order) {
	tadpole_enter(m_process);
	if (reserve(order) != 0) {
		if (tadpole_logger_enabled(log_orders)) {
			char msg[64];
			snprintf(msg, sizeof msg, "order %d: out of stock", order);
			tadpole_log(log_orders, TADPOLE_LEVEL_WARNING, NULL, msg);
		}
	} else {
		charge(order);
	}
	tadpole_exit(m_process);
}

static void *worker(void *arg) {
	char name[32];
	snprintf(name, sizeof name, "worker-%d", (int)(long)arg);
	tadpole_thread_name(name);
	for (int order; (order = atomic_fetch_add(&next_order, 1)) < ORDERS;)
		process(order);
	return NULL;
}

int main(void) {
	/* Handles first: registration works before tracing starts. */
	m_process = tadpole_method_register("shop/Orders.process;1;(I)V");
	m_reserve = tadpole_method_register("shop/Inventory.reserve;1;(I)V");
	m_charge = tadpole_method_register("shop/Payments.charge;1;(I)V");
	e_out_of_stock = tadpole_exc_register("shop/OutOfStockException");
	log_orders = tadpole_logger_register("shop.orders");
	log_payments = tadpole_logger_register("shop.payments");

	/* Options from TADPOLE_* variables; a string such as
	 * "hq=127.0.0.1:8765,log_level=info" would override them. */
	if (tadpole_start(NULL) != TADPOLE_OK) {
		char why[256];
		tadpole_errmsg(why, sizeof why);
		fprintf(stderr, "example: running untraced: %s\n", why);
	}
	tadpole_thread_name("main");
	tadpole_marker("shop", "open");

	pthread_t threads[WORKERS];
	for (long i = 0; i < WORKERS; i++)
		pthread_create(&threads[i], NULL, worker, (void *)(i + 1));
	for (int i = 0; i < WORKERS; i++)
		pthread_join(threads[i], NULL);

	char summary[64];
	snprintf(summary, sizeof summary, "%d orders, revenue %ld", ORDERS, atomic_load(&revenue));
	tadpole_marker("shop", summary);
	printf("example: %s\n", summary);
	tadpole_stop();
	return 0;
}
