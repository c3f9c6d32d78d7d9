/* Exact-channel services for algorithms: tags name (operation, step, segment). */
#include "internal.h"

/* 24 bits of operation, 16 of step, 24 of segment: operations run in order, so wrap is safe. */
static uint64_t make_tag(uint64_t seq, uint32_t step, uint32_t seg)
{
	return ((seq & 0xffffffull) << 40) | ((uint64_t)(step & 0xffff) << 24) | (seg & 0xffffff);
}

int or_coll_send(struct or_coll *c, uint32_t peer, uint32_t step, uint32_t seg, const void *buf,
                 size_t len, or_xfer_t *x)
{
	return or_ofi_tsend(c->comm->rdm, peer, make_tag(c->seq, step, seg), buf, len, x);
}

int or_coll_recv(struct or_coll *c, uint32_t peer, uint32_t step, uint32_t seg, void *buf,
                 size_t len, or_xfer_t *x)
{
	return or_ofi_trecv(c->comm->rdm, peer, make_tag(c->seq, step, seg), buf, len, x);
}
