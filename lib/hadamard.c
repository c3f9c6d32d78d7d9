/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Randomized Hadamard codec: sign generator, a portable kernel and AVX2/AVX-512 kernels chosen at
 * run time.  The SIMD kernels use GCC target attributes, so this file builds with plain -O2 (GNU
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
#include <string.h>

#include "optireduce.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define OR_HAD_X86 1
#include <immintrin.h>
#else
#define OR_HAD_X86 0
#endif

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

/*
 * One block transform.  in_sg (may be NULL) flips signs before the first level; out_sg (may be
 * NULL) flips them after the scale.  Encode passes (sw, NULL), decode (NULL, sw).
 */
typedef void (*blk_f32_fn)(float *x, unsigned lg, const uint64_t *in_sg, const uint64_t *out_sg,
                           float scale);

/* ---- portable kernels -------------------------------------------------------------------- */

static inline float flip_f32(float v, uint64_t bit)
{
	uint32_t u;

	memcpy(&u, &v, sizeof(u));
	u ^= (uint32_t)bit << 31;
	memcpy(&v, &u, sizeof(u));
	return v;
}

static inline double flip_f64(double v, uint64_t bit)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	u ^= bit << 63;
	memcpy(&v, &u, sizeof(u));
	return v;
}

#define SGN_BIT(sg, i) (((sg)[(i) >> 6] >> ((i)&63)) & 1)

/*
 * Levels of stride 1, 2, 4 run on 8 values held in locals, reading through the input signs, and
 * the scale rides on the last level.  The levels between use GNU C generic vectors (GCC and
 * clang lower them to whatever SIMD the target has, or to scalars) because the auto-vectorizer
 * at -O2 leaves these loops scalar.  Output signs (decode only) take one extra walk: fusing them
 * would need per-lane bit expansion, which is what the SIMD kernels are for.
 */
typedef float vec_f32 __attribute__((vector_size(32)));
typedef double vec_f64 __attribute__((vector_size(32)));
#define VEC_LOAD(V, p)                                                                             \
	(__extension__({                                                                           \
		V v_;                                                                              \
		memcpy(&v_, (p), sizeof(v_));                                                      \
		v_;                                                                                \
	}))
#define VEC_STORE(p, v)                                                                            \
	do {                                                                                       \
		__typeof__(v) v_ = (v);                                                            \
		memcpy((p), &v_, sizeof(v_));                                                      \
	} while (0)

#define BFLY(a, b)                                                                                 \
	do {                                                                                       \
		__typeof__(a) a_ = (a);                                                            \
		(a) = a_ + (b);                                                                    \
		(b) = a_ - (b);                                                                    \
	} while (0)

#define DEFINE_PORTABLE(NAME, T, V, FLIP)                                                          \
	static void NAME(T *x, unsigned lg, const uint64_t *in_sg, const uint64_t *out_sg,         \
	                 T scale)                                                                  \
	{                                                                                          \
		const size_t vl = sizeof(V) / sizeof(T);                                           \
		size_t n = (size_t)1 << lg, top = n >> 1;                                          \
                                                                                                   \
		for (size_t i = 0; i < n; i += 8) {                                                \
			T t[8];                                                                    \
			memcpy(t, x + i, sizeof(t));                                               \
			if (in_sg)                                                                 \
				for (unsigned u = 0; u < 8; u++)                                   \
					t[u] = FLIP(t[u], SGN_BIT(in_sg, i + u));                  \
			BFLY(t[0], t[1]);                                                          \
			BFLY(t[2], t[3]);                                                          \
			BFLY(t[4], t[5]);                                                          \
			BFLY(t[6], t[7]);                                                          \
			BFLY(t[0], t[2]);                                                          \
			BFLY(t[1], t[3]);                                                          \
			BFLY(t[4], t[6]);                                                          \
			BFLY(t[5], t[7]);                                                          \
			BFLY(t[0], t[4]);                                                          \
			BFLY(t[1], t[5]);                                                          \
			BFLY(t[2], t[6]);                                                          \
			BFLY(t[3], t[7]);                                                          \
			memcpy(x + i, t, sizeof(t));                                               \
		}                                                                                  \
		for (size_t h = 8; h < top; h <<= 1)                                               \
			for (size_t i = 0; i < n; i += 2 * h)                                      \
				for (size_t j = i; j < i + h; j += vl) {                           \
					V a = VEC_LOAD(V, x + j), b = VEC_LOAD(V, x + j + h);      \
					VEC_STORE(x + j, a + b);                                   \
					VEC_STORE(x + j + h, a - b);                               \
				}                                                                  \
		for (size_t j = 0; j < top; j += vl) {                                             \
			V a = VEC_LOAD(V, x + j), b = VEC_LOAD(V, x + j + top);                    \
			VEC_STORE(x + j, (a + b) * scale);                                         \
			VEC_STORE(x + j + top, (a - b) * scale);                                   \
		}                                                                                  \
		if (out_sg)                                                                        \
			for (size_t i = 0; i < n; i++)                                             \
				x[i] = FLIP(x[i], SGN_BIT(out_sg, i));                             \
	}

DEFINE_PORTABLE(blk_portable_f32, float, vec_f32, flip_f32)
DEFINE_PORTABLE(blk_portable_f64, double, vec_f64, flip_f64)

