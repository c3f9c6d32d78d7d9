/*
 * Algorithm choice: OPTIREDUCE_ALGORITHM is "auto", one algorithm name, or a
 * tune string of byte ranges in the style of UCC, "0-64k:tree,64k-inf:ring".
 * A range whose algorithm cannot run on the chosen channel is skipped.
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

static const struct or_alg *auto_choice(size_t bytes, int bounded)
{
	static const char *exact_pref[] = {"ring"};
	static const char *bounded_pref[] = {"transpose", "ring"};
	const char **pref = bounded ? bounded_pref : exact_pref;
	size_t n = bounded ? 2 : 1;

	(void)bytes;
	for (size_t i = 0; i < n; i++) {
		const struct or_alg *a = or_alg_by_name(pref[i]);
		if (usable(a, bounded))
			return a;
	}
	return or_alg_table[0];
}

/* Parses one "lo-hi:name" entry; returns the algorithm if bytes is in [lo, hi). */
static const struct or_alg *match_range(const char *entry, size_t bytes)
{
	char lo_s[32], hi_s[32], name[64];
	uint64_t lo, hi;

	if (sscanf(entry, "%31[^-]-%31[^:]:%63s", lo_s, hi_s, name) != 3)
		return NULL;
	if (or_parse_size(lo_s, &lo) || or_parse_size(hi_s, &hi))
		return NULL;
	if (bytes < lo || (hi != UINT64_MAX && bytes >= hi))
		return NULL;
	return or_alg_by_name(name);
}

int or_tune_valid(const char *tune);

const struct or_alg *or_select_algorithm(optireduce_comm_t *comm, size_t bytes, int bounded)
{
	const char *tune = or_param_str(&comm->params, OR_P_ALGORITHM);
	char buf[OR_PARAM_STRLEN];
	const struct or_alg *a;

	if (!*tune || strcasecmp(tune, "auto") == 0)
		return auto_choice(bytes, bounded);
	if (!strchr(tune, ':')) {
		a = or_alg_by_name(tune);
		return usable(a, bounded) ? a : auto_choice(bytes, bounded);
	}
	snprintf(buf, sizeof(buf), "%s", tune);
	for (char *save, *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		a = match_range(e, bytes);
		if (usable(a, bounded))
			return a;
	}
	return auto_choice(bytes, bounded);
}
