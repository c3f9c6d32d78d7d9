/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peers that died, in bounded mode (docs/design.md, "Peers that die").  An operation ends at
 * its deadlines whatever a peer does, so a dead peer would be estimated for ever.  A peer
 * is judged dead once this rank has spent peer_timeout_ms inside operations that expect
 * data from it without one datagram from it, of any operation.  Only time inside such
 * operations counts: a rank that computes for minutes between two operations hears from
 * nobody meanwhile, and a peer that sends this rank nothing in an operation (the ring's
 * other ranks) says nothing by its silence.
 */
#ifndef OR_LIVENESS_H
#define OR_LIVENESS_H

#include <stdint.h>

struct or_liveness {
	double *silent_us;  /* per peer: silence inside operations before since_us */
	double *since_us;   /* per peer: while expected, when the current silence began */
	uint32_t *expected; /* per peer: running operations that expect data from it */
	uint64_t *stamp;    /* per peer: the operation that last counted it (or_liveness_mark) */
	uint32_t npeers;
};

int or_liveness_init(struct or_liveness *l, uint32_t npeers);
void or_liveness_fini(struct or_liveness *l);
/*
 * Once per operation and peer: 1 the first time op (any number unique among running
 * operations, e.g. the operation's sequence number) names peer since another operation did,
 * 0 after; so an operation that expects a peer in many phases counts it once.
 */
int or_liveness_mark(struct or_liveness *l, uint32_t peer, uint64_t op);
/* An operation that expects data from peer started (at now_us), or ended. */
void or_liveness_expect(struct or_liveness *l, uint32_t peer, double now_us);
void or_liveness_release(struct or_liveness *l, uint32_t peer, double now_us);
/* A datagram came from peer. */
void or_liveness_heard(struct or_liveness *l, uint32_t peer, double now_us);
/* The time peer has been silent inside operations that expect it, us. */
double or_liveness_silence(const struct or_liveness *l, uint32_t peer, double now_us);
/* The first peer silent for more than timeout_us inside operations, or -1. */
int or_liveness_dead(const struct or_liveness *l, double now_us, double timeout_us);

#endif /* OR_LIVENESS_H */
