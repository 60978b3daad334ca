/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_H_
#define _CFLOW_H_

/**
 * @file
 * cuckooflow's flow-tracking core: packet bytes and timestamps in,
 * a verdict and counters out. No DPDK: the application is a thin shell
 * around it, and tests and fuzzers drive it with byte buffers.
 *
 * - cflow_parse(): a bounds-checked parser of the link header (Ethernet
 *   and VLAN, Linux cooked, raw IP, BSD loopback: enum cflow_link_type),
 *   IPv4, IPv6 and L4 that builds a canonical, bidirectional 5-tuple key;
 * - cflow_hash_key(): seeded XXH3-64 of that key;
 * - struct cflow_tracker: a flow table on lib/cuckoo that classifies each
 *   packet's flow as new, seen or closing, closes TCP flows on FIN/RST
 *   (a closed flow lingers close_linger_ns after its last packet), and
 *   expires idle flows with a bounded incremental sweep.
 *
 * A tracker is not thread safe: one per lcore.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cuckoo_filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- parsing */

/**
 * Link types: what comes in front of the IP header. These are cflow's own
 * values, not libpcap's (DLT_NULL is 0, DLT_EN10MB 1): 0 is Ethernet, so
 * a zeroed struct cflow_parse_params parses Ethernet as ever. Map
 * libpcap's pcap_datalink() with cflow_link_type_from_dlt().
 *
 * Each link header is checked against the captured length as Ethernet's
 * is: a frame shorter than its link header is CFLOW_PARSE_TRUNC_L2, a
 * protocol or family that is not IPv4/IPv6 is CFLOW_PARSE_NON_IP.
 */
enum cflow_link_type {
	/** Ethernet II (DLT_EN10MB 1), up to CFLOW_PARSE_VLAN_MAX tags. */
	CFLOW_LINK_EN10MB = 0,
	/**
	 * Linux cooked capture v1 (DLT_LINUX_SLL 113): a 16-byte header,
	 * the ethertype at offset 14; VLAN tags behind it as on Ethernet.
	 */
	CFLOW_LINK_LINUX_SLL,
	/**
	 * Linux cooked capture v2 (DLT_LINUX_SLL2 276): a 20-byte header,
	 * the ethertype at offset 0; VLAN tags behind it as on Ethernet.
	 */
	CFLOW_LINK_LINUX_SLL2,
	/**
	 * Raw IP (DLT_RAW: 12, 14 on OpenBSD; LINKTYPE_RAW 101): no header,
	 * IPv4 or IPv6 by the version nibble. An empty frame is
	 * CFLOW_PARSE_TRUNC_L3, another version CFLOW_PARSE_BAD_VERSION.
	 */
	CFLOW_LINK_RAW,
	/** Raw IPv4 (DLT_IPV4 228): no header. */
	CFLOW_LINK_IPV4,
	/** Raw IPv6 (DLT_IPV6 229): no header. */
	CFLOW_LINK_IPV6,
	/**
	 * BSD loopback (DLT_NULL 0): a 4-byte address family in the byte
	 * order of the host that captured, so either order is accepted:
	 * AF_INET 2, AF_INET6 24 (NetBSD, OpenBSD), 28 (FreeBSD, DragonFly)
	 * or 30 (macOS). Another family is CFLOW_PARSE_NON_IP.
	 */
	CFLOW_LINK_NULL,
	/**
	 * OpenBSD loopback (DLT_LOOP: 108, 12 on OpenBSD): as
	 * CFLOW_LINK_NULL, the family in network byte order only.
	 */
	CFLOW_LINK_LOOP,
	CFLOW_LINK_TYPE_MAX,
};

/** The longest link header of enum cflow_link_type: LINUX_SLL2's. */
#define CFLOW_PARSE_LINK_HDR_MAX 20

/**
 * The link type of a libpcap link-layer type, as pcap_datalink() returns
 * it on this host. Accepted: DLT_EN10MB (1), DLT_LINUX_SLL (113),
 * DLT_LINUX_SLL2 (276), DLT_RAW (12; 14 on OpenBSD), DLT_IPV4 (228),
 * DLT_IPV6 (229), DLT_NULL (0) and DLT_LOOP (108; 12 on OpenBSD). Also
 * the savefile values LINKTYPE_RAW (101) and LINKTYPE_LOOP (108), which
 * libpcap maps to DLT_RAW and DLT_LOOP. The values that differ by system
 * are taken as this host's libpcap defines them: cflow and the caller's
 * libpcap must be built for the same system.
 *
 * @return
 *   An enum cflow_link_type, or -EINVAL for a link type cflow_parse()
 *   does not handle (DLT_IEEE802_11, DLT_PPP, ...).
 */
int cflow_link_type_from_dlt(int dlt);

/**
 * Name of a link type, as libpcap's pcap_datalink_val_to_name() names
 * it ("EN10MB", "LINUX_SLL", "LINUX_SLL2", "RAW", "IPV4", "IPV6",
 * "NULL", "LOOP"); "unknown" for a value out of range.
 */
const char *cflow_link_type_name(enum cflow_link_type link);

/**
 * Outcome of parsing one packet.
 *
 * Whatever the status, the packet's addresses are reported (struct
 * cflow_packet's has_addrs) whenever its IP header itself could be read
 * and is sane: the version matches the ethertype, and the header is within
 * the captured bytes (IPv4: IHL >= 5 and IHL * 4 bytes captured; IPv6: the
 * 40-byte fixed header captured). What follows that header does not
 * matter. By status:
 *
 * - CFLOW_PARSE_OK: always.
 * - CFLOW_PARSE_NON_IP: with 3 to CFLOW_PARSE_VLAN_ADDRS_MAX VLAN tags in
 *   front of an IPv4/IPv6 header that is sane; never for other ethertypes.
 * - CFLOW_PARSE_FRAGMENT: always.
 * - CFLOW_PARSE_TRUNC_L2: never.
 * - CFLOW_PARSE_TRUNC_L3: for IPv6 when an extension header is cut short
 *   (the fixed header was read); never for IPv4 (its header is cut).
 * - CFLOW_PARSE_TRUNC_L4: always.
 * - CFLOW_PARSE_BAD_VERSION: never.
 * - CFLOW_PARSE_BAD_HDRLEN: for a TCP data offset < 5 (and a GTP-U
 *   extension header of length 0, see decap); not for an IPv4 IHL < 5.
 * - CFLOW_PARSE_BAD_LENGTH: always (an IPv4 total length below the
 *   header's: the header itself is whole).
 * - CFLOW_PARSE_BAD_EXT: always.
 *
 * With decap (struct cflow_parse_params), a decapsulated packet reports
 * its inner packet's status and addresses by these rules; a tunnel
 * header cut short or broken, the outer addresses.
 */
