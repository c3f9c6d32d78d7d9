/* SPDX-License-Identifier: BSD-3-Clause */
/* optireduce_bench_args.c - optireduce_bench's command line, and the errors that end it. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "optireduce_bench.h"

void ob_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "optireduce_bench: rank %d: ", ob_rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

/* Only rank 0 reports usage errors; everyone leaves. */
void ob_usage_error(const char *fmt, ...)
{
	va_list ap;

	if (ob_rank == 0) {
		fprintf(stderr, "optireduce_bench: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fprintf(stderr, " (-h for help)\n");
	}
	MPI_Finalize();
	exit(1);
}

static void usage(void)
{
	if (ob_rank != 0)
		return;
	printf("usage: optireduce_bench [options]\n");
	bench_counts_usage(stdout);
	printf("  -d, --type DTYPE           float (default), double, float16, bfloat16, int, "
	       "int8, uint8, int32, uint32, int64, uint64\n"
	       "  -o, --op OP                sum (default), prod, min, max, avg\n"
	       "      --mode exact|bounded   liboptireduce mode (default: "
	       "OPTIREDUCE_MODE, else exact)\n"
	       "      --algorithm NAME       algorithm or tune string (param 'algorithm')\n"
	       "      --param NAME=VALUE     set a liboptireduce parameter; repeatable\n"
	       "      --compare-param NAME=VALUE\n"
	       "                             also time variant B, a second communicator with "
	       "this\n"
	       "                             parameter changed (repeatable), alternating "
	       "with A\n"
	       "                             every iteration: an A/B test under the same "
	       "conditions\n"
	       "      --baseline mpi         also time MPI_Allreduce, interleaved per size\n"
	       "      --only mpi             time MPI_Allreduce only\n"
	       "      --mpi-bounded          MPI_Allreduce may be served bounded (under the "
	       "interposer with\n"
	       "                             OPTIREDUCE_PMPI_BOUNDED): its results are "
	       "checked as estimates\n"
	       "      --csv FILE             every iteration's latency: "
	       "impl,size,iter,latency_us\n"
	       "      --delay RANK:US:PROB   a straggler: RANK sleeps US microseconds "
	       "before its call,\n"
	       "                             untimed, in a fraction PROB of the "
	       "iterations (the same\n"
	       "                             ones for every implementation)\n"
	       "      --sync-start MS        after the barrier, rank 0 sets a start time MS "
	       "ms ahead\n"
	       "                             and every rank starts then (CLOCK_REALTIME: one "
	       "machine,\n"
	       "                             or clocks synchronised far better than the "
	       "latency); a\n"
	       "                             barrier's exit skew (a lost TCP segment: 200 ms) "
	       "is then\n"
	       "                             not timed; ranks that missed the start are "
	       "counted\n"
	       "  -h, --help                 this text\n");
}

static const struct {
	const char *name;
	enum optireduce_dtype dt;
} dtype_names[] = {
    {"float", OPTIREDUCE_FLOAT32},     {"float32", OPTIREDUCE_FLOAT32},
    {"double", OPTIREDUCE_FLOAT64},    {"float64", OPTIREDUCE_FLOAT64},
    {"float16", OPTIREDUCE_FLOAT16},   {"half", OPTIREDUCE_FLOAT16},
    {"bfloat16", OPTIREDUCE_BFLOAT16}, {"bf16", OPTIREDUCE_BFLOAT16},
    {"int", OPTIREDUCE_INT32},         {"int32", OPTIREDUCE_INT32},
    {"uint32", OPTIREDUCE_UINT32},     {"int8", OPTIREDUCE_INT8},
    {"char", OPTIREDUCE_INT8},         {"uint8", OPTIREDUCE_UINT8},
    {"int64", OPTIREDUCE_INT64},       {"long", OPTIREDUCE_INT64},
    {"uint64", OPTIREDUCE_UINT64},
};

enum {
	O_MODE = 256,
	O_ALG,
	O_PARAM,
	O_BASELINE,
	O_ONLY,
	O_MPI_BOUNDED,
	O_CSV,
	O_DELAY,
	O_SYNC,
	O_COMPARE
};

static enum optireduce_dtype parse_dtype(const char *arg)
{
	for (size_t k = 0; k < sizeof(dtype_names) / sizeof(dtype_names[0]); k++)
		if (strcasecmp(arg, dtype_names[k].name) == 0)
			return dtype_names[k].dt;
	ob_usage_error("unknown datatype '%s'", arg);
}

static enum optireduce_op parse_op(const char *arg)
{
	for (int k = 0; k < OPTIREDUCE_OP_COUNT; k++)
		if (strcasecmp(arg, optireduce_op_name((enum optireduce_op)k)) == 0)
			return (enum optireduce_op)k;
	ob_usage_error("unknown operation '%s'", arg);
}

static enum optireduce_mode parse_mode(const char *arg)
{
	if (strcasecmp(arg, "exact") == 0)
		return OPTIREDUCE_MODE_EXACT;
	if (strcasecmp(arg, "bounded") == 0)
		return OPTIREDUCE_MODE_BOUNDED;
	ob_usage_error("--mode wants exact or bounded, not '%s'", arg);
}

/* --param and --compare-param: NAME=VALUE appended to list. */
static void add_param(const char *option, const char *arg, const char **list, int *n)
{
	if (!strchr(arg, '=') || arg[0] == '=')
		ob_usage_error("%s wants NAME=VALUE, not '%s'", option, arg);
	if (*n == MAX_PARAMS)
		ob_usage_error("too many %s", option);
	list[(*n)++] = arg;
}

/* --baseline and --only take one word, mpi. */
static void want_mpi(const char *option, const char *arg)
{
	if (strcasecmp(arg, "mpi") != 0)
		ob_usage_error("%s: only 'mpi' is known, not '%s'", option, arg);
}

static void parse_delay(const char *arg, struct options *o)
{
	char tail;

	if (sscanf(arg, "%d:%ld:%lf%c", &o->delay_rank, &o->delay_us, &o->delay_prob, &tail) != 3 ||
	    o->delay_rank < 0 || o->delay_us < 0 || !(o->delay_prob >= 0) || o->delay_prob > 1)
		ob_usage_error("--delay wants RANK:US:PROB (e.g. 3:900000:0.1), not '%s'", arg);
}

static long parse_sync_ms(const char *arg)
{
	char *end;
	long ms;

	errno = 0;
	ms = strtol(arg, &end, 10);
	if (errno || *end || end == arg || ms < 1 || ms > 60000)
		ob_usage_error("--sync-start wants milliseconds in [1, 60000], not '%s'", arg);
	return ms;
}

/* One option that is not a shared count option. */
static void take_option(int c, const char *arg, struct options *o, char **argv)
{
	switch (c) {
	case 'd':
		o->dtype = parse_dtype(arg);
		break;
	case 'o':
		o->op = parse_op(arg);
		break;
	case O_MODE:
		o->mode = parse_mode(arg);
		break;
	case O_ALG:
		o->algorithm = arg;
		break;
	case O_PARAM:
		add_param("--param", arg, o->params, &o->nparams);
		break;
	case O_COMPARE:
		add_param("--compare-param", arg, o->bparams, &o->nbparams);
		break;
	case O_BASELINE:
		want_mpi("--baseline", arg);
		o->baseline_mpi = 1;
		break;
	case O_ONLY:
		want_mpi("--only", arg);
		o->only_mpi = 1;
		break;
	case O_MPI_BOUNDED:
		o->mpi_bounded = 1;
		break;
	case O_CSV:
		o->csv = arg;
		break;
	case O_DELAY:
		parse_delay(arg, o);
		break;
	case O_SYNC:
		o->sync_ms = parse_sync_ms(arg);
		break;
	case 'h':
		usage();
		MPI_Finalize();
		exit(0);
	default:
		if (optopt)
			ob_usage_error("bad or incomplete option '-%c'", optopt);
		ob_usage_error("unknown option '%s'", argv[optind - 1]);
	}
}

void ob_parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
	    BENCH_COUNT_LONG_OPTIONS,
	    {"type", required_argument, NULL, 'd'},
	    {"op", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {"mode", required_argument, NULL, O_MODE},
	    {"algorithm", required_argument, NULL, O_ALG},
	    {"param", required_argument, NULL, O_PARAM},
	    {"baseline", required_argument, NULL, O_BASELINE},
	    {"only", required_argument, NULL, O_ONLY},
	    {"mpi-bounded", no_argument, NULL, O_MPI_BOUNDED},
	    {"csv", required_argument, NULL, O_CSV},
	    {"delay", required_argument, NULL, O_DELAY},
	    {"sync-start", required_argument, NULL, O_SYNC},
	    {"compare-param", required_argument, NULL, O_COMPARE},
	    {NULL, 0, NULL, 0},
	};
	char err[160];
	int c;

	memset(o, 0, sizeof(*o));
	bench_counts_init(&o->n);
	o->dtype = OPTIREDUCE_FLOAT32;
	o->op = OPTIREDUCE_SUM;
	o->mode = OPTIREDUCE_MODE_DEFAULT;
	opterr = 0;
	while ((c = getopt_long(argc, argv, BENCH_COUNT_SHORT_OPTIONS "d:o:h", longs, NULL)) !=
	       -1) {
		int taken = bench_counts_option(&o->n, c, optarg, err, sizeof(err));

		if (taken < 0)
			ob_usage_error("%s", err);
		if (!taken)
			take_option(c, optarg, o, argv);
	}
	if (optind < argc)
		ob_usage_error("unexpected argument '%s'", argv[optind]);
	if (o->delay_us > 0 && o->delay_rank >= ob_nranks)
		ob_usage_error("--delay: rank %d, but only %d ranks", o->delay_rank, ob_nranks);
	if (o->only_mpi)
		o->baseline_mpi = 0;
	if (o->only_mpi && o->nbparams)
		ob_usage_error("--compare-param compares two liboptireduce communicators, not with "
		               "--only mpi");
	if (bench_counts_finish(&o->n, err, sizeof(err)))
		ob_usage_error("%s", err);
}
