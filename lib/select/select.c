/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Algorithm choice (docs/design.md, "Selection").  In order, the first that names an
 * algorithm for the operation's size and channel wins:
 *   1. the algorithm parameter (OPTIREDUCE_ALGORITHM), unless "auto": one name, or a
 *      tune string for both modes;
 *   2. tune_exact or tune_bounded, whichever is the operation's mode, unless "auto";
 *   3. exact mode: measure_exact, the fastest of its algorithms as measured (measure.c);
 *   4. the built-in rule of the mode (builtin_rule).
 * A tune string is byte ranges in the style of UCC, "0-64k:tree,64k-inf:ring": half-open
 * [lo, hi), the first range that holds the size wins, and a size no range holds goes on
 * to the next step.  A range of the algorithm parameter whose algorithm cannot run on the
 * operation's channel is skipped; tune_bounded may name only algorithms that run bounded.
 * Every string is checked when the parameter is set (or_select_check_param), so a typo is
 * -OPTIREDUCE_EINVAL there and changes nothing, instead of a silent "auto" here.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/op/algorithm.h"
#include "lib/core/internal.h"
#include "measure.h"

#define MAX_RANGES 16

struct range {
	uint64_t lo, hi; /* [lo, hi); hi UINT64_MAX: no end */
	const struct or_alg *alg;
};

static int usable(const struct or_alg *a, int bounded)
{
	return a && (a->channels & (bounded ? OR_CHAN_BOUNDED : OR_CHAN_EXACT));
}

static int is_auto(const char *s)
{
	return !*s || strcasecmp(s, "auto") == 0;
}

/* One "lo-hi:name" entry of len bytes: 0, or -OPTIREDUCE_EINVAL. */
static int parse_range(const char *e, size_t len, struct range *r)
{
	char name[OR_PARAM_STRLEN];

	if (or_tune_entry(e, len, &r->lo, &r->hi, name, sizeof(name)))
		return -OPTIREDUCE_EINVAL;
	r->alg = or_alg_by_name(name);
	return r->alg ? 0 : -OPTIREDUCE_EINVAL;
}

/*
 * A tune string into at most MAX_RANGES ranges: *n of them, 0 for "auto".  One algorithm
 * name alone is the range 0-inf.  Empty entries, stray text, unknown names and empty
 * ranges are -OPTIREDUCE_EINVAL.
 */
static int parse_tune(const char *tune, struct range *r, int *n)
{
	const char *e = tune;

	*n = 0;
	if (is_auto(tune))
		return 0;
	if (!strchr(tune, ':')) {
		r[0] = (struct range){0, UINT64_MAX, or_alg_by_name(tune)};
		*n = r[0].alg ? 1 : 0;
		return r[0].alg ? 0 : -OPTIREDUCE_EINVAL;
	}
	for (;;) {
		const char *comma = strchr(e, ',');
		size_t len = comma ? (size_t)(comma - e) : strlen(e);
		if (*n == MAX_RANGES || parse_range(e, len, &r[*n]))
			return -OPTIREDUCE_EINVAL;
		(*n)++;
		if (!comma)
			return 0;
		e = comma + 1;
	}
}

/* The algorithm the tune string names for bytes on this channel, or NULL. */
static const struct or_alg *from_tune(const char *tune, size_t bytes, int bounded)
{
	struct range r[MAX_RANGES];
	int n;

	if (parse_tune(tune, r, &n))
		return NULL;
	for (int i = 0; i < n; i++)
		if (bytes >= r[i].lo && (r[i].hi == UINT64_MAX || bytes < r[i].hi) &&
		    usable(r[i].alg, bounded))
			return r[i].alg;
	return NULL;
}

/*
 * The built-in rule, measured on four emulated hosts (bench/PERFORMANCE.md, "Choosing the
 * algorithm"; docs/design.md, "Selection").  Exact: recursive doubling up to
 * small_msg_threshold bytes (log2 N latencies), Rabenseifner's algorithm up to
 * medium_msg_threshold (recursive doubling's steps, each with half the bytes of the one
 * before), the ring above.  Bounded: Transpose everywhere.  Written as a tune string, so
 * that it is printed and parsed like a user's; ranges are half-open, "at most" ends one
 * byte later.
 */