enum cflow_parse_status {
	CFLOW_PARSE_OK = 0,        /**< key built; the packet is trackable */
	CFLOW_PARSE_NON_IP,        /**< not IPv4/IPv6 (ARP, LLDP, 3+ tags) */
	CFLOW_PARSE_FRAGMENT,      /**< a non-first IP fragment: no ports */
	CFLOW_PARSE_TRUNC_L2,      /**< link or VLAN header cut short */
	CFLOW_PARSE_TRUNC_L3,      /**< IP header or extension cut short */
	CFLOW_PARSE_TRUNC_L4,      /**< L4 or tunnel header cut short */
	CFLOW_PARSE_BAD_VERSION,   /**< IP version not matching the link's */
	CFLOW_PARSE_BAD_HDRLEN,    /**< IPv4 IHL < 5, TCP offset < 5 */
	CFLOW_PARSE_BAD_LENGTH,    /**< IP length below its header's */
	CFLOW_PARSE_BAD_EXT,       /**< IPv6 or GTP-U ext. chain too long */
	CFLOW_PARSE_STATUS_MAX,
	/** The malformed statuses, a range: for (st = FIRST; st <= LAST). */
	CFLOW_PARSE_MALFORMED_FIRST = CFLOW_PARSE_TRUNC_L2,
	CFLOW_PARSE_MALFORMED_LAST = CFLOW_PARSE_BAD_EXT,
};

/** VLAN tags a trackable packet may carry; one more makes it non-IP. */
#define CFLOW_PARSE_VLAN_MAX 2
/**
 * VLAN tags walked, at most, to find the addresses of a packet with more
 * than CFLOW_PARSE_VLAN_MAX tags (its status stays CFLOW_PARSE_NON_IP).
 */
#define CFLOW_PARSE_VLAN_ADDRS_MAX 8
/** IPv6 extension headers followed; one more is CFLOW_PARSE_BAD_EXT. */
#define CFLOW_PARSE_IPV6_EXT_MAX 8

/**
 * Tunnels cflow_parse() may decapsulate (struct cflow_parse_params'
 * decap, a mask of these; none by default). A decapsulated packet is
 * keyed by its inner 5-tuple; see docs/tunnels.md.
 */
enum cflow_decap {
	/** VXLAN (RFC 7348): UDP dport 4789, I flag set; inner Ethernet. */
	CFLOW_DECAP_VXLAN = 1u << 0,
	/**
	 * Geneve (RFC 8926): UDP dport 6081, version 0, options skipped;
	 * protocol 0x6558 (inner Ethernet), 0x0800 or 0x86dd.
	 */
	CFLOW_DECAP_GENEVE = 1u << 1,
	/**
	 * GRE (RFC 2784, 2890): IP protocol 47, version 0, C, K and S bits
	 * only; protocol 0x6558 (inner Ethernet), 0x0800 or 0x86dd.
	 */
	CFLOW_DECAP_GRE = 1u << 2,
	/**
	 * GTP-U (3GPP TS 29.281): UDP dport 2152, version 1, G-PDU (message
	 * type 255), extension headers skipped; inner IPv4 or IPv6.
	 */
	CFLOW_DECAP_GTPU = 1u << 3,
	CFLOW_DECAP_ALL = (1u << 4) - 1,
};

/**
 * GTP-U extension headers followed; one more is CFLOW_PARSE_BAD_EXT.
 */
#define CFLOW_PARSE_GTPU_EXT_MAX 4

/**
 * The most bytes from an IP header to the end of what is read behind
 * it: the IPv6 header (40), CFLOW_PARSE_IPV6_EXT_MAX extensions of the
 * largest size (2048 each: (255 + 1) * 8) and a TCP header (20): 16444.
 */
#define CFLOW_PARSE_IP_MAX_HDR (40 + CFLOW_PARSE_IPV6_EXT_MAX * 2048 + 20)

/**
 * The most bytes of a tunnel header, from the outer L4 header to the
 * inner IP header: GTP-U's UDP header (8), its header with the optional
 * fields (12) and CFLOW_PARSE_GTPU_EXT_MAX extensions of the largest
 * size (1020 each: 255 * 4): 4100. The others need fewer (Geneve with
 * 252 bytes of options, inner Ethernet and CFLOW_PARSE_VLAN_MAX tags:
 * 290; VXLAN 38; GRE 16 and 38 with inner Ethernet).
 */
#define CFLOW_PARSE_TUNNEL_HDR_MAX (8 + 12 + CFLOW_PARSE_GTPU_EXT_MAX * 1020)

/**
 * The most bytes of a frame cflow_parse() ever reads or compares against,
 * whatever the link type and tunnel: the longest link header (LINUX_SLL2's
 * 20, see CFLOW_PARSE_LINK_HDR_MAX), CFLOW_PARSE_VLAN_MAX tags (4 each),
 * the outer IPv6 header with its extensions up to its L4 header
 * (CFLOW_PARSE_IP_MAX_HDR less TCP's 20), the longest tunnel header
 * (CFLOW_PARSE_TUNNEL_HDR_MAX) and the inner packet's IP and L4 headers
 * (CFLOW_PARSE_IP_MAX_HDR): 36996 bytes. Without decapsulation 16472
 * bytes are read at most (Ethernet 6 less, the headerless link types 28
 * less); every other path needs fewer (IPv4 with options: 108;
 * CFLOW_PARSE_VLAN_ADDRS_MAX tags and an IPv4 header with options: 112).
 *
 * Parsing the first min(len, CFLOW_PARSE_MAX_HDR) bytes of a frame gives
 * the same status and the same struct cflow_packet as parsing all @p len
 * bytes: a caller that must copy the headers out of a segmented buffer
 * (rte_pktmbuf_read) needs a buffer of this size at most.
 */
#define CFLOW_PARSE_MAX_HDR (CFLOW_PARSE_LINK_HDR_MAX + \
	4 * CFLOW_PARSE_VLAN_MAX + CFLOW_PARSE_IP_MAX_HDR - 20 + \
	CFLOW_PARSE_TUNNEL_HDR_MAX + CFLOW_PARSE_IP_MAX_HDR)

