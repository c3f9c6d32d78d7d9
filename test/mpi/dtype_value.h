/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtype_value.h - one element of a buffer of any liboptireduce dtype, read or written as a
 * double, for the tests and the benchmark that check results against a reference computed
 * in double.  Shared so that the two agree on how a value is rounded into each dtype.
 */
#ifndef OR_DTYPE_VALUE_H
#define OR_DTYPE_VALUE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/kernels/half.h"
#include "optireduce.h"

static inline void dtype_store(void *buf, size_t i, enum optireduce_dtype dt, double v)
{
	switch (dt) {
	case OPTIREDUCE_INT8:
		((int8_t *)buf)[i] = (int8_t)v;
		break;
	case OPTIREDUCE_UINT8:
		((uint8_t *)buf)[i] = (uint8_t)v;
		break;
	case OPTIREDUCE_INT32:
		((int32_t *)buf)[i] = (int32_t)v;
		break;
	case OPTIREDUCE_UINT32:
		((uint32_t *)buf)[i] = (uint32_t)v;
		break;
	case OPTIREDUCE_INT64:
		((int64_t *)buf)[i] = (int64_t)v;
		break;
	case OPTIREDUCE_UINT64:
		((uint64_t *)buf)[i] = (uint64_t)v;
		break;
	case OPTIREDUCE_FLOAT16:
		((uint16_t *)buf)[i] = or_float_to_half((float)v);
		break;
	case OPTIREDUCE_BFLOAT16:
		((uint16_t *)buf)[i] = or_float_to_bf16((float)v);
		break;
	case OPTIREDUCE_FLOAT32:
		((float *)buf)[i] = (float)v;
		break;
	case OPTIREDUCE_FLOAT64:
		((double *)buf)[i] = v;
		break;
	default:
		break;
	}
}

static inline double dtype_load(const void *buf, size_t i, enum optireduce_dtype dt)
{
	switch (dt) {
	case OPTIREDUCE_INT8:
		return ((const int8_t *)buf)[i];
	case OPTIREDUCE_UINT8:
		return ((const uint8_t *)buf)[i];
	case OPTIREDUCE_INT32:
		return ((const int32_t *)buf)[i];
	case OPTIREDUCE_UINT32:
		return ((const uint32_t *)buf)[i];
	case OPTIREDUCE_INT64:
		return (double)((const int64_t *)buf)[i];
	case OPTIREDUCE_UINT64:
		return (double)((const uint64_t *)buf)[i];
	case OPTIREDUCE_FLOAT16:
		return or_half_to_float(((const uint16_t *)buf)[i]);
	case OPTIREDUCE_BFLOAT16:
		return or_bf16_to_float(((const uint16_t *)buf)[i]);
	case OPTIREDUCE_FLOAT32:
		return ((const float *)buf)[i];
	case OPTIREDUCE_FLOAT64:
		return ((const double *)buf)[i];
	default:
		return NAN;
	}
}

#endif
