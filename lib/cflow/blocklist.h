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
 */

#include <stdint.h>
#include <stdio.h>

#include "cflow.h"

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
 * Read a text list. On a bad line, nothing is built: NULL is returned and
 * @p err receives "FILE:LINE: reason".
 *
 * @param fp_bits
 *   Fingerprint bits (0: 32, so false matches are ~1 in 10^9 lookups).
 */
struct cflow_blocklist *cflow_bl_read(const char *path, unsigned int fp_bits,
		char *err, size_t err_len);

/** Write a compiled list (header, prefix lengths, lib/cuckoo filter). */
int cflow_bl_save(const struct cflow_blocklist *bl, const char *path);

/**
 * Load a compiled list, or a text list if the file does not start with
 * the compiled magic. NULL on error, with the reason in @p err.
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
