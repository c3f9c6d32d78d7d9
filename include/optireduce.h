/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * liboptireduce: an MPI_Allreduce-like collective that stays fast in shared
 * clouds (OptiReduce, NSDI 2025), over libfabric.
 *
 * Conventions follow libfabric and UCC: opaque handles, int returns where 0
 * is success, OPTIREDUCE_INPROGRESS (1) means "not yet", and errors are
 * negative: -OPTIREDUCE_EINVAL and so on.  Codes below 256 equal errno.
 *
 * A context and everything created from it are used by one thread at a time.
 */
#ifndef OPTIREDUCE_H
#define OPTIREDUCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; everything declared here is its ABI. */
#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

#define OPTIREDUCE_MAJOR_VERSION         0
#define OPTIREDUCE_MINOR_VERSION         1
#define OPTIREDUCE_VERSION(major, minor) (((uint32_t)(major) << 16) | (uint32_t)(minor))
#define OPTIREDUCE_API_VERSION                                                                     \
	OPTIREDUCE_VERSION(OPTIREDUCE_MAJOR_VERSION, OPTIREDUCE_MINOR_VERSION)
#define OPTIREDUCE_VERSION_MAJOR(v) ((v) >> 16)
#define OPTIREDUCE_VERSION_MINOR(v) ((v)&0xffff)

/* Positive "not finished yet" return of optireduce_test(). */
#define OPTIREDUCE_INPROGRESS 1

/*
 * The one table of error codes: X(NAME, value, message).  Values below 256
 * are the errno values of the same name, so strerror-style tooling and
 * libfabric habits carry over.
 */
#define OPTIREDUCE_ERRNO_MAP(X)                                                                    \
	X(SUCCESS, 0, "Success")                                                                   \
	X(EIO, 5, "Input/output error")                                                            \
	X(EAGAIN, 11, "Resource temporarily unavailable")                                          \
	X(ENOMEM, 12, "Cannot allocate memory")                                                    \
	X(EBUSY, 16, "Device or resource busy")                                                    \
	X(ENODEV, 19, "No such device")                                                            \
	X(EINVAL, 22, "Invalid argument")                                                          \
	X(ENOSYS, 38, "Function not implemented")                                                  \
	X(EOVERFLOW, 75, "Value too large for defined data type")                                  \
	X(EMSGSIZE, 90, "Message too long")                                                        \
	X(ENOTSUP, 95, "Operation not supported")                                                  \
	X(ETIMEDOUT, 110, "Operation timed out")                                                   \
	X(ECANCELED, 125, "Operation canceled")                                                    \
	X(EPEER, 256, "A peer failed or stopped responding")                                       \
	X(ENOPROVIDER, 257, "No suitable libfabric provider")                                      \
	X(EOOB, 258, "Out-of-band allgather failed")                                               \
	X(EVERSION, 259, "API version not supported")                                              \
	X(EDTYPE, 260, "Unknown datatype")                                                         \
	X(EOP, 261, "Unknown or unsupported reduction operation")                                  \
	X(ENOPARAM, 262, "Unknown parameter")                                                      \
	X(EBADHANDLE, 263, "Handle not created by this library or already freed")                  \
	X(EFABRIC, 264, "libfabric call failed")                                                   \
	X(EMISMATCH, 265, "Ranks disagree on operation arguments")

enum optireduce_errno {
#define OPTIREDUCE_ERRNO_ENUM(name, value, msg) OPTIREDUCE_##name = value,
	OPTIREDUCE_ERRNO_MAP(OPTIREDUCE_ERRNO_ENUM)
#undef OPTIREDUCE_ERRNO_ENUM
};

/* Message for a code; accepts either sign.  Never NULL. */
const char *optireduce_strerror(int err);

enum optireduce_dtype {
	OPTIREDUCE_INT8,
	OPTIREDUCE_UINT8,
	OPTIREDUCE_INT32,
	OPTIREDUCE_UINT32,
	OPTIREDUCE_INT64,
	OPTIREDUCE_UINT64,
	OPTIREDUCE_FLOAT16,
	OPTIREDUCE_BFLOAT16,
	OPTIREDUCE_FLOAT32,
	OPTIREDUCE_FLOAT64,
	OPTIREDUCE_DTYPE_COUNT
};

