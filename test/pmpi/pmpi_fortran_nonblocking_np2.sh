#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fortran MPI_IALLREDUCE ("use mpi" and "use mpi_f08") through the interposer, 2 ranks:
# MPI_WAIT, MPI_TEST, MPI_WAITALL over mixed requests, MPI_REQUEST_FREE.  Compiled here
# with mpifort; skip (77) without gfortran or a Fortran MPI.
command -v gfortran >/dev/null 2>&1 || { echo "gfortran not found: skipping"; exit 77; }
command -v mpifort >/dev/null 2>&1 || { echo "mpifort not found: skipping"; exit 77; }
command -v mpicc >/dev/null 2>&1 || { echo "mpicc not found: skipping"; exit 77; }
src="${top_srcdir:-.}/test/pmpi"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pmpi_fortran_nb.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
printf 'program t\nuse mpi\nend program t\n' >"$tmp/probe.f90"
if ! (cd "$tmp" && mpifort -c probe.f90) >/dev/null 2>&1; then
	echo "mpifort cannot build 'use mpi': skipping"
	exit 77
fi
mpicc -c -I"${top_srcdir:-.}/lib" "$src/pmpi_fortran_counts.c" -o "$tmp/counts.o" || exit 99
mpifort -J "$tmp" -o "$tmp/nb" "$src/pmpi_fortran_nonblocking.f90" "$tmp/counts.o" || exit 99
"${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 "$tmp/nb" || exit $?
printf 'program t\nuse mpi_f08\nend program t\n' >"$tmp/probe.f90"
if (cd "$tmp" && mpifort -c probe.f90) >/dev/null 2>&1; then
	mpifort -J "$tmp" -o "$tmp/nb_f08" "$src/pmpi_fortran_nonblocking_f08.f90" "$tmp/counts.o" ||
		exit 99
	"${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 "$tmp/nb_f08" || exit $?
else
	echo "no mpi_f08 module: 'use mpi_f08' not tested"
fi
