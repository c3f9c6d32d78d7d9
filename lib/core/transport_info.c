/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_transport_check: which datagram transport a bounded communicator would run on
 * here, and why (docs/design.md, "Datagram transports"), for optireduce_info.
 */
#include <stdio.h>

#include "dgram/dgram.h"
#include "lib/bounded/bounded.h"
#include "internal.h"

int or_ctx_open_dgram(optireduce_ctx_t *ctx, int multicast, struct or_dgram **d, char *why,
                      size_t why_len, char *buf, size_t len)
{
	struct or_dgram_want want;
	int n;

	if (!or_ctx_valid(ctx))
		return -OPTIREDUCE_EBADHANDLE;
	if (!buf || !len)
		return -OPTIREDUCE_EINVAL;
	or_bounded_dgram_want(&ctx->params, NULL, 0, &want);
	want.multicast = multicast;
	*d = NULL;
	if (!or_dgram_open(&want, d, why, why_len))
		return 0;
	n = snprintf(buf, len, "no datagram endpoint: %s", why);
	return n >= 0 && (size_t)n < len ? 1 : -OPTIREDUCE_EOVERFLOW;
}

int optireduce_transport_check(optireduce_ctx_t *ctx, char *buf, size_t len)
{
	struct or_dgram *d;
	char why[256], what[400];
	int ret = or_ctx_open_dgram(ctx, 0, &d, why, sizeof(why), buf, len), n;

	if (ret)
		return ret == 1 ? 0 : ret;
	or_dg_describe(d, what, sizeof(what));
	n = snprintf(buf, len, "%s (%s): %s", or_dgram_kind_name(d->kind), why, what);
	or_dg_close(d);
	return n >= 0 && (size_t)n < len ? 1 : -OPTIREDUCE_EOVERFLOW;
}
