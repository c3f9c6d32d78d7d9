/*
 * API contract on a one-rank communicator (no launcher needed): version
 * checks, the error table, parameters, and every bad argument returning its
 * negative code without touching a buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optireduce.h"

static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static int self_allgather(const void *sbuf, void *rbuf, size_t len, void *info)
{
	(void)info;
	memcpy(rbuf, sbuf, len);
	return 0;
}

static int failing_allgather(const void *sbuf, void *rbuf, size_t len, void *info)
{
	(void)sbuf, (void)rbuf, (void)len, (void)info;
	return -1;
}

static void test_errors(void)
{
	CHECK(strcmp(optireduce_strerror(0), "Success") == 0);
	CHECK(strcmp(optireduce_strerror(-OPTIREDUCE_EINVAL), "Invalid argument") == 0);
	CHECK(strcmp(optireduce_strerror(OPTIREDUCE_EINVAL), "Invalid argument") == 0);
	CHECK(OPTIREDUCE_EINVAL == 22 && OPTIREDUCE_ETIMEDOUT == 110);
	CHECK(OPTIREDUCE_EPEER >= 256);
	CHECK(strcmp(optireduce_strerror(-9999), "Unknown error") == 0);
	CHECK(strcmp(optireduce_strerror(-OPTIREDUCE_EPEER), "Unknown error") != 0);
}

static void test_params(optireduce_ctx_t *ctx, optireduce_comm_t *comm)
{
	char v[64];
	enum optireduce_param_source src;
	struct optireduce_param_info pi;

	CHECK(optireduce_comm_get_param(comm, "segment_size", v, sizeof(v), &src) == 0);
	CHECK(optireduce_comm_set_param(comm, "segment_size", "64k") == 0);
	CHECK(optireduce_comm_get_param(comm, "segment_size", v, sizeof(v), &src) == 0);
	CHECK(strcmp(v, "64k") == 0 && src == OPTIREDUCE_PARAM_API);
	CHECK(optireduce_comm_set_param(comm, "segment_size", "1") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "segment_size", "12q") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "no_such_param", "1") == -OPTIREDUCE_ENOPARAM);
	CHECK(optireduce_comm_set_param(comm, "hadamard", "maybe") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "hadamard", "off") == 0);
	CHECK(optireduce_comm_set_param(comm, "inject_loss", "1.5") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "inject_loss", "0.05") == 0);
	CHECK(optireduce_comm_set_param(comm, "mode", "bounded") == -OPTIREDUCE_EBUSY);
	/* Read once when the bounded channel is created: a later set would be a no-op. */
	CHECK(optireduce_comm_set_param(comm, "packet_payload", "1024") == -OPTIREDUCE_EBUSY);
	CHECK(optireduce_ctx_set_param(ctx, "packet_payload", "1024") == 0);
	CHECK(optireduce_comm_set_param(comm, "segment_size", NULL) == -OPTIREDUCE_EINVAL);
	/* A failed set changes nothing. */
	CHECK(optireduce_comm_get_param(comm, "segment_size", v, sizeof(v), &src) == 0);
	CHECK(strcmp(v, "64k") == 0);
	CHECK(optireduce_comm_get_param(comm, "segment_size", v, 2, &src) == -OPTIREDUCE_EOVERFLOW);
	CHECK(optireduce_ctx_set_param(ctx, "mode", "sideways") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_ctx_set_param(ctx, "spin_us", "10") == 0);
	/* Algorithm names and tune strings are checked when set, not silently ignored later. */
	CHECK(optireduce_comm_set_param(comm, "algorithm", "nosuch") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_ctx_set_param(ctx, "algorithm", "nosuch") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "algorithm", "0-32k:nosuch,32k-inf:ring") ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "algorithm", "x-32k:ring") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "algorithm", "32k-0:ring") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_set_param(comm, "algorithm", "0-32k:") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_get_param(comm, "algorithm", v, sizeof(v), &src) == 0);
	CHECK(strcmp(v, "auto") == 0);
	CHECK(optireduce_comm_set_param(comm, "algorithm", "Recursive_Doubling") == 0);
	CHECK(optireduce_comm_set_param(comm, "algorithm",
	                                "0-16k:recursive_doubling,16k-inf:ring") == 0);
	CHECK(optireduce_comm_set_param(comm, "algorithm", "auto") == 0);
	CHECK(optireduce_comm_set_param(comm, "small_msg_threshold", "64k") == 0);
	CHECK(optireduce_comm_set_param(comm, "small_msg_threshold", "-1") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_param_info(0, &pi) == 0 && pi.name && pi.desc);
	CHECK(optireduce_param_info(-1, &pi) == -OPTIREDUCE_ENOPARAM);
	CHECK(optireduce_param_info(10000, &pi) == -OPTIREDUCE_ENOPARAM);
}

