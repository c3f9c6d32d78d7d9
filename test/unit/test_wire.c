/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the bounded channel's wire header (lib/bounded/wire.c).
 *
 * Usage: test_wire [seed].  Prints each failed check; exits 0 on success,
 * 1 on failure.  The fuzz part is the point: whatever bytes arrive, a packet
 * that passes decode and validate must fit inside its step's region.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/wire.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			if (failures <= 50) {                                                      \
				printf("%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond);             \
				printf(__VA_ARGS__);                                               \
				printf("\n");                                                      \
			}                                                                          \
		}                                                                                  \
	} while (0)

#define CHECK_RC(got, want, what)                                                                  \
	CHECK((got) == (want), "%s: got %s, want %s", what, or_wire_reject_name(got),              \
	      or_wire_reject_name(want))

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the printed seed. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rndn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* The receiver used throughout: 8 ranks, window [100, 104), four steps. */
#define T_COMM    7u
#define T_NRANKS  8u
#define T_SEQ_LO  100u
#define T_SEQ_HI  104u
#define T_NSTEPS  4u
#define T_CONTRIB 8u

/* Step 1 expects nothing; step 2 is as large as a step can be. */
static const uint32_t t_step_bytes[T_NSTEPS] = {4096, 0, UINT32_MAX, 1000};

static uint32_t step_bytes(void *arg, uint64_t seq, uint16_t step)
{
	(void)arg;
	CHECK(seq >= T_SEQ_LO && seq < T_SEQ_HI && step < T_NSTEPS,
	      "step_bytes called outside the window: seq %" PRIu64 " step %u", seq, step);
	if (step >= T_NSTEPS)
		return 0;
	return t_step_bytes[step];
}

static const struct or_wire_expect expect = {
    .comm_id = T_COMM,
    .nranks = T_NRANKS,
    .seq_lo = T_SEQ_LO,
    .seq_hi = T_SEQ_HI,
    .nsteps = T_NSTEPS,
    .step_bytes = step_bytes,
    .arg = NULL,
    .max_contrib = T_CONTRIB,
};

/* Large enough for any 16-bit length, plus slack for padding tests. */
#define PKT_MAX (OR_WIRE_HDR_SIZE + 65535 + 64)
static uint8_t pkt[PKT_MAX + 1];

/*
 * Written from the definition rather than shared with wire.c, so that the
 * test does not inherit a bug in the code it checks.
 */
static uint16_t ref_fletcher16(const uint8_t *p, size_t n)
{
	uint64_t a = 0, b = 0;

	for (size_t i = 0; i < n; i++) {
		a += p[i];
		b += a;
	}
	return (uint16_t)((b % 255) << 8 | (a % 255));
}

static void ref_fix_check(uint8_t *p)
{
	uint16_t c = ref_fletcher16(p, 42);

	p[42] = (uint8_t)c;
	p[43] = (uint8_t)(c >> 8);
}

static uint64_t rd_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void random_hdr(struct or_wire_hdr *h)
{
	h->magic = OR_WIRE_MAGIC;
	h->version = OR_WIRE_VERSION;
	h->flags = (uint8_t)(rnd() & OR_WIRE_FLAGS_KNOWN);
	h->step = (uint16_t)rnd();
	h->comm_id = (uint32_t)rnd();
	h->sender = (uint32_t)rnd();
	h->seq = rnd();
	h->offset = (uint32_t)rnd();
	h->length = (uint16_t)rnd();
	h->contrib = (uint16_t)rnd();
	h->timeout_est_us = (uint32_t)rnd();
	h->loss = (uint16_t)rnd();
	h->phase_us = (uint32_t)rnd();
}

