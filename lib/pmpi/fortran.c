/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fortran MPI_ALLREDUCE and MPI_IALLREDUCE.  Open MPI's Fortran layer
 * (libmpi_mpifh) calls PMPI_Allreduce and PMPI_Iallreduce directly, so the
 * C entry points never see Fortran calls; this file defines the names it
 * would otherwise resolve to:
 *
 *   mpi_allreduce mpi_allreduce_ mpi_allreduce__ MPI_ALLREDUCE   mpif.h / "use mpi"
 *   MPI_Allreduce_f MPI_Allreduce_f08                          Open MPI aliases
 *   mpi_allreduce_f08_                                         "use mpi_f08"
 *
 * and the same with iallreduce.  The pmpi_* names stay Open MPI's, and so do
 * ompi_allreduce_f and ompi_iallreduce_f, which both mpi_*_f08_ and
 * pmpi_*_f08_ call: taking them would intercept PMPI_Allreduce too.  The
 * mpi_*_f08_ routines have the same arguments (the handles are one-integer
 * derived types, passed by reference), except that their ierror is
 * optional: NULL when absent.  Handles are converted with the f2c and c2f
 * functions: an MPI_IALLREDUCE request is the C generalized request's
 * Fortran handle, so MPI_WAIT, MPI_TEST, MPI_WAITALL and MPI_REQUEST_FREE
 * take it as any other.  MPI_IN_PLACE and MPI_BOTTOM are, in Fortran, the
 * addresses of common blocks (mpi_fortran_in_place_, mpi_fortran_bottom_
 * with gfortran); they are looked up at run time, so nothing here ties the
 * library to Fortran.  If they cannot be found, a Fortran call cannot be
 * decoded safely and goes to Open MPI's own pmpi_allreduce_
 * (pmpi_iallreduce_).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "pmpi_internal.h"

typedef void (*fortran_allreduce_fn)(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                     MPI_Fint *);
typedef void (*fortran_iallreduce_fn)(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                      MPI_Fint *, MPI_Fint *, MPI_Fint *);

#define NSENTINEL 4
static void *in_place[NSENTINEL], *bottom[NSENTINEL];
static int have_in_place;
static fortran_allreduce_fn real_fortran;
static fortran_iallreduce_fn real_fortran_i;
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
	static const char *const pmi[] = {"pmpi_iallreduce_", "pmpi_iallreduce",
	                                  "pmpi_iallreduce__", "PMPI_IALLREDUCE"};

	for (int i = 0; i < NSENTINEL; i++) {
		in_place[i] = dlsym(RTLD_DEFAULT, ip[i]);
		bottom[i] = dlsym(RTLD_DEFAULT, bt[i]);
		have_in_place |= in_place[i] != NULL;
	}
	for (size_t i = 0; i < sizeof(pm) / sizeof(pm[0]) && !real_fortran; i++)
		*(void **)&real_fortran = dlsym(RTLD_DEFAULT, pm[i]);
	for (size_t i = 0; i < sizeof(pmi) / sizeof(pmi[0]) && !real_fortran_i; i++)
		*(void **)&real_fortran_i = dlsym(RTLD_DEFAULT, pmi[i]);
}

static int is_one_of(const void *p, void *const *set)
{
	for (int i = 0; i < NSENTINEL; i++)
		if (set[i] && p == set[i])
			return 1;
	return 0;
}

/* A call whose buffers this file cannot tell from the sentinels: Open MPI's own then. */
static int undecodable(const void *sbuf, const void *rbuf)
{
	pthread_once(&lookup_once, lookup);
	return !have_in_place || is_one_of(sbuf, bottom) || is_one_of(rbuf, bottom) ||
	       is_one_of(rbuf, in_place);
}

static void fortran_allreduce(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,
                              MPI_Fint *comm, MPI_Fint *ierr)
{
	int ret;

	if (undecodable(sbuf, rbuf)) {
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

static void fortran_iallreduce(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,
                               MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	MPI_Request req = MPI_REQUEST_NULL;
	int ret;

	if (undecodable(sbuf, rbuf)) {
		orp_stats_call(ORP_CALL_IALLREDUCE);
		orp_stats_pmpi(OPTIREDUCE_PMPI_REASON_FORTRAN);
		if (real_fortran_i) {
			MPI_Fint err = MPI_SUCCESS;
			real_fortran_i(sbuf, rbuf, count, dt, op, comm, request, &err);
			if (ierr)
				*ierr = err;
			return;
		}
		ret = PMPI_Iallreduce(sbuf, rbuf, (int)*count, PMPI_Type_f2c(*dt), PMPI_Op_f2c(*op),
		                      PMPI_Comm_f2c(*comm), &req);
	} else {
		ret = orp_iallreduce(is_one_of(sbuf, in_place) ? MPI_IN_PLACE : sbuf, rbuf,
		                     (int)*count, PMPI_Type_f2c(*dt), PMPI_Op_f2c(*op),
		                     PMPI_Comm_f2c(*comm), &req);
	}
	if (ret == MPI_SUCCESS)
		*request = PMPI_Request_c2f(req);
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

#define FORTRAN_IENTRY(name)                                                                       \
	ORP_EXPORT void name(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,  \
	                     MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr);                   \
	void name(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,             \
	          MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)                               \
	{                                                                                          \
		fortran_iallreduce(sbuf, rbuf, count, dt, op, comm, request, ierr);                \
	}

FORTRAN_IENTRY(mpi_iallreduce)
FORTRAN_IENTRY(mpi_iallreduce_)
FORTRAN_IENTRY(mpi_iallreduce__)
FORTRAN_IENTRY(MPI_IALLREDUCE)
FORTRAN_IENTRY(MPI_Iallreduce_f)
FORTRAN_IENTRY(MPI_Iallreduce_f08)
FORTRAN_IENTRY(mpi_iallreduce_f08_)
