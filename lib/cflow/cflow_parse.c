/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Packet parser: the link header (Ethernet II, Linux cooked v1 and v2,
 * raw IP, BSD loopback), up to two VLAN tags, IPv4, IPv6 with its
 * extension headers, and the L4 ports. The link header only yields an
 * offset and an ethertype; from there every link type takes one path. Packets are untrusted: every read
 * is checked against the captured length first, and the IP length fields
 * only ever shorten what is parsed (Ethernet padding), never lengthen it.
 *
 * Once an IP header is known to be sane, its addresses are reported
 * whatever happens after it (for the blocklist): every return past that
 * point goes through addrs_v4() or addrs_v6(), or builds the full key.
 * Deeper VLAN stacks are walked for the addresses only.
 */

#include <errno.h>
#include <string.h>

#include "cflow_key_hash.h"
#include "cflow_parse.h"
#include "cflow_track.h"

#define ETHER_HDR_LEN 14
#define SLL_HDR_LEN 16
#define SLL_PROTO_OFF 14
#define SLL2_HDR_LEN 20
#define SLL2_PROTO_OFF 0
#define NULL_HDR_LEN 4
#define ETHER_TYPE_IPV4 0x0800
#define ETHER_TYPE_IPV6 0x86dd
#define ETHER_TYPE_VLAN 0x8100
#define ETHER_TYPE_QINQ 0x88a8
#define ETHER_TYPE_QINQ_OLD 0x9100
#define VLAN_TAG_LEN 4

#define IPV4_MIN_HDR 20
#define IPV4_MAX_HDR 60
#define IPV6_HDR 40
#define IPV6_MAX_EXT_LEN ((255 + 1) * 8)
#define TCP_MIN_HDR 20
#define UDP_HDR 8

#define ETHER_TYPE_TEB 0x6558   /* transparent Ethernet bridging */
#define VXLAN_PORT 4789
#define VXLAN_HDR 8
#define VXLAN_FLAG_I 0x08
#define GENEVE_PORT 6081
#define GENEVE_HDR 8
#define GENEVE_MAX_OPT (63 * 4)
#define GRE_HDR 4
#define GRE_FLAG_C 0x8000
#define GRE_FLAG_K 0x2000
#define GRE_FLAG_S 0x1000
#define GTPU_PORT 2152
#define GTPU_HDR 8
#define GTPU_OPT 4
#define GTPU_GPDU 255
#define GTPU_MAX_EXT (255 * 4)

/* Address families of DLT_NULL and DLT_LOOP, as BSDs and macOS number
 * them (AF_INET6 differs). */
#define BSD_AF_INET 2
#define BSD_AF_INET6_BSD 24     /* NetBSD, OpenBSD, BSD/OS */
#define BSD_AF_INET6_FREEBSD 28 /* FreeBSD, DragonFly BSD */
#define BSD_AF_INET6_DARWIN 30  /* macOS, iOS */

/* libpcap's DLT_ values (pcap/dlt.h), which differ by system for RAW and
 * LOOP; and the LINKTYPE_ values of savefiles that differ from them. */
#define DLT_NULL_VAL 0
#define DLT_EN10MB_VAL 1
#ifdef __OpenBSD__
#define DLT_RAW_VAL 14
#define DLT_LOOP_VAL 12
#else
#define DLT_RAW_VAL 12
#define DLT_LOOP_VAL 108
#endif
#define LINKTYPE_RAW_VAL 101
#define LINKTYPE_LOOP_VAL 108
#define DLT_LINUX_SLL_VAL 113
#define DLT_IPV4_VAL 228
#define DLT_IPV6_VAL 229
#define DLT_LINUX_SLL2_VAL 276

#define PROTO_HOPOPTS 0
#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ROUTING 43
#define PROTO_GRE 47
#define PROTO_FRAGMENT 44
#define PROTO_AH 51
#define PROTO_ICMPV6 58
#define PROTO_DSTOPTS 60
#define PROTO_SCTP 132
#define PROTO_UDPLITE 136

/* The bound in cflow_parse.h covers every link header, and both the tracked
 * and the address-only paths behind it. */
_Static_assert(CFLOW_PARSE_LINK_HDR_MAX == SLL2_HDR_LEN &&
	SLL2_HDR_LEN >= SLL_HDR_LEN && SLL2_HDR_LEN >= ETHER_HDR_LEN &&
	SLL2_HDR_LEN >= NULL_HDR_LEN,
	"CFLOW_PARSE_LINK_HDR_MAX: the longest link header");
_Static_assert(CFLOW_PARSE_IP_MAX_HDR ==
	IPV6_HDR + CFLOW_PARSE_IPV6_EXT_MAX * IPV6_MAX_EXT_LEN + TCP_MIN_HDR &&
	CFLOW_PARSE_IP_MAX_HDR >= IPV4_MAX_HDR + TCP_MIN_HDR,
	"CFLOW_PARSE_IP_MAX_HDR: an IP header and what is read behind it");
_Static_assert(CFLOW_PARSE_TUNNEL_HDR_MAX == UDP_HDR + GTPU_HDR + GTPU_OPT +
	CFLOW_PARSE_GTPU_EXT_MAX * GTPU_MAX_EXT,
	"CFLOW_PARSE_TUNNEL_HDR_MAX: GTP-U's");
_Static_assert(CFLOW_PARSE_TUNNEL_HDR_MAX >= UDP_HDR + GENEVE_HDR +
	GENEVE_MAX_OPT + ETHER_HDR_LEN + VLAN_TAG_LEN * CFLOW_PARSE_VLAN_MAX &&
	CFLOW_PARSE_TUNNEL_HDR_MAX >= UDP_HDR + VXLAN_HDR + ETHER_HDR_LEN +
	VLAN_TAG_LEN * CFLOW_PARSE_VLAN_MAX &&
	CFLOW_PARSE_TUNNEL_HDR_MAX >= 4 * GRE_HDR + ETHER_HDR_LEN +
	VLAN_TAG_LEN * CFLOW_PARSE_VLAN_MAX,
	"CFLOW_PARSE_TUNNEL_HDR_MAX: the longest tunnel header");
/* An inner frame behind more than CFLOW_PARSE_VLAN_MAX tags is walked for
 * its addresses only: within the inner IP bound. */
_Static_assert(VLAN_TAG_LEN * (CFLOW_PARSE_VLAN_ADDRS_MAX -
	CFLOW_PARSE_VLAN_MAX) + IPV4_MAX_HDR <= CFLOW_PARSE_IP_MAX_HDR,
	"CFLOW_PARSE_MAX_HDR: the inner deep VLAN path's bound");
_Static_assert(CFLOW_PARSE_ICMP_ERROR_MAX == 8 + IPV6_HDR +
	CFLOW_PARSE_IPV6_EXT_MAX * IPV6_MAX_EXT_LEN + 8 &&
	CFLOW_PARSE_ICMP_ERROR_MAX >= TCP_MIN_HDR,
	"CFLOW_PARSE_ICMP_ERROR_MAX: an ICMP header and the quoted packet");