/** TCP flags, as on the wire. */
#define CFLOW_TCP_FIN 0x01
#define CFLOW_TCP_SYN 0x02
#define CFLOW_TCP_RST 0x04
#define CFLOW_TCP_ACK 0x10

/**
 * Canonical flow key: the lower (address, port) endpoint first, so both
 * directions of a flow have one key. IPv4 addresses are stored
 * IPv4-mapped (::ffff:a.b.c.d). Fixed size and zero padded: hash it as
 * bytes.
 */
struct cflow_key {
	uint8_t addr_lo[16];
	uint8_t addr_hi[16];
	uint16_t port_lo;   /**< host order; 0 for ICMP and other protocols */
	uint16_t port_hi;
	uint8_t proto;      /**< IP protocol number */
	uint8_t family;     /**< 4 or 6 */
	uint16_t pad;       /**< 0 */
	uint32_t vlan;      /**< outer VID << 12 | inner VID, if in the key */
	/** The VNI (VXLAN, Geneve), key (GRE) or TEID (GTP-U) of a
	 * decapsulated packet, if vlan_in_key; else 0. */
	uint32_t tunnel;
};

/** Protocol classes, each with its own idle timeout. */
enum cflow_proto_class {
	CFLOW_CLASS_TCP,
	CFLOW_CLASS_UDP,    /**< UDP and UDP-Lite */
	CFLOW_CLASS_ICMP,   /**< ICMP and ICMPv6 */
	CFLOW_CLASS_OTHER,  /**< SCTP and every other protocol */
	CFLOW_CLASS_MAX,
};

/**
 * What the parser tells the tracker about one packet.
 *
 * With CFLOW_PARSE_OK, every field is set and has_addrs is true. With any
 * other status, only ethertype, tunnel and has_addrs are meaningful and,
 * if has_addrs is true, the key's addr_lo, addr_hi (lower address first)
 * and family: the rest of the key (ports, proto, vlan), tcp_flags,
 * proto_class, icmp_type and hop_limit are zero. If has_addrs is false,
 * all but ethertype and tunnel is zero.
 */
struct cflow_packet {
	struct cflow_key key;
	uint8_t tcp_flags;  /**< 0 unless TCP */
	uint8_t proto_class; /**< enum cflow_proto_class */
	/**
	 * The key's addresses and family are those of the packet: its IP
	 * header was readable and sane (see enum cflow_parse_status), even
	 * if the packet did not parse to a 5-tuple. Always true with
	 * CFLOW_PARSE_OK.
	 */
	bool has_addrs;
	/**
	 * The tunnel the packet was decapsulated from, whatever its status
	 * (the inner packet's): one enum cflow_decap bit; 0 if it was not
	 * decapsulated (no tunnel, decap off, or a tunnel header cut short
	 * or broken, which reports the outer packet).
	 */
	uint8_t tunnel;
	/**
	 * The type field behind the VLAN tags (host order: 0x0800, 0x86dd,
	 * 0x0806 for ARP, ...), whatever the status; 0 if it could not be
	 * reached: a frame or tag cut short, or more than
	 * CFLOW_PARSE_VLAN_ADDRS_MAX tags. Tells a packet that is not IP
	 * from an IP one whose header is broken.
	 *
	 * Link types without a type field report the one their header
	 * implies: 0x0800 or 0x86dd for IPV4 and IPV6; for RAW, by the
	 * version nibble (0 for an empty frame or another version); for
	 * NULL and LOOP, by the address family (0 for a header cut short or
	 * another family, which is not an ethertype: its packets are
	 * CFLOW_PARSE_NON_IP but count as "maybe IP").
	 */
	uint16_t ethertype;
	/**
	 * The packet goes from the key's higher endpoint (addr_hi,
	 * port_hi) to its lower one: its destination is addr_lo, port_lo.
	 * False when it goes from lo to hi, and whenever has_addrs is
	 * false. With equal addresses and ports, false. Lets a caller tell
	 * the direction of a packet from its canonical key (a firewall's
	 * allow list matches the destination).
	 */
	bool reversed;
	/** With CFLOW_PARSE_OK and class ICMP: the ICMP or ICMPv6 type;
	 *  else 0. */
	uint8_t icmp_type;
	/** With CFLOW_PARSE_OK: the TTL or hop limit of the IP header the
	 *  key is of (a decapsulated packet's inner one); else 0. */
	uint8_t hop_limit;
};

/** Parser options; zeroed, Ethernet without VLAN ids in the key. */
struct cflow_parse_params {
	bool vlan_in_key;   /**< key flows by VLAN ids too (default off) */
	/**
	 * What the frames start with (default CFLOW_LINK_EN10MB, 0). A
	 * value out of range makes every packet CFLOW_PARSE_NON_IP with
	 * ethertype 0.
	 */
	enum cflow_link_type link_type;
	/**
	 * Tunnels to decapsulate, a mask of enum cflow_decap (default 0:
	 * none). One level only: a tunnel inside the inner packet is keyed
	 * as the inner packet parses without decapsulation. For a
	 * decapsulated packet the status, the key, has_addrs and the
	 * addresses are the inner packet's (none if its IP header is not
	 * sane); the ethertype and the key's vlan stay the outer frame's.
	 * A tunnel header cut short is CFLOW_PARSE_TRUNC_L4 (with the outer
	 * addresses), a GTP-U extension of length 0 CFLOW_PARSE_BAD_HDRLEN
	 * and a chain of more than CFLOW_PARSE_GTPU_EXT_MAX
	 * CFLOW_PARSE_BAD_EXT (both with the outer addresses too). A
	 * header that is not one of the tunnel's (another version or
	 * message type, an inner protocol not listed in enum cflow_decap)
	 * is not decapsulated: the outer packet is keyed as without decap.
	 */
	unsigned int decap;
	/**
	 * Bind each decapsulated flow to its tunnel's endpoints (default
	 * off). The key.tunnel of a decapsulated CFLOW_PARSE_OK packet is
	 * then a digest, keyed by @p tunnel_seed, of the tunnel kind, the
	 * outer addresses (the one on the side of the key's lower
	 * endpoint first, so that both directions agree) and, with
	 * vlan_in_key, the VNI, GRE key or TEID; never 0, whatever
	 * vlan_in_key. The same inner 5-tuple in another tunnel, between
	 * other outer addresses, or not tunnelled, is another flow: a
	 * firewall's outside cannot wrap a tracked flow's packets in a
	 * tunnel of its own choosing. The digest has 32 bits: an outer
	 * header that is not the flow's tunnel's gives the flow's key with
	 * a chance of 2^-32 a packet, if @p tunnel_seed is secret.
	 */
	bool tunnel_bind;
	uint64_t tunnel_seed;   /**< the digest's key, with tunnel_bind */
};

