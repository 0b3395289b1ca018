/* fork.c CALLS: a traced process forks while a worker thread records. In
 * the child every call returns TADPOLE_ECHILD and records nothing, from the
 * forking thread and from a thread the child creates; the child runs while
 * the parent keeps tracing, then exits normally. The parent records CALLS
 * calls on the main thread before and after the fork and the worker records
 * CALLS calls throughout; the test checks the parent's trace is complete. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static tadpole_method m_main, m_worker, m_child;
static tadpole_exc e;
static tadpole_logger lg;
static int calls;
static int pipefd[2];

static void *worker(void *arg) {
	(void)arg;
	CHECK_RC(tadpole_thread_name("fork-worker"), TADPOLE_OK);
	for (int k = 0; k < calls; k++) {
		CHECK_RC(tadpole_enter(m_worker), TADPOLE_OK);
		CHECK_RC(tadpole_exit(m_worker), TADPOLE_OK);
		if (k % 64 == 0)
			usleep(100);
	}
	return NULL;
}

/* inert checks that every call of the child fails with TADPOLE_ECHILD. */
static void inert(void) {
	CHECK_RC(tadpole_enter(m_child), TADPOLE_ECHILD);
	CHECK_RC(tadpole_exit(m_child), TADPOLE_ECHILD);
	CHECK_RC(tadpole_exit_line(m_child, 3), TADPOLE_ECHILD);
	CHECK_RC(tadpole_exception(m_child, e, 3), TADPOLE_ECHILD);
	CHECK_RC(tadpole_bubble(m_child, e), TADPOLE_ECHILD);
	CHECK_RC(tadpole_marker("child", "x"), TADPOLE_ECHILD);
	CHECK_RC(tadpole_log(lg, 800, NULL, "child"), TADPOLE_ECHILD);
	CHECK_RC(tadpole_logger_enabled(lg), 0);
	CHECK_RC(tadpole_thread_name("child"), TADPOLE_ECHILD);
	CHECK_RC(tadpole_method_register("ctest/Child.new;1;()V"), TADPOLE_ECHILD);
	CHECK_RC(tadpole_exc_register("ctest/ChildError"), TADPOLE_ECHILD);
	CHECK_RC(tadpole_logger_register("ctest.child"), TADPOLE_ECHILD);
	CHECK_RC(tadpole_flush(), TADPOLE_ECHILD);
	CHECK_RC(tadpole_tracing(), 0);
	CHECK_RC(tadpole_start(NULL), TADPOLE_ECHILD);
	CHECK_RC(tadpole_stop(), TADPOLE_ECHILD);
	char msg[256];
	tadpole_errmsg(msg, sizeof msg);
	CHECK(strstr(msg, "fork") != NULL);
}

static void *child_thread(void *arg) {
	(void)arg;
	inert();
	return NULL;
}

static void child(void) {
	inert();
	pthread_t th;
	CHECK(pthread_create(&th, NULL, child_thread, NULL) == 0);
	CHECK(pthread_join(th, NULL) == 0);
	/* Wait for the parent to record its post-fork calls, then exit like a
	 * program does (atexit handlers, stdio flush). */
	char c;
	CHECK(read(pipefd[0], &c, 1) == 1);
	inert();
	exit(0);
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	calls = atoi(argv[1]);
	m_main = tadpole_method_register("ctest/Fork.main;1;()V");
	m_worker = tadpole_method_register("ctest/Fork.worker;1;()V");
	m_child = tadpole_method_register("ctest/Fork.child;1;()V");
	e = tadpole_exc_register("ctest/ForkError");
	lg = tadpole_logger_register("ctest.fork");
	CHECK(m_main > 0 && m_worker > 0 && m_child > 0 && e > 0 && lg > 0);
	CHECK_RC(tadpole_thread_name("fork-main"), TADPOLE_OK);
	CHECK_RC(tadpole_start(NULL), TADPOLE_OK);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, worker, NULL) == 0);
	for (int k = 0; k < calls; k++) {
		CHECK_RC(tadpole_enter(m_main), TADPOLE_OK);
		CHECK_RC(tadpole_exit(m_main), TADPOLE_OK);
	}
	CHECK(pipe(pipefd) == 0);
	fflush(stdout);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		child();
	/* The parent goes on tracing while the child lives. */
	CHECK_RC(tadpole_marker("forked", "parent"), TADPOLE_OK);
	for (int k = 0; k < calls; k++) {
		CHECK_RC(tadpole_enter(m_main), TADPOLE_OK);
		CHECK_RC(tadpole_exit(m_main), TADPOLE_OK);
	}
	CHECK_RC(tadpole_flush(), TADPOLE_OK);
	CHECK(write(pipefd[1], "x", 1) == 1);
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(pthread_join(th, NULL) == 0);
	CHECK_RC(tadpole_marker("child", "exited"), TADPOLE_OK);
	CHECK_RC(tadpole_stop(), TADPOLE_OK);
	return 0;
}
