/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of how the timeout controller (lib/bounded/ctl/timeout.c, lib/bounded/ctl/timeout_learn.c) adapts on
 * synthetic traces: stretching and tightening, extremes, consensus across ranks, incast,
 * and the loss budget.  Prints every check; exit 0 when all pass, 1 otherwise.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "timeout_check.h"

static void test_adapt(void)
{
	static struct or_tmo t;
	struct or_tmo_config c = base_cfg();
	uint64_t d0, d, prev;
	int monotone = 1;

	c.calib_ops = 8;
	c.backoff_after_us = 0; /* the count of cuts alone; the time horizon is tested below */
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 8, 1000);
	d0 = or_tmo_decide(&t, SZ);
	CHECK(d0 == 1500, "calibrated on 1000 µs: deadline 1500");

	prev = d0;
	for (int i = 0; i < 40; i++) {
		or_tmo_complete(&t, SZ, 500, 0, 0.0);
		d = or_tmo_decide(&t, SZ);
		if (d > prev)
			monotone = 0;
		prev = d;
	}
	CHECK(monotone && prev >= 750 && prev <= 770,
	      "quiet run (40 ops of 500 µs): deadline shrinks steadily to %llu (~750)",
	      (unsigned long long)prev);

	monotone = 1;
	for (int i = 0; i < 40; i++) {
		or_tmo_complete(&t, SZ, 1400, 0, 0.0);
		d = or_tmo_decide(&t, SZ);
		if (d < prev)
			monotone = 0;
		prev = d;
	}
	CHECK(monotone && prev >= 2050 && prev <= 2100,
	      "busy run (40 ops of 1400 µs): deadline grows steadily to %llu (~2100)",
	      (unsigned long long)prev);

	/* Timeouts with little loss (a lost LAST packet) teach nothing. */
	d0 = prev;
	for (int i = 0; i < 5; i++)
		CHECK(or_tmo_complete(&t, SZ, d0, 1, 0.001) == OR_TMO_TIMED_OUT,
		      "hard timeout with 0.1%% loss: timed_out, t_C untouched");
	CHECK(or_tmo_decide(&t, SZ) == d0, "deadline unchanged by light-loss timeouts");

	/* A burst that cuts fewer than OR_TMO_BACKOFF_CUTS operations in a row is what the
	 * deadline is for: the next deadline stays. */
	for (int i = 0; i < OR_TMO_BACKOFF_CUTS - 1; i++)
		CHECK(or_tmo_complete(&t, SZ, d0, 1, 0.3) == OR_TMO_TIMED_OUT &&
		          or_tmo_decide(&t, SZ) == d0,
		      "heavy-loss timeout %d of %d in a row: timed_out, deadline stays", i + 1,
		      OR_TMO_BACKOFF_CUTS - 1);
	or_tmo_complete(&t, SZ, 1400, 0, 0.0);
	CHECK(or_tmo_complete(&t, SZ, d0, 1, 0.3) == OR_TMO_TIMED_OUT,
	      "a clean completion between them starts the count again");
	or_tmo_complete(&t, SZ, 1400, 0, 0.0);

	/* A network that slowed past the deadline: only backoff can notice. */
	prev = d0;
	monotone = 1;
	for (int i = 0; i < OR_TMO_BACKOFF_CUTS - 1; i++)
		or_tmo_complete(&t, SZ, prev, 1, 0.3);
	CHECK(or_tmo_decide(&t, SZ) == d0, "first %d heavy-loss timeouts: deadline stays",
	      OR_TMO_BACKOFF_CUTS - 1);
	for (int i = 0; i < 4; i++) {
		if (or_tmo_complete(&t, SZ, prev, 1, 0.3) != OR_TMO_BACKOFF)
			monotone = 0;
		d = or_tmo_decide(&t, SZ);
		if (d < prev * 3 / 2 - 2 || d > prev * 3 / 2 + 2)
			monotone = 0;
		prev = d;
	}
	CHECK(monotone, "then each heavy-loss timeout: deadline x1.5 (%llu -> %llu)",
	      (unsigned long long)d0, (unsigned long long)prev);
	{
		/* Slower than the deadline without backoff: the slowdown may last, decay only. */
		double b0 = or_tmo_last(&t)->backoff;
		or_tmo_complete(&t, SZ, prev - 1, 0, 0.0);
		or_tmo_decide(&t, SZ);
		CHECK(fabs(or_tmo_last(&t)->backoff - (1.0 + (b0 - 1.0) * (1.0 - c.ewma_alpha))) <
		          1e-9,
		      "a completion beyond the plain deadline decays the backoff: %.3f -> %.3f", b0,
		      or_tmo_last(&t)->backoff);
	}
	/* Within it: the slowdown is over, and the next deadline is the plain one at once. */
	or_tmo_complete(&t, SZ, 1400, 0, 0.0);
	d = or_tmo_decide(&t, SZ);
	CHECK(d >= 2050 && d <= 2110 && or_tmo_last(&t)->backoff == 1.0,
	      "one completion that fits the plain deadline ends the backoff: deadline %llu",
	      (unsigned long long)d);

	c.backoff = 1;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 8, 1000);
	for (int i = 0; i < OR_TMO_BACKOFF_CUTS + 2; i++)
		or_tmo_complete(&t, SZ, 1500, 1, 0.5);
	CHECK(or_tmo_decide(&t, SZ) == 1500, "backoff = 1: heavy-loss timeouts keep t_B");

	/* A burst shorter than backoff_after_us is cut, however many operations it spans. */
	c.backoff = 1.5;
	c.backoff_after_us = 6000;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 8, 1000);
	for (int i = 0; i < 3; i++)
		CHECK(or_tmo_complete(&t, SZ, 1500, 1, 0.5) == OR_TMO_TIMED_OUT &&
		          or_tmo_decide(&t, SZ) == 1500,
		      "heavy-loss cut %d, %d us of %llu cut: deadline stays", i + 1, 1500 * (i + 1),
		      (unsigned long long)c.backoff_after_us);
	CHECK(or_tmo_complete(&t, SZ, 1500, 1, 0.5) == OR_TMO_BACKOFF &&
	          or_tmo_decide(&t, SZ) == 2250,
	      "the cut that makes it %llu us: backoff, deadline 2250",
	      (unsigned long long)c.backoff_after_us);
	or_tmo_complete(&t, SZ, 1000, 0, 0.0);
	for (int i = 0; i < 3; i++)
		or_tmo_complete(&t, SZ, 1500, 1, 0.5);
	CHECK(or_tmo_decide(&t, SZ) == 1500,
	      "a clean completion ends the backoff and starts the horizon again");
	/* However long the horizon, OR_TMO_BACKOFF_CUTS_ANYWAY cuts in a row back off. */
	c.backoff_after_us = 1000000000;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 8, 1000);
	for (int i = 0; i < OR_TMO_BACKOFF_CUTS_ANYWAY - 1; i++)
		or_tmo_complete(&t, SZ, 1500, 1, 0.5);
	CHECK(or_tmo_decide(&t, SZ) == 1500, "%d short cuts: deadline stays",
	      OR_TMO_BACKOFF_CUTS_ANYWAY - 1);
	CHECK(or_tmo_complete(&t, SZ, 1500, 1, 0.5) == OR_TMO_BACKOFF &&
	          or_tmo_decide(&t, SZ) == 2250,
	      "the %dth: backoff, deadline 2250", OR_TMO_BACKOFF_CUTS_ANYWAY);
	c.backoff_after_us = 0;

	/* t_C is a median: bursts that slow fewer than half of the window do not move it. */
	c.backoff = 1.5;
	c.calib_ops = OR_TMO_WINDOW;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, OR_TMO_WINDOW, 1000);
	for (int i = 0; i < OR_TMO_WINDOW; i++)
		or_tmo_complete(&t, SZ, i % 3 == 0 ? 3000 : 1000, 0, 0.0);
	CHECK(or_tmo_decide(&t, SZ) == 1500 && or_tmo_local_estimate(&t, SZ) == 1000,
	      "a third of the completions 3x slow: t_C %u, deadline %llu (1000, 1500)",
	      or_tmo_local_estimate(&t, SZ), (unsigned long long)or_tmo_decide(&t, SZ));
	for (int i = 0; i < OR_TMO_WINDOW / 2 + 1; i++)
		or_tmo_complete(&t, SZ, 3000, 0, 0.0);
	CHECK(or_tmo_local_estimate(&t, SZ) == 3000 && or_tmo_decide(&t, SZ) == 4500,
	      "once most of the window is 3x slow: t_C %u, deadline %llu (3000, 4500)",
	      or_tmo_local_estimate(&t, SZ), (unsigned long long)or_tmo_decide(&t, SZ));
}

