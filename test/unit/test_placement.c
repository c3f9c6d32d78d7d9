/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement (lib/topo/placement.c) on a made-up host, test/unit/topology_2numa_2nic.xml, loaded
 * through HWLOC_XMLFILE as the library loads the real machine: two NUMA nodes of two
 * cores of two PUs (core c has PUs c and c + 4), eth0 on node 0, eth1 and its RDMA device
 * mlx5_1 on node 1.  A rank in node 0 prefers eth0, in node 1 eth1; iface wins over
 * both; a host with no NIC near the rank, or none at all, leaves libfabric's order and
 * says so; the progress thread's PU is the last PU of the last core of every binding of
 * two PUs or more, and single-PU and unbound ranks are left alone.  Skips (77) without
 * hwloc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#include "optireduce.h"
#include "check.h"
#include "lib/topo/placement.h"

#ifndef HAVE_HWLOC
int main(void)
{
	printf("built without hwloc: skipping\n");
	return 77;
}
#else

#define NPU 8

static hwloc_bitmap_t cpus(const char *list)
{
	hwloc_bitmap_t s = hwloc_bitmap_alloc();

	if (!s || hwloc_bitmap_list_sscanf(s, list)) {
		fprintf(stderr, "bad cpuset %s\n", list);
		exit(1);
	}
	return s;
}

static struct or_nic_choice nic_for(hwloc_topology_t t, const char *list, const char *iface)
{
	struct or_nic_choice c;
	hwloc_bitmap_t s = cpus(list);

	or_place_nic(t, s, iface, &c);
	hwloc_bitmap_free(s);
	return c;
}

static void nic_cases(hwloc_topology_t t)
{
	struct or_nic_choice c;

	c = nic_for(t, "0-1,4-5", "");
	CHECK(strcmp(c.names, "eth0") == 0 && !c.only, "NUMA node 0 prefers eth0: [%s] %s", c.names,
	      c.why);
	CHECK(strcmp(c.why, "nic eth0: nearest to cpuset 0-1,4-5 (NUMA node 0)") == 0,
	      "and says why");
	c = nic_for(t, "4", "");
	CHECK(strcmp(c.names, "eth0") == 0, "one PU of node 0 prefers eth0: [%s]", c.names);
	c = nic_for(t, "2-3,6-7", "");
	CHECK(strcmp(c.names, "eth1,mlx5_1") == 0 && !c.only,
	      "NUMA node 1 prefers eth1, then its RDMA device: [%s] %s", c.names, c.why);
	CHECK(strcmp(c.why, "nic eth1: nearest to cpuset 2-3,6-7 (NUMA node 1)") == 0,
	      "and says why");
	c = nic_for(t, "0,2-3,6-7", "");
	CHECK(strcmp(c.names, "eth1,mlx5_1,eth0") == 0,
	      "four PUs on node 1, one on node 0: eth1 first, eth0 last: [%s] %s", c.names, c.why);
	c = nic_for(t, "0-7", "");
	CHECK(strcmp(c.names, "eth0,eth1,mlx5_1") == 0 && strstr(c.why, "as near as eth1"),
	      "the whole host: a tie, in hwloc's order, said: [%s] %s", c.names, c.why);
	CHECK(strstr(c.why, "(NUMA nodes 0-1)") != NULL, "both NUMA nodes named");

	c = nic_for(t, "0-1,4-5", "eth1");
	CHECK(strcmp(c.names, "eth1") == 0 && c.only, "iface wins over the nearest: [%s] %s",
	      c.names, c.why);
	CHECK(strcmp(c.why, "nic eth1: named by iface (nearest to cpuset 0-1,4-5: eth0)") == 0,
	      "and says what the nearest was");
	c = nic_for(t, "2-3", "ib9,eth0");
	CHECK(strcmp(c.names, "ib9,eth0") == 0 && c.only,
	      "an iface list is kept as written, devices hwloc does not know too: [%s]", c.names);
}

