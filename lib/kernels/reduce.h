/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Element-wise reduction kernels for every (dtype, op) of the public API.
 *
 * Semantics, the same on every path (exact, bounded, PMPI):
 *  - AVG reduces as SUM; the caller divides once at the end with
 *    or_reduce_divide(), so partial results stay exact sums.
 *  - Integer SUM and PROD wrap modulo 2^bits, signed types included.
 *  - Floating MIN and MAX propagate NaN (MPI leaves NaN undefined; a plain
 *    compare would make the result depend on operand order): if either
 *    operand is NaN the result is NaN.  Equal operands, +0 and -0 among
 *    them, keep the first operand (inout / a).
 *  - float16 and bfloat16 are widened to float, combined, and rounded back
 *    (nearest-even) at every step; MIN/MAX return one operand's bits.
 *
 * Buffers are arrays of the element type, suitably aligned.  Apart from the
 * aliasing or_reduce3() allows, they must not overlap.  Unknown dtype or op
 * values return a negative code before any memory is touched.
 */
#ifndef OR_REDUCE_H
#define OR_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "optireduce.h"

/* inout[i] = inout[i] OP in[i] for i < count. */
int or_reduce(void *inout, const void *in, size_t count, enum optireduce_dtype dtype,
              enum optireduce_op op);

/* out[i] = a[i] OP b[i]; out may be a or b (the same pointer), a may be b. */
int or_reduce3(void *out, const void *a, const void *b, size_t count, enum optireduce_dtype dtype,
               enum optireduce_op op);

/*
 * buf[i] /= n, the last step of AVG.  Floating types compute x / (T)n in
 * their own type (half types in float); integers truncate toward zero.
 * n == 0 is -OPTIREDUCE_EINVAL.
 */
int or_reduce_divide(void *buf, size_t count, enum optireduce_dtype dtype, uint32_t n);

/*
 * buf[i] *= factor, floating types only (-OPTIREDUCE_EDTYPE otherwise).
 * float32 and float64 multiply in double and round once; half types
 * multiply in float by (float)factor.
 */
int or_reduce_scale(void *buf, size_t count, enum optireduce_dtype dtype, double factor);

/*
 * Floating dtypes (float16, bfloat16, float32, float64) to and from arrays
 * of float, for the codec.  Narrowing rounds to nearest-even;
 * -OPTIREDUCE_EDTYPE for integer dtypes.
 */
int or_to_float(float *dst, const void *src, size_t count, enum optireduce_dtype dtype);
int or_from_float(void *dst, const float *src, size_t count, enum optireduce_dtype dtype);

#endif /* OR_REDUCE_H */
