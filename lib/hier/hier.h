/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ranks that share a host (docs/design.md, "Ranks that share a host"): the local ranks
 * reduce through a shared segment, one leader per host runs the network algorithm on a
 * communicator of leaders, and the result is shared back through the segment.
 */
#ifndef OR_HIER_H
#define OR_HIER_H

#include <stdint.h>

#include "optireduce.h"
#include "shm.h"

struct or_hier {
	optireduce_comm_t *comm; /* the application's communicator */
	uint32_t nhosts, host;   /* hosts ordered by their lowest rank; this rank's host */
	uint32_t nlocal, local;  /* ranks on this host; this rank's index among them */
	uint32_t *leaders;       /* nhosts: each host's lowest rank, its leader */
	uint32_t *local_ranks;   /* nlocal: the ranks on this host, ascending */
	uint32_t *host_ranks;    /* nhosts: how many ranks each host has */
	struct or_shm shm;
	optireduce_comm_t *net; /* the leaders' communicator: leaders, when nhosts > 1 */
	uint64_t next_chunk;    /* chunks this rank has started; the first is 1 */
	optireduce_req_t *head, *tail;
};

/* Some host holds more than one of these n ranks. */
int or_hier_wanted(const uint64_t *hosts, uint32_t n);
/*
 * Collective over oob: the layout, the segment, and on leaders the leaders' communicator.
 * one_machine: every rank runs on this machine and network namespace (hosts told apart
 * by host_id), so the leaders reach each other over loopback.
 */
int or_hier_create(optireduce_comm_t *c, const struct optireduce_oob *oob, const uint64_t *hosts,
                   const uint32_t *pids, int one_machine);
void or_hier_destroy(struct or_hier *h);
optireduce_comm_t *or_hier_net(const struct or_hier *h);
uint32_t or_hier_net_hosts(const struct or_hier *h);
int or_hier_busy(const struct or_hier *h);
void or_hier_log(const struct or_hier *h, uint32_t id);
int or_hier_describe(const struct or_hier *h, char *buf, size_t len);

/*
 * The API entry points of a communicator with c->hier (lib/hier/hier_op.c).  A reduce-scatter
 * (scatter set; count is the whole contribution) runs as an allreduce into a buffer of its
 * own, and this rank's block is copied out at the end.
 */
int or_hier_iallreduce(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                       enum optireduce_dtype dtype, enum optireduce_op op, int scatter,
                       optireduce_req_t **req);
int or_hier_test(optireduce_req_t *req);
int or_hier_wait(optireduce_req_t *req, struct optireduce_status *status);
/* optireduce_comm_progress on such a communicator: one pass over its queue (*activity: did
 * anything move), and the wait of a pass that moved nothing idle_us after the last one
 * that did (yield, then up to 1 ms on the leaders' network or 50 us). */
void or_hier_progress(struct or_hier *h, int *activity);
void or_hier_idle_wait(struct or_hier *h, double idle_us);

#endif /* OR_HIER_H */
