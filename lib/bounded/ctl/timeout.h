/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timeout controller of bounded mode (docs/design.md, "Deadlines and the timeout controller").
 *
 * A pure module: the caller supplies every time (microseconds, any epoch, as
 * long as it is one clock), every arrival count and every loss report; the
 * controller answers with deadlines, phase verdicts and the Transpose incast.
 * It reads no clock, does no I/O, keeps no globals and allocates nothing, so
 * synthetic traces drive it exactly as a live communicator does.
 *
 * One struct or_tmo per communicator, used by one thread at a time.  State is
 * kept per size class (powers of two of the byte size) because a 4 KiB and a
 * 64 MiB allreduce have nothing to teach each other about their tails.
 *
 * Whether a "deadline" bounds a whole operation or one phase is the caller's
 * choice; it only has to feed or_tmo_complete() the elapsed time of the same
 * unit that or_tmo_decide() bounds.
 *
 * Per size class:
 *  - t_B, the hard bound: the first calib_ops completions are recorded, then
 *    t_B = (nearest-rank calib_percentile of them) * calib_margin, and at
 *    least that percentile + calib_slack_us.  For the first
 *    OR_TMO_PROVISIONAL_AFTER of them the deadline is initial_us; from then on
 *    until calibration ends it is OR_TMO_PROVISIONAL_FACTOR x the t_B the
 *    samples so far give (initial_us at most).  A user timeout replaces all of
 *    this.
 *  - t_C, the normal completion time: the median of the last OR_TMO_WINDOW
 *    completions that did not hit the hard bound (a timed-out operation says
 *    only "at least this long", which would drag t_C toward the deadline it
 *    is meant to predict).  A median, not a mean: bursts of cross traffic
 *    that slow fewer than half of the operations must not move the deadline
 *    that is meant to cut them.  At the end of calibration t_C is the median
 *    of the calibration samples, the reference t_C0 that t_B was measured
 *    against.
 *  - the consensus: the median of this rank's t_C and the latest t_C each
 *    peer advertised in its packet headers, so that one rank with a noisy
 *    view cannot set everybody's deadline.
 *  - the adaptive deadline: t_B * consensus / t_C0 * backoff, clamped to
 *    [min_us, max_us].  It shrinks as completions get faster and grows as
 *    they slow down.  backoff (>= 1) covers the case the median cannot see:
 *    when the network slows past the deadline, every operation times out and
 *    t_C gets no samples, so from the OR_TMO_BACKOFF_CUTS-th hard timeout in a
 *    row with loss above loss_threshold whose phases add up to at least
 *    cfg.backoff_after_us (a slowdown that lasts, not a burst of cross
 *    traffic, which lasts up to seconds), or from the
 *    OR_TMO_BACKOFF_CUTS_ANYWAY-th, each one multiplies backoff by
 *    cfg.backoff; a clean completion that fits the deadline without backoff
 *    ends it, a slower one decays it toward 1 (weight cfg.ewma_alpha).  A
 *    burst that cuts one or two operations is what the deadline is for, and
 *    does not lengthen the next ones.  A persistent straggler also triggers
 *    it (its share of the data is lost at every deadline); set cfg.backoff = 1
 *    to always cut stragglers at t_B instead.
 *
 * Per communicator: the Transpose incast, AIMD within [1, nranks-1]: halved
 * on loss above loss_threshold in an operation that did not hit the hard
 * bound, +1 after clean_ops_to_grow clean operations in a row; a hard timeout
 * holds it and resets the run (see fold_incast).
 */
#ifndef OR_TIMEOUT_H
#define OR_TIMEOUT_H

#include <stddef.h>
#include <stdint.h>

/* Size class c holds sizes in (2^(SHIFT+c-1), 2^(SHIFT+c)]; the ends catch everything beyond. */
#define OR_TMO_SIZE_CLASSES 16
#define OR_TMO_CLASS_SHIFT  12

