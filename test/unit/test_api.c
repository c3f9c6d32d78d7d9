/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * API contract on a one-rank communicator (no launcher needed): version checks, the error
 * table, parameters, every bad argument of every public function returning its documented
 * code without writing a buffer and leaving the communicator usable, and handles used
 * after they were freed.  test/mpi/mpi_api.c covers what needs peers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_quiet.h"
#include "optireduce.h"

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
	/* The multicast range is checked when set: IPv4 multicast, address/prefix. */
	CHECK(optireduce_ctx_set_param(ctx, "multicast_range", "10.0.0.0/8") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_ctx_set_param(ctx, "multicast_range", "239.1.2.3") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_ctx_set_param(ctx, "multicast_range", "239.1.2.3/33") ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_ctx_set_param(ctx, "multicast_range", "239.300.0.0/16") ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_ctx_set_param(ctx, "multicast_range", "239.192.0.0/14") == 0);
	CHECK(optireduce_ctx_set_param(ctx, "multicast", "sometimes") == -OPTIREDUCE_EINVAL);
	/* An exact communicator never multicasts, and says so. */
	CHECK(optireduce_comm_multicast(comm, v, sizeof(v)) == 0 && strstr(v, "exact"));
	CHECK(optireduce_comm_multicast(NULL, v, sizeof(v)) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_multicast(comm, NULL, 8) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_multicast(comm, v, 2) == -OPTIREDUCE_EOVERFLOW);
	CHECK(optireduce_multicast_check(NULL, v, sizeof(v)) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_multicast_check(ctx, NULL, 8) == -OPTIREDUCE_EINVAL);
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

/* A status the library must not write when a call fails its argument checks. */
static void status_fill(struct optireduce_status *st)
{
	memset(st, 0xab, sizeof(*st));
}

static int status_untouched(const struct optireduce_status *st)
{
	struct optireduce_status ref;

	status_fill(&ref);
	return memcmp(st, &ref, sizeof(ref)) == 0;
}

/* Every argument optireduce_allreduce and optireduce_iallreduce check, one bad at a time:
 * the documented code, and neither buffer, status nor *req written. */
