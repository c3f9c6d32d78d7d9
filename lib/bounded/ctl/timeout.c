/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timeout controller of bounded mode: see timeout.h for the model.  Pure:
 * no clock, no I/O, no allocation.  Here the configuration, the consensus of
 * the ranks' estimates, deadlines and the phase check; what a completion
 * teaches the controller is in timeout_learn.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/core/params.h"
#include "lib/bounded/ctl/timeout.h"

/* 2^64: doubles at or above it do not convert to uint64_t. */
#define TWO_POW_64 18446744073709551616.0

/* Saturates: a huge margin or fraction must not make the conversion undefined. */
static uint64_t ceil_u64(double v)
{
	v = ceil(v);
	if (!(v < TWO_POW_64))
		return UINT64_MAX;
	return v > 0.0 ? (uint64_t)v : 0;
}

static const char *const reason_names[] = {
#define OR_TMO_REASON_STR(name, str) str,
    OR_TMO_REASON_MAP(OR_TMO_REASON_STR)
#undef OR_TMO_REASON_STR
};

const char *or_tmo_reason_name(enum or_tmo_reason r)
{
	if ((unsigned)r >= (unsigned)OR_TMO_REASON_COUNT)
		return "unknown";
	return reason_names[r];
}

/* The parameter table's defaults (lib/core/params.h), the one place they are defined: read
 * from its text, so that this module stays pure and links alone. */
static const char *const param_defaults[OR_P_COUNT] = {
#define OR_TMO_PARAM_DEFAULT(id, name, type, def, min, max, desc) [OR_P_##id] = def,
    OR_PARAM_TABLE(OR_TMO_PARAM_DEFAULT)
#undef OR_TMO_PARAM_DEFAULT
};

static double table_default(enum or_param_id id)
{
	return strtod(param_defaults[id], NULL);
}

void or_tmo_config_default(struct or_tmo_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nranks = 1;
	cfg->rank = 0;
	/*
	 * The parameters' defaults.  calib_margin 1.1: a burst of cross traffic that halves a
	 * phase's rate is cut there, so an operation ends within about 1.1x its usual time plus
	 * the decode (the aim: a P99 within 1.3x the P50); 1.2 let burst operations take 1.4x.
	 * backoff_after_us 5 s: cross traffic lasts up to seconds, and backing off within a
	 * burst made the operations at its end 2.3x longer for data the deadline gives up.
	 */
	cfg->calib_ops = (uint32_t)table_default(OR_P_CALIB_OPS);
	cfg->calib_percentile = table_default(OR_P_CALIB_PERCENTILE);
	cfg->calib_margin = table_default(OR_P_CALIB_MARGIN);
	cfg->calib_slack_us = (uint64_t)table_default(OR_P_CALIB_SLACK_US);
	cfg->min_us = (uint64_t)table_default(OR_P_TIMEOUT_MIN_US);
	cfg->max_us = (uint64_t)table_default(OR_P_TIMEOUT_MAX_US);
	/* Before anything is known, only the upper bound cannot cut a healthy operation. */
	cfg->initial_us = cfg->max_us;
	cfg->user_timeout_us = (uint64_t)table_default(OR_P_TIMEOUT_US);
	cfg->early_timeout = table_default(OR_P_EARLY_TIMEOUT) != 0;
	cfg->early_fraction = table_default(OR_P_EARLY_FRACTION);
	/* A phase lasts t_C; a sender that has not begun by twice that is not coming. */
	cfg->absent_factor = table_default(OR_P_ABSENT_FACTOR);
	cfg->backoff_after_us = (uint64_t)table_default(OR_P_BACKOFF_AFTER_US);
	cfg->loss_budget = table_default(OR_P_LOSS_BUDGET);
	cfg->user_incast = (uint32_t)table_default(OR_P_INCAST);
	/* The controller's own constants, no parameters.  TCP's smoothed-RTT weight:
	 * completions slower than the plain deadline undo a backoff in about 8 operations (one
	 * that fits ends it, see fold_sample). */
	cfg->ewma_alpha = 0.125;
	cfg->backoff = 1.5;
	/* Healthy shared clouds lose 0.05-0.2% (docs/design.md, "Pacing"); 1% means congestion. */
	cfg->loss_threshold = 0.01;
	cfg->clean_ops_to_grow = 8;
	cfg->incast_initial = 0;
}

