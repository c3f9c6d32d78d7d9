/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress thread (docs/design.md, "Progress thread").  A socket buffer holds well
 * under a millisecond of datagrams at the rates peers send, and a rank that computes
 * between two allreduces, enters one late, or is descheduled does not read it: without
 * this thread those datagrams are lost in the kernel.
 */
#define _GNU_SOURCE /* pthread_attr_setaffinity_np */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/bounded/bounded_int.h"

void or_bd_sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * An idle communicator must cost the application's other work nothing: a thread that
 * polled every 200 us slowed MPI_Allreduce in the same processes by 12 % at the median
 * and 60 % at the 99th percentile (docs/design.md, "Progress thread").  fi_trywait first,
 * under the endpoint's lock: it fails while completions are already waiting, which the
 * descriptor might not signal.  The poll itself holds no lock, so the application is
 * never kept from its endpoint.
 */
static int wait_for_traffic(struct or_bounded *b)
{
	struct pollfd fds[2] = {{.fd = b->wait_fd, .events = POLLIN},
	                        {.fd = b->wake[0], .events = POLLIN}};
	int ret;

	pthread_mutex_lock(&b->ofi_lock);
	ret = or_dg_trywait(b->ep);
	pthread_mutex_unlock(&b->ofi_lock);
	if (ret != 0 || b->thread_stop)
		return 0;
	poll(fds, 2, OR_IDLE_POLL_MS);
	return 1;
}

/* What one pass of the progress thread did, and so what it does next. */
enum pass_outcome {
	PASS_DONE,          /* reaped what there was (maybe nothing): back off if nothing */
	PASS_WAITED_FOR_OP, /* waited for the application's operation to end: go again */
	PASS_APP_IN_OP,     /* the application held the lock in an operation: go again */
};

/*
 * With lock held.  While an operation runs and the application keeps calling in, the
 * thread waits for op_done instead of polling between the application's polls.
 */
static int wait_while_app_active(struct or_bounded *b)
{
	struct timespec ts;

	if (!b->nops || or_now_us() - b->app_us >= OR_APP_ACTIVE_US || b->thread_stop)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)OR_APP_ACTIVE_US * 1000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_cond_timedwait(&b->op_done, &b->lock, &ts);
	return 1;
}

/*
 * Only while the application is outside the library: inside, it reaps for itself, and
 * two threads taking turns at the endpoint cost more than they gain (the enlarged socket
 * buffer covers a descheduled application).  Nor does it wake every few hundred us while
 * the application works on an operation: with ranks sharing cores those wake-ups, and the
 * turns it took at the endpoint between the application's polls, doubled the 99th
 * percentile (docs/design.md, "Progress thread").  Adds the completions it reaped to *n.
 */
static enum pass_outcome progress_pass(struct or_bounded *b, int *n)
{
	int park = 1;

	if (b->wait_fd >= 0 && !b->in_op) {
		/*
		 * Woken by a datagram of an operation this rank has not entered, it only reaps:
		 * parking needs lock, and the application entering the operation waited for it,
		 * up to 8.4 ms at 64 KiB (docs/design.md, "Progress thread").  Receive buffers
		 * are what parking frees, so it parks once half of them wait; until then the
		 * application handles them when it enters.
		 */
		*n = or_bd_reap(b);
		pthread_mutex_lock(&b->ofi_lock);
		park = b->ready_count >= b->nrx / 2;
		pthread_mutex_unlock(&b->ofi_lock);
	}
	if (!park)
		return PASS_DONE;
	if (pthread_mutex_trylock(&b->lock) != 0) {
		if (!b->in_op)
			return PASS_DONE;
		or_bd_sleep_us(OR_APP_ACTIVE_US);
		return PASS_APP_IN_OP;
	}
	if (wait_while_app_active(b)) {
		pthread_mutex_unlock(&b->lock);
		return PASS_WAITED_FOR_OP;
	}
	*n += or_bd_reap(b);
	or_bd_drain_ready(b);
	pthread_mutex_unlock(&b->lock);
	return PASS_DONE;
}

/*
 * Without a wait descriptor the thread polls, and every wake-up costs the application
 * (see wait_for_traffic), so it sleeps as long as the socket allows: never longer than
 * half the time its receive buffer takes to fill at 10 Gbit/s (8 MiB: 3.4 ms), or
 * 200 us if its size is unknown.
 */
static long longest_idle_us(const struct or_bounded *b)
{
	long idle_max = (long)or_bd_param_i(b, OR_P_PROGRESS_IDLE_US);
	long fill_us = b->rcvbuf ? (long)(b->rcvbuf * 8 / OR_IDLE_LINE_MBPS / 2) : 200;

	if (fill_us < 10)
		fill_us = 10;
	return idle_max > fill_us ? fill_us : idle_max;
}