static void test_bad_reduce_args(optireduce_comm_t *comm)
{
	float s[4] = {1, 2, 3, 4}, r[4] = {9, 9, 9, 9}, big[8] = {0};
	optireduce_req_t *req = (optireduce_req_t *)&req, *sentinel = req;
	struct optireduce_status st;
	static const struct {
		int dtype, op;
		size_t count;
		int want;
	} bad[] = {
	    {99, OPTIREDUCE_SUM, 4, -OPTIREDUCE_EDTYPE},
	    {-1, OPTIREDUCE_SUM, 4, -OPTIREDUCE_EDTYPE},
	    {OPTIREDUCE_DTYPE_COUNT, OPTIREDUCE_SUM, 4, -OPTIREDUCE_EDTYPE},
	    {OPTIREDUCE_FLOAT32, 7, 4, -OPTIREDUCE_EOP},
	    {OPTIREDUCE_FLOAT32, -1, 4, -OPTIREDUCE_EOP},
	    {OPTIREDUCE_FLOAT32, OPTIREDUCE_OP_COUNT, 4, -OPTIREDUCE_EOP},
	    {OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, SIZE_MAX / 2, -OPTIREDUCE_EOVERFLOW},
	    {OPTIREDUCE_FLOAT64, OPTIREDUCE_SUM, SIZE_MAX / 8 + 1, -OPTIREDUCE_EOVERFLOW},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		status_fill(&st);
		CHECK(optireduce_allreduce(comm, s, r, bad[i].count, (enum optireduce_dtype)bad[i].dtype,
		                           (enum optireduce_op)bad[i].op, &st) == bad[i].want);
		CHECK(status_untouched(&st));
		CHECK(optireduce_iallreduce(comm, s, r, bad[i].count,
		                            (enum optireduce_dtype)bad[i].dtype,
		                            (enum optireduce_op)bad[i].op, &req) == bad[i].want);
		CHECK(req == sentinel);
		status_fill(&st);
		CHECK(optireduce_reduce_scatter_block(comm, s, r, bad[i].count,
		                                      (enum optireduce_dtype)bad[i].dtype,
		                                      (enum optireduce_op)bad[i].op,
		                                      &st) == bad[i].want);
		CHECK(status_untouched(&st));
		CHECK(optireduce_ireduce_scatter_block(comm, s, r, bad[i].count,
		                                       (enum optireduce_dtype)bad[i].dtype,
		                                       (enum optireduce_op)bad[i].op,
		                                       &req) == bad[i].want);
		CHECK(req == sentinel);
	}
	status_fill(&st);
	CHECK(optireduce_reduce_scatter_block(NULL, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
	                                      &st) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_reduce_scatter_block(comm, NULL, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
	                                      &st) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_reduce_scatter_block(comm, s, NULL, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
	                                      &st) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_reduce_scatter_block(comm, big, big + 3, 4, OPTIREDUCE_FLOAT32,
	                                      OPTIREDUCE_SUM, &st) == -OPTIREDUCE_EINVAL);
	CHECK(status_untouched(&st));
	CHECK(optireduce_ireduce_scatter_block(comm, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
	                                       NULL) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_ireduce_scatter_block(NULL, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
	                                       &req) == -OPTIREDUCE_EBADHANDLE);
	CHECK(req == sentinel);
	status_fill(&st);
	CHECK(optireduce_allreduce(NULL, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st) ==
	      -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_allreduce((optireduce_comm_t *)s, s, r, 4, OPTIREDUCE_FLOAT32,
	                           OPTIREDUCE_SUM, &st) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_allreduce(comm, NULL, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st) ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_allreduce(comm, s, NULL, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st) ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_allreduce(comm, OPTIREDUCE_IN_PLACE, NULL, 4, OPTIREDUCE_FLOAT32,
	                           OPTIREDUCE_SUM, &st) == -OPTIREDUCE_EINVAL);
	/* Partly overlapping buffers have no meaning (the same buffer reads as in place). */
	CHECK(optireduce_allreduce(comm, big, big + 2, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
	                           &st) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_allreduce(comm, big + 3, big, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
	                           &st) == -OPTIREDUCE_EINVAL);
	CHECK(status_untouched(&st));
	CHECK(optireduce_iallreduce(comm, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, NULL) ==
	      -OPTIREDUCE_EINVAL);
	CHECK(optireduce_iallreduce(NULL, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &req) ==
	      -OPTIREDUCE_EBADHANDLE);
	CHECK(req == sentinel);
	CHECK(r[0] == 9 && r[1] == 9 && r[2] == 9 && r[3] == 9); /* nothing touched */
	CHECK(s[0] == 1 && s[1] == 2 && s[2] == 3 && s[3] == 4);
	for (int i = 0; i < 8; i++)
		CHECK(big[i] == 0);
	CHECK(optireduce_test(NULL) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_test((optireduce_req_t *)s) == -OPTIREDUCE_EBADHANDLE);
	status_fill(&st);
	CHECK(optireduce_wait(NULL, &st) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_wait((optireduce_req_t *)s, &st) == -OPTIREDUCE_EBADHANDLE);
	CHECK(status_untouched(&st));
}