static void test_extremes(void)
{
	static struct or_tmo t;
	struct or_tmo_config c = base_cfg();
	int ok = 1;

	c.calib_ops = 4;
	c.min_us = 200;
	c.max_us = 2000000;
	c.initial_us = c.max_us;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 4, 0);
	CHECK(or_tmo_last(&t)->deadline_us == 200 && or_tmo_last(&t)->why == OR_TMO_CLAMP_MIN,
	      "0 µs completions: deadline = min_us (clamp_min)");
	CHECK(or_tmo_local_estimate(&t, SZ) >= 1, "0 µs completions: advertised estimate is not "
	                                          "0 (\"none\")");
	for (int i = 0; i < 50; i++)
		or_tmo_complete(&t, SZ, 0, 0, 0.0);
	CHECK(or_tmo_decide(&t, SZ) == 200, "a run of 0 µs completions stays at min_us");

	or_tmo_init(&t, &c);
	calibrate_flat(&t, 4, UINT64_MAX);
	CHECK(or_tmo_last(&t)->deadline_us == c.max_us && or_tmo_last(&t)->why == OR_TMO_CLAMP_MAX,
	      "UINT64_MAX µs completions: deadline = max_us (clamp_max)");
	for (int i = 0; i < 20; i++) {
		or_tmo_complete(&t, SZ, UINT64_MAX, i & 1, 1.0);
		if (or_tmo_decide(&t, SZ) != c.max_us)
			ok = 0;
	}
	CHECK(ok, "huge completions and total-loss timeouts stay at max_us");
	CHECK(or_tmo_local_estimate(&t, SZ) <= c.max_us, "advertised estimate clipped to max_us");

	c.calib_margin = 1e300;
	c.early_fraction = 1e300;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 4, UINT64_MAX);
	CHECK(or_tmo_last(&t)->deadline_us == c.max_us && or_tmo_last(&t)->t_b_us == UINT64_MAX &&
	          or_tmo_last(&t)->quiet_us == UINT64_MAX,
	      "margin and early fraction 1e300: max_us, t_B and quiet saturate");
	c.calib_margin = 1.5;
	c.early_fraction = 0.1;

	c.nranks = 4;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 4, 1000);
	for (uint32_t r = 1; r < 4; r++)
		or_tmo_peer_estimate(&t, r, SZ, UINT32_MAX);
	CHECK(or_tmo_decide(&t, SZ) == c.max_us, "peers advertising UINT32_MAX: max_us");
	for (uint32_t r = 1; r < 4; r++)
		or_tmo_peer_estimate(&t, r, SZ, 1);
	CHECK(or_tmo_decide(&t, SZ) == c.min_us, "peers advertising 1 µs: min_us");

	ok = 1;
	or_tmo_init(&t, &c);
	for (size_t b = 0; b < 64; b++) {
		size_t bytes = b == 63 ? SIZE_MAX : (size_t)1 << b;
		uint64_t d = or_tmo_decide(&t, bytes);

		or_tmo_complete(&t, bytes, b * 99991, (int)(b & 1), NAN);
		if (d < c.min_us || d > c.max_us)
			ok = 0;
	}
	CHECK(ok, "every size from 1 byte to SIZE_MAX gets a deadline in [min_us, max_us]");
}

