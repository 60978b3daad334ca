/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_PARSE_H_
#define _CFLOW_PARSE_H_

/**
 * @file
 * lib/cflow's parser: packet bytes in, a canonical bidirectional 5-tuple
 * key out. cflow_parse() is a bounds-checked parser of the link header
 * (Ethernet and VLAN, Linux cooked, raw IP, BSD loopback: enum
 * cflow_link_type), IPv4, IPv6, L4 and, on request, tunnels that fills a
 * struct cflow_packet; cflow_key_init() builds the same keys from
 * addresses and ports (inline: lib/blocklist uses it without linking the
 * parser); cflow_hash_key() hashes them.
 *
 * Part of cflow.h, which includes it. No tracker, no lib/cuckoo.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

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
 * @param dlt
 *   A DLT_ value (pcap_datalink()) or a savefile LINKTYPE_ value.
 * @return
 *   An enum cflow_link_type, or -EINVAL (errno set) for a link type
 *   cflow_parse() does not handle (DLT_IEEE802_11, DLT_PPP, ...).
 */
int cflow_link_type_from_dlt(int dlt);

/**
 * Name of a link type, as libpcap's pcap_datalink_val_to_name() names
 * it ("EN10MB", "LINUX_SLL", "LINUX_SLL2", "RAW", "IPV4", "IPV6",
 * "NULL", "LOOP"); "unknown" for a value out of range.
 *
 * @param link
 *   Any value.
 * @return
 *   A static string.
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
 * - CFLOW_PARSE_BAD_EMBEDDED: always (the outer packet's addresses).
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
	/** An ICMP or ICMPv6 error whose quoted packet is cut short or not
	 *  sane (see CFLOW_KIND_ICMP_ERROR) */
	CFLOW_PARSE_BAD_EMBEDDED,
	CFLOW_PARSE_STATUS_MAX,
	/** The malformed statuses, a range: for (st = FIRST; st <= LAST). */
	CFLOW_PARSE_MALFORMED_FIRST = CFLOW_PARSE_TRUNC_L2,
	CFLOW_PARSE_MALFORMED_LAST = CFLOW_PARSE_BAD_EMBEDDED,
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
 * The most bytes an ICMP error reads behind the IP header it is in,
 * where other packets read their L4 header: its ICMP header (8), the
 * quoted packet's IPv6 header with CFLOW_PARSE_IPV6_EXT_MAX extensions
 * of the largest size and 8 bytes of its L4 header: 16440
 * (CFLOW_KIND_ICMP_ERROR).
 */
#define CFLOW_PARSE_ICMP_ERROR_MAX (8 + CFLOW_PARSE_IP_MAX_HDR - 20 + 8)

/**
 * The most bytes of a frame cflow_parse() ever reads or compares against,
 * whatever the link type and tunnel: the longest link header (LINUX_SLL2's
 * 20, see CFLOW_PARSE_LINK_HDR_MAX), CFLOW_PARSE_VLAN_MAX tags (4 each),
 * the outer IPv6 header with its extensions up to its L4 header
 * (CFLOW_PARSE_IP_MAX_HDR less TCP's 20), the longest tunnel header
 * (CFLOW_PARSE_TUNNEL_HDR_MAX), the inner packet's IP header with its
 * extensions and, behind it, an ICMP error's quoted packet
 * (CFLOW_PARSE_ICMP_ERROR_MAX, more than a TCP header): 53416 bytes.
 * Without decapsulation 32892 bytes are read at most (Ethernet 6 less,
 * the headerless link types 28 less); without ICMP errors 16472; every
 * other path needs fewer (IPv4 with options: 108;
 * CFLOW_PARSE_VLAN_ADDRS_MAX tags and an IPv4 header with options: 112).
 *
 * Parsing the first min(len, CFLOW_PARSE_MAX_HDR) bytes of a frame gives
 * the same status and the same struct cflow_packet as parsing all @p len
 * bytes: a caller that must copy the headers out of a segmented buffer
 * (rte_pktmbuf_read) needs a buffer of this size at most.
 */