/* A header the test receiver accepts. */
static void valid_hdr(struct or_wire_hdr *h)
{
	static const uint16_t data_steps[] = {0, 2, 3};

	random_hdr(h);
	h->comm_id = T_COMM;
	h->sender = rndn(T_NRANKS);
	h->seq = T_SEQ_LO + rndn(T_SEQ_HI - T_SEQ_LO);
	h->flags &= ~(OR_WIRE_FLAG_REQUEST | OR_WIRE_FLAG_FAILED | OR_WIRE_FLAG_PROBE |
	              OR_WIRE_FLAG_CONSIST);
	if (rndn(16) == 0) {
		h->flags = OR_WIRE_FLAG_REQUEST;
		h->step = (uint16_t)rndn(T_NSTEPS);
		h->offset = 0;
		h->contrib = 0;
		h->length = (uint16_t)(OR_WIRE_RANGE_SIZE * (1 + rndn(8)));
	} else if (rndn(8) == 0) {
		h->flags |= OR_WIRE_FLAG_CONTROL;
		h->step = (uint16_t)rndn(T_NSTEPS);
		h->offset = 0;
		h->length = 0;
	} else {
		uint32_t sb;

		h->flags &= ~OR_WIRE_FLAG_CONTROL;
		h->step = data_steps[rndn(3)];
		sb = t_step_bytes[h->step];
		h->length = (uint16_t)(1 + rndn(200));
		h->offset = (uint32_t)(rnd() % ((uint64_t)sb - h->length + 1));
		h->contrib = (uint16_t)(1 + rndn(T_CONTRIB));
	}
}

/* Encodes h and h->length payload bytes; returns the datagram size. */
static size_t build(const struct or_wire_hdr *h, uint8_t *buf)
{
	int rc = or_wire_encode(h, buf, PKT_MAX);

	CHECK(rc == OR_WIRE_HDR_SIZE, "encode returned %d", rc);
	/* The payload's content is never inspected; only its size matters. */
	memset(buf + OR_WIRE_HDR_SIZE, (uint8_t)rnd(), h->length);
	return OR_WIRE_HDR_SIZE + (size_t)h->length;
}

static int receive(const uint8_t *p, size_t len)
{
	struct or_wire_hdr h;
	int rc = or_wire_decode(p, len, &h);

	return rc ? rc : or_wire_validate(&h, &expect);
}

/* The crafted-packet path: encode h, then run the receiver over it. */
static int verdict(const struct or_wire_hdr *h)
{
	return receive(pkt, build(h, pkt));
}

static int same_hdr(const struct or_wire_hdr *a, const struct or_wire_hdr *b)
{
	return a->magic == b->magic && a->version == b->version && a->flags == b->flags &&
	       a->step == b->step && a->comm_id == b->comm_id && a->sender == b->sender &&
	       a->seq == b->seq && a->offset == b->offset && a->length == b->length &&
	       a->contrib == b->contrib && a->timeout_est_us == b->timeout_est_us &&
	       a->loss == b->loss && a->phase_us == b->phase_us;
}

static void test_golden(void)
{
	/* Fixes the byte order on the wire independently of the host. */
	static const uint8_t want[OR_WIRE_HDR_SIZE - 2] = {
	    0x52, 0x54, 0x50, 0x4f, 0x02, 0x03, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0a,
	    0x09, 0x08, 0x07, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, 0x1c, 0x1b,
	    0x1a, 0x19, 0x1e, 0x1d, 0x20, 0x1f, 0x24, 0x23, 0x22, 0x21, 0x26, 0x25,
	    0x2a, 0x29, 0x28, 0x27};
	const struct or_wire_hdr h = {
	    .magic = OR_WIRE_MAGIC,
	    .version = 2,
	    .flags = 3,
	    .step = 0x0102,
	    .comm_id = 0x03040506,
	    .sender = 0x0708090a,
	    .seq = 0x1112131415161718ULL,
	    .offset = 0x191a1b1c,
	    .length = 0x1d1e,
	    .contrib = 0x1f20,
	    .timeout_est_us = 0x21222324,
	    .loss = 0x2526,
	    .phase_us = 0x2728292a,
	};
	uint8_t buf[OR_WIRE_HDR_SIZE];
	uint16_t c;

	CHECK(or_wire_encode(&h, buf, sizeof(buf)) == OR_WIRE_HDR_SIZE, "golden encode");
	CHECK(memcmp(buf, want, sizeof(want)) == 0, "golden bytes differ");
	c = ref_fletcher16(want, sizeof(want));
	CHECK(buf[42] == (uint8_t)c && buf[43] == (uint8_t)(c >> 8), "golden check %02x%02x",
	      buf[43], buf[42]);
	CHECK(or_wire_encode(&h, buf, OR_WIRE_HDR_SIZE - 1) == -EMSGSIZE, "short buffer");
}

