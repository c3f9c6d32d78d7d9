/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal interfaces between the files of the MPI interposer.  Not installed. */
#ifndef ORP_PMPI_INTERNAL_H
#define ORP_PMPI_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <mpi.h>

#include "optireduce.h"
#include "optireduce_pmpi.h"
#include "policy.h"

/* The library is built with hidden visibility; the MPI and Fortran entry points need this. */
#define ORP_EXPORT __attribute__((visibility("default")))

/*
 * core.c: liboptireduce, opened at the first call the interposer serves
 * rather than linked (see core.c for why).  Every call into the library goes
 * through this table, filled by orp_core_load().
 */
struct orp_core {
	int (*init)(uint32_t api_version, optireduce_ctx_t **ctx);
	int (*finalize)(optireduce_ctx_t *ctx);
	int (*comm_create)(optireduce_ctx_t *ctx, const struct optireduce_comm_attr *attr,
	                   optireduce_comm_t **comm);
	int (*comm_destroy)(optireduce_comm_t *comm);
	const char *(*comm_provider)(const optireduce_comm_t *comm, enum optireduce_mode mode);
	int (*allreduce)(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
	                 enum optireduce_dtype dtype, enum optireduce_op op,
	                 struct optireduce_status *status);
	int (*iallreduce)(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
	                  enum optireduce_dtype dtype, enum optireduce_op op,
	                  optireduce_req_t **req);
	int (*reduce_scatter_block)(optireduce_comm_t *comm, const void *sbuf, void *rbuf,
	                            size_t recvcount, enum optireduce_dtype dtype,
	                            enum optireduce_op op, struct optireduce_status *status);
	int (*ireduce_scatter_block)(optireduce_comm_t *comm, const void *sbuf, void *rbuf,
	                             size_t recvcount, enum optireduce_dtype dtype,
	                             enum optireduce_op op, optireduce_req_t **req);
	int (*test)(optireduce_req_t *req);
	int (*wait)(optireduce_req_t *req, struct optireduce_status *status);
	const char *(*strerror)(int err);
	size_t (*dtype_size)(enum optireduce_dtype dtype);
	const char *(*dtype_name)(enum optireduce_dtype dtype);
	const char *(*op_name)(enum optireduce_op op);
};
extern struct orp_core orp_core;
int orp_core_load(void);           /* 0 when the table is filled; tried once */
const char *orp_strerror(int err); /* also before the library is loaded */

/* config.c: the environment, read once at the first MPI_Allreduce or MPI_Iallreduce. */
struct orp_config {
	int enable;             /* OPTIREDUCE_PMPI_ENABLE, default 1 */
	int print_stats;        /* OPTIREDUCE_PMPI_STATS */
	int thread_multiple_ok; /* OPTIREDUCE_PMPI_THREAD_MULTIPLE */
	int bounded_all_comms;  /* OPTIREDUCE_PMPI_BOUNDED_COMMS=all */
	struct orp_policy policy;
	uint32_t digest; /* of policy and comms choice, compared across ranks */
};
extern struct orp_config orp_cfg;
void orp_config_load(void);

/* log.c */
enum { ORP_LOG_WARN = 1, ORP_LOG_INFO = 2, ORP_LOG_DEBUG = 3 };
extern int orp_log_level;
extern int orp_world_rank;
void orp_log_init(void);
void orp_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* stats.c; the kinds of calls the interposer takes (REDUCE_SCATTER is the _block one,
 * REDUCE_SCATTER_V MPI_Reduce_scatter with a count per rank, IREDUCE_SCATTER_V
 * MPI_Ireduce_scatter). */
enum orp_call {
	ORP_CALL_ALLREDUCE,
	ORP_CALL_IALLREDUCE,
	ORP_CALL_REDUCE_SCATTER,
	ORP_CALL_IREDUCE_SCATTER,
	ORP_CALL_REDUCE_SCATTER_V,
	ORP_CALL_IREDUCE_SCATTER_V
};
const char *orp_call_name(enum orp_call kind); /* "MPI_Allreduce", ... */
void orp_stats_call(enum orp_call kind);
void orp_stats_pmpi(enum optireduce_pmpi_reason reason);
void orp_stats_served(int bounded, int declined, size_t bytes, enum orp_call kind);
void orp_stats_error(void);
void orp_stats_comm(int created);
void orp_stats_print(void);

/* types.c: predefined MPI datatypes and operations liboptireduce serves exactly. */
void orp_types_init(void);
int orp_dtype_of(MPI_Datatype dt, enum optireduce_dtype *out); /* 0, or -1: not served */
int orp_op_of(MPI_Op op, enum optireduce_op *out);
int orp_dtype_is_float(enum optireduce_dtype dt);

/* setup.c: lazy start at the first call, shutdown at MPI_Finalize. */
int orp_active(void);          /* 1 when calls may be served; starts up on first use */
int orp_threads_blocked(void); /* MPI_THREAD_MULTIPLE without the opt-in */
void orp_note_thread_level(int provided);
void orp_shutdown(void);