_Static_assert(CFLOW_PARSE_MAX_HDR == CFLOW_PARSE_LINK_HDR_MAX +
	VLAN_TAG_LEN * CFLOW_PARSE_VLAN_MAX + CFLOW_PARSE_IP_MAX_HDR -
	TCP_MIN_HDR + CFLOW_PARSE_TUNNEL_HDR_MAX + CFLOW_PARSE_IP_MAX_HDR -
	TCP_MIN_HDR + CFLOW_PARSE_ICMP_ERROR_MAX,
	"CFLOW_PARSE_MAX_HDR: the tracked path's bound, through a tunnel, "
	"to an ICMP error's quoted packet");
_Static_assert(CFLOW_PARSE_MAX_HDR <= 64 * 1024,
	"CFLOW_PARSE_MAX_HDR: a buffer callers may keep on the stack");
_Static_assert(CFLOW_PARSE_MAX_HDR >= CFLOW_PARSE_LINK_HDR_MAX +
	VLAN_TAG_LEN * CFLOW_PARSE_VLAN_ADDRS_MAX + IPV4_MAX_HDR,
	"CFLOW_PARSE_MAX_HDR: the deep VLAN path's bound");
_Static_assert(CFLOW_DECAP_ALL == (CFLOW_DECAP_VXLAN | CFLOW_DECAP_GENEVE |
	CFLOW_DECAP_GRE | CFLOW_DECAP_GTPU), "CFLOW_DECAP_ALL");
_Static_assert(CFLOW_PARSE_VLAN_ADDRS_MAX >= CFLOW_PARSE_VLAN_MAX,
	"VLAN bounds");

static const char *const status_names[CFLOW_PARSE_STATUS_MAX] = {
	[CFLOW_PARSE_OK] = "ok",
	[CFLOW_PARSE_NON_IP] = "non_ip",
	[CFLOW_PARSE_FRAGMENT] = "fragment",
	[CFLOW_PARSE_TRUNC_L2] = "trunc_l2",
	[CFLOW_PARSE_TRUNC_L3] = "trunc_l3",
	[CFLOW_PARSE_TRUNC_L4] = "trunc_l4",
	[CFLOW_PARSE_BAD_VERSION] = "bad_version",
	[CFLOW_PARSE_BAD_HDRLEN] = "bad_hdrlen",
	[CFLOW_PARSE_BAD_LENGTH] = "bad_length",
	[CFLOW_PARSE_BAD_EXT] = "bad_ext",
	[CFLOW_PARSE_BAD_EMBEDDED] = "bad_embedded",
};

const char *
cflow_parse_status_name(enum cflow_parse_status st)
{
	return (unsigned int)st < CFLOW_PARSE_STATUS_MAX ?
		status_names[st] : "unknown";
}

/* As libpcap's pcap_datalink_val_to_name() names them. */
static const char *const link_names[CFLOW_LINK_TYPE_MAX] = {
	[CFLOW_LINK_EN10MB] = "EN10MB",
	[CFLOW_LINK_LINUX_SLL] = "LINUX_SLL",
	[CFLOW_LINK_LINUX_SLL2] = "LINUX_SLL2",
	[CFLOW_LINK_RAW] = "RAW",
	[CFLOW_LINK_IPV4] = "IPV4",
	[CFLOW_LINK_IPV6] = "IPV6",
	[CFLOW_LINK_NULL] = "NULL",
	[CFLOW_LINK_LOOP] = "LOOP",
};

const char *
cflow_link_type_name(enum cflow_link_type link)
{
	return (unsigned int)link < CFLOW_LINK_TYPE_MAX ?
		link_names[link] : "unknown";
}

int
cflow_link_type_from_dlt(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB_VAL:
		return CFLOW_LINK_EN10MB;
	case DLT_LINUX_SLL_VAL:
		return CFLOW_LINK_LINUX_SLL;
	case DLT_LINUX_SLL2_VAL:
		return CFLOW_LINK_LINUX_SLL2;
	case DLT_RAW_VAL:
	case LINKTYPE_RAW_VAL:
		return CFLOW_LINK_RAW;
	case DLT_IPV4_VAL:
		return CFLOW_LINK_IPV4;
	case DLT_IPV6_VAL:
		return CFLOW_LINK_IPV6;
	case DLT_NULL_VAL:
		return CFLOW_LINK_NULL;
#if DLT_LOOP_VAL != LINKTYPE_LOOP_VAL
	case DLT_LOOP_VAL:
#endif
	case LINKTYPE_LOOP_VAL:
		return CFLOW_LINK_LOOP;
	default:
		errno = EINVAL;
		return -EINVAL;
	}
}

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)rd16(p) << 16 | rd16(p + 2);
}

/* ICMP types (RFC 792, 950; RFC 4443). */
#define ICMP_ECHO_REPLY 0
#define ICMP_UNREACH 3
#define ICMP_ECHO 8
#define ICMP_TIME_EXCEEDED 11
#define ICMP_PARAM_PROBLEM 12
#define ICMP_TIMESTAMP 13
#define ICMP_TIMESTAMP_REPLY 14
#define ICMP_INFO 15
#define ICMP_INFO_REPLY 16
#define ICMP_MASK 17
#define ICMP_MASK_REPLY 18
#define ICMPV6_UNREACH 1
#define ICMPV6_PARAM_PROBLEM 4
#define ICMPV6_ECHO 128
#define ICMPV6_ECHO_REPLY 129
#define ICMP_HDR 8          /* type, code, checksum, 4 bytes */
#define QUOTED_L4 8         /* RFC 792: the quoted datagram's first 64 bits */

/* An ICMP query's role (enum cflow_packet_kind's keys): 1 a request, -1
 * a reply, 0 neither. */
static inline int
icmp_query(uint8_t proto, uint8_t type)
{
	if (proto == PROTO_ICMPV6)
		return type == ICMPV6_ECHO ? 1 : type == ICMPV6_ECHO_REPLY ?
			-1 : 0;
	switch (type) {
	case ICMP_ECHO:
	case ICMP_TIMESTAMP:
	case ICMP_INFO:
	case ICMP_MASK:
		return 1;
	case ICMP_ECHO_REPLY:
	case ICMP_TIMESTAMP_REPLY:
	case ICMP_INFO_REPLY:
	case ICMP_MASK_REPLY:
		return -1;
	default:
		return 0;
	}
}

/* An ICMP error that quotes a packet of its own family: ICMPv4's in IPv4,
 * ICMPv6's in IPv6 (CFLOW_KIND_ICMP_ERROR). */
static inline bool
icmp_error(uint8_t proto, uint8_t type, bool v6)
{
	if (v6)
		return proto == PROTO_ICMPV6 && type >= ICMPV6_UNREACH &&
			type <= ICMPV6_PARAM_PROBLEM;
	return proto == PROTO_ICMP && (type == ICMP_UNREACH ||
		type == ICMP_TIME_EXCEEDED || type == ICMP_PARAM_PROBLEM);
}

