/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>

#include "lib/core/log.h"
#include "optireduce.h"
#include "lib/bounded/ctl/sendfail.h"

int or_sendfail_init(struct or_sendfail *s, uint32_t npeers)
{
	s->total = 0;
	s->logged = 0;
	s->npeers = npeers;
	s->since_us = calloc(npeers ? npeers : 1, sizeof(*s->since_us));
	return s->since_us ? 0 : -OPTIREDUCE_ENOMEM;
}

void or_sendfail_fini(struct or_sendfail *s)
{
	if (s->total)
		or_log(OR_LOG_INFO,
		       "datagrams not sent over the communicator's life (counted as "
		       "lost): %llu",
		       (unsigned long long)s->total);
	free(s->since_us);
	s->since_us = NULL;
}

int or_sendfail_is_loss(int code)
{
	return code < 0 && code != -OPTIREDUCE_EINVAL && code != -OPTIREDUCE_EMSGSIZE;
}

void or_sendfail_ok(struct or_sendfail *s, uint32_t peer)
{
	if (peer < s->npeers)
		s->since_us[peer] = 0;
}

int or_sendfail_note(struct or_sendfail *s, uint32_t peer, int code, const char *why, double now_us,
                     double timeout_us)
{
	if (peer >= s->npeers || code >= 0)
		return -OPTIREDUCE_EINVAL;
	if (!or_sendfail_is_loss(code))
		return code;
	s->total++;
	if (!s->logged) {
		s->logged = 1;
		or_log(OR_LOG_INFO,
		       "a datagram to rank %u was not sent (%s): counted as lost, the operation "
		       "goes on; further ones are counted in packets_send_failed",
		       peer, why ? why : optireduce_strerror(code));
	}
	/* 0 means "none": a failure at time 0 (a clock that starts there) still counts. */
	if (s->since_us[peer] <= 0) {
		s->since_us[peer] = now_us > 0 ? now_us : 1e-3;
		return 0;
	}
	if (now_us - s->since_us[peer] > timeout_us) {
		or_log(OR_LOG_WARN,
		       "rank %u unreachable: every datagram to it failed for %.0f ms (%s)", peer,
		       (now_us - s->since_us[peer]) / 1e3, why ? why : optireduce_strerror(code));
		return -OPTIREDUCE_EPEER;
	}
	return 0;
}
