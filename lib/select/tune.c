/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One entry of a tune string, "lo-hi:names" (docs/design.md, "Selection"): read by the rule
 * (select.c) and by the measured choice (measure.c), which both sit above it.
 */
#include <stdint.h>
#include <string.h>

#include "lib/core/internal.h"

int or_tune_entry(const char *e, size_t len, uint64_t *lo, uint64_t *hi, char *names,
                  size_t names_len)
{
	char buf[OR_PARAM_STRLEN], *dash, *colon;

	if (len == 0 || len >= sizeof(buf))
		return -OPTIREDUCE_EINVAL;
	memcpy(buf, e, len);
	buf[len] = '\0';
	dash = strchr(buf, '-');
	colon = dash ? strchr(dash, ':') : NULL;
	if (!dash || !colon || strchr(colon + 1, ':') || strlen(colon + 1) >= names_len)
		return -OPTIREDUCE_EINVAL;
	*dash = *colon = '\0';
	if (or_parse_size(buf, lo) || or_parse_size(dash + 1, hi) || *lo >= *hi ||
	    *lo == UINT64_MAX)
		return -OPTIREDUCE_EINVAL;
	strcpy(names, colon + 1);
	return 0;
}
