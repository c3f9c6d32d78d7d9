/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an algorithm sees of an operation, and the channel services the core
 * offers it.  No libfabric type and no clock appears here.
 */
#ifndef OR_COLL_H
#define OR_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "optireduce.h"

/*
 * One transfer on the exact channel.  Its contents belong to the transport: an algorithm
 * keeps it (by value, in its own state) and reads it only through or_xfer_done and
 * or_xfer_error.
 */
#define OR_XFER_WORDS 17 /* struct chan_xfer (coll_chan.c), checked there */
typedef struct or_xfer {
	void *opaque[OR_XFER_WORDS];
} or_xfer_t;

struct or_bounded_op; /* bounded-channel state of one operation (lib/bounded/bounded.h) */

struct or_coll {
	uint32_t rank;
	uint32_t size;
	/*
	 * Holds this rank's contribution when the algorithm starts, the result when it ends.
	 * On the bounded channel rbuf, count and dtype describe the encoded contribution the
	 * core prepared (lib/op/codec.h): whole Hadamard blocks of float32 or float64.
	 */
	void *rbuf;
	size_t count;
	enum optireduce_dtype dtype;
	/*
	 * Reduce-scatter (only algorithms that implement it get it: transpose): the algorithm
	 * stops after its reduce-scatter half.  The contribution, count elements, is read from
	 * src and not changed; rbuf receives this rank's block, elements
	 * [or_chunk_start(count / block, size, rank) * block, ...) of the sum, where block is
	 * the channel's unit (1 on the exact channel, or_bop_block_elems on the bounded one).
	 */
	int scatter;
	const void *src;
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
 * The exact channel's tags keep the low 24 bits of the operation number, and the core
 * starts an operation only within this many numbers of the oldest one still running on
 * its rank.  A peer is at most that far ahead again (it finishes nothing this rank has not
 * started), so every operation alive on either side is within twice this of the oldest:
 * below 2^24, no two share a tag (lib/op/coll_chan.c).
 */
#define OR_TAG_SEQ_SPAN (1u << 22)

/*
 * Exact channel: reliable, tagged by (operation, step, segment).  Returns 0,
 * -OPTIREDUCE_EAGAIN (try again on a later progress call) or an error.
 */
int or_coll_send(struct or_coll *c, uint32_t peer, uint32_t step, uint32_t seg, const void *buf,
                 size_t len, or_xfer_t *x);
int or_coll_recv(struct or_coll *c, uint32_t peer, uint32_t step, uint32_t seg, void *buf,
                 size_t len, or_xfer_t *x);
/* 1 once the transfer completed (or_xfer_error then says how), 0 while it is in flight. */
int or_xfer_done(const or_xfer_t *x);
int or_xfer_error(const or_xfer_t *x);
/* A transfer that moves nothing, and so is never posted: done, without error. */
void or_xfer_skip(or_xfer_t *x);

/*
 * Bounded channel, phase by phase.  Declare every receive region and send of a phase
 * (once the phase closes, what did not arrive in a region reads as zero), call or_bop_regions_ready
 * once all phases are declared, begin a phase, and call or_bop_phase_try_close until it returns 1:
 * then its data is final and the estimator helpers turn what arrived into unbiased sums.  Regions
 * hold whole blocks of c->dtype (float32 or float64, Hadamard-rotated).
 */
/*
 * Optional, before any region: the algorithm runs nphases phases (at most 2(N-1), the
 * ring's, and at least 1), each with at most peers senders and peers receivers (0: any
 * rank), so a phase costs O(peers) memory instead of O(N).  Phases [0, split) report in
 * status slot 0, the others in slot 1.  Without it an operation has 2 phases of any peers,
 * phase p reporting in slot p.
 */
int or_bop_set_phases(struct or_coll *c, unsigned nphases, uint32_t peers, unsigned split);
int or_bop_recv_region(struct or_coll *c, unsigned phase, uint32_t sender, void *region,
                       size_t bytes);
int or_bop_send_region(struct or_coll *c, unsigned phase, uint32_t peer, const void *buf,
                       size_t bytes, uint16_t contrib);
void or_bop_regions_ready(struct or_coll *c);
/*
 * The algorithm promises to leave every phase's send regions unchanged until its last phase
 * closes, so that a phase already closed here can still be resent to a peer that asks
 * (docs/design.md, "Repair inside the deadline").  Without it only open phases are resent.
 */
void or_bop_keep_sends(struct or_coll *c);
int or_bop_phase_begin(struct or_coll *c, unsigned phase);
/* Closes the phase if it may close now: 1 closed (now or before), 0 still open,
 * -OPTIREDUCE_EINVAL for a phase that was not declared. */
int or_bop_phase_try_close(struct or_coll *c, unsigned phase);
size_t or_bop_block_elems(const struct or_coll *c);
/*
 * Uninitialised memory of at least bytes that the communicator keeps for the next
 * operation, so the algorithm's buffers are not allocated and faulted in anew each time;
 * valid until the operation ends.  NULL when out of memory or slot is out of range.
 */
#define OR_BOP_SCRATCH_SLOTS 2
/* An algorithm may point c->rbuf at such a buffer holding the whole result instead of
 * copying the result back: the core decodes whatever c->rbuf holds when it finishes. */
void *or_bop_scratch(struct or_coll *c, unsigned slot, size_t bytes);
/*
 * dst += sender's region, each block rescaled by what arrived; present[b] (may be NULL) is
 * incremented for each block that brought something.  Returns blocks that brought nothing.
 */
int or_bop_accumulate(struct or_coll *c, unsigned phase, uint32_t sender, void *dst, size_t elems,
                      uint32_t *present);
/* Rescale sender's final-phase region in place; empty blocks fall back to own * N. */
int or_bop_finalize_region(struct or_coll *c, unsigned phase, uint32_t sender, const void *own,
                           size_t elems);
/* The same, where own estimates the sum of own_contrib contributions: * N / own_contrib. */
int or_bop_finalize_region_from(struct or_coll *c, unsigned phase, uint32_t sender, const void *own,
                                uint32_t own_contrib, size_t elems);

/*
 * Replica-consistent results (parameter consistent; docs/design.md, "Replica-consistent
 * results"), for an algorithm whose final phase sends each owner's region to every rank.
 * or_bop_consistent says whether the operation runs them.  Once the final phase closed,
 * or_bop_consist_close sends this rank's loss bitmap to every peer; or_bop_consist_ready
 * returns 0 until every peer's bitmap is here (asking again meanwhile), then 1; then
 * or_bop_consist_apply, for every owner's region of the final phase (this rank's own
 * included), zeroes what any rank lost and rescales each block by what is left: the same
 * on every rank.  It returns the blocks left with nothing (zero), or a negative code.
 */
int or_bop_consistent(const struct or_coll *c);
int or_bop_consist_close(struct or_coll *c, unsigned phase);
int or_bop_consist_ready(struct or_coll *c);
int or_bop_consist_apply(struct or_coll *c, uint32_t owner, void *shard, size_t elems);

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
