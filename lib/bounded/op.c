/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One operation on the bounded channel: taken when the core starts it, beside up to
 * max_inflight - 1 others (docs/design.md, "Operations in flight"), and at its end what it
 * teaches the timeout controller and the pacer (docs/design.md, "Deadlines and the timeout
 * controller", "Pacing") before the channel lets it go.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/bounded_int.h"

/* What the features kept for op (its op_end hooks) went with its retirement (end_op). */
static void free_op(struct or_bounded_op *op)
{
	if (!op)
		return;
	or_bd_free_phases(op);
	free(op);
}

/* The operation's row of scratch buffers: each operation in flight has its own. */
void *or_bop_scratch(struct or_coll *c, unsigned slot, size_t bytes)
{
	struct or_bounded *b = c->comm->bounded;
	unsigned row = c->bop->scratch_set;

	if (slot >= OR_BOP_SCRATCH_SLOTS)
		return NULL;
	if (b->scratch_cap[row][slot] < bytes) {
		free(b->scratch[row][slot]);
		b->scratch[row][slot] = malloc(bytes ? bytes : 1);
		b->scratch_cap[row][slot] = b->scratch[row][slot] ? bytes : 0;
	}
	return b->scratch[row][slot];
}

/* The window of operations whose packets are taken: from the oldest running (or the next to
 * start) up to OR_SEQ_WINDOW past the newest running (or the next to start). */
static void update_window(struct or_bounded *b)
{
	b->seq_lo = b->nops ? b->ops[0]->c->seq : b->seq_next;
	b->seq_hi = (b->nops ? b->ops[b->nops - 1]->c->seq : b->seq_next) + OR_SEQ_WINDOW;
}

int or_bounded_op_start(struct or_bounded *b, struct or_coll *c, size_t block_elems,
                        size_t user_bytes, const struct or_bounded_times *t)
{
	struct or_bounded_op *op;
	unsigned row = 0;

	if (b->nops >= OR_INFLIGHT_MAX)
		return -OPTIREDUCE_EBUSY; /* the core starts at most max_inflight: not reached */
	op = calloc(1, sizeof(*op));
	if (!op)
		return -OPTIREDUCE_ENOMEM;
	/* The lowest free row: the rows of large buffers stay few when few run at once. */
	while (b->scratch_busy & (1ull << row))
		row++;
	b->scratch_busy |= 1ull << row;
	op->scratch_set = row;
	op->c = c;
	op->block_elems = block_elems;
	op->user_bytes = user_bytes;
	op->start_us = t->start_us;
	op->encoded_us = t->encoded_us;
	/* Phases are allocated when the algorithm declares them (or_bop_set_phases). */
	c->bop = op;
	c->incast = or_tmo_incast(&b->tmo);
	if (or_bd_param_i(b, OR_P_INCAST))
		c->incast = (uint32_t)or_bd_param_i(b, OR_P_INCAST);
	if (c->size > 1 && c->incast > c->size - 1)
		c->incast = c->size - 1;
	b->ops[b->nops++] = op;
	b->in_op = 1;
	b->seq_next = c->seq + 1;
	update_window(b);
	return 0;
}

/* Blocks of the rotated buffer owned by each rank: contiguous, balanced. */
size_t or_bop_block_elems(const struct or_coll *c)
{
	return c->bop->block_elems;
}

static void finish_stats(struct or_bounded *b, struct or_coll *c)
{
	struct optireduce_status *st = c->status;
	uint64_t exp = 0, got = 0;

	st->packets_sent = c->bop->packets_sent;
	st->packets_received = c->bop->packets_received;
	st->packets_duplicate = c->bop->packets_duplicate;
	st->packets_invalid = b->ch.stats.packets_invalid;
	st->packets_stale = b->ch.stats.packets_stale;
	st->packets_parked = b->ch.stats.packets_parked;
	st->packets_recv_failed = b->ch.stats.packets_recv_failed;
	st->packets_stranger = b->ch.stats.packets_stranger;
	st->bcast_multicast = c->bop->bcast_multicast;
	st->bcast_unicast = c->bop->bcast_unicast;
	pthread_mutex_lock(&b->ofi_lock);
	st->packets_send_failed = c->bop->packets_send_failed + b->tx_failed;
	st->packets_kernel_dropped = or_dg_kernel_drops(b->ep);
	b->sendfail.total += b->tx_failed;
	b->tx_failed = 0;
	pthread_mutex_unlock(&b->ofi_lock);
	for (unsigned p = 0; p < c->bop->nphases; p++) {
		exp += c->bop->ph[p].bytes_expected;
		got += c->bop->ph[p].bytes_received;
	}
	OR_BD_HOOK(b, op_status, c->bop);
	/* The network's loss, for pacing: what repair brought back was lost all the same. */
	got -= c->bop->recovered_bytes;
	b->ch.own_loss = exp ? 1.0 - (double)got / (double)exp : 0;
}

/* Retires the operation: its packets are stale from now on. */
static void end_op(struct or_bounded *b, struct or_coll *c)
{
	struct or_bounded_op *op = c->bop;
	unsigned i = 0;

	c->bop = NULL;
	while (i < b->nops && b->ops[i] != op)
		i++;
	if (i < b->nops) {
		memmove(&b->ops[i], &b->ops[i + 1], (b->nops - i - 1) * sizeof(b->ops[0]));
		b->nops--;
	}
	b->scratch_busy &= ~(1ull << op->scratch_set);
	OR_BD_HOOK(b, op_end, op);
	b->in_op = b->nops > 0;
	pthread_cond_broadcast(&b->op_done);
	update_window(b);
	/* What arrives from now on (parked, stale, invalid) is reported by the next operation. */
	memset(&b->ch.stats, 0, sizeof(b->ch.stats));
	free_op(op);
}

/*
 * 1 when what a phase missed is explained by senders that sent nothing at all, while every
 * other sender's LAST came: a straggler that had not entered the operation, not a slow or
 * lossy network.
 */
static int only_absent_senders(const struct or_phase *ph, uint32_t size)
{
	uint32_t n = or_bd_inbound_slots(ph, size);
	int absent = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct or_inbound *in = &ph->in[i];
		if (!in->npkts || in->last_seen)
			continue;
		if (in->got_pkts)
			return 0;
		absent = 1;
	}
	return absent;
}