#if OR_HAD_X86

/* Loops over register arrays must unroll completely or the arrays end up on the stack. */
#define UNROLL _Pragma("GCC unroll 16")
#define INLINE inline __attribute__((always_inline))

/* ---- AVX-512 kernel ---------------------------------------------------------------------- */
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

T512 static void pass0_avx512(float *x, size_t n, int last, const uint64_t *in_sg,
                              const uint64_t *out_sg, float scale)
{
	const __m512 s0 = lane_sign16(0), s1 = lane_sign16(1);
	const __m512 s2 = lane_sign16(2), s3 = lane_sign16(3);

	for (size_t c = 0; c < n; c += 256) {
		__m512 v[16];

		UNROLL
		for (unsigned m = 0; m < 16; m++) {
			v[m] = _mm512_loadu_ps(x + c + 16 * m);
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

T512 static void blk_avx512(float *x, unsigned lg, const uint64_t *in_sg, const uint64_t *out_sg,
                            float scale)
{
	size_t n = (size_t)1 << lg;

	pass0_avx512(x, n, lg == 8, in_sg, out_sg, scale);
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

/* ---- AVX2 kernel ------------------------------------------------------------------------- */
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

T256 static void pass0_avx2(float *x, size_t n, const uint64_t *in_sg)
{
	const __m256 s0 = _mm256_setr_ps(1, -1, 1, -1, 1, -1, 1, -1);
	const __m256 s1 = _mm256_setr_ps(1, 1, -1, -1, 1, 1, -1, -1);
	const __m256 s2 = _mm256_setr_ps(1, 1, 1, 1, -1, -1, -1, -1);

	for (size_t c = 0; c < n; c += 64) {
		__m256 v[8];

		UNROLL
		for (unsigned m = 0; m < 8; m++) {
			v[m] = _mm256_loadu_ps(x + c + 8 * m);
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
T256 static void blk_avx2(float *x, unsigned lg, const uint64_t *in_sg, const uint64_t *out_sg,
                          float scale)
{
	size_t n = (size_t)1 << lg;

	pass0_avx2(x, n, in_sg);
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

#endif /* OR_HAD_X86 */

/* ---- dispatch ---------------------------------------------------------------------------- */

struct kernel {
	const char *name;
	blk_f32_fn fn;
};

static const struct kernel kernels[] = {
    [OR_HAD_KERNEL_PORTABLE] = {"portable", blk_portable_f32},
#if OR_HAD_X86
    [OR_HAD_KERNEL_AVX2] = {"avx2", blk_avx2},
    [OR_HAD_KERNEL_AVX512] = {"avx512", blk_avx512},
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

static int code_f32(float *buf, size_t nblocks, unsigned lg, uint64_t seed, uint64_t op_seq,
                    uint64_t first_block, int decode)
{
	uint64_t sw[SIGN_WORDS_MAX];

	if (bad_args(buf, nblocks, lg))
		return -OPTIREDUCE_EINVAL;

	size_t n = (size_t)1 << lg;
	/* sqrt and division are correctly rounded, so every host gets the same factor */
	float scale = (float)(1.0 / sqrt((double)n));
	blk_f32_fn fn = kernel()->fn;

	for (size_t b = 0; b < nblocks; b++) {
		fill_signs(sw, n >> 6, seed, op_seq, first_block + b);
		fn(buf + b * n, lg, decode ? NULL : sw, decode ? sw : NULL, scale);
	}
	return 0;
}

static int code_f64(double *buf, size_t nblocks, unsigned lg, uint64_t seed, uint64_t op_seq,
                    uint64_t first_block, int decode)
{
	uint64_t sw[SIGN_WORDS_MAX];

	if (bad_args(buf, nblocks, lg))
		return -OPTIREDUCE_EINVAL;

	size_t n = (size_t)1 << lg;
	double scale = 1.0 / sqrt((double)n);

	for (size_t b = 0; b < nblocks; b++) {
		fill_signs(sw, n >> 6, seed, op_seq, first_block + b);
		blk_portable_f64(buf + b * n, lg, decode ? NULL : sw, decode ? sw : NULL, scale);
	}
	return 0;
}

int or_had_encode(float *buf, size_t nblocks, unsigned log2_block, uint64_t seed, uint64_t op_seq,
                  uint64_t first_block)
{
	return code_f32(buf, nblocks, log2_block, seed, op_seq, first_block, 0);
}

int or_had_decode(float *buf, size_t nblocks, unsigned log2_block, uint64_t seed, uint64_t op_seq,
                  uint64_t first_block)
{
	return code_f32(buf, nblocks, log2_block, seed, op_seq, first_block, 1);
}

int or_had_encode_f64(double *buf, size_t nblocks, unsigned log2_block, uint64_t seed,
                      uint64_t op_seq, uint64_t first_block)
{
	return code_f64(buf, nblocks, log2_block, seed, op_seq, first_block, 0);
}

int or_had_decode_f64(double *buf, size_t nblocks, unsigned log2_block, uint64_t seed,
                      uint64_t op_seq, uint64_t first_block)
{
	return code_f64(buf, nblocks, log2_block, seed, op_seq, first_block, 1);
}
