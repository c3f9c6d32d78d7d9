/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Phases of a bounded operation, as algorithms declare them (coll.h): receive regions and
 * sends per peer, the phase's deadline and send order when it begins, and its closing on
 * all data, early timeout or the hard bound (docs/design.md, "Deadlines and the timeout
 * controller").
 */
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/bounded_int.h"

static size_t npkts_of(const struct or_bounded *b, size_t bytes)
{
	return (bytes + b->ch.payload - 1) / b->ch.payload;
}

void or_bd_free_phases(struct or_bounded_op *op)
{
	for (unsigned p = 0; op->ph && p < op->nphases; p++) {
		struct or_phase *ph = &op->ph[p];
		for (uint32_t i = 0; ph->in && i < ph->cap; i++)
			free(ph->in[i].seen);
		free(ph->in);
		free(ph->out);
		free(ph->order);
	}
	free(op->ph);
	op->ph = NULL;
	op->nphases = 0;
}

int or_bop_set_phases(struct or_coll *c, unsigned nphases, uint32_t peers, unsigned split)
{
	struct or_bounded_op *op = c->bop;
	uint32_t cap = peers && peers < c->size ? peers : c->size;

	if (!op || op->ph || nphases == 0 || nphases > or_bd_max_steps(c->size) || split > nphases)
		return -OPTIREDUCE_EINVAL;
	op->ph = calloc(nphases, sizeof(*op->ph));
	if (!op->ph)
		return -OPTIREDUCE_ENOMEM;
	op->nphases = nphases;
	op->status_split = split;
	for (unsigned p = 0; p < nphases; p++) {
		struct or_phase *ph = &op->ph[p];
		ph->cap = cap;
		ph->in = calloc(cap, sizeof(*ph->in));
		ph->out = calloc(cap, sizeof(*ph->out));
		ph->order = calloc(cap, sizeof(*ph->order));
		if (!ph->in || !ph->out || !ph->order) {
			or_bd_free_phases(op);
			return -OPTIREDUCE_ENOMEM;
		}
		for (uint32_t i = 0; cap == c->size && i < cap; i++)
			ph->in[i].peer = ph->out[i].peer = i;
	}
	return 0;
}

/* The phase, allocating the default two (every peer) for an algorithm that declared none. */
static struct or_phase *phase_of(struct or_coll *c, unsigned phase)
{
	if (!c->bop->ph && or_bop_set_phases(c, OR_DEFAULT_PHASES, 0, 1))
		return NULL;
	return phase < c->bop->nphases ? &c->bop->ph[phase] : NULL;
}

int or_bop_recv_region(struct or_coll *c, unsigned phase, uint32_t sender, void *region,
                       size_t bytes)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_phase *ph = phase_of(c, phase);
	struct or_inbound *in;

	if (!ph || sender >= c->size || sender == c->rank || bytes > UINT32_MAX)
		return -OPTIREDUCE_EINVAL;
	in = or_bd_inbound_of(ph, c->size, sender);
	if (!in) {
		if (ph->nin >= ph->cap)
			return -OPTIREDUCE_EINVAL; /* more peers than declared */
		in = &ph->in[ph->nin++];
		in->peer = sender;
	} else if (in->region && in->bytes) {
		ph->senders_expected--; /* declared again: the new region replaces it */
		ph->bytes_expected -= in->bytes;
	}
	in->region = region;
	in->bytes = bytes;
	in->npkts = npkts_of(b, bytes);
	free(in->seen);
	in->seen = calloc(in->npkts ? in->npkts : 1, 1);
	if (!in->seen)
		return -OPTIREDUCE_ENOMEM;
	/* Zeroed where nothing arrived when the phase closes (zero_unseen), not here:
	 * zeroing every region up front cost 24 MiB of memset per 16 MiB operation. */
	if (bytes) {
		ph->senders_expected++;
		ph->bytes_expected += bytes;
	}
	return 0;
}

int or_bop_send_region(struct or_coll *c, unsigned phase, uint32_t peer, const void *buf,
                       size_t bytes, uint16_t contrib)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_phase *ph = phase_of(c, phase);
	struct or_outbound *o;

	if (!ph || peer >= c->size || peer == c->rank || bytes > UINT32_MAX)
		return -OPTIREDUCE_EINVAL;
	o = or_bd_outbound_of(ph, c->size, peer);
	if (!o) {
		if (ph->nout >= ph->cap)
			return -OPTIREDUCE_EINVAL;
		o = &ph->out[ph->nout++];
		o->peer = peer;
	}
	o->buf = buf;
	o->bytes = bytes;
	o->npkts = npkts_of(b, bytes);
	o->next = 0;
	o->contrib = contrib;
	o->stride = or_bd_stripe_stride(o->npkts, npkts_of(b, c->bop->block_elems * c->esize));
	return 0;
}

