/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * For the Fortran tests: the interposer's counters, found with dlsym so the
 * tests also build and run (and skip) without it.  Called from Fortran
 * through bind(C).
 */
#include <dlfcn.h>

#include "pmpi/optireduce_pmpi.h"

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