/*
 * Ports, TCP flags and class from the L4 header at l4 (l4len bytes). A
 * @p quoted header (an ICMP error's) may be cut after QUOTED_L4 bytes:
 * its ports are read, nothing else (no TCP flags).
 */
static enum cflow_parse_status
parse_l4(uint8_t proto, const uint8_t *l4, uint32_t l4len,
		uint16_t *sport, uint16_t *dport, struct cflow_packet *pkt,
		bool quoted)
{
	uint32_t need;
	int query;

	*sport = 0;
	*dport = 0;
	switch (proto) {
	case PROTO_TCP:
		pkt->proto_class = CFLOW_CLASS_TCP;
		if (quoted) {
			need = QUOTED_L4;
			break;
		}
		if (l4len < TCP_MIN_HDR)
			return CFLOW_PARSE_TRUNC_L4;
		if ((l4[12] >> 4) < 5)
			return CFLOW_PARSE_BAD_HDRLEN;
		pkt->tcp_flags = l4[13];
		need = 4;
		break;
	case PROTO_UDP:
	case PROTO_UDPLITE:
		pkt->proto_class = CFLOW_CLASS_UDP;
		need = 8;
		break;
	case PROTO_SCTP:
		pkt->proto_class = CFLOW_CLASS_OTHER;
		need = quoted ? QUOTED_L4 : 12;
		break;
	case PROTO_ICMP:
	case PROTO_ICMPV6:
		/* A query is keyed by its identifier on the requester's
		 * side (struct cflow_key), anything else by the addresses;
		 * the header must be there. */
		pkt->proto_class = CFLOW_CLASS_ICMP;
		if (l4len < (quoted ? QUOTED_L4 : 4))
			return CFLOW_PARSE_TRUNC_L4;
		pkt->icmp_type = l4[0];
		pkt->icmp_code = l4[1];
		query = icmp_query(proto, l4[0]);
		if (query == 0)
			return CFLOW_PARSE_OK;
		if (l4len < ICMP_HDR)
			return CFLOW_PARSE_TRUNC_L4;
		if (query > 0)
			*sport = rd16(l4 + 4);
		else
			*dport = rd16(l4 + 4);
		return CFLOW_PARSE_OK;
	default:
		pkt->proto_class = CFLOW_CLASS_OTHER;
		return CFLOW_PARSE_OK;
	}
	if (l4len < need)
		return CFLOW_PARSE_TRUNC_L4;
	*sport = rd16(l4);
	*dport = rd16(l4 + 2);
	return CFLOW_PARSE_OK;
}

/* cflow_key_fill() for IPv4 (stored IPv4-mapped), without building
 * 16-byte addresses first. */
static inline bool
key_fill_v4(struct cflow_key *k, const uint8_t *src, const uint8_t *dst,
		uint16_t sport, uint16_t dport, uint8_t proto)
{
	uint32_t s, d, xa;
	uint16_t xp;
	bool swap;

	memcpy(&s, src, 4);
	memcpy(&d, dst, 4);
	/* Without branches: which endpoint is lower is as good as random
	 * from packet to packet, a branch on it mispredicted half the time
	 * (issue 29, round 2). */
	swap = (__builtin_bswap32(s) > __builtin_bswap32(d)) |
		((s == d) & (sport > dport));
	xa = (s ^ d) & (0u - (uint32_t)swap);
	xp = (uint16_t)((sport ^ dport) & (0u - (uint32_t)swap));
	s ^= xa;
	d ^= xa;
	sport = (uint16_t)(sport ^ xp);
	dport = (uint16_t)(dport ^ xp);
	k->addr_lo[10] = k->addr_lo[11] = 0xff;
	k->addr_hi[10] = k->addr_hi[11] = 0xff;
	memcpy(k->addr_lo + 12, &s, 4);
	memcpy(k->addr_hi + 12, &d, 4);
	k->port_lo = sport;
	k->port_hi = dport;
	k->proto = proto;
	k->family = 4;
	return swap;
}

/*
 * A packet that is not trackable but whose IPv4 header at p is sane:
 * report its addresses only (the key is zero but for them and the family),
 * and return st.
 */
static enum cflow_parse_status
addrs_v4(const uint8_t *p, enum cflow_parse_status st,
		struct cflow_packet *pkt)
{
	pkt->tcp_flags = 0;
	pkt->proto_class = 0;
	pkt->icmp_type = 0;
	pkt->icmp_code = 0;
	pkt->kind = 0;
	pkt->reversed = key_fill_v4(&pkt->key, p + 12, p + 16, 0, 0, 0);
	pkt->has_addrs = true;
	return st;
}

/* The same for a sane IPv6 fixed header at p. */
static enum cflow_parse_status
addrs_v6(const uint8_t *p, enum cflow_parse_status st,
		struct cflow_packet *pkt)
{
	pkt->tcp_flags = 0;
	pkt->proto_class = 0;
	pkt->icmp_type = 0;
	pkt->icmp_code = 0;
	pkt->kind = 0;
	pkt->reversed = cflow_key_fill(&pkt->key, 6, p + 8, p + 24, 0, 0,
		0);
	pkt->has_addrs = true;
	return st;
}

static int decap_tunnel(uint8_t proto, const uint8_t *l4, uint32_t l4len,
		uint16_t dport, unsigned int decap,
		enum cflow_parse_status *st, struct cflow_packet *pkt);

/* The decapsulation a parse asks for: none without params (an inner
 * packet is parsed so). */
static inline unsigned int
decap_of(const struct cflow_parse_params *pp)
{
	return pp != NULL ? pp->decap & CFLOW_DECAP_ALL : 0;
}

/*
 * A decapsulated flow bound to its tunnel (tunnel_bind): key.tunnel
 * becomes a keyed digest of the tunnel kind, the outer addresses (of
 * @p alen bytes) on the sides of the inner key's endpoints, lower first,
 * and, with vlan_in_key, the tunnel's id; never 0 (a flow outside any
 * tunnel).
 */
static void
bind_tunnel(struct cflow_packet *pkt, const uint8_t *src, const uint8_t *dst,
		unsigned int alen, const struct cflow_parse_params *pp)
{
	struct {
		uint8_t lo[16];
		uint8_t hi[16];
		uint32_t id;
		uint8_t kind;
		uint8_t family;
		uint8_t pad[2];
	} b;
	uint32_t d;

	memset(&b, 0, sizeof(b));
	/* reversed: the inner source is the key's higher endpoint, so is
	 * the outer source's side */
	memcpy(b.lo, pkt->reversed ? dst : src, alen);
	memcpy(b.hi, pkt->reversed ? src : dst, alen);
	b.id = pp->vlan_in_key ? pkt->key.tunnel : 0;
	b.kind = pkt->tunnel;
	b.family = (uint8_t)alen;
	d = (uint32_t)XXH3_64bits_withSeed(&b, sizeof(b), pp->tunnel_seed);
	pkt->key.tunnel = d != 0 ? d : 1;
}