/* comm_state.c: liboptireduce state cached on each MPI communicator. */
struct orp_comm {
	MPI_Comm comm;
	int reason;          /* -1: served; else the enum optireduce_pmpi_reason for all calls */
	int rank;            /* in comm */
	int bounded_allowed; /* the policy may apply to this communicator */
	int bounded_state;   /* 0: not tried, 1: ready, -1: unavailable */
	optireduce_ctx_t *ctx;
	optireduce_comm_t *exact;
	optireduce_comm_t *bounded;
	atomic_int busy;
	int warned_busy;
	/* Held around every liboptireduce call on ctx (a context is single-threaded);
	 * the MPI progress callback only tries it. */
	pthread_mutex_t lock;
	struct orp_iop *ihead, *itail; /* nonblocking operations not yet completed */
	char name[MPI_MAX_OBJECT_NAME];
	struct orp_comm *prev, *next;
};
int orp_comm_module_init(void);
/* The state of comm, created (collectively) on first use; NULL if that fails. */
struct orp_comm *orp_comm_get(MPI_Comm comm);
/* Creates the bounded channel on first use (collectively); 1 if usable. */
int orp_comm_bounded(struct orp_comm *st);
void orp_comm_destroy_all(void);
/* Completes the finished nonblocking operations of every communicator whose lock is free. */
int orp_comm_progress_all(void);

/* pmpi_iallreduce.c: MPI_Iallreduce, MPI_Ireduce_scatter_block and MPI_Ireduce_scatter as
 * generalized requests. */
extern atomic_int orp_pending; /* operations started and not completed, all communicators */
/* With st->lock held: completes the finished operations of st in start order (all, waiting,
 * if wait is set); returns how many completed. */
int orp_iops_complete(struct orp_comm *st, int wait);

/* progress.c: MPI's progress engine calls liboptireduce's while operations are pending. */
int orp_progress_init(void); /* looks the hook up; 0 if MPI has one */
void orp_progress_stop(void);

/*
 * pmpi_allreduce.c: the routing shared by the C and Fortran entry points of every kind.
 * One intercepted call, as the program made it.
 */
struct orp_args {
	enum orp_call kind;
	const void *sbuf;
	void *rbuf;
	int count;             /* MPI_Allreduce's count, a block's recvcount; for
	                          MPI_(I)reduce_scatter the sum of recvcounts, at most INT_MAX */
	const int *recvcounts; /* MPI_Reduce_scatter and MPI_Ireduce_scatter */
	MPI_Datatype dt;
	MPI_Op op;
	MPI_Comm comm;
	MPI_Request *request; /* the nonblocking kinds */
};
/* Counts the call as going to PMPI for reason and makes it there, unchanged. */
int orp_to_pmpi(const struct orp_args *a, enum optireduce_pmpi_reason reason);
/* A reason to leave the call to MPI, or -1 if liboptireduce can take it (same for every rank). */
int orp_check_call(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, enum optireduce_dtype *odt, enum optireduce_op *oop);
/* Whether a call runs bounded, and on which channel (st->lock held); *declined if bounded was
 * chosen but is unavailable. */
optireduce_comm_t *orp_channel(struct orp_comm *st, enum optireduce_dtype odt,
                               enum optireduce_op oop, size_t bytes, int *bounded, int *declined);
/* A blocking call that passed its checks (reason -1, else it goes to PMPI): its
 * communicator's state with the busy flag taken, or NULL once the call went to PMPI (*ret
 * is then PMPI's result). */
struct orp_comm *orp_enter(const struct orp_args *a, int reason, int *ret);
/* After a blocking call on st: releases busy; on ret != 0 raises MPI_ERR_OTHER (returned),
 * else counts the call served. */
int orp_leave(struct orp_comm *st, const struct orp_args *a, int ret,
              const struct optireduce_status *status, int bounded, int declined, size_t bytes);
int orp_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm);
int orp_reduce_scatter_block(const void *sbuf, void *rbuf, int recvcount, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm);
int orp_iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request);
int orp_ireduce_scatter_block(const void *sbuf, void *rbuf, int recvcount, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, MPI_Request *request);

/* pmpi_reduce_scatter.c: MPI_Reduce_scatter (a count per rank), and the checks of the
 * counts that MPI_Ireduce_scatter shares. */
struct orp_counts {
	size_t total, displ; /* elements: of all blocks, before this rank's */
	int mine, equal;     /* this rank's recvcount; 1 if every block has recvcounts[0] */
};
/* The common checks (orp_check_call) and those of a->recvcounts: a reason, or -1 with *c
 * filled; sets a->count to the total (at most INT_MAX). */
int orp_check_counts(struct orp_args *a, enum optireduce_dtype *odt, enum optireduce_op *oop,
                     struct orp_counts *c);
int orp_reduce_scatter(const void *sbuf, void *rbuf, const int recvcounts[], MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm);
int orp_ireduce_scatter(const void *sbuf, void *rbuf, const int recvcounts[], MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm, MPI_Request *request);

#endif /* ORP_PMPI_INTERNAL_H */
