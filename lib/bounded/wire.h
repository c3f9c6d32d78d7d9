/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire header of the bounded (unreliable datagram) channel.
 *
 * Every datagram is a fixed 44-byte little-endian header followed by exactly
 * `length` payload bytes.  The header is read and written byte by byte, never
 * by casting the packet to a struct, so a datagram of any alignment from a
 * host of any byte order decodes the same way.
 *
 *   off size field
 *   0   4    magic          OR_WIRE_MAGIC ("OPTR")
 *   4   1    version        OR_WIRE_VERSION
 *   5   1    flags          OR_WIRE_FLAG_*; other bits must be 0
 *   6   2    step           phase/step index within the operation
 *   8   4    comm_id
 *   12  4    sender         sender rank
 *   16  8    seq            operation sequence number on the communicator
 *   24  4    offset         bytes into the step's receive region
 *   28  2    length         payload bytes
 *   30  2    contrib        contributions summed into the payload
 *   32  4    timeout_est_us sender's current timeout estimate
 *   36  2    loss           sender's observed receive loss, in 1/65535
 *   38  4    phase_us       microseconds since the sender began this step,
 *                           saturating; 0 when not a first send of data
 *   42  2    hdr_check      Fletcher-16 over bytes 0..41
 *
 * Because offset is a byte offset in 32 bits, a step's receive region is at
 * most UINT32_MAX bytes; larger operations must be split into more steps or
 * more operations.
 *
 * Nothing here touches libfabric: the module is pure so it can be fuzzed and
 * tested on its own.
 */
#ifndef OR_WIRE_H
#define OR_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define OR_WIRE_MAGIC    0x4F505452u
#define OR_WIRE_VERSION  2
#define OR_WIRE_HDR_SIZE 44
/* Last packet of this sender for this step. */
#define OR_WIRE_FLAG_LAST 0x1
/* No payload; a notice such as "done" rather than data. */
#define OR_WIRE_FLAG_CONTROL 0x2
/*
 * A repair request (docs/design.md, "Repair inside the deadline"): sent by the receiver of
 * a phase to one of its senders; the payload is a list of ranges of packets of that
 * sender's region (struct or_wire_range), offset 0, contrib 0.
 */
#define OR_WIRE_FLAG_REQUEST 0x4
/* A data packet sent again on request; with CONTROL and no payload: "cannot resend". */
#define OR_WIRE_FLAG_RESENT 0x8
/*
 * With CONTROL and nothing else: "the sender's communicator failed; fail yours"
 * (docs/design.md, "Peers that die").  offset names the rank that died, or
 * OR_WIRE_NO_RANK; step, length and contrib are 0; seq is not checked.
 */
#define OR_WIRE_FLAG_FAILED 0x10
#define OR_WIRE_NO_RANK     UINT32_MAX
/*
 * Agreement of parameter consistent (docs/design.md, "Replica-consistent results"): alone,
 * one fragment of the sender's loss bitmap of operation seq's final phase (offset: its byte
 * offset in the bitmap, a multiple of the payload size; length > 0; step and contrib 0);
 * with CONTROL and no payload, "send me your bitmap of seq"; with REQUEST, ranges of
 * packets of the receiver's final-phase shard to send (offset 0); with RESENT, one such
 * packet (offset: its byte offset in the shard).
 */
#define OR_WIRE_FLAG_CONSIST 0x20
/*
 * With CONTROL and nothing else: a multicast probe, sent at a communicator's creation to its
 * group (offset 0) and a copy to each peer (offset OR_WIRE_PROBE_UNICAST), which says the
 * sender has begun probing (docs/design.md, "Multicast"); seq, step, length and contrib are
 * 0.  The highest bit, so that flags added for packets of operations grow from the bottom.
 */
#define OR_WIRE_FLAG_PROBE    0x80
#define OR_WIRE_PROBE_UNICAST 1
#define OR_WIRE_FLAGS_KNOWN                                                                        \
	(OR_WIRE_FLAG_LAST | OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_REQUEST | OR_WIRE_FLAG_RESENT |   \
	 OR_WIRE_FLAG_FAILED | OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_PROBE)

/*
 * What a datagram is, read once from its flags: the channel hands each kind but an
 * operation's data to the handler of its row in the kinds table (kinds.c).  A flag that
 * makes a new kind adds a value here and a line to or_wire_kind, before DATA.
 */
enum or_wire_kind {
	OR_WIRE_KIND_DATA,    /* a packet of an operation's phase */
	OR_WIRE_KIND_PROBE,   /* PROBE: multicast probes */
	OR_WIRE_KIND_FAILED,  /* FAILED: "the sender's communicator failed" */
	OR_WIRE_KIND_CONSIST, /* CONSIST: the agreement of parameter consistent */
	OR_WIRE_KIND_REPAIR,  /* REQUEST or CONTROL: repair requests, resends' refusals */
	OR_WIRE_KINDS
};

static inline enum or_wire_kind or_wire_kind(uint8_t flags)
{
	if (flags & OR_WIRE_FLAG_PROBE)
		return OR_WIRE_KIND_PROBE;
	if (flags & OR_WIRE_FLAG_FAILED)
		return OR_WIRE_KIND_FAILED;
	if (flags & OR_WIRE_FLAG_CONSIST)
		return OR_WIRE_KIND_CONSIST;
	if (flags & (OR_WIRE_FLAG_REQUEST | OR_WIRE_FLAG_CONTROL))
		return OR_WIRE_KIND_REPAIR;
	return OR_WIRE_KIND_DATA;
}

/* One range of a repair request: packets first .. first + count - 1, 6 bytes on the wire. */
struct or_wire_range {
	uint32_t first;
	uint16_t count;
};
#define OR_WIRE_RANGE_SIZE 6

