/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Measured choice of the exact-mode algorithm (measure.h; docs/design.md, "Measured
 * choice").  measure_exact is byte ranges of the tune-string form whose names are lists,
 * "4097-16385:recursive_doubling|rabenseifner".  Per power-of-two size class (a class holds
 * the sizes in (2^(k-1), 2^k]), call i of the first measure_calls x A takes algorithm i mod
 * A of the range that holds the class's first call; call measure_calls x A, on every rank,
 * first agrees on the algorithm with the least sum over ranks of each rank's median time,
 * and that algorithm serves the class from then on.  The agreement is an exact allreduce of
 * integers, so every rank reads the same sums and makes the same choice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/op/algorithm.h"
#include "lib/core/internal.h"
#include "measure.h"

#define NCLASS 65 /* log2 classes of a size_t, 0 for 0 bytes */

struct measure_class {
	int nalg;
	const struct or_alg *alg[OR_MEASURE_MAX_ALGS];
	uint32_t calls;                                       /* trials handed out */
	uint32_t n[OR_MEASURE_MAX_ALGS];                      /* trials completed */
	double us[OR_MEASURE_MAX_ALGS][OR_MEASURE_MAX_CALLS]; /* their times here */
	int decided;
	const struct or_alg *chosen; /* NULL: the agreement failed, the built-in rule serves */
};

struct or_measure {
	char spec[OR_PARAM_STRLEN]; /* the measure_exact the classes were measured under */
	struct measure_class *cls[NCLASS];
};

/* The class of a size: k with bytes in (2^(k-1), 2^k]. */
static int class_of(size_t bytes)
{
	int k = 0;

	while (k < NCLASS - 1 && ((size_t)1 << k) < bytes)
		k++;
	return k;
}

/* One "lo-hi:a|b" entry of len bytes into [lo, hi) and its algorithms: 0 or -EINVAL. */
static int parse_entry(const char *e, size_t len, uint64_t *lo, uint64_t *hi,
                       const struct or_alg **alg, int *nalg)
{
	char names[OR_PARAM_STRLEN], *name, *save = NULL;
	size_t n;

	if (or_tune_entry(e, len, lo, hi, names, sizeof(names)))
		return -OPTIREDUCE_EINVAL;
	n = strlen(names);
	if (n == 0 || names[0] == '|' || names[n - 1] == '|' || strstr(names, "||"))
		return -OPTIREDUCE_EINVAL;
	*nalg = 0;
	for (name = strtok_r(names, "|", &save); name; name = strtok_r(NULL, "|", &save)) {
		const struct or_alg *a = or_alg_by_name(name);
		if (!a || !(a->channels & OR_CHAN_EXACT) || *nalg == OR_MEASURE_MAX_ALGS)
			return -OPTIREDUCE_EINVAL;
		alg[(*nalg)++] = a;
	}
	return *nalg ? 0 : -OPTIREDUCE_EINVAL;
}

/*
 * The algorithms of the first range of spec that holds bytes: their number, 0 when none
 * does, or -OPTIREDUCE_EINVAL for a malformed spec.  Empty or "none" holds nothing.
 */
static int range_algs(const char *spec, size_t bytes, const struct or_alg **alg)
{
	const char *e = spec;

	if (!*spec || strcmp(spec, "none") == 0)
		return 0;
	for (int i = 0;; i++) {
		const char *comma = strchr(e, ',');
		size_t len = comma ? (size_t)(comma - e) : strlen(e);
		uint64_t lo, hi;
		int nalg;

		if (i == 16 || parse_entry(e, len, &lo, &hi, alg, &nalg))
			return -OPTIREDUCE_EINVAL;
		if (bytes != SIZE_MAX && bytes >= lo && (hi == UINT64_MAX || bytes < hi))
			return nalg;
		if (!comma)
			return 0;
		e = comma + 1;
	}
}

int or_measure_check(const char *value)
{
	const struct or_alg *alg[OR_MEASURE_MAX_ALGS];

	return range_algs(value, SIZE_MAX, alg) < 0 ? -OPTIREDUCE_EINVAL : 0;
}

static double median(double *v, uint32_t n)
{
	/* Insertion sort: n is at most OR_MEASURE_MAX_CALLS. */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/*
 * The ranks agree on c's algorithm: per algorithm the sum of the ranks' median times (ns)
 * and how many ranks have one.  The least sum among algorithms every rank measured wins,
 * else the least mean among those any rank measured, else the first; ties go to the first.
 */
static void agree(optireduce_comm_t *comm, struct measure_class *c, int k)
{
	uint64_t mine[2 * OR_MEASURE_MAX_ALGS], all[2 * OR_MEASURE_MAX_ALGS];
	double best = 0;
	int full = 0, ret;
	optireduce_req_t *req;

	or_comm_lock(comm); /* trials complete in the progress thread too */
	for (int a = 0; a < c->nalg; a++) {
		mine[2 * a] = c->n[a] ? (uint64_t)(1e3 * median(c->us[a], c->n[a])) : 0;
		mine[2 * a + 1] = c->n[a] ? 1 : 0;
	}
	c->decided = 1; /* later trials are not recorded */
	or_comm_unlock(comm);
	ret = or_op_post(comm, mine, all, 2 * (size_t)c->nalg, OPTIREDUCE_UINT64, OPTIREDUCE_SUM,
	                 OR_OP_EXACT | OR_OP_NOMEASURE, &req);
	if (!ret)
		ret = or_op_wait(req, NULL);
	if (ret) {
		or_log(OR_LOG_WARN, "measured choice for %zu-byte class failed: %s", (size_t)1 << k,
		       optireduce_strerror(ret));
		return;
	}
	for (int a = 0; a < c->nalg; a++)
		full |= all[2 * a + 1] == comm->size;
	for (int a = 0; a < c->nalg; a++) {
		double mean = all[2 * a + 1] ? (double)all[2 * a] / (double)all[2 * a + 1] : 0;
		if (!all[2 * a + 1] || (full && all[2 * a + 1] != comm->size))
			continue;
		if (!c->chosen || mean < best) {
			c->chosen = c->alg[a];
			best = mean;
		}
		or_log(OR_LOG_INFO, "measured %zu-byte class: %s %.1f us (%llu ranks)",
		       (size_t)1 << k, c->alg[a]->name, mean / 1e3,
		       (unsigned long long)all[2 * a + 1]);
	}
	if (!c->chosen)
		c->chosen = c->alg[0];
	or_log(OR_LOG_INFO, "measured %zu-byte class: %s chosen", (size_t)1 << k, c->chosen->name);
}

/* comm's measurement state under the current measure_exact, made or reset as needed. */
static struct or_measure *state(optireduce_comm_t *comm, const char *spec)
{
	struct or_measure *m = comm->measure;

	if (m && strcmp(m->spec, spec) != 0) {
		or_measure_free(comm);
		m = NULL;
	}
	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return NULL;
		snprintf(m->spec, sizeof(m->spec), "%s", spec);
		comm->measure = m;
	}
	return m;
}

const struct or_alg *or_measure_pick(optireduce_comm_t *comm, size_t bytes, struct or_trial *trial)
{
	const char *spec = or_param_str(&comm->params, OR_P_MEASURE_EXACT);
	const struct or_alg *alg[OR_MEASURE_MAX_ALGS];
	uint32_t per = (uint32_t)or_param_int(&comm->params, OR_P_MEASURE_CALLS);
	int nalg = range_algs(spec, bytes, alg), k = class_of(bytes);
	struct or_measure *m;
	struct measure_class *c;

	trial->slot = -1;
	if (nalg <= 0 || comm->size < 2)
		return NULL;
	or_comm_lock(comm);
	m = state(comm, spec);
	c = m ? m->cls[k] : NULL;
	if (m && !c && (c = m->cls[k] = calloc(1, sizeof(*c)))) {
		c->nalg = nalg;
		memcpy(c->alg, alg, sizeof(alg[0]) * (size_t)nalg);
	}
	if (c && !c->decided && c->calls < per * (uint32_t)c->nalg) {
		trial->slot = k;
		trial->alg = (int)(c->calls++ % (uint32_t)c->nalg);
	}
	or_comm_unlock(comm);
	if (!c)
		return NULL;
	if (trial->slot >= 0)
		return c->alg[trial->alg];
	if (!c->decided)
		agree(comm, c, k);
	return c->chosen;
}

void or_measure_record(optireduce_comm_t *comm, const struct or_trial *trial, double us)
{
	struct measure_class *c;

	if (trial->slot < 0 || !comm->measure || !(c = comm->measure->cls[trial->slot]) ||
	    c->decided || c->n[trial->alg] >= OR_MEASURE_MAX_CALLS)
		return;
	c->us[trial->alg][c->n[trial->alg]++] = us;
}

void or_measure_describe(const optireduce_comm_t *comm, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	if (!comm->measure)
		return;
	for (int k = 0; k < NCLASS; k++) {
		const struct measure_class *c = comm->measure->cls[k];
		if (!c || !c->decided || !c->chosen || n >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%zu-%zu:%s", n ? "," : "",
		                      k ? ((size_t)1 << (k - 1)) + 1 : 0, ((size_t)1 << k) + 1,
		                      c->chosen->name);
	}
}

void or_measure_free(optireduce_comm_t *comm)
{
	if (!comm->measure)
		return;
	for (int k = 0; k < NCLASS; k++)
		free(comm->measure->cls[k]);
	free(comm->measure);
	comm->measure = NULL;
}