/**
 * Parse a frame of @p len captured bytes, from its link header
 * (@p params' link_type; Ethernet if @p params is NULL). Never reads past
 * buf + len, nor past buf + CFLOW_PARSE_MAX_HDR.
 *
 * @return
 *   CFLOW_PARSE_OK with @p pkt filled, or why the packet is not tracked;
 *   then @p pkt still carries the addresses if they could be read (see
 *   struct cflow_packet).
 */
enum cflow_parse_status cflow_parse(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt);

/**
 * cflow_parse() without its fast path for the common frame (Ethernet,
 * IPv4 without options, TCP or UDP): the same answer for every frame,
 * only slower for those. For tests and fuzzers that check the two agree.
 */
enum cflow_parse_status cflow_parse_general(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt);

/** Name of a parse status, for counters and logs ("trunc_l3", ...). */
const char *cflow_parse_status_name(enum cflow_parse_status st);

/**
 * cflow_key_init() on a key that is zeroed already: the parser's way.
 *
 * The lower (address, port) endpoint goes first, so that both directions
 * of a flow have one key. Addresses compare in memcmp order, as two
 * big-endian words (memcmp is a call). Inline, with cflow_key_init():
 * lib/blocklist builds the same keys from its text entries without
 * linking the parser.
 *
 * @return
 *   true if the endpoints were swapped: src is the key's hi endpoint.
 */
static inline bool
cflow_key_fill(struct cflow_key *key, uint8_t family, const uint8_t *src,
		const uint8_t *dst, uint16_t sport, uint16_t dport,
		uint8_t proto)
{
	uint64_t s[2], d[2];
	bool swap;

	memcpy(s, src, sizeof(s));
	memcpy(d, dst, sizeof(d));
	s[0] = __builtin_bswap64(s[0]);
	s[1] = __builtin_bswap64(s[1]);
	d[0] = __builtin_bswap64(d[0]);
	d[1] = __builtin_bswap64(d[1]);
	swap = s[0] > d[0] || (s[0] == d[0] && (s[1] > d[1] ||
		(s[1] == d[1] && sport > dport)));
	if (swap) {
		const uint8_t *ta = src;
		uint16_t tp = sport;

		src = dst;
		dst = ta;
		sport = dport;
		dport = tp;
	}
	memcpy(key->addr_lo, src, 16);
	memcpy(key->addr_hi, dst, 16);
	key->port_lo = sport;
	key->port_hi = dport;
	key->proto = proto;
	key->family = family;
	return swap;
}

/**
 * Build the canonical key of a flow; addresses are 16 bytes (IPv4
 * mapped for family 4).
 */
static inline void
cflow_key_init(struct cflow_key *key, uint8_t family, const uint8_t *src,
		const uint8_t *dst, uint16_t sport, uint16_t dport,
		uint8_t proto)
{
	memset(key, 0, sizeof(*key));
	(void)cflow_key_fill(key, family, src, dst, sport, dport, proto);
}

/** Seeded XXH3-64 of a canonical key. */
uint64_t cflow_hash_key(const struct cflow_key *key, uint64_t seed);

/* ------------------------------------------------------------ tracking */

/** What happened to one packet. */
enum cflow_verdict {
	CFLOW_NEW,                /**< first packet of a flow: inserted */
	CFLOW_SEEN,               /**< packet of a tracked or lingering flow */
	CFLOW_CLOSING,            /**< the TCP FIN/RST that closed a flow */
	CFLOW_UNTRACKED_NON_IP,   /**< not IP */
	CFLOW_UNTRACKED_MALFORMED, /**< see the parse status counters */
	CFLOW_UNTRACKED_FRAGMENT, /**< non-first fragment */
	CFLOW_UNTRACKED_ORPHAN,   /**< FIN/RST of an untracked flow */
	CFLOW_UNTRACKED_FULL,     /**< table full, policy "untracked" */
	/** Not tracked, and the packet may not open a flow
	 * (CFLOW_IN_NO_CREATE: a firewall's outside); a FIN/RST too. */
	CFLOW_UNTRACKED_UNSOLICITED,
	/** Not tracked, TCP but not a SYN without ACK (tcp_strict). */
	CFLOW_UNTRACKED_NOT_SYN,
	/** A new flow beyond the admission rate (new_flow_rate). */
	CFLOW_UNTRACKED_LIMITED,
	/**
	 * A packet from the outside (CFLOW_IN_OUTSIDE) whose flow is tracked
	 * but which travels away from the flow's inside endpoint: its source
	 * claims to be the inside host (sided trackers). Not a packet of the
	 * flow: the flow is left as it was.
	 */
	CFLOW_UNTRACKED_WRONG_DIR,
	CFLOW_VERDICT_MAX,
};

/**
 * Flow events: a new flow's first packet, and the TCP FIN or RST that
 * closed a flow (CFLOW_NEW and CFLOW_CLOSING verdicts), with the 5-tuple
 * of that packet in its own direction. Expiries have no event: a cuckoo
 * filter keeps fingerprints, not keys, so an expired flow cannot be
 * named (flows_expired counts them).
 */
enum cflow_event_type {
	CFLOW_EVENT_NEW = 1,
	CFLOW_EVENT_CLOSE = 2,
};

/** Why a flow closed (CFLOW_EVENT_CLOSE). */
enum cflow_close_reason {
	CFLOW_CLOSE_NONE = 0,     /**< a new-flow event */
	CFLOW_CLOSE_FIN = 1,
	CFLOW_CLOSE_RST = 2,
};

/** One flow event, 64 bytes. */
struct cflow_event {
	uint64_t time_ns;   /**< the packet's time, ns since the Unix epoch */
	uint8_t src[16];    /**< the packet's source (IPv4: first 4 bytes) */
	uint8_t dst[16];    /**< and destination */
	uint16_t sport;     /**< host order; 0 for ICMP and others */
	uint16_t dport;
	uint8_t family;     /**< 4 or 6 */
	uint8_t proto;      /**< IP protocol number */
	uint8_t type;       /**< enum cflow_event_type */
	uint8_t proto_class; /**< enum cflow_proto_class */
	uint8_t reason;     /**< enum cflow_close_reason: the closing
			     *  packet's source is the side that closed */
	uint8_t tcp_flags;  /**< the packet's */
	uint16_t port;      /**< ingress port */
	uint16_t worker;    /**< the worker that tracks the flow */
	uint16_t pad;       /**< 0 */
	uint32_t wire_len;  /**< the packet's length on the wire */
};