static void test_consensus(void)
{
	static struct or_tmo t;
	static uint32_t store[OR_TMO_PEER_STORE_LEN(1024)];
	struct or_tmo_config c = base_cfg();
	const uint32_t peers[] = {990, 1010, 1000, 1005, 995, 1002};
	uint64_t d;

	c.calib_ops = 4;
	c.nranks = 8;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 4, 1000);
	for (uint32_t r = 1; r <= 6; r++)
		or_tmo_peer_estimate(&t, r, SZ, peers[r - 1]);
	or_tmo_peer_estimate(&t, 7, SZ, 1000000);
	d = or_tmo_decide(&t, SZ);
	CHECK(or_tmo_last(&t)->consensus_us == 1001 && or_tmo_last(&t)->estimates == 8 && d == 1502,
	      "one rank advertising 1 s among ~1000 µs: consensus %u over %u ranks, deadline "
	      "%llu",
	      or_tmo_last(&t)->consensus_us, or_tmo_last(&t)->estimates, (unsigned long long)d);
	or_tmo_peer_estimate(&t, 7, SZ, 1);
	d = or_tmo_decide(&t, SZ);
	CHECK(or_tmo_last(&t)->consensus_us == 1000 && d == 1500,
	      "the same rank advertising 1 µs: consensus %u, deadline %llu",
	      or_tmo_last(&t)->consensus_us, (unsigned long long)d);
	or_tmo_peer_estimate(&t, 7, SZ, 0);
	or_tmo_decide(&t, SZ);
	CHECK(or_tmo_last(&t)->estimates == 7 && or_tmo_last(&t)->consensus_us == 1000,
	      "estimate 0 withdraws the rank: 7 estimates, median 1000");
	CHECK(or_tmo_peer_estimate(&t, 0, SZ, 5) == 0 &&
	          or_tmo_peer_estimate(&t, 8, SZ, 5) == OR_TMO_EINVAL,
	      "own rank ignored, rank 8 of 8 rejected");
	or_tmo_decide(&t, SZ);
	CHECK(or_tmo_last(&t)->estimates == 7, "own looped-back estimate not counted");
	or_tmo_peer_estimate(&t, 3, 1 * KB, 50000);
	or_tmo_decide(&t, SZ);
	CHECK(or_tmo_last(&t)->consensus_us == 1000,
	      "an estimate for another size class does not move this one");

	/* Two ranks: the median is the midpoint. */
	c.nranks = 2;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 4, 1000);
	or_tmo_peer_estimate(&t, 1, SZ, 2000);
	or_tmo_decide(&t, SZ);
	CHECK(or_tmo_last(&t)->consensus_us == 1500, "two ranks 1000 and 2000: consensus 1500");

	/* 1024 ranks in a caller store: the majority's view wins. */
	c.nranks = 1024;
	c.rank = 512;
	or_tmo_init_store(&t, &c, store, OR_TMO_PEER_STORE_LEN(1024));
	calibrate_flat(&t, 4, 1000);
	for (uint32_t r = 0; r < 1024; r++)
		or_tmo_peer_estimate(&t, r, SZ, r < 600 ? 2000 : 3);
	d = or_tmo_decide(&t, SZ);
	CHECK(or_tmo_last(&t)->consensus_us == 2000 && d == 3000,
	      "1024 ranks, 599 peers at 2000 µs, 424 at 3 µs, self 1000: consensus %u, deadline "
	      "%llu",
	      or_tmo_last(&t)->consensus_us, (unsigned long long)d);

	/* The early timeout scales with the consensus, not the local t_C. */
	{
		struct or_tmo_phase ph = {0, 0, 4, 4, 1000, 900, 100, 0, 0};

		c.early_fraction = 0.25;
		or_tmo_init_store(&t, &c, store, OR_TMO_PEER_STORE_LEN(1024));
		calibrate_flat(&t, 4, 1000);
		for (uint32_t r = 0; r < 1024; r++)
			or_tmo_peer_estimate(&t, r, SZ, 4000);
		or_tmo_decide(&t, SZ);
		CHECK(or_tmo_phase_check(&t, SZ, &ph, 100 + 999) == OR_TMO_NOT_YET &&
		          or_tmo_phase_check(&t, SZ, &ph, 100 + 1000) == OR_TMO_EARLY_TIMEOUT,
		      "consensus 4000 µs, F 0.25: early after 1000 µs of quiet, not 250");
	}
}

