/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_info: version, libfabric providers, algorithms, and every
 * parameter with its current value and where that value came from, in the
 * spirit of fi_info and ucc_info.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "optireduce.h"

static int self_allgather(const void *sbuf, void *rbuf, size_t len, void *info)
{
	(void)info;
	memcpy(rbuf, sbuf, len);
	return 0;
}

/* libfabric lists a provider once per matching info; show each combination once. */
static void print_provider(const char *prov, const char *fabric, const char *domain, size_t max_msg,
                           void *arg)
{
	static char seen[64][160];
	static int nseen;
	char key[160];

	(void)arg;
	snprintf(key, sizeof(key), "%s|%s|%s", prov, fabric, domain);
	for (int i = 0; i < nseen; i++)
		if (strcmp(seen[i], key) == 0)
			return;
	if (nseen < 64)
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
	printf("  %-14s fabric %-18s domain %-10s max_msg_size %zu\n", prov, fabric, domain,
	       max_msg);
}

static void usage(const char *argv0)
{
	printf(
	    "Usage: %s [-p] [-a] [-P] [-t] [-h]\n"
	    "  -p  parameters only    -a  algorithms only    -P  providers only\n"
	    "  -t  topology only (where this process runs, from hwloc, and the NIC and progress\n"
	    "      thread PU a communicator would choose there)\n"
	    "Parameters are set with OPTIREDUCE_<NAME>=value or optireduce_comm_set_param().\n",
	    argv0);
}

/* What communicator creation compares to find the ranks that share a host (lib/core/comm.c). */
static void print_host(void)
{
	const char *id = getenv("OPTIREDUCE_HOST_ID"), *h = getenv("OPTIREDUCE_HIERARCHY");
	char name[256] = "", ns[64] = "?";
	ssize_t n;

	gethostname(name, sizeof(name) - 1);
	n = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1);
	if (n > 0)
		ns[n] = 0;
	if (id && *id)
		printf("Host: host_id \"%s\"", id);
	else
		printf("Host: %s, network namespace %s", name, ns);
	if (h && (!strcmp(h, "0") || !strcmp(h, "false") || !strcmp(h, "no") || !strcmp(h, "off")))
		printf(" (hierarchy off: every rank on the network)\n");
	else
		printf(" (ranks with the same identity share memory; the layout a "
		       "communicator found is logged at log_level 2)\n");
}

/* What a communicator created here chose for its endpoints and progress thread, and why. */
static void print_placement(optireduce_comm_t *comm)
{
	char place[600];

	if (!comm || optireduce_comm_placement(comm, place, sizeof(place)) < 0)
		snprintf(place, sizeof(place), "? (no communicator could be created)");
	printf("Placement: %s\n", place);
}

/* Whether a bounded communicator could multicast from here (docs/design.md, "Multicast"). */
static void print_multicast(optireduce_ctx_t *ctx, optireduce_comm_t *comm)
{
	char why[256], mode[16] = "?";
	int ret = optireduce_multicast_check(ctx, why, sizeof(why));

	if (comm)
		optireduce_comm_get_param(comm, "multicast", mode, sizeof(mode), NULL);
	if (ret < 0)
		snprintf(why, sizeof(why), "%s", optireduce_strerror(ret));
	printf("Multicast: %s; %s%s\n", mode, ret > 0 ? "" : "cannot join a group: ", why);
	printf("           (a bounded communicator multicasts when every rank hears every other "
	       "on its group; optireduce_comm_multicast() and the log at level 2 say why not)\n");
}

/* Which datagram transport a bounded communicator would run on here, and why. */
static void print_transport(optireduce_ctx_t *ctx)
{
	char what[640];
	int ret = optireduce_transport_check(ctx, what, sizeof(what));

	if (ret < 0)
		snprintf(what, sizeof(what), "%s", optireduce_strerror(ret));
	printf("Bounded transport: %s\n", what);
	printf("           (parameter bounded_transport; the log at level 2 says the same for "
	       "each communicator)\n");
}

