/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Repair's state (repair.h): the channel's, made on first use, and each operation's, made
 * once its phases are declared; shared by asking (repair.c), answering (resend.c) and
 * learning from arrivals (repair_arrive.c).
 */
#include <stdlib.h>

#include "lib/bounded/features/repair.h"

int or_bd_repair_on(const struct or_chan *ch)
{
	return ch->comm->size > 1 && or_chan_param_i(ch, OR_P_REPAIR) != 0;
}

struct or_repair_chan *or_rep_chan(struct or_chan *ch)
{
	if (!ch->repair)
		ch->repair = calloc(1, sizeof(*ch->repair));
	return ch->repair;
}

struct or_repair *or_rep_of(struct or_bounded_op *op)
{
	struct or_repair *r;
	size_t n;

	if (op->rep || !op->ph)
		return op->rep;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->nphases = op->nphases;
	r->cap = op->ph[0].cap;
	n = (size_t)r->nphases * r->cap;
	r->in = calloc(n, sizeof(*r->in));
	r->out = calloc(n, sizeof(*r->out));
	r->first_pass_us = calloc(r->nphases, sizeof(double));
	r->asked = calloc(r->nphases, 1);
	op->rep = r;
	if (!r->in || !r->out || !r->first_pass_us || !r->asked) {
		or_rep_op_end(NULL, op);
		return NULL;
	}
	return r;
}

void or_rep_free_wants(struct or_rep_out *ro, size_t n)
{
	for (size_t i = 0; ro && i < n; i++)
		free(ro[i].want);
}

void or_rep_op_end(struct or_chan *ch, struct or_bounded_op *op)
{
	(void)ch;
	struct or_repair *r = op->rep;

	if (!r)
		return;
	or_rep_free_wants(r->out, (size_t)r->nphases * r->cap);
	for (size_t i = 0; r->in && i < (size_t)r->nphases * r->cap; i++)
		free(r->in[i].state);
	free(r->in);
	free(r->out);
	free(r->first_pass_us);
	free(r->asked);
	free(r);
	op->rep = NULL;
}

void or_rep_close(struct or_chan *ch)
{
	struct or_repair_chan *rc = ch->repair;

	if (!rc)
		return;
	for (unsigned k = 0; k < OR_REPAIR_KEPT; k++) {
		or_rep_free_wants(rc->kept[k].rout, rc->kept[k].n);
		free(rc->kept[k].rout);
		free(rc->kept[k].out);
		free(rc->kept[k].data);
	}
	free(rc);
	ch->repair = NULL;
}

/* x^-1 mod n for x coprime with n (the stride is). */
size_t or_rep_inverse(size_t x, size_t n)
{
	int64_t t = 0, nt = 1, r = (int64_t)n, nr = (int64_t)(x % n);

	while (nr) {
		int64_t q = r / nr, tmp;
		tmp = t - q * nt, t = nt, nt = tmp;
		tmp = r - q * nr, r = nr, nr = tmp;
	}
	return (size_t)(t < 0 ? t + (int64_t)n : t);
}
