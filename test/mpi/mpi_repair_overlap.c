/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Repair of operations that overlap (bounded mode, 3 ranks), as DDP's gradient buckets do.
 *
 * Two 512 KiB transposes are started back to back and waited for together, PAIRS times,
 * every rank paced at 40 Mbit/s and dropping 2 % of its data packets, with a fixed 1 s
 * deadline per phase: far more than a phase needs, so repair has time for every loss.
 * While a sender works on the first operation, the second one's phases hear nothing from it
 * for tens of milliseconds.  Asking for everything missing then named packets not sent
 * yet, which the sender ignores, and marked them asked, so that when they were lost later
 * nothing asked for them again: the second operation lost about the injected 2 %.  The
 * check: both operations, with repair, lose at most a tenth of what was injected.
 */
#include <stdlib.h>

#include <mpi.h>

#include "optireduce_mpi.h"

#include "mpi_check.h"

#define COUNT  (128 * 1024)
#define PAIRS  12
#define LOSS   0.02
#define WARMUP 4

/* Elements that did not arrive, over the phases of one status. */
static double missing(const struct optireduce_status *st, double *expected)
{
	double m = 0;

	for (int p = 0; p < OPTIREDUCE_STATUS_PHASES; p++) {
		m += (double)(st->elements_expected[p] - st->elements_received[p]);
		*expected += (double)st->elements_expected[p];
	}
	return m;
}

/* One pair of overlapping operations; adds what each lost to lost[2] and exp[2]. */
static void pair(optireduce_comm_t *comm, float *buf[2], int t, double lost[2], double exp[2])
{
	optireduce_req_t *req[2];
	struct optireduce_status st;
	int ret;

	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < COUNT; i++)
			buf[k][i] = input(rank, i, 2 * t + k);
		ret = optireduce_iallreduce(comm, OPTIREDUCE_IN_PLACE, buf[k], COUNT,
		                            OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &req[k]);
		if (ret) {
			FAIL("iallreduce: %s\n", optireduce_strerror(ret));
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	for (int k = 0; k < 2; k++) {
		ret = optireduce_wait(req[k], &st);
		if (ret)
			FAIL("wait: %s\n", optireduce_strerror(ret));
		lost[k] += missing(&st, &exp[k]);
	}
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	float *buf[2];
	double lost[2] = {0, 0}, exp[2] = {0, 0}, all[4], sum[4];

	mpi_world(&argc, &argv, 3);
	comm = bounded_world(&ctx, NULL);
	if (optireduce_comm_set_param(comm, "timeout_us", "1000000") ||
	    optireduce_comm_set_param(comm, "algorithm", "transpose") ||
	    optireduce_comm_set_param(comm, "repair", "1"))
		FAIL("set_param failed\n");
	buf[0] = malloc(COUNT * sizeof(float));
	buf[1] = malloc(COUNT * sizeof(float));
	if (!buf[0] || !buf[1])
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int t = 0; t < WARMUP; t++) {
		double l[2] = {0, 0}, e[2] = {0, 0};
		pair(comm, buf, t, l, e);
	}
	if (optireduce_comm_set_param(comm, "inject_loss", "0.02"))
		FAIL("set_param inject_loss failed\n");
	for (int t = 0; t < PAIRS; t++)
		pair(comm, buf, WARMUP + t, lost, exp);
	all[0] = lost[0], all[1] = exp[0], all[2] = lost[1], all[3] = exp[1];
	MPI_Allreduce(all, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		double f0 = sum[0] / sum[1], f1 = sum[2] / sum[3];
		printf(
		    "lost with repair, %.0f %% injected: first operation %.3f %%, second %.3f %%\n",
		    100 * LOSS, 100 * f0, 100 * f1);
		if (f0 > LOSS / 10 || f1 > LOSS / 10)
			FAIL("repair left more than a tenth of the injected loss\n");
	}
	free(buf[0]);
	free(buf[1]);
	return finish_world(comm, ctx);
}