static void test_bad_args(optireduce_comm_t *comm)
{
	float s[4] = {1, 2, 3, 4}, r[4] = {9, 9, 9, 9};
	optireduce_req_t *req = NULL;

	CHECK(optireduce_allreduce(NULL, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, NULL) ==
	      -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_allreduce(comm, NULL, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, NULL) ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_allreduce(comm, s, NULL, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, NULL) ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_allreduce(comm, s, r, 4, (enum optireduce_dtype)99, OPTIREDUCE_SUM,
	                           NULL) == -OPTIREDUCE_EDTYPE);
	CHECK(optireduce_allreduce(comm, s, r, 4, (enum optireduce_dtype) - 1, OPTIREDUCE_SUM,
	                           NULL) == -OPTIREDUCE_EDTYPE);
	CHECK(optireduce_allreduce(comm, s, r, 4, OPTIREDUCE_FLOAT32, (enum optireduce_op)7,
	                           NULL) == -OPTIREDUCE_EOP);
	CHECK(optireduce_allreduce(comm, s, r, SIZE_MAX / 2, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
	                           NULL) == -OPTIREDUCE_EOVERFLOW);
	CHECK(optireduce_iallreduce(comm, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, NULL) ==
	      -OPTIREDUCE_EINVAL);
	CHECK(r[0] == 9 && r[1] == 9 && r[2] == 9 && r[3] == 9); /* nothing touched */
	CHECK(optireduce_test(NULL) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_wait(NULL, NULL) == -OPTIREDUCE_EBADHANDLE);
	/* NULL buffers are fine with count 0. */
	CHECK(optireduce_allreduce(comm, NULL, NULL, 0, OPTIREDUCE_INT32, OPTIREDUCE_MAX, NULL) ==
	      0);
	/* One rank: the result is the input. */
	CHECK(optireduce_iallreduce(comm, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &req) == 0);
	CHECK(optireduce_wait(req, NULL) == 0);
	CHECK(r[0] == 1 && r[3] == 4);
	CHECK(optireduce_allreduce(comm, OPTIREDUCE_IN_PLACE, r, 4, OPTIREDUCE_FLOAT32,
	                           OPTIREDUCE_AVG, NULL) == 0);
	CHECK(r[0] == 1 && r[3] == 4);
}

/* optireduce_comm_progress: its arguments, and operations completed through it. */
static void test_comm_progress(optireduce_ctx_t *ctx, optireduce_comm_t *comm)
{
	float s[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}, r[3][4];
	optireduce_req_t *req[3];
	int done = 0, completed = 0, passes = 0;

	CHECK(optireduce_comm_progress(NULL, 0) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_progress((optireduce_comm_t *)ctx, 0) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_progress(comm, -1) == -OPTIREDUCE_EINVAL);
	/* Nothing pending: 0 at once, whatever the timeout. */
	CHECK(optireduce_comm_progress(comm, 0) == 0);
	CHECK(optireduce_comm_progress(comm, 100000) == 0);
	for (int i = 0; i < 3; i++)
		CHECK(optireduce_iallreduce(comm, s[i], r[i], 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
		                            &req[i]) == 0);
	while (done != 0x7 && passes++ < 1000) {
		int ret = optireduce_comm_progress(comm, 10);

		CHECK(ret >= 0 && ret <= 3);
		completed += ret > 0 ? ret : 0;
		for (int i = 0; i < 3; i++) {
			if (done & (1 << i) || optireduce_test(req[i]) == OPTIREDUCE_INPROGRESS)
				continue;
			CHECK(optireduce_wait(req[i], NULL) == 0);
			CHECK(r[i][0] == s[i][0] && r[i][3] == s[i][3]);
			done |= 1 << i;
		}
	}
	CHECK(done == 0x7 && completed <= 3);
	CHECK(optireduce_comm_progress(comm, 0) == 0);
}

