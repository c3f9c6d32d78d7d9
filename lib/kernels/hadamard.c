/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Randomized Hadamard codec: the sign generator, the choice of block kernel at run time, and
 * the API of hadamard.h.  The kernels, one per file, are in lib/kernels/hadamard/: portable GNU C,
 * and AVX2 and AVX-512 with GCC target attributes, so that the library builds with plain -O2 (GNU
 * C: GCC or clang) and still runs on CPUs without AVX.
 *
 * Bitwise agreement between kernels (promised in hadamard.h) rests on three rules that every
 * kernel here follows:
 *   - butterfly levels run in increasing stride order, each pair giving (a + b, a - b);
 *   - the in-register form fma(v, +-1, swapped) equals a + b or a - b exactly, because v * +-1
 *     is exact and the fma rounds once;
 *   - signs are sign-bit flips (exact) and the 1/sqrt(n) factor is one multiply after the last
 *     level.
 * Anyone changing a kernel must keep to these, or test_hadamard will report the difference.
 */
#include "hadamard.h"

#include <math.h>

#include "lib/kernels/hadamard/kernels.h"
#include "optireduce.h"

#define SIGN_WORDS_MAX (1u << (OR_HAD_LOG2_MAX - 6))

/* ---- sign generator ---------------------------------------------------------------------- */

/* splitmix64's finalizer: a bijection on 64 bits with full avalanche. */
static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Each key component is multiplied by a different odd constant before being absorbed, so the map
 * from a component to the next state is a bijection and (op_seq, block) cannot trade places.
 */
static inline uint64_t block_key(uint64_t seed, uint64_t op_seq, uint64_t block)
{
	uint64_t k = mix64(seed + 0x9e3779b97f4a7c15ULL);

	k = mix64(k + op_seq * 0xd1b54a32d192ed03ULL);
	return mix64(k + block * 0x8cb92ba72f3d8dd7ULL);
}

/* Words of one block are the splitmix64 stream started at the block key, indexed directly. */
static inline uint64_t key_word(uint64_t key, uint64_t word)
{
	return mix64(key + (word + 1) * 0x9e3779b97f4a7c15ULL);
}

uint64_t or_had_sign_word(uint64_t seed, uint64_t op_seq, uint64_t block, uint64_t word)
{
	return key_word(block_key(seed, op_seq, block), word);
}

static void fill_signs(uint64_t *sw, size_t nwords, uint64_t seed, uint64_t op_seq, uint64_t block)
{
	uint64_t key = block_key(seed, op_seq, block);

	for (size_t w = 0; w < nwords; w++)
		sw[w] = key_word(key, w);
}

/* ---- dispatch ---------------------------------------------------------------------------- */

struct kernel {
	const char *name;
	blk_f32_fn fn;
};

static const struct kernel kernels[] = {
    [OR_HAD_KERNEL_PORTABLE] = {"portable", or_had_blk_portable_f32},
#if OR_HAD_X86
    [OR_HAD_KERNEL_AVX2] = {"avx2", or_had_blk_avx2},
    [OR_HAD_KERNEL_AVX512] = {"avx512", or_had_blk_avx512},
#endif
};

/* 0 = not chosen yet; relaxed atomics because every thread would choose the same. */
static int cur_kernel;

static int cpu_has(enum or_had_kernel k)
{
	switch (k) {
	case OR_HAD_KERNEL_PORTABLE:
		return 1;
#if OR_HAD_X86
	case OR_HAD_KERNEL_AVX2:
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	case OR_HAD_KERNEL_AVX512:
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx512f");
#endif
	default:
		return 0;
	}
}

int or_had_select(enum or_had_kernel k)
{
	if (k == OR_HAD_KERNEL_AUTO) {
		if (cpu_has(OR_HAD_KERNEL_AVX512))
			k = OR_HAD_KERNEL_AVX512;
		else if (cpu_has(OR_HAD_KERNEL_AVX2))
			k = OR_HAD_KERNEL_AVX2;
		else
			k = OR_HAD_KERNEL_PORTABLE;
	} else if ((unsigned)k > OR_HAD_KERNEL_AVX512) {
		return -OPTIREDUCE_EINVAL;
	} else if (!cpu_has(k)) {
		return -OPTIREDUCE_ENOTSUP;
	}
	__atomic_store_n(&cur_kernel, (int)k, __ATOMIC_RELAXED);
	return 0;
}

static const struct kernel *kernel(void)
{
	int k = __atomic_load_n(&cur_kernel, __ATOMIC_RELAXED);

	if (k == OR_HAD_KERNEL_AUTO) {
		or_had_select(OR_HAD_KERNEL_AUTO);
		k = __atomic_load_n(&cur_kernel, __ATOMIC_RELAXED);
	}
	return &kernels[k];
}