/*
 * Quiet times without a LAST that close a final phase at least as old as t_C, and the least
 * quiet that does: 100 x min_us, 20 ms by default, as a rank that shares its core with
 * others stops for several ms now and then, and a cut in the middle of its sends loses a
 * run of packets.  Below that t_B is short anyway.
 */
#define OR_TMO_IDLE_QUIETS 5
#define OR_TMO_IDLE_MIN_US(t)                                                                      \
	((t)->cfg.min_us > UINT64_MAX / 100 ? UINT64_MAX : (t)->cfg.min_us * 100)

/* Written as !(x >= lo) so that NaN fails every range test. */
static int check_config(const struct or_tmo_config *c)
{
	if (c->nranks == 0 || c->rank >= c->nranks)
		return 0;
	if (c->calib_ops == 0 || c->calib_ops > OR_TMO_CALIB_MAX)
		return 0;
	if (!(c->calib_percentile > 0.0 && c->calib_percentile <= 100.0))
		return 0;
	if (!(c->calib_margin >= 1.0 && isfinite(c->calib_margin)))
		return 0;
	if (c->calib_slack_us > UINT32_MAX)
		return 0;
	if (c->min_us == 0 || c->max_us < c->min_us || c->max_us > UINT32_MAX)
		return 0;
	if (c->initial_us < c->min_us || c->initial_us > c->max_us)
		return 0;
	if (!(c->early_fraction >= 0.0 && isfinite(c->early_fraction)))
		return 0;
	if (!(c->absent_factor == 0.0 || (c->absent_factor >= 1.0 && c->absent_factor <= 1000.0)))
		return 0;
	if (!(c->ewma_alpha > 0.0 && c->ewma_alpha <= 1.0))
		return 0;
	if (!(c->backoff >= 1.0 && isfinite(c->backoff)))
		return 0;
	if (!(c->loss_threshold >= 0.0 && c->loss_threshold <= 1.0))
		return 0;
	if (!(c->loss_budget >= 0.0 && c->loss_budget < 1.0))
		return 0;
	if (c->clean_ops_to_grow == 0)
		return 0;
	if (c->incast_initial > or_tmo_incast_max(c) || c->user_incast > or_tmo_incast_max(c))
		return 0;
	return 1;
}

uint32_t or_tmo_size_class(size_t bytes)
{
	uint32_t c = 0;

	while (c < OR_TMO_SIZE_CLASSES - 1 && bytes > ((size_t)1 << (OR_TMO_CLASS_SHIFT + c)))
		c++;
	return c;
}

static uint32_t *peer_row(struct or_tmo *t, uint32_t c)
{
	uint32_t *base = t->peer_ext ? t->peer_ext : t->peer_inline;

	return base + (size_t)c * t->cfg.nranks;
}

static const uint32_t *peer_row_c(const struct or_tmo *t, uint32_t c)
{
	const uint32_t *base = t->peer_ext ? t->peer_ext : t->peer_inline;

	return base + (size_t)c * t->cfg.nranks;
}

static uint32_t estimate_of(const struct or_tmo_class *k)
{
	double v;

	if (!k->have_t_c)
		return 0;
	/* Rounded up so that a known estimate never reads as 0, "none", in a header. */
	v = ceil(k->t_c);
	if (v < 1.0)
		return 1;
	if (v >= (double)UINT32_MAX)
		return UINT32_MAX;
	return (uint32_t)v;
}