/* Called by the algorithm once its regions are declared: parked packets now have a home. */
void or_bop_regions_ready(struct or_coll *c)
{
	struct or_bounded *b = c->comm->bounded;

	OR_BD_HOOK(b, op_start, c->bop);
	or_bd_replay_parked(b, c->bop);
}

/*
 * The deadline of a phase, from its start.  Phase p > 0 ends by the first phase's start
 * + (p+1) * deadline rather than deadline after it begins: a sender whose previous phase
 * ran into the hard bound sends this one late by up to one deadline, and a receiver that
 * began it early would cut it off just as it comes (and so on around the ring's steps).
 * The operation is still bounded by nphases deadlines; a phase that ended early leaves its
 * slack to the next, and time lost between phases (a rank descheduled while it reduced,
 * seen at 40-85 ms under cross traffic on 2 CPUs) comes out of the budget instead of
 * adding to it.
 */
static uint64_t phase_deadline(const struct or_coll *c, unsigned phase, uint64_t deadline)
{
	const struct or_phase *ph = &c->bop->ph[phase];
	double end;

	if (phase == 0)
		return deadline;
	end = or_bd_phase_anchor_us(&c->bop->ph[0]) + (double)(phase + 1) * (double)deadline;
	return end > ph->start_us + 1 ? (uint64_t)(end - ph->start_us) : 1;
}

/* The order the phase's peers are sent to, grouped by incast. */
static void send_order(const struct or_coll *c, struct or_phase *ph)
{
	ph->incast = c->incast ? c->incast : 1;
	ph->norder = 0;
	if (ph->cap >= c->size) {
		/* Rotation: peer r+k in round k, so in a round every receiver has one sender. */
		for (uint32_t k = 1; k < c->size; k++)
			ph->order[ph->norder++] = (c->rank + k) % c->size;
	} else {
		for (uint32_t i = 0; i < ph->nout; i++)
			ph->order[ph->norder++] = i;
	}
	ph->group = 0;
	ph->turn = 0;
}

/* Whether a phase of another running operation is sending. */
static int sending_elsewhere(struct or_bounded *b, struct or_bounded_op *op)
{
	unsigned step;

	for (unsigned i = 0; i < b->nops; i++)
		if (b->ops[i] != op && or_bd_sending_phase(b->ops[i], &step))
			return 1;
	return 0;
}

int or_bop_phase_begin(struct or_coll *c, unsigned phase)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_phase *ph = phase_of(c, phase);
	uint64_t deadline;
	unsigned slot;
	int ret;

	if (!ph || ph->begun)
		return -OPTIREDUCE_EINVAL;
	slot = phase < c->bop->status_split ? 0 : 1;
	ph->begun = 1;
	ph->start_us = or_now_us();
	/* Always asked: it also refreshes the quiet time of early timeout.  A fixed timeout set
	 * after creation (optireduce_comm_set_param) then wins over its deadline. */
	deadline = or_tmo_decide(&b->tmo, c->count * c->esize);
	if (or_bd_param_i(b, OR_P_TIMEOUT_US) > 0)
		deadline = (uint64_t)or_bd_param_i(b, OR_P_TIMEOUT_US);
	ph->deadline_us = phase_deadline(c, phase, deadline);
	OR_BD_HOOK(b, phase_begin, c->bop, phase);
	if (deadline > c->status->deadline_us[slot])
		c->status->deadline_us[slot] = deadline;
	send_order(c, ph);
	/* Time in which nothing was sending earns no tokens: a phase starts with what the
	 * bucket held, not with a burst.  While another operation's phase sends, the one
	 * bucket of the channel keeps its clock. */
	if (!sending_elsewhere(b, c->bop))
		b->last_refill_us = or_now_us();
	ret = or_bd_pump(b, c->bop, phase);
	return ret < 0 ? ret : 0;
}

const char *or_bd_phase_end_name(enum optireduce_phase_end e)
{
	static const char *names[] = {"none", "all-data", "early-timeout", "hard-bound"};
	return (unsigned)e < 4 ? names[e] : "?";
}

/* What did not arrive reads as zero, as the estimator assumes; a closed phase takes no
 * more packets (rx.c), so this is final. */