/* The communicator still works after the bad calls: a one-rank allreduce is its input. */
static void check_usable(optireduce_comm_t *comm)
{
	float s[4] = {1, 2, 3, 4}, r[4] = {9, 9, 9, 9};
	double d[3] = {1.5, -2, 3};
	optireduce_req_t *req = NULL;
	struct optireduce_status st;

	/* NULL buffers are fine with count 0. */
	CHECK(optireduce_allreduce(comm, NULL, NULL, 0, OPTIREDUCE_INT32, OPTIREDUCE_MAX, NULL) ==
	      0);
	CHECK(optireduce_iallreduce(comm, s, r, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &req) == 0);
	CHECK(optireduce_wait(req, &st) == 0 && st.error == 0);
	CHECK(r[0] == 1 && r[3] == 4);
	CHECK(optireduce_allreduce(comm, OPTIREDUCE_IN_PLACE, r, 4, OPTIREDUCE_FLOAT32,
	                           OPTIREDUCE_AVG, NULL) == 0);
	CHECK(r[0] == 1 && r[3] == 4);
	/* sbuf == rbuf is in place. */
	CHECK(optireduce_allreduce(comm, d, d, 3, OPTIREDUCE_FLOAT64, OPTIREDUCE_SUM, NULL) == 0);
	CHECK(d[0] == 1.5 && d[1] == -2 && d[2] == 3);
	/* A one-rank reduce-scatter is its input, in place or not. */
	r[0] = r[1] = r[2] = r[3] = 9;
	CHECK(optireduce_reduce_scatter_block(comm, s, r, 3, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
	                                      &st) == 0);
	CHECK(r[0] == 1 && r[1] == 2 && r[2] == 3 && r[3] == 9);
	CHECK(optireduce_reduce_scatter_block(comm, NULL, NULL, 0, OPTIREDUCE_INT8, OPTIREDUCE_MIN,
	                                      NULL) == 0);
	CHECK(optireduce_ireduce_scatter_block(comm, OPTIREDUCE_IN_PLACE, d, 3, OPTIREDUCE_FLOAT64,
	                                       OPTIREDUCE_AVG, &req) == 0);
	CHECK(optireduce_wait(req, &st) == 0 && st.error == 0);
	CHECK(d[0] == 1.5 && d[1] == -2 && d[2] == 3);
}

/* Many requests alive at once, freed out of order: the handle table grows and shrinks. */
static void test_many_requests(optireduce_comm_t *comm)
{
	enum { N = 300 };
	static optireduce_req_t *req[N];
	static int v[N];
	int ok = 1;

	for (int i = 0; i < N; i++) {
		v[i] = i;
		if (optireduce_iallreduce(comm, OPTIREDUCE_IN_PLACE, &v[i], 1, OPTIREDUCE_INT32,
		                          OPTIREDUCE_SUM, &req[i]))
			ok = 0;
	}
	for (int i = 0; i < N; i += 2)
		ok &= optireduce_wait(req[i], NULL) == 0;
	for (int i = 1; i < N; i += 2)
		ok &= optireduce_test(req[i]) == 0 && optireduce_wait(req[i], NULL) == 0;
	for (int i = 0; i < N; i++)
		ok &= v[i] == i;
	CHECK(ok);
	/* Freed by wait: each is now a stale handle, refused without being read. */
	CHECK(optireduce_test(req[0]) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_wait(req[N - 1], NULL) == -OPTIREDUCE_EBADHANDLE);
}

/* Library-wide calls that take no handle: out-of-range arguments. */
static void test_bad_table_args(void)
{
	struct optireduce_param_info pi;
	char buf[8] = "xxxxxxx";

	CHECK(optireduce_dtype_size((enum optireduce_dtype)-1) == 0);
	CHECK(optireduce_dtype_size(OPTIREDUCE_DTYPE_COUNT) == 0);
	CHECK(strcmp(optireduce_dtype_name((enum optireduce_dtype)1000), "unknown") == 0);
	CHECK(strcmp(optireduce_op_name((enum optireduce_op)-5), "unknown") == 0);
	CHECK(optireduce_algorithm_name(-1) == NULL && optireduce_algorithm_name(1 << 30) == NULL);
	CHECK(optireduce_algorithm_desc(-1) == NULL && optireduce_algorithm_desc(1 << 30) == NULL);
	CHECK(optireduce_param_info(0, NULL) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_param_info(-1, &pi) == -OPTIREDUCE_ENOPARAM);
	CHECK(optireduce_providers(OPTIREDUCE_MODE_EXACT, NULL, NULL) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_topology(NULL, 10) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_topology(buf, 0) == -OPTIREDUCE_EINVAL);
	CHECK(strcmp(buf, "xxxxxxx") == 0);
	CHECK(optireduce_strerror(-2147483647 - 1) != NULL);
	CHECK(optireduce_strerror(OPTIREDUCE_INPROGRESS) != NULL);
}

