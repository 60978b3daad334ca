/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_LOG_H_
#define _APP_LOG_H_

/*
 * The application's run-time messages, one line each, "cuckooflow: "
 * first: warnings and errors on stderr, notices on stdout. Under
 * systemd (a stream that is the journal's: $JOURNAL_STREAM) each line
 * starts with its syslog priority, "<4>" for a warning (sd-daemon(3)),
 * which journald takes as the line's level (journalctl -p warning).
 */

#include <stdio.h>

enum app_log_level {
	APP_LOG_ERR = 3,
	APP_LOG_WARNING = 4,
	APP_LOG_NOTICE = 5,
};

/* stdout line-buffered (a pipe or the journal sees each line as it is
 * printed), and which of stdout and stderr is the journal. */
void app_log_init(void);

/* One line at @p level: "warning: " after the program's name for a
 * warning. */
void app_log(enum app_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The priority prefix for @p level on @p f ("<4>"), or "" if @p f is
 * not the journal's: for lines printed otherwise (a table's). */
const char *app_log_prefix(FILE *f, enum app_log_level level);

#endif /* _APP_LOG_H_ */