static void zero_unseen(const struct or_bounded *b, struct or_inbound *in)
{
	if (!in->region || in->got_pkts == in->npkts)
		return;
	for (size_t p = 0; p < in->npkts; p++) {
		size_t off = p * b->ch.payload;
		if (!in->seen[p])
			memset(in->region + off, 0,
			       in->bytes - off < b->ch.payload ? in->bytes - off : b->ch.payload);
	}
}

/*
 * Status has two phase slots.  Each phase adds its elements to its slot, and a slot's end
 * is the worst of its phases' (hard bound over early timeout over all data), so a ring's
 * 2(N-1) steps report as reduce-scatter in slot 0 and allgather in slot 1.
 */
static void close_phase(struct or_bounded_op *op, unsigned phase, enum optireduce_phase_end why)
{
	struct or_phase *ph = &op->ph[phase];
	unsigned slot = phase < op->status_split ? 0 : 1;
	struct optireduce_status *st = op->c->status;

	for (uint32_t i = 0, n = or_bd_inbound_slots(ph, op->c->size); i < n; i++)
		zero_unseen(op->c->comm->bounded, &ph->in[i]);
	ph->closed = 1;
	OR_BD_HOOK(op->c->comm->bounded, phase_closed, op, phase);
	ph->end = why;
	ph->end_us = or_now_us();
	or_log(OR_LOG_TRACE,
	       "op %llu phase %u closed %s after %.0f us: %llu/%llu bytes, last %u/%u "
	       "(newest LAST at %.0f us, newest packet at %.0f us)",
	       (unsigned long long)op->c->seq, phase, or_bd_phase_end_name(why),
	       or_now_us() - ph->start_us, (unsigned long long)ph->bytes_received,
	       (unsigned long long)ph->bytes_expected, ph->senders_last, ph->senders_expected,
	       ph->last_flag_us > 0 ? ph->last_flag_us - ph->start_us : -1.0,
	       ph->last_arrival_us > 0 ? ph->last_arrival_us - ph->start_us : -1.0);
	if ((int)why > st->phase_end[slot])
		st->phase_end[slot] = why;
	st->elements_expected[slot] += ph->bytes_expected / op->c->esize;
	st->elements_received[slot] += ph->bytes_received / op->c->esize;
	if (why == OPTIREDUCE_PHASE_HARD_BOUND)
		op->c->status->flags |= OPTIREDUCE_STATUS_DEADLINE_FIRED;
}

/*
 * Senders of this phase that nothing has come from yet (the controller decides when one of
 * them counts as absent); *absent gets those of them that also sent nothing in the phase
 * before, which closed without them (hard bound, or early timeout that judged them absent):
 * a straggler that has not entered the operation.  Early timeout does not wait for their
 * LAST, or every straggler would cost a second deadline.  If the straggler comes in time,
 * its packets are taken like any others.  A sender the phase waits for (catch_up) is not
 * counted: it is never judged absent, so the phase waits for its LAST or the deadline.
 */
static uint32_t silent_senders(struct or_coll *c, unsigned phase, uint32_t *absent)
{
	struct or_phase *ph = &c->bop->ph[phase];
	struct or_phase *prev = phase > 0 && c->bop->ph[phase - 1].closed ? ph - 1 : NULL;
	uint32_t n = or_bd_inbound_slots(ph, c->size), silent = 0;

	*absent = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct or_inbound *in = &ph->in[i], *before;
		if (!in->npkts || in->got_pkts || in->last_seen || in->waited)
			continue;
		silent++;
		before = prev ? or_bd_inbound_of(prev, c->size, in->peer) : NULL;
		if (before && before->npkts && !before->got_pkts)
			(*absent)++;
	}
	return silent;
}

/* What the timeout controller judges a phase by, its times from the phase's start. */
static void phase_sample(struct or_coll *c, unsigned phase, struct or_tmo_phase *tp)
{
	struct or_phase *ph = &c->bop->ph[phase];
	uint32_t absent, silent = silent_senders(c, phase, &absent);

	tp->start_us = 0;
	tp->deadline_us = ph->deadline_us;
	tp->senders_expected = ph->senders_expected - absent;
	tp->senders_last = ph->senders_last;
	tp->senders_silent = silent - absent;
	tp->final_phase = phase + 1 == c->bop->nphases;
	tp->bytes_expected = ph->bytes_expected;
	tp->bytes_received = ph->bytes_received;
	/* Packets that came before the phase began (a sender ahead of us) count as arriving at
	 * its start: a negative time would read as far in the future and block early timeout. */
	tp->last_arrival_us = !ph->bytes_received ? 0
	                      : ph->last_arrival_us <= ph->start_us
	                          ? 1
	                          : (uint64_t)(ph->last_arrival_us - ph->start_us) + 1;
}

