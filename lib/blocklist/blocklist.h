/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CUCKOOFLOW_BLOCKLIST_H_
#define _CUCKOOFLOW_BLOCKLIST_H_

/**
 * @file
 * lib/blocklist (prefix cbl_): blocklists for the inline filter:
 * addresses, CIDR prefixes and flow 5-tuples, kept in one lib/cuckoo
 * filter. Entries are hashed with their
 * kind and prefix length, so a packet is looked up once for each prefix
 * length present (in each address family) and once for its flow.
 *
 * Text format, one entry a line, '#' or ';' starts a comment (to the
 * end of the line, after an entry too):
 *   192.0.2.1               an address: matches source or destination
 *   2001:db8::/32           a prefix: IPv4 /0-/32, IPv6 /0-/128
 *   tcp 10.0.0.1 1234 10.0.0.2 80   a flow, either direction
 *                           (proto: tcp, udp, sctp, or a number 0-255)
 * so that the lists people have are read as they come: Spamhaus DROP and
 * EDROP ("1.10.16.0/20 ; SBL256894", ';' comments), FireHOL netsets and
 * ipset or nft exports ('#' comments, an address or CIDR a line), a
 * plain CIDR a line; CRLF line ends too.
 *
 * A list is read-only once built; lookups from many lcores are safe.
 *
 * Files: every path given to cbl_read(), cbl_load() and cbl_save() must
 * be a regular file (or, to save, not exist yet). A FIFO, a directory or
 * a device is refused before any read or write, and a path is opened
 * non-blocking, so no call here waits on a writer that may never come.
 * Sizes are checked with fstat() before any read: at most CBL_TEXT_MAX
 * bytes for a text list and CBL_COMPILED_MAX for a compiled one. Text
 * lists are read a line at a time: memory grows with the entries, never
 * with the file.
 *
 * Errors (libbpf's convention): a function that fails returns NULL or a
 * negative errno, sets errno to that code, and writes one line for a
 * user to @p err (when not NULL): "FILE: reason" or "FILE:LINE: reason".
 * Messages never quote a line's content (the file may not be a list at
 * all). Nothing here prints. The codes:
 *   - ENOENT, EACCES, ... as open() or stat() gave them;
 *   - EISDIR for a directory, EINVAL for another file that is not a
 *     regular file ("is a FIFO", "is a character device", ...);
 *   - EFBIG for a file above its size limit;
 *   - EINVAL for a bad line, a NUL byte or a line longer than
 *     CBL_LINE_MAX (text lists, with FILE:LINE);
 *   - EIO and others as read() or write() gave them ("read error");
 *   - EAGAIN for a file changed while being read;
 *   - ENODATA (truncated), EBADMSG (checksum mismatch or invalid data),
 *     EPROTONOSUPPORT (format version), ENOTSUP (other byte order) for
 *     compiled files;
 *   - ENOSPC (table full), ENOMEM.
 *
 * Of lib/cflow this library takes only the packet and key types of
 * cflow_parse.h (and its inline cflow_key_init()): it links neither the
 * parser nor the tracker.
 */

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "cflow_parse.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest text list read, in bytes: 512 MiB. */
#define CBL_TEXT_MAX (UINT64_C(512) << 20)
/** Largest compiled list loaded, in bytes: 2 GiB (a text list at its
 * limit compiles to at most 1 GiB). */
#define CBL_COMPILED_MAX (UINT64_C(2) << 30)
/** Longest line of a text list, in bytes, newline excluded; also the
 * longest entry cbl_match_text() takes. */
#define CBL_LINE_MAX 1024

/** What an entry is. */
enum cbl_kind {
	/** no entry: not listed */
	CBL_NONE = 0,
	CBL_ADDRESS,  /**< a full-length prefix */
	/** a shorter prefix */
	CBL_PREFIX,
	/** a 5-tuple, either direction */
	CBL_FLOW,
	/** number of kinds (array size), not a kind */
	CBL_KINDS,
};

