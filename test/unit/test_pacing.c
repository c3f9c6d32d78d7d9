/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the adaptive sending rate (lib/bounded/ctl/pacing.c) on synthetic runs of
 * operations: a lossy link's usual loss, a burst of cross traffic, a link that
 * refuses sends, deadline cuts, the bounds.  Exit 0 when all pass, 1 otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/bounded/ctl/pacing.h"

#include "check.h"

static enum or_pace_decision op(struct or_pacer *p, double loss, int link_bound, int hit)
{
	struct or_pace_sample s = {
	    .loss = loss, .took_mbps = 0, .link_bound = link_bound, .hit = hit};
	return or_pacer_update(p, &s);
}

/* A pacer past its warm-up on a clean network, at rate r. */
static struct or_pacer learnt(double r)
{
	struct or_pacer p;

	or_pacer_init(&p, r);
	for (int i = 0; i < OR_PACE_WARMUP; i++)
		op(&p, 0, 1, 0);
	return p;
}

static void test_names(void)
{
	CHECK(strcmp(or_pace_decision_name(OR_PACE_RESTORE), "restore") == 0, "decision names");
	CHECK(strcmp(or_pace_decision_name(OR_PACE_DECISION_COUNT), "unknown") == 0,
	      "out-of-range decision is \"unknown\"");
}

/* 1% random loss on every operation is the link's usual level: the rate never falls. */
static void test_random_loss_is_usual(void)
{
	struct or_pacer p;
	int backoffs = 0;

	or_pacer_init(&p, 200);
	for (int i = 0; i < 200; i++)
		backoffs += op(&p, 0.01, 0, 0) == OR_PACE_BACKOFF;
	CHECK(backoffs == 0 && p.rate_mbps >= 200, "1%% loss every op: %d backoffs, rate %.0f",
	      backoffs, p.rate_mbps);
	CHECK(fabs(p.loss_avg - 0.01) < 1e-9, "usual loss learnt: %.4f", p.loss_avg);
}

/* Heavy loss while learning (no usual level yet) cuts as deep as the loss, 15-50 %. */
static void test_learning_cuts_heavy_loss(void)
{
	struct or_pacer p;

	or_pacer_init(&p, 400);
	CHECK(op(&p, 0.2, 0, 0) == OR_PACE_LEARN && fabs(p.rate_mbps - 320) < 1e-9,
	      "20%% loss while learning: 400 -> %.0f", p.rate_mbps);
	CHECK(op(&p, 0.1, 0, 0) == OR_PACE_LEARN && fabs(p.rate_mbps - 272) < 1e-9,
	      "10%% loss: at least 15%%, 320 -> %.0f", p.rate_mbps);
	CHECK(op(&p, 0.7, 0, 0) == OR_PACE_LEARN && fabs(p.rate_mbps - 136) < 1e-9,
	      "70%% loss: at most a half, 272 -> %.0f", p.rate_mbps);
}

/*
 * A rate limiter far below the initial rate: the loss of offering too much is not learnt as
 * the usual level; the rate starts again from what the link took, and loss above the
 * network's own level then backs off.
 */
static void test_learning_rate_limited_link(void)
{
	struct or_pacer p;
	struct or_pace_sample s = {.loss = 0.32, .took_mbps = 55, .link_bound = 1, .hit = 0};

	or_pacer_init(&p, 400);
	CHECK(or_pacer_update(&p, &s) == OR_PACE_LEARN && fabs(p.rate_mbps - 55) < 1e-9 &&
	          p.loss_ops == 0,
	      "32%% loss beyond a 55 Mbit/s link: 400 -> %.0f, %u ops learnt", p.rate_mbps,
	      p.loss_ops);
	s.loss = 0.005;
	s.link_bound = 0;
	for (int i = 0; i < OR_PACE_WARMUP; i++)
		or_pacer_update(&p, &s);
	CHECK(fabs(p.loss_avg - 0.005) < 1e-9, "the network's level learnt: %.4f", p.loss_avg);
	s.loss = 0.2;
	s.link_bound = 1;
	CHECK(or_pacer_update(&p, &s) == OR_PACE_BACKOFF && p.rate_mbps < 55,
	      "20%% loss at the link then backs off: %.1f", p.rate_mbps);
}

