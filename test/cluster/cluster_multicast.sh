#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Multicast under bounded Transpose on 4 emulated hosts of 5 (docs/design.md, "Multicast"),
# the cloud routing 239.192.0.0/14 to each host's eth0 and its bridge flooding it:
#   1. multicast on: results within the transform's rounding, phase 2 sent to the group, two
#      communicators at once without cross-talk (test/mpi/mpi_multicast on);
#   2. multicast on, the estimator's statistics under injected loss (test/mpi/mpi_bounded -q:
#      reported loss near the injected one, estimates unbiased, error within the bound);
#   3. multicast on, 1 % real loss at every host's ingress, multicast datagrams included
#      (test/mpi/mpi_bounded --net-loss);
#   4. multicast on, the allreduce matrix on 2 and 5 hosts (test/mpi/mpi_allreduce -q on a
#      bounded communicator: float SUM and AVG bounded, nothing lost, the rest exact);
#   5. one host drops the group range (iptables INPUT): auto falls back on every rank and
#      operations complete by unicast; on fails creation on every rank (mpi_multicast fail).
# Exit 77 without root or network namespaces, or when a cluster is already up.
. "$(dirname "$0")/preamble.sh"
mc=$top/test/mpi/mpi_multicast
bd=$top/test/mpi/mpi_bounded
mr=$top/test/mpi/mpi_allreduce
need_built "$mc" "$bd" "$mr"
trap '"$cl" down >/dev/null 2>&1 || true' EXIT
"$cl" up -n 5 --rate none >/dev/null || { echo "cluster.sh up failed"; exit 99; }
run() { timeout 300 "$cl" run -n 4 -x OPTIREDUCE_LOG_LEVEL=1 "$@"; }
rc=0
echo "== multicast on"
run -x OPTIREDUCE_MULTICAST=on -- "$mc" on || rc=1
echo "== multicast on: statistics under injected loss"
run -x OPTIREDUCE_MULTICAST=on -- "$bd" -q || rc=1
echo "== multicast on: 1% loss at every host's ingress"
"$cl" set --loss 0.01 --loss-at ingress >/dev/null || { echo "cluster.sh set failed"; exit 99; }
run -x OPTIREDUCE_MULTICAST=on -- "$bd" --net-loss 0.01 --loss-at ingress || rc=1
"$cl" set --loss 0 >/dev/null || { echo "cluster.sh set failed"; exit 99; }
for n in 2 5; do
	echo "== multicast on: the allreduce matrix on $n hosts"
	timeout 300 "$cl" run -n "$n" -x OPTIREDUCE_LOG_LEVEL=1 -x OPTIREDUCE_MODE=bounded \
		-x OPTIREDUCE_HIERARCHY=0 -x OPTIREDUCE_MULTICAST=on -- "$mr" -q || rc=1
done
echo "== host 2 drops the group range: auto falls back, on fails"
ip netns exec orc-h2 iptables-legacy -w -I INPUT -d 239.192.0.0/14 -j DROP || exit 99
run -x OPTIREDUCE_MULTICAST=auto -- "$mc" fallback || rc=1
run -- "$mc" fail || rc=1
exit $rc