static void test_round_trip(void)
{
	struct or_wire_hdr h, d;

	for (int i = 0; i < 20000; i++) {
		/* An odd start exercises unaligned access. */
		uint8_t *p = pkt + (i & 1);
		size_t len;
		int rc;

		random_hdr(&h);
		len = build(&h, p);
		memset(&d, 0, sizeof(d));
		rc = or_wire_decode(p, len, &d);
		CHECK_RC(rc, OR_WIRE_OK, "round trip decode");
		CHECK(same_hdr(&h, &d), "round trip fields differ (iteration %d)", i);
	}
	for (int i = 0; i < 20000; i++) {
		valid_hdr(&h);
		CHECK_RC(verdict(&h), OR_WIRE_OK, "valid header");
	}
}

static void test_structure(void)
{
	struct or_wire_hdr h;
	size_t len;

	valid_hdr(&h);
	h.flags &= ~OR_WIRE_FLAG_CONTROL;
	h.step = 0;
	h.offset = 0;
	h.length = 10;
	h.contrib = 1;
	len = build(&h, pkt);
	for (size_t n = 0; n < OR_WIRE_HDR_SIZE; n++)
		CHECK_RC(receive(pkt, n), OR_WIRE_ETRUNC, "short datagram");
	for (size_t n = OR_WIRE_HDR_SIZE; n < len; n++)
		CHECK_RC(receive(pkt, n), OR_WIRE_ETRUNC, "payload cut short");
	CHECK_RC(receive(pkt, len), OR_WIRE_OK, "exact datagram");
	CHECK_RC(receive(pkt, len + 1), OR_WIRE_ELENGTH, "padded datagram");
	CHECK_RC(receive(pkt, len + 64), OR_WIRE_ELENGTH, "padded datagram");
	h.length = 65535;
	len = build(&h, pkt);
	CHECK_RC(receive(pkt, OR_WIRE_HDR_SIZE), OR_WIRE_ETRUNC, "header only, length 65535");
	CHECK_RC(receive(pkt, len - 1), OR_WIRE_ETRUNC, "one byte short");

	valid_hdr(&h);
	h.flags |= OR_WIRE_FLAG_CONTROL;
	h.length = 0;
	h.offset = 0;
	len = build(&h, pkt);
	CHECK_RC(receive(pkt, len), OR_WIRE_OK, "control notice");
	CHECK_RC(receive(pkt, len + 1), OR_WIRE_ELENGTH, "padded control notice");

	valid_hdr(&h);
	h.magic = 0x5254504Fu;
	CHECK_RC(verdict(&h), OR_WIRE_EMAGIC, "byte-swapped magic");
	h.magic = 0;
	CHECK_RC(verdict(&h), OR_WIRE_EMAGIC, "zero magic");

	valid_hdr(&h);
	h.version = 0;
	CHECK_RC(verdict(&h), OR_WIRE_EVERSION, "version 0");
	h.version = OR_WIRE_VERSION - 1;
	CHECK_RC(verdict(&h), OR_WIRE_EVERSION, "the previous version (40-byte header)");
	h.version = OR_WIRE_VERSION + 1;
	CHECK_RC(verdict(&h), OR_WIRE_EVERSION, "the next version");

	for (int bit = 6; bit < 7; bit++) {
		valid_hdr(&h);
		h.flags |= (uint8_t)(1u << bit);
		CHECK_RC(verdict(&h), OR_WIRE_EFLAGS, "unknown flag bit");
	}
}

