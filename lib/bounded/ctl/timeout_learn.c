/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a completed operation teaches the timeout controller (timeout.h): the
 * calibration of a size class's hard bound, t_C from clean completions, the
 * backoff after heavy-loss timeouts, and the incast.  Pure, as timeout.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/bounded/ctl/timeout.h"

static void sort_u32(uint32_t *a, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		uint32_t v = a[i], j = i;

		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/* Median of n sorted values (the mean of the middle two when n is even); n > 0. */
static double median_sorted(const uint32_t *a, uint32_t n)
{
	return ((double)a[(n - 1) / 2] + (double)a[n / 2]) / 2.0;
}

/* A clean completion: into the window, and t_C is the window's median. */
static void track(struct or_tmo_class *k, uint32_t sample)
{
	uint32_t sorted[OR_TMO_WINDOW];

	k->recent[k->recent_next] = sample;
	k->recent_next = (k->recent_next + 1) % OR_TMO_WINDOW;
	if (k->nrecent < OR_TMO_WINDOW)
		k->nrecent++;
	memcpy(sorted, k->recent, k->nrecent * sizeof(*sorted));
	sort_u32(sorted, k->nrecent);
	k->t_c = median_sorted(sorted, k->nrecent);
	k->have_t_c = 1;
	k->consensus_stale = 1;
}

/* t_B of n sorted samples: their nearest-rank calib_percentile x calib_margin, and at least
 * that percentile + calib_slack_us. */
static double bound_of(const struct or_tmo_config *cfg, const uint32_t *sorted, uint32_t n)
{
	/* Nearest rank; P * n first, so that 95 * 20 / 100 is exactly 19. */
	double rank = ceil(cfg->calib_percentile * (double)n / 100.0 - 1e-9);
	uint32_t idx = rank < 1.0 ? 0 : (uint32_t)rank - 1;
	double pct = (double)sorted[idx < n ? idx : n - 1];

	/*
	 * A margin in proportion leaves a 4 ms phase 0.4 ms, less than one time slice of a rank
	 * that shares its CPU: on a clean network 64 KiB lost 0.54 % of its data to such cuts
	 * (docs/design.md, "Deadlines and the timeout controller").
	 */
	return fmax(pct * cfg->calib_margin, pct + (double)cfg->calib_slack_us);
}

/* While calibrating: the provisional bound of the samples so far (timeout.h). */
static void update_provisional(const struct or_tmo_config *cfg, struct or_tmo_class *k)
{
	uint32_t sorted[OR_TMO_CALIB_MAX];

	if (k->ncalib < OR_TMO_PROVISIONAL_AFTER)
		return;
	memcpy(sorted, k->calib, k->ncalib * sizeof(*sorted));
	sort_u32(sorted, k->ncalib);
	k->t_b_provisional = bound_of(cfg, sorted, k->ncalib) * OR_TMO_PROVISIONAL_FACTOR;
}

static void finish_calibration(struct or_tmo *t, struct or_tmo_class *k)
{
	uint32_t n = k->ncalib;

	sort_u32(k->calib, n);
	k->t_b = bound_of(&t->cfg, k->calib, n);
	k->t_b_provisional = 0.0;

	k->t_c0 = median_sorted(k->calib, n);
	/* t_C0 divides every later deadline. */
	if (k->t_c0 < 1.0)
		k->t_c0 = 1.0;
	/*
	 * The window holds only the calibration samples that did not time out; the median
	 * of all of them, the samples t_B came from, is the reference the ratio needs.
	 */
	k->t_c = k->t_c0;
	k->have_t_c = 1;
	k->backoff = 1.0;
	k->calibrated = 1;
	k->consensus_stale = 1;
}

/* The class's deadline without backoff, from this rank's t_C until peers' estimates are in. */
static double plain_bound(const struct or_tmo_class *k)
{
	double cons = k->consensus ? (double)k->consensus : k->t_c;
	return k->t_b * cons / k->t_c0 * (k->stretch > 1.0 ? k->stretch : 1.0);
}

static enum or_tmo_reason fold_sample(struct or_tmo *t, struct or_tmo_class *k, uint32_t sample,
                                      int hit, double loss)
{
	const struct or_tmo_config *cfg = &t->cfg;
	int heavy = loss > cfg->loss_threshold;
	double cap, plain;

	if (!cfg->user_timeout_us && !k->calibrated) {
		/* Timed-out operations count too: they show that the tail is long. */
		k->calib[k->ncalib++] = sample;
		if (k->ncalib >= cfg->calib_ops) {
			finish_calibration(t, k);
			return OR_TMO_CALIBRATED;
		}
		if (!hit)
			track(k, sample);
		update_provisional(cfg, k);
		return OR_TMO_CALIBRATING;
	}

	if (!hit) {
		track(k, sample);
		/*
		 * A completion that would have met the deadline without the backoff says the
		 * slowdown that caused it is over: end it at once.  Decaying it over 8
		 * operations kept 4 MiB deadlines at 2.3x a phase for 20 operations after a
		 * burst of cross traffic, and the next burst ran into those.  A completion
		 * slower than that decays it, so a network that slowed for good keeps room.
		 */
		if ((double)sample <= plain_bound(k))
			k->backoff = 1.0;
		else
			k->backoff = 1.0 + (k->backoff - 1.0) * (1.0 - cfg->ewma_alpha);
		k->cuts_in_row = 0;
		k->cut_us = 0;
		return OR_TMO_TRACKED;
	}

	if (heavy) {
		k->cuts_in_row++;
		k->cut_us += sample;
	}
	if (k->calibrated && !cfg->user_timeout_us && cfg->backoff > 1.0 && heavy &&
	    k->cuts_in_row >= OR_TMO_BACKOFF_CUTS &&
	    (k->cut_us >= cfg->backoff_after_us || k->cuts_in_row >= OR_TMO_BACKOFF_CUTS_ANYWAY)) {
		plain = plain_bound(k);
		/* Beyond max_us more backoff changes nothing now and only slows recovery. */
		cap = plain > 0.0 ? (double)cfg->max_us / plain : 1.0;
		if (cap < 1.0)
			cap = 1.0;
		k->backoff *= cfg->backoff;
		if (k->backoff > cap)
			k->backoff = cap;
		return OR_TMO_BACKOFF;
	}
	return OR_TMO_TIMED_OUT;
}

static enum or_tmo_reason fold_incast(struct or_tmo *t, int hit, double loss)
{
	const struct or_tmo_config *cfg = &t->cfg;
	int lossy = loss > cfg->loss_threshold;

	if (cfg->user_incast)
		return OR_TMO_INCAST_FIXED;
	/*
	 * Loss above the usual level in an operation that ran to its data (or early
	 * timeout) cuts: receivers were offered more than they took.  An operation that hit
	 * the hard bound does not: what it lost was still in flight when the deadline came
	 * (a slow rank, a deadline too tight for the data), and a smaller incast, which also
	 * sends slower (see pump() in bounded.c), would make the next phases longer and cut
	 * more of them.
	 */
	if (lossy && !hit) {
		t->clean_run = 0;
		/*
		 * Once is a spike (a receiver descheduled while its socket filled), and halving
		 * the incast halves how fast every sender sends (see pump()): the loss must
		 * persist before it cuts.
		 */
		if (++t->lossy_run < OR_TMO_INCAST_LOSSY_OPS)
			return OR_TMO_INCAST_HOLD;
		t->lossy_run = 0;
		t->incast = t->incast > 1 ? t->incast / 2 : 1;
		return OR_TMO_INCAST_CUT_LOSS;
	}
	if (hit) {
		t->clean_run = 0;
		return OR_TMO_INCAST_HOLD;
	}
	t->lossy_run = 0;
	if (++t->clean_run < cfg->clean_ops_to_grow)
		return OR_TMO_INCAST_HOLD;
	t->clean_run = 0;
	if (t->incast >= or_tmo_incast_max(cfg))
		return OR_TMO_INCAST_HOLD;
	t->incast++;
	return OR_TMO_INCAST_GROW;
}

enum or_tmo_reason or_tmo_complete(struct or_tmo *t, size_t bytes, uint64_t elapsed_us,
                                   int hit_hard_bound, double loss_fraction)
{
	uint32_t c = or_tmo_size_class(bytes);
	struct or_tmo_class *k = &t->cls[c];
	/* Past max_us nothing more is learnt; the clip also keeps samples 32-bit. */
	uint32_t sample = (uint32_t)(elapsed_us < t->cfg.max_us ? elapsed_us : t->cfg.max_us);
	double loss = loss_fraction;
	int hit = hit_hard_bound != 0;
	enum or_tmo_reason why;

	if (!(loss > 0.0))
		loss = 0.0;
	else if (loss > 1.0)
		loss = 1.0;

	why = fold_sample(t, k, sample, hit, loss);
	t->last.done_class = c;
	t->last.sample_why = why;
	t->last.incast_why = fold_incast(t, hit, loss);
	t->last.incast = t->incast;
	return why;
}

/* t_B grows by this much per cut operation while the cuts' moving mean is over budget, and
 * shrinks by OR_TMO_STRETCH_DECAY per operation while it is under half of it. */
#define OR_TMO_STRETCH_GROW  1.1
#define OR_TMO_STRETCH_DECAY 0.99

void or_tmo_cut_loss(struct or_tmo *t, size_t bytes, double fraction)
{
	const struct or_tmo_config *cfg = &t->cfg;
	struct or_tmo_class *k = &t->cls[or_tmo_size_class(bytes)];
	double plain, cap, stretch = k->stretch > 1.0 ? k->stretch : 1.0;

	if (cfg->loss_budget <= 0.0 || cfg->user_timeout_us || !k->calibrated)
		return;
	if (!(fraction > 0.0))
		fraction = 0.0;
	else if (fraction > 1.0)
		fraction = 1.0;
	/*
	 * A deadline 1.1x the median phase cuts a burst's tail, and what it cuts is estimated;
	 * but on hosts whose phases jitter by more than that (ranks sharing cores with their
	 * own compute) it cuts a fifth of the data of most operations, and a trainer needs
	 * more steps for it than the deadline saved.  So the cuts, on average, stay within
	 * the budget: over it, t_B stretches; well under it, the stretch wears off.
	 */
	k->cut_loss += cfg->ewma_alpha * (fraction - k->cut_loss);
	/* Only a cut stretches: the mean stays over budget for several operations after one
	 * large cut, and stretching on each of them would move the deadline past a burst
	 * that cut once. */
	if (fraction > 0.0 && k->cut_loss > cfg->loss_budget) {
		plain = plain_bound(k);
		cap = plain > 0.0 ? stretch * (double)cfg->max_us / plain : stretch;
		stretch *= OR_TMO_STRETCH_GROW;
		if (stretch > cap)
			stretch = cap > 1.0 ? cap : 1.0;
	} else if (k->cut_loss < cfg->loss_budget / 2) {
		stretch *= OR_TMO_STRETCH_DECAY;
		if (stretch < 1.0)
			stretch = 1.0;
	}
	k->stretch = stretch;
	k->consensus_stale = 1;
}
