/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether a bounded communicator uses multicast, agreed by every rank at its creation
 * (docs/design.md, "Multicast").  Called by comm.c after the names exchange.
 */
#ifndef OR_MULTICAST_H
#define OR_MULTICAST_H

#include <stdint.h>

#include "internal.h"

/*
 * state[i]: oob rank i's or_bounded_mcast_state(), as every rank received it in the names
 * exchange (0: no bounded channel).  net: this rank's communicator on the network, or NULL
 * (a rank whose host leader carries its data).  status: this rank's outcome so far.  Every
 * rank of oob calls it with the same state[]; it takes part in one more allgather when all
 * members joined the group.  Returns status, another rank's error, or -OPTIREDUCE_ENOTSUP
 * when a rank asked for multicast (on) and it does not work.
 */
int or_mcast_agree(optireduce_comm_t *net, const struct optireduce_oob *oob, const uint8_t *state,
                   int status);

#endif /* OR_MULTICAST_H */
