/*
 * tp.h: declarations shared by capi's C side (tadpole.c) and its Go side.
 * Declarations and macros only: cgo copies the preambles that include it
 * into _cgo_export.h.
 */
#ifndef TADPOLE_CAPI_TP_H
#define TADPOLE_CAPI_TP_H

#include <stddef.h>
#include <stdint.h>

#include "tadpole.h"

/* Batch record layout of agent/batch.go (checked against it in Go). */
#define TP_OFF_KIND 0
#define TP_OFF_FLAGS 1
#define TP_OFF_LINE 2
#define TP_OFF_METHOD 4
#define TP_OFF_EXC 8
#define TP_OFF_LEN1 12
#define TP_OFF_LEN2 14
#define TP_OFF_TIME 16
#define TP_HDR (1 + 1 + 2 + 4 + 4 + 2 + 2 + 8)
#define TP_ALIGN 8

#define TP_KIND_ENTRY 1
#define TP_KIND_EXIT 2
#define TP_KIND_THROW 3
#define TP_KIND_BUBBLE 4
#define TP_KIND_MARKER 5
#define TP_KIND_NAME 6

#define TP_FLAG_THROWN 1
#define TP_FLAG_MUTF8 2
#define TP_NO_LINE 0xFFFF

/* Bytefrog modes (bytefrog.Mode) as the C side keeps them; TP_MODE_NONE
 * means no run: before start, after stop, in a fork child. */
#define TP_MODE_NONE 0
#define TP_MODE_INITIALIZING 'I'
#define TP_MODE_TRACING 'T'
#define TP_MODE_PAUSED 'P'
#define TP_MODE_SUSPENDED 'S'
#define TP_MODE_SHUTDOWN 'X'

/* Bytes of a thread's event buffer (malloc'd at its first event). */
#define TP_BUF_SIZE (32 * 1024)
/* Bytes of a thread's last error message. */
#define TP_ERR_SIZE 256

/* Called by the Go side. */

/* tp_begin opens a new session generation: buffers of older ones are
 * discarded, the event clock is set. Mode stays TP_MODE_NONE. */
void tp_begin(void);
/* tp_end closes the generation and frees the buffers of exited threads. */
void tp_end(void);
/* tp_set_mode publishes the mode every recording call tests; a mode equal
 * to the published one changes nothing. */
void tp_set_mode(uint8_t mode);
/* tp_clock_tick refreshes the event clock (CLOCK_MONOTONIC ns). */
void tp_clock_tick(void);
/* tp_flush_all hands every thread's buffered events to the agent; with
 * skip_paused it gives up while the mode is TP_MODE_PAUSED instead of
 * blocking. It returns the number of buffers handed over. */
int tp_flush_all(int skip_paused);
/* tp_set_wake_fd gives the write end of the pipe that asks the Go side for
 * an early flush (-1: none). */
void tp_set_wake_fd(int fd);
/* tp_set_logger records whether logger handle h is enabled. */
void tp_set_logger(int32_t h, int on);

/* Called by the JVM agent (package jni), in the same library. */

/* Hidden: internal to libtadpole.so, never among its dynamic symbols. */
#define TP_INTERNAL __attribute__((visibility("hidden")))

/* tp_jmarker, tp_jthread_name, tp_jlogger_register and tp_jlog are
 * tadpole_marker, tadpole_thread_name, tadpole_logger_register and
 * tadpole_log for strings in Java's modified UTF-8 (GetStringUTFRegion:
 * U+0000 as C0 80, supplementary characters as two 3-byte surrogates).
 * Markers and thread names are recorded as such, flagged TP_FLAG_MUTF8, for
 * the agent to convert; logger names and log records are converted in Go. */
TP_INTERNAL int tp_jmarker(const char *key, const char *value);
TP_INTERNAL int tp_jthread_name(const char *name);
TP_INTERNAL int32_t tp_jlogger_register(const char *name);
TP_INTERNAL int tp_jlog(int32_t h, int level, const char *level_name, const char *msg);

#endif /* TADPOLE_CAPI_TP_H */
