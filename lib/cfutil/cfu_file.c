/* SPDX-License-Identifier: BSD-3-Clause */

/* User files: regular only, opened non-blocking, sizes bounded; durable
 * writes. See cfutil.h. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfutil.h"

int
cfu_fail(int e, char *err, size_t len, const char *fmt, ...)
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
cfu_file_kind(mode_t mode)
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
cfu_file_not_regular(const char *path, mode_t mode, char *err, size_t len)
{
	return cfu_fail(S_ISDIR(mode) ? EISDIR : EINVAL, err, len,
		"%s: is %s, not a regular file", path, cfu_file_kind(mode));
}

int
cfu_file_open(const char *path, struct stat *sb, char *err,
		size_t err_len)
{
	int fd, flags, e;

	if (stat(path, sb) != 0) {
		e = errno;
		return cfu_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(sb->st_mode))
		return cfu_file_not_regular(path, sb->st_mode, err, err_len);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return cfu_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	if (fstat(fd, sb) != 0) {
		e = errno;
		close(fd);
		return cfu_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(sb->st_mode)) {
		close(fd);
		return cfu_file_not_regular(path, sb->st_mode, err, err_len);
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		e = errno;
		close(fd);
		return cfu_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	return fd;
}

int
cfu_file_no_writer(int fd)
{
	struct sigaction sa;

	/* a writer opening the file while the lease is held sends SIGIO:
	 * only where that does not end the process */
	if (sigaction(SIGIO, NULL, &sa) != 0 || (!(sa.sa_flags & SA_SIGINFO) &&
			sa.sa_handler == SIG_DFL))
		return -ENOTSUP;
	if (fcntl(fd, F_SETLEASE, F_RDLCK) != 0)
		return errno == EAGAIN ? -EBUSY : -ENOTSUP;
	(void)fcntl(fd, F_SETLEASE, F_UNLCK);
	return 0;
}

static bool
same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

int
cfu_file_unchanged(int fd, const char *path, const struct stat *before)
{
	struct stat now, at;

	if (fstat(fd, &now) != 0 || stat(path, &at) != 0)
		return -EAGAIN;
	if (now.st_size != before->st_size ||
			!same_time(&now.st_mtim, &before->st_mtim) ||
			!same_time(&now.st_ctim, &before->st_ctim) ||
			at.st_dev != now.st_dev || at.st_ino != now.st_ino)
		return -EAGAIN;
	return 0;
}

char *
cfu_file_read(const char *path, size_t max, size_t *len, char *err,
		size_t err_len)
{
	struct stat sb;

	return cfu_file_read_stat(path, max, len, &sb, err, err_len);
}

char *
cfu_file_read_stat(const char *path, size_t max, size_t *len,
		struct stat *stat_out, char *err, size_t err_len)
{
	struct stat sb;
	char *buf;
	size_t n = 0, room;
	int fd = cfu_file_open(path, &sb, err, err_len), e;

