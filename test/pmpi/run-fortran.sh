#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run-fortran.sh NAME: builds test/pmpi/NAME.f90 ("use mpi") and, where the mpi_f08 module
# exists, NAME_f08.f90, each with pmpi_fortran_counts.c, and runs them on 2 ranks through
# the interposer (run-pmpi.sh).  Skip (77) without gfortran or a Fortran MPI.
name=${1:?usage: run-fortran.sh NAME}
command -v gfortran >/dev/null 2>&1 || { echo "gfortran not found: skipping"; exit 77; }
command -v mpifort >/dev/null 2>&1 || { echo "mpifort not found: skipping"; exit 77; }
command -v mpicc >/dev/null 2>&1 || { echo "mpicc not found: skipping"; exit 77; }
src="${top_srcdir:-.}/test/pmpi"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
printf 'program t\nuse mpi\nend program t\n' >"$tmp/probe.f90"
if ! (cd "$tmp" && mpifort -c probe.f90) >/dev/null 2>&1; then
	echo "mpifort cannot build 'use mpi': skipping"
	exit 77
fi
mpicc -c -I"${top_srcdir:-.}" "$src/pmpi_fortran_counts.c" -o "$tmp/counts.o" || exit 99
mpifort -J "$tmp" -o "$tmp/prog" "$src/$name.f90" "$tmp/counts.o" || exit 99
"$src/run-pmpi.sh" 2 "$tmp/prog" || exit $?
printf 'program t\nuse mpi_f08\nend program t\n' >"$tmp/probe.f90"
if (cd "$tmp" && mpifort -c probe.f90) >/dev/null 2>&1; then
	mpifort -J "$tmp" -o "$tmp/prog_f08" "$src/${name}_f08.f90" "$tmp/counts.o" || exit 99
	"$src/run-pmpi.sh" 2 "$tmp/prog_f08" || exit $?
else
	echo "no mpi_f08 module: 'use mpi_f08' not tested"
fi