static enum cflow_parse_status parse_ipv4(const uint8_t *p, uint32_t len,
		const struct cflow_parse_params *pp, struct cflow_packet *pkt,
		bool quoted, struct cflow_frag_id *fi);
static enum cflow_parse_status parse_ipv6(const uint8_t *p, uint32_t len,
		const struct cflow_parse_params *pp, struct cflow_packet *pkt,
		bool quoted, struct cflow_frag_id *fi);

/* What an ICMP error's quoted packet comes to (parse_icmp_error()). */
enum quoted {
	QUOTED_FLOW,        /* a packet of a flow: pkt is the error's now */
	QUOTED_UNRELATED,   /* of no flow: CFLOW_KIND_ICMP_UNRELATED */
	QUOTED_BAD,         /* cut short or not sane */
};

/*
 * An ICMP error (@p l4, @p l4len bytes from its ICMP header), sent from
 * @p src_out to @p dst (the outer IP header's, 4 or 16 bytes by @p v6):
 * the packet it
 * quotes, parsed as a packet of its family would be (quoted: 8 bytes of
 * its L4 header suffice, no tunnel is opened, no error within is parsed).
 * For QUOTED_FLOW, @p pkt takes the quoted packet's key and class and
 * the error's direction (enum cflow_packet_kind).
 */
static enum quoted
parse_icmp_error(const uint8_t *l4, uint32_t l4len, const uint8_t *src_out,
		const uint8_t *dst, bool v6, struct cflow_packet *pkt)
{
	struct cflow_packet q;
	enum cflow_parse_status st;
	const uint8_t *src;

	if (l4len < ICMP_HDR)
		return QUOTED_BAD;
	memset(&q, 0, sizeof(q));
	st = v6 ? parse_ipv6(l4 + ICMP_HDR, l4len - ICMP_HDR, NULL, &q, true,
			NULL) :
		parse_ipv4(l4 + ICMP_HDR, l4len - ICMP_HDR, NULL, &q, true,
			NULL);
	if (st == CFLOW_PARSE_FRAGMENT ||
			(st == CFLOW_PARSE_OK && q.kind != CFLOW_KIND_FLOW))
		return QUOTED_UNRELATED;
	if (st != CFLOW_PARSE_OK)
		return QUOTED_BAD;
	/* An error goes back to the quoted packet's source (conntrack
	 * refuses one whose outer destination is not it, as Linux 5.1 does:
	 * "outer daddr not trustworthy"). */
	src = q.reversed ? q.key.addr_hi : q.key.addr_lo;
	if (memcmp(v6 ? src : src + 12, dst, v6 ? 16 : 4) != 0)
		return QUOTED_UNRELATED;
	pkt->key = q.key;
	pkt->reversed = !q.reversed;
	pkt->proto_class = q.proto_class;
	pkt->tcp_flags = 0;
	pkt->kind = CFLOW_KIND_ICMP_ERROR;
	if (v6) {
		memcpy(pkt->err_src, src_out, 16);
	} else {
		memset(pkt->err_src, 0, 10);
		pkt->err_src[10] = pkt->err_src[11] = 0xff;
		memcpy(pkt->err_src + 12, src_out, 4);
	}
	return QUOTED_FLOW;
}

/*
 * The L4 header of an IP packet (@p proto at @p l4, @p l4len bytes):
 * its ports, or an ICMP error's quoted packet (see parse_icmp_error();
 * within a @p quoted packet an error is only marked unrelated). Returns
 * the status; with CFLOW_PARSE_OK, *done is set if @p pkt is filled (an
 * error about a flow), else *sport, *dport are the key's and pkt->kind
 * says whether it is an error of no flow.
 */
static enum cflow_parse_status
parse_transport(uint8_t proto, const uint8_t *l4, uint32_t l4len,
		const uint8_t *src, const uint8_t *dst, bool v6, bool quoted,
		uint16_t *sport, uint16_t *dport, struct cflow_packet *pkt,
		bool *done)
{
	enum cflow_parse_status st;

	*done = false;
	st = parse_l4(proto, l4, l4len, sport, dport, pkt, quoted);
	if (st != CFLOW_PARSE_OK || !icmp_error(proto, pkt->icmp_type, v6))
		return st;
	if (quoted) {
		pkt->kind = CFLOW_KIND_ICMP_UNRELATED;
		return CFLOW_PARSE_OK;
	}
	switch (parse_icmp_error(l4, l4len, src, dst, v6, pkt)) {
	case QUOTED_FLOW:
		*done = true;
		return CFLOW_PARSE_OK;
	case QUOTED_UNRELATED:
		pkt->kind = CFLOW_KIND_ICMP_UNRELATED;
		return CFLOW_PARSE_OK;
	default:
		return CFLOW_PARSE_BAD_EMBEDDED;
	}
}

/* The fragment of @p fi's datagram: IPv4's or IPv6's addresses (@p src,
 * @p dst, 4 or 16 bytes by @p family). */
static void
frag_fill(struct cflow_frag_id *fi, uint8_t family, const uint8_t *src,
		const uint8_t *dst, uint32_t id, uint8_t proto, uint16_t offset,
		bool more)
{
	memset(fi, 0, sizeof(*fi));
	if (family == 4) {
		fi->src[10] = fi->src[11] = 0xff;
		fi->dst[10] = fi->dst[11] = 0xff;
		memcpy(fi->src + 12, src, 4);
		memcpy(fi->dst + 12, dst, 4);
	} else {
		memcpy(fi->src, src, 16);
		memcpy(fi->dst, dst, 16);
	}
	fi->id = id;
	fi->proto = proto;
	fi->family = family;
	fi->offset = offset;
	fi->more = more;
}

