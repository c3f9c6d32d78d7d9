/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive-path fuzz target's fixed world (fuzz_rx.c), shared with the seed corpus
 * generator (make_corpus.c) so that the seeds are datagrams this receiver accepts.
 */
#ifndef OR_FUZZ_RX_H
#define OR_FUZZ_RX_H

#define FUZZ_COMM_ID   0x1234abcdu
#define FUZZ_SEQ       7u /* the operation the datagrams are for; FUZZ_SEQ + 1 is the next */
#define FUZZ_MAX_RANKS 5

/* rx_stubs.c: the channel's clock, which the harness moves instead of waiting. */
void fuzz_clock_reset(void);
void fuzz_clock_advance(double us);
/* rx_stubs.c: the endpoint, whose sends vanish and whose receives are posted nowhere. */
struct or_dgram;
extern struct or_dgram fuzz_endpoint;

#endif
