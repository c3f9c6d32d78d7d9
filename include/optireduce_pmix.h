/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bootstrap a liboptireduce communicator over every process of a PMIx job
 * (mpirun, prterun, srun --mpi=pmix).  Header-only so liboptireduce itself
 * never links PMIx; link the program with `pkg-config --libs pmix`:
 *
 *   optireduce_ctx_t *ctx;  optireduce_comm_t *comm;
 *   optireduce_init(OPTIREDUCE_API_VERSION, &ctx);
 *   optireduce_comm_from_pmix(ctx, &comm);
 *
 * The out-of-band allgather is PMIx_Put + PMIx_Commit + PMIx_Fence (collecting
 * data) + one PMIx_Get per rank.  PMIx_Get of a key returns at once whatever
 * value an earlier fence delivered, so a reused key could hand back a stale
 * address: every allgather round uses a key of its own,
 * "optireduce.oob.<call>.<round>", where <call> counts the calls of this
 * helper in the process.  Like every communicator creation, the calls must
 * come in the same order on every process.
 *
 * A program that uses PMIx itself keeps control of it: the helper only takes
 * and drops a reference.  Otherwise the helper initializes PMIx at its first
 * call and finalizes it at exit (atexit), not after each creation: a client
 * that cycles PMIx_Init/PMIx_Finalize can see a peer's fence end in
 * PMIX_ERR_PARTIAL_SUCCESS (openpmix#4113), and mpirun 4.1 aborts a
 * job whose process exits initialized.
 */
#ifndef OPTIREDUCE_PMIX_H
#define OPTIREDUCE_PMIX_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>
#include <optireduce.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One counter per process, not per translation unit: a weak definition in a
 * header is merged by the linker (and, with default visibility, by the
 * dynamic linker), so two files calling the helper never reuse a key.
 */
#if defined(__GNUC__)
__attribute__((weak)) unsigned optireduce_pmix_calls_;
#else
static unsigned optireduce_pmix_calls_;
#endif

static inline void optireduce_pmix_atexit_(void)
{
	PMIx_Finalize(NULL, 0);
}

struct optireduce_pmix_oob {
	pmix_proc_t self;
	uint32_t size;
	unsigned call;  /* which call of optireduce_comm_from_pmix */
	unsigned round; /* which allgather within it */
};

static inline int optireduce_pmix_oob_allgather(const void *sbuf, void *rbuf, size_t len,
                                                void *coll_info)
{
	struct optireduce_pmix_oob *o = (struct optireduce_pmix_oob *)coll_info;
	char key[64];
	pmix_value_t val;
	pmix_info_t info;
	bool collect = true;
	pmix_proc_t peer;
	pmix_status_t rc;

	snprintf(key, sizeof(key), "optireduce.oob.%u.%u", o->call, o->round++);
	memset(&val, 0, sizeof(val));
	val.type = PMIX_BYTE_OBJECT;
	val.data.bo.bytes = (char *)sbuf; /* PMIx_Put copies the bytes */
	val.data.bo.size = len;
	if (PMIx_Put(PMIX_GLOBAL, key, &val) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS)
		return -OPTIREDUCE_EOOB;

	PMIX_INFO_CONSTRUCT(&info);
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	rc = PMIx_Fence(NULL, 0, &info, 1); /* NULL: every process of our namespace */
	PMIX_INFO_DESTRUCT(&info);
	if (rc != PMIX_SUCCESS)
		return -OPTIREDUCE_EOOB;

	peer = o->self;
	for (uint32_t r = 0; r < o->size; r++) {
		pmix_value_t *v = NULL;
		int ok;

		peer.rank = r;
		if (PMIx_Get(&peer, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
			return -OPTIREDUCE_EOOB;
		/* A peer built with another liboptireduce could send another length. */
		ok = v->type == PMIX_BYTE_OBJECT && v->data.bo.size == len;
		if (ok && len)
			memcpy((char *)rbuf + (size_t)r * len, v->data.bo.bytes, len);
		PMIX_VALUE_RELEASE(v);
		if (!ok)
			return -OPTIREDUCE_EOOB;
	}
	return 0;
}

/* As optireduce_comm_from_pmix with an explicit mode. */
static inline int optireduce_comm_from_pmix_mode(optireduce_ctx_t *ctx, enum optireduce_mode mode,
                                                 optireduce_comm_t **comm)
{
	struct optireduce_comm_attr attr;
	struct optireduce_pmix_oob o;
	pmix_proc_t job;
	pmix_value_t *v = NULL;
	int ret, held;

	if (!ctx || !comm)
		return -OPTIREDUCE_EINVAL;
	held = PMIx_Initialized();
	/* Reference counted: cheap when the program (or its MPI) already initialized PMIx. */
	if (PMIx_Init(&o.self, NULL, 0) != PMIX_SUCCESS)
		return -OPTIREDUCE_EOOB;
	if (!held && atexit(optireduce_pmix_atexit_)) {
		PMIx_Finalize(NULL, 0);
		return -OPTIREDUCE_ENOMEM;
	}
	job = o.self;
	job.rank = PMIX_RANK_WILDCARD;
	if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v) != PMIX_SUCCESS || !v ||
	    v->type != PMIX_UINT32 || v->data.uint32 == 0 || o.self.rank >= v->data.uint32) {
		if (v)
			PMIX_VALUE_RELEASE(v);
		if (held)
			PMIx_Finalize(NULL, 0);
		return -OPTIREDUCE_EOOB;
	}
	o.size = v->data.uint32;
	PMIX_VALUE_RELEASE(v);
	o.call = optireduce_pmix_calls_++;
	o.round = 0;

	attr.oob.allgather = optireduce_pmix_oob_allgather;
	attr.oob.coll_info = &o; /* used only during comm_create */
	attr.oob.rank = o.self.rank;
	attr.oob.size = o.size;
	attr.mode = mode;
	ret = optireduce_comm_create(ctx, &attr, comm);
	if (held)
		PMIx_Finalize(NULL, 0);
	return ret;
}

static inline int optireduce_comm_from_pmix(optireduce_ctx_t *ctx, optireduce_comm_t **comm)
{
	return optireduce_comm_from_pmix_mode(ctx, OPTIREDUCE_MODE_DEFAULT, comm);
}

#ifdef __cplusplus
}
#endif

#endif /* OPTIREDUCE_PMIX_H */
