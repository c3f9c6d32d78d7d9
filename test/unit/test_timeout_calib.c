/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the timeout controller's calibration (lib/bounded/ctl/timeout_learn.c) on
 * synthetic traces: t_B from the calibration samples, its slack floor, and the provisional
 * bound that replaces initial_us once OR_TMO_PROVISIONAL_AFTER samples are in.  Expected
 * bounds come from a reference written here (qsort and nearest rank), not the library's.
 * Prints every check; exit 0 when all pass, 1 otherwise.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "timeout_check.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* t_B of the first n samples: nearest-rank P, times M, at least P + slack. */
static double reference_bound(const struct or_tmo_config *c, const uint64_t *samples, uint32_t n)
{
	uint64_t sorted[OR_TMO_CALIB_MAX];
	uint32_t rank = 1;
	double pct;

	memcpy(sorted, samples, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	while (rank < n && (double)rank * 100.0 < c->calib_percentile * (double)n - 1e-6)
		rank++;
	pct = (double)sorted[rank - 1];
	return fmax(pct * c->calib_margin, pct + (double)c->calib_slack_us);
}

/* The deadline while calibrating, before the operation that adds sample n (0-based). */
static uint64_t expected_calibrating(const struct or_tmo_config *c, const uint64_t *samples,
                                     uint32_t n)
{
	double b;

	if (n < OR_TMO_PROVISIONAL_AFTER)
		return c->initial_us;
	b = ceil(OR_TMO_PROVISIONAL_FACTOR * reference_bound(c, samples, n));
	return b < (double)c->initial_us ? (uint64_t)b : c->initial_us;
}

static void test_calibration(void)
{
	static struct or_tmo t;
	struct or_tmo_config c = base_cfg();
	/* 100, 200, ... 2000 in a scrambled order: 7 is coprime with 20. */
	uint64_t trace[20];
	const struct {
		double p, m;
		uint64_t expect;
	} cases[] = {
	    {95, 1.5, 2850},                 /* nearest rank ceil(0.95*20) = 19th: 1900 */
	    {50, 1.5, 1500},                 /* 10th: 1000 */
	    {100, 1.0, 2000}, {1, 2.0, 200}, /* 1st: 100 */
	    {96, 1.25, 2500},                /* ceil(19.2) = 20th: 2000 */
	};
	enum or_tmo_reason r = OR_TMO_NONE;
	uint64_t d;

	for (int i = 0; i < 20; i++)
		trace[i] = 100 * (uint64_t)((i * 7) % 20 + 1);
	c.initial_us = 4000; /* above some provisional bounds, below others */

	for (size_t n = 0; n < sizeof(cases) / sizeof(cases[0]); n++) {
		int calibrating_ok = 1, provisional = 0;

		c.calib_ops = 20;
		c.calib_percentile = cases[n].p;
		c.calib_margin = cases[n].m;
		or_tmo_init(&t, &c);
		for (int i = 0; i < 20; i++) {
			uint64_t want = expected_calibrating(&c, trace, (uint32_t)i);
			enum or_tmo_reason why =
			    want < c.initial_us ? OR_TMO_PROVISIONAL : OR_TMO_INITIAL;

			if (or_tmo_calibrated(&t, SZ) || or_tmo_decide(&t, SZ) != want ||
			    or_tmo_last(&t)->why != why || or_tmo_last(&t)->t_b_us != 0)
				calibrating_ok = 0;
			if (i >= OR_TMO_PROVISIONAL_AFTER && why == OR_TMO_PROVISIONAL)
				provisional++;
			r = or_tmo_complete(&t, SZ, trace[i], 0, 0.0);
			if (i < 19 && r != OR_TMO_CALIBRATING)
				calibrating_ok = 0;
		}
		CHECK(calibrating_ok && or_tmo_calibrated(&t, SZ) && provisional > 0,
		      "P%g M%g: initial_us for %d operations, then the provisional bound (%d of "
		      "them below initial_us), while calibrating",
		      cases[n].p, cases[n].m, OR_TMO_PROVISIONAL_AFTER, provisional);
		d = or_tmo_decide(&t, SZ);
		CHECK(r == OR_TMO_CALIBRATED && d == cases[n].expect &&
		          or_tmo_last(&t)->why == OR_TMO_ADAPTIVE,
		      "P%g M%g of 100..2000 µs: t_B = %llu (expected %llu, reason %s)", cases[n].p,
		      cases[n].m, (unsigned long long)d, (unsigned long long)cases[n].expect,
		      or_tmo_reason_name(or_tmo_last(&t)->why));
	}
	CHECK(or_tmo_last(&t)->t_b_us == 2500 && or_tmo_last(&t)->unclamped_us == 2500,
	      "decision log: t_b_us 2500, unclamped_us 2500");
	CHECK(or_tmo_last(&t)->t_c0_us == 1050 && or_tmo_local_estimate(&t, SZ) == 1050,
	      "t_C restarts at the median of the calibration samples (1050)");
	CHECK(or_tmo_decide(&t, 1 * KB) == c.initial_us && !or_tmo_calibrated(&t, 1 * KB),
	      "another size class is still calibrating (initial_us)");
}

/* The slack floor: a short phase gets calib_slack_us past its percentile, a long one its margin. */
static void test_calibration_slack(void)
{
	static struct or_tmo t;
	struct or_tmo_config c = base_cfg();
	const struct {
		uint64_t phase_us, expect;
	} cases[] = {
	    {4000, 6500},     /* 1.25 x 4000 = 5000 < 4000 + 2500 */
	    {10000, 12500},   /* 12500 both ways */
	    {100000, 125000}, /* the margin's 25 % is more than the slack */
	};

	c.calib_ops = 16;
	c.calib_percentile = 50;
	c.calib_margin = 1.25; /* exact in binary, so t_B has no rounding */
	c.calib_slack_us = 2500;
	for (size_t n = 0; n < sizeof(cases) / sizeof(cases[0]); n++) {
		uint64_t d;

		or_tmo_init(&t, &c);
		calibrate_flat(&t, c.calib_ops, cases[n].phase_us);
		d = or_tmo_decide(&t, SZ);
		CHECK(d == cases[n].expect,
		      "phases of %llu µs, M 1.25, slack 2500: t_B %llu (expected %llu)",
		      (unsigned long long)cases[n].phase_us, (unsigned long long)d,
		      (unsigned long long)cases[n].expect);
	}
}

/*
 * What the provisional bound is for: operations that a straggler or a lost datagram would
 * hold to initial_us are cut at it, and because a cut phase is recorded at the bound, above
 * the median, t_B comes out as the uncut samples give it.  The trace is fed as a live
 * communicator feeds it: a phase longer than the deadline ends at the deadline, a hit.
 */
static void test_provisional_cut(void)
{
	static struct or_tmo t;
	struct or_tmo_config c = base_cfg();
	uint64_t trace[16], fed[16], longest_cut = 0;
	int cuts = 0;

	c.calib_ops = 16;
	c.calib_percentile = 50;
	c.calib_margin = 1.25;
	for (int i = 0; i < 16; i++)
		trace[i] = 100000 + 1000 * (uint64_t)((i * 5) % 16);
	trace[6] = trace[11] = 300000; /* a rank that entered 200 ms late */
	trace[13] = c.initial_us;      /* a phase nothing would have ended */

	or_tmo_init(&t, &c);
	for (int i = 0; i < 16; i++) {
		uint64_t d = or_tmo_decide(&t, SZ);
		int hit = trace[i] >= d;

		fed[i] = hit ? d : trace[i];
		if (hit && i >= OR_TMO_PROVISIONAL_AFTER) {
			cuts++;
			if (d > longest_cut)
				longest_cut = d;
		}
		or_tmo_complete(&t, SZ, fed[i], hit, 0.0);
	}
	/* No later than the factor times the t_B of the slowest uncut phase, 115 ms. */
	CHECK(cuts == 3 &&
	          (double)longest_cut <= OR_TMO_PROVISIONAL_FACTOR * c.calib_margin * 115000,
	      "the straggler and the endless phase cut at the provisional bound: %d cuts, "
	      "longest %llu us (the uncut phases take 100-115 ms)",
	      cuts, (unsigned long long)longest_cut);
	CHECK(or_tmo_calibrated(&t, SZ) &&
	          or_tmo_decide(&t, SZ) == (uint64_t)ceil(reference_bound(&c, trace, 16)) &&
	          or_tmo_decide(&t, SZ) == (uint64_t)ceil(reference_bound(&c, fed, 16)),
	      "t_B %llu us: as the uncut trace gives it (%.0f)",
	      (unsigned long long)or_tmo_decide(&t, SZ), ceil(reference_bound(&c, trace, 16)));

	/* A provisional bound above initial_us leaves initial_us. */
	c.initial_us = 120000;
	or_tmo_init(&t, &c);
	for (int i = 0; i < OR_TMO_PROVISIONAL_AFTER; i++)
		or_tmo_complete(&t, SZ, 100000, 0, 0.0);
	CHECK(or_tmo_decide(&t, SZ) == 120000 && or_tmo_last(&t)->why == OR_TMO_INITIAL,
	      "provisional bound %.1f ms above initial_us 120 ms: initial_us (reason %s)",
	      OR_TMO_PROVISIONAL_FACTOR * c.calib_margin * 100.0,
	      or_tmo_reason_name(or_tmo_last(&t)->why));
}

int main(void)
{
	test_calibration();
	test_calibration_slack();
	test_provisional_cut();
	printf("%s: %d failure(s)\n", check_failures ? "FAIL" : "PASS", check_failures);
	return check_failures ? 1 : 0;
}
