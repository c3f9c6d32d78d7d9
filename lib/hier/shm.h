/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared-memory segment of the ranks of a communicator that share a host
 * (docs/design.md, "Ranks that share a host"): one input slot per local rank and one
 * result area, each `chunk` bytes, and per local rank the last chunk it copied in and
 * the last it reduced, each counter on its own cache line.  Counters only grow: chunk
 * g is copied in, reduced and shared back before anyone starts chunk g + 1's copy.
 */
#ifndef OR_SHM_H
#define OR_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "optireduce.h"

#define OR_SHM_PATH_MAX 64

struct or_shm_line {
	uint64_t v;
	char pad[56];
};

struct or_shm_hdr {
	uint32_t magic;
	uint32_t nlocal;
	uint64_t chunk;
	struct or_shm_line done;      /* last chunk whose result area is final */
	struct or_shm_line error;     /* the leader's network error, as a negative code */
	struct optireduce_status net; /* the leader's network step of chunk `done` */
	/* then nlocal lines "arrived", nlocal lines "reduced" */
};

struct or_shm {
	char path[OR_SHM_PATH_MAX];
	int linked; /* this rank created the name and has not unlinked it */
	int fd;
	size_t bytes;
	struct or_shm_hdr *hdr;
	struct or_shm_line *arrived, *reduced;
	char *slots;  /* nlocal slots of chunk bytes */
	char *result; /* chunk bytes */
	uint32_t nlocal;
	size_t chunk;
};

/* Leader: create and map the segment (path must be unique per host and communicator). */
int or_shm_create(struct or_shm *s, const char *path, uint32_t nlocal, size_t chunk);
/* Other local ranks: map the segment the leader created. */
int or_shm_attach(struct or_shm *s, const char *path, uint32_t nlocal, size_t chunk);
/* Once every local rank has attached: the name goes, the mappings stay. */
void or_shm_unlink(struct or_shm *s);
void or_shm_detach(struct or_shm *s);

static inline char *or_shm_slot(const struct or_shm *s, uint32_t local)
{
	return s->slots + (size_t)local * s->chunk;
}

static inline uint64_t or_shm_load(const struct or_shm_line *l)
{
	return __atomic_load_n(&l->v, __ATOMIC_ACQUIRE);
}

static inline void or_shm_store(struct or_shm_line *l, uint64_t v)
{
	__atomic_store_n(&l->v, v, __ATOMIC_RELEASE);
}

/* Every one of n lines has reached at least g. */
static inline int or_shm_all_reached(const struct or_shm_line *lines, uint32_t n, uint64_t g)
{
	for (uint32_t i = 0; i < n; i++)
		if (or_shm_load(&lines[i]) < g)
			return 0;
	return 1;
}

#endif /* OR_SHM_H */
