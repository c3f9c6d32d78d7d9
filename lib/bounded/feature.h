/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How the bounded channel's centre reaches its features (features/): each feature fills
 * one struct or_bd_feature with the hooks it needs, and each packet kind that is not an
 * operation's data has one row in the kinds table (kinds.c) naming its handler.  The
 * centre calls every feature's hook at its point (NULL hooks are skipped, features in
 * table order) and hands each datagram to its kind's handler; it names no feature.
 */
#ifndef OR_BOUNDED_FEATURE_H
#define OR_BOUNDED_FEATURE_H

#include <stdint.h>

#include "lib/bounded/chan.h"

struct or_bd_feature {
	const char *name;
	/* The channel is set up (0) or cannot be (< 0); undone by close. */
	int (*open)(struct or_chan *ch);
	void (*close)(struct or_chan *ch);
	/* A datagram of a member decoded whole: its sender lives. */
	void (*heard)(struct or_chan *ch, uint32_t sender);
	/* A datagram placed in inbound slot in of op's phase h->step. */
	void (*arrived)(struct or_chan *ch, struct or_bounded_op *op, const struct or_wire_hdr *h,
	                const struct or_inbound *in);
	/* op declared its regions: its packets have a home. */
	void (*op_start)(struct or_chan *ch, struct or_bounded_op *op);
	/* op finished: its status is filled (status, before the loss is reckoned), then the
	 * controllers learn from it (finish: may set op->controllers_skip). */
	void (*op_status)(struct or_chan *ch, struct or_bounded_op *op);
	void (*op_finish)(struct or_chan *ch, struct or_bounded_op *op);
	/* op is retired: what the feature kept for it is freed. */
	void (*op_end)(struct or_chan *ch, struct or_bounded_op *op);
	/* Phase of op begins (deadline set, before its first send) or has closed. */
	void (*phase_begin)(struct or_chan *ch, struct or_bounded_op *op, unsigned phase);
	void (*phase_closed)(struct or_chan *ch, struct or_bounded_op *op, unsigned phase);
	/* Early timeout would close the phase now: 1 holds it open (the deadline still wins). */
	int (*phase_hold)(struct or_chan *ch, struct or_bounded_op *op, unsigned phase);
	/* Each progress pass: datagrams sent (>= 0), or the communicator's failure (< 0). */
	int (*progress)(struct or_chan *ch);
	/* The communicator fails (err < 0): the other members are told. */
	void (*fail)(struct or_chan *ch, int err);
};

/* A datagram of one kind (wire.h, or_wire_kind) other than an operation's data. */
struct or_bd_kind {
	const char *name;
	/* Decoded whole; src is its sender as the endpoint saw it (OR_SRC_* unknown) and
	 * check_source whether that counts.  Returns 0 when handled (taken, or dropped and
	 * counted), 1 when it is handled as an operation's data instead. */
	int (*rx)(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
	          uint32_t src, int check_source);
};

/* kinds.c: the features, in the order their hooks run, and a row per kind. */
extern const struct or_bd_feature *const or_bd_features[];
extern const struct or_bd_kind or_bd_kinds[OR_WIRE_KINDS];

#endif /* OR_BOUNDED_FEATURE_H */
