/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host's shared segment: a POSIX shared-memory object the local leader creates at
 * communicator creation, the other local ranks map, and the leader unlinks as soon as
 * all have it mapped, so nothing stays in /dev/shm once the communicator is gone or a
 * rank dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm.h"

#define OR_SHM_MAGIC 0x6f72534du /* "orSM" */

/* A failed system call as one of the library's codes. */
static int sys_error(void)
{
	return errno == ENOMEM || errno == ENOSPC ? -OPTIREDUCE_ENOMEM : -OPTIREDUCE_EIO;
}

static size_t header_bytes(uint32_t nlocal)
{
	size_t h = sizeof(struct or_shm_hdr) + 2 * (size_t)nlocal * sizeof(struct or_shm_line);
	return (h + 4095) & ~(size_t)4095;
}

static int segment_bytes(uint32_t nlocal, size_t chunk, size_t *bytes)
{
	if (nlocal == 0 || chunk == 0 || chunk > (SIZE_MAX / 2) / ((size_t)nlocal + 1))
		return -OPTIREDUCE_EOVERFLOW;
	*bytes = header_bytes(nlocal) + ((size_t)nlocal + 1) * chunk;
	return 0;
}

static int map_segment(struct or_shm *s, uint32_t nlocal, size_t chunk)
{
	void *p = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);

	if (p == MAP_FAILED)
		return -OPTIREDUCE_ENOMEM;
	s->hdr = p;
	s->arrived = (struct or_shm_line *)(s->hdr + 1);
	s->reduced = s->arrived + nlocal;
	s->slots = (char *)p + header_bytes(nlocal);
	s->result = s->slots + (size_t)nlocal * chunk;
	s->nlocal = nlocal;
	s->chunk = chunk;
	return 0;
}

int or_shm_create(struct or_shm *s, const char *path, uint32_t nlocal, size_t chunk)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (snprintf(s->path, sizeof(s->path), "%s", path) >= (int)sizeof(s->path))
		return -OPTIREDUCE_EINVAL;
	if ((ret = segment_bytes(nlocal, chunk, &s->bytes)) != 0)
		return ret;
	s->fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (s->fd < 0)
		return sys_error();
	s->linked = 1;
	/* tmpfs allocates pages as they are touched: the slots cost what the ops use. */
	if (ftruncate(s->fd, (off_t)s->bytes) != 0) {
		ret = sys_error();
		or_shm_unlink(s);
		or_shm_detach(s);
		return ret;
	}
	ret = map_segment(s, nlocal, chunk);
	if (ret) {
		or_shm_unlink(s);
		or_shm_detach(s);
		return ret;
	}
	s->hdr->nlocal = nlocal;
	s->hdr->chunk = chunk;
	__atomic_store_n(&s->hdr->magic, OR_SHM_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

int or_shm_attach(struct or_shm *s, const char *path, uint32_t nlocal, size_t chunk)
{
	struct stat st;
	int ret;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (snprintf(s->path, sizeof(s->path), "%s", path) >= (int)sizeof(s->path))
		return -OPTIREDUCE_EINVAL;
	if ((ret = segment_bytes(nlocal, chunk, &s->bytes)) != 0)
		return ret;
	s->fd = shm_open(path, O_RDWR, 0);
	if (s->fd < 0)
		return sys_error();
	/* What the leader made must be what this rank expects, or nothing is mapped. */
	if (fstat(s->fd, &st) != 0 || (size_t)st.st_size != s->bytes) {
		or_shm_detach(s);
		return -OPTIREDUCE_EMISMATCH;
	}
	ret = map_segment(s, nlocal, chunk);
	if (!ret && (__atomic_load_n(&s->hdr->magic, __ATOMIC_ACQUIRE) != OR_SHM_MAGIC ||
	             s->hdr->nlocal != nlocal || s->hdr->chunk != chunk))
		ret = -OPTIREDUCE_EMISMATCH;
	if (ret)
		or_shm_detach(s);
	return ret;
}

void or_shm_unlink(struct or_shm *s)
{
	if (s->linked)
		shm_unlink(s->path);
	s->linked = 0;
}

void or_shm_detach(struct or_shm *s)
{
	if (s->hdr)
		munmap(s->hdr, s->bytes);
	if (s->fd >= 0)
		close(s->fd);
	s->hdr = NULL;
	s->fd = -1;
}
