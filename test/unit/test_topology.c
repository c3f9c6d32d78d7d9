/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_topology(): argument checks, truncation, and that it reports the
 * binding the thread really has (bound to one CPU, then unbound again).
 * Skips (77) when the library was built without hwloc.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "check_quiet.h"
#include "optireduce.h"

int main(void)
{
	char buf[1024], before[1024], small[12], pus[32];
	cpu_set_t orig, one;
	int ret, first = -1;

	CHECK(optireduce_topology(NULL, 10) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_topology(buf, 0) == -OPTIREDUCE_EINVAL);
	ret = optireduce_topology(buf, sizeof(buf));
	printf("topology: %s\n", buf);
	if (ret == -OPTIREDUCE_ENOSYS) {
		CHECK(strstr(buf, "without hwloc") != NULL);
		return failures ? 1 : 77;
	}
	CHECK(ret == 0);
	CHECK(strstr(buf, "PUs ") != NULL && strstr(buf, "NUMA node") != NULL);
	snprintf(before, sizeof(before), "%s", buf);

	/* Too small: truncated but terminated. */
	memset(small, 'x', sizeof(small));
	CHECK(optireduce_topology(small, sizeof(small)) == -OPTIREDUCE_EOVERFLOW);
	CHECK(memchr(small, '\0', sizeof(small)) != NULL);

	/* Bind this thread to its first allowed CPU: the report must say exactly that. */
	if (sched_getaffinity(0, sizeof(orig), &orig) == 0) {
		for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
			if (CPU_ISSET(i, &orig))
				first = i;
		CPU_ZERO(&one);
		CPU_SET(first, &one);
		if (first >= 0 && sched_setaffinity(0, sizeof(one), &one) == 0) {
			snprintf(pus, sizeof(pus), "bound to PUs %d (1 core)", first);
			CHECK(optireduce_topology(buf, sizeof(buf)) == 0);
			printf("bound: %s\n", buf);
			CHECK(strstr(buf, pus) != NULL);
			sched_setaffinity(0, sizeof(orig), &orig);
			/* Back where we started, the report is the first one again. */
			CHECK(optireduce_topology(buf, sizeof(buf)) == 0);
			CHECK(strcmp(buf, before) == 0);
		}
	}
	return failures ? 1 : 0;
}