/*
 * A burst of cross traffic: three lossy operations cut 15% each; the first clean one
 * returns to the rate before the burst, not 5% at a time (twenty operations).
 */
static void test_burst_restores(void)
{
	struct or_pacer p = learnt(200);
	double before = p.rate_mbps;

	for (int i = 0; i < 3; i++)
		CHECK(op(&p, 0.05, 0, 0) == OR_PACE_BACKOFF, "burst op %d backs off: %.1f", i,
		      p.rate_mbps);
	CHECK(fabs(p.rate_mbps - before * pow(0.85, 3)) < 1e-6, "three backoffs: %.1f",
	      p.rate_mbps);
	CHECK(op(&p, 0, 0, 0) == OR_PACE_RESTORE && p.rate_mbps == before,
	      "first clean op restores %.1f (was %.1f before the burst)", p.rate_mbps, before);
	CHECK(op(&p, 0, 0, 0) == OR_PACE_PROBE && fabs(p.rate_mbps - before * 1.05) < 1e-6,
	      "then probes 5%%: %.1f", p.rate_mbps);
}

/*
 * A network that really got slower (capacity 120): what exceeds it is lost.  The first
 * restore meets loss at once, so later ones aim lower; the pacer settles near 120, where it
 * probes into a little loss every third operation, instead of restoring 200 again and
 * again; and that loss never becomes "usual".
 */
static void test_slower_network_settles(void)
{
	struct or_pacer p = learnt(200);
	int i, lossy = 0;
	double lost = 0, rate = 0;

	for (i = 0; i < 60; i++) {
		double loss = p.rate_mbps > 120 ? 1.0 - 120 / p.rate_mbps : 0;
		if (i >= 30) {
			lossy += loss > 0;
			lost += loss / 30;
			rate += p.rate_mbps / 30;
		}
		op(&p, loss, 0, 0);
	}
	CHECK(rate >= 100 && rate <= 126, "settles near the new capacity 120: mean %.1f", rate);
	CHECK(lossy <= 10 && lost < 0.02, "last 30 ops: %d lossy, mean loss %.4f", lossy, lost);
	CHECK(p.loss_avg < 0.005, "its own loss is not usual: %.4f", p.loss_avg);
}

/* A lossy link gets lossier (1% -> 3%, whatever the rate): the new level is learnt. */
static void test_new_loss_level_learnt(void)
{
	struct or_pacer p;
	int i;

	or_pacer_init(&p, 200);
	for (i = 0; i < 20; i++)
		op(&p, 0.01, 0, 0);
	for (i = 0; i < 60; i++)
		op(&p, 0.03, 0, 0);
	CHECK(fabs(p.loss_avg - 0.03) < 0.005, "usual loss now %.4f", p.loss_avg);
	CHECK(p.rate_mbps >= 100, "rate not driven down for good: %.1f", p.rate_mbps);
}

/*
 * A burst that outlasts the restores: each restore meets loss and halves the next target.
 * When it ends, the rate climbs halfway back to where the loss began per clean operation,
 * not 5% at a time (twenty operations from 140 to 240); and a loss met while climbing
 * lowers the mark, so a network that got slower is not overshot again and again.
 */
static void test_long_burst_climbs_back(void)
{
	struct or_pacer p = learnt(240);
	int clean_ops = 0;

	/* Cross traffic leaves 120 Mbit/s for 12 operations; every 4th is cut at its deadline. */
	for (int i = 0; i < 12; i++) {
		if (i % 4 == 3)
			op(&p, 0.3, 0, 1);
		else
			op(&p, p.rate_mbps > 120 ? 1.0 - 120 / p.rate_mbps : 0, 0, 0);
	}
	CHECK(p.rate_mbps < 180, "the burst left the rate at %.1f", p.rate_mbps);
	while (p.rate_mbps < 0.95 * 240 && clean_ops < 30) {
		enum or_pace_decision d = op(&p, 0, 0, 0);
		CHECK(d == OR_PACE_CLIMB, "clean op %d below the mark climbs: %s %.1f", clean_ops,
		      or_pace_decision_name(d), p.rate_mbps);
		clean_ops++;
	}
	CHECK(clean_ops <= 4, "back within 5%% of 240 in %d clean operations", clean_ops);
	CHECK(op(&p, 0, 0, 0) == OR_PACE_CLIMB || p.rate_mbps <= 240 * 1.05 + 1e-9,
	      "and no further than a 5%% probe past it: %.1f", p.rate_mbps);

	/* A loss met while climbing lowers the mark to where it was met. */
	p = learnt(240);
	op(&p, 0.05, 0, 0);
	op(&p, 0, 0, 0); /* restore */
	op(&p, 0.05, 0, 0);
	op(&p, 0, 0, 0); /* restore to the halved target */
	{
		double at;
		op(&p, 0, 0, 0);
		at = p.rate_mbps;
		CHECK(p.climbing, "climbing at %.1f", at);
		op(&p, 0.05, 0, 0);
		CHECK(fabs(p.peak_mbps - at) < 1e-9, "loss while climbing: mark %.1f, met at %.1f",
		      p.peak_mbps, at);
	}
}