/* The same host with eth0 turned into a disk: node 0 has no NIC near. */
static void no_nic_near(const char *xml_path)
{
	static const char from[] = "name=\"eth0\" osdev_type=\"2\"";
	hwloc_topology_t t;
	struct or_nic_choice c;
	char *xml, *at;
	long len;
	FILE *f = fopen(xml_path, "rb");

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		CHECK(0, "read %s", xml_path);
		if (f)
			fclose(f);
		return;
	}
	xml = calloc(1, (size_t)len + 1);
	if (!xml || fread(xml, 1, (size_t)len, f) != (size_t)len || !(at = strstr(xml, from))) {
		CHECK(0, "read %s and find eth0 in it", xml_path);
		fclose(f);
		free(xml);
		return;
	}
	fclose(f);
	at[strlen(from) - 2] = '0'; /* osdev_type 0: a block device */
	hwloc_topology_init(&t);
	hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (hwloc_topology_set_xmlbuffer(t, xml, (int)len + 1) || hwloc_topology_load(t)) {
		CHECK(0, "load the host without eth0");
	} else {
		c = nic_for(t, "0-1,4-5", "");
		CHECK(c.names[0] == '\0' && !c.only,
		      "no NIC near node 0: no preference, libfabric's order: %s", c.why);
		CHECK(strcmp(c.why,
		             "nic: no preference (libfabric's order): no network device near "
		             "cpuset 0-1,4-5 (NUMA node 0)") == 0,
		      "and says why");
		c = nic_for(t, "2-3,6-7", "");
		CHECK(strcmp(c.names, "eth1,mlx5_1") == 0, "node 1 still prefers eth1: [%s]",
		      c.names);
	}
	hwloc_topology_destroy(t);
	free(xml);
}

/* A synthetic host has no I/O devices at all. */
static void no_nic_at_all(void)
{
	hwloc_topology_t t;
	struct or_nic_choice c;

	hwloc_topology_init(&t);
	if (hwloc_topology_set_synthetic(t, "package:2 [numa] core:2 pu:2") ||
	    hwloc_topology_load(t)) {
		CHECK(0, "load a synthetic host");
	} else {
		c = nic_for(t, "0-1", "");
		CHECK(c.names[0] == '\0' && strstr(c.why, "no network device in the topology"),
		      "a host without NICs: %s", c.why);
	}
	hwloc_topology_destroy(t);
}

/* The reference for this host: core c holds PUs c and c + 4, in logical order by c. */
static int expected_pu(unsigned mask)
{
	int core = -1, pu = -1;

	for (int p = 0; p < NPU; p++)
		if ((mask >> p & 1) && p % 4 > core)
			core = p % 4;
	for (int p = 0; p < NPU; p++)
		if ((mask >> p & 1) && p % 4 == core)
			pu = p;
	return pu;
}