/** What to do when a new flow finds the table full. */
enum cflow_full_policy {
	/** Evict a closing entry of the flow's two buckets, else the one
	 * idle longest (counted flows_evicted). */
	CFLOW_FULL_EVICT = 0,
	/** Leave the new flow untracked (counted insert_failed). */
	CFLOW_FULL_UNTRACKED,
};

/** Hash source. */
enum cflow_hash_mode {
	CFLOW_HASH_XXH3 = 0,  /**< seeded XXH3-64 of the canonical key */
	/**
	 * The NIC's 32-bit RSS hash, mixed to 64 bits with the seed. Only
	 * 32 bits of entropy (index and fingerprint share them); with the
	 * symmetric Toeplitz key 0x6d5a the two 16-bit halves are equal, so
	 * about 16 bits: far too few for a large table. Packets without an
	 * RSS hash fall back to XXH3 (counted hash_fallback).
	 */
	CFLOW_HASH_RSS,
};

/** Default idle timeouts in seconds, by class. */
#define CFLOW_TIMEOUT_TCP_S 300
#define CFLOW_TIMEOUT_UDP_S 60
#define CFLOW_TIMEOUT_ICMP_S 30
#define CFLOW_TIMEOUT_OTHER_S 60
/** Default time a closed TCP flow lingers after its last packet, seconds. */
#define CFLOW_CLOSE_LINGER_S 10
/** close_linger_ns for no linger: a FIN or RST removes its flow. */
#define CFLOW_LINGER_NONE UINT64_MAX
/** Default bound on buckets one cflow_sweep() call visits. */
#define CFLOW_SWEEP_MAX_BUCKETS 64
/** Default capacity, flows: 2^20 (the application's default too). */
#define CFLOW_CAPACITY_DEFAULT (UINT64_C(1) << 20)
/** Default bits of state per flow. */
#define CFLOW_VALUE_BITS_DEFAULT 32

/**
 * Tracker parameters. Zero in any field selects the documented default,
 * so a zeroed struct is a working tracker and a designated initialiser
 * only names what it changes. cflow_tracker_params_resolve() tells the
 * values a struct stands for.
 */
struct cflow_tracker_params {
	/**
	 * Flows the table must hold (default CFLOW_CAPACITY_DEFAULT);
	 * at most CF_MAX_CAPACITY.
	 */
	uint64_t capacity;
	/** Fingerprint bits, 4..32 (default CF_DEFAULT_FP_BITS, 12). */
	unsigned int fp_bits;
	/**
	 * Bits of state per flow: 32 (default: time in 16.8 ms ticks,
	 * timeouts up to 26 days) or 16 (the smallest tick from 16.8 ms
	 * up under which the longest timeout spans a quarter of the range:
	 * 268 ms for the default 300 s; 2 bytes less per flow).
	 */
	unsigned int value_bits;
	bool exact_size;        /**< lib/cuckoo's exact_size (default off) */
	/**
	 * The filter's layout: CF_TABLE_PLAIN (default), its flows' state
	 * in an array of its own, or CF_TABLE_INTERLEAVED, each flow's
	 * state in its bucket's cache line (a tracked packet then reads two
	 * lines, not three; no more memory with 16-bit fingerprints and
	 * 16-bit state). CF_TABLE_SEMISORT is refused.
	 */
	enum cf_table_type table;
	/**
	 * Hash seed. 0 (default): a random one, drawn at creation
	 * (cflow_tracker_params_get() tells it), so that flows cannot be
	 * chosen to collide; any other value is used as is, for
	 * reproducible runs or trackers that must agree on hashes.
	 */
	uint64_t seed;
	/** Use @p seed as is even if 0 (default off: 0 draws a seed). */
	bool fixed_seed;
	enum cflow_hash_mode hash; /**< default CFLOW_HASH_XXH3 */
	/**
	 * Idle timeouts by enum cflow_proto_class; 0 selects the class's
	 * default: CFLOW_TIMEOUT_TCP_S, _UDP_S, _ICMP_S, _OTHER_S.
	 */
	uint64_t timeout_ns[CFLOW_CLASS_MAX];
	/**
	 * How long a TCP flow closed by a FIN or RST stays in the table,
	 * counted from its last packet, as an open flow's idle timeout is:
	 * every packet of the closed flow (a retransmitted FIN, data of a
	 * half-closed connection, the last ACK) is counted flows_seen and
	 * restarts the linger. The flow is closed once (flows_closed); a
	 * SYN without ACK on it is a new connection (reused, then new).
	 * Once the linger is over, the entry is removed uncounted and the
	 * flow is untracked. 0: the default, CFLOW_CLOSE_LINGER_S;
	 * CFLOW_LINGER_NONE: removed at the FIN/RST.
	 */
	uint64_t close_linger_ns;
	enum cflow_full_policy full_policy; /**< default CFLOW_FULL_EVICT */
	struct cflow_parse_params parse; /**< zeroed: see its defaults */
	/** Work bound per cflow_sweep() (default CFLOW_SWEEP_MAX_BUCKETS). */
	unsigned int sweep_max_buckets;
	const struct cf_allocator *allocator; /**< NULL: lib/cuckoo's */
	int socket_id;          /**< passed to the allocator (default 0) */
	/**
	 * Decide each packet's flow at the packet's own time, not the latest
	 * time seen (default off): for a tracker fed by several streams, each
	 * in time order, whose flows each come from one stream (a worker's
	 * rx queues and handoff rings, replaying a capture). A flow's age
	 * (expiry, end of the linger, reuse) is then measured from its
	 * stamp to the packet's time, and is 0 if the packet is earlier; the
	 * stamp becomes the later of the two, for an open or a closed flow
	 * alike; a new flow is stamped with its packet's time. The tracker's
	 * clock still is the latest time seen (sweep pacing, leaps). A
	 * packet more than 1/8 of the tick range behind the clock (the lag,
	 * cflow_tracker_lag_ns(): 13 days with 32-bit values, 17 s with
	 * 16-bit values and 16.8 ms ticks, 274 s with the default 268 ms
	 * ones) is decided at the clock less that. So a caller that never
	 * tracks a packet more than the lag ahead of its watermark (see
	 * cflow_sweep_at()) gets every decision of a time-ordered replay,
	 * a leap of the clock included: the leap's sweep removes only the
	 * flows idle as of the new time less the lag.
	 */
	bool flow_time;
	/**
	 * Open a TCP flow only on a SYN without ACK (default off: any
	 * packet of an untracked flow but a FIN or RST opens it, as
	 * conntrack's loose pickup). Another packet of an untracked TCP
	 * flow is CFLOW_UNTRACKED_NOT_SYN.
	 */
	bool tcp_strict;
	/**
	 * Admission control: new flows per second this tracker opens, a
	 * token bucket refilled by the tracker's clock (the packets' time),
	 * holding at most new_flow_burst tokens (0: new_flow_rate) and full
	 * at creation. A flow that finds it empty is not inserted:
	 * CFLOW_UNTRACKED_LIMITED (a SYN on a lingering flow leaves that
	 * entry as it is). 0 (default): no limit.
	 */
	uint64_t new_flow_rate;
	uint64_t new_flow_burst;
	/**
	 * Emergency mode, as Suricata's: once the open flows reach
	 * emergency_load_ppm of capacity (parts per million; 0, default:
	 * never), every idle timeout and the linger become at most
	 * emergency_timeout_ns (0: 10 s), until the open flows fall below
	 * emergency_low_ppm (0: emergency_load_ppm less 100000, at least
	 * 0). Entering and leaving are counted. Flows are then expired
	 * within emergency_timeout_ns + max(1 s, shortest normal timeout /
	 * 8): the sweep keeps its normal pace.
	 */
	uint32_t emergency_load_ppm;
	uint32_t emergency_low_ppm;
	uint64_t emergency_timeout_ns;
	/**
	 * Bits of a saturating per-flow packet counter kept in the value,
	 * 0..8 (default 0: none), for first-N-packets mirroring: the
	 * ordinal of each packet in its flow, both directions together
	 * (cflow_track_parsed()'s @p counts). Taken from the time field:
	 * with 16-bit values, ticks grow coarser.
	 */
	unsigned int count_bits;
	/**
	 * Remember, per flow, which endpoint of its canonical key is the
	 * inside one (default off): a firewall's. The packet that opens a
	 * flow tells it: its source, or its destination if the packet came
	 * from the outside (CFLOW_IN_OUTSIDE: an allowed service). A packet
	 * from the outside then finds its flow only travelling toward that
	 * endpoint; one that claims the inside endpoint as its source is
	 * CFLOW_UNTRACKED_WRONG_DIR and changes nothing. One bit of the
	 * value, taken from the time as count_bits' are: with 16-bit values
	 * ticks are twice as coarse, with 32-bit values timeouts up to 13
	 * days keep 16.8 ms ticks.
	 */
	bool sided;
};