const char *or_had_kernel_name(void)
{
	return kernel()->name;
}

size_t or_had_nblocks(size_t count, unsigned log2_block)
{
	if (log2_block < OR_HAD_LOG2_MIN || log2_block > OR_HAD_LOG2_MAX)
		return 0;
	return (count >> log2_block) + ((count & (((size_t)1 << log2_block) - 1)) != 0);
}

static int bad_args(const void *buf, size_t nblocks, unsigned lg)
{
	return lg < OR_HAD_LOG2_MIN || lg > OR_HAD_LOG2_MAX || (!buf && nblocks);
}

static int code_f32(float *dst, const float *src, size_t nblocks, unsigned lg, uint64_t seed,
                    uint64_t op_seq, uint64_t first_block, int decode)
{
	uint64_t sw[SIGN_WORDS_MAX];

	if (bad_args(dst, nblocks, lg) || bad_args(src, nblocks, lg))
		return -OPTIREDUCE_EINVAL;

	size_t n = (size_t)1 << lg;
	/* sqrt and division are correctly rounded, so every host gets the same factor */
	float scale = (float)(1.0 / sqrt((double)n));
	blk_f32_fn fn = kernel()->fn;

	for (size_t b = 0; b < nblocks; b++) {
		fill_signs(sw, n >> 6, seed, op_seq, first_block + b);
		fn(src + b * n, dst + b * n, lg, decode ? NULL : sw, decode ? sw : NULL, scale);
	}
	return 0;
}

static int code_f64(double *dst, const double *src, size_t nblocks, unsigned lg, uint64_t seed,
                    uint64_t op_seq, uint64_t first_block, int decode)
{
	uint64_t sw[SIGN_WORDS_MAX];

	if (bad_args(dst, nblocks, lg) || bad_args(src, nblocks, lg))
		return -OPTIREDUCE_EINVAL;

	size_t n = (size_t)1 << lg;
	double scale = 1.0 / sqrt((double)n);

	for (size_t b = 0; b < nblocks; b++) {
		fill_signs(sw, n >> 6, seed, op_seq, first_block + b);
		or_had_blk_portable_f64(src + b * n, dst + b * n, lg, decode ? NULL : sw,
		                        decode ? sw : NULL, scale);
	}
	return 0;
}

int or_had_encode(float *buf, size_t nblocks, unsigned log2_block, uint64_t seed, uint64_t op_seq,
                  uint64_t first_block)
{
	return code_f32(buf, buf, nblocks, log2_block, seed, op_seq, first_block, 0);
}

int or_had_decode(float *buf, size_t nblocks, unsigned log2_block, uint64_t seed, uint64_t op_seq,
                  uint64_t first_block)
{
	return code_f32(buf, buf, nblocks, log2_block, seed, op_seq, first_block, 1);
}

int or_had_encode_to(float *dst, const float *src, size_t nblocks, unsigned log2_block,
                     uint64_t seed, uint64_t op_seq, uint64_t first_block)
{
	return code_f32(dst, src, nblocks, log2_block, seed, op_seq, first_block, 0);
}

int or_had_decode_to(float *dst, const float *src, size_t nblocks, unsigned log2_block,
                     uint64_t seed, uint64_t op_seq, uint64_t first_block)
{
	return code_f32(dst, src, nblocks, log2_block, seed, op_seq, first_block, 1);
}

int or_had_encode_f64(double *buf, size_t nblocks, unsigned log2_block, uint64_t seed,
                      uint64_t op_seq, uint64_t first_block)
{
	return code_f64(buf, buf, nblocks, log2_block, seed, op_seq, first_block, 0);
}

int or_had_decode_f64(double *buf, size_t nblocks, unsigned log2_block, uint64_t seed,
                      uint64_t op_seq, uint64_t first_block)
{
	return code_f64(buf, buf, nblocks, log2_block, seed, op_seq, first_block, 1);
}

int or_had_encode_f64_to(double *dst, const double *src, size_t nblocks, unsigned log2_block,
                         uint64_t seed, uint64_t op_seq, uint64_t first_block)
{
	return code_f64(dst, src, nblocks, log2_block, seed, op_seq, first_block, 0);
}

int or_had_decode_f64_to(double *dst, const double *src, size_t nblocks, unsigned log2_block,
                         uint64_t seed, uint64_t op_seq, uint64_t first_block)
{
	return code_f64(dst, src, nblocks, log2_block, seed, op_seq, first_block, 1);
}
