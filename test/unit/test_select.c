/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Algorithm selection on a one-rank communicator: the tune strings of algorithm,
 * tune_exact and tune_bounded are parsed and validated when set (a malformed one is
 * -OPTIREDUCE_EINVAL and leaves the value as it was), the first matching range wins, sizes
 * no range holds fall through to the built-in rule, and optireduce_comm_algorithm_rule
 * says which rule is in force.
 */
#include <stdio.h>
#include <string.h>

#include "check_quiet.h"
#include "optireduce.h"

static int self_allgather(const void *sbuf, void *rbuf, size_t len, void *info)
{
	(void)info;
	memcpy(rbuf, sbuf, len);
	return 0;
}

static int alg_id(const char *name)
{
	for (int i = 0; optireduce_algorithm_name(i); i++)
		if (strcmp(optireduce_algorithm_name(i), name) == 0)
			return i;
	return -1;
}

/* The algorithm an exact float32 SUM of bytes bytes reports. */
static int ran(optireduce_comm_t *comm, size_t bytes)
{
	static float s[1 << 16], r[1 << 16];
	struct optireduce_status st;

	if (optireduce_allreduce(comm, s, r, bytes / 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st))
		return -1;
	return st.algorithm;
}

static void value_is(optireduce_comm_t *comm, const char *name, const char *want)
{
	char v[512];

	CHECK(optireduce_comm_get_param(comm, name, v, sizeof(v), NULL) == 0);
	if (strcmp(v, want) != 0) {
		fprintf(stderr, "%s is \"%s\", want \"%s\"\n", name, v, want);
		failures++;
	}
}

static void test_parse(optireduce_comm_t *comm)
{
	static const char *good[] = {
	    "auto",
	    "tree",
	    "0-64k:tree,64k-inf:ring",
	    "0-inf:transpose",
	    "8-9:ring",
	    "0-1m:recursive_doubling,1m-16m:tree",
	    "64k-inf:ring,0-64k:tree",
	    "0-1G:RING",
	};
	static const char *bad[] = {
	    "nosuch",
	    "0-64k",
	    "0-64k:",
	    "-64k:tree",
	    "0-:tree",
	    "64k-0:tree",
	    "1k-1k:tree",
	    "0-64k:tree,",
	    ",0-64k:tree",
	    "0-64k:tree,,64k-inf:ring",
	    "0-64k:nosuch",
	    "0-64k:tree:ring",
	    "x-64k:tree",
	    "0-64q:tree",
	    "0-64k: tree",
	    "inf-inf:tree",
	    "0-1k:tree 64k",
	    "0-64k:tree;64k-inf:ring",
	    "0-1:ring,1-2:ring,2-3:ring,3-4:ring,4-5:ring,5-6:ring,6-7:ring,7-8:ring,8-9:ring,"
	    "9-10:ring,10-11:ring,11-12:ring,12-13:ring,13-14:ring,14-15:ring,15-16:ring,"
	    "16-17:ring",
	};
	const char *params[] = {"algorithm", "tune_exact", "tune_bounded"};

	for (size_t p = 0; p < 3; p++) {
		CHECK(optireduce_comm_set_param(comm, params[p], "0-1k:ring") == 0);
		for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
			int want = p == 2 && strstr(good[i], "recursive_doubling") ? -22 : 0;
			int ret = optireduce_comm_set_param(comm, params[p], good[i]);
			if (ret != want)
				fprintf(stderr, "%s=\"%s\": %d, want %d\n", params[p], good[i], ret,
				        want);
			CHECK(ret == want);
		}
		CHECK(optireduce_comm_set_param(comm, params[p], "0-1k:ring") == 0);
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int ret = optireduce_comm_set_param(comm, params[p], bad[i]);
			if (ret != -OPTIREDUCE_EINVAL)
				fprintf(stderr, "%s=\"%s\" accepted\n", params[p], bad[i]);
			CHECK(ret == -OPTIREDUCE_EINVAL);
			value_is(comm, params[p], "0-1k:ring");
		}
		CHECK(optireduce_comm_set_param(comm, params[p], "auto") == 0);
	}
	/* tune_bounded names only what runs bounded; the algorithm parameter skips it. */
	CHECK(optireduce_comm_set_param(comm, "tune_bounded", "recursive_doubling") ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "tune_exact", "recursive_doubling") == 0);
	CHECK(optireduce_comm_set_param(comm, "algorithm", "0-1k:recursive_doubling") == 0);
	CHECK(optireduce_comm_set_param(comm, "tune_exact", "auto") == 0);
	CHECK(optireduce_comm_set_param(comm, "algorithm", "auto") == 0);
}