/* What the operation's phases say to the controllers. */
struct op_sample {
	double longest_us; /* the controller's sample: the longest phase */
	int hit;           /* a phase was cut at the hard bound by the network */
	int skip; /* only an absent straggler cut phases, or a multicast try lost: teach nothing */
};

/*
 * The controller learns per phase: deadlines bound phases, so its sample is the longest
 * phase.  A phase that hit the bound after every sender's LAST arrived lost packets, it
 * was not slow: it counts its transfer time, as a completion.  A phase cut short only by
 * senders that never started had a compute straggler: that says nothing about the
 * network, and learning from it (a longer deadline, a backoff, a smaller incast) would
 * make everybody wait for it next time.
 */
static void controller_sample(const struct or_bounded_op *op, struct op_sample *s)
{
	int absent = 0, other_cut = 0;

	memset(s, 0, sizeof(*s));
	for (unsigned p = 0; p < op->nphases; p++) {
		const struct or_phase *ph = &op->ph[p];
		/* Timed from the anchor: the skew is the compute's, not the network's. */
		double from = or_bd_phase_anchor_us(ph), d = ph->end_us - from;
		/* A phase that asked for repair is judged by its first pass: see
		 * docs/design.md, "Repair inside the deadline". */
		double first_pass = ph->first_pass_us;
		int only_absent;
		if (!ph->begun || !ph->closed)
			continue;
		/* Closed early or at the bound, the straggler judged absent or not. */
		only_absent =
		    ph->end != OPTIREDUCE_PHASE_ALL_DATA && only_absent_senders(ph, op->c->size);
		absent |= only_absent;
		if (ph->end == OPTIREDUCE_PHASE_HARD_BOUND) {
			if (ph->senders_expected && ph->senders_last >= ph->senders_expected) {
				d = (first_pass > from ? first_pass : ph->last_arrival_us) - from;
			} else {
				s->hit = 1;
				other_cut |= !only_absent;
			}
		} else if (first_pass > from && first_pass - from < d) {
			d = first_pass - from;
		}
		if (d > s->longest_us)
			s->longest_us = d;
	}
	s->skip = absent && !other_cut;
}

/* The share of the elements this rank expected that did not arrive. */
static double lost_fraction(const struct or_bounded_op *op)
{
	const struct optireduce_status *st = op->c->status;
	double expected = (double)st->elements_expected[0] + (double)st->elements_expected[1];
	double received = (double)st->elements_received[0] + (double)st->elements_received[1];

	return expected > 0 ? (expected - received) / expected : 0.0;
}

