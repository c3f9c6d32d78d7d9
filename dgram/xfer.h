/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A transfer's completion context, shared by the transports (ofi/, udp/): the caller posts
 * a send or receive with one, and the transport's poll marks it done and calls cb.
 */
#ifndef OR_XPORT_XFER_H
#define OR_XPORT_XFER_H

#include <stddef.h>
#include <stdint.h>

typedef void (*or_xport_cb)(void *arg);

/* prov must come first: it is libfabric's scratch space (fi_context2), the address it hands
 * back, and the kernel path's link in its queues and a receive's borrow (udp_int.h), which
 * it keeps between posts: a receive is zeroed before its first post. */
struct or_xport_xfer {
	void *prov[8];
	int done;        /* set by the transport's poll */
	int error;       /* 0 or a negative OPTIREDUCE code */
	size_t len;      /* bytes received */
	/* Where a completed receive's len bytes are: the posted buffer, or memory of the
	 * transport that stays valid and unchanged until this transfer is posted again or the
	 * endpoint closes. */
	const void *data;
	or_xport_cb cb;   /* optional, called from poll after done is set */
	void *cb_arg;
	uint32_t src;   /* a receive's sender: its index in the address vector, or OR_SRC_* */
	uint32_t flags; /* OR_XFER_*, the transport's own */
	/* Posted and not completed yet, on an RDM endpoint (or_ofi_quiesce). */
	struct or_xport_xfer *posted_next;
	struct or_xport_xfer *posted_prev;
};

#define OR_XPORT_POSTED       0x1u /* on its endpoint's list of posted transfers */
#define OR_XPORT_CANCEL_ASKED 0x2u /* or_ofi_quiesce asked libfabric to cancel it */

/* The transport does not report sources, or the completion is not a receive. */
#define OR_SRC_UNKNOWN UINT32_MAX
/* The datagram came from an address that is not in the address vector. */
#define OR_SRC_STRANGER (UINT32_MAX - 1)

static inline void or_xport_done(struct or_xport_xfer *x, int error, size_t len)
{
	x->error = error;
	x->len = len;
	x->done = 1;
	if (x->cb)
		x->cb(x->cb_arg);
}

#endif /* OR_XPORT_XFER_H */
