/* SPDX-License-Identifier: BSD-3-Clause */

/* User files: regular only, opened non-blocking, sizes bounded. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cflow_file.h"
#include "cflow_private.h"

int
cflow_fail(int e, char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && len != 0) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	errno = e;
	return -e;
}

const char *
cflow_file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "of an unknown type";
}

int
cflow_file_not_regular(const char *path, mode_t mode, char *err, size_t len)
{
	return cflow_fail(S_ISDIR(mode) ? EISDIR : EINVAL, err, len,
		"%s: is %s, not a regular file", path, cflow_file_kind(mode));
}

int
cflow_file_open(const char *path, struct stat *sb, char *err,
		size_t err_len)
{
	int fd, flags, e;

	if (stat(path, sb) != 0) {
		e = errno;
		return cflow_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(sb->st_mode))
		return cflow_file_not_regular(path, sb->st_mode, err, err_len);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return cflow_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	if (fstat(fd, sb) != 0) {
		e = errno;
		close(fd);
		return cflow_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(sb->st_mode)) {
		close(fd);
		return cflow_file_not_regular(path, sb->st_mode, err, err_len);
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		e = errno;
		close(fd);
		return cflow_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	return fd;
}

char *
cflow_file_read(const char *path, size_t max, size_t *len, char *err,
		size_t err_len)
{
	struct stat sb;
	char *buf;
	size_t n = 0;
	int fd = cflow_file_open(path, &sb, err, err_len), e;

	if (fd < 0)
		return NULL;
	if ((uint64_t)sb.st_size > max) {
		close(fd);
		cflow_fail(EFBIG, err, err_len,
			"%s: %" PRIu64 " bytes, larger than "
			"the limit of %zu bytes (%.2f MiB)", path,
			(uint64_t)sb.st_size, max, (double)max / (1 << 20));
		return NULL;
	}
	buf = malloc(max + 2);
	if (buf == NULL) {
		close(fd);
		cflow_fail(ENOMEM, err, err_len, "%s: %s", path,
			strerror(ENOMEM));
		return NULL;
	}
	/* One byte more than the limit: a file growing past it is seen. */
	while (n <= max) {
		ssize_t r = read(fd, buf + n, max + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			close(fd);
			free(buf);
			cflow_fail(e, err, err_len, "%s: %s", path,
				strerror(e));
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > max) {
		free(buf);
		cflow_fail(EFBIG, err, err_len,
			"%s: grew past the limit of %zu "
			"bytes (%.2f MiB) while read", path, max,
			(double)max / (1 << 20));
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}