static void test_incast(void)
{
	static struct or_tmo t;
	struct or_tmo_config c = base_cfg();
	int ok = 1;

	c.nranks = 16;
	c.clean_ops_to_grow = 8;
	c.loss_threshold = 0.01;
	or_tmo_init(&t, &c);
	CHECK(or_tmo_incast(&t) == 15, "16 ranks: incast starts at N-1 = 15");
	or_tmo_complete(&t, SZ, 100, 1, 0.0);
	CHECK(or_tmo_incast(&t) == 15 && or_tmo_last(&t)->incast_why == OR_TMO_INCAST_HOLD,
	      "hard timeout without loss (a slow rank, a tight deadline): held at 15");
	or_tmo_complete(&t, SZ, 100, 0, 0.05);
	CHECK(or_tmo_incast(&t) == 15 && or_tmo_last(&t)->incast_why == OR_TMO_INCAST_HOLD,
	      "one operation with 5%% loss (a spike): held at 15");
	or_tmo_complete(&t, SZ, 100, 0, 0.0);
	or_tmo_complete(&t, SZ, 100, 0, 0.05);
	CHECK(or_tmo_incast(&t) == 15, "5%% loss, clean, 5%% loss: not in a row, held at 15");
	for (int i = 1; i < OR_TMO_INCAST_LOSSY_OPS - 1; i++) {
		or_tmo_complete(&t, SZ, 100, 0, 0.05);
		if (or_tmo_incast(&t) != 15 || or_tmo_last(&t)->incast_why != OR_TMO_INCAST_HOLD)
			ok = 0;
	}
	CHECK(ok, "5%% loss in fewer than OR_TMO_INCAST_LOSSY_OPS operations in a row: held");
	or_tmo_complete(&t, SZ, 100, 0, 0.05);
	CHECK(or_tmo_incast(&t) == 7 && or_tmo_last(&t)->incast_why == OR_TMO_INCAST_CUT_LOSS,
	      "5%% loss OR_TMO_INCAST_LOSSY_OPS times in a row: halved to 7 (incast_cut_loss)");
	or_tmo_complete(&t, SZ, 100, 1, 0.9);
	CHECK(or_tmo_incast(&t) == 7 && or_tmo_last(&t)->incast_why == OR_TMO_INCAST_HOLD,
	      "timeout with 90%% loss (cut by the deadline, not dropped): held at 7");
	or_tmo_complete(&t, SZ, 100, 0, 0.9);
	CHECK(or_tmo_incast(&t) == 7, "90%% loss without a timeout, once: 7");
	or_tmo_complete(&t, SZ, 100, 1, 0.0);
	for (int i = 1; i < OR_TMO_INCAST_LOSSY_OPS; i++)
		or_tmo_complete(&t, SZ, 100, 0, 0.9);
	CHECK(or_tmo_incast(&t) == 3,
	      "again after a timed-out operation (which neither confirms nor clears): 3");
	for (int i = 0; i < 2 * OR_TMO_INCAST_LOSSY_OPS; i++)
		or_tmo_complete(&t, SZ, 100, 0, 0.9);
	CHECK(or_tmo_incast(&t) == 1, "more loss: floor at 1");
	or_tmo_complete(&t, SZ, 100, 0, 0.9);
	ok = 1;

	for (int i = 0; i < 7; i++) {
		or_tmo_complete(&t, SZ, 100, 0, 0.01);
		if (or_tmo_incast(&t) != 1 || or_tmo_last(&t)->incast_why != OR_TMO_INCAST_HOLD)
			ok = 0;
	}
	CHECK(ok, "7 clean operations (loss exactly at the threshold is clean): hold at 1");
	or_tmo_complete(&t, SZ, 100, 0, 0.0);
	CHECK(or_tmo_incast(&t) == 2 && or_tmo_last(&t)->incast_why == OR_TMO_INCAST_GROW,
	      "8th clean operation: +1 to 2 (incast_grow)");
	for (int i = 0; i < 5; i++)
		or_tmo_complete(&t, SZ, 100, 0, 0.0);
	for (int i = 0; i < OR_TMO_INCAST_LOSSY_OPS; i++)
		or_tmo_complete(&t, SZ, 100, 0, 0.02);
	for (int i = 0; i < 7; i++)
		or_tmo_complete(&t, SZ, 100, 0, 0.0);
	CHECK(or_tmo_incast(&t) == 1,
	      "a run of lossy operations cuts and resets the clean run (1, not 2 or 3)");

	for (int i = 0; i < 8 * 40; i++)
		or_tmo_complete(&t, SZ, 100, 0, 0.0);
	CHECK(or_tmo_incast(&t) == 15 && or_tmo_last(&t)->incast_why == OR_TMO_INCAST_HOLD,
	      "long clean run: grows to N-1 = 15 and holds there");

	c.user_incast = 4;
	or_tmo_init(&t, &c);
	or_tmo_complete(&t, SZ, 100, 1, 1.0);
	CHECK(or_tmo_incast(&t) == 4 && or_tmo_last(&t)->incast_why == OR_TMO_INCAST_FIXED,
	      "user incast 4 is fixed (incast_fixed)");

	c.user_incast = 0;
	c.incast_initial = 5;
	or_tmo_init(&t, &c);
	CHECK(or_tmo_incast(&t) == 5, "incast_initial 5 honoured");

	c.nranks = 2;
	c.incast_initial = 0;
	or_tmo_init(&t, &c);
	for (int i = 0; i < 20; i++)
		or_tmo_complete(&t, SZ, 100, i == 3, 0.0);
	CHECK(or_tmo_incast(&t) == 1, "2 ranks: incast stays 1");
}

