/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _PACKETS_H_
#define _PACKETS_H_

/*
 * Test frames, written byte by byte (nothing of the code under test
 * builds them), for the unit tests of lib/cflow and its users: the flow
 * core's programs (test_parse, test_track, test_track_model), test_fw
 * and test_clock.
 *
 * - struct spec and build(): Ethernet frames with VLAN tags, IPv4 or IPv6
 *   with extension headers and fragments, TCP, UDP, UDP-Lite, SCTP or
 *   another protocol; one byte of each address. The flow core's tests
 *   and the tables of cases they build on.
 * - struct pkt_spec and pkt_frame(): an IP packet with 32-bit addresses,
 *   TTL and ICMP type behind an Ethernet header (pkt_eth()), in a tunnel
 *   (pkt_tun_frame()); an ARP request (pkt_arp()).
 * - icmp_echo_frame(), icmp_error_frame(), icmp_quotable(): ICMP echo
 *   and errors quoting a packet, addresses 10.0.0.N or 2001:db8::N
 *   (icmp_addr16()); icmp_want_key(), the key a test expects.
 * - parse_exact(): what the parser makes of a frame in a buffer of its
 *   exact size, so that ASan sees any read past its end.
 *
 * The functions are static, as they were in each test file (the compiler
 * inlines them as it did there), and marked unused: a program uses some.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cflow_parse.h"

/* Big-endian stores. */
static __attribute__((unused)) void
w16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static __attribute__((unused)) void
w32(uint8_t *p, uint32_t v)
{
	w16(p, (uint16_t)(v >> 16));
	w16(p + 2, (uint16_t)v);
}

/* ------------------------------------------- the flow core's frames */

struct spec {
	int family;         /* 4 or 6 */
	uint8_t src, dst;   /* last address byte */
	uint16_t sport, dport;
	uint8_t proto;      /* ICMP, ICMPv6: an echo request, id sport */
	uint8_t flags;      /* TCP */
	int vlans;          /* 0..3 tags */
	uint16_t vlan_type; /* outer tag type, default 0x8100 */
	uint16_t frag;      /* IPv4 flags+offset field / IPv6 fragment */
	int v6_ext;         /* number of extension headers before L4 */
	bool v6_frag_hdr;   /* put a fragment header in the chain */
};

/* Build the frame (into 256 bytes, zeroed first: Ethernet with zero
 * addresses, the tags, IPv4 10.0.0.src -> 10.0.0.dst or IPv6 2000::src ->
 * 2000::dst, L4 ports, TCP flags); returns its length. */
static __attribute__((unused)) uint32_t
build(uint8_t *b, const struct spec *s)
{
	uint32_t off = 12, l3, l4, l4len;
	uint8_t nh;

	memset(b, 0, 256);
	for (int k = 0; k < s->vlans; k++) {
		w16(b + off, k == 0 && s->vlan_type ? s->vlan_type : 0x8100);
		w16(b + off + 2, (uint16_t)(100 + k));
		off += 4;
	}
	w16(b + off, s->family == 6 ? 0x86dd : 0x0800);
	l3 = off + 2;
	switch (s->proto) {
	case 6:
		l4len = 20;
		break;
	case 17: case 136:
		l4len = 8;
		break;
	case 132:
		l4len = 12;
		break;
	default:
		l4len = 8;
	}
	if (s->family == 4) {
		b[l3] = 0x45;
		w16(b + l3 + 2, (uint16_t)(20 + l4len));
		w16(b + l3 + 6, s->frag);
		b[l3 + 8] = 64;
		b[l3 + 9] = s->proto;
		b[l3 + 12] = 10;
		b[l3 + 15] = s->src;
		b[l3 + 16] = 10;
		b[l3 + 19] = s->dst;
		l4 = l3 + 20;
	} else {
		uint32_t ext = 0;

		b[l3] = 0x60;
		b[l3 + 7] = 64;
		b[l3 + 8] = 0x20;
		b[l3 + 23] = s->src;
		b[l3 + 24] = 0x20;
		b[l3 + 39] = s->dst;
		l4 = l3 + 40;
		nh = s->proto;
		/* Chain, innermost last: dstopts, routing, hop-by-hop... */
		{
			static const uint8_t kinds[] = { 60, 43, 0, 60, 43, 60,
				43, 60, 43, 60 };
			uint8_t types[12] = { 0 };
			int n = s->v6_ext;

			for (int k = 0; k < n; k++)
				types[k] = kinds[k % 10];
			if (s->v6_frag_hdr)
				types[n++] = 44;
			b[l3 + 6] = n ? types[0] : nh;
			for (int k = 0; k < n; k++) {
				uint8_t next = k + 1 < n ? types[k + 1] : nh;

				b[l4] = next;
				if (types[k] == 44) {
					w16(b + l4 + 2, s->frag);
				} else {
					b[l4 + 1] = 0; /* 8 bytes */
				}
				l4 += 8;
				ext += 8;
			}
		}
		w16(b + l3 + 4, (uint16_t)(ext + l4len));
	}
	if (s->proto == 1 || s->proto == 58) {
		/* an echo request: identifier sport, keyed by it */
		b[l4] = s->proto == 1 ? 8 : 128;
		w16(b + l4 + 4, s->sport);
		w16(b + l4 + 6, s->dport); /* the sequence number */
		return l4 + l4len;
	}
	w16(b + l4, s->sport);
	w16(b + l4 + 2, s->dport);
	if (s->proto == 6) {
		b[l4 + 12] = 5 << 4;
		b[l4 + 13] = s->flags;
	}
	return l4 + l4len;
}

