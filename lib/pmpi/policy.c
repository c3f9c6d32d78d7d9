/* SPDX-License-Identifier: BSD-3-Clause */
/* Parser and matcher of the bounded-mode policy (grammar in policy.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "policy.h"

#define BIT(dt) (1u << (dt))
#define FLOAT_MASK                                                                                 \
	(BIT(OPTIREDUCE_FLOAT16) | BIT(OPTIREDUCE_BFLOAT16) | BIT(OPTIREDUCE_FLOAT32) |            \
	 BIT(OPTIREDUCE_FLOAT64))

static const struct {
	const char *name;
	uint32_t mask;
} dtype_names[] = {
    {"float", BIT(OPTIREDUCE_FLOAT32)},
    {"float32", BIT(OPTIREDUCE_FLOAT32)},
    {"fp32", BIT(OPTIREDUCE_FLOAT32)},
    {"double", BIT(OPTIREDUCE_FLOAT64)},
    {"float64", BIT(OPTIREDUCE_FLOAT64)},
    {"fp64", BIT(OPTIREDUCE_FLOAT64)},
    {"half", BIT(OPTIREDUCE_FLOAT16)},
    {"float16", BIT(OPTIREDUCE_FLOAT16)},
    {"fp16", BIT(OPTIREDUCE_FLOAT16)},
    {"bfloat16", BIT(OPTIREDUCE_BFLOAT16)},
    {"bf16", BIT(OPTIREDUCE_BFLOAT16)},
    {"all", FLOAT_MASK},
    {"*", FLOAT_MASK},
};

/* Names a user may plausibly try; they get a precise refusal instead of "unknown". */
static const char *const integer_names[] = {
    "int",    "int8", "int16", "int32", "int64",   "uint8",    "uint16", "uint32",
    "uint64", "char", "short", "long",  "integer", "unsigned", "byte",   "bool",
};

struct parser {
	const char *start;
	const char *p;
	char *err;
	size_t errlen;
};

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct parser *ps, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->err && ps->errlen)
		snprintf(ps->err, ps->errlen, "at character %d: %s", (int)(ps->p - ps->start) + 1,
		         msg);
	return -1;
}

static void skip_blanks(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t')
		ps->p++;
}

static int parse_name(struct parser *ps, uint32_t *mask)
{
	char word[32];
	size_t n = 0;

	skip_blanks(ps);
	if (*ps->p == '*') {
		word[n++] = *ps->p++;
	} else {
		while (isalnum((unsigned char)*ps->p) || *ps->p == '_') {
			if (n + 1 >= sizeof(word))
				return fail(ps, "dtype name too long");
			word[n++] = *ps->p++;
		}
	}
	word[n] = '\0';
	if (n == 0)
		return fail(ps, "expected a dtype name");
	for (size_t i = 0; i < sizeof(dtype_names) / sizeof(dtype_names[0]); i++)
		if (strcasecmp(word, dtype_names[i].name) == 0) {
			*mask |= dtype_names[i].mask;
			return 0;
		}
	ps->p -= n;
	for (size_t i = 0; i < sizeof(integer_names) / sizeof(integer_names[0]); i++)
		if (strcasecmp(word, integer_names[i]) == 0)
			return fail(ps,
			            "'%s' is not a floating type; bounded mode serves only "
			            "floating SUM",
			            word);
	return fail(ps, "unknown dtype '%s' (float, double, half, bfloat16 or all)", word);
}

