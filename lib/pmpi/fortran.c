/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fortran MPI_ALLREDUCE, MPI_IALLREDUCE, MPI_REDUCE_SCATTER_BLOCK,
 * MPI_IREDUCE_SCATTER_BLOCK, MPI_REDUCE_SCATTER and MPI_IREDUCE_SCATTER.
 * Open MPI's Fortran
 * layer (libmpi_mpifh) calls PMPI_Allreduce and the others directly, so the
 * C entry points never see Fortran calls; this file defines the names it
 * would otherwise resolve to:
 *
 *   mpi_allreduce mpi_allreduce_ mpi_allreduce__ MPI_ALLREDUCE   mpif.h / "use mpi"
 *   MPI_Allreduce_f MPI_Allreduce_f08                          Open MPI aliases
 *   mpi_allreduce_f08_                                         "use mpi_f08"
 *
 * and the same with the other five.  The pmpi_* names stay Open MPI's, and
 * so do ompi_allreduce_f and the like, which both mpi_*_f08_ and
 * pmpi_*_f08_ call: taking them would intercept PMPI_Allreduce too.  The
 * mpi_*_f08_ routines have the same arguments (the handles are one-integer
 * derived types, passed by reference), except that their ierror is
 * optional: NULL when absent.  Handles are converted with the f2c and c2f
 * functions: a nonblocking call's request is the C generalized request's
 * Fortran handle, so MPI_WAIT, MPI_TEST, MPI_WAITALL and MPI_REQUEST_FREE
 * take it as any other.  MPI_IN_PLACE and MPI_BOTTOM are, in Fortran, the
 * addresses of common blocks (mpi_fortran_in_place_, mpi_fortran_bottom_
 * with gfortran); they are looked up at run time, so nothing here ties the
 * library to Fortran.  If they cannot be found, a Fortran call cannot be
 * decoded safely and goes to Open MPI's own pmpi_allreduce_ (and so on).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "pmpi_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*fortran_allreduce_fn)(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                     MPI_Fint *);
typedef void (*fortran_iallreduce_fn)(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                      MPI_Fint *, MPI_Fint *, MPI_Fint *);

/* Open MPI's own Fortran routines of each kind (enum orp_call), for calls not decoded. */
static const char *const kind_names[] = {
    [ORP_CALL_ALLREDUCE] = "allreduce",
    [ORP_CALL_IALLREDUCE] = "iallreduce",
    [ORP_CALL_REDUCE_SCATTER] = "reduce_scatter_block",
    [ORP_CALL_IREDUCE_SCATTER] = "ireduce_scatter_block",
    [ORP_CALL_REDUCE_SCATTER_V] = "reduce_scatter",
    [ORP_CALL_IREDUCE_SCATTER_V] = "ireduce_scatter",
};
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

#define NSENTINEL 4
static void *in_place[NSENTINEL], *bottom[NSENTINEL];
static int have_in_place;
static void *real_fortran[NKINDS];
static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;

/* pmpi_<kind>_ and the other manglings; the first found. */
static void *lookup_real(const char *kind)
{
	static const char *const fmt[] = {"pmpi_%s_", "pmpi_%s", "pmpi_%s__", "PMPI_%s"};
	char name[64];
	void *p = NULL;

	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]) && !p; i++) {
		snprintf(name, sizeof(name), fmt[i], kind);
		for (char *c = name + 5; i == 3 && *c; c++)
			*c = (char)toupper((unsigned char)*c);
		p = dlsym(RTLD_DEFAULT, name);
	}
	return p;
}