/* What cflow_parse() makes of the frame of @p s. */
static __attribute__((unused)) enum cflow_parse_status
parse_spec(const struct spec *s, bool vlan_in_key, struct cflow_packet *p)
{
	uint8_t buf[256];
	uint32_t len = build(buf, s);
	struct cflow_parse_params pp = { .vlan_in_key = vlan_in_key };

	return cflow_parse(buf, len, &pp, p);
}

/* ------------------------------------------- IP packets, 32-bit addresses */

/* An IP packet's fields; addresses are IPv4 a.b.c.d as a uint32_t, or
 * IPv6 2001:db8::N with N the same value. */
struct pkt_spec {
	int family;             /* 4 or 6 */
	uint32_t src, dst;
	uint16_t sport, dport;
	uint8_t proto;          /* 6, 17, 1 or 58 */
	uint8_t flags;          /* TCP flags, or the ICMP type */
	uint8_t ttl;            /* 0: 64 */
};

/* Address @p a of @p family at @p p (4 or 16 bytes), as struct pkt_spec
 * says. */
static __attribute__((unused)) void
pkt_addr(uint8_t *p, int family, uint32_t a)
{
	if (family == 4) {
		w32(p, a);
		return;
	}
	memset(p, 0, 16);
	w16(p, 0x2001);
	w16(p + 2, 0x0db8);
	w32(p + 12, a);
}

/* The IP packet (no link header) at @p b; its length. */
static __attribute__((unused)) uint32_t
pkt_ip(uint8_t *b, const struct pkt_spec *s)
{
	uint32_t hl = s->family == 4 ? 20 : 40;
	uint32_t l4len = s->proto == 6 ? 20 : 8;
	uint8_t *l4 = b + hl;

	memset(b, 0, hl + l4len);
	if (s->family == 4) {
		b[0] = 0x45;
		w16(b + 2, (uint16_t)(hl + l4len));
		b[8] = s->ttl ? s->ttl : 64;
		b[9] = s->proto;
		pkt_addr(b + 12, 4, s->src);
		pkt_addr(b + 16, 4, s->dst);
	} else {
		b[0] = 0x60;
		w16(b + 4, (uint16_t)l4len);
		b[6] = s->proto;
		b[7] = s->ttl ? s->ttl : 64;
		pkt_addr(b + 8, 6, s->src);
		pkt_addr(b + 24, 6, s->dst);
	}
	if (s->proto == 6 || s->proto == 17) {
		w16(l4, s->sport);
		w16(l4 + 2, s->dport);
	}
	if (s->proto == 6) {
		l4[12] = 0x50;
		l4[13] = s->flags;
	} else if (s->proto == 17) {
		w16(l4 + 4, 8);
	} else {
		l4[0] = s->flags;       /* the ICMP type */
	}
	return hl + l4len;
}

/* An Ethernet header of @p type at @p b; 14. */
static __attribute__((unused)) uint32_t
pkt_eth(uint8_t *b, uint16_t type)
{
	memset(b, 0, 12);
	b[0] = 2;
	b[6] = 2;
	b[11] = 1;
	w16(b + 12, type);
	return 14;
}

/* Ethernet + the IP packet: the frame's length. */
static __attribute__((unused)) uint32_t
pkt_frame(uint8_t *b, const struct pkt_spec *s)
{
	uint32_t n = pkt_eth(b, s->family == 4 ? 0x0800 : 0x86dd);

	return n + pkt_ip(b + n, s);
}

