/*
 * What an algorithm sees of an operation, and the channel services the core
 * offers it.  No libfabric type and no clock appears here.
 */
#ifndef OR_COLL_H
#define OR_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "optireduce.h"
#include "../ofi/ofi.h"

typedef struct or_ofi_xfer or_xfer_t;

struct or_bounded_op; /* bounded-channel state of one operation (lib/bounded.h) */

struct or_coll {
	uint32_t rank;
	uint32_t size;
	/* Holds this rank's contribution when the algorithm starts, the result when it ends. */
	void *rbuf;
	size_t count;
	enum optireduce_dtype dtype;
	enum optireduce_op op; /* AVG reduces as SUM; the core divides at the end */
	size_t esize;
	uint64_t seq;         /* operation number on the communicator */
	size_t segment_bytes; /* largest exact transfer, a multiple of esize */
	uint32_t incast;      /* senders per receiver at once (transpose) */
	int bounded;          /* run on the bounded channel */
	struct or_bounded_op *bop;
	struct optireduce_status *status;
	void *alg_state; /* the algorithm's own, freed by its cleanup */
	struct optireduce_comm *comm;
};

/*
 * Exact channel: reliable, tagged by (operation, step, segment).  Returns 0,
 * -OPTIREDUCE_EAGAIN (try again on a later progress call) or an error.
 */
int or_coll_send(struct or_coll *c, uint32_t peer, uint32_t step, uint32_t seg, const void *buf,
                 size_t len, or_xfer_t *x);
int or_coll_recv(struct or_coll *c, uint32_t peer, uint32_t step, uint32_t seg, void *buf,
                 size_t len, or_xfer_t *x);

/* Where chunk i of n begins, in elements: the first count % n chunks get one more. */
static inline size_t or_chunk_start(size_t count, uint32_t n, uint32_t i)
{
	size_t q = count / n, r = count % n;
	return (size_t)i * q + (i < r ? i : r);
}

static inline size_t or_chunk_len(size_t count, uint32_t n, uint32_t i)
{
	return or_chunk_start(count, n, i + 1) - or_chunk_start(count, n, i);
}

#endif /* OR_COLL_H */
