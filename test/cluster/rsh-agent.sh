#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rsh-agent.sh - Open MPI launch agent for the emulated cloud (test/cluster/).
#
# Used by "cluster.sh run" as --mca plm_rsh_agent.  Called like ssh:
#   rsh-agent.sh [options] HOST COMMAND...
# HOST is an address 198.18.0.(1+i), a name hI / orc-hI, or an index I.  The
# command (a shell command line, joined like ssh joins it) runs in namespace
# orc-hI with TMPDIR=/tmp/orc-hI (Open MPI session dirs must not collide), in
# its own UTS namespace with hostname orc-hI, pinned to the host's CPUs if
# "cluster.sh up --straggler H:hog" assigned any.
set -euo pipefail

STATE=${ORC_STATE_DIR:-/run/optireduce-cluster}
NET=198.18.0

die() { echo "rsh-agent.sh: $*" >&2; exit 255; }

# ssh-style options are accepted and ignored (options with values are not).
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-*) shift ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || die "usage: rsh-agent.sh HOST COMMAND..."
host=$1
shift

case $host in
orc-h*) i=${host#orc-h} ;;
h*) i=${host#h} ;;
"$NET".*) i=${host#"$NET".}; [[ $i =~ ^[0-9]+$ ]] && i=$((i - 1)) ;;
*) i=$host ;;
esac
[[ $i =~ ^[0-9]+$ ]] || die "unknown host '$host'"
ns=orc-h$i
ip netns list | awk '{print $1}' | grep -qx "$ns" || die "no namespace $ns for host '$host' (is the cluster up?)"

mkdir -p "/tmp/$ns"
cmd=(ip netns exec "$ns" env "TMPDIR=/tmp/$ns" "ORC_HOST=h$i" "ORC_STATE_DIR=$STATE"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
if [ -s "$STATE/pin.h$i" ]; then cmd+=(taskset -c "$(cat "$STATE/pin.h$i")"); fi
# shellcheck disable=SC2016
cmd+=(unshare --uts /bin/sh -c 'printf %s "$0" >/proc/sys/kernel/hostname && exec /bin/sh -c "$1"' "$ns" "$*")
exec "${cmd[@]}"
