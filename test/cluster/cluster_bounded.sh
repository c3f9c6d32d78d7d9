#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bounded mode on the emulated cloud with real loss: 3 hosts (network namespaces,
# test/cluster/), iptables dropping 1% of the packets arriving at each host, then 1% of
# the packets each host sends (their sends fail: counted as lost, in packets_send_failed).  The
# statistics of test/mpi/mpi_bounded --net-loss: reported loss near the real one,
# estimates unbiased, error within the estimator's bound.  Exit 77 without root or
# network namespaces, or when a cluster is already up (never touches someone else's).
. "$(dirname "$0")/preamble.sh"
prog=$top/test/mpi/mpi_bounded
need_built "$prog"
trap '"$cl" down >/dev/null 2>&1 || true' EXIT
"$cl" up -n 3 --rate none --loss 0.01 >/dev/null || { echo "cluster.sh up failed"; exit 99; }
rc=0
for at in ingress egress; do
	"$cl" set --loss 0.01 --loss-at "$at" >/dev/null || { echo "cluster.sh set failed"; exit 99; }
	echo "== loss 0.01 at $at"
	timeout 300 "$cl" run -n 3 -x OPTIREDUCE_LOG_LEVEL=1 -- "$prog" --net-loss 0.01 \
		--loss-at "$at" || rc=1
done
exit $rc
