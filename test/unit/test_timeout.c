/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the timeout controller (lib/bounded/ctl/timeout.c) on synthetic traces: configuration,
 * size classes, a user's timeout, and when a phase closes.
 * test_timeout_calib.c has calibration, test_timeout_adapt.c how deadlines adapt.
 * Prints every check; exit 0 when all pass, 1 otherwise.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optireduce.h"
#include "lib/bounded/ctl/timeout.h"

_Static_assert(OR_TMO_EINVAL == -OPTIREDUCE_EINVAL, "timeout.h EINVAL out of step");

#include "check.h"
#include "timeout_check.h"

/* Breaks one field of a valid config; NULL past the last case. */
static const char *break_config(int i, struct or_tmo_config *c)
{
	switch (i) {
	case 0:
		c->nranks = 0;
		return "nranks = 0";
	case 1:
		c->nranks = 4;
		c->rank = 4;
		return "rank >= nranks";
	case 2:
		c->calib_ops = 0;
		return "calib_ops = 0";
	case 3:
		c->calib_ops = OR_TMO_CALIB_MAX + 1;
		return "calib_ops > OR_TMO_CALIB_MAX";
	case 4:
		c->calib_percentile = 0;
		return "calib_percentile = 0";
	case 5:
		c->calib_percentile = 100.5;
		return "calib_percentile > 100";
	case 6:
		c->calib_percentile = NAN;
		return "calib_percentile NaN";
	case 7:
		c->calib_margin = 0.9;
		return "calib_margin < 1";
	case 8:
		c->calib_margin = INFINITY;
		return "calib_margin infinite";
	case 9:
		c->min_us = 0;
		return "min_us = 0";
	case 10:
		c->min_us = 100;
		c->max_us = 99;
		return "max_us < min_us";
	case 11:
		c->max_us = (uint64_t)UINT32_MAX + 1;
		return "max_us > UINT32_MAX";
	case 12:
		c->initial_us = 1;
		return "initial_us < min_us";
	case 13:
		c->initial_us = c->max_us + 1;
		return "initial_us > max_us";
	case 14:
		c->early_fraction = -0.1;
		return "early_fraction < 0";
	case 15:
		c->early_fraction = NAN;
		return "early_fraction NaN";
	case 16:
		c->ewma_alpha = 0;
		return "ewma_alpha = 0";
	case 17:
		c->ewma_alpha = 1.5;
		return "ewma_alpha > 1";
	case 18:
		c->backoff = 0.5;
		return "backoff < 1";
	case 19:
		c->loss_threshold = 1.1;
		return "loss_threshold > 1";
	case 20:
		c->loss_threshold = NAN;
		return "loss_threshold NaN";
	case 21:
		c->clean_ops_to_grow = 0;
		return "clean_ops_to_grow = 0";
	case 22:
		c->nranks = 8;
		c->incast_initial = 8;
		return "incast_initial > nranks-1";
	case 23:
		c->nranks = 8;
		c->user_incast = 9;
		return "user_incast > nranks-1";
	case 25:
		c->absent_factor = 0.5;
		return "absent_factor in (0, 1)";
	case 26:
		c->absent_factor = NAN;
		return "absent_factor NaN";
	case 27:
		c->loss_budget = 1.0;
		return "loss_budget = 1";
	case 28:
		c->loss_budget = NAN;
		return "loss_budget NaN";
	case 29:
		c->calib_slack_us = (uint64_t)UINT32_MAX + 1;
		return "calib_slack_us > UINT32_MAX";
	case 24:
		c->nranks = OR_TMO_INLINE_RANKS + 1;
		return "nranks > OR_TMO_INLINE_RANKS, no store";
	default:
		return NULL;
	}
}