static void test_bit_flips(void)
{
	struct or_wire_hdr h;

	for (int i = 0; i < 500; i++) {
		size_t len;

		if (i & 1)
			random_hdr(&h);
		else
			valid_hdr(&h);
		len = build(&h, pkt);
		CHECK_RC(or_wire_decode(pkt, len, &h), OR_WIRE_OK, "unflipped header");
		for (int bit = 0; bit < 8 * OR_WIRE_HDR_SIZE; bit++) {
			struct or_wire_hdr d;
			int want = bit < 32   ? OR_WIRE_EMAGIC
			           : bit < 40 ? OR_WIRE_EVERSION
			                      : OR_WIRE_ECHECK;
			int rc;

			pkt[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			rc = or_wire_decode(pkt, len, &d);
			CHECK(rc == want, "flip of header bit %d: got %s, want %s", bit,
			      or_wire_reject_name(rc), or_wire_reject_name(want));
			pkt[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
	}
}

static void test_semantics(void)
{
	struct or_wire_hdr h, base;

	valid_hdr(&base);
	base.flags = 0;
	base.step = 0;
	base.offset = 0;
	base.length = 16;
	base.contrib = 1;
	CHECK_RC(verdict(&base), OR_WIRE_OK, "base");

	h = base, h.comm_id = T_COMM + 1;
	CHECK_RC(verdict(&h), OR_WIRE_ECOMM, "other comm");
	h = base, h.sender = T_NRANKS;
	CHECK_RC(verdict(&h), OR_WIRE_ERANK, "rank == nranks");
	h = base, h.sender = UINT32_MAX;
	CHECK_RC(verdict(&h), OR_WIRE_ERANK, "rank UINT32_MAX");
	h = base, h.sender = T_NRANKS - 1;
	CHECK_RC(verdict(&h), OR_WIRE_OK, "last rank");

	h = base, h.seq = T_SEQ_LO - 1;
	CHECK_RC(verdict(&h), OR_WIRE_EWINDOW_OLD, "seq just below window");
	h = base, h.seq = 0;
	CHECK_RC(verdict(&h), OR_WIRE_EWINDOW_OLD, "seq 0");
	h = base, h.seq = T_SEQ_HI;
	CHECK_RC(verdict(&h), OR_WIRE_EWINDOW_NEW, "seq == hi");
	h = base, h.seq = UINT64_MAX;
	CHECK_RC(verdict(&h), OR_WIRE_EWINDOW_NEW, "seq UINT64_MAX");
	h = base, h.seq = T_SEQ_HI - 1;
	CHECK_RC(verdict(&h), OR_WIRE_OK, "last parked seq");

	h = base, h.step = T_NSTEPS;
	CHECK_RC(verdict(&h), OR_WIRE_ESTEP, "step == nsteps");
	h = base, h.step = UINT16_MAX;
	CHECK_RC(verdict(&h), OR_WIRE_ESTEP, "step 65535");

	h = base, h.offset = 4096 - 16;
	CHECK_RC(verdict(&h), OR_WIRE_OK, "payload ends at region end");
	h = base, h.offset = 4096 - 15;
	CHECK_RC(verdict(&h), OR_WIRE_EBOUNDS, "payload one byte past region");
	h = base, h.offset = 4096;
	CHECK_RC(verdict(&h), OR_WIRE_EBOUNDS, "offset at region end");
	/* 0xfffffff8 + 16 wraps to 8 in 32 bits, well inside 4096. */
	h = base, h.offset = 0xfffffff8u;
	CHECK_RC(verdict(&h), OR_WIRE_EBOUNDS, "offset + length wraps uint32");
	h = base, h.offset = UINT32_MAX, h.length = UINT16_MAX;
	CHECK_RC(verdict(&h), OR_WIRE_EBOUNDS, "largest offset and length");
	h = base, h.step = 2, h.offset = UINT32_MAX - 16;
	CHECK_RC(verdict(&h), OR_WIRE_OK, "end of a 4 GiB region");
	h = base, h.step = 2, h.offset = UINT32_MAX - 15;
	CHECK_RC(verdict(&h), OR_WIRE_EBOUNDS, "past a 4 GiB region");
	h = base, h.step = 1;
	CHECK_RC(verdict(&h), OR_WIRE_EBOUNDS, "data for a step expecting none");
	h = base, h.step = 3, h.length = 1001;
	CHECK_RC(verdict(&h), OR_WIRE_EBOUNDS, "payload larger than region");

	h = base, h.contrib = 0;
	CHECK_RC(verdict(&h), OR_WIRE_ECONTRIB, "contrib 0");
	h = base, h.contrib = T_CONTRIB + 1;
	CHECK_RC(verdict(&h), OR_WIRE_ECONTRIB, "contrib above max");
	h = base, h.contrib = UINT16_MAX;
	CHECK_RC(verdict(&h), OR_WIRE_ECONTRIB, "contrib 65535");
	h = base, h.contrib = T_CONTRIB;
	CHECK_RC(verdict(&h), OR_WIRE_OK, "contrib at max");

	h = base, h.length = 0;
	CHECK_RC(verdict(&h), OR_WIRE_ELENGTH, "empty data packet");
	h = base, h.flags = OR_WIRE_FLAG_CONTROL;
	CHECK_RC(verdict(&h), OR_WIRE_ELENGTH, "control with payload");
	h = base, h.flags = OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_LAST, h.length = 0, h.contrib = 0,
	h.step = 1;
	CHECK_RC(verdict(&h), OR_WIRE_OK, "control notice, any contrib, empty step");
	h = base, h.flags = OR_WIRE_FLAG_LAST;
	CHECK_RC(verdict(&h), OR_WIRE_OK, "last data packet");
}

/* Agreement datagrams of parameter consistent: never data, checked by
 * or_wire_validate_consist. */
static void test_consist(void)
{
	struct or_wire_hdr n, h;

	valid_hdr(&n);
	n.flags = OR_WIRE_FLAG_CONSIST;
	n.step = 0;
	n.contrib = 0;
	n.offset = 0;
	n.length = 100;
	CHECK_RC(or_wire_validate_consist(&n, &expect), OR_WIRE_OK, "bitmap fragment");
	CHECK_RC(or_wire_validate(&n, &expect), OR_WIRE_EFLAGS, "a bitmap is no data packet");
	h = n, h.length = 0;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_ELENGTH, "empty fragment");
	h = n, h.flags |= OR_WIRE_FLAG_CONTROL, h.length = 0;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_OK, "bitmap request");
	h.offset = 1;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_ELENGTH, "request at an offset");
	h = n, h.flags |= OR_WIRE_FLAG_LAST;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_EFLAGS, "CONSIST with LAST");
	h = n, h.flags |= OR_WIRE_FLAG_RESENT, h.offset = 1432;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_OK, "a fetched packet");
	h.length = 0;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_ELENGTH, "empty fetched packet");
	h = n, h.flags |= OR_WIRE_FLAG_REQUEST, h.length = 2 * OR_WIRE_RANGE_SIZE;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_OK, "a fetch request");
	h.length = 7;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_ELENGTH, "partial range");
	h.length = OR_WIRE_RANGE_SIZE, h.offset = 6;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_ELENGTH, "request at an offset");
	h = n, h.flags |= OR_WIRE_FLAG_REQUEST | OR_WIRE_FLAG_RESENT;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_EFLAGS, "REQUEST and RESENT");
	h = n, h.step = 1;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_ELENGTH, "fragment with a step");
	h = n, h.contrib = 1;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_ELENGTH, "fragment with contrib");
	h = n, h.sender = T_NRANKS;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_ERANK, "sender == nranks");
	h = n, h.comm_id = T_COMM + 1;
	CHECK_RC(or_wire_validate_consist(&h, &expect), OR_WIRE_ECOMM, "of another comm");
}