/* Bad arguments to the communicator's own calls: codes, and nothing written. */
static void test_bad_comm_args(optireduce_ctx_t *ctx, optireduce_comm_t *comm)
{
	char v[16];
	enum optireduce_param_source src = (enum optireduce_param_source)77;

	CHECK(optireduce_comm_rank(NULL) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_size(NULL) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_rank((optireduce_comm_t *)ctx) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_provider(NULL, OPTIREDUCE_MODE_EXACT) == NULL);
	CHECK(optireduce_comm_set_param(NULL, "segment_size", "64k") == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_set_param(comm, NULL, "64k") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_ctx_set_param(NULL, "segment_size", "64k") == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_ctx_set_param((optireduce_ctx_t *)comm, "spin_us", "1") ==
	      -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_ctx_set_param(ctx, NULL, "1") == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_ctx_set_param(ctx, "spin_us", NULL) == -OPTIREDUCE_EINVAL);
	memset(v, 'x', sizeof(v));
	CHECK(optireduce_comm_get_param(NULL, "spin_us", v, sizeof(v), &src) ==
	      -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_get_param(comm, NULL, v, sizeof(v), &src) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_get_param(comm, "nosuch", v, sizeof(v), &src) ==
	      -OPTIREDUCE_ENOPARAM);
	CHECK(optireduce_comm_get_param(comm, "spin_us", NULL, 16, &src) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_get_param(comm, "spin_us", v, 0, &src) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_get_param(comm, "multicast_range", v, 2, &src) ==
	      -OPTIREDUCE_EOVERFLOW);
	for (size_t i = 0; i < sizeof(v); i++)
		CHECK(v[i] == 'x');
	CHECK(src == (enum optireduce_param_source)77);
	/* Source may be NULL. */
	CHECK(optireduce_comm_get_param(comm, "spin_us", v, sizeof(v), NULL) == 0);
}

/* optireduce_comm_create with each bad argument: the code, and *comm not written. */
static void test_bad_create_args(optireduce_ctx_t *ctx)
{
	struct optireduce_comm_attr attr = {
	    .oob = {.allgather = self_allgather, .rank = 0, .size = 1},
	    .mode = OPTIREDUCE_MODE_EXACT,
	};
	optireduce_comm_t *comm = (optireduce_comm_t *)&attr, *sentinel = comm;

	CHECK(optireduce_comm_create(NULL, &attr, &comm) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_create((optireduce_ctx_t *)&attr, &attr, &comm) ==
	      -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_create(ctx, NULL, &comm) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_comm_create(ctx, &attr, NULL) == -OPTIREDUCE_EINVAL);
	attr.oob.rank = 1;
	CHECK(optireduce_comm_create(ctx, &attr, &comm) == -OPTIREDUCE_EINVAL);
	attr.oob.rank = 0;
	attr.oob.size = 0;
	CHECK(optireduce_comm_create(ctx, &attr, &comm) == -OPTIREDUCE_EINVAL);
	attr.oob.size = 1;
	attr.mode = (enum optireduce_mode)42;
	CHECK(optireduce_comm_create(ctx, &attr, &comm) == -OPTIREDUCE_EINVAL);
	attr.mode = OPTIREDUCE_MODE_EXACT;
	attr.oob.allgather = NULL;
	CHECK(optireduce_comm_create(ctx, &attr, &comm) == -OPTIREDUCE_EINVAL);
	attr.oob.allgather = failing_allgather;
	CHECK(optireduce_comm_create(ctx, &attr, &comm) == -OPTIREDUCE_EOOB);
	CHECK(comm == sentinel);
}

/*
 * After optireduce_comm_destroy and optireduce_finalize the handles are freed: every call
 * that takes one answers -OPTIREDUCE_EBADHANDLE (NULL for optireduce_comm_provider)
 * without reading the freed memory, which AddressSanitizer and valgrind would report.
 */
