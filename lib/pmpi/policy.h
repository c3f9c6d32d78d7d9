/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bounded-mode policy of the MPI interposer: which MPI_Allreduce calls may
 * run on liboptireduce's bounded channel.  Pure code (no MPI, no
 * environment) so it is unit-tested on its own (test/pmpi/test_policy.c).
 *
 * OPTIREDUCE_PMPI_BOUNDED holds rules separated by ';'.  A rule is a
 * comma-separated list of dtype names, optionally followed by ':' and one
 * condition on the message size in bytes (count * element size):
 *
 *   rule  := names [ ':' cond ]
 *   names := name { ',' name }
 *   name  := float | float32 | fp32 | double | float64 | fp64
 *          | half | float16 | fp16 | bfloat16 | bf16 | all | '*'
 *   cond  := '>=' N | '>' N | '<=' N | '<' N | N '-' M     (N-M: both ends included)
 *   N     := digits [ k | m | g ]                           (powers of 1024, any case)
 *
 * Examples: "float,double:>=64k", "float:<1m;double:4k-16m", "all".
 * Names are case-insensitive, blanks around tokens are ignored, and an
 * empty string, "none", "off" or "0" means no rule.  A call matches when any
 * rule names its dtype and its size meets that rule's condition.  Integer
 * dtypes are an error: bounded mode approximates, which only floating SUM
 * tolerates.  A string that does not parse is rejected whole.
 */
#ifndef ORP_POLICY_H
#define ORP_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "optireduce.h"

#define ORP_POLICY_MAX_RULES 16

struct orp_rule {
	uint32_t dtypes;    /* bit (1u << enum optireduce_dtype) per named dtype */
	uint64_t min_bytes; /* inclusive */
	uint64_t max_bytes; /* inclusive; UINT64_MAX: no upper limit */
};

struct orp_policy {
	int nrules;
	struct orp_rule rule[ORP_POLICY_MAX_RULES];
};

/*
 * Parses text (NULL is the empty policy) into *out.  Returns 0, or -1 with
 * a one-line reason in err and *out left empty (bounded off).
 */
int orp_policy_parse(const char *text, struct orp_policy *out, char *err, size_t errlen);

/* 1 if a message of this dtype and size in bytes matches a rule. */
int orp_policy_match(const struct orp_policy *p, enum optireduce_dtype dtype, uint64_t bytes);

/*
 * OPTIREDUCE_PMPI_BOUNDED_COMMS: "world" (default, also for NULL or "") or
 * "all".  Returns 0 and sets *all, or -1 with a reason in err.
 */
int orp_policy_parse_comms(const char *text, int *all, char *err, size_t errlen);

/* A digest of a policy, so ranks can check that they were given the same one. */
uint32_t orp_policy_digest(const struct orp_policy *p, int all_comms);

#endif /* ORP_POLICY_H */
