/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handles the library gave out and has not freed (contexts, communicators, requests),
 * by address.  A handle passed back in is looked up here before its memory is read, so
 * one that optireduce_finalize, optireduce_comm_destroy or optireduce_wait already freed
 * is answered -OPTIREDUCE_EBADHANDLE instead of read after free: a magic number alone
 * would be read from freed memory, which the allocator may have handed to someone else.
 *
 * An open-addressing hash set with linear probing and backward-shift deletion, under one
 * mutex: contexts of different threads share it.  The cost is a lock and a probe or two
 * per call that takes a handle, against the microseconds an allreduce takes.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *slots; /* 0 = empty */
static size_t cap, used;

static size_t home(uintptr_t h, size_t n)
{
	/* Fibonacci hashing of the address without its alignment bits. */
	return (size_t)(((uint64_t)(h >> 4) * 0x9e3779b97f4a7c15ull) >> 32) & (n - 1);
}

static size_t find(uintptr_t h)
{
	size_t i = home(h, cap);

	while (slots[i] && slots[i] != h)
		i = (i + 1) & (cap - 1);
	return i;
}

static int grow(void)
{
	size_t ncap = cap ? cap * 2 : 64;
	uintptr_t *old = slots, *ns = calloc(ncap, sizeof(*ns));
	size_t ocap = cap;

	if (!ns)
		return -OPTIREDUCE_ENOMEM;
	slots = ns;
	cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i])
			slots[find(old[i])] = old[i];
	free(old);
	return 0;
}

int or_handle_add(const void *p)
{
	uintptr_t h = (uintptr_t)p;
	int ret = 0;

	pthread_mutex_lock(&lock);
	if ((used + 1) * 2 > cap)
		ret = grow();
	if (!ret && !slots[find(h)]) {
		slots[find(h)] = h;
		used++;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void or_handle_remove(const void *p)
{
	uintptr_t h = (uintptr_t)p;
	size_t i, j;

	pthread_mutex_lock(&lock);
	if (!cap || !slots[i = find(h)]) {
		pthread_mutex_unlock(&lock);
		return;
	}
	slots[i] = 0;
	used--;
	/* Entries after the hole that could live nearer their home move back into it. */
	for (j = (i + 1) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1)) {
		size_t k = home(slots[j], cap);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			slots[i] = slots[j];
			slots[j] = 0;
			i = j;
		}
	}
	/* The last handle gone: the table goes too, so a process that finalized holds none. */
	if (!used) {
		free(slots);
		slots = NULL;
		cap = 0;
	}
	pthread_mutex_unlock(&lock);
}

int or_handle_live(const void *p)
{
	int live;

	if (!p)
		return 0;
	pthread_mutex_lock(&lock);
	live = cap && slots[find((uintptr_t)p)] != 0;
	pthread_mutex_unlock(&lock);
	return live;
}
