/* SPDX-License-Identifier: BSD-3-Clause */
#include "optireduce.h"

static const struct {
	size_t size;
	const char *name;
} dtypes[OPTIREDUCE_DTYPE_COUNT] = {
    [OPTIREDUCE_INT8] = {1, "int8"},       [OPTIREDUCE_UINT8] = {1, "uint8"},
    [OPTIREDUCE_INT32] = {4, "int32"},     [OPTIREDUCE_UINT32] = {4, "uint32"},
    [OPTIREDUCE_INT64] = {8, "int64"},     [OPTIREDUCE_UINT64] = {8, "uint64"},
    [OPTIREDUCE_FLOAT16] = {2, "float16"}, [OPTIREDUCE_BFLOAT16] = {2, "bfloat16"},
    [OPTIREDUCE_FLOAT32] = {4, "float32"}, [OPTIREDUCE_FLOAT64] = {8, "float64"},
};

static const char *ops[OPTIREDUCE_OP_COUNT] = {"sum", "prod", "min", "max", "avg"};

size_t optireduce_dtype_size(enum optireduce_dtype dtype)
{
	return (unsigned)dtype < OPTIREDUCE_DTYPE_COUNT ? dtypes[dtype].size : 0;
}

const char *optireduce_dtype_name(enum optireduce_dtype dtype)
{
	return (unsigned)dtype < OPTIREDUCE_DTYPE_COUNT ? dtypes[dtype].name : "unknown";
}

const char *optireduce_op_name(enum optireduce_op op)
{
	return (unsigned)op < OPTIREDUCE_OP_COUNT ? ops[op] : "unknown";
}