enum pkt_tun { TUN_VXLAN, TUN_GENEVE, TUN_GRE, TUN_GTPU };

/*
 * @p inner (@p ilen bytes: an Ethernet frame for VXLAN, Geneve with
 * 0x6558 and GRE with 0x6558 if @p teb, else an IP packet) in a tunnel
 * between outer IPv4 addresses @p osrc and @p odst, id @p id.
 */
static __attribute__((unused)) uint32_t
pkt_tun_frame(uint8_t *b, enum pkt_tun kind, bool teb, uint32_t osrc,
		uint32_t odst, uint32_t id, const uint8_t *inner, uint32_t ilen)
{
	uint32_t n = pkt_eth(b, 0x0800), hl, total;
	uint8_t *ip = b + n, *l4;
	uint16_t type = teb ? 0x6558 : (inner[0] >> 4) == 6 ? 0x86dd : 0x0800;

	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[8] = 64;
	ip[9] = kind == TUN_GRE ? 47 : 17;
	w32(ip + 12, osrc);
	w32(ip + 16, odst);
	l4 = ip + 20;
	if (kind == TUN_GRE) {
		w16(l4, 0x2000);        /* K */
		w16(l4 + 2, type);
		w32(l4 + 4, id);
		hl = 8;
	} else {
		memset(l4, 0, 16);
		w16(l4, 49152);
		w16(l4 + 2, kind == TUN_VXLAN ? 4789 : kind == TUN_GENEVE ?
			6081 : 2152);
		if (kind == TUN_VXLAN) {
			l4[8] = 0x08;
			w32(l4 + 12, id << 8);
		} else if (kind == TUN_GENEVE) {
			w16(l4 + 10, type);
			w32(l4 + 12, id << 8);
		} else {
			l4[8] = 0x30;
			l4[9] = 255;
			w16(l4 + 10, (uint16_t)ilen);
			w32(l4 + 12, id);
		}
		hl = 16;
	}
	memcpy(l4 + hl, inner, ilen);
	total = 20 + hl + ilen;
	w16(ip + 2, (uint16_t)total);
	if (kind != TUN_GRE)
		w16(l4 + 4, (uint16_t)(total - 20));
	return n + total;
}

/* An ARP request in a 60-byte Ethernet frame at @p b (its addresses
 * zero); 60. */
static __attribute__((unused)) uint32_t
pkt_arp(uint8_t *b)
{
	uint32_t n = pkt_eth(b, 0x0806);

	memset(b + n, 0, 60 - n);
	w16(b + n, 1);          /* hardware: Ethernet */
	w16(b + n + 2, 0x0800); /* protocol: IPv4 */
	b[n + 4] = 6;
	b[n + 5] = 4;
	w16(b + n + 6, 1);      /* request */
	return 60;
}

/* ------------------------------------- ICMP queries and errors (issue 26) */

/* An address of the ICMP frames below: 10.0.0.N, or 2001:db8::N, as 16
 * bytes (IPv4-mapped), the form of struct cflow_key. */
static __attribute__((unused)) void
icmp_addr16(uint8_t *a, int family, uint8_t n)
{
	memset(a, 0, 16);
	if (family == 4) {
		a[10] = a[11] = 0xff;
		a[12] = 10;
	} else {
		a[0] = 0x20;
		a[1] = 0x01;
		a[2] = 0x0d;
		a[3] = 0xb8;
	}
	a[15] = n;
}

/* An IP header (no options, no extensions) from N @p src to N @p dst at
 * @p b, with @p proto and @p plen bytes of payload (IPv4: flags and
 * offset @p frag); its length. */
static __attribute__((unused)) uint32_t
icmp_ip_hdr(uint8_t *b, int family, uint8_t src, uint8_t dst, uint8_t proto,
		uint32_t plen, uint16_t frag)
{
	uint8_t a[16];

	if (family == 4) {
		memset(b, 0, 20);
		b[0] = 0x45;
		w16(b + 2, (uint16_t)(20 + plen));
		w16(b + 6, frag);
		b[8] = 64;
		b[9] = proto;
		icmp_addr16(a, 4, src);
		memcpy(b + 12, a + 12, 4);
		icmp_addr16(a, 4, dst);
		memcpy(b + 16, a + 12, 4);
		return 20;
	}
	memset(b, 0, 40);
	b[0] = 0x60;
	w16(b + 4, (uint16_t)plen);
	b[6] = proto;
	b[7] = 64;
	icmp_addr16(b + 8, 6, src);
	icmp_addr16(b + 24, 6, dst);
	return 40;
}

