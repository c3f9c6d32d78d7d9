/* SPDX-License-Identifier: BSD-3-Clause */
/* Adaptive sending rate of bounded mode: see pacing.h. */
#include "lib/bounded/ctl/pacing.h"

#include <stddef.h>

static const char *const decision_names[] = {
#define OR_PACE_NAME(name, str) str,
    OR_PACE_DECISION_MAP(OR_PACE_NAME)
#undef OR_PACE_NAME
};

const char *or_pace_decision_name(enum or_pace_decision d)
{
	return (unsigned)d < OR_PACE_DECISION_COUNT ? decision_names[d] : "unknown";
}

void or_pacer_init(struct or_pacer *p, double initial_mbps)
{
	*p = (struct or_pacer){.rate_mbps = initial_mbps};
}

void or_pacer_init_slow_start(struct or_pacer *p, double initial_mbps)
{
	or_pacer_init(p, initial_mbps);
	p->slow_start = 1;
}

/*
 * Probing 5% per operation takes 80 operations from 400 Mbit/s to 20 Gbit/s, the whole of
 * a benchmark, on links the kernel transport fills.  So until the first sign of a limit
 * (loss above a lossy link's, a refused send, a cut) each clean operation doubles the rate;
 * random loss of a few percent is the link's and does not end it.
 */
static enum or_pace_decision slow_start(struct or_pacer *p, enum or_pace_decision d, double used,
                                        const struct or_pace_sample *s)
{
	int clean_learn = d == OR_PACE_LEARN && !s->hit && !s->link_bound && s->loss <= 0.03;

	if (!p->slow_start)
		return d;
	if (d != OR_PACE_PROBE && !clean_learn) {
		p->slow_start = 0;
		return d;
	}
	p->rate_mbps = 2.0 * used;
	return OR_PACE_SLOW_START;
}

/*
 * Cross traffic that comes and goes cuts the rate for as long as it lasts.  Climbing back
 * 5% per operation took twenty operations (six seconds at 4 MiB), slower than every
 * operation the cross traffic had cut, and halfway per operation still spent half the time
 * at two thirds of the link.  So the first clean operation after a run of backoffs returns
 * to the last clean rate before that run (judge() lowers the target when a restore meets
 * loss at once).  Past it, 5% per clean operation: faster probing overflowed receivers on
 * unlimited links.
 */
static enum or_pace_decision clean(struct or_pacer *p)
{
	if (p->cut_last_op) {
		p->cut_last_op = 0;
		if (p->rate_mbps < p->rate_before_cut) {
			p->restored_from = p->rate_mbps;
			p->rate_mbps = p->rate_before_cut;
			return OR_PACE_RESTORE;
		}
	}
	/*
	 * A burst that outlasts the restores halves their target each time, and left the rate
	 * at 140 of 240 Mbit/s when it ended: twenty operations of 5% probes, slow phases
	 * that lengthened the deadlines too.  So first climb halfway back to where the loss
	 * began (binary search, as TCP BIC does); a loss met on the way lowers that mark.
	 */
	if (p->rate_mbps < p->peak_mbps) {
		double half = (p->rate_mbps + p->peak_mbps) / 2.0;
		p->climbing = 1;
		p->rate_mbps = half > p->rate_mbps * 1.05 ? half : p->rate_mbps * 1.05;
		return OR_PACE_CLIMB;
	}
	p->climbing = 0;
	p->rate_mbps *= 1.05;
	return OR_PACE_PROBE;
}

/*
 * No usual level yet: 1% random loss on a lossy link would read as a jump from 0 and cut
 * the rate for nothing.  Learn the level (a plain mean), and only back off from loss no
 * link would call usual.
 */
static enum or_pace_decision learn(struct or_pacer *p, const struct or_pace_sample *s)
{
	if (s->loss > 0.05 && s->link_bound && p->took_mbps > 0) {
		/*
		 * Offered more than the link took, and lost much: that loss is ours (the rate
		 * limiter's queue overflowing), not the network's usual level.  On 50 Mbit/s
		 * links the initial 400 Mbit/s lost 24-42% in each warm-up operation; learnt as
		 * usual, it kept the rate at 209 Mbit/s and 10-40% of every operation lost for
		 * good.  Start again from what it took.
		 */
		p->rate_mbps *= 0.85;
		if (p->took_mbps < p->rate_mbps)
			p->rate_mbps = p->took_mbps;
		return OR_PACE_LEARN;
	}
	/*
	 * A deadline's cut reports what was in flight as lost: not the network's level, and
	 * no reason to go slower.  Cut as usual loss, it took the rate of 50 Mbit/s links from
	 * the 41 Mbit/s the link took to 25, where every larger operation ran into its
	 * deadline and climbed back 5 % per clean one, 30 operations.
	 */
	if (s->hit)
		return OR_PACE_LEARN;
	/*
	 * Heavy loss at a rate no higher than what the link took: the first operations'
	 * overflow still echoing (peers report an operation's loss in their next one's
	 * headers, and operations overlap).  Neither learnt nor cut, for a few operations:
	 * a link that keeps losing that much is learnt after them.
	 */
	if (s->loss > 0.05 && p->took_mbps > 0 && p->rate_mbps <= p->took_mbps &&
	    p->echoes < OR_PACE_WARMUP) {
		p->echoes++;
		return OR_PACE_LEARN;
	}
	p->loss_avg += (s->loss - p->loss_avg) / (double)++p->loss_ops;
	/*
	 * Cut as deep as the loss, between 15 % and a half: a sender whose excess a policer
	 * or its own queue drops silently is never refused, and at 15 % per operation one
	 * rank at 338 Mbit/s on a 50 Mbit/s link took eight operations to come down, each
	 * losing a fifth of every peer's data.
	 */
	if (s->loss > 0.05)
		p->rate_mbps *= s->loss > 0.5 ? 0.5 : s->loss > 0.15 ? 1.0 - s->loss : 0.85;
	return OR_PACE_LEARN;
}