enum optireduce_op {
	OPTIREDUCE_SUM,
	OPTIREDUCE_PROD,
	OPTIREDUCE_MIN,
	OPTIREDUCE_MAX,
	OPTIREDUCE_AVG,
	OPTIREDUCE_OP_COUNT
};

enum optireduce_mode {
	OPTIREDUCE_MODE_DEFAULT = 0, /* OPTIREDUCE_MODE, else exact */
	OPTIREDUCE_MODE_EXACT,
	OPTIREDUCE_MODE_BOUNDED,
};

/* Like MPI_IN_PLACE: pass as sbuf to reduce rbuf in place. */
#define OPTIREDUCE_IN_PLACE ((const void *)1)

/* Size in bytes of one element; 0 for an unknown dtype. */
size_t optireduce_dtype_size(enum optireduce_dtype dtype);
const char *optireduce_dtype_name(enum optireduce_dtype dtype);
const char *optireduce_op_name(enum optireduce_op op);

/* Why a phase of a bounded operation ended. */
enum optireduce_phase_end {
	OPTIREDUCE_PHASE_NONE = 0,      /* phase did not run */
	OPTIREDUCE_PHASE_ALL_DATA,      /* everything expected arrived */
	OPTIREDUCE_PHASE_EARLY_TIMEOUT, /* last packets seen, then quiet */
	OPTIREDUCE_PHASE_HARD_BOUND,    /* the deadline fired */
};

#define OPTIREDUCE_STATUS_PHASES 2

/* Set in optireduce_status.flags. */
#define OPTIREDUCE_STATUS_BOUNDED        0x1u /* ran on the bounded channel */
#define OPTIREDUCE_STATUS_FELL_BACK      0x2u /* asked bounded, ran exact (dtype/op) */
#define OPTIREDUCE_STATUS_DEADLINE_FIRED 0x4u
#define OPTIREDUCE_STATUS_INCOMPLETE     0x8u  /* some data was estimated */
#define OPTIREDUCE_STATUS_CONSISTENT     0x10u /* ranks agreed (parameter consistent) */

/*
 * What one operation did.  In exact mode the loss fields are zero.  Phase
 * counters are in elements as this rank saw them.
 */