/* FAILED notices: never a packet of an operation, checked by or_wire_validate_failed. */
static void test_failed_notice(void)
{
	struct or_wire_hdr n, h;
	uint8_t buf[OR_WIRE_HDR_SIZE];
	struct or_wire_hdr d;

	valid_hdr(&n);
	n.flags = OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_FAILED;
	n.step = 0;
	n.length = 0;
	n.contrib = 0;
	n.offset = 3;
	n.seq = UINT64_MAX; /* any operation: not checked */
	CHECK(or_wire_encode(&n, buf, sizeof(buf)) == OR_WIRE_HDR_SIZE, "encode notice");
	CHECK_RC(or_wire_decode(buf, sizeof(buf), &d), OR_WIRE_OK, "notice decodes");
	CHECK_RC(or_wire_validate_failed(&d, &expect), OR_WIRE_OK, "notice naming rank 3");
	CHECK_RC(or_wire_validate(&d, &expect), OR_WIRE_EFLAGS, "a notice is no data packet");
	h = n, h.offset = OR_WIRE_NO_RANK;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_OK, "notice naming no rank");
	h = n, h.offset = T_NRANKS;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_ERANK, "dead rank == nranks");
	h = n, h.sender = T_NRANKS;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_ERANK, "sender == nranks");
	h = n, h.comm_id = T_COMM + 1;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_ECOMM, "notice of another comm");
	h = n, h.flags = OR_WIRE_FLAG_FAILED;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_EFLAGS, "FAILED without CONTROL");
	h = n, h.flags |= OR_WIRE_FLAG_LAST;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_EFLAGS, "FAILED with LAST");
	h = n, h.flags = OR_WIRE_FLAG_CONTROL;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_EFLAGS, "CONTROL alone");
	h = n, h.length = 6;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_ELENGTH, "notice with payload");
	h = n, h.contrib = 1;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_ELENGTH, "notice with contrib");
	h = n, h.step = 1;
	CHECK_RC(or_wire_validate_failed(&h, &expect), OR_WIRE_ELENGTH, "notice with a step");
	/* Data packets with the FAILED bit are never data. */
	valid_hdr(&h);
	h.flags |= OR_WIRE_FLAG_FAILED;
	CHECK_RC(verdict(&h), OR_WIRE_EFLAGS, "data packet with FAILED");
}