/* measure_exact: ranges naming up to four algorithms that run exact, or none. */
static void test_parse_measure(optireduce_comm_t *comm)
{
	static const char *good[] = {
	    "none",
	    "",
	    "4097-16385:recursive_doubling|rabenseifner",
	    "0-1k:ring",
	    "0-64k:tree|ring|transpose|rabenseifner,64k-inf:ring|tree",
	};
	static const char *bad[] = {
	    "auto",
	    "0-1k",
	    "0-1k:",
	    "0-1k:ring|",
	    "0-1k:|ring",
	    "0-1k:r||t",
	    "1k-0:ring",
	    "0-1k:rong",
	    "0-1k:ring,",
	    "0-1k:a|b|c|d|e",
	    "0-1k:ring|tree|transpose|rabenseifner|recursive_doubling",
	};
	char v[512];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int ret = optireduce_comm_set_param(comm, "measure_exact", good[i]);
		if (ret)
			fprintf(stderr, "measure_exact=\"%s\": %d\n", good[i], ret);
		CHECK(ret == 0);
	}
	CHECK(optireduce_comm_set_param(comm, "measure_exact", "0-1k:ring|tree") == 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = optireduce_comm_set_param(comm, "measure_exact", bad[i]);
		if (ret != -OPTIREDUCE_EINVAL)
			fprintf(stderr, "measure_exact=\"%s\" accepted\n", bad[i]);
		CHECK(ret == -OPTIREDUCE_EINVAL);
		value_is(comm, "measure_exact", "0-1k:ring|tree");
	}
	CHECK(optireduce_comm_get_param(comm, "measure_calls", v, sizeof(v), NULL) == 0);
	CHECK(strcmp(v, "16") == 0);
	CHECK(optireduce_comm_set_param(comm, "measure_calls", "0") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "measure_calls", "65") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "measure_exact", "none") == 0);
}

