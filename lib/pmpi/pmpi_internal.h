/* Internal interfaces between the files of the MPI interposer.  Not installed. */
#ifndef ORP_PMPI_INTERNAL_H
#define ORP_PMPI_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>

#include <mpi.h>

#include "optireduce.h"
#include "optireduce_pmpi.h"
#include "policy.h"

/* The library is built with hidden visibility; the MPI and Fortran entry points need this. */
#define ORP_EXPORT __attribute__((visibility("default")))

/* config.c: the environment, read once at the first MPI_Allreduce. */
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

/* stats.c */
void orp_stats_call(void);
void orp_stats_pmpi(enum optireduce_pmpi_reason reason);
void orp_stats_served(int bounded, int declined, size_t bytes);
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
	char name[MPI_MAX_OBJECT_NAME];
	struct orp_comm *prev, *next;
};
int orp_comm_module_init(void);
/* The state of comm, created (collectively) on first use; NULL if that fails. */
struct orp_comm *orp_comm_get(MPI_Comm comm);
/* Creates the bounded channel on first use (collectively); 1 if usable. */
int orp_comm_bounded(struct orp_comm *st);
void orp_comm_destroy_all(void);

/* pmpi_allreduce.c: the routing shared by the C and Fortran entry points. */
int orp_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm);

#endif /* ORP_PMPI_INTERNAL_H */
