/* SPDX-License-Identifier: BSD-3-Clause */
/* Messages of the interposer: "optireduce-pmpi[rank] level: text" on stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "pmpi_internal.h"

int orp_log_level = ORP_LOG_WARN;
int orp_world_rank = -1;

/* Same variable and scale as the core library (lib/core/log.c). */
void orp_log_init(void)
{
	const char *e = getenv("OPTIREDUCE_LOG_LEVEL");

	if (e && *e >= '0' && *e <= '9' && !e[1])
		orp_log_level = *e - '0';
}

void orp_log(int level, const char *fmt, ...)
{
	static const char *const tag[] = {"", "warn", "info", "debug"};
	char line[1024];
	va_list ap;

	if (level > orp_log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One call per line so ranks sharing a terminal do not interleave mid-line. */
	fprintf(stderr, "optireduce-pmpi[%d] %s: %s\n", orp_world_rank, tag[level < 4 ? level : 3],
	        line);
}
