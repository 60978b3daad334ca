/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_PRIVATE_H_
#define _CFLOW_PRIVATE_H_

/* lib/cflow's own helpers, shared by its files; not installed. */

#include <stddef.h>
#include <sys/stat.h>

/*
 * The library's error convention: the message goes to @p err (if any),
 * errno is set to @p e, and -e is returned, so that callers can return
 * NULL or the code in one line.
 */
int cflow_fail(int e, char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Refuse @p path, of @p mode, for not being a regular file: -EISDIR for
 * a directory, else -EINVAL, naming what it is. */
int cflow_file_not_regular(const char *path, mode_t mode, char *err,
		size_t len);

#endif /* _CFLOW_PRIVATE_H_ */
