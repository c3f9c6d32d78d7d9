/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Adaptive sending rate of bounded mode (docs/design.md, "Pacing").
 *
 * A pure module, like timeout.h: after each operation the caller reports the
 * loss it and its peers saw, what the endpoint took while it refused sends,
 * and whether a deadline cut the operation; the pacer answers with the rate
 * for the next one.  No clock, no I/O, so tests drive it with synthetic runs.
 *
 * Loss is judged against the network's usual level (loss_avg), learnt over
 * the first OR_PACE_WARMUP operations and then tracked: random loss that does
 * not depend on the rate (a lossy link) is usual and must not drive the rate
 * to the floor, while a jump above it (our bursts, or cross traffic, filling
 * a queue) backs off.
 */
#ifndef OR_PACING_H
#define OR_PACING_H

#define OR_PACE_MIN_MBPS 20.0
#define OR_PACE_MAX_MBPS 100000.0
/* Operations whose loss is averaged before the pacer judges a jump: the usual level first. */
#define OR_PACE_WARMUP 4

#define OR_PACE_DECISION_MAP(X)                                                                    \
	X(LEARN, "learn")       /* learning the usual loss (cut only on loss above 5%) */          \
	X(HOLD_CUT, "hold-cut") /* a deadline cut the operation: its loss is not the network's */  \
	X(BACKOFF, "backoff")   /* loss jumped above the usual level: -15% */                      \
	X(HOLD_LINK, "hold-link") /* the endpoint refused sends: the local link paces us */        \
	X(RESTORE, "restore")     /* first clean operation after backoffs: the rate before them */ \
	X(CLIMB, "climb") /* clean below where the last loss began, or cut below what the link     \
	                     took: halfway there */                                                \
	X(SLOW_START, "slow-start") /* clean, no loss, refusal or cut yet: x2 */                   \
	X(PROBE, "probe")         /* clean: +5% */                                                 \
	X(HOLD, "hold")           /* loss a little above the usual level: neither */

enum or_pace_decision {
#define OR_PACE_ENUM(name, str) OR_PACE_##name,
	OR_PACE_DECISION_MAP(OR_PACE_ENUM)
#undef OR_PACE_ENUM
	    OR_PACE_DECISION_COUNT
};

/* Short lowercase name; "unknown" outside the enum.  Never NULL. */
const char *or_pace_decision_name(enum or_pace_decision d);

struct or_pacer {
	double rate_mbps;       /* what senders pace at; read it after each or_pacer_update */
	double loss_avg;        /* the usual loss, a fraction */
	unsigned loss_ops;      /* operations in loss_avg while learning, up to OR_PACE_WARMUP */
	unsigned echoes;        /* warm-up operations skipped as the first ones' loss echoing */
	double took_mbps;       /* EWMA of what the endpoint took while refusing more; 0 = none */
	double rate_before_cut; /* what the next restore returns to; 0 = none yet */
	int cut_last_op;        /* a run of backoffs that no clean operation has ended yet */
	int restored_last_op;   /* the last operation restored rate_before_cut */
	double restored_from;   /* the rate the last restore started from */
	double good_mbps;       /* the rate of the last clean operation; 0 = none yet */
	double last_cut_loss;   /* loss of the last operation if it backed off, else 0 */
	double peak_mbps;       /* the rate the last run of loss began at: climbs aim here */
	int climbing;           /* the last clean operation climbed toward peak_mbps */
	/* Doubles the rate on each clean operation until the first loss above what a lossy
	 * link shows, refusal or cut, as TCP's slow start does (or_pacer_init_slow_start). */
	int slow_start;
};

/* One operation as the pacer sees it. */
struct or_pace_sample {
	double loss;      /* worst of this rank's and its peers' reported loss, [0, 1] */
	double took_mbps; /* bytes sent * 8 / time sending, Mbit/s; 0 = unknown */
	int link_bound;   /* the endpoint refused more than 1% of the sends */
	int hit;          /* a deadline cut a phase while data was still coming */
};

void or_pacer_init(struct or_pacer *p, double initial_mbps);
/* The same, starting in slow start: for a transport that can fill fast links. */
void or_pacer_init_slow_start(struct or_pacer *p, double initial_mbps);
/* Judge one operation and set p->rate_mbps, within [OR_PACE_MIN_MBPS, OR_PACE_MAX_MBPS]. */
enum or_pace_decision or_pacer_update(struct or_pacer *p, const struct or_pace_sample *s);

#endif