/* An operation that moved nothing (one rank, no elements) teaches the controller nothing. */
static void teach_controller(struct or_bounded *b, const struct or_bounded_op *op,
                             const struct op_sample *s)
{
	size_t bytes = op->user_bytes;
	size_t encoded_bytes = (op->c->count + 1) * op->c->esize;
	/* The controller's loss signal (incast, backoff) is loss above the usual level, for
	 * the same reason as pacing's (pacing.h): a lossy link's random loss is not
	 * congestion. */
	double excess = b->ch.own_loss - b->pace.loss_avg;
	const struct or_tmo_decision *d;

	if (!op->nphases || !op->ph[0].begun || s->skip)
		return;
	/* Until pacing has learnt the usual level, a lossy link's loss reads as excess.
	 * And in a small operation one packet is a percent: noise, not congestion. */
	if (b->pace.loss_ops < OR_PACE_WARMUP || encoded_bytes < OR_LOSS_MIN_PKTS * b->ch.payload)
		excess = 0;
	if (or_tmo_complete(&b->tmo, bytes, (uint64_t)s->longest_us, s->hit,
	                    excess > 0 ? excess : 0) != OR_TMO_CALIBRATED) {
		or_tmo_cut_loss(&b->tmo, bytes, s->hit ? lost_fraction(op) : 0.0);
		return;
	}
	or_tmo_decide(&b->tmo, bytes);
	d = or_tmo_last(&b->tmo);
	or_log(OR_LOG_DEBUG,
	       "size class %u calibrated: t_B %llu us over t_C0 %u us, deadline %llu us",
	       d->size_class, (unsigned long long)d->t_b_us, d->t_c0_us,
	       (unsigned long long)d->deadline_us);
}

/* Pacing judges the worse of the loss this rank saw and the loss its peers reported
 * (what our sends cost them); the rules are in pacing.c.  COUNT: a fixed pacing_rate. */
static enum or_pace_decision update_pacing(struct or_bounded *b, const struct or_bounded_op *op,
                                           const struct op_sample *s)
{
	struct or_pace_sample ps = {
	    .loss = op->peer_loss > b->ch.own_loss ? op->peer_loss : b->ch.own_loss,
	    .took_mbps = or_bd_op_took_mbps(op),
	    .link_bound = or_bd_op_link_bound(op),
	    .hit = s->hit,
	};

	if (or_bd_param_d(b, OR_P_PACING_RATE) > 0 || s->skip)
		return OR_PACE_DECISION_COUNT;
	return or_pacer_update(&b->pace, &ps);
}

/* Where an operation's time goes besides the phases themselves. */
static void log_timeline(struct or_bounded *b, const struct or_bounded_op *op,
                         const struct or_bounded_times *t)
{
	if (OR_LOG_DEBUG > or_log_level || op->nphases < 2 || !op->ph[1].begun)
		return;
	or_log(OR_LOG_DEBUG,
	       "op %llu timeline: encoded %.0f us, phase 0 %.0f-%.0f us (anchored %.0f us "
	       "later), phase 1 %.0f-%.0f us, decode %.0f-%.0f us (on CPU %.0f us), done %.0f "
	       "us; waited %u times for the progress thread's lock, %.0f us",
	       (unsigned long long)op->c->seq, op->encoded_us - op->start_us,
	       op->ph[0].start_us - op->start_us, op->ph[0].end_us - op->start_us,
	       op->ph[0].skew_us,
	       op->ph[1].start_us - op->start_us, op->ph[1].end_us - op->start_us,
	       t->decode_start_us - op->start_us, t->decoded_us - op->start_us,
	       or_thread_cpu_us() - t->decode_start_cpu_us, or_now_us() - op->start_us,
	       b->lock_waits, b->lock_wait_us);
}

void or_bounded_op_finish(struct or_bounded *b, struct or_coll *c, const struct or_bounded_times *t)
{
	struct or_bounded_op *op = c->bop;
	enum or_pace_decision pace;
	struct op_sample s;

	finish_stats(b, c);
	OR_BD_HOOK(b, op_finish, op);
	log_timeline(b, op, t);
	b->lock_waits = 0;
	b->lock_wait_us = 0;
	controller_sample(op, &s);
	s.skip |= op->controllers_skip;
	teach_controller(b, op, &s);
	pace = update_pacing(b, op, &s);
	or_log(OR_LOG_DEBUG,
	       "op %llu: phases %s/%s, deadline %llu us, loss %.4f, rate %.0f Mbit/s (%s), "
	       "incast %u, refused %llu, not sent %llu, repair asked %llu recovered %llu",
	       (unsigned long long)c->seq, or_bd_phase_end_name(c->status->phase_end[0]),
	       or_bd_phase_end_name(c->status->phase_end[1]),
	       (unsigned long long)c->status->deadline_us[0], b->ch.own_loss, b->pace.rate_mbps,
	       pace == OR_PACE_DECISION_COUNT ? "fixed" : or_pace_decision_name(pace), c->incast,
	       (unsigned long long)op->blocked, (unsigned long long)c->status->packets_send_failed,
	       (unsigned long long)c->status->repair_requested,
	       (unsigned long long)c->status->repair_recovered);
	/*
	 * Peers pace by the loss this rank reports in its next headers.  What a deadline cut
	 * or an absent straggler cost is not the network's: report the usual level, or one
	 * slow rank would make every sender back off after each of its operations.
	 */
	if (s.hit || s.skip)
		b->ch.own_loss = b->pace.loss_avg;
	end_op(b, c);
}

void or_bounded_op_abort(struct or_bounded *b, struct or_coll *c)
{
	if (c->bop)
		end_op(b, c);
}