/** A blocklist, read-only once built. */
struct cbl;

/** Entry counts and table figures, see cbl_info(). */
struct cbl_info {
	uint64_t entries[CBL_KINDS]; /**< by kind (entries[CBL_NONE]: 0) */
	/** entries of all kinds */
	uint64_t total;
	unsigned int v4_lengths;  /**< distinct IPv4 prefix lengths */
	unsigned int v6_lengths;  /**< distinct IPv6 prefix lengths */
	/** fingerprint bits of the list's filter */
	unsigned int fp_bits;
	/** table bits per entry stored (0 for an empty list) */
	double bits_per_entry;
	/**
	 * Chance that a packet not listed matches, for a packet of the
	 * family with more listed lengths (the worse one): the filter's
	 * false positive rate times that packet's lookups (2 addresses at
	 * each of those lengths, plus one for the flow if the list has
	 * flows). A union bound, so an upper estimate, and it may exceed 1.
	 */
	double expected_false_match;
};

/**
 * Read a text list. On a bad line, nothing is built: NULL is returned,
 * errno is set and @p err receives "FILE:LINE: reason".
 *
 * @param path
 *   The text list, a regular file.
 * @param fp_bits
 *   Fingerprint bits (0: 32, so false matches are ~1 in 10^9 lookups).
 * @param err
 *   If not NULL, receives the reason on failure: one line,
 *   NUL-terminated, truncated to @p err_len bytes.
 * @param err_len
 *   Size of @p err in bytes.
 * @return
 *   The list (free it with cbl_free()), or NULL with errno set (see the
 *   error codes above).
 */
struct cbl *cbl_read(const char *path, unsigned int fp_bits, char *err,
		size_t err_len);

/**
 * Write a compiled list (header, prefix lengths, lib/cuckoo filter) to a
 * temporary file in @p path's directory, fsync it and rename it over
 * @p path: a reader sees the old file or the new one, never a part. An
 * existing @p path that is not a regular file is refused. A symbolic link
 * at @p path is replaced, not followed. A short write is retried; a
 * write that makes no progress fails (-EIO, or write()'s errno such as
 * -ENOSPC): never a success with part of the list.
 *
 * @param bl
 *   The list.
 * @param path
 *   The compiled file to write: a regular file, replaced, or a new one.
 * @param err
 *   If not NULL, receives the reason on failure: one line,
 *   NUL-terminated, truncated to @p err_len bytes.
 * @param err_len
 *   Size of @p err in bytes.
 * @return
 *   0, or a negative errno (errno set too) with the reason in @p err; the
 *   old file, if any, is then unchanged and no temporary file is left.
 */
int cbl_save(const struct cbl *bl, const char *path, char *err,
		size_t err_len);

/**
 * Load a compiled list, or a text list if the file does not start with
 * the compiled magic.
 *
 * @param path
 *   The list, compiled (cbl_save()) or text, a regular file.
 * @param err
 *   If not NULL, receives the reason on failure: one line,
 *   NUL-terminated, truncated to @p err_len bytes.
 * @param err_len
 *   Size of @p err in bytes.
 * @return
 *   The list (free it with cbl_free()), or NULL with errno set and the
 *   reason in @p err.
 */
struct cbl *cbl_load(const char *path, char *err, size_t err_len);

/**
 * Look one entry up, written as in the text format (the CLI's query):
 * an address matches as a packet's address would (CBL_ADDRESS, or
 * CBL_PREFIX for the shortest listed prefix that covers it); a prefix
 * asks whether that exact prefix is listed (CBL_PREFIX or CBL_NONE); a
 * flow matches as a packet of that 5-tuple would (cbl_match()).
 *
 * @param bl
 *   The list.
 * @param entry
 *   One entry as a line of the text format, NUL-terminated, without
 *   its newline.
 * @param kind
 *   Receives the answer (only on success).
 * @param err
 *   If not NULL, receives the reason on failure: one line,
 *   NUL-terminated, truncated to @p err_len bytes.
 * @param err_len
 *   Size of @p err in bytes.
 * @return
 *   0, or -EINVAL (errno set) for an entry that does not parse or is
 *   longer than CBL_LINE_MAX bytes, with the reason in @p err.
 */