static int alg_id(const char *name)
{
	for (int i = 0; optireduce_algorithm_name(i); i++)
		if (strcmp(optireduce_algorithm_name(i), name) == 0)
			return i;
	return -1;
}

/* The algorithm each 16-byte operation reports, under a given parameter setting. */
static int ran(optireduce_comm_t *comm, const char *param, const char *value)
{
	float s[4] = {1, 2, 3, 4}, r[4];
	struct optireduce_status st;

	if (optireduce_comm_set_param(comm, param, value))
		return -2;
	if (optireduce_allreduce(comm, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st))
		return -3;
	return r[0] == 1 && r[3] == 4 ? st.algorithm : -4;
}

/* Exact auto: recursive doubling up to small_msg_threshold bytes, ring above. */
static void test_select(optireduce_comm_t *comm)
{
	int rd = alg_id("recursive_doubling"), ring = alg_id("ring");

	CHECK(rd >= 0 && ring >= 0);
	CHECK(ran(comm, "algorithm", "auto") == rd);
	CHECK(ran(comm, "small_msg_threshold", "16") == rd);
	CHECK(ran(comm, "small_msg_threshold", "15") == ring);
	CHECK(ran(comm, "small_msg_threshold", "0") == ring);
	CHECK(ran(comm, "small_msg_threshold", "16k") == rd);
	CHECK(ran(comm, "algorithm", "ring") == ring);
	CHECK(ran(comm, "algorithm", "0-16:ring,16-inf:recursive_doubling") == rd);
	CHECK(ran(comm, "algorithm", "auto") == rd);
}

int main(void)
{
	optireduce_ctx_t *ctx, *ctx2;
	optireduce_comm_t *comm;
	struct optireduce_comm_attr attr = {
	    .oob = {.allgather = self_allgather, .rank = 0, .size = 1},
	    .mode = OPTIREDUCE_MODE_EXACT,
	};
	int ret;

	test_errors();
	CHECK(optireduce_init(OPTIREDUCE_VERSION(OPTIREDUCE_MAJOR_VERSION + 1, 0), &ctx) ==
	      -OPTIREDUCE_EVERSION);
	CHECK(optireduce_init(OPTIREDUCE_API_VERSION, NULL) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_init(OPTIREDUCE_API_VERSION, &ctx) == 0);
	CHECK(optireduce_comm_create(NULL, &attr, &comm) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_create(ctx, NULL, &comm) == -OPTIREDUCE_EINVAL);
	attr.oob.rank = 1;
	CHECK(optireduce_comm_create(ctx, &attr, &comm) == -OPTIREDUCE_EINVAL);
	attr.oob.rank = 0;
	attr.oob.allgather = failing_allgather;
	CHECK(optireduce_comm_create(ctx, &attr, &comm) == -OPTIREDUCE_EOOB);
	attr.oob.allgather = self_allgather;
	ret = optireduce_comm_create(ctx, &attr, &comm);
	if (ret == -OPTIREDUCE_ENOPROVIDER) {
		printf("no libfabric provider: skipping\n");
		return 77;
	}
	CHECK(ret == 0);
	if (ret)
		return 1;
	CHECK(optireduce_comm_rank(comm) == 0 && optireduce_comm_size(comm) == 1);
	CHECK(optireduce_finalize(ctx) == -OPTIREDUCE_EBUSY);
	test_params(ctx, comm);
	test_bad_args(comm);
	test_comm_progress(ctx, comm);
	test_select(comm);
	/* A communicator belongs to its context: another context's finalize is not blocked by it.
	 */
	CHECK(optireduce_init(OPTIREDUCE_API_VERSION, &ctx2) == 0);
	CHECK(optireduce_finalize(ctx2) == 0);
	CHECK(optireduce_comm_destroy(comm) == 0);
	CHECK(optireduce_finalize(ctx) == 0);
	printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