/** Default emergency timeout, seconds. */
#define CFLOW_EMERGENCY_TIMEOUT_S 10

/** Flags of struct cflow_input. */
/** The packet may find its flow but never open one: an untracked flow
 * stays untracked (CFLOW_UNTRACKED_UNSOLICITED). A firewall's outside. */
#define CFLOW_IN_NO_CREATE 0x01
/** The packet comes from a firewall's outside: with a sided tracker it
 * finds its flow only travelling toward the flow's inside endpoint (else
 * CFLOW_UNTRACKED_WRONG_DIR), and a flow it opens has its destination
 * inside. Ignored by trackers that are not sided. */
#define CFLOW_IN_OUTSIDE 0x02

/**
 * Counters, all 64-bit. Every packet is counted once in packets and in
 * exactly one of: non_ip, malformed[], fragments, orphan_close,
 * insert_failed, unsolicited, not_syn, new_flow_limited,
 * wrong_direction, flows_new, flows_seen, flows_closed (the closing
 * packet):
 *
 *   packets == cflow_packets_classified()
 *
 * Every flow counted new or restored ends in exactly one of: still open
 * (active), closed, expired, evicted or flushed:
 *
 *   flows_new + flows_restored == cflow_flows_accounted()
 */
struct cflow_counters {
	uint64_t packets;
	uint64_t bytes;          /**< wire bytes of all packets */
	uint64_t non_ip;
	uint64_t malformed[CFLOW_PARSE_STATUS_MAX]; /**< by parse status */
	uint64_t fragments;      /**< non-first fragments */
	uint64_t flows_new;
	uint64_t flows_seen;     /**< packets of tracked flows */
	uint64_t flows_closed;   /**< by a FIN/RST, once per flow */
	uint64_t flows_expired;
	uint64_t flows_evicted;  /**< open flows evicted for a new one */
	uint64_t insert_failed;
	uint64_t orphan_close;
	uint64_t reused;         /**< SYN on a closing flow: also counted new */
	uint64_t hash_fallback;  /**< hash mode rss, packet without a hash */
	uint64_t active;         /**< open flows in the table now */
	uint64_t unsolicited;    /**< CFLOW_UNTRACKED_UNSOLICITED packets */
	uint64_t not_syn;        /**< CFLOW_UNTRACKED_NOT_SYN packets */
	uint64_t new_flow_limited; /**< CFLOW_UNTRACKED_LIMITED packets */
	uint64_t emergency_enter; /**< times emergency mode began */
	uint64_t emergency_exit;  /**< and ended */
	uint64_t emergency;      /**< 1 while in emergency mode */
	/** open flows taken over from a saved table, cflow_tracker_restore():
	 *  not counted new */
	uint64_t flows_restored;
	/** open flows removed by cflow_tracker_flush() */
	uint64_t flows_flushed;
	/** CFLOW_UNTRACKED_WRONG_DIR packets */
	uint64_t wrong_direction;
};

/** One packet handed to the tracker. */
struct cflow_input {
	const uint8_t *data;  /**< frame, from its link header (link_type) */
	uint32_t len;         /**< captured bytes at data */
	uint32_t wire_len;    /**< length on the wire (>= len) */
	uint64_t time_ns;     /**< monotonic time of the packet */
	uint32_t rss;         /**< NIC hash, if has_rss */
	bool has_rss;
	/**
	 * The flow's cflow_hash_key() with the tracker's seed, if has_hash:
	 * a caller that hashed the key already (to pick the flow's lcore)
	 * saves the tracker hashing it again. Used in CFLOW_HASH_XXH3 mode
	 * only; a wrong value tracks the packet under another flow.
	 */
	bool has_hash;
	uint64_t hash;
	uint8_t flags;        /**< CFLOW_IN_* */
};

