/* SPDX-License-Identifier: BSD-3-Clause */
/* avx2.c - the Hadamard block transform for float with AVX2 and FMA (GCC target attributes). */
#include "kernels.h"

#if OR_HAD_X86
#include <immintrin.h>

/*
 * Same plan with 8-float vectors and 16 registers: pass 0 holds 64 floats in 8 ymm registers
 * (strides 1..4 by shuffles, 8..32 across registers), later passes are radix 8, which leaves
 * registers for the sign constants without spilling.
 */
#define T256 __attribute__((target("avx2,fma")))

T256 static INLINE __m256 flip8(__m256 v, const uint64_t *sg, size_t pos)
{
	__m256i bits = _mm256_set1_epi32((int)(uint32_t)(sg[pos >> 6] >> (pos & 63)));
	/* lane i shifts its bit i up to the float sign bit */
	__m256i sh = _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24);
	__m256i m = _mm256_and_si256(_mm256_sllv_epi32(bits, sh), _mm256_set1_epi32(INT32_MIN));

	return _mm256_xor_ps(v, _mm256_castsi256_ps(m));
}

T256 static INLINE void bfly_levels8(__m256 *v, unsigned r)
{
	UNROLL
	for (unsigned t = 0; t < r; t++) {
		unsigned h = 1u << t;
		UNROLL
		for (unsigned m = 0; m < 8; m++) {
			if ((m & h) || m + h >= (1u << r))
				continue;
			__m256 a = v[m], b = v[m + h];
			v[m] = _mm256_add_ps(a, b);
			v[m + h] = _mm256_sub_ps(a, b);
		}
	}
}

T256 static INLINE void finish8(__m256 *v, unsigned cnt, const uint64_t *out_sg, size_t pos0,
                                size_t step, float scale)
{
	__m256 s = _mm256_set1_ps(scale);

	UNROLL
	for (unsigned m = 0; m < cnt; m++) {
		v[m] = _mm256_mul_ps(v[m], s);
		if (out_sg)
			v[m] = flip8(v[m], out_sg, pos0 + m * step);
	}
}

T256 static void pass0_avx2(const float *src, float *x, size_t n, const uint64_t *in_sg)
{
	const __m256 s0 = _mm256_setr_ps(1, -1, 1, -1, 1, -1, 1, -1);
	const __m256 s1 = _mm256_setr_ps(1, 1, -1, -1, 1, 1, -1, -1);
	const __m256 s2 = _mm256_setr_ps(1, 1, 1, 1, -1, -1, -1, -1);

	for (size_t c = 0; c < n; c += 64) {
		__m256 v[8];

		UNROLL
		for (unsigned m = 0; m < 8; m++) {
			v[m] = _mm256_loadu_ps(src + c + 8 * m);
			if (in_sg)
				v[m] = flip8(v[m], in_sg, c + 8 * m);
			v[m] = _mm256_fmadd_ps(v[m], s0, _mm256_permute_ps(v[m], 0xb1));
			v[m] = _mm256_fmadd_ps(v[m], s1, _mm256_permute_ps(v[m], 0x4e));
			v[m] = _mm256_fmadd_ps(v[m], s2, _mm256_permute2f128_ps(v[m], v[m], 0x01));
		}
		bfly_levels8(v, 3);
		UNROLL
		for (unsigned m = 0; m < 8; m++)
			_mm256_storeu_ps(x + c + 8 * m, v[m]);
	}
}

T256 static INLINE void passr_avx2(float *x, size_t n, unsigned lvl, unsigned r, int last,
                                   const uint64_t *out_sg, float scale)
{
	size_t S = (size_t)1 << lvl;
	unsigned cnt = 1u << r;

	for (size_t base = 0; base < n; base += S * cnt) {
		for (size_t j = 0; j < S; j += 8) {
			float *p = x + base + j;
			__m256 v[8];

			UNROLL
			for (unsigned m = 0; m < cnt; m++)
				v[m] = _mm256_loadu_ps(p + m * S);
			bfly_levels8(v, r);
			if (last)
				finish8(v, cnt, out_sg, base + j, S, scale);
			UNROLL
			for (unsigned m = 0; m < cnt; m++)
				_mm256_storeu_ps(p + m * S, v[m]);
		}
	}
}

/* lg >= 8 always leaves at least two levels after pass 0, so pass 0 is never the last. */
T256 void or_had_blk_avx2(const float *src, float *x, unsigned lg, const uint64_t *in_sg,
                          const uint64_t *out_sg, float scale)
{
	size_t n = (size_t)1 << lg;

	pass0_avx2(src, x, n, in_sg);
	for (unsigned lvl = 6; lvl < lg;) {
		unsigned r = lg - lvl < 3 ? lg - lvl : 3;
		int last = lvl + r == lg;

		switch (r) {
		case 1:
			passr_avx2(x, n, lvl, 1, last, out_sg, scale);
			break;
		case 2:
			passr_avx2(x, n, lvl, 2, last, out_sg, scale);
			break;
		default:
			passr_avx2(x, n, lvl, 3, last, out_sg, scale);
			break;
		}
		lvl += r;
	}
}

#endif