/* A one-rank communicator shows values exactly as a real one would resolve them. */
static optireduce_comm_t *self_comm(optireduce_ctx_t *ctx)
{
	struct optireduce_comm_attr attr = {
	    .oob = {.allgather = self_allgather, .rank = 0, .size = 1},
	    .mode = OPTIREDUCE_MODE_EXACT,
	};
	optireduce_comm_t *comm = NULL;

	return optireduce_comm_create(ctx, &attr, &comm) ? NULL : comm;
}

/* The selection rule in force for each mode, as this environment sets it. */
static void print_rule(optireduce_comm_t *comm)
{
	static const char *modes[] = {"exact", "bounded"};
	char rule[1024];

	printf("Algorithm selection (algorithm, tune_exact, tune_bounded):\n");
	for (int m = 0; m < 2; m++) {
		if (!comm || optireduce_comm_algorithm_rule(
		                 comm, m ? OPTIREDUCE_MODE_BOUNDED : OPTIREDUCE_MODE_EXACT, rule,
		                 sizeof(rule)))
			snprintf(rule, sizeof(rule), "?");
		printf("  %-8s %s\n", modes[m], rule);
	}
}

static void print_params(optireduce_comm_t *comm)
{
	static const char *src[] = {"default", "environment", "api"};
	struct optireduce_param_info pi;

	printf("Parameters (environment OPTIREDUCE_<NAME>):\n");
	for (int i = 0; optireduce_param_info(i, &pi) == 0; i++) {
		char val[256] = "?";
		enum optireduce_param_source s = OPTIREDUCE_PARAM_DEFAULT;
		if (comm)
			optireduce_comm_get_param(comm, pi.name, val, sizeof(val), &s);
		printf("  %-19s %-7s = %-12s [%s] (default %s)\n      %s\n", pi.name, pi.type,
		       *val ? val : "\"\"", src[s], *pi.defval ? pi.defval : "\"\"", pi.desc);
	}
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm = NULL;
	int opt, all = 1, p = 0, a = 0, P = 0, t = 0, ret;

	while ((opt = getopt(argc, argv, "paPth")) != -1) {
		switch (opt) {
		case 'p':
			p = 1, all = 0;
			break;
		case 'a':
			a = 1, all = 0;
			break;
		case 'P':
			P = 1, all = 0;
			break;
		case 't':
			t = 1, all = 0;
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? 0 : 1;
		}
	}
	ret = optireduce_init(OPTIREDUCE_API_VERSION, &ctx);
	if (ret) {
		fprintf(stderr, "optireduce_init: %s\n", optireduce_strerror(ret));
		return 1;
	}
	if (all) {
		printf("liboptireduce %s (API %u.%u), libfabric %s\n", optireduce_version_string(),
		       OPTIREDUCE_VERSION_MAJOR(optireduce_version()),
		       OPTIREDUCE_VERSION_MINOR(optireduce_version()),
		       optireduce_libfabric_version());
	}
	if (all || a || p || t)
		comm = self_comm(ctx);
	if (all || t) {
		char topo[512];
		/* This tool's own binding as launched: run it under mpirun to see a rank's. */
		optireduce_topology(topo, sizeof(topo));
		printf("Topology: %s\n", topo);
		print_placement(comm);
		print_host();
		print_multicast(ctx, comm);
		print_transport(ctx);
	}
	if (all || P) {
		printf("Exact channel providers (RDM, tagged):\n");
		optireduce_providers(OPTIREDUCE_MODE_EXACT, print_provider, NULL);
		printf("Bounded channel providers (DGRAM):\n");
		optireduce_providers(OPTIREDUCE_MODE_BOUNDED, print_provider, NULL);
	}
	if (all || a) {
		int w = 0;
		printf("Algorithms:\n");
		/* Names vary in length: align the descriptions on the longest. */
		for (int i = 0; optireduce_algorithm_name(i); i++)
			if ((int)strlen(optireduce_algorithm_name(i)) > w)
				w = (int)strlen(optireduce_algorithm_name(i));
		for (int i = 0; optireduce_algorithm_name(i); i++)
			printf("  %d %-*s %s\n", i, w, optireduce_algorithm_name(i),
			       optireduce_algorithm_desc(i));
	}
	if (all || a)
		print_rule(comm);
	if (all || p)
		print_params(comm);
	if (comm)
		optireduce_comm_destroy(comm);
	optireduce_finalize(ctx);
	return 0;
}