/* Most calibration samples a size class can hold: the upper limit of calib_ops. */
#define OR_TMO_CALIB_MAX 64
/*
 * Lossy operations in a row (not cut by the hard bound) that halve the incast.  Loss that
 * the incast causes (receivers offered more than they take) comes back every operation,
 * as the schedule does; a burst of cross traffic comes and goes.  At 2, TCP cross traffic
 * on one host's link (ON ~300 ms, two 4 MiB operations) cut that rank's incast to 1, and
 * with it its sending rate to a third: it fell behind, its peers cut it off, and P99 went
 * from 0.6 to 1.6-2.5 s.
 */
#define OR_TMO_INCAST_LOSSY_OPS 4

/*
 * Calibration samples after which a provisional bound replaces initial_us, and its factor
 * over the t_B those samples give.  A phase cut at the provisional bound is recorded at
 * that bound, above the percentile that sets t_B: unless more phases are cut than lie
 * above that percentile, t_B comes out as it would without the cuts.  Without it a rank
 * that enters 200 ms late holds a 16 MiB operation at 1 Gbit/s to 430 ms, against 240 ms
 * once t_B is set.  1.25: the bound of the first samples ran up to 13 % over the final t_B
 * there (the first operations are the slowest), and 1.5 still let such a straggler hold
 * the operation to 1.4x its time.
 */
#define OR_TMO_PROVISIONAL_AFTER  4
#define OR_TMO_PROVISIONAL_FACTOR 1.25

/* Completions whose median is t_C: as many as calibrate by default. */
#define OR_TMO_WINDOW 16
/*
 * Heavy-loss hard timeouts in a row before backoff lengthens the deadline.  A burst of
 * cross traffic (500 ms, six TCP flows per host) cut two 4 MiB operations in a row; the
 * backoff the first cut set made the second 1.5x longer, which is the tail the deadline
 * was to remove.  A network that really slowed keeps timing out and is caught one
 * operation later.
 */
#define OR_TMO_BACKOFF_CUTS 3
/* ... or this many, however short: small operations' cuts come from the hosts' scheduling
 * (a rank off its CPU for a few ms), which a burst's horizon would never see end. */
#define OR_TMO_BACKOFF_CUTS_ANYWAY 8

/*
 * Peers' estimates of communicators up to this size live inside struct
 * or_tmo; larger ones need a caller-provided array (or_tmo_init_store).
 */
#define OR_TMO_INLINE_RANKS 64

/* uint32_t elements of the peer store a communicator of n ranks needs. */
#define OR_TMO_PEER_STORE_LEN(n) ((size_t)(n)*OR_TMO_SIZE_CLASSES)

/* Same value as -OPTIREDUCE_EINVAL; repeated so this module needs no other header. */
#define OR_TMO_EINVAL (-22)

/*
 * Every decision the controller makes, with a name for logs.  Each function
 * returns or records a value from one group.
 */
#define OR_TMO_REASON_MAP(X)                                                                       \
	X(NONE, "none")                                                                            \
	/* what set a deadline (or_tmo_decide) */                                                  \
	X(INITIAL, "initial")         /* size class still calibrating: initial_us */               \
	X(PROVISIONAL, "provisional") /* calibrating: OR_TMO_PROVISIONAL_FACTOR x samples' t_B */  \
	X(USER, "user")               /* user_timeout_us */                                        \
	X(ADAPTIVE, "adaptive")       /* t_B scaled by consensus / t_C0 and backoff */             \
	X(CLAMP_MIN, "clamp_min")     /* one of the above, raised to min_us */                     \
	X(CLAMP_MAX, "clamp_max")     /* one of the above, lowered to max_us */                    \
	/* whether a phase may close (or_tmo_phase_check) */                                       \
	X(NOT_YET, "not_yet")                                                                      \
	X(ALL_DATA, "all_data")                                                                    \
	X(EARLY_TIMEOUT, "early_timeout")                                                          \
	X(HARD_BOUND, "hard_bound")                                                                \
	/* what a completion did to the size class (or_tmo_complete) */                            \
	X(CALIBRATING, "calibrating") /* recorded as a calibration sample */                       \
	X(CALIBRATED, "calibrated")   /* last calibration sample: t_B set */                       \
	X(TRACKED, "tracked")         /* folded into t_C */                                        \
	X(BACKOFF, "backoff")         /* timed out with heavy loss: backoff raised */              \
	X(TIMED_OUT, "timed_out")     /* timed out: t_C untouched */                               \
	/* what a completion did to the incast (or_tmo_complete) */                                \
	X(INCAST_FIXED, "incast_fixed")       /* user_incast set */                                \
	X(INCAST_HOLD, "incast_hold")         /* clean, run not long enough yet */                 \
	X(INCAST_GROW, "incast_grow")         /* clean run complete: +1 */                         \
	X(INCAST_CUT_LOSS, "incast_cut_loss") /* loss above threshold twice in a row: halved */

