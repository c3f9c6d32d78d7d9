/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * deadline_anchor (bounded mode, 3 ranks): a rank that enters an operation late, but well
 * within one deadline, loses nothing when phase 0's deadline counts from its start.
 *
 * Every rank paces at 40 Mbit/s with a fixed 300 ms deadline per phase; a 1.5 MiB transpose
 * sends 1 MiB per rank in phase 0, about 210 ms.  Rank 1 sleeps 170 ms before each call, so
 * its phase-0 data reaches the others from 170 to about 380 ms after they began:
 *   - deadline_anchor=1: the others' phase 0 ends 300 ms after rank 1 began (its packets
 *     say when), so every rank must receive every element, and return within
 *     LATE + 2 deadlines + slack;
 *   - deadline_anchor=0 (the control): the others cut phase 0 at 300 ms after their own
 *     start, so they must miss some of rank 1's data; without this the test could not tell.
 * A loaded host can disturb a trial (a rank descheduled for 100 ms); a mode gets 3 trials.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "optireduce_mpi.h"

#include "mpi_check.h"

#define LATE     1
#define LATE_US  170000
#define DEADLINE "300000"
#define BOUND_US (LATE_US + 2 * 300000.0 + 250000.0)
#define COUNT    (3 * 131072)
#define ATTEMPTS 3

/* One operation with rank LATE entering late; 1 if a check failed. */
struct mode {
	optireduce_comm_t *comm;
	float *buf;
	int anchor;
};

static int trial(void *arg, int t)
{
	const struct mode *m = arg;
	optireduce_comm_t *comm = m->comm;
	float *buf = m->buf;
	int anchor = m->anchor;
	struct optireduce_status st;
	uint64_t want, got;
	int ret, f0 = failures;

	for (size_t i = 0; i < COUNT; i++)
		buf[i] = input(rank, i, t);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == LATE)
		usleep(LATE_US);
	ret = optireduce_allreduce(comm, OPTIREDUCE_IN_PLACE, buf, COUNT, OPTIREDUCE_FLOAT32,
	                           OPTIREDUCE_SUM, &st);
	if (ret) {
		FAIL("anchor=%d: allreduce: %s\n", anchor, optireduce_strerror(ret));
		return 1;
	}
	want = st.elements_expected[0] + st.elements_expected[1];
	got = st.elements_received[0] + st.elements_received[1];
	for (size_t i = 0; i < COUNT; i++)
		if (!isfinite(buf[i])) {
			FAIL("anchor=%d: non-finite result at %zu\n", anchor, i);
			break;
		}
	if (anchor && got != want)
		FAIL("anchor=%d: %llu of %llu elements received (phase ends %d/%d)\n", anchor,
		     (unsigned long long)got, (unsigned long long)want, st.phase_end[0],
		     st.phase_end[1]);
	if (anchor && st.elapsed_us > BOUND_US)
		FAIL("anchor=%d: returned after %.0f us, bound %.0f\n", anchor, st.elapsed_us,
		     BOUND_US);
	if (!anchor && rank != LATE && got >= want)
		FAIL("anchor=0: nothing of the late rank's data missing\n");
	return failures > f0;
}

/* A mode passes if one of ATTEMPTS trials passes on every rank. */
static void judge(optireduce_comm_t *comm, float *buf, int anchor)
{
	struct mode m = {comm, buf, anchor};
	char value[2] = {(char)('0' + anchor), 0}, label[32];

	if (optireduce_comm_set_param(comm, "deadline_anchor", value))
		FAIL("set_param deadline_anchor failed\n");
	snprintf(label, sizeof(label), "deadline_anchor=%d", anchor);
	retry_trials(label, ATTEMPTS, trial, &m);
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	float *buf;

	mpi_world(&argc, &argv, 3);
	setenv("OPTIREDUCE_PACING_RATE", "40", 1);
	comm = bounded_world(&ctx, NULL);
	if (optireduce_comm_set_param(comm, "timeout_us", DEADLINE) ||
	    optireduce_comm_set_param(comm, "algorithm", "transpose") ||
	    optireduce_comm_set_param(comm, "repair", "0"))
		FAIL("set_param failed\n");
	buf = malloc(COUNT * sizeof(float));
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	judge(comm, buf, 1);
	judge(comm, buf, 0);
	free(buf);
	return finish_world(comm, ctx);
}
