/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Randomized Hadamard codec (docs/design.md, "The estimate").
 *
 * Each block of n = 2^log2_block values is rotated by (1/sqrt(n)) H D, with H the Sylvester
 * Hadamard matrix and D a diagonal of random signs.  The rotation is linear and orthonormal, so
 * ranks can sum in the rotated domain, and a packet lost there costs a little of every entry of
 * its block instead of all of a few entries.  The signs come from a counter-based generator keyed
 * by (seed, op_seq, block, word): every rank computes the same signs without talking, any block
 * can be encoded on its own, and a fresh op_seq gives fresh signs.
 *
 * All kernels (portable, AVX2, AVX-512) perform the same floating-point operations in the same
 * order, so their results are bitwise identical: ranks on different CPUs decode the same sum to
 * the same bits, which keeps replicas from drifting apart.
 *
 * Errors are negative OPTIREDUCE_E* codes (equal to -errno below 256).
 */
#ifndef OR_HADAMARD_H
#define OR_HADAMARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OR_HAD_LOG2_MIN 8
#define OR_HAD_LOG2_MAX 16

enum or_had_kernel {
	OR_HAD_KERNEL_AUTO,
	OR_HAD_KERNEL_PORTABLE,
	OR_HAD_KERNEL_AVX2,
	OR_HAD_KERNEL_AVX512,
};

/*
 * Force a kernel for every later call in the process (tests, benchmarks).  Returns 0, or
 * -OPTIREDUCE_ENOTSUP (-95) if this CPU or build lacks it, or -OPTIREDUCE_EINVAL for an unknown
 * value.  AUTO picks the fastest available one, which is also what is used if this is never
 * called.
 */
int or_had_select(enum or_had_kernel k);

/* Name of the kernel in use: "portable", "avx2" or "avx512". */
const char *or_had_kernel_name(void);

/*
 * 64 sign bits for entries 64*word .. 64*word+63 of a block; bit i set means entry 64*word+i is
 * negated.  A pure function of its arguments (random access, no state).
 */
uint64_t or_had_sign_word(uint64_t seed, uint64_t op_seq, uint64_t block, uint64_t word);

/*
 * In place on nblocks consecutive blocks of 2^log2_block floats, log2_block in 8..16.  The first
 * block gets sign key first_block, the next first_block+1 and so on, so a sub-range of a larger
 * buffer can be coded on its own with the same signs.
 *   encode: y = (1/sqrt(n)) H D x
 *   decode: x = D H y / sqrt(n)          (the exact inverse, up to rounding)
 * Returns 0, or -OPTIREDUCE_EINVAL (-22) for a bad log2_block or a NULL buf with nblocks > 0, in
 * which case buf is not touched.  No alignment is required.
 */
int or_had_encode(float *buf, size_t nblocks, unsigned log2_block, uint64_t seed, uint64_t op_seq,
                  uint64_t first_block);
int or_had_decode(float *buf, size_t nblocks, unsigned log2_block, uint64_t seed, uint64_t op_seq,
                  uint64_t first_block);

/*
 * The same from src into dst, with the same bits as a copy followed by the in-place call: the
 * transform's first pass does the copy.  dst and src are the same or do not overlap.
 */
int or_had_encode_to(float *dst, const float *src, size_t nblocks, unsigned log2_block,
                     uint64_t seed, uint64_t op_seq, uint64_t first_block);
int or_had_decode_to(float *dst, const float *src, size_t nblocks, unsigned log2_block,
                     uint64_t seed, uint64_t op_seq, uint64_t first_block);

/* The same for double, with the same signs. */
int or_had_encode_f64(double *buf, size_t nblocks, unsigned log2_block, uint64_t seed,
                      uint64_t op_seq, uint64_t first_block);
int or_had_decode_f64(double *buf, size_t nblocks, unsigned log2_block, uint64_t seed,
                      uint64_t op_seq, uint64_t first_block);
int or_had_encode_f64_to(double *dst, const double *src, size_t nblocks, unsigned log2_block,
                         uint64_t seed, uint64_t op_seq, uint64_t first_block);
int or_had_decode_f64_to(double *dst, const double *src, size_t nblocks, unsigned log2_block,
                         uint64_t seed, uint64_t op_seq, uint64_t first_block);

/*
 * Blocks needed for count elements; the caller zero-pads the last one.  0 for a bad log2_block.
 */
size_t or_had_nblocks(size_t count, unsigned log2_block);

#ifdef __cplusplus
}
#endif

#endif /* OR_HADAMARD_H */
