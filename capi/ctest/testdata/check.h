/* check.h: assertions of the C test programs; a failed check prints
 * "got X; want Y" with the library's last error and exits with status 1. */
#ifndef CTEST_CHECK_H
#define CTEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "tadpole.h"

#define CHECK(cond)                                                                 \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#define CHECK_RC(call, want)                                                        \
	do {                                                                        \
		int got_ = (call);                                                  \
		if (got_ != (want)) {                                               \
			char msg_[256];                                             \
			tadpole_errmsg(msg_, sizeof msg_);                          \
			fprintf(stderr, "%s:%d: %s: got %d (%s); want %d (%s); last error: %s\n", \
			        __FILE__, __LINE__, #call, got_, tadpole_strerror(got_), (int)(want), \
			        tadpole_strerror(want), msg_);                      \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#endif