/* Multicast probes: never a packet of an operation, checked by or_wire_validate_probe. */
static void test_probe(void)
{
	struct or_wire_hdr n, h, d;
	uint8_t buf[OR_WIRE_HDR_SIZE];

	memset(&n, 0, sizeof(n));
	n.magic = OR_WIRE_MAGIC;
	n.version = OR_WIRE_VERSION;
	n.flags = OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_PROBE;
	n.comm_id = T_COMM;
	n.sender = 1;
	CHECK(or_wire_encode(&n, buf, sizeof(buf)) == OR_WIRE_HDR_SIZE, "encode probe");
	CHECK_RC(or_wire_decode(buf, sizeof(buf), &d), OR_WIRE_OK, "probe decodes");
	CHECK_RC(or_wire_validate_probe(&d, &expect), OR_WIRE_OK, "probe");
	CHECK_RC(or_wire_validate(&d, &expect), OR_WIRE_EFLAGS, "a probe is no data packet");
	h = n, h.comm_id = T_COMM + 1;
	CHECK_RC(or_wire_validate_probe(&h, &expect), OR_WIRE_ECOMM, "probe of another comm");
	h = n, h.sender = T_NRANKS;
	CHECK_RC(or_wire_validate_probe(&h, &expect), OR_WIRE_ERANK, "sender == nranks");
	h = n, h.flags = OR_WIRE_FLAG_PROBE;
	CHECK_RC(or_wire_validate_probe(&h, &expect), OR_WIRE_EFLAGS, "PROBE without CONTROL");
	h = n, h.flags |= OR_WIRE_FLAG_FAILED;
	CHECK_RC(or_wire_validate_probe(&h, &expect), OR_WIRE_EFLAGS, "PROBE with FAILED");
	h = n, h.length = 6;
	CHECK_RC(or_wire_validate_probe(&h, &expect), OR_WIRE_ELENGTH, "probe with payload");
	h = n, h.seq = T_SEQ_LO;
	CHECK_RC(or_wire_validate_probe(&h, &expect), OR_WIRE_ELENGTH, "probe with a seq");
	h = n, h.offset = OR_WIRE_PROBE_UNICAST;
	CHECK_RC(or_wire_validate_probe(&h, &expect), OR_WIRE_OK, "probe's unicast copy");
	h = n, h.offset = OR_WIRE_PROBE_UNICAST + 1;
	CHECK_RC(or_wire_validate_probe(&h, &expect), OR_WIRE_ELENGTH, "probe with an offset");
	valid_hdr(&h);
	h.flags |= OR_WIRE_FLAG_PROBE;
	CHECK_RC(verdict(&h), OR_WIRE_EFLAGS, "data packet with PROBE");
}

