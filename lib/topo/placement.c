/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement (docs/design.md, "Placement"): the network device nearest the rank's CPUs,
 * as NCCL and Open MPI pick theirs, and a PU of the rank's own binding for the bounded
 * progress thread.  hwloc stays here: ofi/ gets domain names, the channel a PU number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#include "lib/core/log.h"
#include "optireduce.h"
#include "placement.h"

/* The user named the devices (iface): those only, whatever the topology says. */
static void named(const char *iface, struct or_nic_choice *out)
{
	snprintf(out->names, sizeof(out->names), "%s", iface);
	out->only = 1;
	snprintf(out->why, sizeof(out->why), "nic %s: named by iface", iface);
}

/* No topology to decide from: iface or libfabric's order, and the thread where it starts. */
static void undecided(const char *iface, int bind, const char *reason, struct or_placement *out)
{
	if (iface && *iface)
		named(iface, &out->nic);
	else
		snprintf(out->nic.why, sizeof(out->nic.why),
		         "nic: no preference (libfabric's order): %s", reason);
	out->progress.pu = -1;
	snprintf(out->progress.why, sizeof(out->progress.why), "progress thread not bound: %s",
	         bind ? reason : "progress_bind=0");
}

void or_placement_warn_unoffered(const struct or_nic_choice *nic, const char *mode)
{
	or_log(OR_LOG_WARN,
	       "no %s-mode provider offers %s (parameter iface; optireduce_info -P lists each "
	       "provider's domains)",
	       mode, nic->names);
}

int or_placement_describe(const struct or_placement *p, char *buf, size_t len)
{
	int n;

	if (!p || !buf || !len)
		return -OPTIREDUCE_EINVAL;
	n = snprintf(buf, len, "%s; %s", p->nic.why, p->progress.why);
	return n >= 0 && (size_t)n < len ? 0 : -OPTIREDUCE_EOVERFLOW;
}

#ifdef HAVE_HWLOC

#define OR_NIC_MAX 32 /* near devices ranked; more are left to libfabric's order */

struct or_topo {
	hwloc_topology_t t;
};

struct nic {
	hwloc_obj_t dev;
	int overlap; /* PUs of the binding inside the device's locality */
	int weight;  /* PUs of that locality: fewer is closer (a package's, not the machine's) */
};

int or_topo_load(hwloc_topology_t *out)
{
	hwloc_topology_t t;

	if (hwloc_topology_init(&t))
		return -1;
	/* NICs are I/O objects, which hwloc does not discover unless asked. */
	hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (hwloc_topology_load(t)) {
		hwloc_topology_destroy(t);
		return -1;
	}
	*out = t;
	return 0;
}

/*
 * hwloc 3 made the OS device type a bit mask (hwloc's own code tests
 * osdev.types & HWLOC_OBJ_OSDEV_...); only the hwloc 2 branch has been built and run.
 */
int or_topo_is_nic(hwloc_obj_t d)
{
#if HWLOC_API_VERSION >= 0x00030000
	return (d->attr->osdev.types & (HWLOC_OBJ_OSDEV_NETWORK | HWLOC_OBJ_OSDEV_OPENFABRICS)) !=
	       0;
#else
	return d->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
	       d->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
#endif
}

/* The rank's CPUs: its process's binding (every thread's), else this thread's, else all. */
static void binding(hwloc_topology_t t, hwloc_cpuset_t set)
{
	hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(t);

	if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) &&
	    hwloc_get_cpubind(t, set, HWLOC_CPUBIND_THREAD))
		hwloc_bitmap_copy(set, allowed);
	hwloc_bitmap_and(set, set, allowed);
	if (hwloc_bitmap_iszero(set))
		hwloc_bitmap_copy(set, allowed);
}

/* "0", "0-1": the NUMA nodes whose PUs set holds some of. */
static void numa_list(hwloc_topology_t t, hwloc_const_cpuset_t set, char *buf, size_t len, int *n)
{
	hwloc_bitmap_t ns = hwloc_bitmap_alloc();

	*n = 0;
	snprintf(buf, len, "?");
	if (!ns)
		return;
	hwloc_cpuset_to_nodeset(t, set, ns);
	*n = hwloc_bitmap_weight(ns);
	hwloc_bitmap_list_snprintf(buf, len, ns);
	hwloc_bitmap_free(ns);
}

static int closer(const struct nic *a, const struct nic *b)
{
	return a->overlap > b->overlap || (a->overlap == b->overlap && a->weight < b->weight);
}

/*
 * The devices whose locality (the CPUs of their nearest non-I/O ancestor, as hwloc and
 * Open MPI define it) holds some of set, closest first: most of set, then the smallest
 * locality, then hwloc's order.  *nnics counts every network device in the topology.
 */
static int rank_nics(hwloc_topology_t t, hwloc_const_cpuset_t set, struct nic *near, int *nnics)
{
	hwloc_bitmap_t tmp = hwloc_bitmap_alloc();
	hwloc_obj_t d = NULL;
	int k = 0;

	*nnics = 0;
	while (tmp && (d = hwloc_get_next_osdev(t, d))) {
		hwloc_obj_t anc;
		hwloc_const_cpuset_t loc;
		struct nic c;
		int i;

		if (!d->name || !or_topo_is_nic(d))
			continue;
		++*nnics;
		anc = hwloc_get_non_io_ancestor_obj(t, d);
		loc = anc && anc->cpuset ? anc->cpuset : hwloc_topology_get_topology_cpuset(t);
		hwloc_bitmap_and(tmp, loc, set);
		c.dev = d;
		c.overlap = hwloc_bitmap_weight(tmp);
		c.weight = hwloc_bitmap_weight(loc);
		if (c.overlap <= 0 || k == OR_NIC_MAX)
			continue;
		for (i = k++; i > 0 && closer(&c, &near[i - 1]); i--)
			near[i] = near[i - 1];
		near[i] = c;
	}
	hwloc_bitmap_free(tmp);
	return k;
}