struct optireduce_status {
	int error;         /* 0 or a negative code */
	uint32_t flags;    /* OPTIREDUCE_STATUS_* */
	int mode;          /* enum optireduce_mode actually used */
	int algorithm;     /* id in the algorithm table */
	double elapsed_us; /* from start to completion on this rank */
	uint64_t elements_expected[OPTIREDUCE_STATUS_PHASES];
	uint64_t elements_received[OPTIREDUCE_STATUS_PHASES];
	/* Block contributions this rank reduced, and those that brought no element at all (the
	 * block estimated from the others alone).  A block that lost only some packets is
	 * rescaled and not counted: the share of data lost is elements_expected minus
	 * elements_received, over elements_expected. */
	uint64_t contributions_expected;
	uint64_t contributions_missing;
	uint64_t blocks_fallback; /* final-phase blocks filled from own data */
	uint64_t packets_sent;
	uint64_t packets_received;
	uint64_t packets_invalid;   /* malformed or forged, dropped */
	uint64_t packets_stale;     /* for a finished operation, dropped */
	uint64_t packets_duplicate; /* already seen, dropped */
	uint64_t packets_parked;    /* arrived early, kept for a later operation */
	uint64_t deadline_us[OPTIREDUCE_STATUS_PHASES];
	int phase_end[OPTIREDUCE_STATUS_PHASES]; /* enum optireduce_phase_end */
	/* Operations of the communicator running on this rank when this one started, itself
	 * included: 1 when it ran alone (at most the max_inflight parameter); 0 when it never
	 * started (queued behind an operation that failed). */
	uint32_t ops_in_flight;
	/* Repair (parameter repair): datagrams this rank asked its senders for again, datagrams
	 * it sent again on its peers' requests, and asked-for datagrams that arrived in time. */
	uint64_t repair_requested;
	uint64_t repair_resent;
	uint64_t repair_recovered;
	/* Bounded mode; appended so the fields above keep their offsets. */
	uint64_t packets_send_failed; /* the host refused or could not send: lost, not in
	                                 packets_sent */
	uint64_t packets_recv_failed; /* receive completions with an error status: reposted */
	uint64_t packets_stranger;    /* from outside the communicator, or for another one:
	                                 dropped */
	/* Datagrams of phases that send one region to every peer (Transpose's second): sent once
	 * to the communicator's multicast group, and sent to each peer (parameter multicast). */
	uint64_t bcast_multicast;
	uint64_t bcast_unicast;
	/* Parameter consistent: the agreement after the final phase (docs/design.md,
	 * "Replica-consistent results"): from the phase's close to every peer's bitmap, bytes of
	 * bitmaps and requests this rank sent, final-phase packets every rank replaced (lost by
	 * some rank), of them those this rank had received, blocks that lost everything and were
	 * set to zero (none, unless fetching failed), and requests for bitmaps that did not come
	 * and for packets to fetch. */
	double consistent_us;
	uint64_t consistent_bytes;
	uint64_t consistent_packets_replaced;
	uint64_t consistent_packets_discarded;
	uint64_t consistent_blocks_zeroed;
	uint64_t consistent_asks;
	/* Final-phase packets this rank fetched from their owners: blocks that every rank
	 * would otherwise have had nothing of. */
	uint64_t consistent_packets_fetched;
	/* Datagrams the kernel dropped because this rank's receive socket was full
	 * (SO_RXQ_OVFL), since the communicator was made; 0 where the transport cannot tell
	 * (libfabric). */
	uint64_t packets_kernel_dropped;
};

typedef struct optireduce_ctx optireduce_ctx_t;
typedef struct optireduce_comm optireduce_comm_t;
typedef struct optireduce_req optireduce_req_t;

/*
 * Out-of-band allgather used once at communicator creation, like UCC's
 * ucc_oob_coll_t: every rank contributes len bytes from sbuf and receives
 * size*len bytes in rbuf, ordered by rank.  Returns 0 or a negative code.
 */
struct optireduce_oob {
	int (*allgather)(const void *sbuf, void *rbuf, size_t len, void *coll_info);
	void *coll_info;
	uint32_t rank;
	uint32_t size;
};

struct optireduce_comm_attr {
	struct optireduce_oob oob;
	enum optireduce_mode mode;
};

/* Parameter value came from ... */
enum optireduce_param_source {
	OPTIREDUCE_PARAM_DEFAULT,
	OPTIREDUCE_PARAM_ENV,
	OPTIREDUCE_PARAM_API,
};

/* Version of the library actually loaded. */
uint32_t optireduce_version(void);
const char *optireduce_version_string(void);

int optireduce_init(uint32_t api_version, optireduce_ctx_t **ctx);
/* Fails with -OPTIREDUCE_EBUSY while communicators remain. */
int optireduce_finalize(optireduce_ctx_t *ctx);

/*
 * Parameters by name (see optireduce_info(1)): API beats environment
 * (OPTIREDUCE_<NAME>) beats default.  Set on a context, a value is the
 * default of communicators created afterwards; set on a communicator, it
 * applies to its next operation.  Some (provider, mode) can only be set
 * before the communicator exists.
 */
int optireduce_ctx_set_param(optireduce_ctx_t *ctx, const char *name, const char *value);
int optireduce_comm_set_param(optireduce_comm_t *comm, const char *name, const char *value);
int optireduce_comm_get_param(optireduce_comm_t *comm, const char *name, char *value, size_t len,
                              enum optireduce_param_source *source);

/* Collective over attr->oob: every rank calls it. */
int optireduce_comm_create(optireduce_ctx_t *ctx, const struct optireduce_comm_attr *attr,
                           optireduce_comm_t **comm);