/*
 * The property that matters: an accepted datagram is exactly header plus
 * payload and the payload lands inside its region.  The fields are re-read
 * from the raw bytes so that a decode bug cannot hide itself.
 */
static void check_accepted(const uint8_t *p, size_t len, const char *what)
{
	uint64_t seq = rd_le(p + 16, 8);
	uint16_t step = (uint16_t)rd_le(p + 6, 2);
	uint64_t off = rd_le(p + 24, 4), plen = rd_le(p + 28, 2);
	int control = p[5] & OR_WIRE_FLAG_CONTROL;
	int request = p[5] & OR_WIRE_FLAG_REQUEST;

	CHECK(len == OR_WIRE_HDR_SIZE + plen, "%s: accepted %zu bytes, length %" PRIu64, what, len,
	      plen);
	CHECK(rd_le(p + 8, 4) == T_COMM && rd_le(p + 12, 4) < T_NRANKS, "%s: bad comm or rank",
	      what);
	CHECK(seq >= T_SEQ_LO && seq < T_SEQ_HI && step < T_NSTEPS, "%s: bad seq or step", what);
	if (step < T_NSTEPS && !request)
		CHECK(off + plen <= t_step_bytes[step], "%s: accepted write outside region", what);
	if (request)
		CHECK(plen && plen % OR_WIRE_RANGE_SIZE == 0 && off == 0 && rd_le(p + 30, 2) == 0,
		      "%s: bad request", what);
	else
		CHECK(control ? plen == 0 : rd_le(p + 30, 2) - 1 < T_CONTRIB,
		      "%s: bad control length or contrib", what);
}

static const uint64_t edge_values[] = {0,      1,           2,          7,         8,    99,
                                       100,    103,         104,        1000,      4096, 0x7fff,
                                       0xffff, 0xfffffff0u, UINT32_MAX, UINT64_MAX};

static void mutate(uint8_t *p, size_t *len)
{
	static const int fields[][2] = {{5, 1},  {6, 2},  {8, 4},  {12, 4},
	                                {16, 8}, {24, 4}, {28, 2}, {30, 2}};
	int n = 1 + (int)rndn(4);

	while (n--) {
		switch (rndn(5)) {
		case 0:
			p[rndn(OR_WIRE_HDR_SIZE)] ^= (uint8_t)(1u << rndn(8));
			break;
		case 1:
			if (*len)
				p[rndn((uint32_t)*len)] = (uint8_t)rnd();
			break;
		case 2: {
			const int *f = fields[rndn(sizeof(fields) / sizeof(fields[0]))];
			uint64_t v = rndn(2) ? rnd() : edge_values[rndn(16)];

			for (int i = 0; i < f[1]; i++)
				p[f[0] + i] = (uint8_t)(v >> (8 * i));
			break;
		}
		case 3:
			*len = rndn(OR_WIRE_HDR_SIZE + 300);
			break;
		default:
			*len += rndn(64);
			break;
		}
	}
	/* Half the time keep the check valid so the semantic checks get exercised. */
	if (rndn(2) && *len >= OR_WIRE_HDR_SIZE)
		ref_fix_check(p);
}

