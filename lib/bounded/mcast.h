/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast's state (docs/design.md, "Multicast"): the group's endpoint and the phases that
 * use it (mcast_group.c), and the share of the rate they send at (features/mcast.c).
 */
#ifndef OR_BOUNDED_MCAST_H
#define OR_BOUNDED_MCAST_H

#include <stdint.h>

#define OR_MCAST_FIRST_TRY   4    /* clean operations before the whole rate is tried */
#define OR_MCAST_LAST_TRY    256  /* the longest wait between tries */
#define OR_MCAST_EXCESS_LOSS 0.01 /* more lost in the multicast phase than in the others */

struct or_bd_mcast {
	int want;       /* parameter multicast: OR_MCAST_AUTO, _ON or _OFF */
	int joined;     /* this rank's endpoint joined the group */
	int on;         /* every rank heard every other: phases with bcast go to the group */
	uint32_t group; /* IPv4 address, host byte order */
	uint16_t port;
	uint8_t *heard; /* [size]: bit 0, that rank's probe came over the group; bit 1, its
	                 * unicast copy came (it had begun probing) */
	uint32_t nheard, nbegun;
	double begun_us; /* when the last rank's unicast copy came */
	/* Of the pacer's rate, what a multicast phase sends at: 1/(N-1) (each receiver gets
	 * what unicast gives it), or 1 once clean_ops operations in a row lost no more in it
	 * than in their other phases, until it does (features/mcast.c, op_finish). */
	double share;
	unsigned clean, clean_ops;
	char why[200]; /* why multicast is off, or where it goes */
};

#endif /* OR_BOUNDED_MCAST_H */
