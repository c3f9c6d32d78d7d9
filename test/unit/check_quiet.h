/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CHECK(cond) for the API tests (test_api, test_select, test_topology, test_placement_comm):
 * silent when it holds, says where it failed when not, and counts failures, so a test
 * reports every check that fails, not only the first.  test/unit/check.h is the verbose kind.
 */
#ifndef OR_TEST_CHECK_QUIET_H
#define OR_TEST_CHECK_QUIET_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#endif