struct cflow_tracker;

/**
 * The parameters @p p stands for, every default spelled out, into
 * @p out (which may be @p p): each zero field replaced by its default,
 * a seed of 0 by a random non-zero one (unless fixed_seed), and checked
 * as cflow_tracker_create() checks them but for what only lib/cuckoo
 * checks (fp_bits, the memory). A table that keeps the tracker's
 * contract on another store (bench_pipeline's exact table) takes its
 * timeouts from here.
 *
 * @return
 *   0, or -EINVAL with errno set (then @p out is unspecified): a
 *   capacity over CF_MAX_CAPACITY, value_bits not 16 or 32, a
 *   full_policy or hash out of range, a timeout or linger too long for
 *   the value bits (26 days with 32-bit values and no packet count,
 *   half as long for each bit of count_bits and for sided).
 */
int cflow_tracker_params_resolve(const struct cflow_tracker_params *p,
		struct cflow_tracker_params *out);

/**
 * Optional: fill @p p with the defaults spelled out for a table of
 * @p capacity flows, a random seed drawn now. A zeroed struct with only
 * capacity set makes the same tracker but for the seed.
 */
void cflow_tracker_params_init(struct cflow_tracker_params *p,
		uint64_t capacity);

/** A random hash seed, never 0 (getrandom(), else the time). */
uint64_t cflow_random_seed(void);

/**
 * Create a tracker; @p p is copied (see cflow_tracker_params_resolve()
 * for its defaults). NULL with errno set: EINVAL for bad parameters,
 * ENOMEM.
 */
struct cflow_tracker *cflow_tracker_create(
		const struct cflow_tracker_params *p);

/** The parameters @p t runs with, resolved: its seed, its defaults. */
void cflow_tracker_params_get(const struct cflow_tracker *t,
		struct cflow_tracker_params *p);

/** Free a tracker; NULL is accepted. */
void cflow_tracker_free(struct cflow_tracker *t);

/**
 * Track @p n packets, in order, CF_BULK_MAX at a time (one bulk lookup
 * each). Time never goes backwards for the tracker: an earlier time_ns
 * counts as the latest seen. Every packet's time_ns counts, in order,
 * whether it parses to a flow or not (non-IP, malformed, a fragment):
 * the latest time seen is the latest of all packets so far, however
 * they are cut into bursts.
 *
 * @param verdicts
 *   If not NULL, receives each packet's verdict.
 */
void cflow_track_burst(struct cflow_tracker *t, const struct cflow_input *in,
		unsigned int n, enum cflow_verdict *verdicts);

/**
 * cflow_track_burst() for packets the caller has parsed already (with
 * the tracker's parse parameters), to look at them before tracking,
 * as the application's blocklist does, without parsing twice.
 *
 * @param pkts
 *   cflow_parse()'s output for each packet; read only where @p status
 *   is CFLOW_PARSE_OK.
 * @param status
 *   cflow_parse()'s return for each packet.
 * @param counts
 *   If not NULL, receives each packet's ordinal in its flow, both
 *   directions together: 1 for the packet that opened it, saturating at
 *   2^count_bits - 1; 0 for a packet left untracked, and for every
 *   packet if count_bits is 0.
 */
void cflow_track_parsed(struct cflow_tracker *t,
		const struct cflow_input *in, const struct cflow_packet *pkts,
		const enum cflow_parse_status *status, unsigned int n,
		enum cflow_verdict *verdicts, uint8_t *counts);

/**
 * Expire idle flows and remove lingering closed ones, visiting at most
 * sweep_max_buckets buckets: as many as the time since the last call
 * asks for, so that a whole pass takes at most P = L - 4 ticks (at
 * least L / 2), where L = max(1 s, shortest timeout / 8), provided calls
 * come at least every
 * sweep_max_buckets * P / buckets (the application calls it every
 * burst, and when idle). Every idle flow is then expired no earlier than
 * its timeout and no later than timeout + max(1 s, timeout / 8).
 *
 * @return
 *   Flows expired by this call.
 */
uint64_t cflow_sweep(struct cflow_tracker *t, uint64_t now_ns);

/**
 * cflow_sweep(), judging idleness as of an earlier time: paced by
 * @p now_ns exactly as cflow_sweep() is (which is
 * cflow_sweep_at(t, now_ns, now_ns)), but a flow is expired, or a closed
 * flow removed, only if idle past its timeout or linger at @p as_of_ns.
 * For flow_time trackers, whose flows are stamped at their packets' own
 * times: cflow_sweep() would expire a flow of a stream lagging behind the
 * clock that a packet still to come refreshes.
 *
 * @param as_of_ns
 *   A watermark: no packet still to come for this tracker is earlier
 *   (for streams each in time order, the least over the streams of the
 *   latest time taken from each; a stream that may still deliver counts).
 *   Then no flow is expired that a later packet would have found alive.
 *   From @p now_ns up it is the clock. One more than 1/8 of the tick
 *   range behind the clock (see flow_time) counts as the clock less that.
 * @return
 *   Flows expired by this call.
 */
uint64_t cflow_sweep_at(struct cflow_tracker *t, uint64_t now_ns,
		uint64_t as_of_ns);

/**
 * The lag of a tracker: 1/8 of its tick range (13 days with 32-bit
 * values, 17 s to 274 s with 16-bit values; see flow_time). A packet or
 * a watermark more than this behind the clock is judged at the clock
 * less the lag. A caller merging streams into a flow_time tracker gets
 * the decisions of a time-ordered replay if it tracks no packet more
 * than this ahead of the watermark it sweeps as of.
 *
 * @return
 *   The lag in nanoseconds.
 */
uint64_t cflow_tracker_lag_ns(const struct cflow_tracker *t);

/**
 * The sweep's pacing, for callers that scan a table of their own at the
 * tracker's pace (bench_pipeline's exact table does): @p total units per
 * @p period_ns, owed in proportion to the time since the last call, at
 * most @p total owed and at most @p max handed out a call. The first call
 * starts the clock. @p now_ns must not go backwards. Zero-initialise.
 */
struct cflow_pace {
	uint64_t last_ns;
	double credit;          /**< units owed */
	bool started;
};

/** Units of work due at @p now_ns; see struct cflow_pace. */
uint64_t cflow_pace_take(struct cflow_pace *p, uint64_t now_ns,
		uint64_t total, uint64_t period_ns, uint64_t max);

