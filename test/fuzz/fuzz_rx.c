/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the bounded channel's receive path (lib/bounded/rx.c), from a reaped
 * datagram through decode, validation, parking and replay to its place in an operation's
 * regions, then the phases' closing (phase.c) and the estimate that reads the regions
 * (estimate.c).  The channel is the real one with a fake endpoint (rx_stubs.c): the
 * operation is started and its regions declared through the same calls the core and the
 * algorithms make, and every region is its own allocation of exactly its size, so
 * AddressSanitizer catches a byte written or read outside it.
 *
 * Input: two bytes of set-up, then datagrams, each a little-endian 16-bit length and that
 * many bytes (cut to the endpoint's message size, as the endpoint would).
 *   byte 0: bits 0-1 ranks - 2; bits 2-3 this rank (mod ranks); bit 4 ring (2(N-1) steps,
 *           one peer each) instead of transpose; bits 5-6 when the datagrams come: 0 after
 *           the regions are declared, 1 after the operation started but before its
 *           regions, 2 before the operation started; bit 7 payload 1424 instead of 64.
 *   byte 1: blocks of 16 floats in the operation, 1 + (byte & 15); bit 4, with transpose
 *           and the regions declared before the datagrams: parameter consistent, the
 *           final phase closed and this rank's bitmap sent before they come, so that they
 *           meet the agreement (lib/bounded/features/consistent.c, consistent_fetch.c), which then
 *           applies the union to every region.
 * Datagrams address communicator FUZZ_COMM_ID, operation FUZZ_SEQ (test/fuzz/make_corpus.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/bounded_int.h"
#include "lib/bounded/wire.h"
#include "fuzz_input.h"
#include "fuzz_rx.h"

#define BLOCK_ELEMS 16
#define MAX_REGIONS (2 * FUZZ_MAX_RANKS * FUZZ_MAX_RANKS)

struct setup {
	uint32_t size, rank;
	int ring;
	int when; /* 0 declared, 1 started, 2 nothing yet */
	size_t payload;
	size_t count;
	int consistent;
};

struct harness {
	struct optireduce_comm comm;
	struct or_bounded *b;
	struct or_coll c;
	struct optireduce_status st;
	void *regions[MAX_REGIONS];
	size_t nregions;
	float *dst;
};

static void *region_alloc(struct harness *hs, size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);

	if (!p || hs->nregions >= MAX_REGIONS)
		abort();
	memset(p, 0xa5, bytes);
	hs->regions[hs->nregions++] = p;
	return p;
}

static size_t shard_bytes(const struct setup *s, uint32_t j)
{
	size_t blocks = s->count / BLOCK_ELEMS;
	return or_chunk_len(blocks, s->size, j) * BLOCK_ELEMS * sizeof(float);
}

/* The regions Transpose or the ring declares (algorithms/transpose.c, ring.c). */
static void declare(struct harness *hs, const struct setup *s)
{
	struct or_coll *c = &hs->c;
	uint32_t n = s->size, left = (s->rank + n - 1) % n;

	if (s->ring) {
		if (or_bop_set_phases(c, 2 * (n - 1), 1, n - 1))
			abort();
		for (unsigned p = 0; p < 2 * (n - 1); p++) {
			size_t bytes = shard_bytes(s, (s->rank + 2 * n - p - 1) % n);
			if (or_bop_recv_region(c, p, left, region_alloc(hs, bytes), bytes))
				abort();
		}
	} else {
		for (uint32_t j = 0; j < n; j++) {
			if (j == s->rank)
				continue;
			if (or_bop_recv_region(c, 0, j, region_alloc(hs, shard_bytes(s, s->rank)),
			                       shard_bytes(s, s->rank)) ||
			    or_bop_recv_region(c, 1, j, region_alloc(hs, shard_bytes(s, j)),
			                       shard_bytes(s, j)))
				abort();
		}
	}
	or_bop_regions_ready(c);
	for (unsigned p = 0; p < c->bop->nphases; p++)
		if (or_bop_phase_begin(c, p))
			abort();
}

static void start(struct harness *hs, const struct setup *s, uint64_t seq)
{
	struct or_bounded_times t = {0};

	memset(&hs->c, 0, sizeof(hs->c));
	memset(&hs->st, 0, sizeof(hs->st));
	hs->c.rank = s->rank;
	hs->c.size = s->size;
	hs->c.count = s->count;
	hs->c.dtype = OPTIREDUCE_FLOAT32;
	hs->c.esize = sizeof(float);
	hs->c.seq = seq;
	hs->c.bounded = 1;
	hs->c.status = &hs->st;
	hs->c.comm = &hs->comm;
	if (or_bounded_op_start(hs->b, &hs->c, BLOCK_ELEMS, s->count * sizeof(float), &t))
		abort();
}

/* What arrived never exceeds what was declared: the counters the deadline trusts. */
static void check_phases(const struct harness *hs)
{
	const struct or_bounded_op *op = hs->c.bop;

	for (unsigned p = 0; p < op->nphases; p++) {
		const struct or_phase *ph = &op->ph[p];
		if (ph->bytes_received > ph->bytes_expected ||
		    ph->senders_last > ph->senders_expected)
			abort();
		for (uint32_t i = 0; i < or_bd_inbound_slots(ph, hs->c.size); i++)
			if (ph->in[i].got_pkts > ph->in[i].npkts)
				abort();
	}
}

/* The deadline passes, every phase closes, and the estimate reads every region. */
static void finish(struct harness *hs)
{
	struct or_coll *c = &hs->c;
	struct or_bounded_op *op = c->bop;

	check_phases(hs);
#ifdef FUZZ_VERBOSE
	fprintf(stderr,
	        "op %llu: received %llu invalid %llu stale %llu duplicate %llu parked %llu\n",
	        (unsigned long long)c->seq, (unsigned long long)hs->b->ch.stats.packets_received,
	        (unsigned long long)hs->b->ch.stats.packets_invalid,
	        (unsigned long long)hs->b->ch.stats.packets_stale,
	        (unsigned long long)hs->b->ch.stats.packets_duplicate,
	        (unsigned long long)hs->b->ch.stats.packets_parked);
#endif
	fuzz_clock_advance(1e9);
	for (unsigned p = 0; p < op->nphases; p++)
		if (or_bop_phase_try_close(c, p) != 1)
			abort();
	for (unsigned p = 0; p < op->nphases; p++) {
		const struct or_phase *ph = &op->ph[p];
		for (uint32_t i = 0; i < or_bd_inbound_slots(ph, c->size); i++) {
			const struct or_inbound *in = &ph->in[i];
			size_t elems = in->bytes / sizeof(float);
			if (!in->region)
				continue;
			if (p + 1 < op->nphases)
				or_bop_accumulate(c, p, in->peer, hs->dst, elems, NULL);
			else
				or_bop_finalize_region(c, p, in->peer, hs->dst, elems);
		}
	}
	/* Consistent: the agreement as far as it got, then its union on every region. */
	if (or_bop_consistent(c) && op->cons) {
		const struct or_phase *ph = &op->ph[op->nphases - 1];
		(void)or_bop_consist_ready(c); /* past peer_timeout_ms by now: may time out */
		for (uint32_t i = 0; i < or_bd_inbound_slots(ph, c->size); i++)
			if (ph->in[i].region &&
			    or_bop_consist_apply(c, ph->in[i].peer, ph->in[i].region,
			                         ph->in[i].bytes / sizeof(float)) < 0)
				abort();
	}
	or_bounded_op_abort(hs->b, c);
}

/* Consistent: the final phase closes (at its deadline) and this rank's bitmap goes out. */
static void consistent_close(struct harness *hs)
{
	struct or_coll *c = &hs->c;

	fuzz_clock_advance(1e9);
	for (unsigned p = 0; p < c->bop->nphases; p++)
		if (or_bop_phase_try_close(c, p) != 1)
			abort();
	if (or_bop_consist_close(c, c->bop->nphases - 1))
		abort();
}

/* One reaped datagram, in a buffer of exactly its size, through the channel's drain. */
static void receive(struct harness *hs, const uint8_t *pkt, size_t len)
{
	struct or_bounded *b = hs->b;
	uint8_t *copy = fuzz_copy(pkt, len);

	b->rx[0].buf = NULL; /* the drain reads where the completion says, as on the kernel path */
	b->rx[0].x.data = copy;
	b->rx[0].x.len = len;
	b->rx[0].x.error = 0;
	b->ready[b->ready_head] = &b->rx[0];
	b->ready_count = 1;
	or_bd_drain_ready(b);
	free(copy);
}

static void feed(struct harness *hs, const uint8_t *data, size_t size)
{
	while (size >= 2) {
		size_t len = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		if (len > hs->b->max_msg)
			len = hs->b->max_msg;
		receive(hs, data, len);
		/* Consistent: the operation's progress between datagrams, which plans the fetch
		 * once every bitmap is in and asks for what is missing. */
		if (or_bop_consistent(&hs->c) && hs->c.bop && hs->c.bop->cons)
			(void)or_bop_consist_ready(&hs->c);
		data += len;
		size -= len;
	}
}

static void parse(const uint8_t *data, struct setup *s)
{
	s->size = 2 + (data[0] & 3);
	s->rank = ((uint32_t)data[0] >> 2 & 3) % s->size;
	s->ring = data[0] >> 4 & 1;
	s->when = data[0] >> 5 & 3;
	if (s->when > 2)
		s->when = 2;
	s->payload = data[0] & 0x80 ? 1424 : 64;
	s->count = (1 + (size_t)(data[1] & 15)) * BLOCK_ELEMS;
	s->consistent = (data[1] >> 4 & 1) && !s->ring && s->when == 0;
}

/*
 * The channel is allocated once (it is 280 KiB, mostly the receive ring this target does
 * not use) and every field the receive path reads is set again for each input, so that
 * an input's outcome does not depend on the ones before it.
 */
static void harness_init(struct harness *hs, const struct setup *s)
{
	static struct or_bounded *b;
	static struct or_params params;
	struct or_tmo_config cfg;

	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b || !(b->park = calloc(OR_PARK_MAX, sizeof(*b->park))))
			abort();
		pthread_mutex_init(&b->lock, NULL);
		pthread_mutex_init(&b->ofi_lock, NULL);
		pthread_cond_init(&b->op_done, NULL);
		or_params_init(&params, NULL);
	}
	memset(hs, 0, sizeof(*hs));
	hs->comm.magic = OR_MAGIC_COMM;
	hs->comm.rank = s->rank;
	hs->comm.size = s->size;
	hs->comm.id = FUZZ_COMM_ID;
	hs->comm.mode = OPTIREDUCE_MODE_BOUNDED;
	hs->comm.params = params;
	hs->comm.bounded = hs->b = b;
	b->ch.comm = &hs->comm;
	b->ep = &fuzz_endpoint;
	b->ch.payload = s->payload;
	b->max_msg = s->payload + OR_WIRE_HDR_SIZE;
	b->nrx = 1;
	b->ready_head = b->ready_count = 0;
	b->nparked = 0;
	b->nops = 0;
	b->seq_lo = FUZZ_SEQ;
	b->seq_hi = FUZZ_SEQ + OR_SEQ_WINDOW;
	b->ch.own_loss = 0;
	b->scratch_busy = 0;
	b->ch.mc = &b->mc;
	b->kinds = or_bd_kinds;
	b->features = or_bd_features;
	/* What the last input left (a FAILED notice failed the channel, repair kept phases):
	 * closed, and every feature opened again for this one. */
	for (const struct or_bd_feature *const *f = b->features; *f; f++)
		if ((*f)->close)
			(*f)->close(&b->ch);
	if (s->consistent &&
	    or_params_set(&hs->comm.params, "consistent", "1", OPTIREDUCE_PARAM_API, NULL))
		abort();
	b->tokens = b->last_refill_us = 0;
	b->blocked = 0;
	b->blocked_until_us = 0;
	b->share = 0;
	b->inject_state = 0;
	b->in_op = 0;
	b->wait_fd = -1;
	for (const struct or_bd_feature *const *f = b->features; *f; f++)
		if ((*f)->open && (*f)->open(&b->ch))
			abort();
	memset(&b->ch.stats, 0, sizeof(b->ch.stats));
	or_pacer_init(&b->pace, OR_INITIAL_RATE_MBPS);
	or_tmo_config_default(&cfg);
	cfg.nranks = s->size;
	cfg.rank = s->rank;
	if (or_tmo_init(&b->tmo, &cfg))
		abort();
	b->rx[0].b = b;
	b->rx[0].x.cb_arg = &b->rx[0];
	hs->dst = calloc(s->count, sizeof(float));
	if (!hs->dst)
		abort();
}

static void harness_free(struct harness *hs)
{
	struct or_bounded *b = hs->b;

	for (size_t i = 0; i < b->nparked; i++)
		free(b->park[i].data);
	b->nparked = 0;
	for (size_t i = 0; i < hs->nregions; i++)
		free(hs->regions[i]);
	free(hs->dst);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct harness hs;
	struct setup s;

	if (size < 2)
		return 0;
	parse(data, &s);
	harness_init(&hs, &s);
	fuzz_clock_reset();
	if (s.when <= 1)
		start(&hs, &s, FUZZ_SEQ);
	if (s.when == 0)
		declare(&hs, &s);
	if (s.consistent)
		consistent_close(&hs);
	feed(&hs, data + 2, size - 2);
	if (s.when == 2)
		start(&hs, &s, FUZZ_SEQ);
	if (s.when != 0)
		declare(&hs, &s); /* replays what was parked */
	finish(&hs);
	/* The next operation takes what was parked for it and drops what is now stale. */
	start(&hs, &s, FUZZ_SEQ + 1);
	declare(&hs, &s);
	finish(&hs);
	harness_free(&hs);
	return 0;
}