/* names = the near devices' names, comma-separated, as many as fit. */
static void join_names(const struct nic *near, int k, char *names, size_t len)
{
	size_t pos = 0;

	names[0] = '\0';
	for (int i = 0; i < k; i++) {
		int n = snprintf(names + pos, len - pos, "%s%s", i ? "," : "", near[i].dev->name);
		if (n < 0 || (size_t)n >= len - pos) {
			names[pos] =
			    '\0'; /* a name cut in half would match nothing, or the wrong one */
			return;
		}
		pos += (size_t)n;
	}
}

void or_place_nic(hwloc_topology_t t, hwloc_const_cpuset_t set, const char *iface,
                  struct or_nic_choice *out)
{
	struct nic near[OR_NIC_MAX];
	char cpus[96], numa[32], tie[80] = "";
	int k, nnics, nnuma;
	size_t n;

	memset(out, 0, sizeof(*out));
	hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), set);
	numa_list(t, set, numa, sizeof(numa), &nnuma);
	k = rank_nics(t, set, near, &nnics);
	if (iface && *iface) {
		named(iface, out);
		n = strlen(out->why);
		snprintf(out->why + n, sizeof(out->why) - n, " (nearest to cpuset %s: %s)", cpus,
		         k ? near[0].dev->name : "none");
		return;
	}
	if (!k) {
		snprintf(out->why, sizeof(out->why),
		         nnics ? "nic: no preference (libfabric's order): no network device near "
		                 "cpuset %s (NUMA node %s)"
		               : "nic: no preference (libfabric's order): no network device in the "
		                 "topology of cpuset %s (NUMA node %s)",
		         cpus, numa);
		return;
	}
	join_names(near, k, out->names, sizeof(out->names));
	/* An equal device on another card: the binding spans both cards' CPUs alike. */
	for (int i = 1; i < k && !closer(&near[0], &near[i]); i++)
		if (near[i].dev->parent != near[0].dev->parent) {
			snprintf(tie, sizeof(tie), ", as near as %s", near[i].dev->name);
			break;
		}
	snprintf(out->why, sizeof(out->why), "nic %s: nearest to cpuset %s (NUMA node%s %s)%s",
	         near[0].dev->name, cpus, nnuma > 1 ? "s" : "", numa, tie);
}

/*
 * The last PU of the last core (hwloc's logical order) that the binding holds, when the
 * rank is bound to more than one PU; not bound otherwise (docs/design.md, "Placement").
 */
void or_place_progress(hwloc_topology_t t, hwloc_const_cpuset_t set, int bind,
                       struct or_pu_choice *out)
{
	hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(t);
	hwloc_obj_t core = NULL, last = NULL;
	hwloc_bitmap_t tmp;
	char cpus[96];
	int npu = hwloc_bitmap_weight(set);

	out->pu = -1;
	hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), set);
	if (!bind) {
		snprintf(out->why, sizeof(out->why), "progress thread not bound: progress_bind=0");
		return;
	}
	if (npu == 1) {
		snprintf(out->why, sizeof(out->why),
		         "progress thread not bound: the rank is bound to PU %s alone, which the "
		         "thread inherits",
		         cpus);
		return;
	}
	if (npu < 1 || hwloc_bitmap_isincluded(allowed, set)) {
		snprintf(out->why, sizeof(out->why),
		         "progress thread not bound: the rank is not bound (cpuset %s)", cpus);
		return;
	}
	while ((core = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_CORE, core)))
		if (core->cpuset && hwloc_bitmap_intersects(core->cpuset, set))
			last = core;
	tmp = hwloc_bitmap_alloc();
	if (tmp) {
		hwloc_bitmap_and(tmp, last ? last->cpuset : set, set);
		out->pu = hwloc_bitmap_last(tmp);
		hwloc_bitmap_free(tmp);
	}
	if (out->pu < 0)
		snprintf(out->why, sizeof(out->why), "progress thread not bound: out of memory");
	else
		snprintf(out->why, sizeof(out->why),
		         "progress thread on PU %d: last %s of cpuset %s", out->pu,
		         last ? "core" : "PU", cpus);
}

void or_placement_decide(struct or_topo **topo, const char *iface, int bind,
                         struct or_placement *out)
{
	hwloc_bitmap_t set = NULL;

	memset(out, 0, sizeof(*out));
	if (!*topo) {
		struct or_topo *o = calloc(1, sizeof(*o));
		if (o && or_topo_load(&o->t) == 0)
			*topo = o;
		else
			free(o);
	}
	if (*topo)
		set = hwloc_bitmap_alloc();
	if (!set) {
		undecided(iface, bind,
		          *topo ? "out of memory" : "hwloc could not load the topology", out);
		return;
	}
	binding((*topo)->t, set);
	or_place_nic((*topo)->t, set, iface, &out->nic);
	or_place_progress((*topo)->t, set, bind, &out->progress);
	hwloc_bitmap_free(set);
}

void or_topo_free(struct or_topo *topo)
{
	if (!topo)
		return;
	hwloc_topology_destroy(topo->t);
	free(topo);
}

#else /* !HAVE_HWLOC */

void or_placement_decide(struct or_topo **topo, const char *iface, int bind,
                         struct or_placement *out)
{
	(void)topo;
	memset(out, 0, sizeof(*out));
	undecided(iface, bind, "built without hwloc", out);
}

void or_topo_free(struct or_topo *topo)
{
	(void)topo;
}

#endif