enum or_tmo_reason {
#define OR_TMO_REASON_ENUM(name, str) OR_TMO_##name,
	OR_TMO_REASON_MAP(OR_TMO_REASON_ENUM)
#undef OR_TMO_REASON_ENUM
	    OR_TMO_REASON_COUNT
};

/* Short lowercase name; "unknown" for a value outside the enum.  Never NULL. */
const char *or_tmo_reason_name(enum or_tmo_reason r);

struct or_tmo_config {
	uint32_t nranks;            /* communicator size, >= 1 */
	uint32_t rank;              /* this rank; estimates it "receives" from itself are ignored */
	uint32_t calib_ops;         /* K, 1..OR_TMO_CALIB_MAX */
	double calib_percentile;    /* P in (0, 100], nearest-rank */
	double calib_margin;        /* M >= 1 */
	uint64_t calib_slack_us;    /* S: t_B >= percentile + S */
	uint64_t min_us;            /* >= 1 */
	uint64_t max_us;            /* >= min_us, <= UINT32_MAX (header estimates are 32-bit) */
	uint64_t initial_us;        /* deadline while calibrating, in [min_us, max_us] */
	uint64_t user_timeout_us;   /* 0 = adaptive; else the deadline, clamped to the bounds */
	int early_timeout;          /* 0: phases close on all data or the hard bound only */
	double early_fraction;      /* F >= 0: quiet time that closes a phase early, * t_C */
	double absent_factor;       /* A = 0 (off) or >= 1: a sender silent for A * t_C is absent */
	double ewma_alpha;          /* (0, 1]: how much of backoff a clean completion undoes */
	double backoff;             /* >= 1: deadline growth per heavy-loss timeout; 1 = off */
	uint64_t backoff_after_us;  /* the run of heavy-loss timeouts must also cut this much */
	double loss_threshold;      /* [0, 1]: loss fraction that counts as "lossy" */
	double loss_budget;         /* [0, 1): mean fraction hard bounds may cut; 0 = no limit */
	uint32_t clean_ops_to_grow; /* >= 1 */
	uint32_t incast_initial;    /* 0 = nranks - 1; else <= max(1, nranks - 1) */
	uint32_t user_incast;       /* 0 = adaptive; else fixed, <= max(1, nranks - 1) */
};

/*
 * The last decisions, for the caller to log.  Deadline fields are set by
 * or_tmo_decide(), the rest by or_tmo_complete().  Times in microseconds;
 * an estimate of 0 means "none yet".
 */
struct or_tmo_decision {
	uint32_t size_class;
	uint64_t deadline_us;
	uint64_t t_b_us;       /* calibrated t_B; user_timeout_us if set; 0 while calibrating */
	uint64_t unclamped_us; /* the bound before clamping to [min_us, max_us] */
	uint32_t t_c_us;       /* this rank's t_C */
	uint32_t t_c0_us;      /* t_C at the end of calibration */
	uint32_t consensus_us; /* median of t_C over this rank and its peers */
	uint32_t estimates;    /* how many ranks the consensus was taken over */
	uint64_t quiet_us;     /* early timeout's quiet time; UINT64_MAX when disabled */
	double backoff;
	double stretch;         /* >= 1: t_B's growth that keeps the cuts within loss_budget */
	enum or_tmo_reason why; /* INITIAL, USER, ADAPTIVE, CLAMP_MIN, CLAMP_MAX */

	uint32_t done_class;           /* size class of the last completion */
	enum or_tmo_reason sample_why; /* CALIBRATING ... TIMED_OUT */
	uint32_t incast;
	enum or_tmo_reason incast_why; /* INCAST_* */
};

