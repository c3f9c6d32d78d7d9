#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bounded mode on 4 ranks of this host with phase 2 sent to a multicast group (the host's
# loopback): the estimator's statistics under injected loss, which takes a multicast datagram
# from every receiver at once, stay unbiased and within their bound (test/mpi_bounded).
# Where this host cannot join a group, creation fails (multicast=on): then skipped (77).
export OPTIREDUCE_HIERARCHY=0 OPTIREDUCE_MULTICAST=on
"${top_builddir:-.}/tools/optireduce_info" -t 2>/dev/null | grep -q '^Multicast: on; .* joined' ||
	{ echo "this host cannot join a multicast group: skip"; exit 77; }
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 "${top_builddir:-.}/test/mpi_bounded" -q
