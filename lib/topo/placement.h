/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement (lib/topo/placement.c; docs/design.md, "Placement"): which network device a
 * rank's endpoints prefer, and which PU its bounded progress thread is bound to, decided
 * from hwloc by the core and handed down as plain names and numbers: ofi/ orders
 * libfabric's domains by the names, the bounded channel binds its thread to the PU.
 * Include config.h first.
 */
#ifndef OR_PLACEMENT_H
#define OR_PLACEMENT_H

#include <stddef.h>

#define OR_PLACE_NAMES 256 /* as OR_PARAM_STRLEN: iface fits */
#define OR_PLACE_WHY   256

struct or_nic_choice {
	char names[OR_PLACE_NAMES]; /* domain names, comma-separated, best first; "" = any */
	int only;                   /* the user named them (iface): no other domain */
	char why[OR_PLACE_WHY];     /* "nic eth1: nearest to cpuset 4-7 (NUMA node 1)" */
};

struct or_pu_choice {
	int pu; /* OS index of the PU to bind the progress thread to; -1: not bound */
	char why[OR_PLACE_WHY]; /* "progress thread on PU 7: last core of cpuset 4-7" */
};

struct or_placement {
	struct or_nic_choice nic;
	struct or_pu_choice progress;
};

/* hwloc's topology of this machine, I/O devices included; loaded once per context. */
struct or_topo;

/*
 * For the calling process's CPU binding: the NIC (iface wins when not empty) and the
 * progress thread's PU (none when bind is 0).  *topo is loaded at the first call and
 * kept for the next ones (or_topo_free).  Always fills *out; without hwloc, or when
 * hwloc fails, the choice is iface or none, and why says so.
 */
void or_placement_decide(struct or_topo **topo, const char *iface, int bind,
                         struct or_placement *out);
void or_topo_free(struct or_topo *topo);
/* One line: the NIC's why, then the progress thread's. 0 or -OPTIREDUCE_EOVERFLOW. */
int or_placement_describe(const struct or_placement *p, char *buf, size_t len);
/* Warns that no provider for mode ("exact", "bounded") offers the devices iface named. */
void or_placement_warn_unoffered(const struct or_nic_choice *nic, const char *mode);

#ifdef HAVE_HWLOC
#include <hwloc.h>

/* Loads this machine's topology (or HWLOC_XMLFILE's) with its network devices. 0 or -1. */
int or_topo_load(hwloc_topology_t *t);
/* A network interface or an RDMA device. */
int or_topo_is_nic(hwloc_obj_t d);

/*
 * The decisions themselves: pure functions of a topology and a cpuset, so that tests
 * run them on made-up machines without binding anything.
 */
void or_place_nic(hwloc_topology_t t, hwloc_const_cpuset_t set, const char *iface,
                  struct or_nic_choice *out);
void or_place_progress(hwloc_topology_t t, hwloc_const_cpuset_t set, int bind,
                       struct or_pu_choice *out);
#endif

#endif /* OR_PLACEMENT_H */