/* Private: state of one size class. */
struct or_tmo_class {
	uint32_t calib[OR_TMO_CALIB_MAX]; /* samples while calibrating, then sorted */
	uint32_t ncalib;
	int calibrated;
	double t_b;             /* calibrated hard bound */
	double t_b_provisional; /* while calibrating: the provisional bound; 0 until set */
	double t_c0;            /* reference t_C, the median of the calibration samples */
	double t_c;
	int have_t_c;                   /* a clean completion or calibration has set t_c */
	uint32_t recent[OR_TMO_WINDOW]; /* the last clean completions, a ring */
	uint32_t nrecent;               /* how many of recent[] are filled */
	uint32_t recent_next;           /* where the next one goes */
	double backoff;
	double cut_loss;      /* moving mean of the fraction hard bounds cut, per operation */
	double stretch;       /* t_B's factor from the loss budget; 0 until set (read as 1) */
	uint32_t cuts_in_row; /* heavy-loss hard timeouts since the last clean completion */
	uint64_t cut_us;      /* their samples summed: how long the run has lasted */
	int consensus_stale;  /* t_C or a peer estimate changed since the last deadline */
	/* Snapshot taken by or_tmo_decide(), read by or_tmo_phase_check(). */
	uint32_t consensus;
	uint32_t estimates;
	uint64_t deadline;
	uint64_t quiet;
};

/*
 * Allocate it anywhere (inside the communicator, on the stack); every field
 * is private, read the decision with or_tmo_last().  Copying is fine unless a
 * caller-provided peer store is in use (the copy shares it).
 */
struct or_tmo {
	struct or_tmo_config cfg;
	struct or_tmo_class cls[OR_TMO_SIZE_CLASSES];
	uint32_t incast;
	uint32_t clean_run;
	uint32_t lossy_run; /* consecutive lossy operations that did not hit the bound */
	uint32_t *peer_ext; /* caller's peer store, or NULL for peer_inline */
	uint32_t peer_inline[OR_TMO_PEER_STORE_LEN(OR_TMO_INLINE_RANKS)];
	struct or_tmo_decision last;
};

/*
 * What the caller knows about one phase at time now.  "LAST" is the flag on
 * a sender's final packet(s) of the phase.
 */
struct or_tmo_phase {
	uint64_t start_us;    /* when the phase began */
	uint64_t deadline_us; /* this phase's hard bound; 0 = the size class's deadline */
	uint32_t senders_expected;
	uint32_t senders_last;    /* senders whose LAST packets have arrived */
	uint64_t bytes_expected;  /* 0 only when the phase carries no payload */
	uint64_t bytes_received;  /* distinct payload bytes, duplicates not counted */
	uint64_t last_arrival_us; /* time of the latest new packet; 0 = none yet */
	uint32_t senders_silent;  /* of the senders without LAST, those nothing came from */
	int final_phase;          /* no later phase of the operation will say a sender is done */
};

/* Defaults that match lib/core/params.h; nranks = 1, rank = 0 until the caller sets them. */
void or_tmo_config_default(struct or_tmo_config *cfg);

/* The largest incast: every other rank, at least 1. */
static inline uint32_t or_tmo_incast_max(const struct or_tmo_config *cfg)
{
	return cfg->nranks > 1 ? cfg->nranks - 1 : 1;
}

/*
 * 0, or OR_TMO_EINVAL for a config out of the documented ranges (t untouched
 * then).  or_tmo_init() keeps peers' estimates inside *t, which works up to
 * OR_TMO_INLINE_RANKS ranks.  Larger communicators call or_tmo_init_store()
 * with an array of at least OR_TMO_PEER_STORE_LEN(nranks) elements that
 * outlives *t (64 KiB for 1024 ranks); the controller zeroes it and is its
 * only user until the caller frees it.
 */
int or_tmo_init(struct or_tmo *t, const struct or_tmo_config *cfg);
int or_tmo_init_store(struct or_tmo *t, const struct or_tmo_config *cfg, uint32_t *store,
                      size_t store_len);

/* Size class of an operation of this many bytes, 0 .. OR_TMO_SIZE_CLASSES-1. */
uint32_t or_tmo_size_class(size_t bytes);