/* An ICMP header of @p type and @p code at @p b, with @p rest (the
 * identifier and sequence, or an MTU) in its last 4 bytes; 8. */
static __attribute__((unused)) uint32_t
icmp_hdr(uint8_t *b, uint8_t type, uint8_t code, uint32_t rest)
{
	memset(b, 0, 8);
	b[0] = type;
	b[1] = code;
	w32(b + 4, rest);
	return 8;
}

/* The ICMP protocol number of @p family. */
static __attribute__((unused)) uint8_t
icmp_proto(int family)
{
	return family == 4 ? 1 : 58;
}

/* An Ethernet frame of an echo request (@p reply false) or reply from N
 * @p src to N @p dst, identifier @p id, into @p b; its length. */
static __attribute__((unused)) uint32_t
icmp_echo_frame(uint8_t *b, int family, uint8_t src, uint8_t dst, bool reply,
		uint16_t id)
{
	uint32_t n = pkt_eth(b, family == 4 ? 0x0800 : 0x86dd);
	uint8_t type = family == 4 ? (reply ? 0 : 8) : (reply ? 129 : 128);

	n += icmp_ip_hdr(b + n, family, src, dst, icmp_proto(family), 16, 0);
	n += icmp_hdr(b + n, type, 0, (uint32_t)id << 16 | 1);
	memset(b + n, 0x5a, 8);
	return n + 8;
}

/*
 * An ICMP error of @p type, @p code from N @p from to N @p to, quoting
 * @p qlen bytes of the IP packet at @p quoted, into @p b; its length.
 */
static __attribute__((unused)) uint32_t
icmp_error_frame(uint8_t *b, int family, uint8_t from, uint8_t to,
		uint8_t type, uint8_t code, const uint8_t *quoted, uint32_t qlen)
{
	uint32_t n = pkt_eth(b, family == 4 ? 0x0800 : 0x86dd);

	n += icmp_ip_hdr(b + n, family, from, to, icmp_proto(family),
		8 + qlen, 0);
	n += icmp_hdr(b + n, type, code, type == 3 && code == 4 ? 1400 :
		type == 2 ? 1280 : 0);
	memcpy(b + n, quoted, qlen);
	return n + qlen;
}

/* A packet to quote: IP from N @p src to N @p dst, @p proto with ports
 * (an echo request's identifier for ICMP) @p sport, @p dport, the whole
 * L4 header (20 bytes of TCP, 8 of the others); its length. */
static __attribute__((unused)) uint32_t
icmp_quotable(uint8_t *b, int family, uint8_t src, uint8_t dst,
		uint8_t proto, uint16_t sport, uint16_t dport)
{
	uint32_t l4 = proto == 6 ? 20 : 8;
	uint32_t n = icmp_ip_hdr(b, family, src, dst, proto, l4 + 100, 0);

	memset(b + n, 0, l4);
	if (proto == 1 || proto == 58) {
		icmp_hdr(b + n, proto == 1 ? 8 : 128, 0,
			(uint32_t)sport << 16 | 9);
	} else {
		w16(b + n, sport);
		w16(b + n + 2, dport);
		if (proto == 6) {
			b[n + 12] = 5 << 4;
			b[n + 13] = CFLOW_TCP_SYN;
		}
	}
	return n + l4;
}

/* The key the tests expect: N @p src, @p sport to N @p dst, @p dport. */
static __attribute__((unused)) void
icmp_want_key(struct cflow_key *k, int family, uint8_t src, uint8_t dst,
		uint16_t sport, uint16_t dport, uint8_t proto)
{
	uint8_t s[16], d[16];

	icmp_addr16(s, family, src);
	icmp_addr16(d, family, dst);
	cflow_key_init(k, (uint8_t)family, s, d, sport, dport, proto);
}

/* ------------------------------------------------------------- parsing */

/* Parse frame (len bytes) in a buffer of exactly that size (ASan). */
static __attribute__((unused)) enum cflow_parse_status
parse_exact(const uint8_t *frame, uint32_t len,
		const struct cflow_parse_params *pp, struct cflow_packet *p)
{
	uint8_t *b = malloc(len ? len : 1);
	enum cflow_parse_status st;

	memcpy(b, frame, len);
	st = cflow_parse(b, len, pp, p);
	free(b);
	return st;
}

#endif /* _PACKETS_H_ */
