/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the calling thread runs, from hwloc: the CPUs it is bound to, the
 * cores and NUMA nodes behind them, and which network devices sit near them.
 * Reported (optireduce_topology(), optireduce_info, log level 2): a rank
 * left unbound, bound across NUMA nodes, or far from its NIC is a classic
 * cause of a slow allreduce, and placing processes is the launcher's job
 * (mpirun --bind-to, srun --cpu-bind), not this library's.  What is the
 * library's own, its endpoints' NIC and its progress thread, lib/topo/placement.c
 * places.
 */
#include <stdarg.h>
#include <stdio.h>

#include "config.h"

#include "optireduce.h"
#include "placement.h"
#include "topology.h"

#ifdef HAVE_HWLOC
#include <hwloc.h>

struct out {
	char *buf;
	size_t len, pos;
	int truncated;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->truncated)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->pos, o->len - o->pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->pos) {
		o->truncated = 1;
		o->pos = o->len - 1;
	} else {
		o->pos += (size_t)n;
	}
}

/* "0", "0,1": NUMA nodes whose CPUs intersect set; returns how many. */
static int put_numa(struct out *o, hwloc_topology_t t, hwloc_const_cpuset_t set)
{
	hwloc_obj_t n = NULL;
	int k = 0;

	while ((n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n)))
		if (n->cpuset && hwloc_bitmap_intersects(n->cpuset, set))
			put(o, "%s%u", k++ ? "," : "", n->os_index);
	return k;
}

static int count_cores(hwloc_topology_t t, hwloc_const_cpuset_t set)
{
	hwloc_obj_t c = NULL;
	int k = 0;

	while ((c = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_CORE, c)))
		if (hwloc_bitmap_intersects(c->cpuset, set))
			k++;
	return k;
}

/*
 * Network and OpenFabrics devices, near (their locality intersects the
 * binding) first, then far, each with its NUMA node(s).  hwloc 3 turned the
 * device type into a bit mask; the listing is left out there until tested.
 */
static void put_nics(struct out *o, hwloc_topology_t t, hwloc_const_cpuset_t set)
{
#if HWLOC_API_VERSION < 0x00030000
	for (int want_near = 1; want_near >= 0; want_near--) {
		hwloc_obj_t d = NULL;
		int k = 0;

		while ((d = hwloc_get_next_osdev(t, d))) {
			hwloc_obj_t anc;
			int near;

			if (!or_topo_is_nic(d))
				continue;
			anc = hwloc_get_non_io_ancestor_obj(t, d);
			near = !anc || !anc->cpuset || hwloc_bitmap_intersects(anc->cpuset, set);
			if (near != want_near)
				continue;
			if (k++)
				put(o, ", %s", d->name);
			else
				put(o, "; NICs %s: %s", want_near ? "near" : "far", d->name);
			if (anc && anc->cpuset) {
				put(o, " (NUMA ");
				put_numa(o, t, anc->cpuset);
				put(o, ")");
			}
		}
		if (want_near && !k)
			put(o, "; no NIC near");
	}
#else
	(void)o, (void)t, (void)set;
#endif
}

int or_topology_describe(char *buf, size_t len)
{
	struct out o = {buf, len, 0, 0};
	hwloc_topology_t t;
	hwloc_bitmap_t set;
	hwloc_const_cpuset_t allowed;
	char pus[128];
	int ret = 0, bound, nnuma;

	if (!buf || !len)
		return -OPTIREDUCE_EINVAL;
	*buf = '\0';
	if (or_topo_load(&t))
		return -OPTIREDUCE_EIO;
	set = hwloc_bitmap_alloc();
	if (!set) {
		ret = -OPTIREDUCE_EIO;
		goto out;
	}
	allowed = hwloc_topology_get_allowed_cpuset(t);
	/* The thread that calls the library drives its progress, so its binding is what counts. */
	if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_THREAD) &&
	    hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS))
		hwloc_bitmap_copy(set, allowed);
	hwloc_bitmap_and(set, set, allowed);
	bound = !hwloc_bitmap_isincluded(allowed, set);
	hwloc_bitmap_list_snprintf(pus, sizeof(pus), set);

	put(&o, "%s PUs %s (%d core%s) on NUMA node ", bound ? "bound to" : "not bound:", pus,
	    count_cores(t, set), count_cores(t, set) == 1 ? "" : "s");
	nnuma = put_numa(&o, t, set);
	if (nnuma > 1)
		put(&o, " (spans %d NUMA nodes: memory may be remote)", nnuma);
	put_nics(&o, t, set);
	if (o.truncated)
		ret = -OPTIREDUCE_EOVERFLOW;
out:
	hwloc_bitmap_free(set);
	hwloc_topology_destroy(t);
	return ret;
}

#else /* !HAVE_HWLOC */

int or_topology_describe(char *buf, size_t len)
{
	if (!buf || !len)
		return -OPTIREDUCE_EINVAL;
	snprintf(buf, len, "unknown (built without hwloc)");
	return -OPTIREDUCE_ENOSYS;
}

#endif
