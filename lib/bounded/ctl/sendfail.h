/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datagrams the host refused or could not send, in bounded mode.  A firewall rule that
 * drops (EPERM), a full device queue (ENOBUFS), an ICMP error (ECONNREFUSED, EHOSTUNREACH)
 * or a send completion with an error status loses one datagram, as the wire would: it is
 * counted and the operation goes on.  Only a peer to which every send has failed for
 * peer_timeout_ms is reported, as -OPTIREDUCE_EPEER.
 */
#ifndef OR_SENDFAIL_H
#define OR_SENDFAIL_H

#include <stdint.h>

struct or_sendfail {
	double *since_us; /* per peer: first failure since the last send that went; 0 = none */
	uint32_t npeers;
	uint64_t total; /* datagrams not sent over the communicator's life */
	int logged;     /* the first failure has been logged (info) */
};

int or_sendfail_init(struct or_sendfail *s, uint32_t npeers);
/* Logs the total (info) when there is one, then frees. */
void or_sendfail_fini(struct or_sendfail *s);
/* 1 when a send that failed with code (a negative OPTIREDUCE code) lost a datagram; 0 when
 * it is a mistake of the caller (a bad argument, a datagram larger than the endpoint takes). */
int or_sendfail_is_loss(int code);
/* A datagram to peer went out: the peer is reachable. */
void or_sendfail_ok(struct or_sendfail *s, uint32_t peer);
/*
 * A datagram to peer failed with code at now_us (why: the system's words for it, for the
 * log).  Returns 0 when it is counted as lost, -OPTIREDUCE_EPEER when every send to peer has
 * failed for more than timeout_us, or code itself when it is not a loss.
 */
int or_sendfail_note(struct or_sendfail *s, uint32_t peer, int code, const char *why, double now_us,
                     double timeout_us);

#endif /* OR_SENDFAIL_H */
