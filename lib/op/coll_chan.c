/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact-channel services for algorithms: tags name (operation, step, segment).  The
 * transfer an algorithm holds (or_xfer_t) is libfabric's completion context (struct
 * or_xfer), which only this file and ofi/ see inside.
 */
#include "lib/core/internal.h"

/*
 * What an algorithm's or_xfer_t holds: libfabric's completion context and, for a receive,
 * the bytes posted.  Ranks that disagree on count or dtype send other lengths than their
 * peers expect: a longer message is truncated (EMSGSIZE from the endpoint), a shorter one
 * completes with fewer bytes; both are -OPTIREDUCE_EMISMATCH, never a short result.
 */
struct chan_xfer {
	struct or_xport_xfer x; /* first: its address is the completion context */
	size_t want;          /* a receive's posted bytes; SIZE_MAX for a send */
};

_Static_assert(sizeof(struct chan_xfer) <= sizeof(or_xfer_t), "or_xfer_t too small");
_Static_assert(_Alignof(struct chan_xfer) <= _Alignof(or_xfer_t), "or_xfer_t misaligned");

static struct chan_xfer *chan_xfer(or_xfer_t *x)
{
	return (struct chan_xfer *)(void *)x;
}

static const struct chan_xfer *chan_xfer_c(const or_xfer_t *x)
{
	return (const struct chan_xfer *)(const void *)x;
}

/*
 * 24 bits of operation, 16 of step, 24 of segment.  Operations alive at once on both ends of
 * a transfer span fewer than 2 * OR_TAG_SEQ_SPAN numbers (coll.h), so the wrap never makes
 * two of them share a tag.
 */
_Static_assert(2ull * OR_TAG_SEQ_SPAN < (1ull << 24), "operation tags could collide");
static uint64_t make_tag(uint64_t seq, uint32_t step, uint32_t seg)
{
	return ((seq & 0xffffffull) << 40) | ((uint64_t)(step & 0xffff) << 24) | (seg & 0xffffff);
}

int or_coll_send(struct or_coll *c, uint32_t peer, uint32_t step, uint32_t seg, const void *buf,
                 size_t len, or_xfer_t *x)
{
	chan_xfer(x)->want = SIZE_MAX;
	return or_ofi_tsend(c->comm->rdm, peer, make_tag(c->seq, step, seg), buf, len,
	                    &chan_xfer(x)->x);
}

int or_coll_recv(struct or_coll *c, uint32_t peer, uint32_t step, uint32_t seg, void *buf,
                 size_t len, or_xfer_t *x)
{
	chan_xfer(x)->want = len;
	return or_ofi_trecv(c->comm->rdm, peer, make_tag(c->seq, step, seg), buf, len,
	                    &chan_xfer(x)->x);
}

int or_xfer_done(const or_xfer_t *x)
{
	return chan_xfer_c(x)->x.done;
}

int or_xfer_error(const or_xfer_t *x)
{
	const struct chan_xfer *cx = chan_xfer_c(x);

	if (cx->want == SIZE_MAX)
		return cx->x.error;
	if (cx->x.error == -OPTIREDUCE_EMSGSIZE ||
	    (cx->x.done && !cx->x.error && cx->x.len != cx->want))
		return -OPTIREDUCE_EMISMATCH;
	return cx->x.error;
}

void or_xfer_skip(or_xfer_t *x)
{
	chan_xfer(x)->x.done = 1;
	chan_xfer(x)->x.error = 0;
	chan_xfer(x)->want = SIZE_MAX;
}
