/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bounded channel's features and packet kinds (feature.h): one entry per feature, in
 * the order their hooks run, and one row per kind of datagram (wire.h, or_wire_kind).  A
 * new feature or kind is a line here; the centre names none of them.
 */
#include "lib/bounded/feature.h"

extern const struct or_bd_feature or_peers_feature;    /* features/peerfail.c */
extern const struct or_bd_feature or_repair_feature;   /* features/repair.c */
extern const struct or_bd_feature or_consist_feature;  /* features/consistent.c */
extern const struct or_bd_feature or_catchup_feature;  /* features/catchup.c */
extern const struct or_bd_feature or_mcast_feature;    /* features/mcast.c */
/* Peer failure first: a dead peer ends the progress pass before repair sends. */
const struct or_bd_feature *const or_bd_features[] = {
    &or_peers_feature, &or_repair_feature, &or_consist_feature,
    &or_catchup_feature, &or_mcast_feature, NULL,
};

/* The handlers of the kinds (feature.h, struct or_bd_kind). */
int or_mcast_probe_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
                      uint32_t src, int check_source); /* features/mcast.c */
int or_peers_failed_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
                       uint32_t src, int check_source); /* features/peerfail.c */
int or_consist_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
                  uint32_t src, int check_source); /* features/consistent.c */
int or_rep_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
              uint32_t src, int check_source); /* features/resend.c */

const struct or_bd_kind or_bd_kinds[OR_WIRE_KINDS] = {
    [OR_WIRE_KIND_DATA] = {.name = "data"}, /* the centre's own (rx.c) */
    [OR_WIRE_KIND_PROBE] = {.name = "probe", .rx = or_mcast_probe_rx},
    [OR_WIRE_KIND_FAILED] = {.name = "failed", .rx = or_peers_failed_rx},
    [OR_WIRE_KIND_CONSIST] = {.name = "consist", .rx = or_consist_rx},
    [OR_WIRE_KIND_REPAIR] = {.name = "repair", .rx = or_rep_rx},
};
