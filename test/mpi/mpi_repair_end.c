/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Repair never holds a bounded operation to its deadline when what it asks for does not
 * come (3 ranks).  Every rank paces at 40 Mbit/s, and a 768 KiB transpose takes two phases
 * of about 100 ms.  Deadlines calibrate at 8x the median phase (calib_margin 8: about
 * 0.8 s per phase, as long as training's 90th percentile x 1.25 gets under skew).  Then
 * every rank drops 90 % of its data packets (not a phase's last ones), repair requests and
 * resends: each phase's requests run out (4 rounds a sender, gaps as arrivals show them)
 * or reach the time peers stop waiting, and the operation must return within about 1.5
 * clean ones, not after the 1.6 s its deadlines allow.  A rank descheduled for 100 ms
 * can spoil a trial: 3 trials.
 */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "optireduce_mpi.h"

#include "mpi_check.h"

#define COUNT    (3 * 65536)
#define CLEAN    12
#define ATTEMPTS 3

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median elapsed time of CLEAN operations, the last ones of calibration among them. */
static double clean_median_us(optireduce_comm_t *comm, float *buf)
{
	struct optireduce_status st;
	double us[CLEAN];

	for (int k = 0; k < CLEAN; k++) {
		for (size_t i = 0; i < COUNT; i++)
			buf[i] = input(rank, i, k);
		MPI_Barrier(MPI_COMM_WORLD);
		if (optireduce_allreduce(comm, OPTIREDUCE_IN_PLACE, buf, COUNT, OPTIREDUCE_FLOAT32,
		                         OPTIREDUCE_SUM, &st))
			FAIL("clean allreduce %d failed\n", k);
		us[k] = st.elapsed_us;
	}
	qsort(us, CLEAN, sizeof(us[0]), by_value);
	return us[CLEAN / 2];
}

/* One lossy operation; 1 if it took longer than bound_us or lost nothing. */
static int trial(optireduce_comm_t *comm, float *buf, double bound_us, int t)
{
	struct optireduce_status st;
	int ret, f0 = failures;

	for (size_t i = 0; i < COUNT; i++)
		buf[i] = input(rank, i, 100 + t);
	MPI_Barrier(MPI_COMM_WORLD);
	ret = optireduce_allreduce(comm, OPTIREDUCE_IN_PLACE, buf, COUNT, OPTIREDUCE_FLOAT32,
	                           OPTIREDUCE_SUM, &st);
	if (ret) {
		FAIL("lossy allreduce: %s\n", optireduce_strerror(ret));
		return 1;
	}
	if (st.elapsed_us > bound_us)
		FAIL("returned after %.0f us, bound %.0f (deadline %llu us, asked %llu, "
		     "recovered %llu)\n",
		     st.elapsed_us, bound_us, (unsigned long long)st.deadline_us[1],
		     (unsigned long long)st.repair_requested,
		     (unsigned long long)st.repair_recovered);
	if (st.repair_requested == 0)
		FAIL("90 %% loss and nothing asked for: repair did not run\n");
	return failures > f0;
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	double median, bound;
	float *buf;
	int ok = 0;

	mpi_world(&argc, &argv, 3);
	setenv("OPTIREDUCE_PACING_RATE", "40", 1);
	setenv("OPTIREDUCE_CALIB_MARGIN", "8", 1);
	setenv("OPTIREDUCE_CALIB_OPS", "8", 1);
	setenv("OPTIREDUCE_MULTICAST", "off", 1);
	comm = bounded_world(&ctx, NULL);
	if (optireduce_comm_set_param(comm, "algorithm", "transpose"))
		FAIL("set_param failed\n");
	buf = malloc(COUNT * sizeof(float));
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	median = clean_median_us(comm, buf);
	MPI_Allreduce(MPI_IN_PLACE, &median, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	/* Two phases, each a first pass and its repair: 1.5 median phases at most; slack. */
	bound = 1.5 * median + 100000.0;
	if (optireduce_comm_set_param(comm, "inject_loss", "0.9"))
		FAIL("set_param inject_loss failed\n");
	for (int t = 0; t < ATTEMPTS && !ok; t++) {
		int f0 = failures, failed = trial(comm, buf, bound, t);
		MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
		if (rank == 0)
			printf("trial %d (clean median %.0f us, bound %.0f us): %s\n", t, median,
			       bound, failed ? "a check failed" : "ok");
		ok = !failed;
		if (failed && t + 1 < ATTEMPTS)
			failures = f0;
	}
	free(buf);
	return finish_world(comm, ctx);
}