static void test_after_free(void)
{
	struct optireduce_comm_attr attr = {
	    .oob = {.allgather = self_allgather, .rank = 0, .size = 1},
	    .mode = OPTIREDUCE_MODE_EXACT,
	};
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	optireduce_req_t *req;
	float x = 1;
	char v[16];

	if (optireduce_init(OPTIREDUCE_API_VERSION, &ctx) ||
	    optireduce_comm_create(ctx, &attr, &comm)) {
		CHECK(0);
		return;
	}
	CHECK(optireduce_iallreduce(comm, &x, &x, 1, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &req) ==
	      0);
	CHECK(optireduce_wait(req, NULL) == 0);
	CHECK(optireduce_comm_destroy(comm) == 0);
	CHECK(optireduce_comm_destroy(comm) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_finalize(ctx) == 0);
	CHECK(optireduce_finalize(ctx) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_ctx_set_param(ctx, "spin_us", "1") == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_create(ctx, &attr, &comm) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_rank(comm) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_size(comm) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_provider(comm, OPTIREDUCE_MODE_EXACT) == NULL);
	CHECK(optireduce_comm_set_param(comm, "spin_us", "1") == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_wake(comm) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_get_param(comm, "spin_us", v, sizeof(v), NULL) ==
	      -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_allreduce(comm, &x, &x, 1, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, NULL) ==
	      -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_iallreduce(comm, &x, &x, 1, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &req) ==
	      -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_test(req) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_wait(req, NULL) == -OPTIREDUCE_EBADHANDLE);
	/* Library-wide calls need no context and still work. */
	CHECK(optireduce_dtype_size(OPTIREDUCE_FLOAT32) == 4);
	CHECK(optireduce_version() == OPTIREDUCE_API_VERSION);
}

static void test_bad_args(optireduce_ctx_t *ctx, optireduce_comm_t *comm)
{
	test_bad_reduce_args(comm);
	check_usable(comm);
	test_bad_comm_args(ctx, comm);
	test_bad_create_args(ctx);
	test_bad_table_args();
	check_usable(comm);
	test_many_requests(comm);
	check_usable(comm);
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
	/* optireduce_comm_wake: a bad handle, and a wake-up nobody waits for. */
	CHECK(optireduce_comm_wake(NULL) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_wake((optireduce_comm_t *)ctx) == -OPTIREDUCE_EBADHANDLE);
	CHECK(optireduce_comm_wake(comm) == 0 && optireduce_comm_wake(comm) == 0);
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

/* Exact auto: recursive doubling up to small_msg_threshold bytes, Rabenseifner up to
 * medium_msg_threshold, ring above (a 16-byte operation). */
static void test_select(optireduce_comm_t *comm)
{
	int rd = alg_id("recursive_doubling"), ring = alg_id("ring");
	int rab = alg_id("rabenseifner");

	CHECK(rd >= 0 && ring >= 0 && rab >= 0);
	CHECK(ran(comm, "algorithm", "auto") == rd);
	CHECK(ran(comm, "small_msg_threshold", "16") == rd);
	CHECK(ran(comm, "small_msg_threshold", "15") == rab);
	CHECK(ran(comm, "small_msg_threshold", "0") == rab);
	CHECK(ran(comm, "medium_msg_threshold", "15") == ring);
	CHECK(ran(comm, "medium_msg_threshold", "16") == rab);
	CHECK(ran(comm, "medium_msg_threshold", "32k") == rab);
	CHECK(ran(comm, "small_msg_threshold", "4k") == rd);
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
	ctx = (optireduce_ctx_t *)&attr;
	CHECK(optireduce_init(OPTIREDUCE_VERSION(OPTIREDUCE_MAJOR_VERSION, 0xffff), &ctx) ==
	      -OPTIREDUCE_EVERSION);
	CHECK(ctx == (optireduce_ctx_t *)&attr); /* not written on failure */
	CHECK(optireduce_init(OPTIREDUCE_API_VERSION, NULL) == -OPTIREDUCE_EINVAL);
	CHECK(optireduce_init(OPTIREDUCE_API_VERSION, &ctx) == 0);
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
	test_bad_args(ctx, comm);
	test_comm_progress(ctx, comm);
	test_select(comm);
	/* A communicator belongs to its context: another context's finalize is not blocked by it.
	 */
	CHECK(optireduce_init(OPTIREDUCE_API_VERSION, &ctx2) == 0);
	CHECK(optireduce_finalize(ctx2) == 0);
	CHECK(optireduce_comm_destroy(comm) == 0);
	CHECK(optireduce_finalize(ctx) == 0);
	test_after_free();
	printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