static void test_config(void)
{
	struct or_tmo_config c = base_cfg();
	static struct or_tmo t;
	static uint32_t store[OR_TMO_PEER_STORE_LEN(1024)];
	const char *what;

	CHECK(or_tmo_init(&t, &c) == 0, "default config (with test bounds) accepted");
	for (int i = 0;; i++) {
		struct or_tmo_config b = base_cfg();

		what = break_config(i, &b);
		if (!what)
			break;
		CHECK(or_tmo_init(&t, &b) == OR_TMO_EINVAL, "bad config rejected: %s", what);
	}
	CHECK(or_tmo_init(NULL, &c) == OR_TMO_EINVAL && or_tmo_init(&t, NULL) == OR_TMO_EINVAL,
	      "NULL controller or config rejected");

	c.nranks = 1024;
	CHECK(or_tmo_init_store(&t, &c, store, OR_TMO_PEER_STORE_LEN(1024)) == 0,
	      "1024 ranks accepted with a caller store");
	CHECK(or_tmo_init_store(&t, &c, store, OR_TMO_PEER_STORE_LEN(1024) - 1) == OR_TMO_EINVAL,
	      "caller store one element short rejected");
	c.nranks = 1;
	c.initial_us = c.min_us;
	c.calib_percentile = 100;
	c.calib_margin = 1;
	c.backoff = 1;
	c.early_fraction = 0;
	c.ewma_alpha = 1;
	c.loss_threshold = 0;
	c.user_incast = 1;
	CHECK(or_tmo_init(&t, &c) == 0, "edge-of-range config accepted (nranks 1, P 100, M 1)");
	CHECK(or_tmo_incast(&t) == 1, "nranks 1: incast is 1");
}

static void test_names(void)
{
	int all = 1, distinct = 1;

	for (int i = 0; i < OR_TMO_REASON_COUNT; i++) {
		const char *a = or_tmo_reason_name((enum or_tmo_reason)i);

		if (!a || !*a || !strcmp(a, "unknown"))
			all = 0;
		for (int j = 0; a && j < i; j++)
			if (!strcmp(a, or_tmo_reason_name((enum or_tmo_reason)j)))
				distinct = 0;
	}
	CHECK(all && distinct, "every reason has its own name");
	CHECK(!strcmp(or_tmo_reason_name(OR_TMO_EARLY_TIMEOUT), "early_timeout"),
	      "EARLY_TIMEOUT is named early_timeout");
	CHECK(!strcmp(or_tmo_reason_name((enum or_tmo_reason)9999), "unknown") &&
	          !strcmp(or_tmo_reason_name((enum or_tmo_reason) - 1), "unknown"),
	      "out-of-range reason is \"unknown\"");
}

static void test_size_class(void)
{
	CHECK(or_tmo_size_class(0) == 0 && or_tmo_size_class(4096) == 0,
	      "0 and 4096 bytes are class 0");
	CHECK(or_tmo_size_class(4097) == 1 && or_tmo_size_class(8192) == 1,
	      "4097..8192 bytes are class 1");
	CHECK(or_tmo_size_class((size_t)1 << 26) == 14 &&
	          or_tmo_size_class(((size_t)1 << 26) + 1) == 15,
	      "64 MiB is class 14, one byte more is class 15");
	CHECK(or_tmo_size_class(SIZE_MAX) == OR_TMO_SIZE_CLASSES - 1, "SIZE_MAX is the last class");
}

/*
 * The absent horizon's slack floor: a silent sender is absent after A x t_C, but not before
 * t_C + calib_slack_us, so that one descheduled for a time slice is not cut as a straggler.
 */
static void test_absent_slack(void)
{
	static struct or_tmo t;
	struct or_tmo_config c = base_cfg();
	const struct {
		uint64_t t_c, expect;
	} cases[] = {
	    {400, 2900},     /* 2 x 400 = 800 < 400 + 2500 */
	    {2500, 5000},    /* 5000 both ways */
	    {10000, 20000},  /* the factor's t_C is more than the slack */
	};
	const uint64_t start = 1000000;

	c.absent_factor = 2.0;
	c.calib_margin = 100.0; /* t_B far beyond the horizon, which is seen first */
	c.calib_slack_us = 2500;
	for (size_t n = 0; n < sizeof(cases) / sizeof(cases[0]); n++) {
		/* Three of four senders' LASTs in, one silent, bytes in and quiet since. */
		struct or_tmo_phase ph = {start, 0, 4, 3, 1000, 750, start + 1, 1, 0};
		uint64_t t_c = 0, at = start + cases[n].expect;

		or_tmo_init(&t, &c);
		calibrate_flat(&t, 4, cases[n].t_c);
		CHECK(or_tmo_absent_us(&t, SZ, &t_c) == cases[n].expect && t_c == cases[n].t_c,
		      "t_C %llu µs, A 2, slack 2500: absent after %llu µs",
		      (unsigned long long)cases[n].t_c, (unsigned long long)cases[n].expect);
		CHECK(or_tmo_phase_check(&t, SZ, &ph, at - 1) == OR_TMO_NOT_YET &&
		          or_tmo_phase_check(&t, SZ, &ph, at) == OR_TMO_EARLY_TIMEOUT,
		      "t_C %llu µs: the silent sender is waited for until +%llu µs, not longer",
		      (unsigned long long)cases[n].t_c, (unsigned long long)cases[n].expect);
	}
}

