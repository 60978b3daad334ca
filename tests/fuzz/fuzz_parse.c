/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: the parser and the blocklist's address match. The
 * input is a byte of settings (bit 0: vlan_in_key; bit 1: decap, every
 * tunnel), a byte of link type
 * (modulo CFLOW_LINK_TYPE_MAX + 1: the last value is out of range), then
 * one frame, copied into a buffer of exactly its length so that ASan
 * catches any read past it. Any broken invariant aborts:
 *
 * - addresses are reported if and only if an independent walk finds a
 *   sane IP header (behind the link header and at most
 *   CFLOW_PARSE_VLAN_ADDRS_MAX tags, version matching, whole within the
 *   frame), and they are that header's addresses, lower first (an ICMP
 *   error about a flow, CFLOW_KIND_ICMP_ERROR: the quoted packet's,
 *   one of which is the error's destination); the ethertype is the
 *   walk's;
 * - a frame shorter than its link header is CFLOW_PARSE_TRUNC_L2; a link
 *   type out of range, CFLOW_PARSE_NON_IP;
 * - status OK => addresses reported, at most CFLOW_PARSE_VLAN_MAX tags,
 *   the header's TTL or hop limit, no tunnel (without decap);
 * - any other status: nothing but the ethertype, addresses and family
 *   set;
 * - a packet with a listed address (10.0.0.0/8, 2001:db8::/32,
 *   192.0.2.1) matches cbl_match_addrs(); one without addresses
 *   never does; a parsed one matches as with cbl_match() (the list
 *   has no flows);
 * - cflow_parse_burst() gives each frame of a burst (the frame and its
 *   truncations, at the settings, with decap and with the defaults)
 *   what cflow_parse() gives it alone;
 * - with decap: a packet whose outer parse (decap off) is not an OK UDP
 *   or GRE one parses exactly as without decap; any other keeps the
 *   outer ethertype, reports addresses with OK, and nothing but the
 *   addresses, family and tunnel otherwise. The checks above then run on the
 *   parse without decap.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocklist.h"