	if (fd < 0)
		return NULL;
	if ((uint64_t)sb.st_size > max) {
		close(fd);
		cfu_fail(EFBIG, err, err_len,
			"%s: %" PRIu64 " bytes, larger than "
			"the limit of %zu bytes (%.2f MiB)", path,
			(uint64_t)sb.st_size, max, (double)max / (1 << 20));
		return NULL;
	}
	/* Its size, and one byte more: a file that grows is seen. */
	room = (size_t)sb.st_size + 1;
	buf = malloc(room + 1);
	if (buf == NULL) {
		close(fd);
		cfu_fail(ENOMEM, err, err_len, "%s: %s", path,
			strerror(ENOMEM));
		return NULL;
	}
	while (n < room) {
		ssize_t r = read(fd, buf + n, room - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			close(fd);
			free(buf);
			cfu_fail(e, err, err_len, "%s: %s", path,
				strerror(e));
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n != (size_t)sb.st_size) {
		free(buf);
		cfu_fail(EAGAIN, err, err_len, "%s: changed while being read "
			"(%" PRIu64 " bytes, then %s%zu)", path,
			(uint64_t)sb.st_size, n == room ? "over " : "", n);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	*stat_out = sb;
	return buf;
}

int
cfu_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
cfu_path_dir(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash == NULL ? 1 : slash == path ? 1 :
		(size_t)(slash - path);

	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(dir, slash == NULL ? "." : path, n);
	dir[n] = '\0';
	return 0;
}

/* fsync() the directory holding @p path, so that a rename survives a
 * crash; 0 or -errno. */
static int
sync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, ret;

	ret = cfu_path_dir(path, dir, sizeof(dir));
	if (ret != 0)
		return ret;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Some file systems cannot sync a directory; that is no failure. */
	if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Remove the temporary files of @p path that a writer killed mid-way left
 * ("PATH.tmp.PID.N" of a process that is gone): each is as large as the
 * file, and a service stopped by SIGKILL again and again would fill its
 * directory. A live process's file (another writer, or a PID reused) is
 * left alone. Best effort: nothing is reported.
 */
static void
remove_stale_temps(const char *path)
{
	char dir[PATH_MAX], prefix[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash != NULL ? slash + 1 : path;
	size_t plen;
	struct dirent *de;
	DIR *d;

	if (cfu_path_dir(path, dir, sizeof(dir)) != 0)
		return;
	if ((size_t)snprintf(prefix, sizeof(prefix), "%s.tmp.", base) >=
			sizeof(prefix))
		return;
	plen = strlen(prefix);
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *end, full[PATH_MAX];
		long pid;

		if (strncmp(de->d_name, prefix, plen) != 0)
			continue;
		errno = 0;
		pid = strtol(de->d_name + plen, &end, 10);
		if (errno != 0 || pid <= 0 || pid > INT_MAX || *end != '.' ||
				end[1] < '0' || end[1] > '9')
			continue;
		if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
				errno != ESRCH)
			continue;
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", dir,
				de->d_name) < sizeof(full))
			(void)unlink(full);
	}
	closedir(d);
}

int
cfu_write_durable(const char *path, cfu_fill_fn fill, void *ctx, char *err,
		size_t err_len)
{
	return cfu_write_durable_mode(path, 0666, fill, ctx, err, err_len);
}

int
cfu_write_durable_mode(const char *path, mode_t mode, cfu_fill_fn fill,
		void *ctx, char *err, size_t err_len)
{
	static unsigned int seq;
	char tmp[PATH_MAX];
	struct stat sb;
	int fd = -1, ret, e;

	if (stat(path, &sb) == 0) {
		if (!S_ISREG(sb.st_mode))
			return cfu_file_not_regular(path, sb.st_mode, err,
				err_len);
	} else if (errno != ENOENT) {
		e = errno;
		return cfu_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	remove_stale_temps(path);
	for (int tries = 0; fd < 0; tries++) {
		unsigned int k = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);

		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path,
				(long)getpid(), k) >= sizeof(tmp))
			return cfu_fail(ENAMETOOLONG, err, err_len, "%s: %s",
				path, strerror(ENAMETOOLONG));
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY |
			O_CLOEXEC, mode);
		if (fd < 0 && (errno != EEXIST || tries == 100)) {
			e = errno;
			return cfu_fail(e, err, err_len,
				"%s: a temporary file next to it: %s", path,
				strerror(e));
		}
	}
	ret = fill(fd, ctx);
	if (ret == 0 && fsync(fd) != 0)
		ret = -errno;
	if (close(fd) != 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) != 0)
		ret = -errno;
	if (ret != 0) {
		e = -ret;
		if (unlink(tmp) != 0 && errno != ENOENT)
			return cfu_fail(e, err, err_len,
				"%s: %s (and %s is left behind: %s)", path,
				strerror(e), tmp, strerror(errno));
		return cfu_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	ret = sync_dir(path);
	if (ret != 0)
		return cfu_fail(-ret, err, err_len,
			"%s: written, but its directory not synced: %s", path,
			strerror(-ret));
	return 0;
}
