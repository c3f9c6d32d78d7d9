# SPDX-License-Identifier: BSD-3-Clause
# preamble.sh - sourced first by the tests on the emulated cloud (test/cluster/cluster_*.sh).  Exits
# 77 (skip) without root, ip, tc, iptables-legacy, mpirun or network namespaces, when
# another cluster test keeps the cloud past 15 minutes, or when a cluster is already up
# (never touching someone else's).  Sets cl (cluster.sh) and top (the build tree), and
# gives need_built FILE... (exit 99 when one is not an executable).
cl=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cluster.sh
top=$(cd "${top_builddir:-.}" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "needs root: skip"; exit 77; }
for c in ip tc iptables-legacy mpirun unshare; do
	command -v "$c" >/dev/null 2>&1 || { echo "'$c' not found: skip"; exit 77; }
done
unshare --net true 2>/dev/null || { echo "no network namespaces: skip"; exit 77; }
# The cluster tests of one make check take turns (make -j runs them side by side); not
# /tmp/orc-cluster.lock, which a caller may already hold around make check.
exec 8>/tmp/orc-cluster-tests.lock
flock -w 900 8 || { echo "another cluster test kept the emulated cloud: skip"; exit 77; }
if ip netns list 2>/dev/null | grep -q '^orc-'; then
	echo "an emulated cluster is already up: skip"
	exit 77
fi

need_built() {
	local f
	for f in "$@"; do
		[ -x "$f" ] || { echo "$f not built"; exit 99; }
	done
}
