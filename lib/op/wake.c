/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_comm_wake: a thread that hands a communicator's progress thread new work ends
 * that thread's wait in optireduce_comm_progress, so the work starts within tens of
 * microseconds instead of at the end of the wait (docs/design.md, "Waking the progress
 * call").  An atomic flag says a wake-up is pending; an eventfd makes it visible to poll()
 * next to the exact endpoint's wait descriptor.
 */
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/core/internal.h"
#include "wake.h"

struct or_wake {
	atomic_int pending;
	int fd; /* eventfd, -1 if none could be made */
};

struct or_wake *or_wake_new(void)
{
	struct or_wake *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	atomic_init(&w->pending, 0);
	w->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return w;
}

void or_wake_free(struct or_wake *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}

void or_wake_signal(struct or_wake *w)
{
	uint64_t one = 1;

	/* Only the first of several wake-ups before the waiter takes them writes. */
	if (atomic_exchange(&w->pending, 1) == 0 && w->fd >= 0 && write(w->fd, &one, 8) < 0)
		(void)0; /* EAGAIN: the counter is full, so the descriptor is readable anyway */
}

static void drain(const struct or_wake *w)
{
	uint64_t v;

	if (w->fd >= 0 && read(w->fd, &v, sizeof(v)) < 0)
		(void)0; /* EAGAIN: nothing written yet, or drained already */
}

int or_wake_take(struct or_wake *w)
{
	if (!w || !atomic_load_explicit(&w->pending, memory_order_acquire))
		return 0;
	atomic_store(&w->pending, 0);
	/* A wake-up between the store and this read leaves its flag set and the descriptor
	 * drained: the waiter sees the flag before it sleeps. */
	drain(w);
	return 1;
}

int or_wake_pending(const struct or_wake *w)
{
	return w && atomic_load_explicit(&w->pending, memory_order_acquire);
}

int or_comm_wait_wakeable(optireduce_comm_t *comm, int timeout_ms)
{
	struct or_wake *w = comm->wake;
	struct pollfd fds[2];
	int fd;

	if (or_wake_pending(w))
		return 0;
	/* The bounded channel's waits watch the descriptor for this wait only: a wake-up that
	 * no progress call takes would keep every later optireduce_wait from sleeping. */
	if (comm->bounded && w && w->fd >= 0) {
		int ret;
		or_bounded_set_wake_fd(comm->bounded, w->fd);
		ret = or_comm_wait_activity(comm, timeout_ms);
		or_bounded_set_wake_fd(comm->bounded, -1);
		return ret;
	}
	if (comm->bounded || !comm->rdm || !w || w->fd < 0 || (fd = or_ofi_wait_fd(comm->rdm)) < 0)
		return or_comm_wait_activity(comm, timeout_ms);
	/* fi_trywait refuses while completions wait that the descriptor might not signal: the
	 * caller's next progress pass reads them. */
	if (or_ofi_trywait(comm->rdm) != 0)
		return 0;
	fds[0] = (struct pollfd){.fd = fd, .events = POLLIN};
	fds[1] = (struct pollfd){.fd = w->fd, .events = POLLIN};
	/* EINTR (a signal, SIGSTOP and SIGCONT) is a wait cut short, like a timeout. */
	if (poll(fds, 2, timeout_ms) < 0)
		return 0;
	/* Readable without the flag: a wake-up already taken wrote after its take. */
	if ((fds[1].revents & POLLIN) && !or_wake_pending(w))
		drain(w);
	return 0;
}

int optireduce_comm_wake(optireduce_comm_t *comm)
{
	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	or_wake_signal(comm->wake);
	return 0;
}