static enum cflow_parse_status
parse_ipv4(const uint8_t *p, uint32_t len,
		const struct cflow_parse_params *pp, struct cflow_packet *pkt,
		bool quoted, struct cflow_frag_id *fi)
{
	unsigned int decap = decap_of(pp);
	uint32_t ihl, total;
	uint16_t sport, dport, frag;
	enum cflow_parse_status st;
	bool done;

	if (len < 1)
		return CFLOW_PARSE_TRUNC_L3;
	if (p[0] >> 4 != 4)
		return CFLOW_PARSE_BAD_VERSION;
	if (len < IPV4_MIN_HDR)
		return CFLOW_PARSE_TRUNC_L3;
	ihl = (uint32_t)(p[0] & 0xf) * 4;
	if (ihl < IPV4_MIN_HDR)
		return CFLOW_PARSE_BAD_HDRLEN;
	if (len < ihl)
		return CFLOW_PARSE_TRUNC_L3;
	/* The header is whole: the addresses are known from here on. */
	total = rd16(p + 2);
	if (total < ihl)
		return addrs_v4(p, CFLOW_PARSE_BAD_LENGTH, pkt);
	if (total < len)
		len = total; /* Ethernet padding */
	frag = rd16(p + 6);
	if (fi != NULL && (frag & 0x3fff) != 0)
		frag_fill(fi, 4, p + 12, p + 16, rd16(p + 4), p[9],
			frag & 0x1fff, (frag & 0x2000) != 0);
	if ((frag & 0x1fff) != 0)
		return addrs_v4(p, CFLOW_PARSE_FRAGMENT, pkt);
	st = parse_transport(p[9], p + ihl, len - ihl, p + 12, p + 16, false,
		quoted, &sport, &dport, pkt, &done);
	if (st != CFLOW_PARSE_OK)
		return addrs_v4(p, st, pkt);
	if (decap != 0 && !done) {
		int r = decap_tunnel(p[9], p + ihl, len - ihl, dport, decap,
				&st, pkt);

		if (r == 0)
			return addrs_v4(p, st, pkt);
		if (r > 0) {
			if (st == CFLOW_PARSE_OK && pp->tunnel_bind)
				bind_tunnel(pkt, p + 12, p + 16, 4, pp);
			if (st == CFLOW_PARSE_OK)
				pkt->ip_len = total;
			return st;
		}
	}
	if (!done)
		pkt->reversed = key_fill_v4(&pkt->key, p + 12, p + 16, sport,
			dport, p[9]);
	pkt->has_addrs = true;
	pkt->hop_limit = p[8];
	pkt->ip_len = total;
	pkt->frag_first = (frag & 0x2000) != 0;
	return CFLOW_PARSE_OK;
}

static enum cflow_parse_status
parse_ipv6(const uint8_t *p, uint32_t len,
		const struct cflow_parse_params *pp, struct cflow_packet *pkt,
		bool quoted, struct cflow_frag_id *fi)
{
	unsigned int decap = decap_of(pp);
	uint32_t off = IPV6_HDR, payload, ip_len;
	uint16_t sport, dport;
	enum cflow_parse_status st;
	bool done, first = false;
	uint8_t nh;

	if (len < 1)
		return CFLOW_PARSE_TRUNC_L3;
	if (p[0] >> 4 != 6)
		return CFLOW_PARSE_BAD_VERSION;
	if (len < IPV6_HDR)
		return CFLOW_PARSE_TRUNC_L3;
	/* The fixed header is whole: the addresses are known from here on. */
	payload = rd16(p + 4);
	/* 0 is a jumbogram (RFC 2675): the capture bounds it. */
	if (payload != 0 && IPV6_HDR + payload < len)
		len = IPV6_HDR + payload;
	/* A jumbogram's length is in a hop-by-hop option: unknown here
	 * (and the capture's length would make a cut parse differ). */
	ip_len = payload != 0 ? IPV6_HDR + payload : 0;
	nh = p[6];
	for (unsigned int ext = 0;; ext++) {
		uint32_t hlen;

		if (nh != PROTO_HOPOPTS && nh != PROTO_ROUTING &&
				nh != PROTO_DSTOPTS && nh != PROTO_FRAGMENT &&
				nh != PROTO_AH)
			break;
		if (ext == CFLOW_PARSE_IPV6_EXT_MAX)
			return addrs_v6(p, CFLOW_PARSE_BAD_EXT, pkt);
		if (len < off + 8) /* every extension is at least 8 bytes */
			return addrs_v6(p, CFLOW_PARSE_TRUNC_L3, pkt);
		if (nh == PROTO_FRAGMENT) {
			uint16_t fo = rd16(p + off + 2);

			/* the first fragment header names the datagram */
			if (fi != NULL && fi->family == 0 &&
					(fo & 0xfff9) != 0)
				frag_fill(fi, 6, p + 8, p + 24,
					rd32(p + off + 4), p[off], fo >> 3,
					(fo & 1) != 0);
			if ((fo & 0xfff8) != 0)
				return addrs_v6(p, CFLOW_PARSE_FRAGMENT, pkt);
			first |= (fo & 1) != 0;
			hlen = 8;
		} else if (nh == PROTO_AH) {
			hlen = ((uint32_t)p[off + 1] + 2) * 4;
		} else {
			hlen = ((uint32_t)p[off + 1] + 1) * 8;
		}
		if (len < off + hlen)
			return addrs_v6(p, CFLOW_PARSE_TRUNC_L3, pkt);
		nh = p[off];
		off += hlen;
	}
	st = parse_transport(nh, p + off, len - off, p + 8, p + 24, true,
		quoted, &sport, &dport, pkt, &done);
	if (st != CFLOW_PARSE_OK)
		return addrs_v6(p, st, pkt);
	if (decap != 0 && !done) {
		int r = decap_tunnel(nh, p + off, len - off, dport, decap,
				&st, pkt);

		if (r == 0)
			return addrs_v6(p, st, pkt);
		if (r > 0) {
			if (st == CFLOW_PARSE_OK && pp->tunnel_bind)
				bind_tunnel(pkt, p + 8, p + 24, 16, pp);
			if (st == CFLOW_PARSE_OK)
				pkt->ip_len = ip_len;
			return st;
		}
	}
	if (!done)
		pkt->reversed = cflow_key_fill(&pkt->key, 6, p + 8, p + 24,
			sport, dport, nh);
	pkt->has_addrs = true;
	pkt->hop_limit = p[7];
	pkt->ip_len = ip_len;
	pkt->frag_first = first;
	return CFLOW_PARSE_OK;
}

static inline bool
is_vlan(uint16_t type)
{
	return type == ETHER_TYPE_VLAN || type == ETHER_TYPE_QINQ ||
		type == ETHER_TYPE_QINQ_OLD;
}

/*
 * A frame with more than CFLOW_PARSE_VLAN_MAX tags is not tracked (non-IP,
 * as ever), but its addresses are reported if the IP header behind at
 * most CFLOW_PARSE_VLAN_ADDRS_MAX tags is sane, as parse_ipv4() and
 * parse_ipv6() judge it. off is past the tags read so far, type the
 * ethertype or tag type found there.
 */
static enum cflow_parse_status
deep_vlan_addrs(const uint8_t *buf, uint32_t len, uint32_t off,
		unsigned int tags, uint16_t type, struct cflow_packet *pkt)
{
	const uint8_t *p;
	uint32_t ihl;

	for (; is_vlan(type); tags++) {
		if (tags == CFLOW_PARSE_VLAN_ADDRS_MAX ||
				len < off + VLAN_TAG_LEN)
			return CFLOW_PARSE_NON_IP;
		type = rd16(buf + off + 2);
		off += VLAN_TAG_LEN;
	}
	pkt->ethertype = type;
	p = buf + off;
	len -= off;
	if (type == ETHER_TYPE_IPV4 && len >= IPV4_MIN_HDR && p[0] >> 4 == 4) {
		ihl = (uint32_t)(p[0] & 0xf) * 4;
		if (ihl >= IPV4_MIN_HDR && len >= ihl)
			return addrs_v4(p, CFLOW_PARSE_NON_IP, pkt);
	} else if (type == ETHER_TYPE_IPV6 && len >= IPV6_HDR &&
			p[0] >> 4 == 6) {
		return addrs_v6(p, CFLOW_PARSE_NON_IP, pkt);
	}
	return CFLOW_PARSE_NON_IP;
}