int optireduce_comm_destroy(optireduce_comm_t *comm);
int optireduce_comm_rank(const optireduce_comm_t *comm);
int optireduce_comm_size(const optireduce_comm_t *comm);
/* Name of the libfabric provider a channel uses ("exact" or "bounded"); NULL for a bounded
 * channel the communicator does not have (exact mode, or every rank on one host). */
const char *optireduce_comm_provider(const optireduce_comm_t *comm, enum optireduce_mode mode);
/*
 * The host layout the communicator found, as one line: "hosts 2, ranks per host 2,2,
 * leaders 0,1, this rank: host 0, local 1 of 2, shared memory /optireduce-..." when ranks
 * share hosts, "hosts N, one rank per host" otherwise.  -OPTIREDUCE_EOVERFLOW: truncated.
 */
int optireduce_comm_layout(const optireduce_comm_t *comm, char *buf, size_t len);
/*
 * Where this rank's endpoints and bounded progress thread went, and why, as one line:
 * "nic eth1: nearest to cpuset 4-7 (NUMA node 1); progress thread on PU 7: last core of
 * cpuset 4-7" (parameters iface and progress_bind; hwloc).  A rank whose host leader
 * carries its data says so.  -OPTIREDUCE_EOVERFLOW: truncated.
 */
int optireduce_comm_placement(const optireduce_comm_t *comm, char *buf, size_t len);
/*
 * Whether this rank's bounded channel sends to a multicast group (parameter multicast), and
 * where or why not, as one line: "group 239.193.4.17:50123, TTL 1", "rank 2 heard 1 of the
 * other 3 ranks on the group".  1 when it does, 0 when not (also for an exact communicator
 * or a rank whose host leader carries its data), < 0 on error; -OPTIREDUCE_EOVERFLOW:
 * truncated.
 */
int optireduce_comm_multicast(const optireduce_comm_t *comm, char *buf, size_t len);

/* Blocking allreduce.  status may be NULL. */
int optireduce_allreduce(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                         enum optireduce_dtype dtype, enum optireduce_op op,
                         struct optireduce_status *status);

/*
 * Nonblocking allreduce.  Every rank must start the operations of one
 * communicator in the same order.  Up to max_inflight of them progress at
 * once (later ones start as earlier ones finish) and they may complete in
 * any order: test or wait on each request, in any order.  A failure fails
 * every operation of the communicator that has not completed.
 */
int optireduce_iallreduce(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                          enum optireduce_dtype dtype, enum optireduce_op op,
                          optireduce_req_t **req);
/*
 * Reduce-scatter with equal blocks, like MPI_Reduce_scatter_block: sbuf holds size *
 * recvcount elements on every rank, and rank i receives in rbuf (recvcount elements)
 * block i of their reduction, elements [i * recvcount, (i + 1) * recvcount).  With
 * OPTIREDUCE_IN_PLACE (or sbuf == rbuf) as sbuf, rbuf holds the size * recvcount elements
 * of the contribution and receives the block at its start; the rest of rbuf is left
 * unspecified.  It runs on the exact channel (transpose's first phase: each rank sends
 * (size - 1) * recvcount elements and receives as many); a bounded communicator runs it
 * there too (status flag OPTIREDUCE_STATUS_FELL_BACK).  On a communicator whose ranks
 * share hosts it is an allreduce of which each rank keeps its block.  Operations of one
 * communicator, allreduce and reduce-scatter alike, are started in the same order on
 * every rank.
 */
int optireduce_reduce_scatter_block(optireduce_comm_t *comm, const void *sbuf, void *rbuf,
                                    size_t recvcount, enum optireduce_dtype dtype,
                                    enum optireduce_op op, struct optireduce_status *status);
int optireduce_ireduce_scatter_block(optireduce_comm_t *comm, const void *sbuf, void *rbuf,
                                     size_t recvcount, enum optireduce_dtype dtype,
                                     enum optireduce_op op, optireduce_req_t **req);

