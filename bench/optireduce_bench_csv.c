/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_bench_csv.c - what --csv writes of each timed call besides its latency: how
 * late the latest rank entered it after the synchronised start, the first phase's deadline
 * and, in bounded mode, the elements that did not arrive.  A cut that falls on calls a rank
 * entered late is the host's scheduling, not the network (bench/cut_where.sh).
 */
#include <stdlib.h>

#include "optireduce_bench.h"

void ob_iters_alloc(struct ob_iters *r, long iters)
{
	r->max = calloc(2 * (size_t)iters, sizeof(double));
	r->sum = calloc(3 * (size_t)iters, sizeof(double));
	r->max_all = calloc(2 * (size_t)iters, sizeof(double));
	r->sum_all = calloc(3 * (size_t)iters, sizeof(double));
	if (!r->max || !r->sum || !r->max_all || !r->sum_all)
		ob_die("out of memory");
}

void ob_iters_free(struct ob_iters *r)
{
	free(r->max);
	free(r->sum);
	free(r->max_all);
	free(r->sum_all);
}

void ob_iters_note(struct ob_iters *r, long i, double late_us,
                   const struct optireduce_status *st)
{
	if (!r->max) /* without --csv nothing is kept */
		return;
	r->max[2 * i] = late_us;
	r->max[2 * i + 1] = st ? (double)st->deadline_us[0] : 0;
	for (int p = 0; p < 2; p++)
		r->sum[3 * i + p] =
		    st ? (double)(st->elements_expected[p] - st->elements_received[p]) : 0;
	r->sum[3 * i + 2] =
	    st ? (double)(st->elements_expected[0] + st->elements_expected[1]) : 0;
}

void ob_iters_reduce(struct ob_iters *r, long iters)
{
	MPI_Reduce(r->max, r->max_all, 2 * (int)iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(r->sum, r->sum_all, 3 * (int)iters, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
}

const char *ob_iters_csv_head(void)
{
	return "impl,size,iter,latency_us,start_s,late_us,deadline_us,lost_phase1,"
	       "lost_phase2,elements_expected\n";
}

void ob_iters_csv_row(FILE *csv, const struct ob_iters *r, const char *impl, size_t size,
                      long i, double latency_us, double start_s)
{
	fprintf(csv, "%s,%zu,%ld,%.3f,%.3f,%.1f,%.0f,%.0f,%.0f,%.0f\n", impl, size, i,
	        latency_us, start_s, r->max_all[2 * i], r->max_all[2 * i + 1], r->sum_all[3 * i],
	        r->sum_all[3 * i + 1], r->sum_all[3 * i + 2]);
}
