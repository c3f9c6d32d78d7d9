/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which MPI datatypes and operations liboptireduce computes exactly as MPI
 * defines them.  Only predefined handles are listed, so derived types
 * (contiguous, dup, struct, ...) never match.  Each is mapped by its size
 * and signedness, so MPI_LONG, MPI_AINT and Fortran INTEGER land on the
 * dtype of their width on this platform; a width the library lacks (16-bit
 * integers, long double, ...) stays unserved.
 */
#include <limits.h>

#include "pmpi_internal.h"

enum kind { K_SIGNED, K_UNSIGNED, K_FLOAT, K_CHAR };

struct entry {
	MPI_Datatype mpi;
	enum optireduce_dtype dtype;
};

#define MAX_ENTRIES 64
static struct entry table[MAX_ENTRIES];
static int nentries;

static int map(enum kind k, int size, enum optireduce_dtype *out)
{
	if (k == K_CHAR)
		k = CHAR_MIN < 0 ? K_SIGNED : K_UNSIGNED;
	switch (k) {
	case K_SIGNED:
		*out = size == 1   ? OPTIREDUCE_INT8
		       : size == 4 ? OPTIREDUCE_INT32
		                   : OPTIREDUCE_INT64;
		return size == 1 || size == 4 || size == 8 ? 0 : -1;
	case K_UNSIGNED:
		*out = size == 1   ? OPTIREDUCE_UINT8
		       : size == 4 ? OPTIREDUCE_UINT32
		                   : OPTIREDUCE_UINT64;
		return size == 1 || size == 4 || size == 8 ? 0 : -1;
	case K_FLOAT:
		*out = size == 4 ? OPTIREDUCE_FLOAT32 : OPTIREDUCE_FLOAT64;
		return size == 4 || size == 8 ? 0 : -1;
	default:
		return -1;
	}
}

static void add(MPI_Datatype dt, enum kind k)
{
	enum optireduce_dtype od;
	int size = 0;

	if (dt == MPI_DATATYPE_NULL || nentries == MAX_ENTRIES)
		return;
	/* A Fortran type of a compiler Open MPI was not built with has no size. */
	if (PMPI_Type_size(dt, &size) != MPI_SUCCESS || map(k, size, &od))
		return;
	table[nentries].mpi = dt;
	table[nentries].dtype = od;
	nentries++;
}

#if defined(MPIX_C_FLOAT16) || defined(MPIX_BFLOAT16)
/* 16-bit floats have no MPI name in the standard; take the extensions where they exist. */
static void add_half(MPI_Datatype dt, enum optireduce_dtype od)
{
	int size = 0;

	if (dt == MPI_DATATYPE_NULL || nentries == MAX_ENTRIES ||
	    PMPI_Type_size(dt, &size) != MPI_SUCCESS || size != 2)
		return;
	table[nentries].mpi = dt;
	table[nentries].dtype = od;
	nentries++;
}
#endif

void orp_types_init(void)
{
	nentries = 0;
	/* Most frequent first: the lookup is a linear scan. */
	add(MPI_FLOAT, K_FLOAT);
	add(MPI_DOUBLE, K_FLOAT);
	add(MPI_INT, K_SIGNED);
	add(MPI_LONG, K_SIGNED);
	add(MPI_UNSIGNED, K_UNSIGNED);
	add(MPI_UNSIGNED_LONG, K_UNSIGNED);
	add(MPI_LONG_LONG_INT, K_SIGNED);
	add(MPI_LONG_LONG, K_SIGNED);
	add(MPI_UNSIGNED_LONG_LONG, K_UNSIGNED);
	add(MPI_CHAR, K_CHAR);
	add(MPI_SIGNED_CHAR, K_SIGNED);
	add(MPI_UNSIGNED_CHAR, K_UNSIGNED);
	add(MPI_INT8_T, K_SIGNED);
	add(MPI_UINT8_T, K_UNSIGNED);
	add(MPI_INT32_T, K_SIGNED);
	add(MPI_UINT32_T, K_UNSIGNED);
	add(MPI_INT64_T, K_SIGNED);
	add(MPI_UINT64_T, K_UNSIGNED);
	add(MPI_AINT, K_SIGNED);
	add(MPI_COUNT, K_SIGNED);
	/* Not MPI_OFFSET: Open MPI 4.1 reduces it as unsigned, MPI_Offset is signed. */
	add(MPI_INTEGER, K_SIGNED);
	add(MPI_REAL, K_FLOAT);
	add(MPI_DOUBLE_PRECISION, K_FLOAT);
#ifdef MPI_INTEGER1
	add(MPI_INTEGER1, K_SIGNED);
#endif
#ifdef MPI_INTEGER4
	add(MPI_INTEGER4, K_SIGNED);
#endif
#ifdef MPI_INTEGER8
	add(MPI_INTEGER8, K_SIGNED);
#endif
#ifdef MPI_REAL4
	add(MPI_REAL4, K_FLOAT);
#endif
#ifdef MPI_REAL8
	add(MPI_REAL8, K_FLOAT);
#endif
#ifdef MPIX_C_FLOAT16
	add_half(MPIX_C_FLOAT16, OPTIREDUCE_FLOAT16);
#endif
#ifdef MPIX_BFLOAT16
	add_half(MPIX_BFLOAT16, OPTIREDUCE_BFLOAT16);
#endif
}

int orp_dtype_of(MPI_Datatype dt, enum optireduce_dtype *out)
{
	for (int i = 0; i < nentries; i++)
		if (table[i].mpi == dt) {
			*out = table[i].dtype;
			return 0;
		}
	return -1;
}

/* MPI_MINLOC/MAXLOC, the logical and bitwise ops, MPI_REPLACE and user ops stay with MPI. */
int orp_op_of(MPI_Op op, enum optireduce_op *out)
{
	if (op == MPI_SUM)
		*out = OPTIREDUCE_SUM;
	else if (op == MPI_PROD)
		*out = OPTIREDUCE_PROD;
	else if (op == MPI_MIN)
		*out = OPTIREDUCE_MIN;
	else if (op == MPI_MAX)
		*out = OPTIREDUCE_MAX;
	else
		return -1;
	return 0;
}

int orp_dtype_is_float(enum optireduce_dtype dt)
{
	return dt == OPTIREDUCE_FLOAT16 || dt == OPTIREDUCE_BFLOAT16 || dt == OPTIREDUCE_FLOAT32 ||
	       dt == OPTIREDUCE_FLOAT64;
}
