/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * catch_up (bounded mode, 3 ranks): a rank that falls behind once is waited for in the next
 * operation and is back in step after it, instead of being cut from operation after
 * operation.
 *
 * 64 KiB transposes back to back, a fixed 500 ms deadline per phase.  After WARMUP
 * operations that teach the controller the normal phase time t_C (about a millisecond
 * here), rank 1 sleeps 100 ms before operation A only.  The others judge it absent
 * 1.5 t_C into A's first phase and cut its contribution.  Then, without a barrier:
 *   - catch_up=1: the others' first phase of A + 1 waits for rank 1, which enters about
 *     100 ms late, so A + 1 and every operation after it hold every contribution;
 *   - catch_up=0 (the control): rank 1 is still about 100 ms behind at A + 1 and is cut
 *     there too; without this the test could not tell.
 * A loaded host can disturb a trial (a rank descheduled for 100 ms); a mode gets 3 trials.
 */
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

#include "optireduce_mpi.h"

#include "mpi_check.h"

#define LATE     1
#define LATE_US  100000
#define DEADLINE "500000"
#define COUNT    16384
#define WARMUP   24
#define AFTER    8 /* operations after A */
#define ATTEMPTS 3

/* One allreduce; whether a contribution was missing on this rank, or -1 on error. */
static int one_op(optireduce_comm_t *comm, float *buf, int t)
{
	struct optireduce_status st;
	int ret;

	for (size_t i = 0; i < COUNT; i++)
		buf[i] = input(rank, i, t);
	ret = optireduce_allreduce(comm, OPTIREDUCE_IN_PLACE, buf, COUNT, OPTIREDUCE_FLOAT32,
	                           OPTIREDUCE_SUM, &st);
	if (ret) {
		FAIL("allreduce: %s\n", optireduce_strerror(ret));
		return -1;
	}
	return st.contributions_missing > 0;
}

/* Operation A with rank LATE entering late, then AFTER more; 1 if a check failed. */
struct mode {
	optireduce_comm_t *comm;
	float *buf;
	int on;
};

static int trial(void *arg, int t)
{
	const struct mode *m = arg;
	optireduce_comm_t *comm = m->comm;
	float *buf = m->buf;
	int on = m->on;
	int cut[1 + AFTER], f0 = failures, later = 0;

	for (int k = 0; k < WARMUP; k++)
		one_op(comm, buf, t);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == LATE)
		usleep(LATE_US);
	for (int k = 0; k <= AFTER; k++)
		cut[k] = one_op(comm, buf, t);
	for (int k = 2; k <= AFTER; k++)
		later += cut[k] > 0;
	if (rank == LATE)
		return failures > f0;
	if (cut[0] != 1)
		FAIL("catch_up=%d: the late rank was not cut from operation A\n", on);
	else if (on && (cut[1] || later))
		FAIL("catch_up=1: cut after A: A+1 %d, %d of the %d after it\n", cut[1], later,
		     AFTER - 1);
	else if (!on && !cut[1])
		FAIL("catch_up=0: the late rank caught up at once; the control shows nothing\n");
	return failures > f0;
}

/* A mode passes if one of ATTEMPTS trials passes on every rank. */
static void judge(optireduce_comm_t *comm, float *buf, int on)
{
	struct mode m = {comm, buf, on};

	if (optireduce_comm_set_param(comm, "catch_up", on ? "1" : "0"))
		FAIL("set_param catch_up failed\n");
	retry_trials(on ? "catch_up=1" : "catch_up=0", ATTEMPTS, trial, &m);
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	float *buf;

	mpi_world(&argc, &argv, 3);
	comm = bounded_world(&ctx, NULL);
	if (optireduce_comm_set_param(comm, "timeout_us", DEADLINE) ||
	    optireduce_comm_set_param(comm, "algorithm", "transpose"))
		FAIL("set_param failed\n");
	buf = malloc(COUNT * sizeof(float));
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	judge(comm, buf, 1);
	judge(comm, buf, 0);
	free(buf);
	return finish_world(comm, ctx);
}
