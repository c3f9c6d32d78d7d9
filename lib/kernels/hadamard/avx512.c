/* SPDX-License-Identifier: BSD-3-Clause */
/* avx512.c - the Hadamard block transform for float with AVX-512F (GCC target attributes). */
#include "kernels.h"

#if OR_HAD_X86
#include <immintrin.h>

/*
 * Pass 0 holds 256 floats in 16 zmm registers: strides 1..8 by lane shuffles, 16..128 across
 * registers.  Each later pass does up to 4 more levels (radix 16) on 16 vectors a stride apart,
 * so a 2^12 block (16 KiB, in L1) is read and written twice, a 2^16 block three times.
 */
#define T512 __attribute__((target("avx512f")))

T512 static INLINE __m512 flip16(__m512 v, const uint64_t *sg, size_t pos)
{
	__mmask16 m = (__mmask16)(sg[pos >> 6] >> (pos & 63));
	__m512i vi = _mm512_castps_si512(v);

	return _mm512_castsi512_ps(_mm512_mask_xor_epi32(vi, m, vi, _mm512_set1_epi32(INT32_MIN)));
}

/* sign pattern for the in-register level of stride 2^t: -1 where lane bit t is set */
T512 static INLINE __m512 lane_sign16(unsigned t)
{
	__mmask16 hi = (__mmask16)(t == 0 ? 0xaaaa : t == 1 ? 0xcccc : t == 2 ? 0xf0f0 : 0xff00);

	return _mm512_mask_blend_ps(hi, _mm512_set1_ps(1.0f), _mm512_set1_ps(-1.0f));
}

T512 static INLINE void bfly_levels16(__m512 *v, unsigned r)
{
	UNROLL
	for (unsigned t = 0; t < r; t++) {
		unsigned h = 1u << t;
		UNROLL
		for (unsigned m = 0; m < 16; m++) {
			if ((m & h) || m + h >= (1u << r))
				continue;
			__m512 a = v[m], b = v[m + h];
			v[m] = _mm512_add_ps(a, b);
			v[m + h] = _mm512_sub_ps(a, b);
		}
	}
}

T512 static INLINE void finish16(__m512 *v, unsigned cnt, const uint64_t *out_sg, size_t pos0,
                                 size_t step, float scale)
{
	__m512 s = _mm512_set1_ps(scale);

	UNROLL
	for (unsigned m = 0; m < cnt; m++) {
		v[m] = _mm512_mul_ps(v[m], s);
		if (out_sg)
			v[m] = flip16(v[m], out_sg, pos0 + m * step);
	}
}

T512 static void pass0_avx512(const float *src, float *x, size_t n, int last, const uint64_t *in_sg,
                              const uint64_t *out_sg, float scale)
{
	const __m512 s0 = lane_sign16(0), s1 = lane_sign16(1);
	const __m512 s2 = lane_sign16(2), s3 = lane_sign16(3);

	for (size_t c = 0; c < n; c += 256) {
		__m512 v[16];

		UNROLL
		for (unsigned m = 0; m < 16; m++) {
			v[m] = _mm512_loadu_ps(src + c + 16 * m);
			if (in_sg)
				v[m] = flip16(v[m], in_sg, c + 16 * m);
			v[m] = _mm512_fmadd_ps(v[m], s0, _mm512_permute_ps(v[m], 0xb1));
			v[m] = _mm512_fmadd_ps(v[m], s1, _mm512_permute_ps(v[m], 0x4e));
			v[m] = _mm512_fmadd_ps(v[m], s2, _mm512_shuffle_f32x4(v[m], v[m], 0xb1));
			v[m] = _mm512_fmadd_ps(v[m], s3, _mm512_shuffle_f32x4(v[m], v[m], 0x4e));
		}
		bfly_levels16(v, 4);
		if (last)
			finish16(v, 16, out_sg, c, 16, scale);
		UNROLL
		for (unsigned m = 0; m < 16; m++)
			_mm512_storeu_ps(x + c + 16 * m, v[m]);
	}
}

/* Levels lvl .. lvl+r-1 on vectors x[base + j + m * 2^lvl], m < 2^r. */
T512 static INLINE void passr_avx512(float *x, size_t n, unsigned lvl, unsigned r, int last,
                                     const uint64_t *out_sg, float scale)
{
	size_t S = (size_t)1 << lvl;
	unsigned cnt = 1u << r;

	for (size_t base = 0; base < n; base += S * cnt) {
		for (size_t j = 0; j < S; j += 16) {
			float *p = x + base + j;
			__m512 v[16];

			UNROLL
			for (unsigned m = 0; m < cnt; m++)
				v[m] = _mm512_loadu_ps(p + m * S);
			bfly_levels16(v, r);
			if (last)
				finish16(v, cnt, out_sg, base + j, S, scale);
			UNROLL
			for (unsigned m = 0; m < cnt; m++)
				_mm512_storeu_ps(p + m * S, v[m]);
		}
	}
}

T512 void or_had_blk_avx512(const float *src, float *x, unsigned lg, const uint64_t *in_sg,
                            const uint64_t *out_sg, float scale)
{
	size_t n = (size_t)1 << lg;

	pass0_avx512(src, x, n, lg == 8, in_sg, out_sg, scale);
	for (unsigned lvl = 8; lvl < lg;) {
		unsigned r = lg - lvl < 4 ? lg - lvl : 4;
		int last = lvl + r == lg;

		switch (r) {
		case 1:
			passr_avx512(x, n, lvl, 1, last, out_sg, scale);
			break;
		case 2:
			passr_avx512(x, n, lvl, 2, last, out_sg, scale);
			break;
		case 3:
			passr_avx512(x, n, lvl, 3, last, out_sg, scale);
			break;
		default:
			passr_avx512(x, n, lvl, 4, last, out_sg, scale);
			break;
		}
		lvl += r;
	}
}

#endif
