/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The request engine's internal API (docs/design.md, "Operations in flight"): post an
 * operation on a communicator's queue, test it, wait for it, progress the queue.  lib/core/
 * (the public entry points), lib/hier/ and lib/select/ use these, never the public
 * optireduce_test and optireduce_wait, so that no layer calls back up through the API.
 */
#ifndef OR_OP_H
#define OR_OP_H

#include <stddef.h>

#include "optireduce.h"

struct or_alg;
struct or_trial;

/* The algorithm for an operation of bytes on comm (trial NULL: never a measured one), and
 * the time a measured operation took: set per communicator (struct optireduce_comm). */
typedef const struct or_alg *or_op_choose_fn(optireduce_comm_t *comm, size_t bytes, int bounded,
                                             struct or_trial *trial);
typedef void or_op_record_fn(optireduce_comm_t *comm, const struct or_trial *trial, double us);

/* The arguments of an operation whose sbuf holds scount elements and rbuf rcount: 0 or the
 * negative code the API returns (allreduce.c). */
int or_check_args(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t scount,
                  size_t rcount, enum optireduce_dtype dtype, enum optireduce_op op);
/* Queues an operation whose arguments were checked and starts it if it may: count elements,
 * with OR_OP_* flags (allreduce.c). */
#define OR_OP_SCATTER   0x1 /* reduce-scatter (exact): count is the whole contribution */
#define OR_OP_EXACT     0x2 /* on the exact channel even if bounded could serve it */
#define OR_OP_NOMEASURE 0x4 /* the built-in rule, never a trial of measure_exact */
int or_op_post(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
               enum optireduce_dtype dtype, enum optireduce_op op, unsigned flags,
               optireduce_req_t **req);
/* Elements per piece of an allreduce of count elements: count when it runs whole, at most
 * bounded_piece_size (pieces.c). */
size_t or_pieces_per(const optireduce_comm_t *comm, size_t count, enum optireduce_dtype dtype);
/* The application's request for npieces pieces, a handle with room for them; NULL. */
optireduce_req_t *or_pieces_new(size_t npieces);
/* The piece that piece i of r waits for before it starts (NULL: none). */
const optireduce_req_t *or_pieces_gate(const optireduce_req_t *r, size_t i);
/* 1 once every piece of r is done (then r is, with their statistics merged), else 0. */
int or_pieces_settle(optireduce_req_t *r);
/* The bounded channel's progress thread stands aside while the holder works on comm; no-ops
 * on a communicator without one. */
void or_comm_lock(optireduce_comm_t *comm);
void or_comm_unlock(optireduce_comm_t *comm);
int or_comm_progress(optireduce_comm_t *comm, int *activity);
int or_comm_wait_activity(optireduce_comm_t *comm, int timeout_ms);
/* How long a waiter on comm polls, yielding, before it sleeps in the kernel: by the mode
 * and size of the operation at the head of its queue. */
double or_comm_spin_us(const optireduce_comm_t *comm);
/* Every operation of comm not yet completed fails with err (a negative code). */
void or_comm_fail(optireduce_comm_t *comm, int err);
/* The request's outcome: 0 when done without error, OPTIREDUCE_INPROGRESS, or the error;
 * req is valid and of the engine, not of lib/hier/ (wait.c). */
int or_op_test(optireduce_req_t *req);
/* Progresses until req is done, then frees it: its error, status filled when not NULL. */
int or_op_wait(optireduce_req_t *req, struct optireduce_status *status);
/* Frees a completed request (allreduce.c). */
void or_req_free(optireduce_req_t *r);

#endif /* OR_OP_H */
