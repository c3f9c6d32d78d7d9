/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the interposer's reduce-scatter tests (pmpi_reduce_scatter.c,
 * pmpi_ireduce_scatter.c, pmpi_reduce_scatter_v.c, pmpi_ireduce_scatter_v.c): the datatypes
 * and operations they cover, inputs that no integer sum or product overflows on 5 ranks, a
 * reference computed without MPI, comparison against a reference, and the interposer's
 * counters found with dlsym (the tests are not linked with it).
 */
#ifndef RS_CHECK_H
#define RS_CHECK_H

#include <stddef.h>

#include <mpi.h>

#include "lib/pmpi/optireduce_pmpi.h"

struct rs_type {
	MPI_Datatype dt;
	const char *name;
	int is_float, is_signed, size;
};

#define RS_NTYPES 8
#define RS_NOPS   4
extern struct rs_type rs_types[RS_NTYPES];
extern MPI_Op rs_ops[RS_NOPS];
extern const char *const rs_op_names[RS_NOPS];
extern int rs_rank, rs_size, rs_failures;
extern long rs_cases;

#define RS_FAIL(...)                                                                               \
	do {                                                                                       \
		if (rs_failures++ < 30) {                                                          \
			fprintf(stderr, "rank %d: ", rs_rank);                                     \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
		}                                                                                  \
	} while (0)

/* MPI_Init, the types, the counters; 0, or 77 (skip: MPI finalized) without the interposer. */
int rs_init(int *argc, char ***argv);
/* Sums the failures of every rank, prints PASS or FAIL, finalizes; the exit code. */
int rs_finish(const char *what);
struct optireduce_pmpi_stats rs_snap(void);
/* optireduce_pmpi_reason_name, found with dlsym. */
const char *rs_reason_name(int reason);

/* One case of MPI_(I)reduce_scatter_block: rc elements per rank on comm; each buffer is one
 * byte longer than n elements, so that a write past the end shows. */
struct rs_case {
	unsigned char *in;   /* this rank's input */
	unsigned char *keep; /* a copy of it, to see that the call leaves it alone */
	unsigned char *got;  /* the receive buffer: the input when in place, else 0xa5 bytes */
	unsigned char *ref;  /* PMPI_Reduce_scatter_block's block */
	size_t n, bytes;     /* elements of the input, bytes of each buffer */
	int crank, csize;
};
/* Fills c for datatype t, op (index in rs_ops) and recvcount rc, reference included. */
void rs_prepare(struct rs_case *c, MPI_Comm comm, const struct rs_type *t, int op, int rc,
                int in_place);
void rs_release(struct rs_case *c);

/* Input of rank r at element i for op (index in rs_ops). */
double rs_input(const struct rs_type *t, int op, int r, size_t i);
void rs_fill(void *buf, size_t n, const struct rs_type *t, int op, int r);
/* Elements base .. base + n - 1 of op (index in rs_ops) over the inputs of ranks 0 .. csize - 1,
 * computed here without MPI. */
void rs_reference(void *buf, const struct rs_type *t, int op, int csize, size_t base, size_t n);
double rs_load(const void *buf, size_t i, const struct rs_type *t);
/* Elements of got that differ from ref (integers and MIN/MAX bit for bit, floating SUM and
 * PROD within 2 N eps of the magnitudes); got[k] is global element base + k.  *first: the
 * first that differs. */
size_t rs_compare(const void *got, const void *ref, const struct rs_type *t, int op, int csize,
                  size_t base, size_t n, size_t *first);

#endif /* RS_CHECK_H */
