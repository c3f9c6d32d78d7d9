/*
 * Timeout controller of bounded mode: see timeout.h for the model.  Pure:
 * no clock, no I/O, no allocation.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "timeout.h"

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

void or_tmo_config_default(struct or_tmo_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nranks = 1;
	cfg->rank = 0;
	cfg->calib_ops = 16;
	/*
	 * A deadline 1.1x a normal phase: a burst of cross traffic that halves a phase's rate
	 * is cut there, so an operation ends within about 1.1x its usual time plus the
	 * decode (issue 4's bar is a P99 within 1.3x the P50), and what is cut is estimated.
	 * At 1.2x, operations that met a burst took 1.4x with the decode and the wake-ups.
	 * The 75th percentile times 1.15 came to 1.3-1.4x, and burst phases slipped under it.
	 */
	cfg->calib_percentile = 50.0;
	cfg->calib_margin = 1.1;
	cfg->min_us = 200;
	cfg->max_us = 2000000;
	/* Before anything is known, only the upper bound cannot cut a healthy operation. */
	cfg->initial_us = cfg->max_us;
	cfg->user_timeout_us = 0;
	cfg->early_timeout = 1;
	cfg->early_fraction = 0.02;
	/* A phase lasts t_C; a sender that has not begun by half as long again is not coming. */
	cfg->absent_factor = 1.5;
	/* TCP's smoothed-RTT weight: completions slower than the plain deadline undo a backoff
	 * in about 8 operations (one that fits ends it, see fold_sample). */
	cfg->ewma_alpha = 0.125;
	cfg->backoff = 1.5;
	/*
	 * Cross traffic that another tenant's shuffle brings lasts up to seconds (TCP flows
	 * keep sending for seconds after their ON period ends); three 4 MiB operations cut in
	 * a row are a fraction of one.  Backing off within a burst made the
	 * operations that met its end 2.3x longer (issue 4 (c)), for data the deadline is
	 * there to give up.  Small operations back off after OR_TMO_BACKOFF_CUTS_ANYWAY cuts:
	 * with the horizon alone, 64 KiB on a clean network lost 1.3% of its contributions
	 * to deadlines of 2.4 ms that a rank off its CPU for a few ms kept missing.
	 */
	cfg->backoff_after_us = 5000000;
	/* Healthy shared clouds lose 0.05-0.2% (DESIGN.md section 1); 1% means congestion. */
	cfg->loss_threshold = 0.01;
	cfg->clean_ops_to_grow = 8;
	cfg->incast_initial = 0;
	cfg->user_incast = 0;
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

static uint32_t incast_max(const struct or_tmo_config *cfg)
{
	return cfg->nranks > 1 ? cfg->nranks - 1 : 1;
}

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
	if (c->clean_ops_to_grow == 0)
		return 0;
	if (c->incast_initial > incast_max(c) || c->user_incast > incast_max(c))
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
	} else {
		/* Multiplied before dividing so that consensus == t_C0 gives t_B exactly. */
		base = k->t_b * (double)k->consensus / k->t_c0 * k->backoff;
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
		t->incast = cfg->incast_initial ? cfg->incast_initial : incast_max(cfg);

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

uint64_t or_tmo_deadline(struct or_tmo *t, size_t bytes)
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
	return k->deadline;
}

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

static void finish_calibration(struct or_tmo *t, struct or_tmo_class *k)
{
	uint32_t n = k->ncalib;
	double rank;
	uint32_t idx;

	sort_u32(k->calib, n);
	/* Nearest rank; P * n first, so that 95 * 20 / 100 is exactly 19. */
	rank = ceil(t->cfg.calib_percentile * (double)n / 100.0 - 1e-9);
	idx = rank < 1.0 ? 0 : (uint32_t)rank - 1;
	if (idx >= n)
		idx = n - 1;
	k->t_b = (double)k->calib[idx] * t->cfg.calib_margin;

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
	return k->t_b * cons / k->t_c0;
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
	if (t->incast >= incast_max(cfg))
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

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
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
		uint64_t absent_at =
		    sat_add(ph->start_us, ceil_u64(t->cfg.absent_factor * (double)k->consensus));
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

uint64_t or_tmo_phase_wake(const struct or_tmo *t, size_t bytes, const struct or_tmo_phase *ph)
{
	uint64_t hard_at, early_at;

	if (phase_times(t, bytes, ph, &hard_at, &early_at))
		return 0;
	return early_at < hard_at ? early_at : hard_at;
}

uint32_t or_tmo_incast(const struct or_tmo *t)
{
	return t->incast;
}

const struct or_tmo_decision *or_tmo_last(const struct or_tmo *t)
{
	return &t->last;
}
