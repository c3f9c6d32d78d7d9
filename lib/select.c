/*
 * Algorithm choice: OPTIREDUCE_ALGORITHM is "auto", one algorithm name, or a
 * tune string of byte ranges in the style of UCC, "0-16k:recursive_doubling,16k-inf:ring".
 * A range whose algorithm cannot run on the chosen channel is skipped.
 * Names and ranges are checked when the parameter is set (or_select_check_param), so
 * a typo is -OPTIREDUCE_EINVAL there instead of a silent "auto" here.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "algorithm.h"
#include "internal.h"

static int usable(const struct or_alg *a, int bounded)
{
	return a && (a->channels & (bounded ? OR_CHAN_BOUNDED : OR_CHAN_EXACT));
}

/*
 * Exact: up to small_msg_threshold the log2(N) latencies of recursive doubling beat the
 * 2(N-1) of the ring; above it the ring's N-fold smaller messages win.  The default, 16k,
 * is tcp;ofi_rxm's eager limit: a larger message costs a rendezvous round trip, which
 * recursive doubling pays on the whole buffer at every step (measured 4 ranks, one host:
 * 16 KiB 130-190 us vs ring 250-290; 32 KiB 520-1070 vs 285-370).
 */
static const struct or_alg *auto_choice(const optireduce_comm_t *comm, size_t bytes, int bounded)
{
	static const char *small_pref[] = {"recursive_doubling", "ring"};
	static const char *exact_pref[] = {"ring"};
	static const char *bounded_pref[] = {"transpose", "ring"};
	size_t small = (size_t)or_param_int(&comm->params, OR_P_SMALL_MSG_THRESHOLD);
	int is_small = small && bytes <= small;
	const char **pref = bounded ? bounded_pref : is_small ? small_pref : exact_pref;
	size_t n = bounded || is_small ? 2 : 1;

	for (size_t i = 0; i < n; i++) {
		const struct or_alg *a = or_alg_by_name(pref[i]);
		if (usable(a, bounded))
			return a;
	}
	return or_alg_table[0];
}

/* Parses one "lo-hi:name" entry: 0 and its fields, or -OPTIREDUCE_EINVAL. */
static int parse_range(const char *entry, uint64_t *lo, uint64_t *hi, const struct or_alg **a)
{
	char lo_s[32], hi_s[32], name[64], extra;

	if (sscanf(entry, "%31[^-]-%31[^:]:%63[^,]%c", lo_s, hi_s, name, &extra) != 3)
		return -OPTIREDUCE_EINVAL;
	if (or_parse_size(lo_s, lo) || or_parse_size(hi_s, hi) || *lo >= *hi)
		return -OPTIREDUCE_EINVAL;
	*a = or_alg_by_name(name);
	return *a ? 0 : -OPTIREDUCE_EINVAL;
}

/* Returns the algorithm if bytes is in [lo, hi). */
static const struct or_alg *match_range(const char *entry, size_t bytes)
{
	uint64_t lo, hi;
	const struct or_alg *a;

	if (parse_range(entry, &lo, &hi, &a))
		return NULL;
	if (bytes < lo || (hi != UINT64_MAX && bytes >= hi))
		return NULL;
	return a;
}

static int tune_valid(const char *tune)
{
	char buf[OR_PARAM_STRLEN];
	int n = 0;

	if (!*tune || strcasecmp(tune, "auto") == 0)
		return 0;
	if (!strchr(tune, ':'))
		return or_alg_by_name(tune) ? 0 : -OPTIREDUCE_EINVAL;
	if (strlen(tune) >= sizeof(buf))
		return -OPTIREDUCE_EINVAL;
	snprintf(buf, sizeof(buf), "%s", tune);
	for (char *save, *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save), n++) {
		uint64_t lo, hi;
		const struct or_alg *a;
		if (parse_range(e, &lo, &hi, &a))
			return -OPTIREDUCE_EINVAL;
	}
	return n ? 0 : -OPTIREDUCE_EINVAL;
}

int or_select_check_param(enum or_param_id id, const char *value)
{
	return id == OR_P_ALGORITHM ? tune_valid(value) : 0;
}

const struct or_alg *or_select_algorithm(optireduce_comm_t *comm, size_t bytes, int bounded)
{
	const char *tune = or_param_str(&comm->params, OR_P_ALGORITHM);
	char buf[OR_PARAM_STRLEN];
	const struct or_alg *a;

	if (!*tune || strcasecmp(tune, "auto") == 0)
		return auto_choice(comm, bytes, bounded);
	if (!strchr(tune, ':')) {
		a = or_alg_by_name(tune);
		return usable(a, bounded) ? a : auto_choice(comm, bytes, bounded);
	}
	snprintf(buf, sizeof(buf), "%s", tune);
	for (char *save, *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		a = match_range(e, bytes);
		if (usable(a, bounded))
			return a;
	}
	return auto_choice(comm, bytes, bounded);
}