#define CFLOW_PARSE_MAX_HDR (CFLOW_PARSE_LINK_HDR_MAX + \
	4 * CFLOW_PARSE_VLAN_MAX + CFLOW_PARSE_IP_MAX_HDR - 20 + \
	CFLOW_PARSE_TUNNEL_HDR_MAX + CFLOW_PARSE_IP_MAX_HDR - 20 + \
	CFLOW_PARSE_ICMP_ERROR_MAX)

/** TCP flags, as on the wire. */
#define CFLOW_TCP_FIN 0x01
/** TCP SYN flag */
#define CFLOW_TCP_SYN 0x02
/** TCP RST flag */
#define CFLOW_TCP_RST 0x04
/** TCP ACK flag */
#define CFLOW_TCP_ACK 0x10

/**
 * Canonical flow key: the lower (address, port) endpoint first, so both
 * directions of a flow have one key. IPv4 addresses are stored
 * IPv4-mapped (\::ffff:a.b.c.d). Fixed size and zero padded: hash it as
 * bytes.
 *
 * Ports are TCP's, UDP's, UDP-Lite's and SCTP's. An ICMP query (echo,
 * timestamp, information and address mask requests and replies; ICMPv6
 * echo) is keyed by its identifier, as conntrack keys it: the
 * requester's endpoint has the identifier for port, the responder's
 * port 0, so a request and its replies share a key, and a request the
 * other way (the responder asking the requester) has another (unless
 * the identifier is 0: then both are the address pair's, as every other
 * ICMP message is, with ports 0). cflow_key_icmp() builds such a key.
 */
