/* SPDX-License-Identifier: BSD-3-Clause */
/* Segmentation and its reverse (seg.h). */
#include "seg.h"

size_t or_udp_split(size_t len, size_t gso, struct or_udp_span *out, size_t max)
{
	size_t n = 0, off = 0;

	if (!len || !max)
		return 0;
	if (!gso || gso >= len) {
		out[0].off = 0;
		out[0].len = len;
		return 1;
	}
	while (off < len && n < max) {
		out[n].off = off;
		out[n].len = len - off < gso ? len - off : gso;
		off += out[n].len;
		n++;
	}
	return n;
}

size_t or_udp_run(const size_t *lens, size_t n)
{
	size_t seg, k, bytes;

	if (!n)
		return 0;
	seg = lens[0];
	bytes = seg;
	if (!seg)
		return 1;
	/* The kernel cuts at seg: every datagram but the last must be exactly that long. */
	for (k = 1; k < n && k < OR_UDP_GSO_SEGS; k++) {
		if (!lens[k] || lens[k] > seg || bytes + lens[k] > OR_UDP_GSO_BYTES)
			break;
		bytes += lens[k];
		if (lens[k] < seg) {
			k++;
			break;
		}
	}
	return k;
}
