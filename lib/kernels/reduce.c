/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduction kernels: one small loop per (dtype, op) and per operand shape,
 * stamped out by macros and found through a table indexed by [dtype][op].
 *
 * The loops are kept trivially vectorizable: restrict pointers, a branch-free
 * element function inlined into a counted loop, no early exits.  The shapes
 * exist so that no loop ever needs a runtime alias check: out == a and
 * out == b are routed to in-place loops instead of lying through restrict.
 */

/*
 * GCC before 12 does not vectorize at -O2, and GCC 12's -O2 cost model
 * refuses any loop that needs a scalar epilogue, which is all of these.
 * Raise it for this file only; -O0 and -Os builds are left alone so the file
 * stays debuggable and small when that is what was asked for.  Everything,
 * the inline helpers of half.h included, comes after the pragma: GCC will
 * not inline across differing optimization options.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) &&                           \
    !defined(__OPTIMIZE_SIZE__) && !defined(OR_REDUCE_NO_PRAGMA)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#include <string.h>

#include "half.h"
#include "reduce.h"

_Static_assert(OPTIREDUCE_DTYPE_COUNT == 10 && OPTIREDUCE_OP_COUNT == 5,
               "a new dtype or op needs kernels and a table row in reduce.c");

/*
 * Integers: arithmetic in the unsigned type of the same width, where
 * overflow is defined to wrap; converting back is modular in GCC and Clang.
 */
#define OR_INT_OPS(sfx, T, UT)                                                                     \
	static inline T or_sum_##sfx(T a, T b)                                                     \
	{                                                                                          \
		return (T)((UT)a + (UT)b);                                                         \
	}                                                                                          \
	static inline T or_prod_##sfx(T a, T b)                                                    \
	{                                                                                          \
		return (T)((UT)a * (UT)b);                                                         \
	}                                                                                          \
	static inline T or_min_##sfx(T a, T b)                                                     \
	{                                                                                          \
		return b < a ? b : a;                                                              \
	}                                                                                          \
	static inline T or_max_##sfx(T a, T b)                                                     \
	{                                                                                          \
		return b > a ? b : a;                                                              \
	}

OR_INT_OPS(i8, int8_t, uint8_t)
OR_INT_OPS(u8, uint8_t, uint8_t)
OR_INT_OPS(i32, int32_t, uint32_t)
OR_INT_OPS(u32, uint32_t, uint32_t)
OR_INT_OPS(i64, int64_t, uint64_t)
OR_INT_OPS(u64, uint64_t, uint64_t)

/*
 * Floats: a compare alone would return b or a depending on which one is
 * NaN; the second select makes NaN win from either side.  Written as
 * selects rather than fmin() so it stays a compare-and-blend per vector.
 */
#define OR_FLOAT_OPS(sfx, T)                                                                       \
	static inline T or_sum_##sfx(T a, T b)                                                     \
	{                                                                                          \
		return a + b;                                                                      \
	}                                                                                          \
	static inline T or_prod_##sfx(T a, T b)                                                    \
	{                                                                                          \
		return a * b;                                                                      \
	}                                                                                          \
	static inline T or_min_##sfx(T a, T b)                                                     \
	{                                                                                          \
		T r = b < a ? b : a;                                                               \
		return b != b ? b : r;                                                             \
	}                                                                                          \
	static inline T or_max_##sfx(T a, T b)                                                     \
	{                                                                                          \
		T r = b > a ? b : a;                                                               \
		return b != b ? b : r;                                                             \
	}

OR_FLOAT_OPS(f32, float)
OR_FLOAT_OPS(f64, double)

/*
 * 16-bit floats: arithmetic in float, rounded back at every step so the
 * result does not depend on how the caller chunks the buffer.  MIN/MAX
 * compare in float but return an operand's own bits, saving a round trip.
 */