struct cflow_key {
	/** the lower endpoint's address */
	uint8_t addr_lo[16];
	/** the higher endpoint's address */
	uint8_t addr_hi[16];
	/** host order; an ICMP query's identifier on the requester's
	 *  side; 0 for other ICMP and protocols without ports */
	uint16_t port_lo;
	/** host order; as port_lo for the higher endpoint */
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
 * How a parsed packet (CFLOW_PARSE_OK) stands to the flow of its key
 * (struct cflow_packet's kind).
 */
enum cflow_packet_kind {
	/** A packet of the flow: it may open, refresh or close it. */
	CFLOW_KIND_FLOW = 0,
	/**
	 * An ICMP error about a packet of the key's flow: ICMPv4 destination
	 * unreachable (3, fragmentation needed included), time exceeded
	 * (11) or parameter problem (12); ICMPv6 destination unreachable
	 * (1), packet too big (2), time exceeded (3) or parameter problem
	 * (4). The key is the quoted packet's flow, keyed as that packet
	 * would be (TCP, UDP, UDP-Lite and SCTP ports, an ICMP query's
	 * identifier); reversed is the error's direction, back to the
	 * quoted packet's source, which is the error's destination; proto
	 * class the quoted packet's; tcp_flags 0. A tracker looks the flow
	 * up (CFLOW_RELATED) but neither opens, refreshes nor closes it. The
	 * quoted packet is the error's IP payload past its 8-byte ICMP
	 * header: an IP header whole and sane, of the error's family, and 8
	 * bytes of its L4 header for TCP, UDP, UDP-Lite, SCTP and ICMP (RFC
	 * 792's "64 bits"), else CFLOW_PARSE_BAD_EMBEDDED.
	 */
	CFLOW_KIND_ICMP_ERROR,
	/**
	 * An ICMP error that cannot be about a flow: one that quotes an
	 * ICMP error or a non-first fragment, or that goes to another
	 * address than the quoted packet's source. The key is the error's
	 * own address pair (ICMP, ports 0); a tracker never relates it.
	 */
	CFLOW_KIND_ICMP_UNRELATED,
	/**
	 * A non-first fragment given the parse of its datagram's first
	 * fragment (struct cflow_frag; never the parser): the key, reversed
	 * and class are that fragment's, tcp_flags 0. A tracker looks the
	 * flow up (CFLOW_FRAGMENT_SEEN) but neither opens, refreshes nor
	 * closes it.
	 */
	CFLOW_KIND_FRAGMENT,
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
	/** canonical key (see above for what is set) */
	struct cflow_key key;
	/**
	 * With CFLOW_PARSE_OK: the bytes of the outermost IP packet, its
	 * header included, as its header gives them (IPv4 total length,
	 * IPv6 40 + payload length): RFC 7012's octets of a packet,
	 * whatever was captured of it. A decapsulated packet's is its
	 * tunnel's outer packet's (what the link carried). 0 for an IPv6
	 * jumbogram (payload length 0: the length is in an option this
	 * parser does not read), and whenever the status is not OK.
	 */
	uint32_t ip_len;
	/* (here, after the key, so that no field is padded: 80 bytes,
	 * which gcc zeroes in five stores; at 84 the parser's memset was a
	 * rep stosq, 20-25 cycles a packet, docs/benchmarks.md) */
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
	 *  key is of (a decapsulated packet's inner one; an ICMP error's
	 *  own); else 0. */
	uint8_t hop_limit;
	/** With CFLOW_PARSE_OK and class ICMP: the ICMP or ICMPv6 code;
	 *  else 0. */
	uint8_t icmp_code;
	/** With CFLOW_PARSE_OK: enum cflow_packet_kind; else 0. */
	uint8_t kind;
	/**
	 * With CFLOW_PARSE_OK: the packet is the first fragment of a
	 * fragmented datagram (IPv4: more fragments, offset 0; IPv6: a
	 * fragment header at offset 0 with M set), not decapsulated; its
	 * other fragments parse CFLOW_PARSE_FRAGMENT. cflow_parse_frag()
	 * names the datagram. Else false.
	 */
	bool frag_first;
	/**
	 * With CFLOW_KIND_ICMP_ERROR: the error's own source address (a
	 * router on the path, or the quoted packet's destination), which
	 * the key no longer holds, IPv4 mapped (\::ffff:a.b.c.d) as in the
	 * key; a blocklist matches it as an address of the packet
	 * (cbl_match()). Else zero.
	 */
	uint8_t err_src[16];
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
 * @param buf
 *   The frame's captured bytes, from its link header.
 * @param len
 *   Captured bytes in @p buf.
 * @param params
 *   Parser options, or NULL for the defaults (Ethernet, no VLAN ids in
 *   the key, no decapsulation).
 * @param pkt
 *   Receives what the parser tells the tracker, whatever the status.
 * @return
 *   CFLOW_PARSE_OK with @p pkt filled, or why the packet is not tracked;
 *   then @p pkt still carries the addresses if they could be read (see
 *   struct cflow_packet).
 */
enum cflow_parse_status cflow_parse(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt);

struct cflow_input;

/**
 * cflow_parse() on each of @p n frames, one call a burst: frame k is
 * @p in[k]'s data and len (cflow_track.h); only those are read.
 *
 * @param in
 *   The frames.
 * @param n
 *   How many.
 * @param params
 *   Parser options for all of them, or NULL for the defaults.
 * @param pkts
 *   Receives frame k's result in pkts[k], as cflow_parse() fills it.
 * @param status
 *   Receives frame k's cflow_parse() return in status[k].
 */
void cflow_parse_burst(const struct cflow_input *in, unsigned int n,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkts, enum cflow_parse_status *status);

/**
 * cflow_parse() without its fast path for the common frame (Ethernet,
 * IPv4 without options, TCP or UDP): the same answer for every frame,
 * only slower for those. For tests and fuzzers that check the two agree.
 *
 * @param buf
 *   The frame's captured bytes, from its link header.
 * @param len
 *   Captured bytes in @p buf.
 * @param params
 *   Parser options, or NULL for the defaults (Ethernet, no VLAN ids in
 *   the key, no decapsulation).
 * @param pkt
 *   Receives what the parser tells the tracker, whatever the status.
 * @return
 *   As cflow_parse().
 */
enum cflow_parse_status cflow_parse_general(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt);

/**
 * The datagram of an IP fragment (cflow_parse_frag()): what identifies
 * it among the fragments in flight (RFC 791, RFC 8200) and where this
 * fragment is in it.
 */
struct cflow_frag_id {
	uint8_t src[16];    /**< the packet's source (IPv4-mapped) */
	uint8_t dst[16];    /**< and destination */
	uint32_t id;        /**< IPv4's 16-bit or IPv6's 32-bit identification */
	uint8_t proto;      /**< IPv4's protocol, IPv6's fragment next header */
	uint8_t family;     /**< 4 or 6 */
	uint16_t offset;    /**< the fragment's offset, 8-byte units */
	bool more;          /**< more fragments follow */
};

/**
 * cflow_parse() of a fragment, naming its datagram in @p fi: for a frame
 * that parses CFLOW_PARSE_FRAGMENT (a non-first fragment) or
 * CFLOW_PARSE_OK with frag_first, not decapsulated (a tunnel's inner
 * fragments are not followed). The fast path never takes a fragment:
 * this is cflow_parse_general() with the fragment's identity.
 *
 * @param buf
 *   The frame's first bytes.
 * @param len
 *   How many bytes @p buf holds.
 * @param params
 *   The parse parameters, as cflow_parse()'s.
 * @param pkt
 *   The parse, as cflow_parse() fills it.
 * @param fi
 *   The fragment's datagram and place, filled.
 * @return
 *   The parse status, as cflow_parse() returns it, and @p fi filled if
 *   the frame is such a fragment (fi->family 4 or 6); else fi->family
 *   is 0.
 */
enum cflow_parse_status cflow_parse_frag(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt, struct cflow_frag_id *fi);

/**
 * Name of a parse status, for counters and logs ("trunc_l3", ...).
 *
 * @param st
 *   Any value.
 * @return
 *   A static string; "unknown" for a value out of range.
 */
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
 * @param key
 *   The key to fill, zeroed by the caller (padding, vlan and tunnel are
 *   not written).
 * @param family
 *   4 or 6.
 * @param src
 *   The source address, 16 bytes (IPv4-mapped for family 4).
 * @param dst
 *   The destination address, 16 bytes (IPv4-mapped for family 4).
 * @param sport
 *   The source port, host order (0 without ports).
 * @param dport
 *   The destination port, host order (0 without ports).
 * @param proto
 *   The IP protocol number.
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
 *
 * @param key
 *   Receives the key, zeroed first (vlan and tunnel 0).
 * @param family
 *   4 or 6.
 * @param src
 *   The source address, 16 bytes (IPv4-mapped for family 4).
 * @param dst
 *   The destination address, 16 bytes (IPv4-mapped for family 4).
 * @param sport
 *   The source port, host order (0 without ports).
 * @param dport
 *   The destination port, host order (0 without ports).
 * @param proto
 *   The IP protocol number.
 */
static inline void
cflow_key_init(struct cflow_key *key, uint8_t family, const uint8_t *src,
		const uint8_t *dst, uint16_t sport, uint16_t dport,
		uint8_t proto)
{
	memset(key, 0, sizeof(*key));
	(void)cflow_key_fill(key, family, src, dst, sport, dport, proto);
}

/**
 * The key of an ICMP query flow (enum cflow_packet_kind): between
 * @p requester and @p responder (16 bytes each, IPv4-mapped for family
 * 4), identifier @p id, @p proto 1 or 58. A request from the requester
 * and its replies have this key.
 *
 * @param key
 *   The key to fill, zeroed by the caller.
 * @param family
 *   4 or 6.
 * @param requester
 *   The requester's address, 16 bytes.
 * @param responder
 *   The responder's address, 16 bytes.
 * @param id
 *   The query's identifier, host order.
 * @param proto
 *   1 (ICMP) or 58 (ICMPv6).
 */
static inline void
cflow_key_icmp(struct cflow_key *key, uint8_t family,
		const uint8_t *requester, const uint8_t *responder, uint16_t id,
		uint8_t proto)
{
	cflow_key_init(key, family, requester, responder, id, 0, proto);
}

/**
 * Seeded XXH3-64 of a canonical key.
 *
 * @param key
 *   The key, hashed as its sizeof(struct cflow_key) bytes.
 * @param seed
 *   The hash seed.
 * @return
 *   The 64-bit hash.
 */
uint64_t cflow_hash_key(const struct cflow_key *key, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_PARSE_H_ */
