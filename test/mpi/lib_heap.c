/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counts the blocks liboptireduce allocates (lib_heap.h) in a table of live blocks.
 *
 * Plain build: malloc and the others below are the program's own, so every object of the
 * process calls them; each hands the work to glibc (__libc_malloc and its siblings) and,
 * when its caller's return address lies in the library's code, records the block.  free
 * takes a block out of the table whoever frees it, before glibc may hand its address out
 * again.  Blocks the library gets through other functions (strdup, reallocarray, getline)
 * are not counted: glibc allocates them internally.  The library uses none of them for
 * what it keeps per operation.
 *
 * AddressSanitizer: its allocator calls a hook after every allocation and before every
 * free (when the block enters quarantine, so quarantine is not counted); the allocation
 * hook asks it for the block's allocation stack, whose second frame is the caller of malloc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib_heap.h"

#if defined(__SANITIZE_ADDRESS__)
#define LIB_HEAP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIB_HEAP_ASAN 1
#endif
#endif

#if !defined(LIB_HEAP_ASAN) && !(defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33))

int lib_heap_start(const char *name)
{
	(void)name;
	return -1;
}

size_t lib_heap_process_bytes(void)
{
	return 0;
}

void lib_heap_read(struct lib_heap *h)
{
	memset(h, 0, sizeof(*h));
}

#else

/* The parked packets alone may be 16,384 blocks.  Past half full the table takes no more
 * blocks and reports an overflow: probes stay short. */
#define SLOTS_LOG2 17
#define SLOTS      (1u << SLOTS_LOG2)

static struct block {
	uintptr_t p; /* 0 = empty */
	size_t n;
} table[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t text_lo, text_hi; /* the library's code; empty until lib_heap_start */
static struct lib_heap totals;

static size_t home(uintptr_t p)
{
	return (size_t)(((uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ull) >> (64 - SLOTS_LOG2));
}

static int from_lib(const void *ret)
{
	uintptr_t a = (uintptr_t)ret;
	return a >= __atomic_load_n(&text_lo, __ATOMIC_ACQUIRE) &&
	       a < __atomic_load_n(&text_hi, __ATOMIC_ACQUIRE);
}

static void add(void *p, size_t n)
{
	size_t i;

	if (!p)
		return;
	pthread_mutex_lock(&lock);
	totals.allocations++;
	if (totals.live_blocks >= SLOTS / 2) {
		totals.overflow = 1;
	} else {
		for (i = home((uintptr_t)p); table[i].p; i = (i + 1) & (SLOTS - 1))
			;
		table[i].p = (uintptr_t)p;
		table[i].n = n;
		totals.live_blocks++;
		totals.live_bytes += n;
	}
	pthread_mutex_unlock(&lock);
}

/* Takes p out of the table (backward-shift deletion); 1 and its size if it was there. */
static int take(void *p, size_t *n)
{
	size_t i, j, k;

	if (!p)
		return 0;
	pthread_mutex_lock(&lock);
	for (i = home((uintptr_t)p); table[i].p && table[i].p != (uintptr_t)p;
	     i = (i + 1) & (SLOTS - 1))
		;
	if (!table[i].p) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	*n = table[i].n;
	totals.live_blocks--;
	totals.live_bytes -= table[i].n;
	for (j = (i + 1) & (SLOTS - 1); table[j].p; j = (j + 1) & (SLOTS - 1)) {
		k = home(table[j].p);
		/* j's entry may move to the hole at i unless its home lies in (i, j]. */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			table[i] = table[j];
			i = j;
		}
	}
	table[i].p = 0;
	pthread_mutex_unlock(&lock);
	return 1;
}

#ifdef LIB_HEAP_ASAN

/* The sanitizer's interface (sanitizer/allocator_interface.h, not shipped with every
 * compiler; sanitizer/asan_interface.h). */
int __sanitizer_install_malloc_and_free_hooks(void (*on_alloc)(const volatile void *, size_t),
                                              void (*on_free)(const volatile void *));
size_t __asan_get_alloc_stack(void *addr, void **trace, size_t size, int *thread_id);
size_t __sanitizer_get_current_allocated_bytes(void);

size_t lib_heap_process_bytes(void)
{
	return __sanitizer_get_current_allocated_bytes();
}

static void on_alloc(const volatile void *p, size_t n)
{
	void *trace[2];
	int tid;

	if (__asan_get_alloc_stack((void *)p, trace, 2, &tid) == 2 && from_lib(trace[1]))
		add((void *)p, n);
}

static void on_free(const volatile void *p)
{
	size_t n;

	take((void *)p, &n);
}

static int install(void)
{
	return __sanitizer_install_malloc_and_free_hooks(on_alloc, on_free) ? 0 : -1;
}

#else

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

static int install(void)
{
	return 0;
}

size_t lib_heap_process_bytes(void)
{
	struct mallinfo2 m = mallinfo2();
	return m.uordblks + m.hblkhd;
}

void *malloc(size_t n)
{
	void *p = __libc_malloc(n);
	if (from_lib(__builtin_return_address(0)))
		add(p, n);
	return p;
}

void *calloc(size_t k, size_t n)
{
	void *p = __libc_calloc(k, n);
	if (from_lib(__builtin_return_address(0)))
		add(p, k * n);
	return p;
}

void *realloc(void *p, size_t n)
{
	int lib = from_lib(__builtin_return_address(0));
	size_t old = 0;
	int had = take(p, &old);
	void *q = __libc_realloc(p, n);

	if (!q && n && had)
		add(p, old); /* failed: p is still the caller's */
	else if (q && lib)
		add(q, n);
	return q;
}

void free(void *p)
{
	size_t n;

	take(p, &n);
	__libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	if (from_lib(__builtin_return_address(0)))
		add(p, n);
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);
	if (from_lib(__builtin_return_address(0)))
		add(p, n);
	return p;
}

#endif

struct find_arg {
	const char *name;
	uintptr_t lo, hi;
};

/* The executable segment of the first loaded object whose path contains the name. */
static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_arg *f = arg;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, f->name))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			f->lo = info->dlpi_addr + ph->p_vaddr;
			f->hi = f->lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

int lib_heap_start(const char *name)
{
	struct find_arg f = {name, 0, 0};

	if (!dl_iterate_phdr(find_text, &f) || install())
		return -1;
	/* lo first: until hi is set, no address is in range. */
	__atomic_store_n(&text_lo, f.lo, __ATOMIC_RELEASE);
	__atomic_store_n(&text_hi, f.hi, __ATOMIC_RELEASE);
	return 0;
}

void lib_heap_read(struct lib_heap *h)
{
	pthread_mutex_lock(&lock);
	*h = totals;
	pthread_mutex_unlock(&lock);
}

#endif