static void progress_cases(hwloc_topology_t t)
{
	struct or_pu_choice p;
	hwloc_bitmap_t s = hwloc_bitmap_alloc();
	int wrong = 0, bound = 0;

	/* Every binding of this host: 255 nonempty sets of its 8 PUs. */
	for (unsigned mask = 1; mask < 1u << NPU; mask++) {
		int n = __builtin_popcount(mask), want = n > 1 && n < NPU ? expected_pu(mask) : -1;
		hwloc_bitmap_from_ulong(s, mask);
		or_place_progress(t, s, 1, &p);
		if (p.pu != want || (p.pu >= 0 && !hwloc_bitmap_isset(s, (unsigned)p.pu))) {
			if (wrong++ < 5)
				printf("      cpuset 0x%02x: PU %d, expected %d (%s)\n", mask, p.pu,
				       want, p.why);
		}
		bound += p.pu >= 0;
	}
	CHECK(wrong == 0 && bound == 255 - 8 - 1,
	      "every binding of 2-7 PUs: the last PU of its last core, inside it (%d bound, %d "
	      "wrong)",
	      bound, wrong);

	hwloc_bitmap_list_sscanf(s, "0-1,4-5");
	or_place_progress(t, s, 1, &p);
	CHECK(p.pu == 5 &&
	          strcmp(p.why, "progress thread on PU 5: last core of cpuset 0-1,4-5") == 0,
	      "NUMA node 0: %s", p.why);
	hwloc_bitmap_list_sscanf(s, "0-1,4");
	or_place_progress(t, s, 1, &p);
	CHECK(p.pu == 1, "PUs 0,1,4: PU 1, core 1's, not PU 4, core 0's sibling: %s", p.why);
	hwloc_bitmap_list_sscanf(s, "6");
	or_place_progress(t, s, 1, &p);
	CHECK(p.pu == -1 && strstr(p.why, "bound to PU 6 alone"), "one PU: %s", p.why);
	hwloc_bitmap_list_sscanf(s, "0-7");
	or_place_progress(t, s, 1, &p);
	CHECK(p.pu == -1 && strstr(p.why, "not bound (cpuset 0-7)"), "unbound: %s", p.why);
	hwloc_bitmap_list_sscanf(s, "2-3,6-7");
	or_place_progress(t, s, 0, &p);
	CHECK(p.pu == -1 && strstr(p.why, "progress_bind=0"), "progress_bind=0: %s", p.why);
	hwloc_bitmap_free(s);
}

/* The library's own path: HWLOC_XMLFILE, the binding (none: not this system), cached. */
static void decide_cases(void)
{
	struct or_topo *topo = NULL, *first;
	struct or_placement pl;
	char line[2 * OR_PLACE_WHY + 8], small[16];

	or_placement_decide(&topo, "", 1, &pl);
	first = topo;
	CHECK(topo != NULL, "HWLOC_XMLFILE loaded");
	CHECK(strcmp(pl.nic.names, "eth0,eth1,mlx5_1") == 0 && pl.progress.pu == -1,
	      "a process of a host that is not this one is unbound: [%s] %s; %s", pl.nic.names,
	      pl.nic.why, pl.progress.why);
	or_placement_decide(&topo, "eth1", 0, &pl);
	CHECK(topo == first, "the topology is loaded once");
	CHECK(strcmp(pl.nic.names, "eth1") == 0 && pl.nic.only, "iface through the library: %s",
	      pl.nic.why);
	CHECK(or_placement_describe(&pl, line, sizeof(line)) == 0 &&
	          strcmp(line, "nic eth1: named by iface (nearest to cpuset 0-7: eth0); progress "
	                       "thread not bound: progress_bind=0") == 0,
	      "one line: %s", line);
	CHECK(or_placement_describe(&pl, small, sizeof(small)) == -OPTIREDUCE_EOVERFLOW &&
	          strlen(small) == sizeof(small) - 1,
	      "a short buffer: truncated, terminated");
	or_topo_free(topo);
}

int main(void)
{
	const char *src = getenv("top_srcdir");
	char path[4096];
	hwloc_topology_t t;

	snprintf(path, sizeof(path), "%s/test/unit/topology_2numa_2nic.xml", src ? src : ".");
	setenv("HWLOC_XMLFILE", path, 1);
	unsetenv("HWLOC_THISSYSTEM");
	if (or_topo_load(&t)) {
		printf("cannot load %s\n", path);
		return 1;
	}
	CHECK(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) == 2 &&
	          hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU) == NPU,
	      "%s: 2 NUMA nodes, %d PUs", path, NPU);
	nic_cases(t);
	progress_cases(t);
	hwloc_topology_destroy(t);
	decide_cases();
	no_nic_near(path);
	no_nic_at_all();
	printf("%d failed\n", check_failures);
	return check_failures ? 1 : 0;
}

#endif
