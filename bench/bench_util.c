/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_util.c - the options, statistics and output lines the benchmark programs share
 * (bench_util.h).  The output formats are parsed by bench/compare.sh, steal_at.sh and
 * perf_table.sh: a change here is a change to them.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROGRESS_EVERY_S 10.0

void bench_counts_init(struct bench_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->min_size = 4;
	c->max_size = 1 << 20;
	c->iters = 1000;
	c->iters_large = 100;
	c->warmup = 200;
	c->warmup_large = 10;
}

int bench_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v, mult = 1;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		mult = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1ull << 30;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || (v && mult > SIZE_MAX / v))
		return -1;
	*out = (size_t)(v * mult);
	return 0;
}

int bench_parse_count(const char *s, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

/* -m [MIN:]MAX; an empty MIN or MAX keeps its default. */
static int parse_sizes(struct bench_counts *c, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char lo[64];
	size_t n;

	if (!colon)
		return bench_parse_size(arg, &c->max_size);
	n = (size_t)(colon - arg);
	if (n >= sizeof(lo))
		return -1;
	memcpy(lo, arg, n);
	lo[n] = '\0';
	if ((n && bench_parse_size(lo, &c->min_size)) ||
	    (colon[1] && bench_parse_size(colon + 1, &c->max_size)))
		return -1;
	return 0;
}

static int count_option(long *dst, int *set, const char *arg, long min, const char *what, char *err,
                        size_t errlen)
{
	if (bench_parse_count(arg, min, dst)) {
		snprintf(err, errlen, "bad %s '%s'", what, arg);
		return -1;
	}
	*set = 1;
	return 1;
}

int bench_counts_option(struct bench_counts *c, int opt, const char *arg, char *err, size_t errlen)
{
	switch (opt) {
	case 'm':
		if (parse_sizes(c, arg)) {
			snprintf(err, errlen, "bad -m '%s'", arg);
			return -1;
		}
		return 1;
	case 'i':
		return count_option(&c->iters, &c->set_i, arg, 1, "iteration count", err, errlen);
	case 'x':
		return count_option(&c->warmup, &c->set_x, arg, 0, "warm-up count", err, errlen);
	case BENCH_OPT_ITER_LARGE:
		return count_option(&c->iters_large, &c->set_il, arg, 1, "iteration count", err,
		                    errlen);
	case BENCH_OPT_WARMUP_LARGE:
		return count_option(&c->warmup_large, &c->set_xl, arg, 0, "warm-up count", err,
		                    errlen);
	case 'f':
		c->full = 1;
		return 1;
	default:
		return 0;
	}
}

int bench_counts_finish(struct bench_counts *c, char *err, size_t errlen)
{
	if (c->set_i && !c->set_il)
		c->iters_large = c->iters;
	if (c->set_x && !c->set_xl)
		c->warmup_large = c->warmup;
	if (c->min_size == 0)
		c->min_size = 1;
	if (c->max_size < c->min_size) {
		snprintf(err, errlen, "-m: MAX %zu is below MIN %zu", c->max_size, c->min_size);
		return -1;
	}
	return 0;
}

long bench_iters_at(const struct bench_counts *c, size_t size)
{
	return size > BENCH_LARGE_MESSAGE_SIZE ? c->iters_large : c->iters;
}

long bench_warmup_at(const struct bench_counts *c, size_t size)
{
	return size > BENCH_LARGE_MESSAGE_SIZE ? c->warmup_large : c->warmup;
}

void bench_counts_usage(FILE *f)
{
	fputs("  -m, --message-size [MIN:]MAX  sizes in bytes, powers of two from MIN "
	      "(k, m, g suffixes; default 4:1m)\n"
	      "  -i, --iterations N         timed iterations per size (default 1000, "
	      "100 above 8 KiB)\n"
	      "  -x, --warmup N             untimed iterations per size (default 200, "
	      "10 above 8 KiB)\n"
	      "      --iter-large N         timed iterations above 8 KiB (overrides -i "
	      "there)\n"
	      "      --warmup-large N       warm-up iterations above 8 KiB\n"
	      "  -f, --full                 add Min/Max Latency(us) and Iterations\n",
	      f);
}

double bench_percentile(const double *sorted, long n, double p)
{
	long k = (long)ceil(p / 100.0 * (double)n);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void bench_stats_of(double *lat, long n, struct bench_stats *s)
{
	s->iters = n;
	s->avg = 0;
	for (long i = 0; i < n; i++)
		s->avg += lat[i];
	s->avg /= (double)n;
	qsort(lat, (size_t)n, sizeof(double), cmp_double);
	s->min = lat[0];
	s->max = lat[n - 1];
	s->p50 = bench_percentile(lat, n, 50);
	s->p99 = bench_percentile(lat, n, 99);
}

double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_print_loadavg(const char *when)
{
	char buf[128] = "";
	FILE *f = fopen("/proc/loadavg", "r");

	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		printf("# Load average %s: %s\n", when, buf);
	}
	fclose(f);
}

void bench_print_table_head(int full)
{
	printf("%-10s%18s", "# Size", "Avg Latency(us)");
	if (full)
		printf("%18s%18s%12s", "Min Latency(us)", "Max Latency(us)", "Iterations");
	printf("%12s%12s", "P50(us)", "P99(us)");
}

void bench_print_row(const char *label, size_t size, const struct bench_stats *s, int full)
{
	if (label)
		printf("%s%-*zu%18.2f", label, (int)(10 - strlen(label)), size, s->avg);
	else
		printf("%-10zu%18.2f", size, s->avg);
	if (full)
		printf("%18.2f%18.2f%12ld", s->min, s->max, s->iters);
	printf("%12.2f%12.2f", s->p50, s->p99);
}

void bench_csv_row(FILE *csv, const char *impl, size_t size, long iter, double latency_us,
                   const double *start_s)
{
	if (start_s)
		fprintf(csv, "%s,%zu,%ld,%.3f,%.3f\n", impl, size, iter, latency_us, *start_s);
	else
		fprintf(csv, "%s,%zu,%ld,%.3f\n", impl, size, iter, latency_us);
}

void bench_progress_init(struct bench_progress *p)
{
	p->begin = p->last = bench_now_s();
}

void bench_progress_note(struct bench_progress *p, const char *what, size_t size, long it,
                         long total)
{
	double t = bench_now_s();

	if (t - p->last < PROGRESS_EVERY_S)
		return;
	p->last = t;
	fprintf(stderr, "# [progress] %.0f s: %s, size %zu, iteration %ld of %ld\n", t - p->begin,
	        what, size, it, total);
	fflush(stderr);
}
