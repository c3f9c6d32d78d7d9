#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run-mpi.sh NP PROGRAM [ARGS...]: run a multi-rank test with mpirun on this
# host; exit 77 (skip) when mpirun is missing.
np=$1
shift
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found: skipping"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A session directory of its own: two mpiruns that start together under make -j2 race to
# create the shared one (orte_session_dir: "File exists") and one of them aborts.
sess=$(mktemp -d "${TMPDIR:-/tmp}/orc-mpirun.XXXXXX") || exit 99
trap 'rm -rf "$sess"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
# Tests must not reach beyond loopback, and ranks may outnumber cores.
timeout 600 mpirun -np "$np" --oversubscribe --mca mpi_yield_when_idle 1 \
	--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
	--mca pml ob1 --mca orte_tmpdir_base "$sess" "$@"