static void test_choice(optireduce_comm_t *comm)
{
	int rd = alg_id("recursive_doubling"), ring = alg_id("ring"), tree = alg_id("tree");
	int tar = alg_id("transpose"), rab = alg_id("rabenseifner");
	char rule[512];

	CHECK(rd >= 0 && ring >= 0 && tree >= 0 && tar >= 0 && rab >= 0);
	/* Built-in: recursive doubling up to small_msg_threshold (4k) bytes, Rabenseifner up to
	 * medium_msg_threshold (32k), ring above. */
	CHECK(ran(comm, 4096) == rd && ran(comm, 4100) == rab);
	CHECK(ran(comm, 32768) == rab && ran(comm, 32772) == ring);
	CHECK(optireduce_comm_algorithm_rule(comm, OPTIREDUCE_MODE_EXACT, rule, sizeof(rule)) == 0);
	/* measure_exact is none by default: the built-in rule alone. */
	CHECK(strcmp(rule, "0-4097:recursive_doubling,4097-32769:rabenseifner,32769-inf:ring "
	                   "(built-in)") == 0);
	CHECK(optireduce_comm_set_param(comm, "measure_exact",
	                                "4097-16385:recursive_doubling|rabenseifner") == 0);
	CHECK(optireduce_comm_algorithm_rule(comm, OPTIREDUCE_MODE_EXACT, rule, sizeof(rule)) == 0);
	CHECK(strcmp(rule, "4097-16385:recursive_doubling|rabenseifner measured (measure_exact), "
	                   "then 0-4097:recursive_doubling,4097-32769:rabenseifner,32769-inf:ring "
	                   "(built-in)") == 0);
	/* One rank measures nothing: no "measured so far". */
	CHECK(!strstr(rule, "so far"));
	CHECK(optireduce_comm_set_param(comm, "measure_exact", "none") == 0);
	/* medium_msg_threshold at most small_msg_threshold: no Rabenseifner range. */
	CHECK(optireduce_comm_set_param(comm, "small_msg_threshold", "16k") == 0);
	CHECK(optireduce_comm_set_param(comm, "medium_msg_threshold", "0") == 0);
	CHECK(ran(comm, 16384) == rd && ran(comm, 16388) == ring);
	CHECK(optireduce_comm_algorithm_rule(comm, OPTIREDUCE_MODE_EXACT, rule, sizeof(rule)) == 0);
	CHECK(strcmp(rule, "0-16385:recursive_doubling,16385-inf:ring (built-in)") == 0);
	CHECK(optireduce_comm_set_param(comm, "small_msg_threshold", "4k") == 0);
	CHECK(optireduce_comm_set_param(comm, "medium_msg_threshold", "32k") == 0);
	CHECK(optireduce_comm_algorithm_rule(comm, OPTIREDUCE_MODE_EXACT, rule, sizeof(rule)) == 0);
	CHECK(strstr(rule, "(built-in)") && !strstr(rule, "tune_exact"));
	/* tune_exact: [lo, hi), first match; sizes outside every range take the built-in. */
	CHECK(optireduce_comm_set_param(comm, "tune_exact",
	                                "0-64:tree,32-4k:transpose,8k-inf:ring") == 0);
	CHECK(ran(comm, 60) == tree && ran(comm, 64) == tar && ran(comm, 4092) == tar);
	CHECK(ran(comm, 4092) == tar && ran(comm, 4096) == rd && ran(comm, 8192) == ring &&
	      ran(comm, 262144) == ring);
	CHECK(optireduce_comm_algorithm_rule(comm, OPTIREDUCE_MODE_EXACT, rule, sizeof(rule)) == 0);
	CHECK(strncmp(rule, "0-64:tree,32-4k:transpose,8k-inf:ring (tune_exact), then ", 57) == 0);
	/* tune_bounded does not touch exact operations. */
	CHECK(optireduce_comm_set_param(comm, "tune_bounded", "0-inf:tree") == 0);
	CHECK(ran(comm, 60) == tree && ran(comm, 64) == tar);
	/* The algorithm parameter comes first; what it does not cover goes on to tune_exact. */
	CHECK(optireduce_comm_set_param(comm, "algorithm", "0-16:ring") == 0);
	CHECK(ran(comm, 12) == ring && ran(comm, 60) == tree);
	CHECK(optireduce_comm_set_param(comm, "algorithm", "tree") == 0);
	CHECK(ran(comm, 262144) == tree);
	/* A failed set changes nothing. */
	CHECK(optireduce_comm_set_param(comm, "tune_exact", "0-64:tre") == -OPTIREDUCE_EINVAL);
	value_is(comm, "tune_exact", "0-64:tree,32-4k:transpose,8k-inf:ring");
	CHECK(optireduce_comm_algorithm_rule(comm, OPTIREDUCE_MODE_EXACT, rule, 8) ==
	      -OPTIREDUCE_EOVERFLOW);
	CHECK(optireduce_comm_algorithm_rule(comm, (enum optireduce_mode)7, rule, sizeof(rule)) ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "measure_exact", "none") == 0);
	CHECK(optireduce_comm_algorithm_rule(NULL, OPTIREDUCE_MODE_EXACT, rule, sizeof(rule)) ==
	      -OPTIREDUCE_EBADHANDLE);
}

int main(void)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	struct optireduce_comm_attr attr = {
	    .oob = {.allgather = self_allgather, .rank = 0, .size = 1},
	    .mode = OPTIREDUCE_MODE_EXACT,
	};
	int ret;

	if (optireduce_init(OPTIREDUCE_API_VERSION, &ctx))
		return 1;
	ret = optireduce_comm_create(ctx, &attr, &comm);
	if (ret == -OPTIREDUCE_ENOPROVIDER) {
		printf("no libfabric provider: skipping\n");
		optireduce_finalize(ctx);
		return 77;
	}
	if (ret)
		return 1;
	test_parse(comm);
	test_parse_measure(comm);
	test_choice(comm);
	optireduce_comm_destroy(comm);
	optireduce_finalize(ctx);
	printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