#define OR_HALF_OPS(sfx, TO, FROM)                                                                 \
	static inline uint16_t or_sum_##sfx(uint16_t a, uint16_t b)                                \
	{                                                                                          \
		return FROM(TO(a) + TO(b));                                                        \
	}                                                                                          \
	static inline uint16_t or_prod_##sfx(uint16_t a, uint16_t b)                               \
	{                                                                                          \
		return FROM(TO(a) * TO(b));                                                        \
	}                                                                                          \
	static inline uint16_t or_min_##sfx(uint16_t a, uint16_t b)                                \
	{                                                                                          \
		float x = TO(a), y = TO(b);                                                        \
		uint16_t r = y < x ? b : a;                                                        \
		return y != y ? b : r;                                                             \
	}                                                                                          \
	static inline uint16_t or_max_##sfx(uint16_t a, uint16_t b)                                \
	{                                                                                          \
		float x = TO(a), y = TO(b);                                                        \
		uint16_t r = y > x ? b : a;                                                        \
		return y != y ? b : r;                                                             \
	}

OR_HALF_OPS(f16, or_half_to_float, or_float_to_half)
OR_HALF_OPS(bf16, or_bf16_to_float, or_float_to_bf16)

typedef void or_k2_fn(void *restrict inout, const void *restrict in, size_t n);
typedef void or_k3_fn(void *restrict out, const void *restrict a, const void *restrict b, size_t n);

/* k2: inout = inout OP in; k2r: inout = in OP inout (out == b); k3: out = a OP b. */
#define OR_KERNELS(name, T)                                                                        \
	static void or_k2_##name(void *restrict vio, const void *restrict vin, size_t n)           \
	{                                                                                          \
		T *restrict io = vio;                                                              \
		const T *restrict in = vin;                                                        \
		for (size_t i = 0; i < n; i++)                                                     \
			io[i] = or_##name(io[i], in[i]);                                           \
	}                                                                                          \
	static void or_k2r_##name(void *restrict vio, const void *restrict vin, size_t n)          \
	{                                                                                          \
		T *restrict io = vio;                                                              \
		const T *restrict in = vin;                                                        \
		for (size_t i = 0; i < n; i++)                                                     \
			io[i] = or_##name(in[i], io[i]);                                           \
	}                                                                                          \
	static void or_k3_##name(void *restrict vo, const void *restrict va,                       \
	                         const void *restrict vb, size_t n)                                \
	{                                                                                          \
		T *restrict o = vo;                                                                \
		const T *restrict a = va;                                                          \
		const T *restrict b = vb;                                                          \
		for (size_t i = 0; i < n; i++)                                                     \
			o[i] = or_##name(a[i], b[i]);                                              \
	}

