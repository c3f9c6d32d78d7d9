/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the fuzz targets share: libFuzzer's entry point, and a copy of the input in a
 * buffer of exactly its size (libFuzzer's own buffer may be larger than the input, which
 * would hide a read past the end of a datagram from AddressSanitizer).
 */
#ifndef OR_FUZZ_INPUT_H
#define OR_FUZZ_INPUT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline uint8_t *fuzz_copy(const uint8_t *data, size_t size)
{
	uint8_t *p = calloc(size ? size : 1, 1);

	if (!p)
		abort();
	if (size)
		memcpy(p, data, size);
	return p;
}

#endif