static void test_fuzz(void)
{
	long accepted_random = 0, accepted_mutant = 0;
	struct or_wire_hdr h;

	for (int i = 0; i < 1000000; i++) {
		size_t len = rndn(OR_WIRE_HDR_SIZE + 128);

		for (size_t j = 0; j < len; j += 8) {
			uint64_t r = rnd();

			memcpy(pkt + j, &r, sizeof(r));
		}
		/* Give some strings a plausible start so they reach the checksum. */
		if (len >= 5 && (i & 1)) {
			memcpy(pkt, "RTPO\1", 5);
			if (len >= OR_WIRE_HDR_SIZE && (i & 2))
				ref_fix_check(pkt);
		}
		if (receive(pkt, len) == OR_WIRE_OK) {
			accepted_random++;
			check_accepted(pkt, len, "random bytes");
		}
	}
	for (int i = 0; i < 1000000; i++) {
		size_t len;

		valid_hdr(&h);
		if (h.length > 64)
			h.length = (uint16_t)(1 + h.length % 64);
		len = build(&h, pkt);
		mutate(pkt, &len);
		if (receive(pkt, len) == OR_WIRE_OK) {
			accepted_mutant++;
			check_accepted(pkt, len, "mutated packet");
		}
	}
	/* A fuzzer that never gets past the checks proves nothing. */
	CHECK(accepted_mutant > 1000, "only %ld mutated packets accepted", accepted_mutant);
	printf("fuzz: accepted %ld random strings, %ld mutants of 1000000 each\n", accepted_random,
	       accepted_mutant);
}

/* Repair requests' ranges: every range inside the region, or the request is dropped. */
static void test_ranges(void)
{
	struct or_wire_range in[3] = {{0, 1}, {5, 10}, {99, 1}}, out[4];
	uint8_t buf[4 * OR_WIRE_RANGE_SIZE];
	size_t len = or_wire_ranges_encode(in, 3, buf);

	CHECK(len == 3 * OR_WIRE_RANGE_SIZE, "encoded %zu bytes", len);
	CHECK(or_wire_ranges_decode(buf, len, 100, out, 4) == 3, "three ranges in 100 packets");
	CHECK(out[1].first == 5 && out[1].count == 10 && out[2].first == 99, "ranges read back");
	CHECK(or_wire_ranges_decode(buf, len, 99, out, 4) == OR_WIRE_ERANGE, "past the region");
	CHECK(or_wire_ranges_decode(buf, len, 100, out, 2) == OR_WIRE_ERANGE, "more than room");
	CHECK(or_wire_ranges_decode(buf, len - 1, 100, out, 4) == OR_WIRE_ERANGE, "torn range");
	CHECK(or_wire_ranges_decode(buf, 0, 100, out, 4) == OR_WIRE_ERANGE, "no range");
	in[0].count = 0;
	or_wire_ranges_encode(in, 1, buf);
	CHECK(or_wire_ranges_decode(buf, OR_WIRE_RANGE_SIZE, 100, out, 4) == OR_WIRE_ERANGE,
	      "empty range");
	in[0].first = UINT32_MAX, in[0].count = 2;
	or_wire_ranges_encode(in, 1, buf);
	CHECK(or_wire_ranges_decode(buf, OR_WIRE_RANGE_SIZE, UINT32_MAX, out, 4) == OR_WIRE_ERANGE,
	      "range wrapping 32 bits");
}

static void test_names(void)
{
	for (int r = OR_WIRE_ERANGE; r <= OR_WIRE_OK; r++)
		CHECK(strcmp(or_wire_reject_name(r), "?") != 0, "no name for %d", r);
	CHECK(strcmp(or_wire_reject_name(OR_WIRE_ERANGE - 1), "?") == 0, "name for unknown");
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x6f707472u;

	rng_state = seed ? seed : 1;
	test_golden();
	test_round_trip();
	test_structure();
	test_bit_flips();
	test_semantics();
	test_failed_notice();
	test_probe();
	test_consist();
	test_fuzz();
	test_names();
	test_ranges();
	if (failures) {
		printf("test_wire: %d check(s) failed (seed %" PRIu64 ")\n", failures, seed);
		return 1;
	}
	printf("test_wire: all checks passed (seed %" PRIu64 ")\n", seed);
	return 0;
}
