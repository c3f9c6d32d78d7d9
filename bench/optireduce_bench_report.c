/* SPDX-License-Identifier: BSD-3-Clause */
/* optireduce_bench_report.c - optireduce_bench's output on rank 0: header, rows, A/B, CPU. */
#include <stdio.h>
#include <string.h>

#include "optireduce_bench.h"

void ob_print_header(const struct options *o, optireduce_comm_t *comm)
{
	char mpiver[MPI_MAX_LIBRARY_VERSION_STRING] = "";
	int len = 0;
	char *nl;

	MPI_Get_library_version(mpiver, &len);
	if ((nl = strchr(mpiver, '\n')))
		*nl = '\0';
	if ((nl = strchr(mpiver, ',')))
		*nl = '\0';
	printf("# OSU-style allreduce benchmark, liboptireduce %s\n", optireduce_version_string());
	if (comm) {
		printf("# Provider: %s (exact)",
		       optireduce_comm_provider(comm, OPTIREDUCE_MODE_EXACT));
		if (o->mode == OPTIREDUCE_MODE_BOUNDED) {
			const char *p = optireduce_comm_provider(comm, OPTIREDUCE_MODE_BOUNDED);
			printf(", %s (bounded)", p ? p : "none, one host");
		}
		printf(", libfabric %s\n", optireduce_libfabric_version());
	}
	printf("# Ranks: %d, dtype %s, op %s", ob_nranks, optireduce_dtype_name(o->dtype),
	       optireduce_op_name(o->op));
	if (comm) {
		char alg[256] = "?";
		optireduce_comm_get_param(comm, "algorithm", alg, sizeof(alg), NULL);
		printf(", mode %s, algorithm %s",
		       o->mode == OPTIREDUCE_MODE_BOUNDED ? "bounded" : "exact", alg);
		for (int k = 0; k < o->nparams; k++)
			printf(", %s", o->params[k]);
	}
	printf("\n");
	if (o->baseline_mpi || o->only_mpi)
		printf("# Baseline: MPI_Allreduce, %s%s\n", mpiver,
		       o->op == OPTIREDUCE_AVG ? " (MPI_SUM: MPI has no AVG)" : "");
	printf("# Latency of an iteration = time until the slowest rank returned (MAX over "
	       "ranks;\n"
	       "# completion time, like OSU's Avg); sleeping barrier before each iteration, not "
	       "timed.\n"
	       "# Avg = mean over iterations%s; P50/P99 = nearest-rank percentiles.\n",
	       o->n.full ? ", Min/Max = fastest/slowest iteration" : "");
	if (o->sync_ms > 0)
		printf("# Synchronised start: every rank starts an iteration at rank 0's clock "
		       "time + %ld ms,\n# set after the barrier (CLOCK_REALTIME).\n",
		       o->sync_ms);
	if (o->delay_us > 0 && o->delay_prob > 0)
		printf("# Straggler: rank %d sleeps %ld us before its call (untimed) in %.1f%% of "
		       "the iterations;\n# the latency is the other ranks' wait.\n",
		       o->delay_rank, o->delay_us, 100.0 * o->delay_prob);
	if (!o->only_mpi && o->mode == OPTIREDUCE_MODE_BOUNDED)
		printf("# Data(%%) = elements that did not arrive (both phases, all ranks); "
		       "Lost(%%) = contributions\n"
		       "# (whole blocks) missing, estimated from the rest.\n");
	bench_print_loadavg("at start");
	if (o->nbparams) {
		printf("# A/B: row B:SIZE is a second communicator with");
		for (int k = 0; k < o->nbparams; k++)
			printf(" %s", o->bparams[k]);
		printf(" (A's parameters otherwise);\n# A and B alternate every iteration (A B, "
		       "B A, ...), each after its own barrier.\n");
	}
	if (o->baseline_mpi)
		printf("# Per size: liboptireduce, then MPI_Allreduce (interleaved); ratio = "
		       "liboptireduce / MPI.\n");
	bench_print_table_head(o->n.full);
	if (!o->only_mpi && o->mode == OPTIREDUCE_MODE_BOUNDED)
		printf("%10s%10s", "Data(%)", "Lost(%)");
	if (o->baseline_mpi)
		printf("%14s%14s%11s%11s", "MPI P50(us)", "MPI P99(us)", "ratio P50", "ratio P99");
	printf("\n");
	fflush(stdout);
}

/* label: NULL for A (or MPI alone), "B:" for variant B, so that B's rows are told apart. */
void ob_print_row(const struct options *o, const char *label, size_t size, const struct result *r,
                  const struct result *mpi)
{
	bench_print_row(label, size, &r->t, o->n.full);
	if (!o->only_mpi && o->mode == OPTIREDUCE_MODE_BOUNDED)
		printf("%10.4f%10.4f", r->data_lost_pct, r->lost_pct);
	if (mpi)
		printf("%14.2f%14.2f%11.3f%11.3f", mpi->t.p50, mpi->t.p99, r->t.p50 / mpi->t.p50,
		       r->t.p99 / mpi->t.p99);
	printf("\n");
	fflush(stdout);
}

/* Variant B's row, then how A compares with it. */
void ob_print_ab(const struct options *o, size_t size, const struct result *a,
                 const struct result *b, const struct result *mpi)
{
	ob_print_row(o, "B:", size, b, mpi);
	printf("# A/B at %zu: Avg %.3f, P50 %.3f, P99 %.3f\n", size, a->t.avg / b->t.avg,
	       a->t.p50 / b->t.p50, a->t.p99 / b->t.p99);
	fflush(stdout);
}

/* CPU per call and rank, a comment line: tables that parse the rows skip it. */
void ob_print_cpu(const struct options *o, size_t size, const struct result *res, int have_b)
{
	printf("# CPU at %zu, ms per call and rank:", size);
	if (!o->only_mpi)
		printf(" liboptireduce %.3f", res[IMPL_OURS].cpu_ms);
	if (have_b)
		printf(", B %.3f", res[IMPL_OURS_B].cpu_ms);
	if (o->baseline_mpi || o->only_mpi)
		printf("%sMPI_Allreduce %.3f", o->only_mpi ? " " : ", ", res[IMPL_MPI].cpu_ms);
	printf("\n");
	fflush(stdout);
}