/*
 * The loss budget: phases that jitter past t_B cut a fifth of every other operation;
 * the deadline stretches until the cuts' mean is within the budget, holds while it is,
 * wears off once nothing is cut, and never passes max_us.  Budget 0: no stretch.
 */
static void test_loss_budget(void)
{
	struct or_tmo_config c = base_cfg();
	struct or_tmo t;
	uint64_t plain, stretched, top = 0;
	double mean = 0;
	int cut = 0;

	c.loss_budget = 0.02;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, c.calib_ops, 1000);
	plain = or_tmo_decide(&t, SZ);
	CHECK(plain == 1500 && or_tmo_last(&t)->stretch == 1.0,
	      "calibrated: deadline %llu us (t_B 1.5 x 1000), no stretch",
	      (unsigned long long)plain);
	/* Phases of 1000 and 1800 us alternate: the slow ones hit a bound of 1500 us and lose
	 * 20 % of their elements until the deadline covers them. */
	for (int i = 0; i < 200; i++) {
		uint64_t d = or_tmo_decide(&t, SZ), phase = i % 2 ? 1800 : 1000;
		int hit = phase > d;
		double lost = hit ? 0.2 : 0.0;
		or_tmo_complete(&t, SZ, hit ? d : phase, hit, 0.0);
		or_tmo_cut_loss(&t, SZ, lost);
		if (i >= 100) {
			mean += lost / 100;
			cut += hit;
		}
		if (d > top)
			top = d;
	}
	stretched = or_tmo_decide(&t, SZ);
	CHECK(stretched > 1800 && mean <= c.loss_budget,
	      "jitter past t_B: deadline stretched to %llu us, later cuts %.4f of the elements "
	      "(budget %.2f, %d of 100 operations cut)",
	      (unsigned long long)stretched, mean, c.loss_budget, cut);
	CHECK(top <= c.max_us, "stretch never passes max_us (largest deadline %llu us)",
	      (unsigned long long)top);
	for (int i = 0; i < 400; i++) {
		or_tmo_complete(&t, SZ, 1000, 0, 0.0);
		or_tmo_cut_loss(&t, SZ, 0.0);
	}
	CHECK(or_tmo_decide(&t, SZ) == plain && or_tmo_last(&t)->stretch == 1.0,
	      "nothing cut for 400 operations: back to %llu us", (unsigned long long)plain);
	for (int i = 0; i < 1000; i++) {
		or_tmo_complete(&t, SZ, 1000, 1, 0.0);
		or_tmo_cut_loss(&t, SZ, 1.0);
	}
	CHECK(or_tmo_decide(&t, SZ) == c.max_us, "everything cut: stretched up to max_us");

	c.loss_budget = 0;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, c.calib_ops, 1000);
	for (int i = 0; i < 50; i++) {
		or_tmo_complete(&t, SZ, 1500, 1, 0.0);
		or_tmo_cut_loss(&t, SZ, 0.5);
	}
	CHECK(or_tmo_last(&t)->stretch == 1.0, "budget 0: no stretch");
}

int main(void)
{
	test_adapt();
	test_extremes();
	test_consensus();
	test_incast();
	test_loss_budget();
	printf("%s: %d failure(s)\n", check_failures ? "FAIL" : "PASS", check_failures);
	return check_failures ? 1 : 0;
}
