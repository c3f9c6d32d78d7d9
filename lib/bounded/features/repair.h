/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to repair.c (asking) and resend.c (answering): the state of repair inside the
 * deadline (docs/design.md, "Repair inside the deadline").
 */
#ifndef OR_REPAIR_H
#define OR_REPAIR_H

#include "lib/bounded/chan.h"
#include "lib/bounded/wire.h"

#define OR_REPAIR_ROUNDS 4 /* requests to one sender in one phase, on its LAST or quiet */
/*
 * Requests to one sender after its LAST, gaps included: what a lost resend shows lost is
 * asked again, but under heavy loss every answer shows more, and the chain would run to
 * the deadline.
 */
#define OR_REPAIR_ROUNDS_AFTER_LAST 8
/* The round trip until one is measured: a few hundred us on the emulated cloud. */
#define OR_REPAIR_RTT0_US 1000.0
#define OR_REPAIR_KEPT    2  /* final phases kept past their operation */
#define OR_REPAIR_RANGES  64 /* ranges per request: 384 bytes */
/*
 * A request unanswered for two round trips, and at least this long, is asked again: a
 * sender that shares its core with other ranks answers only when it next runs.
 */
#define OR_REPAIR_WAIT_MIN_US 2000.0
/* Gaps in a sender's order are asked for at most this often per sender and phase. */
#define OR_REPAIR_GAP_US      1000.0
#define OR_REPAIR_RTT_SAMPLES 8

/*
 * What a receiver knows of one missing packet (or_rep_in.state).  ASKED_NOW is asked by the
 * sender's latest request: only its resends are round-trip samples of that request.
 */
enum { OR_PKT_UNKNOWN, OR_PKT_GAP, OR_PKT_ASKED, OR_PKT_ASKED_NOW };

struct or_rep_in {
	double req_us;      /* when the last request went */
	double gap_req_us;  /* when the last request for gaps went */
	double quiet_us;    /* when a quiet phase last had nothing known sent to ask for */
	uint8_t *state;     /* [npkts]: OR_PKT_*, once a packet came */
	size_t stride, inv; /* the sender's order and its inverse mod npkts */
	size_t passed;      /* send positions below this are behind a packet that came */
	size_t ngap;        /* packets in state OR_PKT_GAP */
	uint32_t rounds;    /* requests sent on quiet, or after the LAST (gaps too) */
	uint8_t after_last; /* one went after the sender's LAST */
	uint8_t rtt_open;   /* the first resend since req_us is a round-trip sample */
	uint8_t answered;   /* a resend the latest request named came */
	uint8_t refused;    /* the sender cannot resend */
};

/* Whether gaps in in's packets may still be asked for. */
static inline int or_rep_gaps_askable(const struct or_inbound *in, const struct or_rep_in *ri)
{
	return !in->last_seen || (ri->after_last && ri->rounds < OR_REPAIR_ROUNDS_AFTER_LAST);
}

/*
 * Whether in's sender is known to have sent packet p: it is behind a packet that came, or
 * the sender's LAST is in.  A sender resends only what it has sent, so a request for more
 * is lost on it, and would mark the packet asked before it could be missed.
 */
static inline int or_rep_known_sent(const struct or_inbound *in, const struct or_rep_in *ri,
                                    size_t p)
{
	return in->last_seen || !ri->state ||
	       (size_t)((uint64_t)p * ri->inv % in->npkts) < ri->passed;
}

struct or_rep_out {
	uint8_t *want; /* [npkts]: asked for, not resent yet */
	size_t pending;
	size_t cursor;
};

struct or_repair {
	unsigned nphases;
	uint32_t cap;
	struct or_rep_in *in;   /* [nphases * cap], slots as in or_phase.in */
	struct or_rep_out *out; /* [nphases * cap], slots as in or_phase.out */
	double *first_pass_us;  /* [nphases]: newest packet that was not a resend */
	uint8_t *asked;         /* [nphases]: a request went in this phase */
	uint64_t requested, resent, recovered, recovered_bytes;
};

/* A final phase kept past its close: its send regions copied, so peers still get resends
 * while this rank decodes and moves on. */
struct or_kept {
	int valid;
	uint64_t seq;
	uint16_t step;
	uint32_t n; /* slots in out */
	struct or_outbound *out;
	struct or_rep_out *rout;
	uint8_t *data;
	size_t data_cap;
};

struct or_repair_chan {
	double rtt_us; /* shortest of the last samples: request sent to its first resend */
	double rtt_sample[OR_REPAIR_RTT_SAMPLES];
	unsigned nsamples;
	struct or_kept kept[OR_REPAIR_KEPT];
	unsigned next_kept;
	uint64_t resent_kept;        /* resent from kept phases: the next status reports them */
	struct or_bounded_op nobody; /* refusals counted against no operation */
};

/* repair_state.c */
int or_bd_repair_on(const struct or_chan *ch);
struct or_repair_chan *or_rep_chan(struct or_chan *ch);
struct or_repair *or_rep_of(struct or_bounded_op *op);
void or_rep_free_wants(struct or_rep_out *ro, size_t n);
void or_rep_op_end(struct or_chan *ch, struct or_bounded_op *op);
void or_rep_close(struct or_chan *ch);
/* x^-1 mod n, for x coprime with n: maps a packet to its position in its sender's order. */
size_t or_rep_inverse(size_t x, size_t n);
/* repair_arrive.c */
void or_rep_arrived(struct or_chan *ch, struct or_bounded_op *op, const struct or_wire_hdr *h,
                    const struct or_inbound *in);
/* resend.c */
int or_rep_live(const struct or_bounded_op *op, unsigned step);
int or_rep_resend(struct or_chan *ch, struct or_bounded_op *op, uint64_t seq, uint16_t step,
                  const struct or_outbound *o, struct or_rep_out *ro, uint64_t *count);
/* A request, a resend or a refusal (OR_WIRE_KIND_REPAIR): 1 when repair is off (data). */
int or_rep_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
              uint32_t src, int check_source);
void or_rep_phase_closed(struct or_chan *ch, struct or_bounded_op *op, unsigned phase);

#endif /* OR_REPAIR_H */
