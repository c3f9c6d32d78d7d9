/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * For the Fortran tests: the interposer's counters, found with dlsym so the
 * tests also build and run (and skip) without it.  Called from Fortran
 * through bind(C).
 */
#include <dlfcn.h>

#include "lib/pmpi/optireduce_pmpi.h"

void pmpi_test_counts(long long *exact, long long *pmpi, long long *fortran);
void pmpi_test_nb_counts(long long *calls, long long *served);

void pmpi_test_counts(long long *exact, long long *pmpi, long long *fortran)
{
	int (*get)(struct optireduce_pmpi_stats *);
	struct optireduce_pmpi_stats s;

	*(void **)&get = dlsym(RTLD_DEFAULT, "optireduce_pmpi_stats");
	if (!get || get(&s)) {
		*exact = *pmpi = *fortran = -1;
		return;
	}
	*exact = (long long)s.served_exact;
	*pmpi = (long long)s.to_pmpi;
	*fortran = (long long)s.to_pmpi_by_reason[OPTIREDUCE_PMPI_REASON_FORTRAN];
}

/* MPI_Iallreduce calls intercepted and served by liboptireduce; -1 without the interposer. */
void pmpi_test_nb_counts(long long *calls, long long *served)
{
	int (*get)(struct optireduce_pmpi_stats *);
	struct optireduce_pmpi_stats s;

	*(void **)&get = dlsym(RTLD_DEFAULT, "optireduce_pmpi_stats");
	if (!get || get(&s)) {
		*calls = *served = -1;
		return;
	}
	*calls = (long long)s.nonblocking_calls;
	*served = (long long)s.nonblocking_served;
}

/* The reduce-scatters: MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block,
 * MPI_Reduce_scatter and MPI_Ireduce_scatter calls intercepted and served by liboptireduce,
 * in that order in c[8] (calls, served, calls, ...); -1 without the interposer. */
void pmpi_test_rs_counts(long long *c);

void pmpi_test_rs_counts(long long *c)
{
	int (*get)(struct optireduce_pmpi_stats *);
	struct optireduce_pmpi_stats s;

	*(void **)&get = dlsym(RTLD_DEFAULT, "optireduce_pmpi_stats");
	if (!get || get(&s)) {
		for (int i = 0; i < 8; i++)
			c[i] = -1;
		return;
	}
	c[0] = (long long)s.reduce_scatter_calls;
	c[1] = (long long)s.reduce_scatter_served;
	c[2] = (long long)s.ireduce_scatter_calls;
	c[3] = (long long)s.ireduce_scatter_served;
	c[4] = (long long)s.reduce_scatter_v_calls;
	c[5] = (long long)s.reduce_scatter_v_served;
	c[6] = (long long)s.ireduce_scatter_v_calls;
	c[7] = (long long)s.ireduce_scatter_v_served;
}