static void test_user_timeout(void)
{
	static struct or_tmo t;
	struct or_tmo_config c = base_cfg();
	int ok = 1;

	c.user_timeout_us = 5000;
	or_tmo_init(&t, &c);
	for (int i = 0; i < 40; i++) {
		if (or_tmo_decide(&t, SZ) != 5000 || or_tmo_last(&t)->why != OR_TMO_USER)
			ok = 0;
		or_tmo_complete(&t, SZ, i < 20 ? 100 : 90000, i % 3 == 0, 0.5);
	}
	CHECK(ok && or_tmo_calibrated(&t, 1 * KB),
	      "user timeout 5000 µs holds through 40 operations of 100 and 90000 µs");
	CHECK(or_tmo_local_estimate(&t, SZ) > 0, "t_C still tracked under a user timeout");

	c.user_timeout_us = c.max_us * 10;
	or_tmo_init(&t, &c);
	CHECK(or_tmo_decide(&t, SZ) == c.max_us && or_tmo_last(&t)->why == OR_TMO_CLAMP_MAX,
	      "user timeout above max_us is clamped to max_us (clamp_max)");
	c.user_timeout_us = 1;
	or_tmo_init(&t, &c);
	CHECK(or_tmo_decide(&t, SZ) == c.min_us && or_tmo_last(&t)->why == OR_TMO_CLAMP_MIN,
	      "user timeout below min_us is raised to min_us (clamp_min)");
}

struct phase_case {
	const char *what;
	uint32_t senders_expected, senders_last;
	uint64_t bytes_expected, bytes_received;
	uint64_t last_arrival; /* relative to start; UINT64_MAX = 0 absolute (none) */
	uint64_t deadline;     /* phase override, 0 = controller's */
	uint64_t now;          /* relative to start */
	enum or_tmo_reason expect;
};

/*
 * Controller: t_C = 1000, t_B = 1500, F = 0.25, so quiet = 250 µs and the
 * hard bound is start + 1500.
 */