/* The ethertype of a BSD address family; 0 for one that is not IP. */
static inline uint16_t
af_type(uint32_t af)
{
	if (af == BSD_AF_INET)
		return ETHER_TYPE_IPV4;
	if (af == BSD_AF_INET6_BSD || af == BSD_AF_INET6_FREEBSD ||
			af == BSD_AF_INET6_DARWIN)
		return ETHER_TYPE_IPV6;
	return 0;
}

/*
 * The link header of a frame: where what it carries starts (*off) and
 * its ethertype (*type), or why the frame stops there. A family or
 * version that is not IP leaves *type 0.
 */
static inline enum cflow_parse_status
parse_link(const uint8_t *buf, uint32_t len, enum cflow_link_type link,
		uint32_t *off, uint16_t *type)
{
	switch (link) {
	case CFLOW_LINK_EN10MB:
		if (len < ETHER_HDR_LEN)
			return CFLOW_PARSE_TRUNC_L2;
		*type = rd16(buf + 12);
		*off = ETHER_HDR_LEN;
		return CFLOW_PARSE_OK;
	case CFLOW_LINK_LINUX_SLL:
		if (len < SLL_HDR_LEN)
			return CFLOW_PARSE_TRUNC_L2;
		*type = rd16(buf + SLL_PROTO_OFF);
		*off = SLL_HDR_LEN;
		return CFLOW_PARSE_OK;
	case CFLOW_LINK_LINUX_SLL2:
		if (len < SLL2_HDR_LEN)
			return CFLOW_PARSE_TRUNC_L2;
		*type = rd16(buf + SLL2_PROTO_OFF);
		*off = SLL2_HDR_LEN;
		return CFLOW_PARSE_OK;
	case CFLOW_LINK_RAW:
		/* No header: the version nibble tells IPv4 from IPv6. */
		*off = 0;
		if (len < 1)
			return CFLOW_PARSE_TRUNC_L3;
		if (buf[0] >> 4 == 4)
			*type = ETHER_TYPE_IPV4;
		else if (buf[0] >> 4 == 6)
			*type = ETHER_TYPE_IPV6;
		else
			return CFLOW_PARSE_BAD_VERSION;
		return CFLOW_PARSE_OK;
	case CFLOW_LINK_IPV4:
		*off = 0;
		*type = ETHER_TYPE_IPV4;
		return CFLOW_PARSE_OK;
	case CFLOW_LINK_IPV6:
		*off = 0;
		*type = ETHER_TYPE_IPV6;
		return CFLOW_PARSE_OK;
	case CFLOW_LINK_NULL:
	case CFLOW_LINK_LOOP:
		if (len < NULL_HDR_LEN)
			return CFLOW_PARSE_TRUNC_L2;
		*off = NULL_HDR_LEN;
		/* Every family is below 256: the byte order is the one
		 * whose three high bytes are zero (never both: the family
		 * would be 0). DLT_LOOP is big-endian only. */
		if (buf[0] == 0 && buf[1] == 0 && buf[2] == 0)
			*type = af_type(buf[3]);
		else if (link == CFLOW_LINK_NULL && buf[1] == 0 &&
				buf[2] == 0 && buf[3] == 0)
			*type = af_type(buf[0]);
		return *type != 0 ? CFLOW_PARSE_OK : CFLOW_PARSE_NON_IP;
	default:
		return CFLOW_PARSE_NON_IP;
	}
}

/*
 * What follows a link header or an inner Ethernet header at buf + off:
 * up to CFLOW_PARSE_VLAN_MAX tags (their ids in *vlan), then IPv4 or
 * IPv6, decapsulating the tunnels @p pp asks for (none if NULL).
 */
static enum cflow_parse_status
parse_l3(const uint8_t *buf, uint32_t len, uint32_t off, uint16_t type,
		const struct cflow_parse_params *pp, uint32_t *vlan,
		struct cflow_packet *pkt, struct cflow_frag_id *fi)
{
	for (unsigned int tags = 0; is_vlan(type); tags++) {
		if (tags == CFLOW_PARSE_VLAN_MAX)
			return deep_vlan_addrs(buf, len, off, tags, type, pkt);
		if (len < off + VLAN_TAG_LEN)
			return CFLOW_PARSE_TRUNC_L2;
		*vlan = *vlan << 12 | (rd16(buf + off) & 0xfff);
		type = rd16(buf + off + 2);
		off += VLAN_TAG_LEN;
	}
	pkt->ethertype = type;
	if (type == ETHER_TYPE_IPV4)
		return parse_ipv4(buf + off, len - off, pp, pkt, false, fi);
	if (type == ETHER_TYPE_IPV6)
		return parse_ipv6(buf + off, len - off, pp, pkt, false, fi);
	return CFLOW_PARSE_NON_IP;
}

/*
 * The inner packet of a tunnel, at p (len bytes), of the given type:
 * ETHER_TYPE_TEB for an Ethernet frame, ETHER_TYPE_IPV4 or
 * ETHER_TYPE_IPV6, or 0 for IP of either version by its version nibble
 * (GTP-U). Parsed without decapsulation, into a zeroed pkt: the outer
 * ethertype is kept.
 */
static enum cflow_parse_status
parse_inner(const uint8_t *p, uint32_t len, uint16_t type,
		struct cflow_packet *pkt)
{
	uint16_t outer_type = pkt->ethertype;
	enum cflow_parse_status st;
	uint32_t vlan = 0;

	memset(pkt, 0, sizeof(*pkt));
	if (type == ETHER_TYPE_TEB) {
		if (len < ETHER_HDR_LEN)
			st = CFLOW_PARSE_TRUNC_L2;
		else
			st = parse_l3(p, len, ETHER_HDR_LEN, rd16(p + 12),
					NULL, &vlan, pkt, NULL);
	} else if (type == 0 && len < 1) {
		st = CFLOW_PARSE_TRUNC_L3;
	} else if (type == 0 && p[0] >> 4 != 4 && p[0] >> 4 != 6) {
		st = CFLOW_PARSE_BAD_VERSION;
	} else if (type == ETHER_TYPE_IPV4 || (type == 0 && p[0] >> 4 == 4)) {
		st = parse_ipv4(p, len, NULL, pkt, false, NULL);
	} else {
		st = parse_ipv6(p, len, NULL, pkt, false, NULL);
	}
	pkt->ethertype = outer_type;
	pkt->frag_first = false; /* a tunnel's fragments are not followed */
	return st;
}