/*
 * While the application is outside the library the thread reaps the endpoint and parks
 * what arrives early.  When quiet it sleeps in the kernel until a datagram arrives
 * (wait_for_traffic); on a provider without a wait descriptor it polls, backing off to
 * progress_idle_us.
 */
static void *progress_thread(void *arg)
{
	struct or_bounded *b = arg;
	long idle_max = longest_idle_us(b), idle = 10;
	unsigned long long reaped = 0, wakeups = 0;

	while (!b->thread_stop) {
		int n = 0;
		wakeups++;
		enum pass_outcome pass = progress_pass(b, &n);
		if (pass == PASS_WAITED_FOR_OP) {
			idle = 10; /* the next operation's first packets may come at once */
			continue;
		}
		if (pass == PASS_APP_IN_OP)
			continue;
		reaped += n > 0 ? (unsigned long long)n : 0;
		if (n > 0) {
			idle = 10;
			continue;
		}
		/*
		 * Completions this thread could not reap (the application held the lock, in an
		 * operation's encoding or decoding) make fi_trywait refuse: back off as a polling
		 * thread would.  Retrying at once spun: 272,453 wake-ups in a 150 s run.
		 */
		if (b->wait_fd >= 0 && wait_for_traffic(b)) {
			idle = 10;
			continue;
		}
		or_bd_sleep_us(idle);
		if (idle < idle_max)
			idle = idle * 2 < idle_max ? idle * 2 : idle_max;
	}
	or_log(OR_LOG_DEBUG, "progress thread: %llu completions reaped in %llu wakeups", reaped,
	       wakeups);
	return NULL;
}

/*
 * On the PU the core chose from the rank's binding (docs/design.md, "Placement"), else
 * where the creating thread may run.  A PU the process may not use (its binding changed
 * since) is logged, and the thread starts unbound.
 */
static int start_thread(struct or_bounded *b)
{
	int pu = b->ch.comm->place.progress.pu, ret = -1;
	pthread_attr_t attr;
	cpu_set_t one;

	if (pu < 0 || pu >= CPU_SETSIZE || pthread_attr_init(&attr))
		return pthread_create(&b->thread, NULL, progress_thread, b);
	CPU_ZERO(&one);
	CPU_SET(pu, &one);
	ret = pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	if (!ret)
		ret = pthread_create(&b->thread, &attr, progress_thread, b);
	pthread_attr_destroy(&attr);
	if (!ret)
		return 0;
	or_log(OR_LOG_WARN, "progress thread: not bound to PU %d (%s), it runs where the rank may",
	       pu, strerror(ret));
	return pthread_create(&b->thread, NULL, progress_thread, b);
}

void or_bd_progress_start(struct or_bounded *b)
{
	b->wait_fd = or_bd_param_i(b, OR_P_PROGRESS_WAIT) ? or_dg_wait_fd(b->ep) : -1;
	if (b->wait_fd >= 0 && pipe(b->wake) != 0) {
		b->wake[0] = b->wake[1] = -1;
		b->wait_fd = -1; /* without a way to wake it, the thread polls */
	}
	for (int i = 0; i < 2; i++) /* not inherited by what the application executes */
		if (b->wake[i] >= 0)
			fcntl(b->wake[i], F_SETFD, FD_CLOEXEC);
	or_log(OR_LOG_DEBUG, "progress thread: %s when idle",
	       b->wait_fd >= 0 ? "sleeps until a datagram arrives"
	                       : "polls (progress_wait=0, or the provider has no wait "
	                         "descriptor)");
	if (start_thread(b) == 0)
		b->thread_running = 1;
	else
		or_log(OR_LOG_WARN, "no progress thread: datagrams that arrive while the "
		                    "application computes may be lost");
}

void or_bd_progress_stop(struct or_bounded *b)
{
	if (b->thread_running) {
		pthread_mutex_lock(&b->lock);
		b->thread_stop = 1;
		pthread_cond_broadcast(&b->op_done);
		pthread_mutex_unlock(&b->lock);
		if (b->wake[1] >= 0 && write(b->wake[1], "", 1) < 0)
			or_log(OR_LOG_DEBUG,
			       "progress thread: wake-up not written, it wakes within %d ms",
			       OR_IDLE_POLL_MS);
		pthread_join(b->thread, NULL);
		b->thread_running = 0;
	}
	for (int i = 0; i < 2; i++) {
		if (b->wake[i] >= 0)
			close(b->wake[i]);
		b->wake[i] = -1;
	}
}

void or_bounded_lock(struct or_bounded *b)
{
	double t0;

	if (pthread_mutex_trylock(&b->lock) == 0)
		return;
	t0 = or_now_us();
	pthread_mutex_lock(&b->lock);
	b->lock_waits++;
	b->lock_wait_us += or_now_us() - t0;
}

void or_bounded_unlock(struct or_bounded *b)
{
	pthread_mutex_unlock(&b->lock);
}
