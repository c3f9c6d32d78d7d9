/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "params.h"

struct or_param_def {
	const char *name;
	enum or_param_type type;
	const char *defval;
	const char *min; /* for enums: the allowed words */
	const char *max;
	const char *desc;
};

static const struct or_param_def defs[OR_P_COUNT] = {
#define OR_PARAM_DEF(id, name, type, def, min, max, desc) {name, type, def, min, max, desc},
    OR_PARAM_TABLE(OR_PARAM_DEF)
#undef OR_PARAM_DEF
};

static const char *type_names[] = {"int", "size", "bool", "double", "string", "enum"};

int or_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (!s || !*s)
		return -OPTIREDUCE_EINVAL;
	if (strcasecmp(s, "inf") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	if (!isdigit((unsigned char)*s))
		return -OPTIREDUCE_EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -OPTIREDUCE_EINVAL;
	switch (tolower((unsigned char)*end)) {
	case '\0':
		break;
	case 'k':
		mult = 1ull << 10;
		end++;
		break;
	case 'm':
		mult = 1ull << 20;
		end++;
		break;
	case 'g':
		mult = 1ull << 30;
		end++;
		break;
	default:
		return -OPTIREDUCE_EINVAL;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || (v && mult > UINT64_MAX / v))
		return -OPTIREDUCE_EINVAL;
	*out = v * mult;
	return 0;
}

static int parse_bool(const char *s, int64_t *out)
{
	static const char *yes[] = {"1", "true", "yes", "on"}, *no[] = {"0", "false", "no", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -OPTIREDUCE_EINVAL;
}

static int parse_enum(const char *words, const char *s, int64_t *out)
{
	int64_t idx = 0;
	size_t n = strlen(s);

	for (const char *w = words; *w; idx++) {
		const char *bar = strchr(w, '|');
		size_t wl = bar ? (size_t)(bar - w) : strlen(w);
		if (wl == n && strncasecmp(w, s, n) == 0) {
			*out = idx;
			return 0;
		}
		if (!bar)
			break;
		w = bar + 1;
	}
	return -OPTIREDUCE_EINVAL;
}

static int parse_value(const struct or_param_def *d, const char *s, struct or_param_val *v)
{
	uint64_t u, lo, hi;
	char *end;

	if (strlen(s) >= OR_PARAM_STRLEN)
		return -OPTIREDUCE_EINVAL;
	memset(v, 0, sizeof(*v));
	switch (d->type) {
	case OR_PT_INT:
	case OR_PT_SIZE:
		if (d->type == OR_PT_SIZE) {
			if (or_parse_size(s, &u) || or_parse_size(d->min, &lo) ||
			    or_parse_size(d->max, &hi))
				return -OPTIREDUCE_EINVAL;
		} else {
			long long x;
			errno = 0;
			x = strtoll(s, &end, 10);
			if (errno || end == s || *end || x < 0)
				return -OPTIREDUCE_EINVAL;
			u = (uint64_t)x;
			lo = strtoull(d->min, NULL, 10);
			hi = strtoull(d->max, NULL, 10);
		}
		if (u < lo || u > hi || u > INT64_MAX)
			return -OPTIREDUCE_EINVAL;
		v->i = (int64_t)u;
		v->d = (double)u;
		break;
	case OR_PT_BOOL:
		if (parse_bool(s, &v->i))
			return -OPTIREDUCE_EINVAL;
		v->d = (double)v->i;
		break;
	case OR_PT_DOUBLE:
		errno = 0;
		v->d = strtod(s, &end);
		if (errno || end == s || *end || !isfinite(v->d) || v->d < strtod(d->min, NULL) ||
		    v->d > strtod(d->max, NULL))
			return -OPTIREDUCE_EINVAL;
		break;
	case OR_PT_ENUM:
		if (parse_enum(d->min, s, &v->i))
			return -OPTIREDUCE_EINVAL;
		break;
	case OR_PT_STRING:
		break;
	}
	snprintf(v->s, sizeof(v->s), "%s", s);
	return 0;
}

int or_params_find(const char *name)
{
	if (!name)
		return -OPTIREDUCE_EINVAL;
	for (int i = 0; i < OR_P_COUNT; i++)
		if (strcasecmp(defs[i].name, name) == 0)
			return i;
	return -OPTIREDUCE_ENOPARAM;
}

void or_params_init(struct or_params *p, or_param_check check)
{
	for (int i = 0; i < OR_P_COUNT; i++) {
		char env[96];
		const char *e;
		size_t k = 0;

		parse_value(&defs[i], defs[i].defval, &p->v[i]);
		p->v[i].source = OPTIREDUCE_PARAM_DEFAULT;
		k = (size_t)snprintf(env, sizeof(env), "OPTIREDUCE_%s", defs[i].name);
		for (size_t j = 11; j < k; j++)
			env[j] = (char)toupper((unsigned char)env[j]);
		e = getenv(env);
		if (!e)
			continue;
		if (or_params_set(p, defs[i].name, e, OPTIREDUCE_PARAM_ENV, check))
			or_log(OR_LOG_WARN, "ignoring %s=\"%s\": not a valid %s", env, e,
			       i == OR_P_ALGORITHM || i == OR_P_TUNE_EXACT || i == OR_P_TUNE_BOUNDED
			           ? "algorithm name or tune string"
			       : i == OR_P_MEASURE_EXACT
			           ? "list of ranges and algorithms to measure"
			       : i == OR_P_MULTICAST_RANGE ? "IPv4 multicast range (a.b.c.d/prefix)"
			                                   : type_names[defs[i].type]);
	}
}

int or_params_set(struct or_params *p, const char *name, const char *value,
                  enum optireduce_param_source source, or_param_check check)
{
	struct or_param_val v;
	int i = or_params_find(name);

	if (i < 0)
		return i;
	if (!value || parse_value(&defs[i], value, &v))
		return -OPTIREDUCE_EINVAL;
	if (check && check((enum or_param_id)i, value))
		return -OPTIREDUCE_EINVAL;
	v.source = source;
	p->v[i] = v;
	return 0;
}

int optireduce_param_info(int index, struct optireduce_param_info *info)
{
	if (index < 0 || index >= OR_P_COUNT)
		return -OPTIREDUCE_ENOPARAM;
	if (!info)
		return -OPTIREDUCE_EINVAL;
	info->name = defs[index].name;
	info->type = type_names[defs[index].type];
	info->defval = defs[index].defval;
	info->desc = defs[index].desc;
	return 0;
}
