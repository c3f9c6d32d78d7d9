/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement through communicators (docs/design.md, "Placement"): iface restricts the
 * domains libfabric's endpoints open on (a domain no provider offers fails the creation
 * with -OPTIREDUCE_ENOPROVIDER, "lo" serves both channels), cannot change once the
 * communicator exists, and optireduce_comm_placement() says what was chosen.  Then two
 * ranks, threads of this process bound to PUs 0-1 of test/unit/topology_2numa_2nic.xml (its
 * PUs 0 and 1 are on cores 0 and 1; HWLOC_THISSYSTEM=1 makes hwloc take it for this
 * machine): each bounded communicator's progress thread is bound to PU 1, the last core of
 * the binding, and with progress_bind=0 it is not; either way a bounded allreduce of 1000
 * floats loses nothing and sums within rounding.  That part is skipped without hwloc
 * or without PUs 0 and 1; the whole test without a libfabric provider (77).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_quiet.h"
#include "optireduce.h"

#define SLOT 4096

/* Two ranks as threads: an allgather through a buffer and a barrier. */
static pthread_barrier_t bar;
static unsigned char slots[2][SLOT];

struct rank {
	int rank;
	const char *bind; /* progress_bind */
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	int ret;
	int reduced; /* one bounded allreduce: bounded, nothing lost, the sum within rounding */
	char place[600];
};

static int thread_allgather(const void *sbuf, void *rbuf, size_t len, void *info)
{
	struct rank *r = info;

	if (len > SLOT)
		return -1;
	memcpy(slots[r->rank], sbuf, len);
	pthread_barrier_wait(&bar);
	memcpy(rbuf, slots[0], len);
	memcpy((unsigned char *)rbuf + len, slots[1], len);
	pthread_barrier_wait(&bar);
	return 0;
}

static int self_allgather(const void *sbuf, void *rbuf, size_t len, void *info)
{
	(void)info;
	memcpy(rbuf, sbuf, len);
	return 0;
}

static int one_rank(optireduce_ctx_t *ctx, enum optireduce_mode mode, optireduce_comm_t **comm)
{
	struct optireduce_comm_attr attr = {
	    .oob = {.allgather = self_allgather, .rank = 0, .size = 1},
	    .mode = mode,
	};
	return optireduce_comm_create(ctx, &attr, comm);
}

/* iface on one-rank communicators; returns 77 without a provider. */
static int iface_cases(void)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm = NULL;
	char buf[600], small[8];
	int ret;

	CHECK(optireduce_init(OPTIREDUCE_API_VERSION, &ctx) == 0);
	ret = one_rank(ctx, OPTIREDUCE_MODE_EXACT, &comm);
	if (ret == -OPTIREDUCE_ENOPROVIDER)
		return 77;
	CHECK(ret == 0);
	CHECK(optireduce_comm_placement(comm, buf, sizeof(buf)) == 0);
	printf("default: %s\n", buf);
	CHECK(strncmp(buf, "nic", 3) == 0 && strstr(buf, "; progress thread ") != NULL);
	CHECK(optireduce_comm_placement(NULL, buf, sizeof(buf)) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_placement(comm, NULL, 8) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_placement(comm, buf, 0) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_placement(comm, small, sizeof(small)) == -OPTIREDUCE_EOVERFLOW);
	CHECK(memchr(small, '\0', sizeof(small)) != NULL);
	/* It fixes the endpoints: not changeable afterwards. */
	CHECK(optireduce_comm_set_param(comm, "iface", "lo") == -OPTIREDUCE_EBUSY);
	CHECK(optireduce_comm_set_param(comm, "progress_bind", "0") == -OPTIREDUCE_EBUSY);
	CHECK(optireduce_comm_destroy(comm) == 0);

	/* A device no provider offers: nothing opens, and the creation says so. */
	CHECK(optireduce_ctx_set_param(ctx, "iface", "nosuchnic0") == 0);
	comm = NULL;
	CHECK(one_rank(ctx, OPTIREDUCE_MODE_EXACT, &comm) == -OPTIREDUCE_ENOPROVIDER && !comm);
	CHECK(one_rank(ctx, OPTIREDUCE_MODE_BOUNDED, &comm) == -OPTIREDUCE_ENOPROVIDER && !comm);
	/* The loopback interface serves both channels (tcp and udp list it as a domain). */
	CHECK(optireduce_ctx_set_param(ctx, "iface", "nosuchnic0,lo") == 0);
	ret = one_rank(ctx, OPTIREDUCE_MODE_BOUNDED, &comm);
	CHECK(ret == 0);
	if (ret == 0) {
		CHECK(optireduce_comm_placement(comm, buf, sizeof(buf)) == 0);
		printf("iface nosuchnic0,lo: %s\n", buf);
		CHECK(strncmp(buf, "nic nosuchnic0,lo: named by iface", 33) == 0);
		CHECK(optireduce_comm_destroy(comm) == 0);
	}
	CHECK(optireduce_finalize(ctx) == 0);
	return 0;
}