static enum or_pace_decision judge(struct or_pacer *p, const struct or_pace_sample *s)
{
	int at_usual_level = s->loss <= p->loss_avg + 0.002;

	if (p->loss_ops < OR_PACE_WARMUP)
		return learn(p, s);
	if (s->hit) {
		/*
		 * A phase cut at its deadline reports what was still in flight as lost: that is
		 * the deadline's doing, not the network's.  Backing off for it would make the
		 * next phases slower and cut more, a spiral.  Holding a rate that backoffs had
		 * lowered is the same spiral, slower: at 120 of 200 Mbit/s after a burst, every
		 * 4 MiB operation ran into its deadline until the deadline itself backed off.
		 * So a cut after backoffs restores, as a clean operation would.
		 */
		if (p->cut_last_op && p->rate_mbps < p->rate_before_cut)
			return clean(p);
		/*
		 * Nor hold a rate below what the link was seen to take: the cut may be our own
		 * pacing's.  Halfway up to it; a rate past it costs refusals, the cheapest
		 * pacing there is.
		 */
		if (p->took_mbps > 0 && p->rate_mbps < 0.9 * p->took_mbps) {
			p->rate_mbps = (p->rate_mbps + p->took_mbps) / 2.0;
			return OR_PACE_CLIMB;
		}
		return OR_PACE_HOLD_CUT;
	}
	if (s->loss > 2.0 * p->loss_avg + 0.005) {
		/*
		 * Loss right after a restore says the old rate may be too much now: the next
		 * restore aims halfway between it and where the cuts had ended.  A network
		 * that really got slower is found in a few halvings; cross traffic that came
		 * back costs one smaller step.
		 */
		if (p->restored_last_op)
			p->rate_before_cut = (p->rate_before_cut + p->restored_from) / 2.0;
		else if (!p->cut_last_op) {
			p->rate_before_cut = p->good_mbps > 0 ? p->good_mbps : p->rate_mbps;
			/* Where this loss began; a climb that met it marks the lower rate. */
			p->peak_mbps = p->climbing || p->rate_mbps > p->rate_before_cut
			                   ? p->rate_mbps
			                   : p->rate_before_cut;
		}
		p->climbing = 0;
		p->cut_last_op = 1;
		/* From what the link took, if that is lower: a nominal rate far above it would
		 * take many backoffs to bite. */
		if (s->link_bound && p->took_mbps > 0 && p->took_mbps < p->rate_mbps)
			p->rate_mbps = p->took_mbps;
		p->rate_mbps *= 0.85;
		return OR_PACE_BACKOFF;
	}
	if (s->link_bound) {
		/*
		 * The local link (or its rate limiter) paces us, and probing higher means
		 * nothing.  Not down to what it took either: refusals are the cheapest pacing
		 * there is, and a rank descheduled on a busy host needs the headroom to refill
		 * its socket at once.  For the same reason a clean operation after backoffs
		 * restores even when the link refused sends: holding the cut rate left this
		 * rank sending at 160 Mbit/s on a 200 Mbit/s link once the cross traffic had
		 * gone, and everybody waited for it.
		 */
		if (p->cut_last_op && at_usual_level)
			return clean(p);
		return OR_PACE_HOLD_LINK;
	}
	if (at_usual_level)
		return clean(p);
	return OR_PACE_HOLD;
}

enum or_pace_decision or_pacer_update(struct or_pacer *p, const struct or_pace_sample *s)
{
	enum or_pace_decision d, judged;
	double used;
	double loss = s->loss < 0 ? 0 : s->loss > 1 ? 1 : s->loss;
	struct or_pace_sample clamped = *s;

	clamped.loss = loss;
	if (s->link_bound && s->took_mbps > 0)
		p->took_mbps =
		    p->took_mbps > 0 ? 0.75 * p->took_mbps + 0.25 * s->took_mbps : s->took_mbps;
	used = p->rate_mbps;
	judged = judge(p, &clamped);
	d = slow_start(p, judged, used, &clamped);
	p->restored_last_op = d == OR_PACE_RESTORE;
	/* A run of backoffs aims back at the last rate that was clean, not at the probe that
	 * found the loss. */
	if (!s->hit && (d == OR_PACE_PROBE || d == OR_PACE_SLOW_START || d == OR_PACE_CLIMB || d == OR_PACE_RESTORE ||
	                d == OR_PACE_HOLD_LINK || (d == OR_PACE_LEARN && loss <= 0.05)))
		p->good_mbps = used;
	/*
	 * A jump is not the usual level, unless the cut before it did not lower it: loss
	 * that does not fall with the rate is the link's (a lossy link, or a new level of
	 * it).  Loss we cause falls when we cut; folding it in would make it "usual" within a
	 * few operations and stop the backoffs.
	 */
	if (d == OR_PACE_BACKOFF) {
		if (p->last_cut_loss > 0 && loss >= 0.8 * p->last_cut_loss)
			p->loss_avg += 0.125 * (loss - p->loss_avg);
		p->last_cut_loss = loss;
	} else if (judged != OR_PACE_LEARN && !s->hit) {
		/* What a deadline cut reports as lost was in flight, not lost by the network. */
		p->loss_avg += 0.125 * (loss - p->loss_avg);
		p->last_cut_loss = 0;
	}
	if (p->rate_mbps < OR_PACE_MIN_MBPS)
		p->rate_mbps = OR_PACE_MIN_MBPS;
	if (p->rate_mbps > OR_PACE_MAX_MBPS)
		p->rate_mbps = OR_PACE_MAX_MBPS;
	return d;
}
