/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bytes liboptireduce itself has allocated and not freed, for the soak test.  The whole
 * process's heap cannot tell a leak of the library from its providers keeping what they
 * once needed: libfabric's buffer pools grow by whole chunks (ofi_rxm's receive pool by
 * 1,024 buffers of 16 KiB, 16.3 MiB) the first time a busy moment needs one more buffer,
 * and never shrink.  The test program defines malloc, calloc, realloc, free and the
 * aligned allocators, hands them to glibc, and counts a block when the call came from the
 * library's code; under AddressSanitizer, whose allocator those would replace, hooks of
 * that allocator do the same.
 */
#ifndef OR_TEST_LIB_HEAP_H
#define OR_TEST_LIB_HEAP_H

#include <stddef.h>

/* Starts counting the allocations made from the code of the first loaded object whose path
 * contains name.  0, or -1 when this build cannot count (AddressSanitizer, not glibc) or no
 * such object is loaded (the library linked statically). */
int lib_heap_start(const char *name);

struct lib_heap {
	size_t live_bytes;  /* requested bytes of the library's blocks not freed yet */
	size_t live_blocks; /* those blocks */
	size_t allocations; /* calls that allocated for the library since lib_heap_start */
	int overflow;       /* more live blocks than the table holds: the numbers are low */
};

void lib_heap_read(struct lib_heap *h);

/* Bytes the process's allocator has handed out and not taken back, whoever holds them:
 * glibc's mallinfo2, or AddressSanitizer's count; 0 where neither is available. */
size_t lib_heap_process_bytes(void);

#endif /* OR_TEST_LIB_HEAP_H */
