/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A communicator's wake-up: optireduce_comm_wake from any thread ends the wait of an
 * optireduce_comm_progress call on it (docs/design.md, "Waking the progress call").
 */
#ifndef OR_WAKE_H
#define OR_WAKE_H

struct optireduce_comm;
struct or_wake;

/* NULL when out of memory; a wake without a descriptor (no eventfd) still works, as a flag
 * the waiter sees between its kernel waits. */
struct or_wake *or_wake_new(void);
void or_wake_free(struct or_wake *w);
/* Any thread: sets the flag and makes the descriptor readable. */
void or_wake_signal(struct or_wake *w);
/* The waiter: 1 if a wake-up is pending, and clears it. */
int or_wake_take(struct or_wake *w);
/* The waiter: 1 if a wake-up is pending (it stays pending). */
int or_wake_pending(const struct or_wake *w);
/*
 * Waits like or_comm_wait_activity for up to timeout_ms, and also returns, with 0, as
 * soon as a wake-up is pending.  On the exact channel with a wait descriptor it sleeps in
 * poll() on that descriptor and the wake-up's; otherwise it waits as or_comm_wait_activity
 * does (at most 1 ms on the bounded channel), and the caller sees the flag after it.
 */
int or_comm_wait_wakeable(struct optireduce_comm *comm, int timeout_ms);

#endif