/*
 * Decides the hard bound, in microseconds, for the next operation of this
 * size; always in [min_us, max_us], recorded in or_tmo_last().  Also takes the
 * snapshot (consensus, quiet time) that
 * or_tmo_phase_check() uses until the next call for the same size class, so
 * call it once as the operation starts.  Costs O(nranks) when peers'
 * estimates changed since the last call, O(1) otherwise.
 */
uint64_t or_tmo_decide(struct or_tmo *t, size_t bytes);

/*
 * An operation of this size finished after elapsed_us; hit_hard_bound if any
 * of its phases ended on the deadline; loss_fraction of its data was missing
 * (NaN or below 0 reads as 0, above 1 as 1).  Returns what it did to the size
 * class (CALIBRATING ... TIMED_OUT); the incast decision is in or_tmo_last().
 */
enum or_tmo_reason or_tmo_complete(struct or_tmo *t, size_t bytes, uint64_t elapsed_us,
                                   int hit_hard_bound, double loss_fraction);

/*
 * A peer's advertised t_C for this size class, from a packet header; 0 means
 * the peer has none and removes its earlier one.  The latest value wins.
 * O(1).  0, or OR_TMO_EINVAL for a rank outside the communicator (ignored).
 */
int or_tmo_peer_estimate(struct or_tmo *t, uint32_t rank, size_t bytes, uint32_t estimate_us);

/* This rank's t_C for this size class, to put in headers; 0 when it has none. */
uint32_t or_tmo_local_estimate(const struct or_tmo *t, size_t bytes);

/* 1 once this size class's hard bound is calibrated (or the user's), else 0. */
int or_tmo_calibrated(const struct or_tmo *t, size_t bytes);

/*
 * May the phase close at now_us, and why.  ALL_DATA: every sender's LAST
 * packets and every expected byte arrived.  EARLY_TIMEOUT (unless
 * cfg.early_timeout is 0): every expected sender's LAST packets
 * (senders_expected > 0) or every expected byte (bytes_expected > 0) arrived,
 * and nothing new came for ceil(early_fraction * consensus t_C); before a t_C
 * is known (calibration, or every operation so far hit the bound), once every
 * sender's LAST and some bytes are in, for early_fraction * the phase's own
 * transfer time (last arrival - start), at least min_us: what is missing then
 * is lost, not late.  A sender that sent nothing in the phase, while every other
 * sender's LAST is in, is a straggler that has not entered the operation: once
 * t_C is known, early timeout stops waiting for it absent_factor * consensus t_C
 * after the phase began (and after the usual quiet).  In the final phase (the
 * caller learns of earlier phases' ends from later packets), when every sender was
 * heard but a LAST is missing and bytes are short, early timeout comes once
 * the phase is consensus t_C old and nothing arrived for 5 quiet times (at
 * least 100 min_us).  HARD_BOUND: now_us >= start_us +
 * deadline.  When both timeouts hold, the one that came first in time wins
 * (a tie goes to HARD_BOUND), so the verdict does not depend on how late the
 * caller polls.  O(1).
 */
enum or_tmo_reason or_tmo_phase_check(const struct or_tmo *t, size_t bytes,
                                      const struct or_tmo_phase *ph, uint64_t now_us);

/*
 * How long after a phase began early timeout stops waiting for a sender that sent nothing
 * in it, absent_factor * consensus t_C (or_tmo_phase_check()), and that t_C in *t_c_us, as
 * of the last or_tmo_decide() for this size.  0 while such a sender is waited for to the
 * hard bound (no t_C yet, absent_factor 0 or early timeout off).  O(1).
 */
uint64_t or_tmo_absent_us(const struct or_tmo *t, size_t bytes, uint64_t *t_c_us);

/* Senders a Transpose receiver should admit at once, in [1, max(1, nranks-1)]. */
uint32_t or_tmo_incast(const struct or_tmo *t);

const struct or_tmo_decision *or_tmo_last(const struct or_tmo *t);

/*
 * The share of an operation's elements that its hard bounds cut on this rank (0 when
 * none hit); folded into the size class's moving mean, which the loss budget holds down
 * by stretching t_B (docs/design.md, "Deadlines and the timeout controller").  Call it
 * after or_tmo_complete() for the same operation.
 */
void or_tmo_cut_loss(struct or_tmo *t, size_t bytes, double fraction);

#endif /* OR_TIMEOUT_H */