/* digits [k|m|g], powers of 1024. */
static int parse_size(struct parser *ps, uint64_t *out)
{
	uint64_t v = 0, mult = 1;

	skip_blanks(ps);
	if (!isdigit((unsigned char)*ps->p))
		return fail(ps, "expected a size");
	while (isdigit((unsigned char)*ps->p)) {
		unsigned d = (unsigned)(*ps->p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return fail(ps, "size too large");
		v = v * 10 + d;
		ps->p++;
	}
	switch (*ps->p) {
	case 'k':
	case 'K':
		mult = 1ull << 10;
		break;
	case 'm':
	case 'M':
		mult = 1ull << 20;
		break;
	case 'g':
	case 'G':
		mult = 1ull << 30;
		break;
	default:
		break;
	}
	if (mult > 1) {
		ps->p++;
		if (v > UINT64_MAX / mult)
			return fail(ps, "size too large");
		v *= mult;
	}
	if (isalnum((unsigned char)*ps->p))
		return fail(ps, "bad size suffix '%c' (k, m or g)", *ps->p);
	*out = v;
	return 0;
}

static int parse_cond(struct parser *ps, struct orp_rule *r)
{
	uint64_t n, m;

	skip_blanks(ps);
	if (ps->p[0] == '>' || ps->p[0] == '<') {
		int greater = ps->p[0] == '>', inclusive = ps->p[1] == '=';
		ps->p += inclusive ? 2 : 1;
		if (parse_size(ps, &n))
			return -1;
		if (greater && !inclusive && n == UINT64_MAX)
			return fail(ps, "condition matches no size");
		if (!greater && !inclusive && n == 0)
			return fail(ps, "'<0' matches no size");
		if (greater)
			r->min_bytes = inclusive ? n : n + 1;
		else
			r->max_bytes = inclusive ? n : n - 1;
		return 0;
	}
	if (!isdigit((unsigned char)*ps->p))
		return fail(ps, "expected a size condition: >=N, >N, <=N, <N or N-M");
	if (parse_size(ps, &n))
		return -1;
	skip_blanks(ps);
	if (*ps->p != '-')
		return fail(ps, "expected '-' in a range N-M (a bare size is ambiguous)");
	ps->p++;
	if (parse_size(ps, &m))
		return -1;
	if (n > m)
		return fail(ps, "empty range: %llu > %llu", (unsigned long long)n,
		            (unsigned long long)m);
	r->min_bytes = n;
	r->max_bytes = m;
	return 0;
}

static int parse_rule(struct parser *ps, struct orp_rule *r)
{
	r->dtypes = 0;
	r->min_bytes = 0;
	r->max_bytes = UINT64_MAX;
	for (;;) {
		if (parse_name(ps, &r->dtypes))
			return -1;
		skip_blanks(ps);
		if (*ps->p != ',')
			break;
		ps->p++;
	}
	if (*ps->p == ':') {
		ps->p++;
		if (parse_cond(ps, r))
			return -1;
		skip_blanks(ps);
	}
	if (*ps->p != ';' && *ps->p != '\0')
		return fail(ps, "unexpected '%c' (expected ',', ':', ';' or the end)", *ps->p);
	return 0;
}

static int is_off(const char *s)
{
	char word[8];
	size_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	while (*s && *s != ' ' && *s != '\t' && n + 1 < sizeof(word))
		word[n++] = *s++;
	word[n] = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s)
		return 0;
	return n == 0 || strcasecmp(word, "none") == 0 || strcasecmp(word, "off") == 0 ||
	       strcmp(word, "0") == 0;
}

int orp_policy_parse(const char *text, struct orp_policy *out, char *err, size_t errlen)
{
	struct parser ps = {text, text, err, errlen};

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	if (!text || is_off(text))
		return 0;
	for (;;) {
		if (out->nrules == ORP_POLICY_MAX_RULES) {
			fail(&ps, "more than %d rules", ORP_POLICY_MAX_RULES);
			memset(out, 0, sizeof(*out));
			return -1;
		}
		if (parse_rule(&ps, &out->rule[out->nrules])) {
			memset(out, 0, sizeof(*out));
			return -1;
		}
		out->nrules++;
		if (*ps.p == '\0')
			return 0;
		ps.p++; /* ';' */
	}
}

int orp_policy_match(const struct orp_policy *p, enum optireduce_dtype dtype, uint64_t bytes)
{
	if ((unsigned)dtype >= 32)
		return 0;
	for (int i = 0; i < p->nrules; i++) {
		const struct orp_rule *r = &p->rule[i];
		if ((r->dtypes & BIT(dtype)) && bytes >= r->min_bytes && bytes <= r->max_bytes)
			return 1;
	}
	return 0;
}

int orp_policy_parse_comms(const char *text, int *all, char *err, size_t errlen)
{
	char word[16];
	size_t n = 0;
	const char *s = text ? text : "";

	if (err && errlen)
		err[0] = '\0';
	*all = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	while (*s && *s != ' ' && *s != '\t' && n + 1 < sizeof(word))
		word[n++] = *s++;
	word[n] = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s && (n == 0 || strcasecmp(word, "world") == 0))
		return 0;
	if (!*s && strcasecmp(word, "all") == 0) {
		*all = 1;
		return 0;
	}
	if (err && errlen)
		snprintf(err, errlen, "expected 'world' or 'all'");
	return -1;
}

static uint32_t fnv(uint32_t h, const void *data, size_t n)
{
	const unsigned char *b = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

uint32_t orp_policy_digest(const struct orp_policy *p, int all_comms)
{
	uint32_t h = 2166136261u;

	h = fnv(h, &all_comms, sizeof(all_comms));
	h = fnv(h, &p->nrules, sizeof(p->nrules));
	for (int i = 0; i < p->nrules; i++) {
		h = fnv(h, &p->rule[i].dtypes, sizeof(p->rule[i].dtypes));
		h = fnv(h, &p->rule[i].min_bytes, sizeof(p->rule[i].min_bytes));
		h = fnv(h, &p->rule[i].max_bytes, sizeof(p->rule[i].max_bytes));
	}
	return h;
}