int cbl_match_text(const struct cbl *bl, const char *entry,
		enum cbl_kind *kind, char *err, size_t err_len);

/**
 * Does a parsed packet (cflow_parse() status CFLOW_PARSE_OK) match?
 *
 * @param bl
 *   The list.
 * @param pkt
 *   The parsed packet: its canonical key and addresses are read.
 * @return
 *   The kind of the first hit in this order: an ICMP error's own sender
 *   (pkt->err_src, as an address), the lower address at each listed
 *   length, shortest first (CBL_PREFIX, or CBL_ADDRESS at full length),
 *   then the higher address, then the flow (CBL_FLOW); or CBL_NONE.
 */
enum cbl_kind cbl_match(const struct cbl *bl, const struct cflow_packet *pkt);

/**
 * cbl_match() of a burst: kinds[k] = cbl_match(bl, &pkts[k]) for each
 * k < @p n whose bit is set in @p mask (parsed packets), CBL_NONE for
 * the others. The lookups of several packets go into each bulk call, so
 * that their cache misses overlap.
 *
 * @param bl
 *   The list.
 * @param pkts
 *   The packets, @p n of them.
 * @param n
 *   Packets, at most 64: @p mask has a bit for each; beyond 64 neither
 *   pkts nor kinds are touched.
 * @param mask
 *   Bit k set: pkts[k] parsed (status CFLOW_PARSE_OK) and is looked up.
 * @param kinds
 *   Receives @p n kinds, one a packet.
 */
void cbl_match_burst(const struct cbl *bl, const struct cflow_packet *pkts,
		unsigned int n, uint64_t mask, enum cbl_kind *kinds);

/**
 * Does a packet match by its addresses alone? For packets whose
 * addresses are known (pkt->has_addrs) but which did not parse to a
 * 5-tuple (cflow_parse() status other than CFLOW_PARSE_OK: L4 truncated
 * or bad, IPv6 extension chain too long, non-first fragment, more than
 * CFLOW_PARSE_VLAN_MAX VLAN tags, ...). Looks up the source and the
 * destination address at every listed prefix length, as cbl_match()
 * does, but never the flow entries: ports are unknown.
 *
 * Such a packet that matches nothing here may still belong to a listed
 * flow, which cannot be told without its ports. If the list has flow
 * entries (cbl_info()'s entries[CBL_FLOW] != 0), the caller treats it as
 * unparsed (as a packet without addresses), and decides by its own
 * policy for those; if it has none, CBL_NONE is final.
 *
 * @param bl
 *   The list.
 * @param pkt
 *   The packet, parsed with any status; its addresses are read.
 * @return
 *   CBL_ADDRESS or CBL_PREFIX (the shortest listed prefix of the lower
 *   address, then of the higher one), or CBL_NONE; always CBL_NONE if
 *   pkt->has_addrs is false.
 */
enum cbl_kind cbl_match_addrs(const struct cbl *bl,
		const struct cflow_packet *pkt);

/**
 * Fill @p info with @p bl's figures. Cannot fail.
 *
 * @param bl
 *   The list.
 * @param info
 *   Receives the figures.
 */
void cbl_info(const struct cbl *bl, struct cbl_info *info);

/**
 * Bytes a list holds: its filter (cf_stats().bytes) and, for a list
 * read from text, its IPv4 length index (16 to 32 bytes an IPv4 entry,
 * 2^10 to 2^24 cells of 1, 2 or 4 bytes for up to 8, 16 or 32 listed
 * IPv4 lengths).
 *
 * @param bl
 *   The list.
 * @return
 *   Its size in bytes.
 */
uint64_t cbl_bytes(const struct cbl *bl);

/**
 * Free @p bl; NULL is a no-op.
 *
 * @param bl
 *   The list, or NULL.
 */
