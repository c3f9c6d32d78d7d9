/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Finding one's way in an operation's phases (op.h): a peer's inbound or outbound slot,
 * the slots in use, the send order of a region.  Pure: the channel and every feature use
 * these, and they call nothing back.
 */
#include "lib/bounded/op.h"

/* The inbound slot of sender in ph, or NULL if the phase expects nothing from it. */
struct or_inbound *or_bd_inbound_of(struct or_phase *ph, uint32_t size, uint32_t sender)
{
	if (!ph->in)
		return NULL;
	if (ph->cap >= size)
		return sender < size ? &ph->in[sender] : NULL;
	for (uint32_t i = 0; i < ph->nin; i++)
		if (ph->in[i].peer == sender)
			return &ph->in[i];
	return NULL;
}

/* The outbound slot to peer in ph, or NULL if the phase declared none. */
struct or_outbound *or_bd_outbound_of(struct or_phase *ph, uint32_t size, uint32_t peer)
{
	if (ph->cap >= size)
		return peer < size ? &ph->out[peer] : NULL;
	for (uint32_t i = 0; i < ph->nout; i++)
		if (ph->out[i].peer == peer)
			return &ph->out[i];
	return NULL;
}

/* Slots of ph's in[] (out = 0) or out[] in use: by rank, or the first nin / nout. */
uint32_t or_bd_slots(const struct or_phase *ph, uint32_t size, int out)
{
	return ph->cap >= size ? ph->cap : out ? ph->nout : ph->nin;
}

/* Inbound slots of ph in use: every rank's (by rank) or the nin declared, in order. */
uint32_t or_bd_inbound_slots(const struct or_phase *ph, uint32_t size)
{
	return !ph->in ? 0 : ph->cap >= size ? ph->cap : ph->nin;
}

/* A stride coprime with n that jumps about a Hadamard block between consecutive packets. */
size_t or_bd_stripe_stride(size_t n, size_t pkts_per_block)
{
	size_t s = pkts_per_block ? pkts_per_block : 1;
	if (n <= 1)
		return 1;
	s %= n;
	if (s == 0)
		s = 1;
	for (;; s++) {
		size_t a = n, c = s;
		while (c) {
			size_t t = a % c;
			a = c;
			c = t;
		}
		if (a == 1)
			return s;
	}
}

struct or_phase *or_bd_sending_phase(struct or_bounded_op *op, unsigned *step)
{
	for (unsigned p = 0; op && p < op->nphases; p++) {
		struct or_phase *ph = &op->ph[p];
		if (ph->begun && !ph->closed && ph->group < ph->norder) {
			*step = p;
			return ph;
		}
	}
	return NULL;
}

/*
 * Most steps any operation on a communicator of n ranks may declare: the ring's 2(n-1), at
 * least the default 2, at most what the 16-bit step field holds.  Packets of operations not
 * started yet are parked when their step is below it.
 */
uint16_t or_bd_max_steps(uint32_t n)
{
	uint64_t m = n > 1 ? 2 * (uint64_t)(n - 1) : 0;
	if (m < OR_DEFAULT_PHASES)
		m = OR_DEFAULT_PHASES;
	return m > UINT16_MAX ? UINT16_MAX : (uint16_t)m;
}