/*
 * The warm-up on a 50 Mbit/s link: the first operation overflows the rate limiter, the next
 * ones read that loss again in the peers' reports, and deadlines cut operations paced that
 * low.  The rate stays at what the link took, and the usual level stays the network's.
 */
static void test_learning_overflow_echoes(void)
{
	struct or_pacer p;
	struct or_pace_sample s = {.loss = 0.32, .took_mbps = 41, .link_bound = 1, .hit = 0};

	or_pacer_init(&p, 400);
	or_pacer_update(&p, &s);
	s = (struct or_pace_sample){.loss = 0.35};
	CHECK(or_pacer_update(&p, &s) == OR_PACE_LEARN && fabs(p.rate_mbps - 41) < 1e-9,
	      "the overflow echoed by peers does not cut: %.1f", p.rate_mbps);
	s = (struct or_pace_sample){.loss = 0.24, .hit = 1};
	CHECK(or_pacer_update(&p, &s) == OR_PACE_LEARN && fabs(p.rate_mbps - 41) < 1e-9,
	      "nor does a deadline's cut while learning: %.1f", p.rate_mbps);
	s = (struct or_pace_sample){.loss = 0.01};
	for (int i = 0; i < OR_PACE_WARMUP; i++)
		or_pacer_update(&p, &s);
	CHECK(fabs(p.loss_avg - 0.01) < 1e-9 && p.loss_ops == OR_PACE_WARMUP,
	      "the usual level is the network's: %.4f after %u ops", p.loss_avg, p.loss_ops);
}

/* A link that keeps losing much is learnt after a few operations, and cuts as before. */
static void test_learning_heavy_loss_link(void)
{
	struct or_pacer p;
	struct or_pace_sample s = {.loss = 0.2, .took_mbps = 50, .link_bound = 1, .hit = 0};

	or_pacer_init(&p, 400);
	or_pacer_update(&p, &s);
	s = (struct or_pace_sample){.loss = 0.1};
	for (int i = 0; i < 2 * OR_PACE_WARMUP; i++)
		or_pacer_update(&p, &s);
	CHECK(p.loss_ops == OR_PACE_WARMUP && fabs(p.loss_avg - 0.1) < 1e-9,
	      "10%% loss every op is learnt: %.3f after %u ops", p.loss_avg, p.loss_ops);
	CHECK(p.rate_mbps < 50 * 0.85 * 0.85 * 0.85 + 1e-9,
	      "and the learning ops cut as heavy loss: %.1f", p.rate_mbps);
}

/* A cut at a rate well below what the link took climbs halfway to it. */
static void test_cut_below_link_climbs(void)
{
	struct or_pacer p = learnt(30);
	struct or_pace_sample s = {.loss = 0, .took_mbps = 50, .link_bound = 1, .hit = 0};

	or_pacer_update(&p, &s); /* the link's rate, seen once */
	s = (struct or_pace_sample){.loss = 0.3, .hit = 1};
	CHECK(or_pacer_update(&p, &s) == OR_PACE_CLIMB && fabs(p.rate_mbps - 40) < 1e-9,
	      "cut at 30 below a 50 Mbit/s link: climb to %.1f", p.rate_mbps);
	CHECK(or_pacer_update(&p, &s) == OR_PACE_CLIMB && fabs(p.rate_mbps - 45) < 1e-9,
	      "and again: %.1f", p.rate_mbps);
	CHECK(or_pacer_update(&p, &s) == OR_PACE_HOLD_CUT && fabs(p.rate_mbps - 45) < 1e-9,
	      "near the link's rate a cut holds: %.1f", p.rate_mbps);
}