void cbl_free(struct cbl *bl);

/**
 * The name of a kind.
 *
 * @param kind
 *   Any value.
 * @return
 *   A static string: "none", "address", "prefix" or "flow"; "?" for a
 *   value out of range.
 */
const char *cbl_kind_name(enum cbl_kind kind);

/* ------------------------------------------------------- allow lists */

/**
 * An allow list: the services that hosts on a firewall's outside may
 * open (docs/firewall.md). Exact, unlike a blocklist: a false match
 * would let a packet through, so rules are compared whole, never by
 * fingerprint. Small by nature: at most CBL_ALLOW_MAX rules.
 *
 * Text format, one rule a line, '#' or ';' starts a comment, in the
 * blocklist's family:
 *   PROTO ADDR[/LEN] PORT
 *   tcp 198.18.1.10 22        one inside address, one port
 *   udp 198.18.1.0/28 53      a prefix of inside addresses
 *   tcp 2001:db8::/64 any     every port
 *   icmp 198.18.1.11 any      a protocol without ports: PORT is "any"
 *   icmp 198.18.1.12 echo     ICMP (ICMPv6) echo requests only
 * PROTO as in blocklists (tcp, udp, sctp, udplite, icmp, icmpv6 or
 * 0..255); ADDR the destination, an inside address; PORT 0..65535 for
 * tcp, udp, sctp and udplite, or "any"; for icmp and icmpv6, "any" or
 * "echo" (echo requests: ICMP type 8, ICMPv6 type 128).
 *
 * Read-only once built; lookups from many lcores are safe. Errors as
 * the blocklist's (see above): NULL with errno and "FILE:LINE: reason".
 */
struct cbl_allow;

/** Most rules an allow list holds. */
#define CBL_ALLOW_MAX (1u << 20)

/**
 * Read an allow list. On a bad line nothing is built. Duplicate rules
 * count once.
 *
 * @param path
 *   The allow list, a regular file.
 * @param err
 *   If not NULL, receives the reason on failure: one line,
 *   NUL-terminated, truncated to @p err_len bytes.
 * @param err_len
 *   Size of @p err in bytes.
 * @return
 *   The list, or NULL with errno set (EINVAL for a bad line, E2BIG over
 *   CBL_ALLOW_MAX rules, and the file errors of cbl_read()).
 */
struct cbl_allow *cbl_allow_read(const char *path, char *err,
		size_t err_len);

/**
 * Does a parsed packet (cflow_parse() status CFLOW_PARSE_OK) go to an
 * allowed service: its protocol, its destination address (by
 * pkt->reversed) within a rule's prefix, its destination port the
 * rule's or the rule's port "any" (for ICMP and ICMPv6: "any", or
 * "echo" for an echo request)?
 *
 * @param al
 *   The allow list.
 * @param pkt
 *   The parsed packet.
 * @return
 *   true if a rule allows it.
 */
bool cbl_allow_match(const struct cbl_allow *al,
		const struct cflow_packet *pkt);

/**
 * Rules in the list (duplicates counted once).
 *
 * @param al
 *   The allow list.
 * @return
 *   The number of distinct rules, at most CBL_ALLOW_MAX.
 */
uint64_t cbl_allow_rules(const struct cbl_allow *al);

/**
 * A digest of the rules, whatever their order, spelling, comments or
 * duplicates: equal for two lists that allow the same, different (but
 * for a 64-bit hash collision) otherwise; never 0, so that 0 can stand
 * for no list (a saved flow table's allow list: docs/design.md).
 *
 * @param al
 *   The allow list.
 * @return
 *   The digest, or 0 (errno ENOMEM).
 */
uint64_t cbl_allow_digest(const struct cbl_allow *al);

/**
 * Free @p al; NULL is a no-op.
 *
 * @param al
 *   The allow list, or NULL.
 */
void cbl_allow_free(struct cbl_allow *al);

#ifdef __cplusplus
}
#endif

#endif /* _CUCKOOFLOW_BLOCKLIST_H_ */
