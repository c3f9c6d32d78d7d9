/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_util.h - what the benchmark programs share: the OSU-style size and count options
 * (-m, -i, -x, --iter-large, --warmup-large, -f), the statistics of a size's timed
 * iterations (mean, min, max, nearest-rank percentiles), and the lines of the output that
 * bench/ scripts parse (the "# Size  Avg Latency(us) ..." table, the CSV rows, the load
 * average, the progress lines).  Plain C without MPI, so that optireduce_bench,
 * gloo_bench (C++) and hadamard_bench all link it.
 */
#ifndef OR_BENCH_UTIL_H
#define OR_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* As OSU: sizes above this use the "large" iteration and warm-up counts. */
#define BENCH_LARGE_MESSAGE_SIZE 8192

/* getopt_long values of the shared long options without a short letter. */
enum { BENCH_OPT_ITER_LARGE = 0x1000, BENCH_OPT_WARMUP_LARGE };

/* The shared entries of a getopt_long table (struct option), and their short letters. */
#define BENCH_COUNT_LONG_OPTIONS                                                                   \
	{"message-size", required_argument, NULL, 'm'},                                            \
	    {"iterations", required_argument, NULL, 'i'},                                          \
	    {"warmup", required_argument, NULL, 'x'}, {"full", no_argument, NULL, 'f'},            \
	    {"iter-large", required_argument, NULL, BENCH_OPT_ITER_LARGE},                         \
	{                                                                                          \
		"warmup-large", required_argument, NULL, BENCH_OPT_WARMUP_LARGE                    \
	}
#define BENCH_COUNT_SHORT_OPTIONS "m:i:x:f"

struct bench_counts {
	size_t min_size, max_size;
	long iters, iters_large, warmup, warmup_large;
	int full;
	int set_i, set_x, set_il, set_xl; /* which counts the command line gave */
};

/* Defaults: sizes 4 B to 1 MiB, 1000 (100 large) timed after 200 (10 large) warm-up. */
void bench_counts_init(struct bench_counts *c);

/*
 * One option of getopt_long: returns 0 when opt is not a shared one, 1 when it was taken,
 * -1 when arg is bad, with the message (e.g. "bad -m '1x'") in err.
 */
int bench_counts_option(struct bench_counts *c, int opt, const char *arg, char *err, size_t errlen);

/* After the loop: as OSU, -i and -x set every size unless the large counts are given too;
 * MIN 0 is 1.  Returns -1 with a message in err when MAX is below MIN. */
int bench_counts_finish(struct bench_counts *c, char *err, size_t errlen);

/* Timed and warm-up iterations at a size. */
long bench_iters_at(const struct bench_counts *c, size_t size);
long bench_warmup_at(const struct bench_counts *c, size_t size);

/* The help lines of the shared options, as both programs print them. */
void bench_counts_usage(FILE *f);

/* A size with an optional k, m, g suffix (powers of 1024) and an optional b; 0 or -1. */
int bench_parse_size(const char *s, size_t *out);

/* A whole decimal number >= min; 0 or -1. */
int bench_parse_count(const char *s, long min, long *out);

struct bench_stats {
	double avg, min, max, p50, p99;
	long iters;
};

/* Nearest rank: the smallest value with at least p % of the n sorted samples at or below. */
double bench_percentile(const double *sorted, long n, double p);

/* Mean of lat[0..n) in its order, then sorts lat in place for min, max, P50, P99. */
void bench_stats_of(double *lat, long n, struct bench_stats *s);

double bench_now_s(void);  /* CLOCK_MONOTONIC */
double bench_wall_s(void); /* CLOCK_REALTIME, Unix seconds */

/* "# Load average WHEN: ..." from /proc/loadavg (nothing when it cannot be read). */
void bench_print_loadavg(const char *when);

/* The table's first columns, "# Size  Avg Latency(us) [Min Max Iterations] P50 P99", and a
 * row's, "SIZE AVG [MIN MAX ITERS] P50 P99", without the newline: the caller adds its own
 * columns.  label prefixes the size (e.g. "B:"), NULL for none. */
void bench_print_table_head(int full);
void bench_print_row(const char *label, size_t size, const struct bench_stats *s, int full);

/* One CSV row "impl,size,iter,latency_us[,start_s]"; start NULL for no start_s column. */
void bench_csv_row(FILE *csv, const char *impl, size_t size, long iter, double latency_us,
                   const double *start_s);

/* "# [progress] T s: WHAT, size S, iteration I of N" on stderr at most every 10 s. */
struct bench_progress {
	double begin, last;
};
void bench_progress_init(struct bench_progress *p);
void bench_progress_note(struct bench_progress *p, const char *what, size_t size, long it,
                         long total);

#ifdef __cplusplus
}
#endif

#endif