#define OR_KERNELS_ALL(sfx, T)                                                                     \
	OR_KERNELS(sum_##sfx, T)                                                                   \
	OR_KERNELS(prod_##sfx, T)                                                                  \
	OR_KERNELS(min_##sfx, T)                                                                   \
	OR_KERNELS(max_##sfx, T)

OR_KERNELS_ALL(i8, int8_t)
OR_KERNELS_ALL(u8, uint8_t)
OR_KERNELS_ALL(i32, int32_t)
OR_KERNELS_ALL(u32, uint32_t)
OR_KERNELS_ALL(i64, int64_t)
OR_KERNELS_ALL(u64, uint64_t)
OR_KERNELS_ALL(f16, uint16_t)
OR_KERNELS_ALL(bf16, uint16_t)
OR_KERNELS_ALL(f32, float)
OR_KERNELS_ALL(f64, double)

struct or_kernel {
	or_k2_fn *k2;
	or_k2_fn *k2r;
	or_k3_fn *k3;
};

#define OR_K(name)                                                                                 \
	{                                                                                          \
		or_k2_##name, or_k2r_##name, or_k3_##name                                          \
	}
#define OR_ROW(sfx)                                                                                \
	{                                                                                          \
		[OPTIREDUCE_SUM] = OR_K(sum_##sfx), [OPTIREDUCE_PROD] = OR_K(prod_##sfx),          \
		[OPTIREDUCE_MIN] = OR_K(min_##sfx), [OPTIREDUCE_MAX] = OR_K(max_##sfx),            \
		[OPTIREDUCE_AVG] = OR_K(sum_##sfx),                                                \
	}

static const struct or_kernel or_kernels[OPTIREDUCE_DTYPE_COUNT][OPTIREDUCE_OP_COUNT] = {
    [OPTIREDUCE_INT8] = OR_ROW(i8),     [OPTIREDUCE_UINT8] = OR_ROW(u8),
    [OPTIREDUCE_INT32] = OR_ROW(i32),   [OPTIREDUCE_UINT32] = OR_ROW(u32),
    [OPTIREDUCE_INT64] = OR_ROW(i64),   [OPTIREDUCE_UINT64] = OR_ROW(u64),
    [OPTIREDUCE_FLOAT16] = OR_ROW(f16), [OPTIREDUCE_BFLOAT16] = OR_ROW(bf16),
    [OPTIREDUCE_FLOAT32] = OR_ROW(f32), [OPTIREDUCE_FLOAT64] = OR_ROW(f64),
};

/* Unsigned compares also reject negative values forced into the enums. */
static int or_check(enum optireduce_dtype dtype, enum optireduce_op op)
{
	if ((unsigned)dtype >= OPTIREDUCE_DTYPE_COUNT)
		return -OPTIREDUCE_EDTYPE;
	if ((unsigned)op >= OPTIREDUCE_OP_COUNT)
		return -OPTIREDUCE_EOP;
	return 0;
}

int or_reduce(void *inout, const void *in, size_t count, enum optireduce_dtype dtype,
              enum optireduce_op op)
{
	int rc = or_check(dtype, op);

	if (rc == 0 && count > 0)
		or_kernels[dtype][op].k2(inout, in, count);
	return rc;
}

int or_reduce3(void *out, const void *a, const void *b, size_t count, enum optireduce_dtype dtype,
               enum optireduce_op op)
{
	const struct or_kernel *k;
	int rc = or_check(dtype, op);

	if (rc != 0 || count == 0)
		return rc;
	k = &or_kernels[dtype][op];
	if (out == a)
		k->k2(out, b, count);
	else if (out == b)
		k->k2r(out, a, count);
	else
		k->k3(out, a, b, count);
	return 0;
}

/* Divide and scale: one loop per dtype; cold next to the reductions. */

#define OR_DIV_INT(sfx, T, WT)                                                                     \
	static void or_div_##sfx(void *restrict vb, size_t n, uint32_t d)                          \
	{                                                                                          \
		T *restrict b = vb;                                                                \
		for (size_t i = 0; i < n; i++)                                                     \
			b[i] = (T)((WT)b[i] / (WT)d);                                              \
	}

/* Wide enough that neither the value nor the divisor changes sign or size. */
OR_DIV_INT(i8, int8_t, int64_t)
OR_DIV_INT(u8, uint8_t, uint32_t)
OR_DIV_INT(i32, int32_t, int64_t)
OR_DIV_INT(u32, uint32_t, uint32_t)
OR_DIV_INT(i64, int64_t, int64_t)
OR_DIV_INT(u64, uint64_t, uint64_t)

static void or_div_f32(void *restrict vb, size_t n, uint32_t d)
{
	float *restrict b = vb;
	float fd = (float)d;

	for (size_t i = 0; i < n; i++)
		b[i] = b[i] / fd;
}

static void or_div_f64(void *restrict vb, size_t n, uint32_t d)
{
	double *restrict b = vb;
	double dd = (double)d;

	for (size_t i = 0; i < n; i++)
		b[i] = b[i] / dd;
}

static void or_div_f16(void *restrict vb, size_t n, uint32_t d)
{
	uint16_t *restrict b = vb;
	float fd = (float)d;

	for (size_t i = 0; i < n; i++)
		b[i] = or_float_to_half(or_half_to_float(b[i]) / fd);
}

static void or_div_bf16(void *restrict vb, size_t n, uint32_t d)
{
	uint16_t *restrict b = vb;
	float fd = (float)d;

	for (size_t i = 0; i < n; i++)
		b[i] = or_float_to_bf16(or_bf16_to_float(b[i]) / fd);
}

static void (*const or_divs[OPTIREDUCE_DTYPE_COUNT])(void *restrict, size_t, uint32_t) = {
    [OPTIREDUCE_INT8] = or_div_i8,     [OPTIREDUCE_UINT8] = or_div_u8,
    [OPTIREDUCE_INT32] = or_div_i32,   [OPTIREDUCE_UINT32] = or_div_u32,
    [OPTIREDUCE_INT64] = or_div_i64,   [OPTIREDUCE_UINT64] = or_div_u64,
    [OPTIREDUCE_FLOAT16] = or_div_f16, [OPTIREDUCE_BFLOAT16] = or_div_bf16,
    [OPTIREDUCE_FLOAT32] = or_div_f32, [OPTIREDUCE_FLOAT64] = or_div_f64,
};

int or_reduce_divide(void *buf, size_t count, enum optireduce_dtype dtype, uint32_t n)
{
	if ((unsigned)dtype >= OPTIREDUCE_DTYPE_COUNT)
		return -OPTIREDUCE_EDTYPE;
	if (n == 0)
		return -OPTIREDUCE_EINVAL;
	/* x / 1 is x in every type, NaN payloads included: skip the pass. */
	if (n > 1 && count > 0)
		or_divs[dtype](buf, count, n);
	return 0;
}

int or_reduce_scale(void *buf, size_t count, enum optireduce_dtype dtype, double factor)
{
	size_t i;

	switch (dtype) {
	case OPTIREDUCE_FLOAT16: {
		uint16_t *restrict b = buf;
		float f = (float)factor;

		for (i = 0; i < count; i++)
			b[i] = or_float_to_half(or_half_to_float(b[i]) * f);
		return 0;
	}
	case OPTIREDUCE_BFLOAT16: {
		uint16_t *restrict b = buf;
		float f = (float)factor;

		for (i = 0; i < count; i++)
			b[i] = or_float_to_bf16(or_bf16_to_float(b[i]) * f);
		return 0;
	}
	case OPTIREDUCE_FLOAT32: {
		float *restrict b = buf;

		for (i = 0; i < count; i++)
			b[i] = (float)((double)b[i] * factor);
		return 0;
	}
	case OPTIREDUCE_FLOAT64: {
		double *restrict b = buf;

		for (i = 0; i < count; i++)
			b[i] *= factor;
		return 0;
	}
	default:
		return -OPTIREDUCE_EDTYPE;
	}
}

int or_to_float(float *dst, const void *src, size_t count, enum optireduce_dtype dtype)
{
	size_t i;

	switch (dtype) {
	case OPTIREDUCE_FLOAT16: {
		const uint16_t *restrict s = src;
		float *restrict d = dst;

		for (i = 0; i < count; i++)
			d[i] = or_half_to_float(s[i]);
		return 0;
	}
	case OPTIREDUCE_BFLOAT16: {
		const uint16_t *restrict s = src;
		float *restrict d = dst;

		for (i = 0; i < count; i++)
			d[i] = or_bf16_to_float(s[i]);
		return 0;
	}
	case OPTIREDUCE_FLOAT32:
		if (count > 0)
			memmove(dst, src, count * sizeof(float));
		return 0;
	case OPTIREDUCE_FLOAT64: {
		const double *restrict s = src;
		float *restrict d = dst;

		for (i = 0; i < count; i++)
			d[i] = (float)s[i];
		return 0;
	}
	default:
		return -OPTIREDUCE_EDTYPE;
	}
}

int or_from_float(void *dst, const float *src, size_t count, enum optireduce_dtype dtype)
{
	size_t i;

	switch (dtype) {
	case OPTIREDUCE_FLOAT16: {
		const float *restrict s = src;
		uint16_t *restrict d = dst;

		for (i = 0; i < count; i++)
			d[i] = or_float_to_half(s[i]);
		return 0;
	}
	case OPTIREDUCE_BFLOAT16: {
		const float *restrict s = src;
		uint16_t *restrict d = dst;

		for (i = 0; i < count; i++)
			d[i] = or_float_to_bf16(s[i]);
		return 0;
	}
	case OPTIREDUCE_FLOAT32:
		if (count > 0)
			memmove(dst, src, count * sizeof(float));
		return 0;
	case OPTIREDUCE_FLOAT64: {
		const float *restrict s = src;
		double *restrict d = dst;

		for (i = 0; i < count; i++)
			d[i] = (double)s[i];
		return 0;
	}
	default:
		return -OPTIREDUCE_EDTYPE;
	}
}