static void test_phase(void)
{
	static struct or_tmo t;
	struct or_tmo_config c = base_cfg();
	const uint64_t start = 1000000;
	const struct phase_case cases[] = {
	    {"everything arrived", 4, 4, 1000, 1000, 100, 0, 100, OR_TMO_ALL_DATA},
	    {"everything arrived, polled after the deadline", 4, 4, 1000, 1000, 100, 0, 9999,
	     OR_TMO_ALL_DATA},
	    {"nothing expected", 0, 0, 0, 0, UINT64_MAX, 0, 0, OR_TMO_ALL_DATA},
	    {"all LAST, bytes short, quiet 249", 4, 4, 1000, 900, 100, 0, 349, OR_TMO_NOT_YET},
	    {"all LAST, bytes short, quiet 250", 4, 4, 1000, 900, 100, 0, 350,
	     OR_TMO_EARLY_TIMEOUT},
	    {"bytes in, one LAST missing, quiet 249", 4, 3, 1000, 1000, 100, 0, 349,
	     OR_TMO_NOT_YET},
	    {"bytes in, one LAST missing, quiet 250", 4, 3, 1000, 1000, 100, 0, 350,
	     OR_TMO_EARLY_TIMEOUT},
	    {"one LAST missing, bytes short, quiet 250", 4, 3, 1000, 900, 100, 0, 350,
	     OR_TMO_NOT_YET},
	    {"one LAST missing, bytes short, quiet 1249 (5 quiet times less 1)", 4, 3, 1000, 900,
	     100, 0, 1349, OR_TMO_NOT_YET},
	    {"one LAST missing, bytes short, quiet 1250, phase older than t_C", 4, 3, 1000, 900,
	     100, 0, 1350, OR_TMO_EARLY_TIMEOUT},
	    {"one LAST missing, bytes short, arrivals to +400, 1 µs before the bound", 4, 3, 1000,
	     900, 400, 0, 1499, OR_TMO_NOT_YET},
	    {"one LAST missing, bytes short, arrivals to +400, at the bound", 4, 3, 1000, 900, 400,
	     0, 1500, OR_TMO_HARD_BOUND},
	    {"senders not counted, bytes short: no early", 0, 0, 1000, 900, 100, 0, 1000,
	     OR_TMO_NOT_YET},
	    {"zero bytes expected, all LAST: all data", 4, 4, 0, 0, 100, 0, 100, OR_TMO_ALL_DATA},
	    {"zero bytes expected, one LAST missing: no early", 4, 3, 0, 0, 100, 0, 1000,
	     OR_TMO_NOT_YET},
	    {"no arrival time given: quiet counts from the start", 4, 4, 1000, 900, UINT64_MAX, 0,
	     249, OR_TMO_NOT_YET},
	    {"no arrival time given, 250 after start", 4, 4, 1000, 900, UINT64_MAX, 0, 250,
	     OR_TMO_EARLY_TIMEOUT},
	    {"late arrival: quiet would end after the bound", 4, 4, 1000, 900, 1400, 0, 1500,
	     OR_TMO_HARD_BOUND},
	    {"early and hard at the same instant: hard", 4, 4, 1000, 900, 1250, 0, 1500,
	     OR_TMO_HARD_BOUND},
	    {"early came first, polled after the bound", 4, 4, 1000, 900, 1249, 0, 5000,
	     OR_TMO_EARLY_TIMEOUT},
	    {"phase deadline override 400, at 399", 4, 3, 1000, 900, 100, 400, 399, OR_TMO_NOT_YET},
	    {"phase deadline override 400, at 400", 4, 3, 1000, 900, 100, 400, 400,
	     OR_TMO_HARD_BOUND},
	};

	c.calib_ops = 4;
	c.early_fraction = 0.25;
	or_tmo_init(&t, &c);
	calibrate_flat(&t, 4, 1000);
	CHECK(or_tmo_last(&t)->deadline_us == 1500 && or_tmo_last(&t)->quiet_us == 250,
	      "setup: deadline 1500 µs, quiet time 250 µs");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct phase_case *k = &cases[i];
		struct or_tmo_phase ph = {
		    .start_us = start,
		    .deadline_us = k->deadline,
		    .senders_expected = k->senders_expected,
		    .senders_last = k->senders_last,
		    .bytes_expected = k->bytes_expected,
		    .bytes_received = k->bytes_received,
		    .last_arrival_us = k->last_arrival == UINT64_MAX ? 0 : start + k->last_arrival,
		    .final_phase = 1,
		};
		enum or_tmo_reason r = or_tmo_phase_check(&t, SZ, &ph, start + k->now);

		CHECK(r == k->expect, "phase: %s -> %s (got %s)", k->what,
		      or_tmo_reason_name(k->expect), or_tmo_reason_name(r));
	}

	/* Sweep every microsecond: EARLY never before its conditions hold. */
	{
		struct or_tmo_phase ph = {start, 0, 4, 3, 1000, 900, start + 100, 0, 1};
		int never = 1;

		for (uint64_t now = start; now < start + 1500; now++) {
			enum or_tmo_reason r = or_tmo_phase_check(&t, SZ, &ph, now);

			if ((now < start + 1350) != (r == OR_TMO_NOT_YET))
				never = 0;
		}
		CHECK(never, "sweep: one LAST missing and bytes short, last arrival +100: NOT_YET "
		             "exactly until 5 quiet times later (+1350), then early");
		ph.final_phase = 0;
		for (uint64_t now = start; now < start + 1500; now++)
			if (or_tmo_phase_check(&t, SZ, &ph, now) != OR_TMO_NOT_YET)
				never = 0;
		CHECK(never, "sweep: the same in a phase that is not the last (a later packet will "
		             "say the sender is done): NOT_YET at every µs before the bound");
		ph.final_phase = 1;
		ph.senders_last = 4;
		for (uint64_t now = start; now < start + 1500; now++) {
			enum or_tmo_reason r = or_tmo_phase_check(&t, SZ, &ph, now);

			if ((now < start + 350) != (r == OR_TMO_NOT_YET))
				never = 0;
		}
		CHECK(never, "sweep: all LAST in at +100: NOT_YET exactly until +350, then early");
	}

	/*
	 * Before any t_C exists the phase's own transfer time scales the quiet time, once every
	 * LAST is in: F = 0.25 of 4000 us of transfer is 1000 us of quiet.
	 */
	{
		struct or_tmo_phase ph = {start, 0, 4, 4, 1000, 900, start + 4000, 0, 0};

		or_tmo_init(&t, &c);
		or_tmo_decide(&t, SZ);
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 4000 + 999) == OR_TMO_NOT_YET &&
		          or_tmo_phase_check(&t, SZ, &ph, start + 4000 + 1000) ==
		              OR_TMO_EARLY_TIMEOUT,
		      "no t_C yet, every LAST in: early after F x transfer time of quiet");
		ph.last_arrival_us = start + 20;
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 20 + c.min_us - 1) ==
		              OR_TMO_NOT_YET &&
		          or_tmo_phase_check(&t, SZ, &ph, start + 20 + c.min_us) ==
		              OR_TMO_EARLY_TIMEOUT,
		      "no t_C yet, short transfer: the quiet time is at least min_us");
		ph.last_arrival_us = start + 4000;
		ph.senders_last = 3;
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + c.initial_us - 1) == OR_TMO_NOT_YET &&
		          or_tmo_phase_check(&t, SZ, &ph, start + c.initial_us) ==
		              OR_TMO_HARD_BOUND,
		      "no t_C yet, one LAST missing: no early timeout, hard bound at initial_us");
		ph.senders_last = 4;
		ph.bytes_received = 0;
		ph.last_arrival_us = 0;
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + c.initial_us - 1) == OR_TMO_NOT_YET,
		      "no t_C yet, no bytes: no early timeout");
	}

	/* early_timeout = 0: only all data or the hard bound close a phase. */
	{
		struct or_tmo_phase ph = {start, 0, 4, 4, 1000, 900, start + 100, 0, 0};
		struct or_tmo_config off = c;

		off.early_timeout = 0;
		or_tmo_init(&t, &off);
		calibrate_flat(&t, 4, 1000);
		uint64_t d = or_tmo_decide(&t, SZ);
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + d - 1) == OR_TMO_NOT_YET &&
		          or_tmo_phase_check(&t, SZ, &ph, start + d) == OR_TMO_HARD_BOUND,
		      "early_timeout 0: LASTs in and quiet, still NOT_YET until the hard bound");
		ph.bytes_received = 1000;
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 200) == OR_TMO_ALL_DATA,
		      "early_timeout 0: all data still closes the phase");
	}

	/*
	 * A sender that sent nothing while the three others' LASTs are in: absent once the phase
	 * is A x t_C old (A = 1.5: 1500 µs), and not before the usual quiet either.
	 */
	{
		struct or_tmo_phase ph = {start, 0, 4, 3, 1000, 750, start + 100, 1, 0};
		int exact = 1;

		c.absent_factor = 1.5;
		c.calib_margin = 3.0; /* t_B 3000, so the absent rule is seen before it */
		or_tmo_init(&t, &c);
		calibrate_flat(&t, 4, 1000);
		for (uint64_t now = start; now < start + 3000; now += 7) {
			enum or_tmo_reason r = or_tmo_phase_check(&t, SZ, &ph, now);

			if ((now < start + 1500) != (r == OR_TMO_NOT_YET))
				exact = 0;
			if (now >= start + 1500 && r != OR_TMO_EARLY_TIMEOUT)
				exact = 0;
		}
		CHECK(exact, "absent sender: NOT_YET until 1.5 x t_C, then early timeout");
		{
			uint64_t t_c = 0;
			CHECK(or_tmo_absent_us(&t, SZ, &t_c) == 1500 && t_c == 1000,
			      "absent wait: 1.5 x t_C, and t_C itself (repair ends by them)");
		}
		ph.last_arrival_us = start + 1400;
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 1649) == OR_TMO_NOT_YET &&
		          or_tmo_phase_check(&t, SZ, &ph, start + 1650) == OR_TMO_EARLY_TIMEOUT,
		      "absent sender, arrivals until +1400: early only after 250 µs of quiet");
		ph.last_arrival_us = start + 100;
		ph.senders_last = 2;
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 2999) == OR_TMO_NOT_YET,
		      "silent sender and another LAST missing: wait for the bound");
		ph.senders_last = 3;
		ph.bytes_received = 0;
		ph.last_arrival_us = 0;
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 2999) == OR_TMO_NOT_YET,
		      "every sender silent: nothing to judge by, wait for the bound");
		ph.bytes_received = 750;
		ph.last_arrival_us = start + 100;
		c.absent_factor = 0;
		or_tmo_init(&t, &c);
		calibrate_flat(&t, 4, 1000);
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 2999) == OR_TMO_NOT_YET &&
		          or_tmo_phase_check(&t, SZ, &ph, start + 3000) == OR_TMO_HARD_BOUND,
		      "absent_factor 0: a silent sender is waited for to the bound");
		{
			uint64_t t_c = 0;
			CHECK(or_tmo_absent_us(&t, SZ, &t_c) == 0,
			      "absent_factor 0: no absent wait (waited for to the bound)");
		}
		or_tmo_init(&t, &c);
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + c.initial_us - 1) == OR_TMO_NOT_YET,
		      "no t_C yet: a silent sender is waited for");
		c.absent_factor = 1.5;
		or_tmo_init(&t, &c);
		{
			uint64_t t_c = 0;
			CHECK(or_tmo_absent_us(&t, SZ, &t_c) == 0,
			      "no t_C yet: no absent wait (waited for to the bound)");
		}
		c.absent_factor = 1.5;
		c.calib_margin = base_cfg().calib_margin;
	}

	/* A missing LAST with little quiet: not before 100 x min_us of it. */
	{
		struct or_tmo_phase ph = {start, 0, 4, 3, 1000, 900, start + 100, 0, 1};

		c.early_fraction = 0.02; /* quiet 20 µs, 5 of them 100 */
		or_tmo_init(&t, &c);
		calibrate_flat(&t, 4, 1000);
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 1099) == OR_TMO_NOT_YET &&
		          or_tmo_phase_check(&t, SZ, &ph, start + 1100) == OR_TMO_EARLY_TIMEOUT,
		      "one LAST missing, quiet since +100: early after 100 x min_us of quiet "
		      "(+1100), not after 5 quiet times (+200) or at t_C (+1000)");
		ph.last_arrival_us = 0;
		ph.bytes_received = 0;
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 1499) == OR_TMO_NOT_YET,
		      "one LAST missing, nothing received: no early timeout");
		c.early_fraction = 0.25;
	}

	/* F = 0: close as soon as the conditions hold. */
	{
		struct or_tmo_phase ph = {start, 0, 4, 4, 1000, 900, start + 100, 0, 0};

		c.early_fraction = 0;
		or_tmo_init(&t, &c);
		calibrate_flat(&t, 4, 1000);
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 100) == OR_TMO_EARLY_TIMEOUT,
		      "F = 0: early at the arrival that completed the LAST set");
		ph.senders_last = 3;
		CHECK(or_tmo_phase_check(&t, SZ, &ph, start + 100) == OR_TMO_NOT_YET,
		      "F = 0: still NOT_YET with one LAST missing");
	}
}

int main(void)
{
	test_config();
	test_names();
	test_size_class();
	test_absent_slack();
	test_user_timeout();
	test_phase();
	printf("%s: %d failure(s)\n", check_failures ? "FAIL" : "PASS", check_failures);
	return check_failures ? 1 : 0;
}
