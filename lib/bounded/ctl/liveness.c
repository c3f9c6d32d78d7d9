/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>

#include "lib/bounded/ctl/liveness.h"
#include "optireduce.h"

int or_liveness_init(struct or_liveness *l, uint32_t npeers)
{
	size_t n = npeers ? npeers : 1;

	l->npeers = npeers;
	l->silent_us = calloc(n, sizeof(*l->silent_us));
	l->since_us = calloc(n, sizeof(*l->since_us));
	l->expected = calloc(n, sizeof(*l->expected));
	l->stamp = calloc(n, sizeof(*l->stamp));
	if (l->silent_us && l->since_us && l->expected && l->stamp)
		return 0;
	or_liveness_fini(l);
	return -OPTIREDUCE_ENOMEM;
}

void or_liveness_fini(struct or_liveness *l)
{
	free(l->silent_us);
	free(l->since_us);
	free(l->expected);
	free(l->stamp);
	l->silent_us = l->since_us = NULL;
	l->expected = NULL;
	l->stamp = NULL;
	l->npeers = 0;
}

int or_liveness_mark(struct or_liveness *l, uint32_t peer, uint64_t op)
{
	if (peer >= l->npeers || l->stamp[peer] == op + 1)
		return 0;
	l->stamp[peer] = op + 1;
	return 1;
}

void or_liveness_expect(struct or_liveness *l, uint32_t peer, double now_us)
{
	if (peer < l->npeers && l->expected[peer]++ == 0)
		l->since_us[peer] = now_us;
}

void or_liveness_release(struct or_liveness *l, uint32_t peer, double now_us)
{
	if (peer >= l->npeers || l->expected[peer] == 0)
		return;
	if (--l->expected[peer] == 0 && now_us > l->since_us[peer])
		l->silent_us[peer] += now_us - l->since_us[peer];
}

void or_liveness_heard(struct or_liveness *l, uint32_t peer, double now_us)
{
	if (peer >= l->npeers)
		return;
	l->silent_us[peer] = 0;
	l->since_us[peer] = now_us;
}

double or_liveness_silence(const struct or_liveness *l, uint32_t peer, double now_us)
{
	double s;

	if (peer >= l->npeers)
		return 0;
	s = l->silent_us[peer];
	if (l->expected[peer] && now_us > l->since_us[peer])
		s += now_us - l->since_us[peer];
	return s;
}

int or_liveness_dead(const struct or_liveness *l, double now_us, double timeout_us)
{
	for (uint32_t p = 0; p < l->npeers; p++)
		if (l->expected[p] && or_liveness_silence(l, p, now_us) > timeout_us)
			return (int)p;
	return -1;
}
