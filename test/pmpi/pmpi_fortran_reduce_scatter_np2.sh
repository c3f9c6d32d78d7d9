#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fortran MPI_REDUCE_SCATTER_BLOCK, MPI_IREDUCE_SCATTER_BLOCK and MPI_REDUCE_SCATTER
# ("use mpi" and "use mpi_f08") through the interposer, 2 ranks.  Compiled here with
# mpifort; skip (77) without gfortran or a Fortran MPI.
command -v gfortran >/dev/null 2>&1 || { echo "gfortran not found: skipping"; exit 77; }
command -v mpifort >/dev/null 2>&1 || { echo "mpifort not found: skipping"; exit 77; }
command -v mpicc >/dev/null 2>&1 || { echo "mpicc not found: skipping"; exit 77; }
src="${top_srcdir:-.}/test/pmpi"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pmpi_fortran_rs.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
printf 'program t\nuse mpi\nend program t\n' >"$tmp/probe.f90"
if ! (cd "$tmp" && mpifort -c probe.f90) >/dev/null 2>&1; then
	echo "mpifort cannot build 'use mpi': skipping"
	exit 77
fi
mpicc -c -I"${top_srcdir:-.}/lib" "$src/pmpi_fortran_counts.c" -o "$tmp/counts.o" || exit 99
mpifort -J "$tmp" -o "$tmp/rs" "$src/pmpi_fortran_reduce_scatter.f90" "$tmp/counts.o" || exit 99
"${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 "$tmp/rs" || exit $?
printf 'program t\nuse mpi_f08\nend program t\n' >"$tmp/probe.f90"
if (cd "$tmp" && mpifort -c probe.f90) >/dev/null 2>&1; then
	mpifort -J "$tmp" -o "$tmp/rs_f08" "$src/pmpi_fortran_reduce_scatter_f08.f90" "$tmp/counts.o" ||
		exit 99
	"${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 "$tmp/rs_f08" || exit $?
else
	echo "no mpi_f08 module: 'use mpi_f08' not tested"
fi