/* Known estimates (non-zero) among this rank's and its peers' that are <= v. */
static uint32_t count_le(const struct or_tmo *t, uint32_t c, uint32_t self, uint32_t v)
{
	const uint32_t *row = peer_row_c(t, c);
	uint32_t n = (self != 0 && self <= v);

	for (uint32_t r = 0; r < t->cfg.nranks; r++)
		if (r != t->cfg.rank && row[r] != 0 && row[r] <= v)
			n++;
	return n;
}

/*
 * k-th smallest (from 0) known estimate, by bisection on the value: no
 * scratch array to sort, so the struct needs no per-rank workspace, at 32
 * passes over the row.
 */
static uint32_t kth_estimate(const struct or_tmo *t, uint32_t c, uint32_t self, uint32_t k)
{
	uint32_t lo = 1, hi = UINT32_MAX;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (count_le(t, c, self, mid) >= k + 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static uint32_t consensus_of(const struct or_tmo *t, uint32_t c, uint32_t *nest)
{
	uint32_t self = estimate_of(&t->cls[c]);
	uint32_t n = count_le(t, c, self, UINT32_MAX);
	uint64_t lo, hi;

	*nest = n;
	if (n == 0)
		return 0;
	lo = kth_estimate(t, c, self, (n - 1) / 2);
	hi = (n % 2) ? lo : kth_estimate(t, c, self, n / 2);
	return (uint32_t)((lo + hi + 1) / 2);
}

/* Refreshes the class's snapshot; returns the bound before clamping in *base_out. */
static enum or_tmo_reason snapshot(struct or_tmo *t, uint32_t c, double *base_out)
{
	struct or_tmo_class *k = &t->cls[c];
	const struct or_tmo_config *cfg = &t->cfg;
	enum or_tmo_reason why;
	double base;

	if (k->consensus_stale) {
		k->consensus = consensus_of(t, c, &k->estimates);
		k->consensus_stale = 0;
	}

	if (cfg->user_timeout_us) {
		base = (double)cfg->user_timeout_us;
		why = OR_TMO_USER;
	} else if (!k->calibrated) {
		base = (double)cfg->initial_us;
		why = OR_TMO_INITIAL;
		if (k->t_b_provisional > 0.0 && k->t_b_provisional < base) {
			base = k->t_b_provisional;
			why = OR_TMO_PROVISIONAL;
		}
	} else {
		/* Multiplied before dividing so that consensus == t_C0 gives t_B exactly. */
		base = k->t_b * (double)k->consensus / k->t_c0 * k->backoff *
		       (k->stretch > 1.0 ? k->stretch : 1.0);
		why = OR_TMO_ADAPTIVE;
	}
	*base_out = base;

	if (base < (double)cfg->min_us) {
		k->deadline = cfg->min_us;
		why = OR_TMO_CLAMP_MIN;
	} else if (!(base <= (double)cfg->max_us)) {
		k->deadline = cfg->max_us;
		why = OR_TMO_CLAMP_MAX;
	} else {
		k->deadline = (uint64_t)ceil(base);
	}

	if (k->consensus == 0) {
		k->quiet = UINT64_MAX;
	} else {
		k->quiet = ceil_u64(cfg->early_fraction * (double)k->consensus);
	}
	return why;
}

int or_tmo_init_store(struct or_tmo *t, const struct or_tmo_config *cfg, uint32_t *store,
                      size_t store_len)
{
	double unused;

	if (!t || !cfg || !check_config(cfg))
		return OR_TMO_EINVAL;
	if (store ? store_len < OR_TMO_PEER_STORE_LEN(cfg->nranks)
	          : cfg->nranks > OR_TMO_INLINE_RANKS)
		return OR_TMO_EINVAL;

	memset(t, 0, sizeof(*t));
	t->cfg = *cfg;
	t->peer_ext = store;
	if (store)
		memset(store, 0, OR_TMO_PEER_STORE_LEN(cfg->nranks) * sizeof(*store));

	if (cfg->user_incast)
		t->incast = cfg->user_incast;
	else
		t->incast = cfg->incast_initial ? cfg->incast_initial : or_tmo_incast_max(cfg);

	for (uint32_t c = 0; c < OR_TMO_SIZE_CLASSES; c++) {
		t->cls[c].backoff = 1.0;
		t->cls[c].consensus_stale = 1;
		snapshot(t, c, &unused);
	}

	t->last.why = OR_TMO_NONE;
	t->last.sample_why = OR_TMO_NONE;
	t->last.incast = t->incast;
	t->last.incast_why = cfg->user_incast ? OR_TMO_INCAST_FIXED : OR_TMO_NONE;
	t->last.backoff = 1.0;
	t->last.quiet_us = UINT64_MAX;
	return 0;
}

int or_tmo_init(struct or_tmo *t, const struct or_tmo_config *cfg)
{
	return or_tmo_init_store(t, cfg, NULL, 0);
}

uint64_t or_tmo_decide(struct or_tmo *t, size_t bytes)
{
	uint32_t c = or_tmo_size_class(bytes);
	struct or_tmo_class *k = &t->cls[c];
	struct or_tmo_decision *d = &t->last;
	double base;

	d->why = snapshot(t, c, &base);
	d->size_class = c;
	d->deadline_us = k->deadline;
	d->unclamped_us = ceil_u64(base);
	if (t->cfg.user_timeout_us)
		d->t_b_us = t->cfg.user_timeout_us;
	else
		d->t_b_us = k->calibrated ? ceil_u64(k->t_b) : 0;
	d->t_c_us = estimate_of(k);
	d->t_c0_us = k->calibrated ? (uint32_t)ceil(k->t_c0) : 0;
	d->consensus_us = k->consensus;
	d->estimates = k->estimates;
	d->quiet_us = k->quiet;
	d->backoff = k->backoff;
	d->stretch = k->stretch > 1.0 ? k->stretch : 1.0;
	return k->deadline;
}

int or_tmo_peer_estimate(struct or_tmo *t, uint32_t rank, size_t bytes, uint32_t estimate_us)
{
	uint32_t c = or_tmo_size_class(bytes);
	uint32_t *row;

	if (rank >= t->cfg.nranks)
		return OR_TMO_EINVAL;
	/* Own estimate comes from t_C directly; a looped-back header must not count twice. */
	if (rank == t->cfg.rank)
		return 0;
	row = peer_row(t, c);
	if (row[rank] != estimate_us) {
		row[rank] = estimate_us;
		t->cls[c].consensus_stale = 1;
	}
	return 0;
}

uint32_t or_tmo_local_estimate(const struct or_tmo *t, size_t bytes)
{
	return estimate_of(&t->cls[or_tmo_size_class(bytes)]);
}

int or_tmo_calibrated(const struct or_tmo *t, size_t bytes)
{
	return t->cfg.user_timeout_us || t->cls[or_tmo_size_class(bytes)].calibrated;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * How long a silent sender is waited for before it counts as absent: absent_factor x t_C,
 * and at least t_C + calib_slack_us, as t_B: a sender descheduled for a time slice is late,
 * not a straggler, and where t_C is under a millisecond A x t_C is shorter than a slice.
 */
static uint64_t absent_after(const struct or_tmo *t, const struct or_tmo_class *k)
{
	uint64_t by_factor = ceil_u64(t->cfg.absent_factor * (double)k->consensus);
	uint64_t by_slack = sat_add(k->consensus, t->cfg.calib_slack_us);

	return by_factor > by_slack ? by_factor : by_slack;
}

/* The times at which each timeout would fire; early_at is UINT64_MAX when it cannot. */
static int phase_times(const struct or_tmo *t, size_t bytes, const struct or_tmo_phase *ph,
                       uint64_t *hard_at, uint64_t *early_at)
{
	const struct or_tmo_class *k = &t->cls[or_tmo_size_class(bytes)];
	int all_last = ph->senders_last >= ph->senders_expected;
	int all_bytes = ph->bytes_received >= ph->bytes_expected;
	/* Non-vacuous: a caller that does not count senders (or bytes) passes 0. */
	int hint = (ph->senders_expected > 0 && all_last) || (ph->bytes_expected > 0 && all_bytes);
	uint64_t quiet_from;

	*hard_at = sat_add(ph->start_us, ph->deadline_us ? ph->deadline_us : k->deadline);
	*early_at = UINT64_MAX;
	if (!t->cfg.early_timeout)
		return all_last && all_bytes;
	/* A stale arrival time from before the phase must not count as quiet. */
	quiet_from = ph->last_arrival_us > ph->start_us ? ph->last_arrival_us : ph->start_us;
	if (hint && k->quiet != UINT64_MAX) {
		*early_at = sat_add(quiet_from, k->quiet);
	} else if (k->quiet != UINT64_MAX && t->cfg.absent_factor > 0.0 && ph->senders_silent > 0 &&
	           ph->senders_expected > 0 &&
	           ph->senders_last + (uint64_t)ph->senders_silent >= ph->senders_expected &&
	           ph->bytes_received > 0) {
		uint64_t absent_at = sat_add(ph->start_us, absent_after(t, k));
		*early_at = sat_add(quiet_from, k->quiet);
		if (*early_at < absent_at)
			*early_at = absent_at;
	} else if (k->quiet != UINT64_MAX && ph->final_phase && ph->senders_silent == 0 &&
	           ph->senders_expected > 0 && ph->bytes_received > 0) {
		/*
		 * Every sender was heard but a LAST is missing and bytes are short: both copies of
		 * a LAST go when a descheduled receiver's socket overflows.  Once the phase is as
		 * old as a normal one and quiet for OR_TMO_IDLE_QUIETS quiet times, the rest is
		 * lost, not late: waiting for t_B would only add its length to the operation.
		 */
		uint64_t idle = k->quiet > UINT64_MAX / OR_TMO_IDLE_QUIETS
		                    ? UINT64_MAX
		                    : k->quiet * OR_TMO_IDLE_QUIETS;
		uint64_t normal_at = sat_add(ph->start_us, k->consensus);

		if (idle < OR_TMO_IDLE_MIN_US(t))
			idle = OR_TMO_IDLE_MIN_US(t);
		*early_at = sat_add(quiet_from, idle);
		if (*early_at < normal_at)
			*early_at = normal_at;
	} else if (ph->senders_expected > 0 && all_last && ph->bytes_received > 0) {
		/* No t_C yet: the phase's own transfer time stands in for it. */
		double q = ceil(t->cfg.early_fraction * (double)(quiet_from - ph->start_us));
		uint64_t quiet = q < (double)t->cfg.min_us ? t->cfg.min_us : (uint64_t)q;
		*early_at = sat_add(quiet_from, quiet);
	}
	return all_last && all_bytes;
}

enum or_tmo_reason or_tmo_phase_check(const struct or_tmo *t, size_t bytes,
                                      const struct or_tmo_phase *ph, uint64_t now_us)
{
	uint64_t hard_at, early_at;

	if (phase_times(t, bytes, ph, &hard_at, &early_at))
		return OR_TMO_ALL_DATA;
	if (early_at < hard_at && now_us >= early_at)
		return OR_TMO_EARLY_TIMEOUT;
	if (now_us >= hard_at)
		return OR_TMO_HARD_BOUND;
	return OR_TMO_NOT_YET;
}

uint64_t or_tmo_absent_us(const struct or_tmo *t, size_t bytes, uint64_t *t_c_us)
{
	const struct or_tmo_class *k = &t->cls[or_tmo_size_class(bytes)];

	*t_c_us = k->consensus;
	if (!t->cfg.early_timeout || !(t->cfg.absent_factor > 0.0) || k->quiet == UINT64_MAX)
		return 0;
	return absent_after(t, k);
}

uint32_t or_tmo_incast(const struct or_tmo *t)
{
	return t->incast;
}

const struct or_tmo_decision *or_tmo_last(const struct or_tmo *t)
{
	return &t->last;
}
