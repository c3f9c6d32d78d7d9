/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_bench.h - what optireduce_bench's files share: its options, the errors that
 * end it, and the known inputs its results are checked against.
 */
#ifndef OR_OPTIREDUCE_BENCH_H
#define OR_OPTIREDUCE_BENCH_H

#include <stddef.h>
#include <stdio.h>

#include <mpi.h>

#include "bench_util.h"
#include "optireduce.h"

#define MAX_PARAMS 64

/* This process's rank and the number of ranks in MPI_COMM_WORLD, set once by main(). */
extern int ob_rank, ob_nranks;

struct options {
	struct bench_counts n; /* sizes, counts, -f */
	enum optireduce_dtype dtype;
	enum optireduce_op op;
	enum optireduce_mode mode;
	const char *algorithm;
	const char *params[MAX_PARAMS];
	int nparams;
	const char *bparams[MAX_PARAMS]; /* --compare-param: variant B's changes */
	int nbparams;
	int baseline_mpi; /* also time MPI_Allreduce */
	int only_mpi;     /* time MPI_Allreduce only */
	int mpi_bounded;  /* MPI_Allreduce may answer with estimates (the interposer, bounded) */
	const char *csv;
	/* --delay RANK:US:PROB, a compute straggler outside the timed call */
	int delay_rank;
	long delay_us;
	double delay_prob;
	/* --sync-start MS: ranks start each iteration together at a CLOCK_REALTIME time */
	long sync_ms;
};

/* IMPL_OURS_B: a second communicator with --compare-param, timed alternately with the first. */
enum impl { IMPL_OURS, IMPL_OURS_B, IMPL_MPI, IMPL_COUNT };
extern const char *const ob_impl_name[IMPL_COUNT];

/* Per size and implementation, on rank 0 after the MAX reduction. */
struct result {
	struct bench_stats t;
	double lost_pct;      /* bounded mode: missing / expected contributions (whole blocks) */
	double data_lost_pct; /* bounded mode: elements that did not arrive / expected */
	double cpu_ms;        /* CPU time of a rank's process per timed call, mean over ranks */
};

/* optireduce_bench_args.c */

/* Prints "rank R: message" and aborts every rank. */
void ob_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Rank 0 prints the message and a hint to -h; every rank leaves with status 1. */
void ob_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* The command line into o, checked; a bad one ends the program with a message. */
void ob_parse_args(int argc, char **argv, struct options *o);

/* optireduce_bench_check.c */

/* MPI's type for dt, MPI_DATATYPE_NULL when MPI has none (the 16-bit floats). */
MPI_Datatype ob_mpi_dtype(enum optireduce_dtype dt);
/* MPI's operation for op; AVG runs as SUM. */
MPI_Op ob_mpi_op(enum optireduce_op op);
int ob_is_float(enum optireduce_dtype dt);
/* Rank r's input at element i. */
double ob_input(int r, size_t i, enum optireduce_op op);
/* 1 when the inputs' sums (up to 3 x ranks) do not fit dt exactly. */
int ob_inputs_overflow(enum optireduce_dtype dt, enum optireduce_op op);
int ob_validate(const void *rbuf, size_t count, enum optireduce_dtype dt, enum optireduce_op op,
                int bounded, double loss, double *rel_err);

/* optireduce_bench_start.c */

/* Whether this rank sleeps (--delay) before iteration it. */
int ob_straggles(const struct options *o, long it);
/* MPI_Barrier, sleeping between tests so that waiting ranks leave the CPUs. */
void ob_sleeping_barrier(long sync_ms);
/* Waits for rank 0's start time, ms ahead; the time in *start_s; 1 if it had passed. */
int ob_sync_start(long ms, double *start_s);
/* CPU seconds of the whole process, every thread. */
double ob_process_cpu_s(void);

/* optireduce_bench_csv.c: per timed call, for --csv.  max: the latest rank's lateness
 * (us after the synchronised start) and the first phase's deadline (us), MAX over ranks;
 * sum: elements lost in phases 1 and 2 and expected in both (bounded mode), summed over ranks; the
 * _all arrays hold the reductions on rank 0. */
struct ob_iters {
	double *max, *sum, *max_all, *sum_all;
};
void ob_iters_alloc(struct ob_iters *r, long iters);
void ob_iters_free(struct ob_iters *r);
/* Call i of this rank: st is NULL for MPI_Allreduce. */
void ob_iters_note(struct ob_iters *r, long i, double late_us,
                   const struct optireduce_status *st);
void ob_iters_reduce(struct ob_iters *r, long iters);
const char *ob_iters_csv_head(void);
void ob_iters_csv_row(FILE *csv, const struct ob_iters *r, const char *impl, size_t size,
                      long i, double latency_us, double start_s);

/* optireduce_bench_report.c: rank 0's output */

/* The lines before the table, and its head. */
void ob_print_header(const struct options *o, optireduce_comm_t *comm);
/* label: NULL for A (or MPI alone), "B:" for variant B, so that B's rows are told apart. */
void ob_print_row(const struct options *o, const char *label, size_t size, const struct result *r,
                  const struct result *mpi);
/* Variant B's row, then how A compares with it. */
void ob_print_ab(const struct options *o, size_t size, const struct result *a,
                 const struct result *b, const struct result *mpi);
/* CPU per call and rank, a comment line: tables that parse the rows skip it. */
void ob_print_cpu(const struct options *o, size_t size, const struct result *res, int have_b);

#endif
