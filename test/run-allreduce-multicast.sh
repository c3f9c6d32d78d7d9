#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run-allreduce-multicast.sh NP [ARGS...]: the allreduce matrix (test/mpi_allreduce) on NP
# ranks of this host on a bounded communicator whose Transpose sends phase 2 to a multicast
# group (the host's loopback; hierarchy=0).  Where this host cannot join a group, creation
# fails (multicast=on): then skipped (77).
np=$1
shift
export OPTIREDUCE_HIERARCHY=0 OPTIREDUCE_MODE=bounded OPTIREDUCE_MULTICAST=on
"${top_builddir:-.}/tools/optireduce_info" -t 2>/dev/null | grep -q '^Multicast: on; .* joined' ||
	{ echo "this host cannot join a multicast group: skip"; exit 77; }
exec "${top_srcdir:-.}/test/run-mpi.sh" "$np" "${top_builddir:-.}/test/mpi_allreduce" "$@"
