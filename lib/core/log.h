/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef OR_LOG_H
#define OR_LOG_H

enum or_log_level {
	OR_LOG_NONE,
	OR_LOG_WARN,
	OR_LOG_INFO,
	OR_LOG_DEBUG,
	OR_LOG_TRACE,
	OR_LOG_PACKET,
};

/* Process-wide: from OPTIREDUCE_LOG_LEVEL at first use, or the last ctx that set it. */
extern int or_log_level;
void or_log_set_rank(int rank);
void or_log_init(void);
void or_log_emit(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define or_log(level, ...)                                                                         \
	do {                                                                                       \
		if ((level) <= or_log_level)                                                       \
			or_log_emit((level), __VA_ARGS__);                                         \
	} while (0)

#endif /* OR_LOG_H */
