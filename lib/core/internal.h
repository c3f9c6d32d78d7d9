/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal structures of the core.  Not installed. */
#ifndef OR_INTERNAL_H
#define OR_INTERNAL_H

#include <stdint.h>

#include "optireduce.h"
#include "lib/bounded/bounded.h"
#include "lib/op/codec.h"
#include "lib/hier/hier.h"
#include "lib/op/coll.h"
#include "log.h"
#include "lib/select/measure.h"
#include "params.h"
#include "lib/topo/placement.h"
#include "lib/op/op.h"
#include "ofi/ofi.h"

#define OR_MAGIC_CTX  0x6f724358u /* "orCX" */
#define OR_MAGIC_COMM 0x6f72434du /* "orCM" */
#define OR_MAGIC_REQ  0x6f725251u /* "orRQ" */
#define OR_MAGIC_DEAD 0xdeadbeefu

struct optireduce_ctx {
	uint32_t magic;
	int ncomms;
	int topology_logged; /* once per context, at its first communicator */
	struct or_params params;
	struct or_topo *topo; /* hwloc's, loaded by the first communicator with endpoints */
};

struct optireduce_comm {
	uint32_t magic;
	optireduce_ctx_t *ctx;
	uint32_t rank;
	uint32_t size;
	uint32_t id;
	enum optireduce_mode mode;
	int failed; /* after an error the transport state is unknown: refuse new work */
	struct or_params params;
	struct or_ofi *rdm;
	struct or_bounded *bounded;
	struct or_hier *hier; /* ranks share a host: lib/hier/layout.c serves the operations */
	/* Where its endpoints and progress thread go, decided when they are opened. */
	struct or_placement place;
	int placed;
	uint64_t next_seq;
	struct or_codec_cache codec_cache;
	/* Operations in start order: the first `running` have started (up to max_inflight,
	 * finishing in any order), the rest wait their turn (docs/design.md, "Operations in
	 * flight"). */
	optireduce_req_t *head;
	optireduce_req_t *tail;
	unsigned running;
	struct or_measure *measure; /* measure_exact's trials and choices (measure.c) */
	struct or_wake *wake;       /* optireduce_comm_wake's flag and descriptor (wake.c) */
	/* Which algorithm an operation runs, and where a measured one's time goes: lib/select/'s,
	 * set when the communicator is allocated, so that the engine (lib/op/) does not call up
	 * into the layer that measures through it. */
	or_op_choose_fn *choose;
	or_op_record_fn *record;
};

enum or_req_state { OR_REQ_QUEUED, OR_REQ_RUNNING, OR_REQ_DONE };

struct optireduce_req {
	uint32_t magic;
	enum or_req_state state;
	int error;
	/* The operation as the application gave it; coll is the algorithm's view of it. */
	const void *sbuf;
	void *rbuf;
	size_t count; /* reduce-scatter: the whole contribution, size * recvcount */
	enum optireduce_dtype dtype;
	/* Reduce-scatter: recvcount elements land in rbuf (in place: at its start); on a
	 * communicator with hier, the whole sum goes through work first. */
	int scatter;
	size_t recvcount;
	void *work;
	const struct or_alg *alg;
	struct or_trial trial; /* a trial of measure_exact: its time is recorded */
	double t_start_us;
	double t_last_progress_us;
	struct optireduce_status status;
	struct or_coll coll;
	struct or_codec codec;         /* bounded: the encoded form the algorithm works on */
	struct or_bounded_times times; /* bounded: when it was encoded and decoded */
	struct or_hier_op *hop;        /* an operation of a communicator with hier */
	/* An operation run as pieces (lib/op/pieces.c): the engine's requests it waits for, in
	 * order.  A piece starts only once gate, the piece two before it, is done. */
	optireduce_req_t **piece;
	size_t npieces;
	const optireduce_req_t *gate;
	optireduce_req_t *next;
	optireduce_req_t *prev;
};

/* How long a failed communicator waits for libfabric to give back its posted transfers. */
#define OR_QUIESCE_MS 200

double or_now_us(void);
/* CPU time this thread has run, us: against or_now_us it tells work from waiting for a CPU. */
double or_thread_cpu_us(void);
void or_inject_delay(optireduce_comm_t *comm, uint64_t seq);

/* Queues an operation through the request engine (lib/op/op.h) or, on a communicator whose
 * ranks share hosts, through lib/hier/ (lib/core/api.c): or_op_post's arguments. */
int or_api_post(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                enum optireduce_dtype dtype, enum optireduce_op op, unsigned flags,
                optireduce_req_t **req);
/* trial: where a measured choice records this operation (measure.h); NULL: never measured. */
const struct or_alg *or_select_algorithm(optireduce_comm_t *comm, size_t bytes, int bounded,
                                         struct or_trial *trial);
/* Communicator building blocks, shared with lib/hier/layout.c (lib/core/comm_build.c). */
optireduce_comm_t *or_comm_alloc(optireduce_ctx_t *ctx, uint32_t rank, uint32_t size);
int or_comm_open_channels(optireduce_comm_t *c, int same_host);
/*
 * Collective over oob: every rank's endpoint names (net NULL: this rank has none) and
 * outcome (status); on success net's address vectors hold members[i]'s names as rank i
 * (members NULL: rank i's).  Any rank's error is every rank's.
 */
int or_comm_exchange_names(optireduce_comm_t *net, const struct optireduce_oob *oob,
                           const uint32_t *members, int status);
void or_comm_free(optireduce_comm_t *c);
/*
 * One "lo-hi:names" entry of a tune string, len bytes: [lo, hi) and the text after the
 * colon (names_len bytes at most, with its NUL), or -OPTIREDUCE_EINVAL (lib/select/tune.c).
 */
int or_tune_entry(const char *e, size_t len, uint64_t *lo, uint64_t *hi, char *names,
                  size_t names_len);
/*
 * A datagram endpoint as a bounded communicator of ctx would open one (multicast: one that
 * joins groups), for the checks optireduce_info runs (lib/core/transport_info.c): 0 with *d
 * open and why it is this transport in why; 1 with why none opened in buf; or < 0.
 */
struct or_dgram;
int or_ctx_open_dgram(optireduce_ctx_t *ctx, int multicast, struct or_dgram **d, char *why,
                      size_t why_len, char *buf, size_t len);
/* The algorithm parameter names known algorithms (or_param_check): 0 or -EINVAL. */
int or_select_check_param(enum or_param_id id, const char *value);

/*
 * Handles given out and not yet freed (lib/core/handles.c): a handle is looked up before its
 * memory is read, so a freed one is -OPTIREDUCE_EBADHANDLE, not a read after free.
 */
int or_handle_add(const void *h);
void or_handle_remove(const void *h);
int or_handle_live(const void *h);

static inline int or_comm_valid(const optireduce_comm_t *c)
{
	return or_handle_live(c) && c->magic == OR_MAGIC_COMM;
}

static inline int or_ctx_valid(const optireduce_ctx_t *c)
{
	return or_handle_live(c) && c->magic == OR_MAGIC_CTX;
}

static inline int or_req_valid(const optireduce_req_t *r)
{
	return or_handle_live(r) && r->magic == OR_MAGIC_REQ;
}

#endif /* OR_INTERNAL_H */