static void lookup(void)
{
	/* Every mangling a Fortran compiler may give the common blocks. */
	static const char *const ip[NSENTINEL] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
	                                          "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
	static const char *const bt[NSENTINEL] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
	                                          "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};

	for (int i = 0; i < NSENTINEL; i++) {
		in_place[i] = dlsym(RTLD_DEFAULT, ip[i]);
		bottom[i] = dlsym(RTLD_DEFAULT, bt[i]);
		have_in_place |= in_place[i] != NULL;
	}
	for (size_t k = 0; k < NKINDS; k++)
		real_fortran[k] = lookup_real(kind_names[k]);
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

static const void *c_sbuf(const void *sbuf)
{
	return is_one_of(sbuf, in_place) ? MPI_IN_PLACE : sbuf;
}

static void set_ierr(MPI_Fint *ierr, int ret)
{
	if (ierr)
		*ierr = (MPI_Fint)ret;
}

/* MPI_ALLREDUCE and MPI_REDUCE_SCATTER_BLOCK (count is then the recvcount). */
static void fortran_blocking(enum orp_call kind, void *sbuf, void *rbuf, MPI_Fint *count,
                             MPI_Fint *dt, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
	MPI_Datatype cdt = PMPI_Type_f2c(*dt);
	MPI_Op cop = PMPI_Op_f2c(*op);
	MPI_Comm ccomm = PMPI_Comm_f2c(*comm);
	int rs = kind == ORP_CALL_REDUCE_SCATTER, ret;

	if (undecodable(sbuf, rbuf)) {
		fortran_allreduce_fn real;
		orp_stats_call(kind);
		orp_stats_pmpi(OPTIREDUCE_PMPI_REASON_FORTRAN);
		*(void **)&real = real_fortran[kind];
		if (real) {
			MPI_Fint err = MPI_SUCCESS;
			real(sbuf, rbuf, count, dt, op, comm, &err);
			set_ierr(ierr, err);
			return;
		}
		ret = rs ? PMPI_Reduce_scatter_block(sbuf, rbuf, (int)*count, cdt, cop, ccomm)
		         : PMPI_Allreduce(sbuf, rbuf, (int)*count, cdt, cop, ccomm);
	} else if (rs) {
		ret = orp_reduce_scatter_block(c_sbuf(sbuf), rbuf, (int)*count, cdt, cop, ccomm);
	} else {
		ret = orp_allreduce(c_sbuf(sbuf), rbuf, (int)*count, cdt, cop, ccomm);
	}
	set_ierr(ierr, ret);
}

/* MPI_IALLREDUCE and MPI_IREDUCE_SCATTER_BLOCK. */
static void fortran_nonblocking(enum orp_call kind, void *sbuf, void *rbuf, MPI_Fint *count,
                                MPI_Fint *dt, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *request,
                                MPI_Fint *ierr)
{
	MPI_Datatype cdt = PMPI_Type_f2c(*dt);
	MPI_Op cop = PMPI_Op_f2c(*op);
	MPI_Comm ccomm = PMPI_Comm_f2c(*comm);
	MPI_Request req = MPI_REQUEST_NULL;
	int rs = kind == ORP_CALL_IREDUCE_SCATTER, ret;

	if (undecodable(sbuf, rbuf)) {
		fortran_iallreduce_fn real;
		orp_stats_call(kind);
		orp_stats_pmpi(OPTIREDUCE_PMPI_REASON_FORTRAN);
		*(void **)&real = real_fortran[kind];
		if (real) {
			MPI_Fint err = MPI_SUCCESS;
			real(sbuf, rbuf, count, dt, op, comm, request, &err);
			set_ierr(ierr, err);
			return;
		}
		ret =
		    rs ? PMPI_Ireduce_scatter_block(sbuf, rbuf, (int)*count, cdt, cop, ccomm, &req)
		       : PMPI_Iallreduce(sbuf, rbuf, (int)*count, cdt, cop, ccomm, &req);
	} else if (rs) {
		ret = orp_ireduce_scatter_block(c_sbuf(sbuf), rbuf, (int)*count, cdt, cop, ccomm,
		                                &req);
	} else {
		ret = orp_iallreduce(c_sbuf(sbuf), rbuf, (int)*count, cdt, cop, ccomm, &req);
	}
	if (ret == MPI_SUCCESS)
		*request = PMPI_Request_c2f(req);
	set_ierr(ierr, ret);
}

/* recvcounts as C ints: the Fortran array itself when MPI_Fint is an int, else a copy. */
static int *c_counts(MPI_Fint *counts, MPI_Comm comm)
{
	int size = 0, *c;

	if (sizeof(MPI_Fint) == sizeof(int))
		return (int *)counts;
	if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return NULL;
	c = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
	for (int i = 0; c && i < size; i++)
		c[i] = (int)counts[i];
	return c;
}

/* Open MPI's own MPI_REDUCE_SCATTER or, with a request, MPI_IREDUCE_SCATTER, given the
 * Fortran arguments as they came; 0 if it could not be found. */
static int real_reduce_scatter(void *sbuf, void *rbuf, MPI_Fint *counts, MPI_Fint *dt, MPI_Fint *op,
                               MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	enum orp_call kind = request ? ORP_CALL_IREDUCE_SCATTER_V : ORP_CALL_REDUCE_SCATTER_V;
	MPI_Fint err = MPI_SUCCESS;

	orp_stats_call(kind);
	orp_stats_pmpi(OPTIREDUCE_PMPI_REASON_FORTRAN);
	if (request) {
		fortran_iallreduce_fn real;
		*(void **)&real = real_fortran[kind];
		if (!real)
			return 0;
		real(sbuf, rbuf, counts, dt, op, comm, request, &err);
	} else {
		fortran_allreduce_fn real;
		*(void **)&real = real_fortran[kind];
		if (!real)
			return 0;
		real(sbuf, rbuf, counts, dt, op, comm, &err);
	}
	set_ierr(ierr, err);
	return 1;
}

/* MPI_REDUCE_SCATTER and, with a request, MPI_IREDUCE_SCATTER.  A copy of the counts made
 * for an MPI_Fint wider than int is freed on return: a served call reads them only while it
 * starts.  A nonblocking call handed to MPI with such a copy is the exception, as MPI may
 * read the counts until completion; with gfortran's default INTEGER there is no copy. */
static void fortran_reduce_scatter(void *sbuf, void *rbuf, MPI_Fint *counts, MPI_Fint *dt,
                                   MPI_Fint *op, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	MPI_Datatype cdt = PMPI_Type_f2c(*dt);
	MPI_Op cop = PMPI_Op_f2c(*op);
	MPI_Comm ccomm = PMPI_Comm_f2c(*comm);
	MPI_Request req = MPI_REQUEST_NULL;
	int *c, ret, raw = undecodable(sbuf, rbuf);

	if (raw && real_reduce_scatter(sbuf, rbuf, counts, dt, op, comm, request, ierr))
		return;
	c = c_counts(counts, ccomm);
	if (!c) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	if (raw && request)
		ret = PMPI_Ireduce_scatter(sbuf, rbuf, c, cdt, cop, ccomm, &req);
	else if (raw)
		ret = PMPI_Reduce_scatter(sbuf, rbuf, c, cdt, cop, ccomm);
	else if (request)
		ret = orp_ireduce_scatter(c_sbuf(sbuf), rbuf, c, cdt, cop, ccomm, &req);
	else
		ret = orp_reduce_scatter(c_sbuf(sbuf), rbuf, c, cdt, cop, ccomm);
	if ((void *)c != (void *)counts)
		free(c);
	if (request && ret == MPI_SUCCESS)
		*request = PMPI_Request_c2f(req);
	set_ierr(ierr, ret);
}

#define FORTRAN_ENTRY(name, kind)                                                                  \
	ORP_EXPORT void name(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,  \
	                     MPI_Fint *comm, MPI_Fint *ierr);                                      \
	void name(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,             \
	          MPI_Fint *comm, MPI_Fint *ierr)                                                  \
	{                                                                                          \
		fortran_blocking(kind, sbuf, rbuf, count, dt, op, comm, ierr);                     \
	}

FORTRAN_ENTRY(mpi_allreduce, ORP_CALL_ALLREDUCE)
FORTRAN_ENTRY(mpi_allreduce_, ORP_CALL_ALLREDUCE)
FORTRAN_ENTRY(mpi_allreduce__, ORP_CALL_ALLREDUCE)
FORTRAN_ENTRY(MPI_ALLREDUCE, ORP_CALL_ALLREDUCE)
FORTRAN_ENTRY(MPI_Allreduce_f, ORP_CALL_ALLREDUCE)
FORTRAN_ENTRY(MPI_Allreduce_f08, ORP_CALL_ALLREDUCE)
FORTRAN_ENTRY(mpi_allreduce_f08_, ORP_CALL_ALLREDUCE)
FORTRAN_ENTRY(mpi_reduce_scatter_block, ORP_CALL_REDUCE_SCATTER)
FORTRAN_ENTRY(mpi_reduce_scatter_block_, ORP_CALL_REDUCE_SCATTER)
FORTRAN_ENTRY(mpi_reduce_scatter_block__, ORP_CALL_REDUCE_SCATTER)
FORTRAN_ENTRY(MPI_REDUCE_SCATTER_BLOCK, ORP_CALL_REDUCE_SCATTER)
FORTRAN_ENTRY(MPI_Reduce_scatter_block_f, ORP_CALL_REDUCE_SCATTER)
FORTRAN_ENTRY(MPI_Reduce_scatter_block_f08, ORP_CALL_REDUCE_SCATTER)
FORTRAN_ENTRY(mpi_reduce_scatter_block_f08_, ORP_CALL_REDUCE_SCATTER)

#define FORTRAN_IENTRY(name, kind)                                                                 \
	ORP_EXPORT void name(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,  \
	                     MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr);                   \
	void name(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *op,             \
	          MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)                               \
	{                                                                                          \
		fortran_nonblocking(kind, sbuf, rbuf, count, dt, op, comm, request, ierr);         \
	}

FORTRAN_IENTRY(mpi_iallreduce, ORP_CALL_IALLREDUCE)
FORTRAN_IENTRY(mpi_iallreduce_, ORP_CALL_IALLREDUCE)
FORTRAN_IENTRY(mpi_iallreduce__, ORP_CALL_IALLREDUCE)
FORTRAN_IENTRY(MPI_IALLREDUCE, ORP_CALL_IALLREDUCE)
FORTRAN_IENTRY(MPI_Iallreduce_f, ORP_CALL_IALLREDUCE)
FORTRAN_IENTRY(MPI_Iallreduce_f08, ORP_CALL_IALLREDUCE)
FORTRAN_IENTRY(mpi_iallreduce_f08_, ORP_CALL_IALLREDUCE)
FORTRAN_IENTRY(mpi_ireduce_scatter_block, ORP_CALL_IREDUCE_SCATTER)
FORTRAN_IENTRY(mpi_ireduce_scatter_block_, ORP_CALL_IREDUCE_SCATTER)
FORTRAN_IENTRY(mpi_ireduce_scatter_block__, ORP_CALL_IREDUCE_SCATTER)
FORTRAN_IENTRY(MPI_IREDUCE_SCATTER_BLOCK, ORP_CALL_IREDUCE_SCATTER)
FORTRAN_IENTRY(MPI_Ireduce_scatter_block_f, ORP_CALL_IREDUCE_SCATTER)
FORTRAN_IENTRY(MPI_Ireduce_scatter_block_f08, ORP_CALL_IREDUCE_SCATTER)
FORTRAN_IENTRY(mpi_ireduce_scatter_block_f08_, ORP_CALL_IREDUCE_SCATTER)

#define FORTRAN_VENTRY(name)                                                                       \
	ORP_EXPORT void name(void *sbuf, void *rbuf, MPI_Fint *counts, MPI_Fint *dt, MPI_Fint *op, \
	                     MPI_Fint *comm, MPI_Fint *ierr);                                      \
	void name(void *sbuf, void *rbuf, MPI_Fint *counts, MPI_Fint *dt, MPI_Fint *op,            \
	          MPI_Fint *comm, MPI_Fint *ierr)                                                  \
	{                                                                                          \
		fortran_reduce_scatter(sbuf, rbuf, counts, dt, op, comm, NULL, ierr);              \
	}

FORTRAN_VENTRY(mpi_reduce_scatter)
FORTRAN_VENTRY(mpi_reduce_scatter_)
FORTRAN_VENTRY(mpi_reduce_scatter__)
FORTRAN_VENTRY(MPI_REDUCE_SCATTER)
FORTRAN_VENTRY(MPI_Reduce_scatter_f)
FORTRAN_VENTRY(MPI_Reduce_scatter_f08)
FORTRAN_VENTRY(mpi_reduce_scatter_f08_)

#define FORTRAN_IVENTRY(name)                                                                      \
	ORP_EXPORT void name(void *sbuf, void *rbuf, MPI_Fint *counts, MPI_Fint *dt, MPI_Fint *op, \
	                     MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr);                   \
	void name(void *sbuf, void *rbuf, MPI_Fint *counts, MPI_Fint *dt, MPI_Fint *op,            \
	          MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)                               \
	{                                                                                          \
		fortran_reduce_scatter(sbuf, rbuf, counts, dt, op, comm, request, ierr);           \
	}

FORTRAN_IVENTRY(mpi_ireduce_scatter)
FORTRAN_IVENTRY(mpi_ireduce_scatter_)
FORTRAN_IVENTRY(mpi_ireduce_scatter__)
FORTRAN_IVENTRY(MPI_IREDUCE_SCATTER)
FORTRAN_IVENTRY(MPI_Ireduce_scatter_f)
FORTRAN_IVENTRY(MPI_Ireduce_scatter_f08)
FORTRAN_IVENTRY(mpi_ireduce_scatter_f08_)
