#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run-mpi.sh NP PROGRAM [ARGS...]: run a multi-rank test with mpirun on this
# host; exit 77 (skip) when mpirun is missing.
np=$1
shift
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found: skipping"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Tests must not reach beyond loopback, and ranks may outnumber cores.
exec timeout 600 mpirun -np "$np" --oversubscribe --mca mpi_yield_when_idle 1 \
	--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
	--mca pml ob1 "$@"
