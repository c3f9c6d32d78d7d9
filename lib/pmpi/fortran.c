/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fortran MPI_ALLREDUCE.  Open MPI's Fortran layer (libmpi_mpifh) calls
 * PMPI_Allreduce directly, so the C MPI_Allreduce never sees Fortran
 * calls; this file defines the names it would otherwise resolve to:
 *
 *   mpi_allreduce mpi_allreduce_ mpi_allreduce__ MPI_ALLREDUCE   mpif.h / "use mpi"
 *   MPI_Allreduce_f MPI_Allreduce_f08                          Open MPI aliases
 *   mpi_allreduce_f08_                                         "use mpi_f08"
 *
 * The pmpi_* names stay Open MPI's, and so does ompi_allreduce_f, which
 * both mpi_allreduce_f08_ and pmpi_allreduce_f08_ call: taking it would
 * intercept PMPI_Allreduce too.  mpi_allreduce_f08_ has the same
 * arguments (the handles are one-integer derived types, passed by
 * reference), except that its ierror is optional: NULL when absent.  Handles are converted with the
 * f2c functions.  MPI_IN_PLACE and MPI_BOTTOM are, in Fortran, the addresses of common blocks
 * (mpi_fortran_in_place_, mpi_fortran_bottom_ with gfortran); they are looked up at run time, so
 * nothing here ties the library to Fortran.  If they cannot be found, a Fortran call cannot be
 * decoded safely and goes to Open MPI's own pmpi_allreduce_.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "pmpi_internal.h"

typedef void (*fortran_allreduce_fn)(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                     MPI_Fint *);

#define NSENTINEL 4
static void *in_place[NSENTINEL], *bottom[NSENTINEL];
static int have_in_place;
static fortran_allreduce_fn real_fortran;
static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;

static void lookup(void)
{
	/* Every mangling a Fortran compiler may give the common blocks. */
	static const char *const ip[NSENTINEL] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
	                                          "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
	static const char *const bt[NSENTINEL] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
	                                          "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
	static const char *const pm[] = {"pmpi_allreduce_", "pmpi_allreduce", "pmpi_allreduce__",
	                                 "PMPI_ALLREDUCE"};

	for (int i = 0; i < NSENTINEL; i++) {
		in_place[i] = dlsym(RTLD_DEFAULT, ip[i]);
		bottom[i] = dlsym(RTLD_DEFAULT, bt[i]);
		have_in_place |= in_place[i] != NULL;
	}
	for (size_t i = 0; i < sizeof(pm) / sizeof(pm[0]) && !real_fortran; i++)
		*(void **)&real_fortran = dlsym(RTLD_DEFAULT, pm[i]);
}

static int is_one_of(const void *p, void *const *set)
{
	for (int i = 0; i < NSENTINEL; i++)
		if (set[i] && p == set[i])
			return 1;
	return 0;
}

static void fortran_allreduce(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,
                              MPI_Fint *comm, MPI_Fint *ierr)
{
	int ret;

	pthread_once(&lookup_once, lookup);
	if (!have_in_place || is_one_of(sbuf, bottom) || is_one_of(rbuf, bottom) ||
	    is_one_of(rbuf, in_place)) {
		orp_stats_call(ORP_CALL_ALLREDUCE);
		orp_stats_pmpi(OPTIREDUCE_PMPI_REASON_FORTRAN);
		if (real_fortran) {
			MPI_Fint err = MPI_SUCCESS;
			real_fortran(sbuf, rbuf, count, dt, op, comm, &err);
			if (ierr)
				*ierr = err;
			return;
		}
		ret = PMPI_Allreduce(sbuf, rbuf, (int)*count, PMPI_Type_f2c(*dt), PMPI_Op_f2c(*op),
		                     PMPI_Comm_f2c(*comm));
	} else {
		ret = orp_allreduce(is_one_of(sbuf, in_place) ? MPI_IN_PLACE : sbuf, rbuf,
		                    (int)*count, PMPI_Type_f2c(*dt), PMPI_Op_f2c(*op),
		                    PMPI_Comm_f2c(*comm));
	}
	if (ierr)
		*ierr = (MPI_Fint)ret;
}

#define FORTRAN_ENTRY(name)                                                                        \
	ORP_EXPORT void name(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,  \
	                     MPI_Fint *comm, MPI_Fint *ierr);                                      \
	void name(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,             \
	          MPI_Fint *comm, MPI_Fint *ierr)                                                  \
	{                                                                                          \
		fortran_allreduce(sbuf, rbuf, count, dt, op, comm, ierr);                          \
	}

FORTRAN_ENTRY(mpi_allreduce)
FORTRAN_ENTRY(mpi_allreduce_)
FORTRAN_ENTRY(mpi_allreduce__)
FORTRAN_ENTRY(MPI_ALLREDUCE)
FORTRAN_ENTRY(MPI_Allreduce_f)
FORTRAN_ENTRY(MPI_Allreduce_f08)
FORTRAN_ENTRY(mpi_allreduce_f08_)