/** A full pass at @p now_ns: makes end-of-run counters exact. */
uint64_t cflow_sweep_all(struct cflow_tracker *t, uint64_t now_ns);

/** Packets counted malformed, all reasons together. */
uint64_t cflow_malformed_total(const struct cflow_counters *c);

/** The packets counted in one class each (struct cflow_counters): equal
 *  to packets whenever a burst is done. */
uint64_t cflow_packets_classified(const struct cflow_counters *c);

/** The flows counted new or restored, by their fate so far: active +
 *  closed + expired + evicted + flushed, always equal to flows_new +
 *  flows_restored. */
uint64_t cflow_flows_accounted(const struct cflow_counters *c);

/** Copy the counters. */
void cflow_counters_get(const struct cflow_tracker *t,
		struct cflow_counters *c);

/**
 * Warm restart: a tracker's flows and clock, to be taken over by a
 * tracker of a later run (cflow_tracker_restore()), so that flows alive
 * across a restart are not counted new again and the time spent down
 * ages them.
 *
 * The format: a header (magic "CFLOWTRK", version, byte order, the
 * parameters that give stored values their meaning, the clock) with its
 * own XXH64, then the flow table in lib/cuckoo's checksummed format
 * (cf_save_mem()). Counters are not saved: each run counts its own.
 */

/** Bytes cflow_tracker_save() writes. */
size_t cflow_tracker_save_size(const struct cflow_tracker *t);

/**
 * The most bytes cflow_tracker_save() writes for a tracker created with
 * @p p, without creating one: what a saved table read back for such a
 * tracker may take, to refuse a larger file before reading it.
 *
 * @return
 *   The size, or 0 (errno EINVAL) if cflow_tracker_create() would refuse
 *   @p p's table.
 */
uint64_t cflow_tracker_save_bound(const struct cflow_tracker_params *p);

/**
 * Serialise @p t's table and clock into @p buf.
 *
 * @return
 *   Bytes written, or -ENOSPC (errno set) if @p len is below
 *   cflow_tracker_save_size().
 */
int64_t cflow_tracker_save(const struct cflow_tracker *t, void *buf,
		size_t len);

/**
 * Take over the flows of cflow_tracker_save() output into @p t, a
 * tracker that has tracked nothing yet. The input is untrusted. The
 * saved table must have been made with the same table parameters
 * (capacity, exact_size, fp_bits, value_bits, table layout, seed), the
 * same hash mode, count_bits, sided and tick (which the longest timeout
 * or linger picks): timeouts may otherwise differ. On success @p t's clock
 * is the saved clock (time never goes backwards: packets older than it
 * count as at it), its open flows are counted in active and
 * flows_restored, and @p saved_ns (if not NULL) receives the saved
 * clock. On failure @p t is unchanged.
 *
 * @param err
 *   If not NULL, receives why it was refused (@p errlen bytes).
 * @return
 *   0, or a negative errno (errno set): -EBUSY if @p t has tracked
 *   packets; -ENODATA if the input is short; -EBADMSG if it is corrupt;
 *   -EPROTONOSUPPORT for another format version; -ENOTSUP if written on
 *   a host of the other byte order; -ESTALE if the parameters differ (@p
 *   err names the first that does); -ENOMEM.
 */
int cflow_tracker_restore(struct cflow_tracker *t, const void *buf,
		size_t len, uint64_t *saved_ns, char *err, size_t errlen);

/** What cflow_tracker_lookup() tells of one flow. */
struct cflow_flow_info {
	/** An entry with the flow's fingerprint is in one of its two
	 *  buckets: the flow, or another with the same fingerprint there
	 *  (a false positive, at the filter's rate). */
	bool tracked;
	bool closing;       /**< closed by a FIN/RST, lingering */
	/** Idle past its timeout (or linger) and not swept yet: its next
	 *  packet opens it anew. */
	bool expired;
	uint8_t proto_class; /**< enum cflow_proto_class, as stored */
	uint64_t idle_ns;   /**< since its last packet, at the tracker's
			     *  clock, in ticks (within one tick) */
	uint32_t count;     /**< packets so far, saturating (count_bits) */
};

/**
 * Look one flow up by its key, as a packet of it would find it, without
 * changing anything. @p key is canonical (cflow_key_init()).
 *
 * @return
 *   1 if tracked (see cflow_flow_info.tracked), 0 if not (never
 *   wrong), -ENOTSUP (errno set) in CFLOW_HASH_RSS mode, where the
 *   table's hash is the NIC's, which a key does not give.
 */
int cflow_tracker_lookup(const struct cflow_tracker *t,
		const struct cflow_key *key, struct cflow_flow_info *info);

/**
 * Remove every flow. Open ones are counted in flows_flushed (and leave
 * active); lingering closed ones just go. Not concurrently with tracking:
 * the application's workers flush their own tables between bursts.
 *
 * @return
 *   The open flows removed.
 */
uint64_t cflow_tracker_flush(struct cflow_tracker *t);

/**
 * An event of a packet whose verdict is CFLOW_NEW or CFLOW_CLOSING (else
 * 0 is returned and @p e is untouched): @p pkt's 5-tuple in its own
 * direction, @p time_ns and @p wire_len; port and worker are 0.
 *
 * @return
 *   1 if @p e was filled, 0 if the verdict has no event.
 */
int cflow_event_init(struct cflow_event *e, const struct cflow_packet *pkt,
		enum cflow_verdict verdict, uint64_t time_ns,
		uint32_t wire_len);

/**
 * One JSON object for @p e, without a newline (docs/usage.md, "Flow
 * events"): {"event":"new"|"close", "time":"<RFC 3339, ns>",
 * "time_ns":N, "worker":N, "port":N, "proto":N, "class":"tcp"|..,
 * "src":"..", "sport":N, "dst":"..", "dport":N, "len":N,
 * "tcp_flags":N[, "reason":"fin"|"rst"]}.
 *
 * @return
 *   Its length, or -ENOSPC (errno set) if it needs more than @p len - 1
 *   bytes (CFLOW_EVENT_JSON_MAX always suffices).
 */
int cflow_event_json(const struct cflow_event *e, char *buf, size_t len);

#define CFLOW_EVENT_JSON_MAX 384

/** The tracker's filter, for its statistics. */
const struct cf_filter *cflow_tracker_filter(const struct cflow_tracker *t);

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_H_ */