/*
 * deadline_anchor: phase 0's deadline counts from the latest start among its senders, as
 * their packets say (rx.c), by up to one deadline past this rank's own.  DDP's ranks enter
 * a bucket's operation when their backward passes reach it, hundreds of milliseconds apart
 * on shared CPUs; counted from each rank's own start, the deadline either cuts the late
 * ranks' data or, calibrated over that skew, is long enough that no burst is ever cut.
 * Senders not heard from yet do not count: one that begins past the absent horizon is a
 * straggler (early timeout), not skew.
 */
static void anchor_deadline(struct or_coll *c, struct or_phase *ph)
{
	uint64_t base = (uint64_t)or_bd_phase_base_deadline_us(ph);
	double latest = ph->start_us;

	for (uint32_t i = 0, n = or_bd_inbound_slots(ph, c->size); i < n; i++)
		if (ph->in[i].npkts && ph->in[i].began_us > latest)
			latest = ph->in[i].began_us;
	ph->skew_us = latest - ph->start_us;
	if (ph->skew_us > (double)base)
		ph->skew_us = (double)base;
	ph->skew_us = (double)(uint64_t)ph->skew_us;
	ph->deadline_us = base + (uint64_t)ph->skew_us;
}

/* Whether a feature holds the phase open against early timeout (repair's round trips). */
static int held(struct or_bounded *b, struct or_bounded_op *op, unsigned phase)
{
	for (const struct or_bd_feature *const *f = b->features; *f; f++)
		if ((*f)->phase_hold && (*f)->phase_hold(&b->ch, op, phase))
			return 1;
	return 0;
}

/* Whether an open, begun phase closes now, and why. */
static enum or_tmo_reason phase_verdict(struct or_coll *c, unsigned phase)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_phase *ph = &c->bop->ph[phase];
	uint32_t unsent = or_bd_unsent_peers(ph);
	struct or_tmo_phase tp;
	enum or_tmo_reason why;

	if (phase == 0 && or_bd_param_i(b, OR_P_DEADLINE_ANCHOR))
		anchor_deadline(c, ph);
	phase_sample(c, phase, &tp);
	why = or_tmo_phase_check(&b->tmo, c->count * c->esize, &tp,
	                         (uint64_t)(or_now_us() - ph->start_us) + 1);
	/* Missing packets asked for, or to be asked for, while a round trip fits. */
	if (why == OR_TMO_EARLY_TIMEOUT && held(b, c->bop, phase))
		why = OR_TMO_NOT_YET;
	/* Every byte is in: that is all the data, whether or not a LAST flag made it. */
	if (ph->bytes_expected && ph->bytes_received >= ph->bytes_expected)
		why = OR_TMO_ALL_DATA;
	/*
	 * Our own sends must leave before a phase closes, or peers lose them for nothing;
	 * the deadline still wins, also once every byte is in: a rank whose own sends crawl
	 * (its rate cut by a burst of cross traffic) took 1.25 s over a 260 ms deadline
	 * while its peers had long cut it off.
	 */
	if (unsent) {
		if (or_now_us() - ph->start_us < (double)ph->deadline_us)
			return OR_TMO_NOT_YET;
		why = OR_TMO_HARD_BOUND;
	}
	return why;
}

/* Closes the phase when it may close; 1 once it is closed (its data is final), 0 while open. */
int or_bop_phase_try_close(struct or_coll *c, unsigned phase)
{
	struct or_phase *ph = phase < c->bop->nphases ? &c->bop->ph[phase] : NULL;

	if (!ph)
		return -OPTIREDUCE_EINVAL;
	if (ph->closed)
		return 1;
	if (!ph->begun)
		return 0;
	switch (phase_verdict(c, phase)) {
	case OR_TMO_ALL_DATA:
		close_phase(c->bop, phase, OPTIREDUCE_PHASE_ALL_DATA);
		return 1;
	case OR_TMO_EARLY_TIMEOUT:
		close_phase(c->bop, phase, OPTIREDUCE_PHASE_EARLY_TIMEOUT);
		return 1;
	case OR_TMO_HARD_BOUND:
		close_phase(c->bop, phase, OPTIREDUCE_PHASE_HARD_BOUND);
		return 1;
	default:
		return 0;
	}
}

