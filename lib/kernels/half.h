/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IEEE binary16 and bfloat16 <-> binary32 conversions.
 *
 * Branch-free integer code (selects, not jumps) so that GCC and Clang
 * vectorize the loops that call these; no dependence on F16C or on the
 * floating-point environment except where noted.
 *
 * Choices shared by both formats:
 *  - narrowing rounds to nearest, ties to even, and overflows to infinity;
 *  - a NaN stays a NaN of the same sign and keeps the top bits of its
 *    payload, so half -> float -> half is the identity on all 65536 patterns
 *    (signaling NaNs included: no arithmetic touches them here).
 */
#ifndef OR_HALF_H
#define OR_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t or_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float or_bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/*
 * c ? x : y for c in {0, 1}, as masks.  With ?: GCC moves the FP operation
 * into a branch of its own (where its result is live) and then will not
 * if-convert it back, since FP operations may trap: nothing vectorizes.
 */
static inline uint32_t or_sel(uint32_t c, uint32_t x, uint32_t y)
{
	uint32_t m = 0u - c;

	return (x & m) | (y & ~m);
}

static inline float or_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t em = h & 0x7fffu;
	/* Rebias 15 -> 127; Inf/NaN need the exponent pushed on to 255. */
	uint32_t bits = (em << 13) + (112u << 23);
	uint32_t sub;

	bits += or_sel(em >= 0x7c00u, 112u << 23, 0);
	/*
	 * Subnormal m * 2^-24: place m under the exponent of 2^-14 and take
	 * 2^-14 away again.  Exact by Sterbenz, so the rounding mode does not
	 * matter, and operands and result are normal floats, so DAZ/FTZ do not.
	 */
	sub = or_f32_bits(or_bits_f32((em << 13) + (113u << 23)) - 0x1p-14f);
	bits = or_sel(em < 0x0400u, sub, bits);
	return or_bits_f32(bits | sign);
}

static inline uint16_t or_float_to_half(float f)
{
	uint32_t x = or_f32_bits(f);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t a = x & 0x7fffffffu;
	/* Add just under half an ulp, plus one if the kept lsb is odd: RNE. */
	uint32_t norm = (a + 0x0fffu + ((a >> 13) & 1u) - (112u << 23)) >> 13;
	uint32_t nan = (a >> 13) & 0x3ffu;
	uint32_t sub;
	uint32_t h;

	/*
	 * Below 2^-14 the result is a multiple of 2^-24, which is exactly the
	 * ulp of floats in [0.5, 1): adding 0.5 lets the FPU do the rounding
	 * and a carry to 1024 is the encoding of the smallest normal.  Needs
	 * round-to-nearest, the default.  x87 excess precision is harmless:
	 * inputs that can round up (>= 2^-25) add to 0.5 exactly in 64 bits.
	 */
	sub = or_f32_bits(or_bits_f32(a) + 0.5f) - 0x3f000000u;
	h = or_sel(a < 0x38800000u, sub, norm);
	/* 65520 is halfway between 65504 (odd mantissa) and 2^16: ties go up. */
	h = or_sel(a >= 0x477ff000u, 0x7c00u, h);
	/* Payload only in the dropped bits would read as Inf: set the quiet bit. */
	nan |= nan == 0 ? 0x0200u : 0;
	h = or_sel(a > 0x7f800000u, 0x7c00u | nan, h);
	return (uint16_t)(h | sign);
}

static inline float or_bf16_to_float(uint16_t b)
{
	return or_bits_f32((uint32_t)b << 16);
}

static inline uint16_t or_float_to_bf16(float f)
{
	uint32_t x = or_f32_bits(f);
	/* Cannot wrap: the largest non-NaN input, -FLT_MAX, ends at 0xff807fff. */
	uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
	uint32_t nan = x >> 16;

	nan |= (nan & 0x7fu) == 0 ? 0x40u : 0;
	r = (x & 0x7fffffffu) > 0x7f800000u ? nan : r;
	return (uint16_t)r;
}

#endif /* OR_HALF_H */
