/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CHECK for the unit tests on synthetic input (test_timeout, test_pacing): prints every
 * check, "ok  " or "FAIL" with where it failed, and counts failures in check_failures,
 * so a test reports all that fails, not only the first.
 */
#ifndef OR_TEST_CHECK_H
#define OR_TEST_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		int ok_ = !!(cond);                                                                \
		printf("%s: ", ok_ ? "ok  " : "FAIL");                                             \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		if (!ok_) {                                                                        \
			printf("      at %s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
			check_failures++;                                                          \
		}                                                                                  \
	} while (0)

#endif
