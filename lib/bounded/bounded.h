/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bounded channel of a communicator: datagrams, deadlines and loss
 * estimation (docs/design.md, "Two modes", "Wire format", "The estimate").
 * The core calls these around an operation; algorithms use the or_bop_*
 * services in coll.h.  Its parts live in lib/bounded/, one concern a file.
 */
#ifndef OR_BOUNDED_H
#define OR_BOUNDED_H

#include <stddef.h>
#include <stdint.h>

#include "lib/op/coll.h"

struct optireduce_comm;
struct or_ofi;
struct or_bounded;
struct or_params;
struct or_nic_choice;
struct or_dgram_want;

int or_bounded_create(struct optireduce_comm *comm, int same_host, struct or_bounded **out);
void or_bounded_destroy(struct or_bounded *b);
const char *or_bounded_provider(const struct or_bounded *b);
const char *or_bounded_domain(const struct or_bounded *b);
int or_bounded_getname(struct or_bounded *b, void *buf, size_t *len);
int or_bounded_connect(struct or_bounded *b, const void *names, size_t stride);
/* What the parameters and placement (nic, NULL for any) ask of a datagram endpoint. */
void or_bounded_dgram_want(const struct or_params *p, const struct or_nic_choice *nic,
                           int same_host, struct or_dgram_want *w);

/*
 * Multicast (docs/design.md, "Multicast").  This rank's state for the names exchange: 0
 * without a channel, else OR_MCAST_PRESENT | the multicast parameter | OR_MCAST_JOINED.
 * Once every rank joined, the probe sends to the group and returns how many other ranks it
 * heard within multicast_probe_ms; use decides, with the reason when not.  Describe: 1
 * when multicast is on, 0 when off, and where or why into buf.
 */
#define OR_MCAST_AUTO    0 /* the multicast parameter's values, in its enum order */
#define OR_MCAST_ON      1
#define OR_MCAST_OFF     2
#define OR_MCAST_WANT    0x3
#define OR_MCAST_JOINED  0x4
#define OR_MCAST_PRESENT 0x80
unsigned or_bounded_mcast_state(const struct or_bounded *b);
/* The multicast_range parameter "a.b.c.d/p" inside 224.0.0.0/4: 0 (base and prefix may be
 * NULL), or -OPTIREDUCE_EINVAL. */
int or_bounded_mcast_range(const char *s, uint32_t *base, unsigned *prefix);
uint32_t or_bounded_mcast_probe(struct or_bounded *b);
void or_bounded_mcast_use(struct or_bounded *b, int use, const char *why);
int or_bounded_mcast_describe(const struct or_bounded *b, char *buf, size_t len);

/* A descriptor the channel's waits also end on when it polls readable (the communicator's
 * wake-up, lib/op/wake.c); the channel never reads it.  -1: none. */
void or_bounded_set_wake_fd(struct or_bounded *b, int fd);
/* Reap completions and deliver packets; returns > 0 if anything happened. */
int or_bounded_poll(struct or_bounded *b);
/* Sleep until either channel has activity or timeout_ms passes. */
int or_bounded_wait(struct or_bounded *b, struct or_ofi *rdm, int timeout_ms);

/*
 * The progress thread drains the socket only while the application is outside the
 * library; the core holds this lock for as long as it works on the communicator.
 */
void or_bounded_lock(struct or_bounded *b);
void or_bounded_unlock(struct or_bounded *b);

/* When the core encoded and decoded an operation (lib/op/codec.h): the channel's timeline. */
struct or_bounded_times {
	double start_us;   /* the core took the operation, before encoding */
	double encoded_us; /* the algorithm's view is ready */
	double decode_start_us;
	double decode_start_cpu_us; /* or_thread_cpu_us() then, when logging at debug */
	double decoded_us;
};

/*
 * Around one operation on the bounded channel.  c is the algorithm's view of the encoded
 * operation: whole blocks of block_elems elements; user_bytes is its size as the
 * application gave it.  Finish, after the core decoded the result, teaches the
 * controllers what the operation saw; abort only lets it go.
 */
int or_bounded_op_start(struct or_bounded *b, struct or_coll *c, size_t block_elems,
                        size_t user_bytes, const struct or_bounded_times *t);
void or_bounded_op_finish(struct or_bounded *b, struct or_coll *c,
                          const struct or_bounded_times *t);
void or_bounded_op_abort(struct or_bounded *b, struct or_coll *c);

/*
 * The communicator failed on this rank with err: the other ranks are told at once with a
 * FAILED notice (docs/design.md, "Peers that die"), unless one of them told this one.
 * Once per communicator; later calls do nothing.
 */
void or_bounded_fail(struct or_bounded *b, int err);

#endif /* OR_BOUNDED_H */
