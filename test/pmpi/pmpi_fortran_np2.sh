#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fortran MPI_ALLREDUCE ("use mpi" and "use mpi_f08") through the interposer, 2 ranks.
# Compiled here with mpifort; skip (77) without gfortran or a Fortran MPI.
exec "${top_srcdir:-.}/test/pmpi/run-fortran.sh" pmpi_fortran
