/* SPDX-License-Identifier: BSD-3-Clause */

/* Run-time messages, with journald's priority prefixes (log.h). */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "log.h"

static bool journal[3]; /* by file descriptor: 1 stdout, 2 stderr */

/* $JOURNAL_STREAM is "DEVICE:INODE" of the stream systemd connected to
 * the journal (systemd.exec(5)). */
static bool
is_journal(int fd)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat sb;

	return env != NULL && sscanf(env, "%llu:%llu", &dev, &ino) == 2 &&
		fstat(fd, &sb) == 0 && (unsigned long long)sb.st_dev == dev &&
		(unsigned long long)sb.st_ino == ino;
}

void
app_log_init(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	journal[1] = is_journal(1);
	journal[2] = is_journal(2);
}

const char *
app_log_prefix(FILE *f, enum app_log_level level)
{
	static const char *const prefix[] = {
		[APP_LOG_ERR] = "<3>", [APP_LOG_WARNING] = "<4>",
		[APP_LOG_NOTICE] = "<5>",
	};
	int fd = f == stdout ? 1 : f == stderr ? 2 : 0;

	return journal[fd] ? prefix[level] : "";
}

void
app_log(enum app_log_level level, const char *fmt, ...)
{
	FILE *f = level <= APP_LOG_WARNING ? stderr : stdout;
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one write: lines of two threads never mix */
	fprintf(f, "%scuckooflow: %s%s\n", app_log_prefix(f, level),
		level == APP_LOG_WARNING ? "warning: " : "", line);
}
