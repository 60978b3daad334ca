/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_FILE_H_
#define _CFLOW_FILE_H_

/**
 * @file
 * Reading a user's file without trusting its path: only regular files,
 * never a blocking open, a size limit checked before any read. The
 * blocklist loader and the application's config file use these, so
 * that a FIFO, a directory or a device named as input is refused by
 * name instead of hanging or being read forever.
 *
 * Errors: -errno (EISDIR for a directory, EINVAL for another non-regular
 * file, EFBIG over the limit, or the system's), errno set, and
 * "PATH: reason" in @p err.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/** "a directory", "a FIFO", "a character device", ... for @p mode. */
const char *cflow_file_kind(mode_t mode);

/**
 * Open @p path for reading: stat()ed first (a device is not even
 * opened), opened with O_NONBLOCK, fstat()ed again, then made blocking
 * once known to be a regular file.
 *
 * @return
 *   The descriptor, with @p sb filled, or -errno.
 */
int cflow_file_open(const char *path, struct stat *sb, char *err,
		size_t err_len);

/**
 * The whole of @p path, at most @p max bytes (a file growing past the
 * limit while read is seen), NUL-terminated, in a malloc()ed buffer.
 *
 * @return
 *   The buffer, its length in @p len; or NULL with errno set.
 */
char *cflow_file_read(const char *path, size_t max, size_t *len, char *err,
		size_t err_len);

#endif /* _CFLOW_FILE_H_ */
