/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Measured choice of the exact-mode algorithm (docs/design.md, "Measured choice"): in the
 * byte ranges of the measure_exact parameter, the first calls of each power-of-two size
 * class try the range's algorithms in turn, then the ranks agree on the fastest, which every
 * later call of the class takes.
 */
#ifndef OR_MEASURE_H
#define OR_MEASURE_H

#include <stddef.h>

#include "optireduce.h"

struct or_alg;

#define OR_MEASURE_MAX_ALGS  4  /* algorithms one range may name */
#define OR_MEASURE_MAX_CALLS 64 /* measure_calls' maximum */

/* Which trial an operation is, for or_measure_record: slot < 0 when it is none. */
struct or_trial {
	int slot;
	int alg;
};

/*
 * The algorithm measurement gives an exact operation of bytes, or NULL when measure_exact
 * holds no range for it (the caller goes on to the built-in rule).  The first call after a
 * class's trials agrees on the fastest with the other ranks (a small exact allreduce, posted
 * and waited for here, at the same call on every rank).  trial says which trial this is.
 */
const struct or_alg *or_measure_pick(optireduce_comm_t *comm, size_t bytes, struct or_trial *trial);
/* A trial that completed in us microseconds on this rank. */
void or_measure_record(optireduce_comm_t *comm, const struct or_trial *trial, double us);
/* What measurement chose so far, as "lo-hi:name,..." of the classes decided; "" for none. */
void or_measure_describe(const optireduce_comm_t *comm, char *buf, size_t len);
void or_measure_free(optireduce_comm_t *comm);
/* measure_exact's value: 0 or -OPTIREDUCE_EINVAL. */
int or_measure_check(const char *value);

#endif /* OR_MEASURE_H */