static inline bool
inner_type_ok(uint16_t type)
{
	return type == ETHER_TYPE_TEB || type == ETHER_TYPE_IPV4 ||
		type == ETHER_TYPE_IPV6;
}

/*
 * A tunnel header at l4 (the outer L4 header, l4len bytes up to the end
 * of the outer IP packet; proto and dport parsed already), if decap asks
 * for its kind. Returns -1 if the packet is not decapsulated (keyed as
 * the outer packet); 0 if the tunnel header is cut short or broken, *st
 * saying how (the caller reports the outer addresses); 1 if decapsulated,
 * *st and pkt then the inner packet's.
 */
static int
decap_tunnel(uint8_t proto, const uint8_t *l4, uint32_t l4len,
		uint16_t dport, unsigned int decap,
		enum cflow_parse_status *st, struct cflow_packet *pkt)
{
	const uint8_t *h;
	uint32_t hlen, hmax;
	uint16_t type;

	if (proto == PROTO_GRE && (decap & CFLOW_DECAP_GRE)) {
		uint16_t flags;

		if (l4len < GRE_HDR) {
			*st = CFLOW_PARSE_TRUNC_L4;
			return 0;
		}
		flags = rd16(l4);
		type = rd16(l4 + 2);
		/* Version 0, no routing, no flags but C, K and S. */
		if ((flags & ~(GRE_FLAG_C | GRE_FLAG_K | GRE_FLAG_S)) != 0 ||
				!inner_type_ok(type))
			return -1;
		hlen = GRE_HDR + ((flags & GRE_FLAG_C) ? 4 : 0) +
			((flags & GRE_FLAG_K) ? 4 : 0) +
			((flags & GRE_FLAG_S) ? 4 : 0);
		if (l4len < hlen) {
			*st = CFLOW_PARSE_TRUNC_L4;
			return 0;
		}
		*st = parse_inner(l4 + hlen, l4len - hlen, type, pkt);
		pkt->tunnel = CFLOW_DECAP_GRE;
		if (flags & GRE_FLAG_K)
			pkt->key.tunnel = rd32(l4 + GRE_HDR +
				((flags & GRE_FLAG_C) ? 4 : 0));
		return 1;
	}
	if (proto != PROTO_UDP)
		return -1;
	h = l4 + UDP_HDR;
	hmax = l4len - UDP_HDR; /* parse_l4() checked the UDP header */
	if (dport == VXLAN_PORT && (decap & CFLOW_DECAP_VXLAN)) {
		if (hmax < VXLAN_HDR) {
			*st = CFLOW_PARSE_TRUNC_L4;
			return 0;
		}
		if (!(h[0] & VXLAN_FLAG_I))
			return -1;
		*st = parse_inner(h + VXLAN_HDR, hmax - VXLAN_HDR,
				ETHER_TYPE_TEB, pkt);
		pkt->tunnel = CFLOW_DECAP_VXLAN;
		pkt->key.tunnel = rd32(h + 4) >> 8; /* the VNI */
		return 1;
	}
	if (dport == GENEVE_PORT && (decap & CFLOW_DECAP_GENEVE)) {
		if (hmax < GENEVE_HDR) {
			*st = CFLOW_PARSE_TRUNC_L4;
			return 0;
		}
		type = rd16(h + 2);
		if (h[0] >> 6 != 0 || !inner_type_ok(type))
			return -1;
		hlen = GENEVE_HDR + (uint32_t)(h[0] & 0x3f) * 4;
		if (hmax < hlen) {
			*st = CFLOW_PARSE_TRUNC_L4;
			return 0;
		}
		*st = parse_inner(h + hlen, hmax - hlen, type, pkt);
		pkt->tunnel = CFLOW_DECAP_GENEVE;
		pkt->key.tunnel = rd32(h + 4) >> 8; /* the VNI */
		return 1;
	}
	if (dport == GTPU_PORT && (decap & CFLOW_DECAP_GTPU)) {
		uint32_t end;
		uint8_t next;

		if (hmax < GTPU_HDR) {
			*st = CFLOW_PARSE_TRUNC_L4;
			return 0;
		}
		/* Version 1, protocol type GTP (not GTP'), a G-PDU. */
		if ((h[0] & 0xf0) != 0x30 || h[1] != GTPU_GPDU)
			return -1;
		/* The length field counts what follows the first 8 bytes:
		 * it only shortens what is parsed, as IP lengths do. */
		end = GTPU_HDR + rd16(h + 2);
		if (end < hmax)
			hmax = end;
		hlen = GTPU_HDR;
		if (h[0] & 0x07) { /* E, S or PN: the optional fields */
			hlen += GTPU_OPT;
			if (hmax < hlen) {
				*st = CFLOW_PARSE_TRUNC_L4;
				return 0;
			}
			next = (h[0] & 0x04) ? h[11] : 0;
			for (unsigned int ext = 0; next != 0; ext++) {
				uint32_t elen;

				if (ext == CFLOW_PARSE_GTPU_EXT_MAX) {
					*st = CFLOW_PARSE_BAD_EXT;
					return 0;
				}
				if (hmax < hlen + 1) {
					*st = CFLOW_PARSE_TRUNC_L4;
					return 0;
				}
				elen = (uint32_t)h[hlen] * 4;
				if (elen == 0) {
					*st = CFLOW_PARSE_BAD_HDRLEN;
					return 0;
				}
				if (hmax < hlen + elen) {
					*st = CFLOW_PARSE_TRUNC_L4;
					return 0;
				}
				next = h[hlen + elen - 1];
				hlen += elen;
			}
		}
		*st = parse_inner(h + hlen, hmax - hlen, 0, pkt);
		pkt->tunnel = CFLOW_DECAP_GTPU;
		pkt->key.tunnel = rd32(h + 4); /* the TEID */
		return 1;
	}
	return -1;
}

/*
 * The common frame in one pass: Ethernet without tags, IPv4 without
 * options, not a fragment, TCP or UDP with its header whole (IPv6:
 * parse_fast_v6()). What it
 * fills is what the general path fills for such a frame (the unit test
 * test_parse_fast_equals_general and fuzz_parse check both on the same
 * frames); anything else returns false for the general path.
 */
/* The fast paths' L4: TCP or UDP, its header whole in @p l4len bytes,
 * as parse_l4() takes it; false for anything else. */
static inline bool
parse_fast_l4(uint8_t proto, const uint8_t *l4, uint32_t l4len,
		struct cflow_packet *pkt)
{
	bool tcp = proto == PROTO_TCP;
	uint8_t off, flags;

