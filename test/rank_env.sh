#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rank_env.sh RANK NAME=VALUE PROGRAM [ARGS...]: run PROGRAM as an MPI rank, with NAME=VALUE
# in its environment when it is rank RANK: one rank configured unlike the others.
who=$1 set=$2
shift 2
r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}
if [ "$r" = "$who" ]; then
	export "${set%%=*}=${set#*=}"
fi
exec "$@"
