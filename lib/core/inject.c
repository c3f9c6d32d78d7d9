/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection for tests: OPTIREDUCE_INJECT_DELAY="RANKS:US[:PROB]" makes
 * the listed ranks (comma-separated, or "all") sleep US microseconds before
 * entering an operation, on a seeded fraction PROB of operations (default 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

static int rank_listed(const char *list, size_t len, uint32_t rank)
{
	char buf[OR_PARAM_STRLEN];

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, list, len);
	buf[len] = '\0';
	if (strcmp(buf, "all") == 0)
		return 1;
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if ((uint32_t)strtoul(t, NULL, 10) == rank)
			return 1;
	return 0;
}

/* Deterministic per (seed, rank, operation), so a test can predict which operations wait. */
static double uniform(uint64_t seed, uint32_t rank, uint64_t seq)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)rank << 40) ^ seq;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1p-53;
}

void or_inject_delay(optireduce_comm_t *comm, uint64_t seq)
{
	const char *spec = or_param_str(&comm->params, OR_P_INJECT_DELAY);
	const char *colon = strchr(spec, ':');
	double us, prob = 1.0;
	char *end;
	struct timespec ts;

	if (!*spec || !colon || !rank_listed(spec, (size_t)(colon - spec), comm->rank))
		return;
	us = strtod(colon + 1, &end);
	if (*end == ':')
		prob = strtod(end + 1, NULL);
	if (us <= 0 || uniform((uint64_t)or_param_int(&comm->params, OR_P_INJECT_SEED), comm->rank,
	                       seq) >= prob)
		return;
	ts.tv_sec = (time_t)(us / 1e6);
	ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
	nanosleep(&ts, NULL);
}