#include "cflow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct cbl *
blocklist(void)
{
	static struct cbl *bl;
	char path[] = "/tmp/fuzz_parse_XXXXXX", err[256];
	int fd;

	if (bl != NULL)
		return bl;
	fd = mkstemp(path);
	if (fd < 0 || write(fd, "10.0.0.0/8\n2001:db8::/32\n192.0.2.1\n",
			35) != 35)
		abort();
	close(fd);
	bl = cbl_read(path, 0, err, sizeof(err));
	unlink(path);
	if (bl == NULL)
		abort();
	return bl;
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* A BSD address family of DLT_NULL/DLT_LOOP as an ethertype, 0 if not
 * IP. */
static uint16_t
ref_af(uint32_t af)
{
	return af == 2 ? 0x0800 : af == 24 || af == 28 || af == 30 ?
		0x86dd : 0;
}

/* The link header's length, 0 for an out-of-range link type. */
static uint32_t
ref_link_len(int link)
{
	switch (link) {
	case CFLOW_LINK_EN10MB:
		return 14;
	case CFLOW_LINK_LINUX_SLL:
		return 16;
	case CFLOW_LINK_LINUX_SLL2:
		return 20;
	case CFLOW_LINK_NULL:
	case CFLOW_LINK_LOOP:
		return 4;
	default:
		return 0;
	}
}

/* Where a sane IP header is, if one is: the reference for has_addrs and
 * ethertype (left 0 if the link header or the tags cannot be walked). */
static bool
ref_header(const uint8_t *b, uint32_t len, int link, uint32_t *l3,
		int *family, unsigned int *tags, uint16_t *ethertype)
{
	uint32_t off = ref_link_len(link), le, be;
	uint16_t type;

	*tags = 0;
	*ethertype = 0;
	if (len < off)
		return false;
	switch (link) {
	case CFLOW_LINK_EN10MB:
		type = rd16(b + 12);
		break;
	case CFLOW_LINK_LINUX_SLL:
		type = rd16(b + 14);
		break;
	case CFLOW_LINK_LINUX_SLL2:
		type = rd16(b);
		break;
	case CFLOW_LINK_RAW:
		if (len < 1)
			return false;
		type = b[0] >> 4 == 4 ? 0x0800 : b[0] >> 4 == 6 ? 0x86dd : 0;
		break;
	case CFLOW_LINK_IPV4:
		type = 0x0800;
		break;
	case CFLOW_LINK_IPV6:
		type = 0x86dd;
		break;
	case CFLOW_LINK_NULL:
	case CFLOW_LINK_LOOP:
		/* As tcpdump reads it: little-endian unless that leaves
		 * high bits set; LOOP is big-endian. */
		le = (uint32_t)b[0] | (uint32_t)b[1] << 8 |
			(uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
		be = __builtin_bswap32(le);
		type = ref_af(link == CFLOW_LINK_LOOP || (le & 0xffff0000) ?
			be : le);
		break;
	default:
		return false;
	}
	if (type == 0)
		return false;
	while (type == 0x8100 || type == 0x88a8 || type == 0x9100) {
		if (*tags == CFLOW_PARSE_VLAN_ADDRS_MAX || len < off + 4)
			return false;
		type = rd16(b + off + 2);
		off += 4;
		++*tags;
	}
	*ethertype = type;
	*l3 = off;
	if (type == 0x0800) {
		*family = 4;
		return len - off >= 20 && b[off] >> 4 == 4 &&
			(b[off] & 0xf) >= 5 && len - off >= (b[off] & 0xfu) * 4;
	}
	if (type == 0x86dd) {
		*family = 6;
		return len - off >= 40 && b[off] >> 4 == 6;
	}
	return false;
}

static bool
listed(const uint8_t *a, int family)
{
	static const uint8_t v4[4] = { 192, 0, 2, 1 };

	if (family == 4)
		return a[12] == 10 || memcmp(a + 12, v4, 4) == 0;
	return a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8;
}

/*
 * cflow_parse_burst() answers each frame as cflow_parse() does: a burst
 * of the frame and its truncations (to each length a header may end at
 * and a few others), each in a buffer of exactly its length, parsed with
 * @p pp, with decapsulation on and with the defaults (NULL).
 */
static void
burst_check(const uint8_t *frame, uint32_t len,
		const struct cflow_parse_params *pp)
{
	static const uint32_t cuts[] = {
		0, 1, 13, 14, 17, 18, 33, 34, 37, 38, 41, 42, 53, 54, 57, 58,
		61, 62, 73, 74, 81, 82, 93, 94,
	};
	enum { NB = 2 + sizeof(cuts) / sizeof(cuts[0]) };
	struct cflow_input in[NB];
	struct cflow_packet bp[NB], one;
	enum cflow_parse_status bs[NB];
	struct cflow_parse_params pd = *pp;
	const struct cflow_parse_params *which[3] = { pp, &pd, NULL };
	uint8_t *bufs[NB];
	unsigned int n = 0;

	pd.decap = CFLOW_DECAP_ALL;
	memset(in, 0, sizeof(in));
	for (unsigned int i = 0; i < NB; i++) {
		uint32_t l = i == 0 ? len : i == 1 ? len / 2 : cuts[i - 2];

		if (l > len)
			continue;
		bufs[n] = malloc(l ? l : 1);
		if (bufs[n] == NULL)
			abort();
		memcpy(bufs[n], frame, l);
		in[n].data = bufs[n];
		in[n].len = l;
		in[n].wire_len = len;
		n++;
	}
	for (unsigned int w = 0; w < 3; w++) {
		memset(bp, 0xa5, sizeof(bp));
		cflow_parse_burst(in, n, which[w], bp, bs);
		for (unsigned int i = 0; i < n; i++)
			if (cflow_parse(in[i].data, in[i].len, which[w],
					&one) != bs[i] ||
					memcmp(&one, &bp[i], sizeof(one)) != 0)
				abort();
	}
	for (unsigned int i = 0; i < n; i++)
		free(bufs[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct cbl *bl = blocklist();
	struct cflow_parse_params pp;
	struct cflow_packet p, zero;
	enum cflow_parse_status st;
	enum cbl_kind kind;
	uint8_t src[16] = { 0 }, dst[16] = { 0 }, *frame;
	const uint8_t *lo, *hi;
	unsigned int tags;
	uint32_t len, l3 = 0;
	uint16_t ethertype;
	int family = 0, link;
	bool has;

	if (size < 2 || size - 2 > UINT32_MAX)
		return 0;
	memset(&pp, 0, sizeof(pp));
	pp.vlan_in_key = data[0] & 1;
	link = data[1] % (CFLOW_LINK_TYPE_MAX + 1);
	pp.link_type = (enum cflow_link_type)link;
	len = (uint32_t)(size - 2);
	frame = malloc(len ? len : 1);
	memcpy(frame, data + 2, len);
	st = cflow_parse(frame, len, &pp, &p);
	{
		/* the fast path answers as the general one */
		struct cflow_packet g;

		if (cflow_parse_general(frame, len, &pp, &g) != st ||
				memcmp(&g, &p, sizeof(g)) != 0)
			abort();
	}
	burst_check(frame, len, &pp);
	if (data[0] & 2) {
		struct cflow_parse_params pd = pp;
		struct cflow_packet d, rest;
		enum cflow_parse_status sd;

		pd.decap = CFLOW_DECAP_ALL;
		sd = cflow_parse(frame, len, &pd, &d);
		if ((unsigned int)sd >= CFLOW_PARSE_STATUS_MAX)
			abort();
		if (st != CFLOW_PARSE_OK || (p.key.proto != 17 &&
				p.key.proto != 47)) {
			if (sd != st || memcmp(&d, &p, sizeof(d)) != 0)
				abort();
		} else if (d.ethertype != p.ethertype ||
				(sd == CFLOW_PARSE_OK && !d.has_addrs)) {
			abort();
		} else if (sd != CFLOW_PARSE_OK) {
			memset(&rest, 0, sizeof(rest));
			memcpy(&rest.key, &d.key, 32);
			rest.key.family = d.key.family;
			rest.has_addrs = d.has_addrs;
			rest.ethertype = d.ethertype;
			rest.reversed = d.reversed;
			rest.tunnel = d.tunnel;
			if (memcmp(&d, &rest, sizeof(d)) != 0 ||
					(!d.has_addrs && (d.key.family != 0 ||
					d.key.addr_hi[15] != 0)))
				abort();
		}
	}
	has = ref_header(frame, len, link, &l3, &family, &tags, &ethertype);
	if ((unsigned int)st >= CFLOW_PARSE_STATUS_MAX)
		abort();
	if (len < ref_link_len(link) && st != CFLOW_PARSE_TRUNC_L2)
		abort();
	if (link == CFLOW_LINK_TYPE_MAX && st != CFLOW_PARSE_NON_IP)
		abort();
	if (p.has_addrs != has || p.ethertype != ethertype)
		abort();
	if (st == CFLOW_PARSE_OK && (!p.has_addrs ||
			tags > CFLOW_PARSE_VLAN_MAX || p.tunnel != 0))
		abort();
	/* The TTL or hop limit of the header the key is of. */
	if (st == CFLOW_PARSE_OK && p.hop_limit !=
			frame[l3 + (family == 4 ? 8 : 7)])
		abort();
	if (has) {
		/* The header's addresses, lower first. */
		if (family == 4) {
			src[10] = src[11] = dst[10] = dst[11] = 0xff;
			memcpy(src + 12, frame + l3 + 12, 4);
			memcpy(dst + 12, frame + l3 + 16, 4);
		} else {
			memcpy(src, frame + l3 + 8, 16);
			memcpy(dst, frame + l3 + 24, 16);
		}
		lo = memcmp(src, dst, 16) <= 0 ? src : dst;
		hi = lo == src ? dst : src;
		if (st == CFLOW_PARSE_OK && p.kind == CFLOW_KIND_ICMP_ERROR) {
			/* An error's key is the flow of the packet it
			 * quotes, whose source is the error's destination:
			 * that address is one of the key's, of the same
			 * family. */
			if (p.key.family != family ||
					(memcmp(p.key.addr_lo, dst, 16) != 0 &&
					memcmp(p.key.addr_hi, dst, 16) != 0))
				abort();
		} else if (p.key.family != family ||
				memcmp(p.key.addr_lo, lo, 16) != 0 ||
				memcmp(p.key.addr_hi, hi, 16) != 0) {
			abort();
		} else if (memcmp(src, dst, 16) != 0 &&
				p.reversed != (lo == dst)) {
			/* The direction: from hi to lo when the source is
			 * higher (equal addresses: by ports, known only with
			 * a key). */
			abort();
		}
	}
	memset(&zero, 0, sizeof(zero));
	zero.ethertype = ethertype;
	if (st != CFLOW_PARSE_OK) {
		/* Nothing but the addresses and family, if any. */
		if (has) {
			memcpy(zero.key.addr_lo, lo, 16);
			memcpy(zero.key.addr_hi, hi, 16);
			zero.key.family = (uint8_t)family;
			zero.has_addrs = true;
			zero.reversed = lo == dst;
		}
		if (memcmp(&p, &zero, sizeof(p)) != 0)
			abort();
	}
	kind = cbl_match_addrs(bl, &p);
	if (!has && kind != CBL_NONE)
		abort();
	if (has && (listed(src, family) || listed(dst, family)) &&
			kind == CBL_NONE)
		abort();
	if (st == CFLOW_PARSE_OK && cbl_match(bl, &p) != kind)
		abort();
	free(frame);
	return 0;
}