static void builtin_rule(const optireduce_comm_t *comm, int bounded, char *buf, size_t len)
{
	unsigned long long small =
	    (unsigned long long)or_param_int(&comm->params, OR_P_SMALL_MSG_THRESHOLD);
	unsigned long long medium =
	    (unsigned long long)or_param_int(&comm->params, OR_P_MEDIUM_MSG_THRESHOLD);
	unsigned long long lo = 0; /* where the next range starts */
	size_t n = 0;

	if (bounded) {
		snprintf(buf, len, "0-inf:transpose");
		return;
	}
	if (small > 0) {
		n += (size_t)snprintf(buf, len, "0-%llu:recursive_doubling,", small + 1);
		lo = small + 1;
	}
	if (medium > small && n < len) {
		n += (size_t)snprintf(buf + n, len - n, "%llu-%llu:rabenseifner,", lo, medium + 1);
		lo = medium + 1;
	}
	if (n < len)
		snprintf(buf + n, len - n, "%llu-inf:ring", lo);
}

int or_select_check_param(enum or_param_id id, const char *value)
{
	struct range r[MAX_RANGES];
	int n;

	if (id == OR_P_MULTICAST_RANGE) /* not a tune string, but checked when set all the same */
		return or_bounded_mcast_range(value, NULL, NULL);
	if (id == OR_P_MEASURE_EXACT)
		return or_measure_check(value);
	if (id != OR_P_ALGORITHM && id != OR_P_TUNE_EXACT && id != OR_P_TUNE_BOUNDED)
		return 0;
	if (parse_tune(value, r, &n))
		return -OPTIREDUCE_EINVAL;
	for (int i = 0; i < n; i++)
		if ((id == OR_P_TUNE_EXACT && !usable(r[i].alg, 0)) ||
		    (id == OR_P_TUNE_BOUNDED && !usable(r[i].alg, 1)))
			return -OPTIREDUCE_EINVAL;
	return 0;
}

const struct or_alg *or_select_algorithm(optireduce_comm_t *comm, size_t bytes, int bounded,
                                         struct or_trial *trial)
{
	char rule[OR_PARAM_STRLEN];
	const struct or_alg *a;

	/* Parameter consistent agrees on Transpose's final phase (docs/design.md,
	 * "Replica-consistent results"). */
	if (bounded && or_param_int(&comm->params, OR_P_CONSISTENT) && comm->size > 1)
		return from_tune("0-inf:transpose", bytes, bounded);
	a = from_tune(or_param_str(&comm->params, OR_P_ALGORITHM), bytes, bounded);
	if (!a)
		a = from_tune(
		    or_param_str(&comm->params, bounded ? OR_P_TUNE_BOUNDED : OR_P_TUNE_EXACT),
		    bytes, bounded);
	if (!a && !bounded && trial)
		a = or_measure_pick(comm, bytes, trial);
	if (a)
		return a;
	builtin_rule(comm, bounded, rule, sizeof(rule));
	a = from_tune(rule, bytes, bounded);
	return a ? a : or_alg_table[0];
}

/* The rule as optireduce_comm_algorithm_rule prints it, before what measurement chose. */
static int describe_rule(const optireduce_comm_t *comm, int bounded, char *buf, size_t len)
{
	const char *alg = or_param_str(&comm->params, OR_P_ALGORITHM);
	const char *tune =
	    or_param_str(&comm->params, bounded ? OR_P_TUNE_BOUNDED : OR_P_TUNE_EXACT);
	const char *measure = or_param_str(&comm->params, OR_P_MEASURE_EXACT);
	const char *tname = bounded ? "tune_bounded" : "tune_exact";
	char rule[OR_PARAM_STRLEN];
	size_t n = 0;

	buf[0] = '\0';
	builtin_rule(comm, bounded, rule, sizeof(rule));
	if (!is_auto(alg))
		n += (size_t)snprintf(buf, len, "%s (algorithm), then ", alg);
	if (!is_auto(tune) && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s (%s), then ", tune, tname);
	if (!bounded && *measure && strcmp(measure, "none") != 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s measured (measure_exact), then ",
		                      measure);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s (built-in)", rule);
	return n >= len ? -OPTIREDUCE_EOVERFLOW : 0;
}

int optireduce_comm_algorithm_rule(const optireduce_comm_t *comm, enum optireduce_mode mode,
                                   char *buf, size_t len)
{
	char chosen[OR_PARAM_STRLEN];
	int bounded = mode == OPTIREDUCE_MODE_BOUNDED, ret;
	size_t n;

	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	if (!buf || len == 0 || (mode != OPTIREDUCE_MODE_EXACT && !bounded))
		return -OPTIREDUCE_EINVAL;
	ret = describe_rule(comm, bounded, buf, len);
	if (ret || bounded)
		return ret;
	or_measure_describe(comm, chosen, sizeof(chosen));
	n = strlen(buf);
	if (*chosen &&
	    snprintf(buf + n, len - n, "; measured so far: %s", chosen) >= (int)(len - n))
		return -OPTIREDUCE_EOVERFLOW;
	return 0;
}
