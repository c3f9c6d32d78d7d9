/* SPDX-License-Identifier: BSD-3-Clause */
#include <limits.h>

#include "optireduce.h"

const char *optireduce_strerror(int err)
{
	/* INT_MIN has no positive counterpart: it names no code. */
	if (err == INT_MIN)
		return "Unknown error";
	if (err < 0)
		err = -err;
	switch (err) {
#define OR_ERR_CASE(name, value, msg)                                                              \
	case value:                                                                                \
		return msg;
		OPTIREDUCE_ERRNO_MAP(OR_ERR_CASE)
#undef OR_ERR_CASE
	case OPTIREDUCE_INPROGRESS:
		return "Operation in progress";
	}
	return "Unknown error";
}
