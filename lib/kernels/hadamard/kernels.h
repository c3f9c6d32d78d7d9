/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kernels.h - the block transforms of the randomized Hadamard codec (lib/kernels/hadamard.c), one
 * kernel per file.  Every kernel keeps the three rules in lib/kernels/hadamard.c's header, so that
 * all of them give bitwise the same result.
 */
#ifndef OR_HADAMARD_KERNELS_H
#define OR_HADAMARD_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define OR_HAD_X86 1
#else
#define OR_HAD_X86 0
#endif

/*
 * One block transform of src into x (src == x: in place).  The first pass reads src and every
 * later one x, so a copy into place costs no pass of its own.  in_sg (may be NULL) flips signs
 * before the first level; out_sg (may be NULL) flips them after the scale.  Encode passes
 * (sw, NULL), decode (NULL, sw).
 */
typedef void (*blk_f32_fn)(const float *src, float *x, unsigned lg, const uint64_t *in_sg,
                           const uint64_t *out_sg, float scale);

void or_had_blk_portable_f32(const float *src, float *x, unsigned lg, const uint64_t *in_sg,
                             const uint64_t *out_sg, float scale);
void or_had_blk_portable_f64(const double *src, double *x, unsigned lg, const uint64_t *in_sg,
                             const uint64_t *out_sg, double scale);
#if OR_HAD_X86
/* Only on CPUs with the instructions (lib/kernels/hadamard.c checks): avx512f; avx2 and fma. */
void or_had_blk_avx512(const float *src, float *x, unsigned lg, const uint64_t *in_sg,
                       const uint64_t *out_sg, float scale);
void or_had_blk_avx2(const float *src, float *x, unsigned lg, const uint64_t *in_sg,
                     const uint64_t *out_sg, float scale);

/* Loops over register arrays must unroll completely or the arrays end up on the stack. */
#define UNROLL _Pragma("GCC unroll 16")
#define INLINE inline __attribute__((always_inline))
#endif

#endif
