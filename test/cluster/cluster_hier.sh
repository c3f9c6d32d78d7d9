#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Ranks that share a host on the emulated cloud (test/cluster/): 2 hosts x 2 ranks and
# 3 hosts x 2 ranks numbered across hosts (--map-by node: host 0 holds ranks 0 and 3),
# exact (the correctness matrix, small counts, and mpi_hier's outstanding nonblocking
# operations) and bounded (loss injected on the leaders' network step); then the time
# communicator creation takes with one and with two ranks per host.  Exit 77 without
# root or network namespaces, or when a cluster is already up (never touches someone
# else's).  Run it under flock /tmp/orc-cluster.lock.
. "$(dirname "$0")/preamble.sh"
need_built "$top/test/mpi/mpi_allreduce" "$top/test/mpi/mpi_hier" "$top/test/mpi/mpi_bounded" \
	"$top/bench/comm_create_bench"
trap '"$cl" down >/dev/null 2>&1 || true' EXIT
"$cl" up -n 3 --rate none >/dev/null || { echo "cluster.sh up failed"; exit 99; }
fail=0
run() {
	echo "== $*"
	timeout 600 "$cl" run -x OPTIREDUCE_LOG_LEVEL=1 "$@" || { echo "FAILED: $*"; fail=1; }
}
run -n 4 --per-host 2 -- "$top/test/mpi/mpi_allreduce" -q
run -n 4 --per-host 2 -- "$top/test/mpi/mpi_hier"
run -n 4 --per-host 2 -- "$top/test/mpi/mpi_bounded" -q
run -n 6 --per-host 2 --map-by node -- "$top/test/mpi/mpi_allreduce" -q
run -n 6 --per-host 2 --map-by node -- "$top/test/mpi/mpi_hier"
run -n 3 -- "$top/bench/comm_create_bench" -n 9
run -n 6 --per-host 2 --map-by node -- "$top/bench/comm_create_bench" -n 9
exit $fail
