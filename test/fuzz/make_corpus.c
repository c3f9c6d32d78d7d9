/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes the fuzz targets' seed corpus: valid datagrams, made with the library's own
 * encoder, so that the fuzzers start from packets the receiver accepts and mutate from
 * there.  Usage: make_corpus DIR; writes DIR/wire/<name> and DIR/rx/<name>.  The files in
 * test/fuzz/corpus/ are its output (run by "make fuzz-corpus").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/bounded/wire.h"
#include "fuzz_rx.h"

#define BLOCK_BYTES (16 * 4) /* fuzz_rx.c: blocks of 16 floats */

static const char *outdir;

static void write_file(const char *target, const char *name, const uint8_t *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* One datagram: header, then length bytes of a recognisable payload. */
static size_t datagram(uint8_t *out, uint32_t sender, uint64_t seq, uint16_t step, uint8_t flags,
                       uint32_t offset, uint16_t length, uint16_t contrib)
{
	struct or_wire_hdr h = {
	    .magic = OR_WIRE_MAGIC,
	    .version = OR_WIRE_VERSION,
	    .flags = flags,
	    .step = step,
	    .comm_id = FUZZ_COMM_ID,
	    .sender = sender,
	    .seq = seq,
	    .offset = offset,
	    .length = flags & OR_WIRE_FLAG_CONTROL ? 0 : length,
	    .contrib = contrib,
	    .timeout_est_us = 1500,
	    .loss = 655,
	};

	if (or_wire_encode(&h, out, OR_WIRE_HDR_SIZE) != OR_WIRE_HDR_SIZE)
		exit(1);
	for (uint16_t i = 0; i < h.length; i++)
		out[OR_WIRE_HDR_SIZE + i] = (uint8_t)(i * 7 + sender);
	return OR_WIRE_HDR_SIZE + h.length;
}

static void wire_seeds(void)
{
	uint8_t p[OR_WIRE_HDR_SIZE + 1424];

	/* fuzz_wire.c's receiver: 5 ranks, operations [100, 164), step regions 4096, 0, 1500. */
	write_file("wire", "data", p, datagram(p, 1, 100, 0, 0, 0, 64, 1));
	write_file("wire", "data-last", p, datagram(p, 4, 163, 2, OR_WIRE_FLAG_LAST, 1424, 68, 5));
	write_file("wire", "control", p, datagram(p, 2, 101, 0, OR_WIRE_FLAG_CONTROL, 0, 0, 0));
	write_file("wire", "full-payload", p, datagram(p, 3, 120, 0, 0, 2664, 1424, 2));
	write_file("wire", "failed", p,
	           datagram(p, 2, 7, 0, OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_FAILED, 3, 0, 0));
	write_file("wire", "probe", p,
	           datagram(p, 3, 0, 0, OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_PROBE, 0, 0, 0));
	/* Parameter consistent: a bitmap fragment, a request for it, a fetch request of one
	 * range and a fetched packet. */
	write_file("wire", "consist-bitmap", p,
	           datagram(p, 1, 100, 0, OR_WIRE_FLAG_CONSIST, 0, 12, 0));
	write_file("wire", "consist-ask", p,
	           datagram(p, 3, 130, 0, OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_CONTROL, 0, 0, 0));
	write_file("wire", "consist-fetch", p,
	           datagram(p, 2, 101, 0, OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_REQUEST, 0,
	                    OR_WIRE_RANGE_SIZE, 0));
	write_file(
	    "wire", "consist-fetched", p,
	    datagram(p, 4, 150, 0, OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_RESENT, 1424, 1424, 0));
}

/* A seed of the receive-path target: its set-up bytes, then length-prefixed datagrams. */
struct rx_seed {
	uint8_t buf[16384];
	size_t len;
};

static void rx_add(struct rx_seed *s, uint32_t sender, uint64_t seq, uint16_t step, uint8_t flags,
                   uint32_t offset, uint16_t length, uint16_t contrib)
{
	size_t n = datagram(s->buf + s->len + 2, sender, seq, step, flags, offset, length, contrib);

	s->buf[s->len] = (uint8_t)n;
	s->buf[s->len + 1] = (uint8_t)(n >> 8);
	s->len += 2 + n;
}

/* Every packet of sender's region of step: whole payloads, the short one last and flagged. */
static void rx_region(struct rx_seed *s, size_t payload, uint32_t sender, uint64_t seq,
                      uint16_t step, size_t bytes, uint16_t contrib)
{
	for (size_t off = 0; off < bytes; off += payload) {
		size_t len = bytes - off < payload ? bytes - off : payload;
		rx_add(s, sender, seq, step, off + len == bytes ? OR_WIRE_FLAG_LAST : 0,
		       (uint32_t)off, (uint16_t)len, contrib);
	}
}

/*
 * Transpose on 3 ranks, this rank 1, 6 blocks (2 a shard): both phases from both peers,
 * a duplicate, a payload-less packet, and packets of the next operation that get parked.
 * when: 0 regions first, 1 started first, 2 datagrams first (fuzz_rx.c, byte 0).
 */
static void transpose_seed(const char *name, int when, int big)
{
	struct rx_seed s = {.len = 2};
	size_t payload = big ? 1424 : 64, shard = 2 * BLOCK_BYTES;

	s.buf[0] = (uint8_t)(1 | 1 << 2 | when << 5 | (big ? 0x80 : 0));
	s.buf[1] = 5;
	for (uint32_t j = 0; j < 3; j += 2) {
		rx_region(&s, payload, j, FUZZ_SEQ, 0, shard, 1);
		rx_region(&s, payload, j, FUZZ_SEQ, 1, shard, 3);
	}
	rx_add(&s, 0, FUZZ_SEQ, 0, 0, 0, (uint16_t)(payload < shard ? payload : shard), 1);
	/* No payload, at the end of a region of whole packets: once marked seen[npkts]. */
	rx_add(&s, 2, FUZZ_SEQ, 0, OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_LAST, (uint32_t)shard, 0, 0);
	rx_region(&s, payload, 2, FUZZ_SEQ + 1, 0, shard, 1);
	write_file("rx", name, s.buf, s.len);
}

/*
 * Transpose on 3 ranks with parameter consistent (fuzz_rx.c, byte 1 bit 4), this rank 1,
 * 6 blocks: the final phase closed with nothing received, then both peers' bitmaps (one
 * byte each), a request for this rank's, a fetch request, and the fetched packets of both
 * peers' shards.
 */
static void consistent_seed(const char *name)
{
	struct rx_seed s = {.len = 2};
	uint8_t f = OR_WIRE_FLAG_CONSIST;

	s.buf[0] = (uint8_t)(1 | 1 << 2);
	s.buf[1] = 5 | 1 << 4;
	rx_add(&s, 0, FUZZ_SEQ, 0, f, 0, 1, 0);
	rx_add(&s, 2, FUZZ_SEQ, 0, f, 0, 1, 0);
	rx_add(&s, 0, FUZZ_SEQ, 0, f | OR_WIRE_FLAG_CONTROL, 0, 0, 0);
	rx_add(&s, 2, FUZZ_SEQ, 0, f | OR_WIRE_FLAG_REQUEST, 0, OR_WIRE_RANGE_SIZE, 0);
	for (uint32_t j = 0; j < 3; j += 2)
		for (uint32_t off = 0; off < 2 * BLOCK_BYTES; off += 64)
			rx_add(&s, j, FUZZ_SEQ, 0, f | OR_WIRE_FLAG_RESENT, off, 64, 0);
	write_file("rx", name, s.buf, s.len);
}

/*
 * The ring on 4 ranks, this rank 2, 8 blocks: one step from the left neighbour each; with
 * failed 1, then a FAILED notice from rank 1 naming rank 3 (peerfail.c); with 2, a multicast
 * probe from rank 1 instead (mcast.c).
 */
static void ring_seed(const char *name, int failed)
{
	struct rx_seed s = {.len = 2};

	s.buf[0] = (uint8_t)(2 | 2 << 2 | 1 << 4);
	s.buf[1] = 7;
	for (uint16_t p = 0; p < 6; p++)
		rx_region(&s, 64, 1, FUZZ_SEQ, p, 2 * BLOCK_BYTES, (uint16_t)(p < 3 ? p + 1 : 4));
	if (failed == 1)
		rx_add(&s, 1, FUZZ_SEQ, 0, OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_FAILED, 3, 0, 0);
	if (failed == 2)
		rx_add(&s, 1, 0, 0, OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_PROBE, 0, 0, 0);
	write_file("rx", name, s.buf, s.len);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) && errno != EEXIST) {
		perror(outdir);
		return 1;
	}
	wire_seeds();
	transpose_seed("transpose-3", 0, 0);
	transpose_seed("transpose-3-started", 1, 0);
	transpose_seed("transpose-3-parked", 2, 0);
	transpose_seed("transpose-3-1424", 0, 1);
	consistent_seed("transpose-3-consistent");
	ring_seed("ring-4", 0);
	ring_seed("ring-4-failed", 1);
	ring_seed("ring-4-probe", 2);
	return 0;
}