/* Deadline cuts hold the rate: their loss is the deadline's. */
static void test_cut_holds(void)
{
	struct or_pacer p = learnt(200);
	double r = p.rate_mbps;

	CHECK(op(&p, 0.3, 0, 1) == OR_PACE_HOLD_CUT && p.rate_mbps == r,
	      "30%% loss cut by a deadline: hold at %.0f", p.rate_mbps);
	CHECK(p.loss_avg == 0, "and its loss is not the usual level: %.4f", p.loss_avg);
	/* Unless backoffs had lowered the rate: holding that would cut every operation. */
	op(&p, 0.05, 0, 0);
	op(&p, 0.05, 0, 0);
	CHECK(op(&p, 0.3, 0, 1) == OR_PACE_RESTORE && p.rate_mbps == r,
	      "a cut after two backoffs restores %.0f", p.rate_mbps);
	CHECK(op(&p, 0.3, 0, 1) == OR_PACE_HOLD_CUT && p.rate_mbps == r,
	      "and the next cut holds it");
	CHECK(op(&p, 0, 0, 0) == OR_PACE_PROBE && fabs(p.rate_mbps - r * 1.05) < 1e-6,
	      "a clean operation then probes: %.1f", p.rate_mbps);
}

/* A link that refuses sends paces us: no probing past it, and backoffs start at what it took. */
static void test_link_bound(void)
{
	struct or_pacer p = learnt(400);
	struct or_pace_sample s = {.loss = 0, .took_mbps = 190, .link_bound = 1, .hit = 0};

	CHECK(or_pacer_update(&p, &s) == OR_PACE_HOLD_LINK && p.rate_mbps == 400,
	      "refused sends: hold at %.0f", p.rate_mbps);
	s.loss = 0.05;
	CHECK(or_pacer_update(&p, &s) == OR_PACE_BACKOFF && p.rate_mbps < 0.85 * 200,
	      "loss while link bound cuts from what the link took: %.1f", p.rate_mbps);
	s.loss = 0;
	CHECK(or_pacer_update(&p, &s) == OR_PACE_RESTORE && p.rate_mbps == 400,
	      "the next clean op restores the nominal rate, link bound or not: %.0f", p.rate_mbps);
	CHECK(or_pacer_update(&p, &s) == OR_PACE_HOLD_LINK && p.rate_mbps == 400,
	      "then holds it while the link refuses sends: %.0f", p.rate_mbps);
}

/* Bounds, and inputs outside [0, 1] are clamped. */
static void test_bounds(void)
{
	struct or_pacer p = learnt(OR_PACE_MIN_MBPS + 1);
	int i;

	op(&p, 1.0, 0, 0);
	CHECK(p.rate_mbps == OR_PACE_MIN_MBPS, "floor: %.0f", p.rate_mbps);
	for (i = 0; i < 50; i++)
		op(&p, 1.0, 0, 0);
	CHECK(p.rate_mbps >= OR_PACE_MIN_MBPS, "total loss for 50 ops: %.0f", p.rate_mbps);
	p = learnt(OR_PACE_MAX_MBPS);
	op(&p, 0, 0, 0);
	CHECK(p.rate_mbps == OR_PACE_MAX_MBPS, "ceiling: %.0f", p.rate_mbps);
	p = learnt(200);
	op(&p, -5, 0, 0);
	op(&p, 7, 0, 0);
	CHECK(p.loss_avg >= 0 && p.loss_avg <= 1, "loss outside [0,1] clamped: usual %.3f",
	      p.loss_avg);
}

int main(void)
{
	test_names();
	test_learning_rate_limited_link();
	test_random_loss_is_usual();
	test_learning_cuts_heavy_loss();
	test_learning_overflow_echoes();
	test_learning_heavy_loss_link();
	test_burst_restores();
	test_long_burst_climbs_back();
	test_slower_network_settles();
	test_new_loss_level_learnt();
	test_cut_holds();
	test_cut_below_link_climbs();
	test_link_bound();
	test_bounds();
	printf("%s\n", check_failures ? "FAIL" : "PASS");
	return check_failures ? 1 : 0;
}
