/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_bench_check.c - the benchmark's known inputs, MPI's names for its datatypes
 * and operations, and the check of every size's last result.
 */
#include <math.h>
#include <stdio.h>

#include "test/mpi/dtype_value.h"
#include "optireduce_bench.h"

MPI_Datatype ob_mpi_dtype(enum optireduce_dtype dt)
{
	switch (dt) {
	case OPTIREDUCE_INT8:
		return MPI_INT8_T;
	case OPTIREDUCE_UINT8:
		return MPI_UINT8_T;
	case OPTIREDUCE_INT32:
		return MPI_INT32_T;
	case OPTIREDUCE_UINT32:
		return MPI_UINT32_T;
	case OPTIREDUCE_INT64:
		return MPI_INT64_T;
	case OPTIREDUCE_UINT64:
		return MPI_UINT64_T;
	case OPTIREDUCE_FLOAT32:
		return MPI_FLOAT;
	case OPTIREDUCE_FLOAT64:
		return MPI_DOUBLE;
	default:
		return MPI_DATATYPE_NULL; /* no MPI half types in MPI 3 */
	}
}

/* MPI has no AVG: the baseline runs SUM, which costs the same minus a divide. */
MPI_Op ob_mpi_op(enum optireduce_op op)
{
	switch (op) {
	case OPTIREDUCE_PROD:
		return MPI_PROD;
	case OPTIREDUCE_MIN:
		return MPI_MIN;
	case OPTIREDUCE_MAX:
		return MPI_MAX;
	default:
		return MPI_SUM;
	}
}

int ob_is_float(enum optireduce_dtype dt)
{
	return dt == OPTIREDUCE_FLOAT16 || dt == OPTIREDUCE_BFLOAT16 || dt == OPTIREDUCE_FLOAT32 ||
	       dt == OPTIREDUCE_FLOAT64;
}

/*
 * Known inputs, small integers so every sum, product, min and max is exact
 * in every dtype: SUM is at most 3 * nranks (int8 holds it up to 42 ranks),
 * PROD is 2 (one rank contributes 2, the others 1).
 */
double ob_input(int r, size_t i, enum optireduce_op op)
{
	if (op == OPTIREDUCE_PROD)
		return (int)(i % (size_t)ob_nranks) == r ? 2 : 1;
	return (double)((i + (size_t)r * 3) % 4);
}

static double expected(size_t i, enum optireduce_op op)
{
	double acc = ob_input(0, i, op);

	for (int r = 1; r < ob_nranks; r++) {
		double v = ob_input(r, i, op);
		switch (op) {
		case OPTIREDUCE_PROD:
			acc *= v;
			break;
		case OPTIREDUCE_MIN:
			acc = v < acc ? v : acc;
			break;
		case OPTIREDUCE_MAX:
			acc = v > acc ? v : acc;
			break;
		default:
			acc += v;
			break;
		}
	}
	return op == OPTIREDUCE_AVG ? acc / ob_nranks : acc;
}

int ob_inputs_overflow(enum optireduce_dtype dt, enum optireduce_op op)
{
	if (op != OPTIREDUCE_SUM && op != OPTIREDUCE_AVG)
		return 0;
	return (dt == OPTIREDUCE_INT8 && 3 * ob_nranks > 127) ||
	       (dt == OPTIREDUCE_UINT8 && 3 * ob_nranks > 255) ||
	       (dt == OPTIREDUCE_BFLOAT16 && 3 * ob_nranks > 256) ||
	       (dt == OPTIREDUCE_FLOAT16 && 3 * ob_nranks > 2048);
}

/* Relative precision of a dtype, for AVG (the only inexact case) and bounded mode. */
static double dtype_eps(enum optireduce_dtype dt)
{
	switch (dt) {
	case OPTIREDUCE_FLOAT16:
		return ldexp(1, -10);
	case OPTIREDUCE_BFLOAT16:
		return ldexp(1, -7);
	case OPTIREDUCE_FLOAT32:
		return ldexp(1, -23);
	case OPTIREDUCE_FLOAT64:
		return ldexp(1, -52);
	default:
		return 0.5; /* integer AVG truncates */
	}
}

/*
 * Checks this rank's result for a size against the known inputs.  Exact
 * results must match (AVG within rounding); a bounded result is an estimate,
 * so there only non-finite values or a relative L2 error beyond what the data
 * lost explains fail.
 * Returns 0 or 1, and sets *rel_err.
 */
int ob_validate(const void *rbuf, size_t count, enum optireduce_dtype dt, enum optireduce_op op,
                int bounded, double loss, double *rel_err)
{
	/* The estimator's relative error energy is about 2 loss / (1 - loss) per contribution
	 * lost (transpose); a result far beyond that is wrong, not unlucky. */
	double limit =
	    1.0 + 4.0 * sqrt(2.0 * ob_nranks * loss / (1.0 - (loss < 0.99 ? loss : 0.99)));
	double num = 0, den = 0, tol = op == OPTIREDUCE_AVG ? 2 * dtype_eps(dt) : 0;
	size_t nonfinite = 0, first_nonfinite = 0;
	int bad = 0;

	for (size_t i = 0; i < count; i++) {
		double want = expected(i, op), got = dtype_load(rbuf, i, dt);
		if (!isfinite(got)) {
			if (!nonfinite++)
				first_nonfinite = i;
			bad = 1;
			continue;
		}
		num += (got - want) * (got - want);
		den += want * want;
		if (!bounded && fabs(got - want) > tol * (fabs(want) + 1)) {
			if (!bad)
				fprintf(stderr,
				        "optireduce_bench: rank %d: wrong result at element %zu "
				        "of %zu: %g, expected %g\n",
				        ob_rank, i, count, got, want);
			bad = 1;
		}
	}
	*rel_err = den > 0 ? sqrt(num / den) : sqrt(num);
	if (bounded && *rel_err > limit)
		bad = 1;
	/* Bounded results are only checked in bulk; say how they were wrong. */
	if (bad && bounded)
		fprintf(
		    stderr,
		    "optireduce_bench: rank %d: bounded result: relative L2 error %g (limit %g), "
		    "%zu of %zu elements not finite (first at %zu)\n",
		    ob_rank, *rel_err, limit, nonfinite, count, first_nonfinite);
	return bad;
}