/* 1000 floats of rank + 1 summed over both ranks: 3 each, on a clean loopback. */
static int reduce_once(optireduce_comm_t *comm, int rank)
{
	float s[1000], r[1000];
	struct optireduce_status st;
	int ok;

	for (int i = 0; i < 1000; i++)
		s[i] = (float)(rank + 1);
	if (optireduce_allreduce(comm, s, r, 1000, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st))
		return 0;
	ok = (st.flags & OPTIREDUCE_STATUS_BOUNDED) &&
	     st.elements_received[0] == st.elements_expected[0] &&
	     st.elements_received[1] == st.elements_expected[1];
	for (int i = 0; i < 1000 && ok; i++)
		ok = r[i] > 3.0f - 2e-4f && r[i] < 3.0f + 2e-4f;
	return ok;
}

static void *rank_main(void *arg)
{
	struct rank *r = arg;
	struct optireduce_comm_attr attr = {
	    .oob = {.allgather = thread_allgather,
	            .coll_info = r,
	            .rank = (uint32_t)r->rank,
	            .size = 2},
	    .mode = OPTIREDUCE_MODE_BOUNDED,
	};

	r->ret = optireduce_init(OPTIREDUCE_API_VERSION, &r->ctx);
	if (!r->ret)
		r->ret = optireduce_ctx_set_param(r->ctx, "hierarchy", "0");
	if (!r->ret)
		r->ret = optireduce_ctx_set_param(r->ctx, "progress_bind", r->bind);
	if (!r->ret)
		r->ret = optireduce_comm_create(r->ctx, &attr, &r->comm);
	if (!r->ret)
		r->ret = optireduce_comm_placement(r->comm, r->place, sizeof(r->place));
	if (!r->ret)
		r->reduced = reduce_once(r->comm, r->rank);
	return NULL;
}

/* Threads of this process whose CPUs are exactly list ("1"). */
static int threads_on(const char *list)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300], line[256];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
				line[strcspn(line, "\n")] = '\0';
				n += strcmp(line + 18 + strspn(line + 18, " \t"), list) == 0;
			}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* Two bounded ranks; how many threads ended up on PU 1 alone while they lived. */
static int two_ranks(const char *bind, char *place, size_t len)
{
	struct rank r[2] = {{0, bind, NULL, NULL, 0, 0, ""}, {1, bind, NULL, NULL, 0, 0, ""}};
	pthread_t th[2];
	int on1;

	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, rank_main, &r[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	CHECK(r[0].ret == 0 && r[1].ret == 0);
	CHECK(r[0].reduced && r[1].reduced);
	snprintf(place, len, "%s", r[0].place);
	on1 = threads_on("1");
	for (int i = 0; i < 2; i++) {
		if (r[i].comm)
			CHECK(optireduce_comm_destroy(r[i].comm) == 0);
		if (r[i].ctx)
			CHECK(optireduce_finalize(r[i].ctx) == 0);
	}
	return on1;
}

static void progress_cases(void)
{
	const char *src = getenv("top_srcdir");
	char path[4096], place[600], topo[64];
	cpu_set_t orig, two;
	int on1;

	if (optireduce_topology(topo, sizeof(topo)) == -OPTIREDUCE_ENOSYS) {
		printf("built without hwloc: progress thread binding not tested\n");
		return;
	}
	if (sched_getaffinity(0, sizeof(orig), &orig) || !CPU_ISSET(0, &orig) ||
	    !CPU_ISSET(1, &orig)) {
		printf("PUs 0 and 1 not both allowed: progress thread binding not tested\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/test/unit/topology_2numa_2nic.xml", src ? src : ".");
	setenv("HWLOC_XMLFILE", path, 1);
	setenv("HWLOC_THISSYSTEM", "1", 1);
	CPU_ZERO(&two);
	CPU_SET(0, &two);
	CPU_SET(1, &two);
	CHECK(sched_setaffinity(0, sizeof(two), &two) == 0); /* the rank threads inherit it */

	on1 = two_ranks("1", place, sizeof(place));
	printf("bound to PUs 0-1: %s; %d threads on PU 1\n", place, on1);
	CHECK(strstr(place, "nic eth0: nearest to cpuset 0-1 (NUMA node 0)") != NULL);
	CHECK(strstr(place, "progress thread on PU 1: last core of cpuset 0-1") != NULL);
	CHECK(on1 == 2); /* each rank's progress thread, and nothing else */
	on1 = two_ranks("0", place, sizeof(place));
	printf("progress_bind=0: %s; %d threads on PU 1\n", place, on1);
	CHECK(strstr(place, "progress thread not bound: progress_bind=0") != NULL);
	CHECK(on1 == 0);

	sched_setaffinity(0, sizeof(orig), &orig);
	unsetenv("HWLOC_XMLFILE");
	unsetenv("HWLOC_THISSYSTEM");
}

int main(void)
{
	if (iface_cases() == 77) {
		printf("no libfabric provider: skipping\n");
		return 77;
	}
	progress_cases();
	printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