/* 0 when done (then call optireduce_wait to collect and free), 1 if not. */
int optireduce_test(optireduce_req_t *req);
/* Block until done, fill status (may be NULL), free req. */
int optireduce_wait(optireduce_req_t *req, struct optireduce_status *status);
/*
 * Progress every operation of comm (starting queued ones as running ones finish) until
 * at least one completes or about timeout_ms milliseconds pass (0: one pass, no waiting;
 * else up to 1 ms more); while nothing moves it sleeps in the kernel, not spinning.
 * Returns how many operations completed during the call (find them with optireduce_test,
 * collect them with optireduce_wait; a failed one completed too, its code in its wait),
 * 0 at once when none is pending, or -OPTIREDUCE_EBADHANDLE, or -OPTIREDUCE_EINVAL for a
 * negative timeout_ms.
 */
int optireduce_comm_progress(optireduce_comm_t *comm, int timeout_ms);
/*
 * From any thread, while comm exists: makes the optireduce_comm_progress call now waiting
 * on comm, or else the next one, return after at most one progress pass, so that the
 * thread calling it can start work handed over meanwhile.  0, or -OPTIREDUCE_EBADHANDLE.
 * Not while another thread destroys comm.
 */
int optireduce_comm_wake(optireduce_comm_t *comm);

/* Algorithm table, for tools: id 0..n-1; returns NULL past the end. */
const char *optireduce_algorithm_name(int id);
const char *optireduce_algorithm_desc(int id);
/*
 * For tools and logs: the algorithm selection rule in force on comm for a mode, as tune
 * strings in the order they are tried and where each comes from, e.g.
 * "0-16385:recursive_doubling,16385-inf:ring (built-in)".  0, -OPTIREDUCE_EOVERFLOW when
 * buf is too small.
 */
int optireduce_comm_algorithm_rule(const optireduce_comm_t *comm, enum optireduce_mode mode,
                                   char *buf, size_t len);

/* Parameter table, for tools: index 0..n-1; returns -OPTIREDUCE_ENOPARAM past the end. */
struct optireduce_param_info {
	const char *name; /* lower case; env is OPTIREDUCE_<NAME> */
	const char *type; /* "int", "size", "bool", "double", "string", "enum" */
	const char *defval;
	const char *desc;
};
int optireduce_param_info(int index, struct optireduce_param_info *info);

/* For tools: every libfabric provider usable for a mode's channel. */
typedef void (*optireduce_provider_cb)(const char *prov, const char *fabric, const char *domain,
                                       size_t max_msg_size, void *arg);
int optireduce_providers(enum optireduce_mode mode, optireduce_provider_cb cb, void *arg);
const char *optireduce_libfabric_version(void);

/*
 * For tools and logs: where the calling thread runs (CPU binding, cores, NUMA
 * nodes, network devices near and far), one line from hwloc.  0, or
 * -OPTIREDUCE_EOVERFLOW when truncated, -OPTIREDUCE_ENOSYS when built
 * without hwloc; buf always holds a terminated string when len > 0.
 */
int optireduce_topology(char *buf, size_t len);
/*
 * For tools: whether this host can join a multicast group of ctx's multicast_range with its
 * bounded_provider (docs/design.md, "Multicast"), which a bounded communicator's ranks each
 * need before they probe whether they hear each other; one line into buf, e.g. "udp joined
 * 239.192.3.7:51234 on this host" or "join: No such device" (no route for the range).  1
 * when it can, 0 when not, < 0 on error (-OPTIREDUCE_EOVERFLOW: truncated).
 */
int optireduce_multicast_check(optireduce_ctx_t *ctx, char *buf, size_t len);
/*
 * For tools: the datagram transport a bounded communicator of ctx would use on this host
 * with its parameters (bounded_transport, bounded_provider, iface, udp_*), why, and what
 * it does, from an endpoint opened and closed for the purpose; one line into buf, e.g.
 * "kernel (a plain IP interface: the kernel's UDP): kernel UDP on eth0 (10.0.0.5), MTU
 * 9001: 8973-byte datagrams, segmentation offload on, ...".  1 when an endpoint opened, 0
 * when none could (buf says why), < 0 on error (-OPTIREDUCE_EOVERFLOW: truncated).
 */
int optireduce_transport_check(optireduce_ctx_t *ctx, char *buf, size_t len);

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* OPTIREDUCE_H */
