#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# host_id.sh HOSTS PROGRAM [ARGS...]: run PROGRAM as an MPI rank that the library places
# on host (rank % HOSTS), through OPTIREDUCE_HOST_ID: one machine then exercises the
# leaders' network step, with ranks numbered across hosts unevenly (host 0 holds ranks
# 0, HOSTS, 2 HOSTS, ...).
hosts=$1
shift
r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}
OPTIREDUCE_HOST_ID=$((r % hosts))
export OPTIREDUCE_HOST_ID
exec "$@"
