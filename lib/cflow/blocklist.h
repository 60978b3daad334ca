/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _BLOCKLIST_H_
#define _BLOCKLIST_H_

/**
 * @file
 * Blocklists for the inline filter: addresses, CIDR prefixes and flow
 * 5-tuples, kept in one lib/cuckoo filter. Entries are hashed with their
 * kind and prefix length, so a packet is looked up once for each prefix
 * length present (in each address family) and once for its flow.
 *
 * Text format, one entry a line, '#' starts a comment:
 *   192.0.2.1               an address: matches source or destination
 *   2001:db8::/32           a prefix: IPv4 /0-/32, IPv6 /0-/128
 *   tcp 10.0.0.1 1234 10.0.0.2 80   a flow, either direction
 *                           (proto: tcp, udp, sctp, or a number 0-255)
 *
 * A list is read-only once built; lookups from many lcores are safe.
 *
 * Files: every path given to cflow_bl_read(), cflow_bl_load() and
 * cflow_bl_save() must be a regular file (or, to save, not exist yet).
 * A FIFO, a directory or a device is refused before any read or write,
 * and a path is opened non-blocking, so no call here waits on a writer
 * that may never come. Sizes are checked with fstat() before any read:
 * at most CFLOW_BL_TEXT_MAX bytes for a text list and
 * CFLOW_BL_COMPILED_MAX for a compiled one. Text lists are read a line
 * at a time: memory grows with the entries, never with the file.
 *
 * Errors: a function that fails returns NULL or a negative errno, sets
 * errno to that code, and writes one line for a user to @p err (when not
 * NULL): "FILE: reason" or "FILE:LINE: reason". Messages never quote a
 * line's content (the file may not be a list at all). Nothing here
 * prints. The codes:
 *   - ENOENT, EACCES, ... as open() or stat() gave them;
 *   - EISDIR for a directory, EINVAL for another file that is not a
 *     regular file ("is a FIFO", "is a character device", ...);
 *   - EFBIG for a file above its size limit;
 *   - EINVAL for a bad line, a NUL byte or a line longer than
 *     CFLOW_BL_LINE_MAX (text lists, with FILE:LINE);
 *   - EIO and others as read() gave them ("read error");
 *   - EAGAIN for a file changed while being read;
 *   - ENODATA (truncated), EBADMSG (checksum mismatch or invalid data),
 *     EPROTONOSUPPORT (format version), ENOTSUP (other byte order) for
 *     compiled files;
 *   - ENOSPC (table full), ENOMEM.
 */

#include <stdint.h>
#include <stdio.h>

#include "cflow.h"

/** Largest text list read, in bytes: 512 MiB. */
#define CFLOW_BL_TEXT_MAX (UINT64_C(512) << 20)
/** Largest compiled list loaded, in bytes: 2 GiB (a text list at its
 * limit compiles to at most 1 GiB). */
#define CFLOW_BL_COMPILED_MAX (UINT64_C(2) << 30)
/** Longest line of a text list, in bytes, newline excluded. */
#define CFLOW_BL_LINE_MAX 1024

/** What an entry is. */
enum cflow_bl_kind {
	CFLOW_BL_NONE = 0,
	CFLOW_BL_ADDRESS,  /**< a full-length prefix */
	CFLOW_BL_PREFIX,
	CFLOW_BL_FLOW,
	CFLOW_BL_KINDS,
};

struct cflow_blocklist;

/** Entry counts and table figures, see cflow_bl_info(). */
struct cflow_bl_info {
	uint64_t entries[CFLOW_BL_KINDS]; /**< by kind */
	uint64_t total;
	unsigned int v4_lengths;  /**< distinct IPv4 prefix lengths */
	unsigned int v6_lengths;  /**< distinct IPv6 prefix lengths */
	unsigned int fp_bits;
	double bits_per_entry;
	/** Chance that a packet not listed matches (all its lookups). */
	double expected_false_match;
};

/**
 * Read a text list. On a bad line, nothing is built: NULL is returned,
 * errno is set and @p err receives "FILE:LINE: reason".
 *
 * @param fp_bits
 *   Fingerprint bits (0: 32, so false matches are ~1 in 10^9 lookups).
 * @return
 *   The list, or NULL with errno set (see the error codes above).
 */
struct cflow_blocklist *cflow_bl_read(const char *path, unsigned int fp_bits,
		char *err, size_t err_len);

/**
 * Write a compiled list (header, prefix lengths, lib/cuckoo filter) to a
 * temporary file in @p path's directory, fsync it and rename it over
 * @p path: a reader sees the old file or the new one, never a part. An
 * existing @p path that is not a regular file is refused. A symbolic link
 * at @p path is replaced, not followed.
 *
 * @return
 *   0, or a negative errno (errno set too) with the reason in @p err; the
 *   old file, if any, is then unchanged and no temporary file is left.
 */
int cflow_bl_save(const struct cflow_blocklist *bl, const char *path,
		char *err, size_t err_len);

/**
 * Load a compiled list, or a text list if the file does not start with
 * the compiled magic.
 *
 * @return
 *   The list, or NULL with errno set and the reason in @p err.
 */
struct cflow_blocklist *cflow_bl_load(const char *path, char *err,
		size_t err_len);

/**
 * Parse one entry as in the text format (the CLI's query).
 * @return 0, or -EINVAL with the reason in @p err.
 */
int cflow_bl_match_text(const struct cflow_blocklist *bl, const char *entry,
		enum cflow_bl_kind *kind, char *err, size_t err_len);

/** Does a parsed packet match? CFLOW_BL_NONE if not. */
enum cflow_bl_kind cflow_bl_match(const struct cflow_blocklist *bl,
		const struct cflow_packet *pkt);

/**
 * Does a packet match by its addresses alone? For packets whose
 * addresses are known (pkt->has_addrs) but which did not parse to a
 * 5-tuple (cflow_parse() status other than CFLOW_PARSE_OK: L4 truncated
 * or bad, IPv6 extension chain too long, non-first fragment, more than
 * CFLOW_PARSE_VLAN_MAX VLAN tags, ...). Looks up the source and the
 * destination address at every listed prefix length, as
 * cflow_bl_match() does, but never the flow entries: ports are unknown.
 *
 * Such a packet that matches nothing here may still belong to a listed
 * flow, which cannot be told without its ports. If the list has flow
 * entries (cflow_bl_info()'s entries[CFLOW_BL_FLOW] != 0), the caller
 * treats it as unparsed (as a packet without addresses), and decides by
 * its own policy for those; if it has none, CFLOW_BL_NONE is final.
 *
 * @return
 *   CFLOW_BL_ADDRESS or CFLOW_BL_PREFIX (the shortest listed prefix of
 *   the lower address, then of the higher one), or CFLOW_BL_NONE; always
 *   CFLOW_BL_NONE if pkt->has_addrs is false.
 */
enum cflow_bl_kind cflow_bl_match_addrs(const struct cflow_blocklist *bl,
		const struct cflow_packet *pkt);

void cflow_bl_info(const struct cflow_blocklist *bl,
		struct cflow_bl_info *info);

void cflow_bl_free(struct cflow_blocklist *bl);

/** "address", "prefix" or "flow". */
const char *cflow_bl_kind_name(enum cflow_bl_kind kind);

#endif /* _BLOCKLIST_H_ */
