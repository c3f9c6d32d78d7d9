/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the calling thread runs, from hwloc (lib/topo/topology.c).  Not installed. */
#ifndef OR_TOPOLOGY_H
#define OR_TOPOLOGY_H

#include <stddef.h>

/*
 * One line: CPU binding, its cores and NUMA nodes, network devices near and
 * far.  0, -EOVERFLOW when truncated (buf still terminated), -ENOSYS without
 * hwloc, -EIO when hwloc fails.
 */
int or_topology_describe(char *buf, size_t len);

#endif /* OR_TOPOLOGY_H */
