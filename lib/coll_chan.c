/*
 * Exact-channel services for algorithms: tags name (operation, step, segment).  The
 * transfer an algorithm holds (or_xfer_t) is libfabric's completion context (struct
 * or_ofi_xfer), which only this file and ofi/ see inside.
 */
#include "internal.h"

_Static_assert(sizeof(struct or_ofi_xfer) <= sizeof(or_xfer_t), "or_xfer_t too small");
_Static_assert(_Alignof(struct or_ofi_xfer) <= _Alignof(or_xfer_t), "or_xfer_t misaligned");

static struct or_ofi_xfer *ofi_xfer(or_xfer_t *x)
{
	return (struct or_ofi_xfer *)(void *)x;
}

static const struct or_ofi_xfer *ofi_xfer_c(const or_xfer_t *x)
{
	return (const struct or_ofi_xfer *)(const void *)x;
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
	return or_ofi_tsend(c->comm->rdm, peer, make_tag(c->seq, step, seg), buf, len, ofi_xfer(x));
}

int or_coll_recv(struct or_coll *c, uint32_t peer, uint32_t step, uint32_t seg, void *buf,
                 size_t len, or_xfer_t *x)
{
	return or_ofi_trecv(c->comm->rdm, peer, make_tag(c->seq, step, seg), buf, len, ofi_xfer(x));
}

int or_xfer_done(const or_xfer_t *x)
{
	return ofi_xfer_c(x)->done;
}

int or_xfer_error(const or_xfer_t *x)
{
	return ofi_xfer_c(x)->error;
}

void or_xfer_skip(or_xfer_t *x)
{
	ofi_xfer(x)->done = 1;
	ofi_xfer(x)->error = 0;
}