	/* TCP and UDP without a branch on which: mixed at random, such a
	 * branch is mispredicted about every other packet (issue 29,
	 * round 2). A 20-byte TCP header is where the frame is longer than
	 * the UDP header, so its two bytes are read first when there. */
	if ((!tcp && proto != PROTO_UDP) || l4len < 8)
		return false;
	off = l4len >= TCP_MIN_HDR ? l4[12] : 0;
	flags = l4len >= TCP_MIN_HDR ? l4[13] : 0;
	if (tcp & ((l4len < TCP_MIN_HDR) | ((off >> 4) < 5)))
		return false;
	pkt->tcp_flags = (uint8_t)(flags & (0u - (unsigned int)tcp));
	pkt->proto_class = tcp ? CFLOW_CLASS_TCP : CFLOW_CLASS_UDP;
	return true;
}

static inline bool
parse_fast_v4(const uint8_t *buf, uint32_t len, struct cflow_packet *pkt)
{
	const uint8_t *p = buf + ETHER_HDR_LEN, *l4 = p + IPV4_MIN_HDR;
	uint32_t total, l4len;
	uint8_t proto;

	if (len < ETHER_HDR_LEN + IPV4_MIN_HDR + 8 ||
			rd16(buf + 12) != ETHER_TYPE_IPV4 || p[0] != 0x45)
		return false;
	total = rd16(p + 2);
	/* fragments, the first one too (frag_first), take the general path */
	if (total < IPV4_MIN_HDR || (rd16(p + 6) & 0x3fff) != 0)
		return false;
	l4len = (total < len - ETHER_HDR_LEN ? total : len - ETHER_HDR_LEN) -
		IPV4_MIN_HDR;
	proto = p[9];
	if (!parse_fast_l4(proto, l4, l4len, pkt))
		return false;
	pkt->ethertype = ETHER_TYPE_IPV4;
	pkt->reversed = key_fill_v4(&pkt->key, p + 12, p + 16, rd16(l4),
		rd16(l4 + 2), proto);
	pkt->has_addrs = true;
	pkt->hop_limit = p[8];
	pkt->ip_len = total;
	return true;
}

/*
 * The same for IPv6: Ethernet without tags, the fixed header followed by
 * TCP or UDP (no extension header), the L4 header whole within the
 * payload length (0, a jumbogram: the frame's).
 */
static inline bool
parse_fast_v6(const uint8_t *buf, uint32_t len, struct cflow_packet *pkt)
{
	const uint8_t *p = buf + ETHER_HDR_LEN, *l4 = p + IPV6_HDR;
	uint32_t payload, l4len;
	uint8_t proto;

	if (len < ETHER_HDR_LEN + IPV6_HDR + 8 ||
			rd16(buf + 12) != ETHER_TYPE_IPV6 || p[0] >> 4 != 6)
		return false;
	payload = rd16(p + 4);
	l4len = len - ETHER_HDR_LEN - IPV6_HDR;
	if (payload != 0 && payload < l4len)
		l4len = payload;
	proto = p[6];
	if (!parse_fast_l4(proto, l4, l4len, pkt))
		return false;
	pkt->ethertype = ETHER_TYPE_IPV6;
	pkt->reversed = cflow_key_fill(&pkt->key, 6, p + 8, p + 24, rd16(l4),
		rd16(l4 + 2), proto);
	pkt->has_addrs = true;
	pkt->hop_limit = p[7];
	/* a jumbogram's length is in an option: unknown, as the general
	 * path says */
	pkt->ip_len = payload != 0 ? IPV6_HDR + payload : 0;
	return true;
}

static enum cflow_parse_status parse_general(const uint8_t *buf,
		uint32_t len, const struct cflow_parse_params *params,
		struct cflow_packet *pkt, struct cflow_frag_id *fi);

/* Every packet starts with its result zeroed: gcc (12, x86-64) zeroes up
 * to 80 bytes in a few vector stores and more with a rep stosq, whose
 * start-up cost was 20-25 cycles a packet (docs/benchmarks.md, issue 29
 * round 2). */
_Static_assert(sizeof(struct cflow_packet) <= 80,
	"struct cflow_packet: the parser's memset becomes a rep stosq");

/* Whether @p params let the fast paths take a frame. */
static inline bool
fast_ok(const struct cflow_parse_params *params)
{
	return params == NULL || (params->link_type == CFLOW_LINK_EN10MB &&
		(params->decap & CFLOW_DECAP_ALL) == 0);
}

/* cflow_parse(), with fast_ok(@p params) in @p fast. */
static inline enum cflow_parse_status
parse_one(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params, bool fast,
		struct cflow_packet *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	if (fast && (parse_fast_v4(buf, len, pkt) ||
			parse_fast_v6(buf, len, pkt)))
		return CFLOW_PARSE_OK;
	/* the fast path writes nothing unless it takes the frame */
	return parse_general(buf, len, params, pkt, NULL);
}

enum cflow_parse_status
cflow_parse(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt)
{
	return parse_one(buf, len, params, fast_ok(params), pkt);
}

/* One call a burst, the fast path inlined in its loop: a call a packet
 * and its parameter tests cost 4 cycles of
 * bench_pipeline's 123 at 1 K flows (issue 29, round 3). */
void
cflow_parse_burst(const struct cflow_input *in, unsigned int n,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkts, enum cflow_parse_status *status)
{
	bool fast = fast_ok(params);

	for (unsigned int k = 0; k < n; k++)
		status[k] = parse_one(in[k].data, in[k].len, params, fast,
			&pkts[k]);
}

enum cflow_parse_status
cflow_parse_general(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	return parse_general(buf, len, params, pkt, NULL);
}

enum cflow_parse_status
cflow_parse_frag(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt, struct cflow_frag_id *fi)
{
	enum cflow_parse_status st;

	memset(pkt, 0, sizeof(*pkt));
	memset(fi, 0, sizeof(*fi));
	st = parse_general(buf, len, params, pkt, fi);
	/* A tunnel's fragment (its outer one: the inner parse has none) or
	 * a fragment that did not come to either status is not named. */
	if (pkt->tunnel != 0 || !(st == CFLOW_PARSE_FRAGMENT ||
			(st == CFLOW_PARSE_OK && pkt->frag_first)))
		fi->family = 0;
	return st;
}

/* Every frame, into a zeroed @p pkt; @p fi (or NULL) names a fragment's
 * datagram. */
static enum cflow_parse_status
parse_general(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt, struct cflow_frag_id *fi)
{
	uint32_t off = 0, vlan = 0;
	enum cflow_parse_status st;
	uint16_t type = 0;

	st = parse_link(buf, len, params != NULL ? params->link_type :
			CFLOW_LINK_EN10MB, &off, &type);
	if (st != CFLOW_PARSE_OK)
		return st;
	st = parse_l3(buf, len, off, type, params, &vlan, pkt, fi);
	if (st == CFLOW_PARSE_OK && params != NULL && params->vlan_in_key)
		pkt->key.vlan = vlan;
	else if (st != CFLOW_PARSE_OK || pkt->tunnel == 0 ||
			!params->tunnel_bind)
		pkt->key.tunnel = 0;
	return st;
}

uint64_t
cflow_hash_key(const struct cflow_key *key, uint64_t seed)
{
	return cflow_key_hash(key, seed);
}
