/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * portable.c - the Hadamard block transform in GNU C, float and double, for any CPU: the
 * double codec's only kernel, and the float one's where no SIMD kernel runs.
 */
#include <string.h>

#include "kernels.h"

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
	void NAME(const T *src, T *x, unsigned lg, const uint64_t *in_sg, const uint64_t *out_sg,  \
	          T scale)                                                                         \
	{                                                                                          \
		const size_t vl = sizeof(V) / sizeof(T);                                           \
		size_t n = (size_t)1 << lg, top = n >> 1;                                          \
                                                                                                   \
		for (size_t i = 0; i < n; i += 8) {                                                \
			T t[8];                                                                    \
			memcpy(t, src + i, sizeof(t));                                             \
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

DEFINE_PORTABLE(or_had_blk_portable_f32, float, vec_f32, flip_f32)
DEFINE_PORTABLE(or_had_blk_portable_f64, double, vec_f64, flip_f64)
