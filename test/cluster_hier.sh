#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Ranks that share a host on the emulated cloud (test/cluster/): 2 hosts x 2 ranks and
# 3 hosts x 2 ranks numbered across hosts (--map-by node: host 0 holds ranks 0 and 3),
# exact (the correctness matrix, small counts, and mpi_hier's outstanding nonblocking
# operations) and bounded (loss injected on the leaders' network step); then the time
# communicator creation takes with one and with two ranks per host.  Exit 77 without
# root or network namespaces, or when a cluster is already up (never touches someone
# else's).  Run it under flock /tmp/orc-cluster.lock.
here=$(cd "$(dirname "$0")" && pwd)
cl=$here/cluster/cluster.sh
bin=$(cd "${top_builddir:-.}" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "needs root: skip"; exit 77; }
for c in ip tc iptables-legacy mpirun unshare; do
	command -v "$c" >/dev/null 2>&1 || { echo "'$c' not found: skip"; exit 77; }
done
unshare --net true 2>/dev/null || { echo "no network namespaces: skip"; exit 77; }
if ip netns list 2>/dev/null | grep -q '^orc-'; then
	echo "an emulated cluster is already up: skip"
	exit 77
fi
for p in test/mpi_allreduce test/mpi_hier test/mpi_bounded bench/comm_create_bench; do
	[ -x "$bin/$p" ] || { echo "$bin/$p not built"; exit 99; }
done
trap '"$cl" down >/dev/null 2>&1 || true' EXIT
"$cl" up -n 3 --rate none >/dev/null || { echo "cluster.sh up failed"; exit 99; }
fail=0
run() {
	echo "== $*"
	timeout 600 "$cl" run -x OPTIREDUCE_LOG_LEVEL=1 "$@" || { echo "FAILED: $*"; fail=1; }
}
run -n 4 --per-host 2 -- "$bin/test/mpi_allreduce" -q
run -n 4 --per-host 2 -- "$bin/test/mpi_hier"
run -n 4 --per-host 2 -- "$bin/test/mpi_bounded" -q
run -n 6 --per-host 2 --map-by node -- "$bin/test/mpi_allreduce" -q
run -n 6 --per-host 2 --map-by node -- "$bin/test/mpi_hier"
run -n 3 -- "$bin/bench/comm_create_bench" -n 9
run -n 6 --per-host 2 --map-by node -- "$bin/bench/comm_create_bench" -n 9
exit $fail
