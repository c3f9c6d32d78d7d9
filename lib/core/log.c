/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

int or_log_level = OR_LOG_WARN;
static int log_rank = -1;

void or_log_init(void)
{
	const char *e = getenv("OPTIREDUCE_LOG_LEVEL");
	if (e && *e >= '0' && *e <= '5' && !e[1])
		or_log_level = *e - '0';
}

void or_log_set_rank(int rank)
{
	log_rank = rank;
}

void or_log_emit(int level, const char *fmt, ...)
{
	static const char *tag[] = {"", "warn", "info", "debug", "trace", "packet"};
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One fprintf per line so ranks sharing a terminal do not interleave mid-line. */
	fprintf(stderr, "optireduce[%d] %s: %s\n", log_rank, tag[level], line);
}