struct or_wire_hdr {
	uint32_t magic;
	uint8_t version;
	uint8_t flags;
	uint16_t step;
	uint32_t comm_id;
	uint32_t sender;
	uint64_t seq;
	uint32_t offset;
	uint16_t length;
	uint16_t contrib;
	uint32_t timeout_est_us;
	/* Receivers report loss so that senders can pace. */
	uint16_t loss;
	/* Receivers learn when the sender entered a phase (docs/design.md, "Deadlines"). */
	uint32_t phase_us;
};

enum or_wire_reject {
	OR_WIRE_OK = 0,
	OR_WIRE_ETRUNC = -1,
	OR_WIRE_EMAGIC = -2,
	OR_WIRE_EVERSION = -3,
	OR_WIRE_EFLAGS = -4,
	OR_WIRE_ECHECK = -5,
	OR_WIRE_ELENGTH = -6,
	OR_WIRE_ECOMM = -7,
	OR_WIRE_ERANK = -8,
	OR_WIRE_EWINDOW_OLD = -9,  /* seq < seq_lo: stale */
	OR_WIRE_EWINDOW_NEW = -10, /* seq >= seq_hi: too far ahead */
	OR_WIRE_ESTEP = -11,
	OR_WIRE_EBOUNDS = -12,
	OR_WIRE_ECONTRIB = -13,
	OR_WIRE_ERANGE = -14, /* a repair request's range outside the region, or empty */
};

/* What the receiver accepts right now. */
struct or_wire_expect {
	uint32_t comm_id;
	uint32_t nranks;
	/* Window [seq_lo, seq_hi): the current operation and parked future ones. */
	uint64_t seq_lo;
	uint64_t seq_hi;
	uint16_t nsteps;
	/*
	 * Size of the receive region of (seq, step); 0 means this rank
	 * expects no data in that step.  Called only for seq inside the
	 * window and step < nsteps.  NULL: any region up to UINT32_MAX
	 * bytes, for a receiver that checks each sender's region itself.
	 */
	uint32_t (*step_bytes)(void *arg, uint64_t seq, uint16_t step);
	void *arg;
	uint16_t max_contrib;
};

/*
 * Writes h (magic and version as given, check computed) into buf.  Returns
 * OR_WIRE_HDR_SIZE, or -EMSGSIZE if buflen is too small.  The payload goes
 * right after the header and is the caller's business.
 */
int or_wire_encode(const struct or_wire_hdr *h, void *buf, size_t buflen);

/*
 * Structural checks of one whole datagram: size, magic, version, checksum,
 * flag bits, and length == pktlen - OR_WIRE_HDR_SIZE (a datagram shorter
 * than announced is ETRUNC, a longer one ELENGTH).  Returns 0 with *h filled,
 * or an enum or_wire_reject; *h is unspecified on failure.
 */
int or_wire_decode(const void *pkt, size_t pktlen, struct or_wire_hdr *h);

/*
 * Semantic checks of a decoded header against e: comm id, sender, seq window,
 * step, offset+length inside the step's region, and either a data packet
 * with a non-empty payload and contrib in 1..max_contrib, or a CONTROL packet
 * with no payload, or a REQUEST of whole ranges (offset and contrib 0; its
 * ranges are checked by or_wire_ranges_decode against the sender's region,
 * and it is never copied to a region).  Returns 0 or an enum or_wire_reject.
 * Once both decode and validate return 0, copying a data payload to
 * region + offset stays in bounds.
 */
int or_wire_validate(const struct or_wire_hdr *h, const struct or_wire_expect *e);

/*
 * A FAILED notice (which or_wire_validate rejects as EFLAGS: it is no packet of an
 * operation): comm id, sender, flags exactly CONTROL | FAILED, step, length and contrib 0,
 * offset a rank or OR_WIRE_NO_RANK.  Its seq is not checked: the sender may have failed in
 * any operation.  Returns 0 or an enum or_wire_reject.
 */
int or_wire_validate_failed(const struct or_wire_hdr *h, const struct or_wire_expect *e);

/*
 * A multicast probe (which or_wire_validate also rejects as EFLAGS): comm id, sender, flags
 * exactly CONTROL | PROBE, offset 0 or OR_WIRE_PROBE_UNICAST, and seq, step, length and
 * contrib 0.  Returns 0 or an enum or_wire_reject.
 */
int or_wire_validate_probe(const struct or_wire_hdr *h, const struct or_wire_expect *e);

/*
 * A CONSIST datagram (which or_wire_validate rejects as EFLAGS: it belongs to no phase):
 * comm id, sender, flags exactly CONSIST or CONSIST | RESENT with a payload, CONSIST |
 * CONTROL without, CONSIST | REQUEST with whole ranges; step and contrib 0, a request's
 * offset 0.  Its seq and offset are checked by the receiver
 * against the operation it names.  Returns 0 or an enum or_wire_reject.
 */
int or_wire_validate_consist(const struct or_wire_hdr *h, const struct or_wire_expect *e);

/*
 * The ranges of a repair request's payload (len bytes, validated) into out (at most max),
 * each checked to lie within a region of npkts packets.  Returns how many, or
 * OR_WIRE_ERANGE (nothing usable: the request is dropped whole).
 */
int or_wire_ranges_decode(const void *payload, size_t len, size_t npkts, struct or_wire_range *out,
                          size_t max);
/* Writes n ranges to buf (room for n * OR_WIRE_RANGE_SIZE bytes); returns the bytes. */
size_t or_wire_ranges_encode(const struct or_wire_range *r, size_t n, void *buf);

/* Short constant name of a reject code, e.g. "ECHECK"; "?" if unknown. */
const char *or_wire_reject_name(int reason);

#endif
