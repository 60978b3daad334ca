/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CBL_PRIVATE_H_
#define _CBL_PRIVATE_H_

/* lib/blocklist's text reading, shared by the blocklist and the allow
 * list; not installed. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blocklist.h"

/*
 * A text list, one line at a time through a fixed buffer: memory does
 * not depend on the file's size, and a line longer than
 * CBL_LINE_MAX or holding a NUL byte stops the read at once.
 */
struct cbl_line_reader {
	int fd;
	const char *path;
	uint64_t line;          /* the number of the line last returned */
	uint64_t bytes;         /* read so far */
	size_t pos, len;
	char buf[1 << 16];
};

void cbl_line_reader_init(struct cbl_line_reader *r, int fd,
		const char *path);

/* 1 and a line in out (no newline), 0 at end of file, or -errno with
 * "FILE:LINE: reason" in err: a line longer than CBL_LINE_MAX, a NUL
 * byte, a file growing past CBL_TEXT_MAX, a read error. */
int cbl_next_line(struct cbl_line_reader *r, char out[CBL_LINE_MAX + 1],
		char *err, size_t err_len);

/* Split @p line at blanks, a '#' or ';' comment ending it, into at
 * most @p max words; max + 1 if there are more. */
int cbl_split(char *line, char **w, int max);

/* An IPv4 (stored IPv4-mapped, family 4) or IPv6 address; 0 or -1. */
int cbl_parse_addr(const char *s, int *family, uint8_t *addr16);

/* A decimal number up to @p max; 0 or -1. */
int cbl_parse_uint(const char *s, unsigned long max, unsigned long *v);

/* A protocol name (tcp, udp, sctp, icmp, udplite, icmpv6) or number
 * 0..255; 0 or -1. */
int cbl_parse_proto(const char *s, unsigned long *proto);

/* Reads an open text list; the result, or NULL with errno set and the
 * reason in err. */
typedef void *(*cbl_text_reader_fn)(int fd, const char *path, void *arg,
		char *err, size_t err_len);

/* Open @p path as a user's text list (cfu_file_open(), at most
 * CBL_TEXT_MAX bytes) and hand it to @p read; read whole or refused:
 * not while another process holds it open for writing, and read again
 * if it changed under the read (@p drop frees that result). */
void *cbl_text_file_read(const char *path, cbl_text_reader_fn read,
		void (*drop)(void *), void *arg, char *err, size_t err_len);

#endif /* _CBL_PRIVATE_H_ */
