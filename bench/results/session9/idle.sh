#!/usr/bin/env bash
# Session 9: does an idle bounded communicator slow the MPI baseline in the same process?
# Its progress thread polls the datagram socket every progress_idle_us (200 us) while the
# application is outside the library: 5000 wake-ups per second per rank.  MPI_Allreduce
# at 4 MiB on the clean 200 Mbit/s cluster: alone (--only mpi, no communicator), next to
# the default communicator, and next to one whose thread sleeps 100 ms.
# Usage: bench/results/session9/idle.sh BENCH_BINARY [fixed]
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/idle
. "$HERE/../../scenarios.sh"
[ -z "${2:-}" ] && run mpi-alone -- --sync-start 50 -m 4m:4m --iter-large 100 --only mpi
[ -z "${2:-}" ] && run mpi-next-to-default -- --sync-start 50 -m 4m:4m --iter-large 100
[ -z "${2:-}" ] && run mpi-next-to-idle100ms -- --sync-start 50 -m 4m:4m --iter-large 100 --param progress_idle_us=100000
[ -z "${2:-}" ] && run mpi-alone-2 -- --sync-start 50 -m 4m:4m --iter-large 100 --only mpi
# After the fix (progress_idle_us 2 ms, capped by the socket buffer): with SUFFIX "fixed".
if [ "${2:-}" = fixed ]; then
	run mpi-next-to-default-fixed -- --sync-start 50 -m 4m:4m --iter-large 100
	run mpi-alone-3 -- --sync-start 50 -m 4m:4m --iter-large 100 --only mpi
fi
