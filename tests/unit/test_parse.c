/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The parser of lib/cflow on every header it knows and on every
 * truncation of valid packets: L4 kinds, VLAN tags, fragments, IPv6
 * extensions, the addresses of packets it does not place, every link
 * type, tunnels; what the frames of its tables of cases (unparsed
 * packets, link types) come to through a tracker.
 */

#include <errno.h>
#include <stdlib.h>

#include "cflow.h"
#include "cflow_test.h"
#include "packets.h"
#include "test.h"

/* ------------------------------------------------------------- parser */

static int
test_parse_l4_kinds(void)
{
	static const struct { int family; uint8_t proto; uint8_t cls;
		bool ports; } kinds[] = {
		{ 4, 6, CFLOW_CLASS_TCP, true },
		{ 4, 17, CFLOW_CLASS_UDP, true },
		{ 4, 136, CFLOW_CLASS_UDP, true },
		{ 4, 132, CFLOW_CLASS_OTHER, true },
		{ 4, 1, CFLOW_CLASS_ICMP, false },
		{ 4, 47, CFLOW_CLASS_OTHER, false },
		{ 6, 6, CFLOW_CLASS_TCP, true },
		{ 6, 17, CFLOW_CLASS_UDP, true },
		{ 6, 58, CFLOW_CLASS_ICMP, false },
		{ 6, 50, CFLOW_CLASS_OTHER, false },
	};

	for (unsigned int i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct spec s = { .family = kinds[i].family, .src = 9,
			.dst = 3, .sport = 4000, .dport = 80,
			.proto = kinds[i].proto, .flags = CFLOW_TCP_SYN };
		struct cflow_packet a, b;

		TEST_ASSERT_EQ(parse_spec(&s, false, &a), CFLOW_PARSE_OK,
			"kind %u", i);
		TEST_ASSERT_EQ(a.proto_class, kinds[i].cls, "class %u", i);
		TEST_ASSERT_EQ(a.key.proto, kinds[i].proto, "proto");
		TEST_ASSERT_EQ(a.key.family, kinds[i].family, "family");
		/* ICMP: an echo request from 9, identifier 4000 (a query is
		 * keyed by its identifier on the requester's side) */
		TEST_ASSERT(kinds[i].ports ? a.key.port_lo == 80 &&
			a.key.port_hi == 4000 : kinds[i].cls ==
			CFLOW_CLASS_ICMP ? a.key.port_lo == 0 &&
			a.key.port_hi == 4000 :
			a.key.port_lo == 0 && a.key.port_hi == 0,
			"ports %u %u", a.key.port_lo, a.key.port_hi);
		/* Lower endpoint first: address 3 before address 9. */
		TEST_ASSERT_EQ(a.key.addr_lo[15], 3, "canonical order");
		if (kinds[i].proto == 6)
			TEST_ASSERT_EQ(a.tcp_flags, CFLOW_TCP_SYN, "flags");
		/* The reverse direction is the same flow (ICMP queries: a
		 * request the other way is another one, test_parse_icmp). */
		if (kinds[i].cls == CFLOW_CLASS_ICMP)
			continue;
		s.src = 3;
		s.dst = 9;
		s.sport = 80;
		s.dport = 4000;
		TEST_ASSERT_EQ(parse_spec(&s, false, &b), CFLOW_PARSE_OK,
			"reverse");
		TEST_ASSERT(memcmp(&a.key, &b.key, sizeof(a.key)) == 0,
			"kind %u: directions differ", i);
	}
	return 0;
}

static int
test_parse_ipv4_mapped_and_ports_tiebreak(void)
{
	struct spec s = { .family = 4, .src = 7, .dst = 7, .sport = 9000,
		.dport = 53, .proto = 17 };
	struct cflow_packet p;

	TEST_ASSERT_EQ(parse_spec(&s, false, &p), CFLOW_PARSE_OK, "parse");
	TEST_ASSERT(p.key.addr_lo[10] == 0xff && p.key.addr_lo[11] == 0xff &&
		p.key.addr_lo[12] == 10, "IPv4-mapped");
	TEST_ASSERT(p.key.port_lo == 53 && p.key.port_hi == 9000,
		"same address: lower port first");
	return 0;
}

/* reversed: the packet's destination is the key's lo endpoint. Each
 * family, by address and by port, both directions, and the unparsed
 * paths that report addresses only. */
static int
test_parse_direction(void)
{
	static const struct { uint8_t family, src, dst; uint16_t sport, dport;
		uint8_t proto; } c[] = {
		{ 4, 3, 9, 1000, 80, 6 }, { 4, 9, 3, 80, 1000, 6 },
		{ 4, 7, 7, 9000, 53, 17 }, { 4, 7, 7, 53, 9000, 17 },
		{ 6, 3, 9, 1000, 80, 6 }, { 6, 9, 3, 80, 1000, 6 },
		{ 6, 7, 7, 9000, 53, 17 }, { 6, 7, 7, 53, 9000, 17 },
		{ 4, 3, 9, 0, 0, 1 }, { 6, 9, 3, 0, 0, 58 },
		{ 4, 7, 7, 5, 5, 17 },
	};

	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct spec s = { .family = c[i].family, .src = c[i].src,
			.dst = c[i].dst, .sport = c[i].sport,
			.dport = c[i].dport, .proto = c[i].proto };
		bool want = c[i].src > c[i].dst || (c[i].src == c[i].dst &&
			c[i].sport > c[i].dport);
		struct cflow_packet p;
		uint8_t buf[256];
		uint32_t len;

		TEST_ASSERT_EQ(parse_spec(&s, false, &p), CFLOW_PARSE_OK,
			"case %u", i);
		TEST_ASSERT(p.reversed == want, "case %u: reversed %d", i,
			p.reversed);
		/* the destination read back from the key */
		TEST_ASSERT_EQ((p.reversed ? p.key.addr_lo : p.key.addr_hi)[15],
			c[i].dst, "case %u dst", i);
		/* a TCP header cut short: addresses only, same direction */
		if (c[i].proto == 6) {
			len = build(buf, &s);
			TEST_ASSERT(cflow_parse(buf, len - 1, NULL, &p) ==
				CFLOW_PARSE_TRUNC_L4 && p.has_addrs &&
				p.reversed == (c[i].src > c[i].dst),
				"case %u cut", i);
		}
	}
	return 0;
}

static int
test_parse_vlan(void)
{
	static const uint16_t outer[] = { 0x8100, 0x88a8, 0x9100 };
	struct cflow_packet a, b;

	for (unsigned int i = 0; i < 3; i++) {
		struct spec s = { .family = 4, .src = 1, .dst = 2, .sport = 1,
			.dport = 2, .proto = 17, .vlans = 2,
			.vlan_type = outer[i] };

		TEST_ASSERT_EQ(parse_spec(&s, true, &a), CFLOW_PARSE_OK,
			"QinQ %x", outer[i]);
		TEST_ASSERT_EQ(a.key.vlan, (100u << 12) | 101u, "vlan ids");
		TEST_ASSERT_EQ(parse_spec(&s, false, &b), CFLOW_PARSE_OK,
			"untagged key");
		TEST_ASSERT_EQ(b.key.vlan, 0u, "vlan off by default");
		s.vlans = 1;
		TEST_ASSERT_EQ(parse_spec(&s, true, &a), CFLOW_PARSE_OK,
			"one tag");
		TEST_ASSERT_EQ(a.key.vlan, 100u, "single tag");
	}
	{
		struct spec s = { .family = 4, .proto = 17, .vlans = 3 };

		TEST_ASSERT_EQ(parse_spec(&s, false, &a), CFLOW_PARSE_NON_IP,
			"three tags");
	}
	return 0;
}

static int
test_parse_non_ip_and_bad_headers(void)
{
	uint8_t buf[256];
	struct spec s = { .family = 4, .src = 1, .dst = 2, .sport = 1,
		.dport = 2, .proto = 6 };
	struct cflow_packet p;
	uint32_t len;

	len = build(buf, &s);
	w16(buf + 12, 0x0806); /* ARP */
	TEST_ASSERT_EQ(cflow_parse(buf, len, NULL, &p), CFLOW_PARSE_NON_IP,
		"ARP");
	len = build(buf, &s);
	buf[14] = 0x65; /* version 6 under an IPv4 ethertype */
	TEST_ASSERT_EQ(cflow_parse(buf, len, NULL, &p),
		CFLOW_PARSE_BAD_VERSION, "version");
	len = build(buf, &s);
	buf[14] = 0x44; /* IHL 4 */
	TEST_ASSERT_EQ(cflow_parse(buf, len, NULL, &p),
		CFLOW_PARSE_BAD_HDRLEN, "IHL");
	len = build(buf, &s);
	w16(buf + 16, 19); /* total length below the header */
	TEST_ASSERT_EQ(cflow_parse(buf, len, NULL, &p),
		CFLOW_PARSE_BAD_LENGTH, "total length");
	len = build(buf, &s);
	buf[14 + 20 + 12] = 4 << 4; /* TCP data offset 4 */
	TEST_ASSERT_EQ(cflow_parse(buf, len, NULL, &p),
		CFLOW_PARSE_BAD_HDRLEN, "TCP offset");
	len = build(buf, &s);
	w16(buf + 16, 30); /* total length ends inside the TCP header */
	TEST_ASSERT_EQ(cflow_parse(buf, len, NULL, &p),
		CFLOW_PARSE_TRUNC_L4, "L4 beyond total length");
	s.family = 6;
	len = build(buf, &s);
	buf[14] = 0x40;
	TEST_ASSERT_EQ(cflow_parse(buf, len, NULL, &p),
		CFLOW_PARSE_BAD_VERSION, "IPv6 version");
	TEST_ASSERT(strcmp(cflow_parse_status_name(CFLOW_PARSE_TRUNC_L3),
		"trunc_l3") == 0, "status name");
	return 0;
}

static int
test_parse_padding(void)
{
	uint8_t buf[256];
	struct spec s = { .family = 4, .src = 1, .dst = 2, .sport = 5,
		.dport = 6, .proto = 17 };
	struct cflow_packet p;
	uint32_t len = build(buf, &s);

	/* A 42-byte UDP frame padded to the 60-byte Ethernet minimum. */
	TEST_ASSERT(len < 60, "frame %u", len);
	TEST_ASSERT_EQ(cflow_parse(buf, 60, NULL, &p), CFLOW_PARSE_OK, "pad");
	TEST_ASSERT(p.key.port_lo == 5 && p.key.port_hi == 6, "ports");
	return 0;
}

/* The parser's fast path (Ethernet, IPv4 without options, TCP or UDP)
 * answers as the general path, on built frames and on frames with a
 * byte or a length changed (options, fragments, other protocols, short
 * TCP headers, padding, truncation), with each kind of params. */
/*
 * @p frames built frames, a share @p v6 of them IPv6 (a share @p ext of
 * those with extension headers), a third with a byte of their first
 * @p damage bytes changed, a fifth cut short or padded, parsed by
 * cflow_parse() (its fast paths) and by the general path alone: the
 * same status and packet, and so by cflow_parse_burst(). Returns the
 * frames that parsed to TCP or UDP of @p family, in *fast.
 */
static int
fast_equals_general(uint64_t rng, int frames, unsigned int v6,
		unsigned int ext, unsigned int damage, int family,
		uint64_t *fast)
{
	static const uint8_t protos[] = { 6, 17, 1, 47, 132, 136, 58 };

	*fast = 0;
	for (int i = 0; i < frames; i++) {
		uint64_t r = cfu_splitmix64(&rng);
		struct spec sp = { .family = r % 100 < v6 ? 6 : 4,
			.src = (uint8_t)(r >> 8), .dst = (uint8_t)(r >> 16),
			.sport = (uint16_t)(r >> 24), .dport = (uint16_t)(r >> 40),
			.proto = protos[(r >> 56) % 7],
			.flags = (uint8_t)(r >> 32), .vlans = r % 16 == 1,
			.v6_ext = (r >> 12) % 100 < ext ? (int)((r >> 3) % 3) :
				0 };
		struct cflow_parse_params pp = { 0 };
		struct cflow_packet a, b;
		struct cflow_input in = { 0 };
		enum cflow_parse_status sa, sb;
		uint8_t buf[256] = { 0 };
		uint32_t len;
		uint64_t m = cfu_splitmix64(&rng);

		if (sp.proto == 58 && sp.family == 4)
			sp.proto = 1;   /* ICMP of the family */
		len = build(buf, &sp);
		if (m % 3 == 0) /* a byte of the headers changed */
			buf[(m >> 8) % damage] = (uint8_t)(m >> 16);
		if (m % 5 == 0) /* cut short, or padded */
			len = (uint32_t)((m >> 24) % (len + 24));
		pp.vlan_in_key = (m >> 40) & 1;
		pp.decap = (m >> 41) % 4 == 0 ? CFLOW_DECAP_ALL : 0;
		sa = cflow_parse(buf, len, (m >> 43) & 1 ? &pp : NULL, &a);
		sb = cflow_parse_general(buf, len, (m >> 43) & 1 ? &pp : NULL,
			&b);
		TEST_ASSERT(sa == sb && memcmp(&a, &b, sizeof(a)) == 0,
			"frame %d (len %u): status %d and %d, or the packets "
			"differ", i, len, sa, sb);
		/* the burst entry, its own loop over the fast paths */
		in.data = buf;
		in.len = len;
		cflow_parse_burst(&in, 1, (m >> 43) & 1 ? &pp : NULL, &b, &sb);
		TEST_ASSERT(sa == sb && memcmp(&a, &b, sizeof(a)) == 0,
			"frame %d (len %u): status %d, burst %d, or the "
			"packets differ", i, len, sa, sb);
		*fast += sa == CFLOW_PARSE_OK && a.key.family == family &&
			(a.key.proto == 6 || a.key.proto == 17);
	}
	return 0;
}

static int
test_parse_fast_equals_general(void)
{
	uint64_t fast;

	TEST_ASSERT_EQ(fast_equals_general(12345, 200000, 12, 0, 64, 4,
		&fast), 0, "IPv4 mostly");
	TEST_ASSERT(fast > 20000, "only %lu frames for the fast path",
		(unsigned long)fast);
	return 0;
}

/* The same for IPv6 frames, the fast path's (TCP, UDP) and others:
 * extension headers, damage over the first 96 bytes (Ethernet, IPv6,
 * an extension or L4). */
static int
test_parse_fast_v6_equals_general(void)
{
	uint64_t fast;

	TEST_ASSERT_EQ(fast_equals_general(54321, 200000, 100, 12, 96, 6,
		&fast), 0, "IPv6");
	TEST_ASSERT(fast > 40000, "only %lu IPv6 TCP/UDP frames",
		(unsigned long)fast);
	return 0;
}

static int
test_parse_fragments(void)
{
	struct cflow_packet p;
	struct spec s = { .family = 4, .src = 1, .dst = 2, .sport = 5,
		.dport = 6, .proto = 17 };

	s.frag = 0x2000; /* first fragment: MF, offset 0 */
	TEST_ASSERT_EQ(parse_spec(&s, false, &p), CFLOW_PARSE_OK, "first");
	TEST_ASSERT_EQ(p.key.port_lo, 5, "first fragment has ports");
	s.frag = 0x2000 | 185;
	TEST_ASSERT_EQ(parse_spec(&s, false, &p), CFLOW_PARSE_FRAGMENT,
		"middle");
	s.frag = 185;
	TEST_ASSERT_EQ(parse_spec(&s, false, &p), CFLOW_PARSE_FRAGMENT,
		"last");
	s.family = 6;
	s.v6_frag_hdr = true;
	s.frag = 1; /* M flag, offset 0 */
	TEST_ASSERT_EQ(parse_spec(&s, false, &p), CFLOW_PARSE_OK,
		"IPv6 first fragment");
	TEST_ASSERT_EQ(p.key.port_lo, 5, "ports");
	s.frag = 185 << 3;
	TEST_ASSERT_EQ(parse_spec(&s, false, &p), CFLOW_PARSE_FRAGMENT,
		"IPv6 later fragment");
	return 0;
}

static int
test_parse_ipv6_extensions(void)
{
	struct cflow_packet p;

	for (int n = 0; n <= 9; n++) {
		struct spec s = { .family = 6, .src = 1, .dst = 2,
			.sport = 7, .dport = 8, .proto = 6, .v6_ext = n };
		enum cflow_parse_status st = parse_spec(&s, false, &p);

		if (n <= 8) {
			TEST_ASSERT_EQ(st, CFLOW_PARSE_OK, "%d extensions", n);
			TEST_ASSERT(p.key.port_lo == 7 && p.key.proto == 6,
				"ports after %d extensions", n);
		} else {
			TEST_ASSERT_EQ(st, CFLOW_PARSE_BAD_EXT, "%d", n);
		}
	}
	{
		/* AH: length in 4-byte units, minus 2. */
		uint8_t buf[256];
		struct spec s = { .family = 6, .src = 1, .dst = 2,
			.sport = 7, .dport = 8, .proto = 17, .v6_ext = 1 };
		uint32_t len = build(buf, &s);

		buf[14 + 6] = 51;   /* first extension is AH */
		buf[14 + 40 + 1] = 0; /* (0 + 2) * 4 = 8 bytes */
		TEST_ASSERT_EQ(cflow_parse(buf, len, NULL, &p),
			CFLOW_PARSE_OK, "AH");
		TEST_ASSERT_EQ(p.key.port_lo, 7, "ports after AH");
	}
	return 0;
}

/* Every valid packet cut at every length: a malformed verdict or the
 * full packet's key, and (under ASan) never a read past the cut. */
static int
test_parse_truncation(void)
{
	static const struct spec specs[] = {
		{ 4, 1, 2, 10, 20, 6, CFLOW_TCP_SYN, 0, 0, 0, 0, false },
		{ 4, 1, 2, 10, 20, 17, 0, 2, 0x88a8, 0, 0, false },
		{ 4, 1, 2, 10, 20, 132, 0, 1, 0, 0x2000, 0, false },
		{ 4, 1, 2, 0, 0, 1, 0, 0, 0, 0, 0, false },
		{ 6, 1, 2, 10, 20, 6, CFLOW_TCP_FIN, 0, 0, 0, 3, false },
		{ 6, 1, 2, 10, 20, 136, 0, 1, 0, 1, 2, true },
		{ 6, 1, 2, 0, 0, 58, 0, 0, 0, 0, 1, false },
	};

	for (unsigned int i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		uint8_t full[256];
		uint32_t len = build(full, &specs[i]);
		struct cflow_packet ref, p;

		TEST_ASSERT_EQ(cflow_parse(full, len, NULL, &ref),
			CFLOW_PARSE_OK, "spec %u", i);
		for (uint32_t cut = 0; cut <= len; cut++) {
			uint8_t *b = malloc(cut ? cut : 1);
			enum cflow_parse_status st;

			memcpy(b, full, cut);
			st = cflow_parse(b, cut, NULL, &p);
			free(b);
			if (cut == len) {
				TEST_ASSERT_EQ(st, CFLOW_PARSE_OK, "full");
			} else if (st == CFLOW_PARSE_OK) {
				/* Only L4 bytes past the ports may be missing,
				 * for protocols that key on nothing more. */
				TEST_ASSERT(memcmp(&p.key, &ref.key,
					sizeof(p.key)) == 0,
					"spec %u cut %u: other key", i, cut);
			} else {
				TEST_ASSERT(st == CFLOW_PARSE_TRUNC_L2 ||
					st == CFLOW_PARSE_TRUNC_L3 ||
					st == CFLOW_PARSE_TRUNC_L4,
					"spec %u cut %u: %s", i, cut,
					cflow_parse_status_name(st));
			}
		}
	}
	return 0;
}

/* ---------------------------------------- addresses of unparsed packets */

/* What is done to a built frame before parsing it. */
enum mutation {
	MUT_NONE,
	MUT_TCP_OFF4,   /* TCP data offset 4 */
	MUT_L4_4B,      /* IP length and capture end 4 bytes into L4 */
	MUT_L4_2B,      /* ... 2 bytes into L4 */
	MUT_IHL4,       /* IPv4 IHL 4 */
	MUT_IHL6_CUT,   /* IPv4 IHL 6, capture ends 22 bytes into IP */
	MUT_TOTAL_LOW,  /* IPv4 total length 19 */
	MUT_VERSION,    /* IP version not the ethertype's */
	MUT_CUT_IP,     /* capture ends 1 byte short of the fixed IP header */
	MUT_CUT_EXT,    /* capture ends 4 bytes into the first extension */
	MUT_ARP,        /* ethertype ARP behind the tags */
	MUT_CUT_TAG,    /* capture ends 2 bytes into the last tag */
};

struct unparsed_case {
	const char *name;
	struct spec s;
	enum mutation mut;
	enum cflow_parse_status st;  /* today's status, unchanged */
	bool addrs;                  /* addresses reported */
};

/* The blocklist bypasses of issue 11 first, then the statuses around. */
static const struct unparsed_case unparsed_cases[] = {
	{ "v6 SYN, 9 extensions", { .family = 6, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 6, .flags = CFLOW_TCP_SYN,
		.v6_ext = 9 }, MUT_NONE, CFLOW_PARSE_BAD_EXT, true },
	{ "v4, 3 tags", { .family = 4, .src = 9, .dst = 3, .sport = 7,
		.dport = 8, .proto = 17, .vlans = 3 }, MUT_NONE,
		CFLOW_PARSE_NON_IP, true },
	{ "v4 TCP offset 4", { .family = 4, .src = 9, .dst = 3, .sport = 7,
		.dport = 8, .proto = 6 }, MUT_TCP_OFF4,
		CFLOW_PARSE_BAD_HDRLEN, true },
	{ "v4 UDP 4-byte header", { .family = 4, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 17 }, MUT_L4_4B,
		CFLOW_PARSE_TRUNC_L4, true },
	{ "v4 last fragment", { .family = 4, .src = 9, .dst = 3, .sport = 7,
		.dport = 8, .proto = 17, .frag = 185 }, MUT_NONE,
		CFLOW_PARSE_FRAGMENT, true },
	{ "v6 later fragment", { .family = 6, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 17, .v6_frag_hdr = true,
		.frag = 185 << 3 }, MUT_NONE, CFLOW_PARSE_FRAGMENT, true },
	/* Around them, with addresses. */
	{ "v6 SYN, 9 extensions, 2 tags", { .family = 6, .src = 9,
		.dst = 3, .sport = 7, .dport = 8, .proto = 6, .vlans = 2,
		.v6_ext = 9 }, MUT_NONE, CFLOW_PARSE_BAD_EXT, true },
	{ "v6, 3 tags", { .family = 6, .src = 9, .dst = 3, .sport = 7,
		.dport = 8, .proto = 6, .vlans = 3 }, MUT_NONE,
		CFLOW_PARSE_NON_IP, true },
	{ "v6, 3 tags, 9 extensions", { .family = 6, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 6, .vlans = 3,
		.v6_ext = 9 }, MUT_NONE, CFLOW_PARSE_NON_IP, true },
	{ "v4, 3 tags, QinQ outer", { .family = 4, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 6, .vlans = 3,
		.vlan_type = 0x88a8 }, MUT_NONE, CFLOW_PARSE_NON_IP, true },
	{ "v4, 8 tags", { .family = 4, .src = 9, .dst = 3, .sport = 7,
		.dport = 8, .proto = 6, .vlans = 8 }, MUT_NONE,
		CFLOW_PARSE_NON_IP, true },
	{ "v4, 3 tags, TCP offset 4", { .family = 4, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 6, .vlans = 3 },
		MUT_TCP_OFF4, CFLOW_PARSE_NON_IP, true },
	{ "v6 TCP offset 4", { .family = 6, .src = 9, .dst = 3, .sport = 7,
		.dport = 8, .proto = 6, .v6_ext = 2 }, MUT_TCP_OFF4,
		CFLOW_PARSE_BAD_HDRLEN, true },
	{ "v6 UDP 4-byte header", { .family = 6, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 17 }, MUT_L4_4B,
		CFLOW_PARSE_TRUNC_L4, true },
	{ "v4 ICMP 2-byte header", { .family = 4, .src = 9, .dst = 3,
		.proto = 1 }, MUT_L4_2B, CFLOW_PARSE_TRUNC_L4, true },
	{ "v4 TCP 4-byte header, 1 tag", { .family = 4, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 6, .vlans = 1 }, MUT_L4_4B,
		CFLOW_PARSE_TRUNC_L4, true },
	{ "v4 middle fragment", { .family = 4, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 6, .frag = 0x2000 | 185 },
		MUT_NONE, CFLOW_PARSE_FRAGMENT, true },
	{ "v6 later fragment behind 2 extensions", { .family = 6, .src = 9,
		.dst = 3, .sport = 7, .dport = 8, .proto = 6, .v6_ext = 2,
		.v6_frag_hdr = true, .frag = 185 << 3 | 1 }, MUT_NONE,
		CFLOW_PARSE_FRAGMENT, true },
	{ "v4 total length 19", { .family = 4, .src = 9, .dst = 3,
		.sport = 7, .dport = 8, .proto = 6 }, MUT_TOTAL_LOW,
		CFLOW_PARSE_BAD_LENGTH, true },
	{ "v6 extension cut", { .family = 6, .src = 9, .dst = 3, .sport = 7,
		.dport = 8, .proto = 6, .v6_ext = 1 }, MUT_CUT_EXT,
		CFLOW_PARSE_TRUNC_L3, true },
	/* Without addresses. */
	{ "v4, 9 tags", { .family = 4, .src = 9, .dst = 3, .sport = 7,
		.dport = 8, .proto = 6, .vlans = 9 }, MUT_NONE,
		CFLOW_PARSE_NON_IP, false },
	{ "v4, 3 tags, IHL 4", { .family = 4, .src = 9, .dst = 3,
		.proto = 6, .vlans = 3 }, MUT_IHL4, CFLOW_PARSE_NON_IP, false },
	{ "v4, 3 tags, IHL 6 cut", { .family = 4, .src = 9, .dst = 3,
		.proto = 6, .vlans = 3 }, MUT_IHL6_CUT, CFLOW_PARSE_NON_IP,
		false },
	{ "v6, 3 tags, version 4", { .family = 6, .src = 9, .dst = 3,
		.proto = 6, .vlans = 3 }, MUT_VERSION, CFLOW_PARSE_NON_IP,
		false },
	{ "v6, 3 tags, header cut", { .family = 6, .src = 9, .dst = 3,
		.proto = 6, .vlans = 3 }, MUT_CUT_IP, CFLOW_PARSE_NON_IP,
		false },
	{ "ARP, 3 tags", { .family = 4, .src = 9, .dst = 3, .proto = 6,
		.vlans = 3 }, MUT_ARP, CFLOW_PARSE_NON_IP, false },
	{ "3 tags, last one cut", { .family = 4, .src = 9, .dst = 3,
		.proto = 6, .vlans = 3 }, MUT_CUT_TAG, CFLOW_PARSE_NON_IP,
		false },
	{ "2 tags, last one cut", { .family = 4, .src = 9, .dst = 3,
		.proto = 6, .vlans = 2 }, MUT_CUT_TAG, CFLOW_PARSE_TRUNC_L2,
		false },
	{ "ARP", { .family = 4, .src = 9, .dst = 3, .proto = 6 }, MUT_ARP,
		CFLOW_PARSE_NON_IP, false },
	{ "v4 IHL 4", { .family = 4, .src = 9, .dst = 3, .proto = 6 },
		MUT_IHL4, CFLOW_PARSE_BAD_HDRLEN, false },
	{ "v4 IHL 6 cut", { .family = 4, .src = 9, .dst = 3, .proto = 6 },
		MUT_IHL6_CUT, CFLOW_PARSE_TRUNC_L3, false },
	{ "v4 version 6", { .family = 4, .src = 9, .dst = 3, .proto = 6 },
		MUT_VERSION, CFLOW_PARSE_BAD_VERSION, false },
	{ "v4 header cut", { .family = 4, .src = 9, .dst = 3, .proto = 6 },
		MUT_CUT_IP, CFLOW_PARSE_TRUNC_L3, false },
	{ "v6 header cut", { .family = 6, .src = 9, .dst = 3, .proto = 6 },
		MUT_CUT_IP, CFLOW_PARSE_TRUNC_L3, false },
	/* Parsed: addresses as ever, with the rest of the key. */
	{ "v4 TCP", { .family = 4, .src = 9, .dst = 3, .sport = 7,
		.dport = 8, .proto = 6, .flags = CFLOW_TCP_SYN }, MUT_NONE,
		CFLOW_PARSE_OK, true },
	{ "v6 UDP, 2 tags, first fragment", { .family = 6, .src = 9,
		.dst = 3, .sport = 7, .dport = 8, .proto = 17, .vlans = 2,
		.v6_frag_hdr = true, .frag = 1 }, MUT_NONE, CFLOW_PARSE_OK,
		true },
};

#define N_UNPARSED (sizeof(unparsed_cases) / sizeof(unparsed_cases[0]))

/* Build a case's frame into b (256 bytes); returns its length. */
static uint32_t
build_unparsed(uint8_t *b, const struct unparsed_case *c)
{
	const struct spec *s = &c->s;
	uint32_t len = build(b, s), l3 = 14 + 4 * (uint32_t)s->vlans;
	uint32_t iphdr = s->family == 4 ? 20 : 40 + 8 * (uint32_t)(s->v6_ext +
		s->v6_frag_hdr);
	uint32_t l4 = l3 + iphdr;

	switch (c->mut) {
	case MUT_NONE:
		break;
	case MUT_TCP_OFF4:
		b[l4 + 12] = 4 << 4;
		break;
	case MUT_L4_4B:
	case MUT_L4_2B:
		len = l4 + (c->mut == MUT_L4_4B ? 4 : 2);
		if (s->family == 4)
			w16(b + l3 + 2, (uint16_t)(len - l3));
		else
			w16(b + l3 + 4, (uint16_t)(len - l3 - 40));
		break;
	case MUT_IHL4:
		b[l3] = 0x44;
		break;
	case MUT_IHL6_CUT:
		b[l3] = 0x46;
		len = l3 + 22;
		break;
	case MUT_TOTAL_LOW:
		w16(b + l3 + 2, 19);
		break;
	case MUT_VERSION:
		b[l3] = s->family == 4 ? 0x65 : 0x45;
		break;
	case MUT_CUT_IP:
		len = l3 + (s->family == 4 ? 19 : 39);
		break;
	case MUT_CUT_EXT:
		len = l3 + 40 + 4;
		break;
	case MUT_ARP:
		w16(b + l3 - 2, 0x0806);
		break;
	case MUT_CUT_TAG:
		len = l3 - 2;
		break;
	}
	return len;
}

/* The key a packet with only its addresses known must carry. */
static void
addrs_key(const struct spec *s, struct cflow_key *k)
{
	uint8_t src[16] = { 0 }, dst[16] = { 0 };

	if (s->family == 4) {
		src[10] = src[11] = dst[10] = dst[11] = 0xff;
		src[12] = dst[12] = 10;
	} else {
		src[0] = dst[0] = 0x20;
	}
	src[15] = s->src;
	dst[15] = s->dst;
	cflow_key_init(k, (uint8_t)s->family, src, dst, 0, 0, 0);
}

/*
 * Issue 11: a packet whose IP header is sane reports its addresses,
 * whatever its status; everything else in it but the ethertype is zero
 * unless it parsed. The status is today's.
 */
static int
test_parse_addrs_unparsed(void)
{
	struct cflow_parse_params pp = { .vlan_in_key = true };

	for (unsigned int i = 0; i < N_UNPARSED; i++) {
		const struct unparsed_case *c = &unparsed_cases[i];
		uint8_t buf[256];
		uint32_t len = build_unparsed(buf, c);
		struct cflow_packet p, zero;
		struct cflow_key want;
		uint16_t want_type;
		uint8_t *b = malloc(len); /* ASan: no read past len */
		enum cflow_parse_status st;

		memcpy(b, buf, len);
		st = cflow_parse(b, len, &pp, &p);
		free(b);
		TEST_ASSERT_EQ(st, c->st, "%s: status %s, want %s", c->name,
			cflow_parse_status_name(st),
			cflow_parse_status_name(c->st));
		TEST_ASSERT_EQ(p.has_addrs, c->addrs, "%s: has_addrs %d",
			c->name, p.has_addrs);
		/* The type behind the tags, if they could all be walked. */
		want_type = c->mut == MUT_ARP ? 0x0806 : c->mut == MUT_CUT_TAG ||
			c->s.vlans > CFLOW_PARSE_VLAN_ADDRS_MAX ? 0 :
			c->s.family == 4 ? 0x0800 : 0x86dd;
		TEST_ASSERT_EQ(p.ethertype, want_type, "%s: ethertype %#x",
			c->name, p.ethertype);
		memset(&zero, 0, sizeof(zero));
		zero.ethertype = want_type;
		if (!c->addrs) {
			TEST_ASSERT(memcmp(&p, &zero, sizeof(p)) == 0,
				"%s: no addresses, not zero", c->name);
			continue;
		}
		addrs_key(&c->s, &want);
		if (st == CFLOW_PARSE_OK) {
			TEST_ASSERT(memcmp(p.key.addr_lo, want.addr_lo, 16) == 0
				&& memcmp(p.key.addr_hi, want.addr_hi, 16) == 0
				&& p.key.family == want.family,
				"%s: addresses", c->name);
			continue;
		}
		/* Addresses (lower first) and family; no ports, protocol,
		 * VLAN ids, flags or class. */
		TEST_ASSERT(memcmp(&p.key, &want, sizeof(want)) == 0,
			"%s: key", c->name);
		TEST_ASSERT(p.tcp_flags == 0 && p.proto_class == 0,
			"%s: flags %u class %u", c->name, p.tcp_flags,
			p.proto_class);
	}
	return 0;
}

/*
 * The tracker is blind to the addresses of unparsed packets: each case's
 * verdict and counters are today's (non-OK statuses untracked and counted
 * by status), through cflow_track_burst() and through cflow_track_parsed()
 * with the parser's output, one packet at a time and as one burst.
 */
static int
test_track_unparsed_counters(void)
{
	/* Today's counts for unparsed_cases: 36 packets, 2 of them new
	 * flows; 14 non-IP, 4 fragments; malformed by status. */
	static const uint64_t want_malformed[CFLOW_PARSE_STATUS_MAX] = {
		[CFLOW_PARSE_TRUNC_L2] = 1,
		[CFLOW_PARSE_TRUNC_L3] = 4,
		[CFLOW_PARSE_TRUNC_L4] = 4,
		[CFLOW_PARSE_BAD_VERSION] = 1,
		[CFLOW_PARSE_BAD_HDRLEN] = 3,
		[CFLOW_PARSE_BAD_LENGTH] = 1,
		[CFLOW_PARSE_BAD_EXT] = 2,
	};
	static uint8_t bufs[N_UNPARSED][256];
	struct cflow_input in[N_UNPARSED];
	struct cflow_packet pkts[N_UNPARSED];
	enum cflow_parse_status status[N_UNPARSED];
	enum cflow_verdict v[N_UNPARSED];
	struct cflow_counters c[3];
	struct cflow_tracker *t[3];

	for (unsigned int i = 0; i < N_UNPARSED; i++) {
		in[i] = (struct cflow_input){ .data = bufs[i],
			.time_ns = S + i };
		in[i].len = build_unparsed(bufs[i], &unparsed_cases[i]);
		in[i].wire_len = in[i].len;
		status[i] = cflow_parse(bufs[i], in[i].len, NULL, &pkts[i]);
	}
	for (int k = 0; k < 3; k++)
		t[k] = tracker(1000, 12, 10, CFLOW_FULL_EVICT);
	cflow_track_burst(t[0], in, N_UNPARSED, v);
	cflow_track_parsed(t[1], in, pkts, status, N_UNPARSED, NULL, NULL);
	for (unsigned int i = 0; i < N_UNPARSED; i++) {
		enum cflow_verdict one, want;

		cflow_track_burst(t[2], &in[i], 1, &one);
		switch (unparsed_cases[i].st) {
		case CFLOW_PARSE_OK:
			want = CFLOW_NEW;
			break;
		case CFLOW_PARSE_NON_IP:
			want = CFLOW_UNTRACKED_NON_IP;
			break;
		case CFLOW_PARSE_FRAGMENT:
			want = CFLOW_UNTRACKED_FRAGMENT;
			break;
		default:
			want = CFLOW_UNTRACKED_MALFORMED;
		}
		TEST_ASSERT(v[i] == want && one == want, "%s: verdict %d %d",
			unparsed_cases[i].name, v[i], one);
	}
	for (int k = 0; k < 3; k++) {
		cflow_counters_get(t[k], &c[k]);
		TEST_ASSERT_EQ(invariants(t[k]), 0, "invariants %d", k);
		TEST_ASSERT(c[k].packets == 36 && c[k].non_ip == 14 &&
			c[k].fragments == 4 && c[k].flows_new == 2 &&
			c[k].flows_seen == 0 && c[k].active == 2,
			"tracker %d: counters", k);
		TEST_ASSERT(memcmp(c[k].malformed, want_malformed,
			sizeof(want_malformed)) == 0,
			"tracker %d: malformed counters", k);
		cflow_tracker_free(t[k]);
	}
	return 0;
}

/* A frame of len bytes (the rest of buf zero) cut at cut: the same parse
 * as the whole frame? */
static int
same_parse_cut(const uint8_t *frame, uint32_t len, uint32_t cut,
		const char *what)
{
	struct cflow_parse_params pp = { .vlan_in_key = true };
	struct cflow_packet whole, part;
	enum cflow_parse_status sw, sp;
	uint8_t *b = malloc(cut);

	memcpy(b, frame, cut);
	sw = cflow_parse(frame, len, &pp, &whole);
	sp = cflow_parse(b, cut, &pp, &part);
	free(b);
	TEST_ASSERT(sw == sp && memcmp(&whole, &part, sizeof(whole)) == 0,
		"%s: %s whole, %s cut at %u", what,
		cflow_parse_status_name(sw), cflow_parse_status_name(sp), cut);
	return 0;
}

/*
 * CFLOW_PARSE_MAX_HDR: a frame cut to it parses as the whole frame. The
 * worst case on Ethernet (2 tags, IPv6 with 8 extensions of 2048 bytes,
 * TCP) needs every byte of ETH_MAX_HDR, the bound less the 6 bytes by
 * which LINUX_SLL2's header is longer (test_parse_link_max_hdr); and
 * every case above, with 20000 bytes behind it, parses the same cut to
 * the bound.
 */
/* Without decapsulation: CFLOW_PARSE_MAX_HDR less the tunnel header and
 * the inner packet (test_parse_tunnel_max_hdr checks the rest). */
#define NODECAP_MAX_HDR (CFLOW_PARSE_LINK_HDR_MAX + 4 * CFLOW_PARSE_VLAN_MAX + \
	CFLOW_PARSE_IP_MAX_HDR)
#define ETH_MAX_HDR (NODECAP_MAX_HDR - (CFLOW_PARSE_LINK_HDR_MAX - 14))

static int
test_parse_max_hdr(void)
{
	const uint32_t big = CFLOW_PARSE_MAX_HDR + 4000;
	uint8_t *f = calloc(1, big);
	struct cflow_packet p;
	uint32_t off = 12, l3;
	uint8_t *b;

	TEST_ASSERT(f != NULL, "alloc");
	TEST_ASSERT_EQ(CFLOW_PARSE_MAX_HDR, 53416, "the bound");
	TEST_ASSERT_EQ(NODECAP_MAX_HDR, 16472, "the bound without decap");
	TEST_ASSERT_EQ(ETH_MAX_HDR, 16466, "Ethernet's bound");
	for (int k = 0; k < CFLOW_PARSE_VLAN_MAX; k++) {
		w16(f + off, 0x8100);
		w16(f + off + 2, (uint16_t)(100 + k));
		off += 4;
	}
	w16(f + off, 0x86dd);
	l3 = off + 2;
	f[l3] = 0x60;
	w16(f + l3 + 4, (uint16_t)(big - l3 - 40));
	f[l3 + 6] = 60;
	f[l3 + 8] = 0x20;
	f[l3 + 23] = 1;
	f[l3 + 24] = 0x20;
	f[l3 + 39] = 2;
	off = l3 + 40;
	for (int k = 0; k < CFLOW_PARSE_IPV6_EXT_MAX; k++) {
		f[off] = k + 1 < CFLOW_PARSE_IPV6_EXT_MAX ? 60 : 6;
		f[off + 1] = 255; /* (255 + 1) * 8 bytes */
		off += 2048;
	}
	w16(f + off, 1234);
	w16(f + off + 2, 80);
	f[off + 12] = 5 << 4;
	f[off + 13] = CFLOW_TCP_SYN;
	TEST_ASSERT_EQ(off + 20, (uint32_t)ETH_MAX_HDR, "layout");
	TEST_ASSERT_EQ(cflow_parse(f, big, NULL, &p), CFLOW_PARSE_OK,
		"worst case");
	TEST_ASSERT(p.key.port_lo == 1234 && p.key.port_hi == 80, "ports");
	TEST_ASSERT_EQ(same_parse_cut(f, big, ETH_MAX_HDR,
		"worst case"), 0, "worst case");
	TEST_ASSERT_EQ(same_parse_cut(f, big, CFLOW_PARSE_MAX_HDR,
		"worst case"), 0, "worst case");
	/* One byte less is not enough: the bound is tight. */
	b = malloc(ETH_MAX_HDR - 1);
	memcpy(b, f, ETH_MAX_HDR - 1);
	TEST_ASSERT_EQ(cflow_parse(b, ETH_MAX_HDR - 1, NULL, &p),
		CFLOW_PARSE_TRUNC_L4, "one byte short");
	free(b);
	/* The same as a jumbogram (payload length 0: the capture bounds
	 * it), and with a 9th extension (bad_ext, addresses). */
	w16(f + l3 + 4, 0);
	TEST_ASSERT_EQ(same_parse_cut(f, big, CFLOW_PARSE_MAX_HDR,
		"jumbogram"), 0, "jumbogram");
	f[off - 2048] = 60;
	TEST_ASSERT_EQ(cflow_parse(f, big, NULL, &p), CFLOW_PARSE_BAD_EXT,
		"9 extensions");
	TEST_ASSERT(p.has_addrs, "9 extensions: addresses");
	TEST_ASSERT_EQ(same_parse_cut(f, big, CFLOW_PARSE_MAX_HDR,
		"9 extensions"), 0, "9 extensions");
	/* Every case of the table, and jumbograms of its IPv6 ones. */
	for (unsigned int i = 0; i < N_UNPARSED; i++) {
		const struct unparsed_case *c = &unparsed_cases[i];
		uint32_t l3c = 14 + 4 * (uint32_t)c->s.vlans;

		memset(f, 0xab, big);
		build_unparsed(f, c);
		TEST_ASSERT_EQ(same_parse_cut(f, big, CFLOW_PARSE_MAX_HDR,
			c->name), 0, "%s", c->name);
		if (c->s.family == 6 && c->mut != MUT_ARP) {
			w16(f + l3c + 4, 0);
			TEST_ASSERT_EQ(same_parse_cut(f, big,
				CFLOW_PARSE_MAX_HDR, c->name), 0,
				"%s: jumbogram", c->name);
		}
	}
	free(f);
	return 0;
}

/* ---------------------------------------------------------- link types */

/* A link type, and how its test frames are written. */
struct link_case {
	const char *name;
	enum cflow_link_type link;
	uint32_t hdr;       /* link header bytes */
	bool typed;         /* carries an ethertype: VLAN tags, ARP */
	bool big_endian;    /* NULL, LOOP: byte order of the family */
	uint8_t af6;        /* NULL, LOOP: AF_INET6 */
};

static const struct link_case link_cases[] = {
	{ "EN10MB", CFLOW_LINK_EN10MB, 14, true, false, 0 },
	{ "LINUX_SLL", CFLOW_LINK_LINUX_SLL, 16, true, false, 0 },
	{ "LINUX_SLL2", CFLOW_LINK_LINUX_SLL2, 20, true, false, 0 },
	{ "RAW", CFLOW_LINK_RAW, 0, false, false, 0 },
	{ "IPV4", CFLOW_LINK_IPV4, 0, false, false, 0 },
	{ "IPV6", CFLOW_LINK_IPV6, 0, false, false, 0 },
	{ "NULL little-endian, AF_INET6 24", CFLOW_LINK_NULL, 4, false,
		false, 24 },
	{ "NULL big-endian, AF_INET6 28", CFLOW_LINK_NULL, 4, false, true,
		28 },
	{ "NULL little-endian, AF_INET6 30", CFLOW_LINK_NULL, 4, false,
		false, 30 },
	{ "NULL big-endian, AF_INET6 30", CFLOW_LINK_NULL, 4, false, true,
		30 },
	{ "LOOP, AF_INET6 24", CFLOW_LINK_LOOP, 4, false, true, 24 },
	{ "LOOP, AF_INET6 28", CFLOW_LINK_LOOP, 4, false, true, 28 },
};

#define N_LINK (sizeof(link_cases) / sizeof(link_cases[0]))

/* A 4-byte NULL/LOOP family in the case's byte order. */
static void
put_af(uint8_t *b, uint32_t af, bool big_endian)
{
	for (int k = 0; k < 4; k++)
		b[k] = (uint8_t)(af >> 8 * (big_endian ? 3 - k : k));
}

/*
 * The Ethernet frame eth of len >= 14 bytes, as build() writes it, under
 * lc's link header into out (len + 6 bytes at least): the type field and
 * any tags behind it go to SLL's and SLL2's protocol field; the other
 * link types carry the L3 header directly (eth must be untagged IP).
 * Returns the new length.
 */
static uint32_t
relink(uint8_t *out, const uint8_t *eth, uint32_t len,
		const struct link_case *lc)
{
	uint16_t type = (uint16_t)(eth[12] << 8 | eth[13]);
	uint32_t af = type == 0x86dd ? lc->af6 : 2;

	memset(out, 0, lc->hdr);
	switch (lc->link) {
	case CFLOW_LINK_EN10MB:
		memcpy(out, eth, 14);
		break;
	case CFLOW_LINK_LINUX_SLL:
		w16(out + 2, 1);        /* ARPHRD_ETHER */
		w16(out + 4, 6);        /* address length */
		out[6] = 0x02;
		w16(out + 14, type);
		break;
	case CFLOW_LINK_LINUX_SLL2:
		w16(out, type);
		out[7] = 3;             /* interface index */
		w16(out + 8, 1);        /* ARPHRD_ETHER */
		out[11] = 6;
		out[12] = 0x02;
		break;
	case CFLOW_LINK_NULL:
	case CFLOW_LINK_LOOP:
		put_af(out, af, lc->big_endian);
		break;
	default:
		break;
	}
	memcpy(out + lc->hdr, eth + 14, len - 14);
	return len - 14 + lc->hdr;
}

/* Whether an Ethernet frame of case c can be written under lc's link. */
static bool
link_fits(const struct link_case *lc, const struct spec *s,
		enum mutation mut)
{
	if (lc->typed)
		return true;
	if (s->vlans != 0 || mut == MUT_ARP)
		return false;
	switch (lc->link) {
	case CFLOW_LINK_RAW:
		/* The version is the type: a wrong one is another type. */
		return mut != MUT_VERSION;
	case CFLOW_LINK_IPV4:
		return s->family == 4;
	case CFLOW_LINK_IPV6:
		return s->family == 6;
	default:
		return true;
	}
}

/*
 * Every link type parses what it carries exactly as Ethernet does: the
 * same status and the same struct cflow_packet (key, VLAN ids behind
 * SLL/SLL2, addresses of unparsed packets, ethertype), for every case of
 * the unparsed table that the link can carry and for tracked packets.
 */
static int
test_parse_link_types(void)
{
	static const struct spec specs[] = {
		{ 4, 1, 2, 10, 20, 6, CFLOW_TCP_SYN, 0, 0, 0, 0, false },
		{ 4, 1, 2, 10, 20, 17, 0, 2, 0x88a8, 0, 0, false },
		{ 4, 1, 2, 10, 20, 17, 0, 1, 0, 0, 0, false },
		{ 4, 1, 2, 0, 0, 1, 0, 0, 0, 0, 0, false },
		{ 6, 1, 2, 10, 20, 6, CFLOW_TCP_FIN, 0, 0, 0, 3, false },
		{ 6, 1, 2, 10, 20, 136, 0, 1, 0, 1, 2, true },
		{ 6, 1, 2, 0, 0, 58, 0, 0, 0, 0, 1, false },
		{ 6, 1, 2, 10, 20, 132, 0, 2, 0x9100, 0, 0, false },
	};
	const unsigned int n = sizeof(specs) / sizeof(specs[0]);
	struct cflow_parse_params eth = { .vlan_in_key = true };
	unsigned int checked = 0;

	for (unsigned int l = 0; l < N_LINK; l++) {
		const struct link_case *lc = &link_cases[l];
		struct cflow_parse_params pp = { .vlan_in_key = true,
			.link_type = lc->link };

		for (unsigned int i = 0; i < n + N_UNPARSED; i++) {
			const struct unparsed_case *c = i < n ? NULL :
				&unparsed_cases[i - n];
			const struct spec *s = c ? &c->s : &specs[i];
			uint8_t frame[512], out[512];
			struct cflow_packet want, got;
			enum cflow_parse_status sw, sg;
			uint32_t len, olen;

			if (!link_fits(lc, s, c ? c->mut : MUT_NONE))
				continue;
			len = c ? build_unparsed(frame, c) : build(frame, s);
			olen = relink(out, frame, len, lc);
			sw = parse_exact(frame, len, &eth, &want);
			sg = parse_exact(out, olen, &pp, &got);
			TEST_ASSERT(sw == sg && memcmp(&want, &got,
				sizeof(want)) == 0, "%s, %s: %s, Ethernet %s",
				lc->name, c ? c->name : "spec",
				cflow_parse_status_name(sg),
				cflow_parse_status_name(sw));
			if (!c)
				TEST_ASSERT_EQ(sg, CFLOW_PARSE_OK, "%s: spec %u",
					lc->name, i);
			checked++;
		}
	}
	printf("# %u frames, each as on Ethernet\n", checked);
	return 0;
}

/*
 * Every valid frame of every link type cut at every length: within the
 * link header, trunc_l2 and nothing else set (trunc_l3 for an empty raw
 * frame, whose version is unknown); past it, exactly what Ethernet makes
 * of the same cut. Each cut in a buffer of its exact length (ASan).
 */
static int
test_parse_link_truncation(void)
{
	static const struct spec specs[] = {
		{ 4, 1, 2, 10, 20, 6, CFLOW_TCP_SYN, 0, 0, 0, 0, false },
		{ 4, 1, 2, 10, 20, 17, 0, 2, 0x88a8, 0, 0, false },
		{ 4, 1, 2, 10, 20, 132, 0, 1, 0, 0x2000, 0, false },
		{ 4, 1, 2, 0, 0, 1, 0, 0, 0, 0, 0, false },
		{ 6, 1, 2, 10, 20, 6, CFLOW_TCP_FIN, 0, 0, 0, 3, false },
		{ 6, 1, 2, 10, 20, 136, 0, 1, 0, 1, 2, true },
		{ 6, 1, 2, 0, 0, 58, 0, 0, 0, 0, 1, false },
	};
	struct cflow_parse_params eth = { .vlan_in_key = true };

	for (unsigned int l = 0; l < N_LINK; l++) {
		const struct link_case *lc = &link_cases[l];
		struct cflow_parse_params pp = { .vlan_in_key = true,
			.link_type = lc->link };

		for (unsigned int i = 0; i < sizeof(specs) / sizeof(specs[0]);
				i++) {
			uint8_t frame[512], out[512];
			uint32_t len = build(frame, &specs[i]);
			uint32_t olen;

			if (!link_fits(lc, &specs[i], MUT_NONE))
				continue;
			olen = relink(out, frame, len, lc);
			for (uint32_t cut = 0; cut <= olen; cut++) {
				struct cflow_packet want, got, zero;
				enum cflow_parse_status sw, sg;

				memset(&zero, 0, sizeof(zero));
				sg = parse_exact(out, cut, &pp, &got);
				if (cut < lc->hdr || (cut == 0 &&
						lc->link == CFLOW_LINK_RAW)) {
					TEST_ASSERT(sg == (cut < lc->hdr ?
						CFLOW_PARSE_TRUNC_L2 :
						CFLOW_PARSE_TRUNC_L3) &&
						memcmp(&got, &zero,
						sizeof(got)) == 0,
						"%s spec %u cut %u: %s",
						lc->name, i, cut,
						cflow_parse_status_name(sg));
					continue;
				}
				sw = parse_exact(frame, cut - lc->hdr + 14,
					&eth, &want);
				TEST_ASSERT(sw == sg && memcmp(&want, &got,
					sizeof(want)) == 0,
					"%s spec %u cut %u: %s, Ethernet %s",
					lc->name, i, cut,
					cflow_parse_status_name(sg),
					cflow_parse_status_name(sw));
				TEST_ASSERT(sg == CFLOW_PARSE_OK ||
					sg == CFLOW_PARSE_TRUNC_L2 ||
					sg == CFLOW_PARSE_TRUNC_L3 ||
					sg == CFLOW_PARSE_TRUNC_L4 ||
					(sg == CFLOW_PARSE_FRAGMENT && i == 2),
					"%s spec %u cut %u: %s", lc->name, i,
					cut, cflow_parse_status_name(sg));
			}
		}
	}
	return 0;
}

/* One frame under a link type: its status, ethertype and has_addrs. */
static int
link_expect(const char *what, enum cflow_link_type link, const uint8_t *f,
		uint32_t len, enum cflow_parse_status st, uint16_t type,
		bool addrs)
{
	struct cflow_parse_params pp = { .link_type = link };
	struct cflow_packet p;
	enum cflow_parse_status got = parse_exact(f, len, &pp, &p);

	TEST_ASSERT(got == st && p.ethertype == type && p.has_addrs == addrs,
		"%s: %s ethertype %#x addrs %d, want %s %#x %d", what,
		cflow_parse_status_name(got), p.ethertype, p.has_addrs,
		cflow_parse_status_name(st), type, addrs);
	if (!addrs) {
		struct cflow_packet zero;

		memset(&zero, 0, sizeof(zero));
		zero.ethertype = type;
		TEST_ASSERT(memcmp(&p, &zero, sizeof(p)) == 0,
			"%s: more than the ethertype set", what);
	}
	return 0;
}

/*
 * The families and protocols around IP: NULL in either byte order, LOOP
 * in network order only, AF_INET6 as BSDs and macOS number it, and every
 * family, protocol or version that is not IP.
 */
static int
test_parse_link_non_ip(void)
{
	static const struct {
		uint8_t b[4];
		uint16_t null_type;  /* under NULL; 0: not IP */
		uint16_t loop_type;  /* under LOOP */
	} afs[] = {
		{ { 2, 0, 0, 0 }, 0x0800, 0 },
		{ { 0, 0, 0, 2 }, 0x0800, 0x0800 },
		{ { 24, 0, 0, 0 }, 0x86dd, 0 },
		{ { 0, 0, 0, 24 }, 0x86dd, 0x86dd },
		{ { 28, 0, 0, 0 }, 0x86dd, 0 },
		{ { 0, 0, 0, 28 }, 0x86dd, 0x86dd },
		{ { 30, 0, 0, 0 }, 0x86dd, 0 },
		{ { 0, 0, 0, 30 }, 0x86dd, 0x86dd },
		{ { 0, 0, 0, 0 }, 0, 0 },
		{ { 10, 0, 0, 0 }, 0, 0 },          /* Linux AF_INET6 */
		{ { 0, 0, 0, 10 }, 0, 0 },
		{ { 7, 0, 0, 0 }, 0, 0 },           /* AF_ISO */
		{ { 0, 0, 0, 16 }, 0, 0 },          /* AF_APPLETALK */
		{ { 2, 0, 0, 2 }, 0, 0 },           /* neither order */
		{ { 0, 2, 0, 0 }, 0, 0 },
		{ { 0, 0, 2, 0 }, 0, 0 },
		{ { 0, 0, 1, 2 }, 0, 0 },           /* 258 */
		{ { 2, 1, 0, 0 }, 0, 0 },
	};
	struct spec s4 = { .family = 4, .src = 1, .dst = 2, .sport = 3,
		.dport = 4, .proto = 17 };
	struct spec s6 = s4;
	uint8_t e4[256], e6[256], f[512];
	uint32_t l4, l6;
	char what[64];

	s6.family = 6;
	l4 = build(e4, &s4);
	l6 = build(e6, &s6);
	for (unsigned int i = 0; i < sizeof(afs) / sizeof(afs[0]); i++) {
		for (int loop = 0; loop < 2; loop++) {
			uint16_t type = loop ? afs[i].loop_type :
				afs[i].null_type;
			/* The frame behind: the IP version the family says. */
			const uint8_t *e = type == 0x86dd ? e6 : e4;
			uint32_t el = type == 0x86dd ? l6 : l4;

			memcpy(f, afs[i].b, 4);
			memcpy(f + 4, e + 14, el - 14);
			snprintf(what, sizeof(what), "%s %u.%u.%u.%u",
				loop ? "LOOP" : "NULL", afs[i].b[0],
				afs[i].b[1], afs[i].b[2], afs[i].b[3]);
			TEST_ASSERT_EQ(link_expect(what, loop ?
				CFLOW_LINK_LOOP : CFLOW_LINK_NULL, f,
				el - 14 + 4, type ? CFLOW_PARSE_OK :
				CFLOW_PARSE_NON_IP, type, type != 0), 0, "%s",
				what);
		}
	}
	/* SLL and SLL2: ARP, LLDP and tags around them are not IP. */
	for (int v2 = 0; v2 < 2; v2++) {
		enum cflow_link_type link = v2 ? CFLOW_LINK_LINUX_SLL2 :
			CFLOW_LINK_LINUX_SLL;
		uint32_t hdr = v2 ? 20 : 16, proto = v2 ? 0 : 14;

		memset(f, 0, sizeof(f));
		w16(f + proto, 0x0806);
		TEST_ASSERT_EQ(link_expect("ARP", link, f, hdr + 28,
			CFLOW_PARSE_NON_IP, 0x0806, false), 0, "ARP");
		w16(f + proto, 0x88cc);
		TEST_ASSERT_EQ(link_expect("LLDP", link, f, hdr + 40,
			CFLOW_PARSE_NON_IP, 0x88cc, false), 0, "LLDP");
		w16(f + proto, 0x0004);  /* ETH_P_802_2 */
		TEST_ASSERT_EQ(link_expect("802.2", link, f, hdr + 40,
			CFLOW_PARSE_NON_IP, 0x0004, false), 0, "802.2");
		w16(f + proto, 0x8100);
		w16(f + hdr + 2, 0x0806);
		TEST_ASSERT_EQ(link_expect("ARP, 1 tag", link, f, hdr + 32,
			CFLOW_PARSE_NON_IP, 0x0806, false), 0, "ARP tag");
		TEST_ASSERT_EQ(link_expect("tag cut", link, f, hdr + 3,
			CFLOW_PARSE_TRUNC_L2, 0, false), 0, "tag cut");
		TEST_ASSERT_EQ(link_expect("header only", link, f, hdr - 1,
			CFLOW_PARSE_TRUNC_L2, 0, false), 0, "header cut");
		/* An IPv4 header under the IPv6 type. */
		memset(f, 0, sizeof(f));
		w16(f + proto, 0x86dd);
		memcpy(f + hdr, e4 + 14, l4 - 14);
		TEST_ASSERT_EQ(link_expect("v4 under 0x86dd", link, f,
			hdr + l4 - 14, CFLOW_PARSE_BAD_VERSION, 0x86dd, false), 0,
			"version");
	}
	/* Raw: the version is the type; IPV4 and IPV6 insist on theirs. */
	for (unsigned int v = 0; v < 16; v++) {
		memcpy(f, e4 + 14, l4 - 14);
		f[0] = (uint8_t)(v << 4 | 5);
		if (v == 4 || v == 6)
			continue;
		snprintf(what, sizeof(what), "RAW version %u", v);
		TEST_ASSERT_EQ(link_expect(what, CFLOW_LINK_RAW, f, l4 - 14,
			CFLOW_PARSE_BAD_VERSION, 0, false), 0, "%s", what);
	}
	TEST_ASSERT_EQ(link_expect("RAW empty", CFLOW_LINK_RAW, f, 0,
		CFLOW_PARSE_TRUNC_L3, 0, false), 0, "RAW empty");
	TEST_ASSERT_EQ(link_expect("IPV4 empty", CFLOW_LINK_IPV4, f, 0,
		CFLOW_PARSE_TRUNC_L3, 0x0800, false), 0, "IPV4 empty");
	TEST_ASSERT_EQ(link_expect("IPV6 empty", CFLOW_LINK_IPV6, f, 0,
		CFLOW_PARSE_TRUNC_L3, 0x86dd, false), 0, "IPV6 empty");
	TEST_ASSERT_EQ(link_expect("IPV4 carrying IPv6", CFLOW_LINK_IPV4,
		e6 + 14, l6 - 14, CFLOW_PARSE_BAD_VERSION, 0x0800, false), 0,
		"IPV4 v6");
	TEST_ASSERT_EQ(link_expect("IPV6 carrying IPv4", CFLOW_LINK_IPV6,
		e4 + 14, l4 - 14, CFLOW_PARSE_BAD_VERSION, 0x86dd, false), 0,
		"IPV6 v4");
	TEST_ASSERT_EQ(link_expect("RAW IPv6", CFLOW_LINK_RAW, e6 + 14,
		l6 - 14, CFLOW_PARSE_OK, 0x86dd, true), 0, "RAW v6");
	/* A link type out of range: nothing is IP. */
	TEST_ASSERT_EQ(link_expect("link type out of range",
		CFLOW_LINK_TYPE_MAX, e4, l4, CFLOW_PARSE_NON_IP, 0, false), 0,
		"out of range");
	TEST_ASSERT_EQ(link_expect("link type -1", (enum cflow_link_type)-1,
		e4, l4, CFLOW_PARSE_NON_IP, 0, false), 0, "out of range");
	return 0;
}

/* libpcap's values to link types, and their names. */
static int
test_link_type_from_dlt(void)
{
	static const struct {
		int dlt;
		int link;
		const char *name;
	} map[] = {
		{ 1, CFLOW_LINK_EN10MB, "EN10MB" },
		{ 113, CFLOW_LINK_LINUX_SLL, "LINUX_SLL" },
		{ 276, CFLOW_LINK_LINUX_SLL2, "LINUX_SLL2" },
#ifdef __OpenBSD__
		{ 14, CFLOW_LINK_RAW, "RAW" },
		{ 12, CFLOW_LINK_LOOP, "LOOP" },
#else
		{ 12, CFLOW_LINK_RAW, "RAW" },
		{ 14, -EINVAL, NULL },
#endif
		{ 101, CFLOW_LINK_RAW, "RAW" },     /* LINKTYPE_RAW */
		{ 228, CFLOW_LINK_IPV4, "IPV4" },
		{ 229, CFLOW_LINK_IPV6, "IPV6" },
		{ 0, CFLOW_LINK_NULL, "NULL" },
		{ 108, CFLOW_LINK_LOOP, "LOOP" },
		{ 105, -EINVAL, NULL },             /* DLT_IEEE802_11 */
		{ 127, -EINVAL, NULL },             /* IEEE802_11_RADIO */
		{ 9, -EINVAL, NULL },               /* DLT_PPP */
		{ 6, -EINVAL, NULL },               /* DLT_IEEE802 */
		{ 2, -EINVAL, NULL },
		{ -1, -EINVAL, NULL },
		{ 1 << 16, -EINVAL, NULL },
	};
	struct cflow_parse_params zero;

	for (unsigned int i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		int got = cflow_link_type_from_dlt(map[i].dlt);

		TEST_ASSERT_EQ(got, map[i].link, "DLT %d: %d", map[i].dlt,
			got);
		if (map[i].name != NULL)
			TEST_ASSERT(strcmp(cflow_link_type_name(got),
				map[i].name) == 0, "DLT %d: %s", map[i].dlt,
				cflow_link_type_name(got));
	}
	for (int l = 0; l < CFLOW_LINK_TYPE_MAX; l++)
		TEST_ASSERT(strcmp(cflow_link_type_name(l), "unknown") != 0,
			"name of %d", l);
	TEST_ASSERT(strcmp(cflow_link_type_name(CFLOW_LINK_TYPE_MAX),
		"unknown") == 0, "out of range");
	TEST_ASSERT(strcmp(cflow_link_type_name((enum cflow_link_type)-1),
		"unknown") == 0, "negative");
	memset(&zero, 0, sizeof(zero));
	TEST_ASSERT_EQ(zero.link_type, CFLOW_LINK_EN10MB,
		"zeroed params are Ethernet");
	return 0;
}

/*
 * CFLOW_PARSE_MAX_HDR bounds every link type: the worst case under SLL2
 * (2 tags, IPv6 with 8 extensions of 2048 bytes, TCP) needs every byte
 * of it, and every other link type's worst case parses the same cut to
 * it. Each needs exactly its header more than the headerless ones.
 */
/* The worst case on Ethernet with @p tags tags, in @p big zeroed bytes:
 * IPv6 with 8 extensions of 2048 bytes, then TCP from port 1234 to 80. */
static void
worst_case(uint8_t *eth, uint32_t big, int tags)
{
	uint32_t off = 12, l3;

	for (int k = 0; k < tags; k++) {
		w16(eth + off, 0x8100);
		w16(eth + off + 2, (uint16_t)(100 + k));
		off += 4;
	}
	w16(eth + off, 0x86dd);
	l3 = off + 2;
	eth[l3] = 0x60;
	w16(eth + l3 + 4, (uint16_t)(big - l3 - 40));
	eth[l3 + 6] = 60;
	eth[l3 + 8] = 0x20;
	eth[l3 + 23] = 1;
	eth[l3 + 24] = 0x20;
	eth[l3 + 39] = 2;
	off = l3 + 40;
	for (int k = 0; k < CFLOW_PARSE_IPV6_EXT_MAX; k++) {
		eth[off] = k + 1 < CFLOW_PARSE_IPV6_EXT_MAX ? 60 : 6;
		eth[off + 1] = 255;
		off += 2048;
	}
	w16(eth + off, 1234);
	w16(eth + off + 2, 80);
	eth[off + 12] = 5 << 4;
	eth[off + 13] = CFLOW_TCP_SYN;
}

static int
test_parse_link_max_hdr(void)
{
	const uint32_t big = CFLOW_PARSE_MAX_HDR + 4000;
	uint8_t *eth = malloc(big), *f = malloc(big + 8);

	TEST_ASSERT(eth != NULL && f != NULL, "alloc");
	for (unsigned int l = 0; l < N_LINK; l++) {
		const struct link_case *lc = &link_cases[l];
		struct cflow_parse_params pp = { .vlan_in_key = true,
			.link_type = lc->link };
		struct cflow_packet whole, part;
		enum cflow_parse_status sw, sp;
		int tags = lc->typed ? CFLOW_PARSE_VLAN_MAX : 0;
		uint32_t len, need;

		if (lc->link == CFLOW_LINK_IPV4)
			continue;
		memset(eth, 0, big);
		worst_case(eth, big, tags);
		len = relink(f, eth, big, lc);
		need = lc->hdr + 4 * (uint32_t)tags + 40 +
			CFLOW_PARSE_IPV6_EXT_MAX * 2048 + 20;
		TEST_ASSERT(need <= CFLOW_PARSE_MAX_HDR, "%s: %u", lc->name,
			need);
		sw = cflow_parse(f, len, &pp, &whole);
		sp = parse_exact(f, CFLOW_PARSE_MAX_HDR, &pp, &part);
		TEST_ASSERT(sw == CFLOW_PARSE_OK && sp == sw &&
			memcmp(&whole, &part, sizeof(whole)) == 0,
			"%s: %s whole, %s cut to the bound", lc->name,
			cflow_parse_status_name(sw),
			cflow_parse_status_name(sp));
		TEST_ASSERT(whole.key.port_lo == 1234 &&
			whole.key.port_hi == 80, "%s: ports", lc->name);
		sp = parse_exact(f, need, &pp, &part);
		TEST_ASSERT_EQ(sp, CFLOW_PARSE_OK, "%s: %u bytes", lc->name,
			need);
		sp = parse_exact(f, need - 1, &pp, &part);
		TEST_ASSERT_EQ(sp, CFLOW_PARSE_TRUNC_L4, "%s: %u bytes",
			lc->name, need - 1);
		if (lc->link == CFLOW_LINK_LINUX_SLL2)
			TEST_ASSERT_EQ(need, (uint32_t)NODECAP_MAX_HDR,
				"SLL2: the bound without decap is tight");
	}
	free(eth);
	free(f);
	return 0;
}

/*
 * The tracker parses with its params' link type: a TCP session opened
 * and closed by FIN under each link type counts as on Ethernet.
 */
static int
test_track_link_types(void)
{
	static const uint8_t seq[] = { CFLOW_TCP_SYN,
		CFLOW_TCP_SYN | CFLOW_TCP_ACK, CFLOW_TCP_ACK,
		CFLOW_TCP_FIN | CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK };

	for (unsigned int l = 0; l < N_LINK; l++) {
		const struct link_case *lc = &link_cases[l];
		struct cflow_tracker_params tp;
		struct cflow_counters c;
		struct cflow_tracker *t;

		cflow_tracker_params_init(&tp, 1000);
		tp.parse.link_type = lc->link;
		t = cflow_tracker_create(&tp);
		TEST_ASSERT(t != NULL, "%s: create", lc->name);
		for (unsigned int k = 0; k < sizeof(seq); k++) {
			struct spec s = { .family = lc->link ==
				CFLOW_LINK_IPV4 || l % 2 ? 4 : 6,
				.src = 1, .dst = 2, .sport = 1000, .dport = 80,
				.proto = 6, .flags = seq[k] };
			uint8_t frame[256], out[512];
			struct cflow_input in = { .data = out,
				.time_ns = S + k * 1000 };
			enum cflow_verdict v, want;

			if (lc->link == CFLOW_LINK_IPV6)
				s.family = 6;
			if (k % 2) {
				s.src = 2;
				s.dst = 1;
				s.sport = 80;
				s.dport = 1000;
			}
			in.len = relink(out, frame, build(frame, &s), lc);
			in.wire_len = in.len;
			cflow_track_burst(t, &in, 1, &v);
			want = k == 0 ? CFLOW_NEW : k == 3 ? CFLOW_CLOSING :
				CFLOW_SEEN;
			TEST_ASSERT_EQ(v, want, "%s: packet %u verdict %d",
				lc->name, k, v);
		}
		cflow_counters_get(t, &c);
		TEST_ASSERT(c.packets == 5 && c.flows_new == 1 &&
			c.flows_closed == 1 && c.flows_seen == 3 &&
			c.active == 0 && cflow_malformed_total(&c) == 0,
			"%s: counters", lc->name);
		cflow_tracker_free(t);
	}
	return 0;
}

/* ------------------------------------------------------------ tunnels */

#define RTE_DIM_(a) (sizeof(a) / sizeof((a)[0]))

enum tun_kind {
	T_VXLAN, T_GENEVE_TEB, T_GENEVE_IP, T_GRE, T_GRE_K, T_GRE_KS,
	T_GRE_CKS_TEB, T_GTPU, T_GTPU_S, T_GTPU_EXT, T_MAX,
};

static const struct tun_case {
	const char *name;
	unsigned int bit;
	bool eth;       /* carries an inner Ethernet frame */
	bool gre;
	uint16_t port;  /* UDP dport */
} tun_cases[T_MAX] = {
	[T_VXLAN] = { "vxlan", CFLOW_DECAP_VXLAN, true, false, 4789 },
	[T_GENEVE_TEB] = { "geneve+opts, Ethernet", CFLOW_DECAP_GENEVE, true,
		false, 6081 },
	[T_GENEVE_IP] = { "geneve, IP", CFLOW_DECAP_GENEVE, false, false,
		6081 },
	[T_GRE] = { "gre", CFLOW_DECAP_GRE, false, true, 0 },
	[T_GRE_K] = { "gre+key", CFLOW_DECAP_GRE, false, true, 0 },
	[T_GRE_KS] = { "gre+key+seq", CFLOW_DECAP_GRE, false, true, 0 },
	[T_GRE_CKS_TEB] = { "gre+csum+key+seq, Ethernet", CFLOW_DECAP_GRE,
		true, true, 0 },
	[T_GTPU] = { "gtpu", CFLOW_DECAP_GTPU, false, false, 2152 },
	[T_GTPU_S] = { "gtpu+seq", CFLOW_DECAP_GTPU, false, false, 2152 },
	[T_GTPU_EXT] = { "gtpu+2 extensions", CFLOW_DECAP_GTPU, false, false,
		2152 },
};

/*
 * Wrap an inner frame (from build(): Ethernet, 14 bytes of header; the
 * IP tunnels take what follows it) in Ethernet, IPv4 from 192.0.0.1 to
 * 192.0.0.2 and the tunnel. Returns the frame's length; *l4 is where the
 * outer L4 header starts, *hdr_end where the tunnel header ends.
 */
static uint32_t
tun_build(uint8_t *b, enum tun_kind kind, const uint8_t *inner,
		uint32_t ilen, uint32_t *l4, uint32_t *hdr_end)
{
	const struct tun_case *c = &tun_cases[kind];
	const uint8_t *in = c->eth ? inner : inner + 14;
	uint32_t inlen = c->eth ? ilen : ilen - 14, off = 34;
	uint16_t itype = (uint16_t)(inner[12] << 8 | inner[13]);

	memset(b, 0, 128);
	w16(b + 12, 0x0800);
	b[14] = 0x45;
	b[14 + 8] = 64;
	b[14 + 9] = c->gre ? 47 : 17;
	b[14 + 12] = 192;
	b[14 + 15] = 1;
	b[14 + 16] = 192;
	b[14 + 19] = 2;
	*l4 = off;
	if (!c->gre) {
		w16(b + off, 50000);
		w16(b + off + 2, c->port);
		off += 8;
	}
	switch (kind) {
	case T_VXLAN:
		b[off] = 0x08;
		b[off + 6] = 1; /* VNI 256 */
		off += 8;
		break;
	case T_GENEVE_TEB:
		b[off] = 2; /* 8 bytes of options */
		w16(b + off + 2, 0x6558);
		w16(b + off + 8, 0x0102);
		b[off + 10] = 0x80;
		b[off + 11] = 1;
		off += 16;
		break;
	case T_GENEVE_IP:
		w16(b + off + 2, itype);
		off += 8;
		break;
	case T_GRE:
		w16(b + off + 2, itype);
		off += 4;
		break;
	case T_GRE_K:
		w16(b + off, 0x2000);
		w16(b + off + 2, itype);
		off += 8;
		break;
	case T_GRE_KS:
		w16(b + off, 0x3000);
		w16(b + off + 2, itype);
		off += 12;
		break;
	case T_GRE_CKS_TEB:
		w16(b + off, 0xb000);
		w16(b + off + 2, 0x6558);
		off += 16;
		break;
	case T_GTPU:
		b[off] = 0x30;
		b[off + 1] = 255;
		w16(b + off + 2, (uint16_t)inlen);
		off += 8;
		break;
	case T_GTPU_S:
		b[off] = 0x32;
		b[off + 1] = 255;
		w16(b + off + 2, (uint16_t)(inlen + 4));
		off += 12;
		break;
	case T_GTPU_EXT:
		b[off] = 0x34;
		b[off + 1] = 255;
		w16(b + off + 2, (uint16_t)(inlen + 4 + 4 + 8));
		b[off + 11] = 0x85;
		b[off + 12] = 1;      /* 4 bytes */
		b[off + 15] = 0x40;
		b[off + 16] = 2;      /* 8 bytes */
		b[off + 23] = 0;
		off += 24;
		break;
	default:
		break;
	}
	*hdr_end = off;
	memcpy(b + off, in, inlen);
	off += inlen;
	w16(b + 16, (uint16_t)(off - 14));
	if (!c->gre)
		w16(b + *l4 + 4, (uint16_t)(off - *l4));
	return off;
}

static const struct spec tun_inner[] = {
	{ .family = 4, .src = 1, .dst = 2, .sport = 1234, .dport = 80,
		.proto = 6, .flags = CFLOW_TCP_SYN },
	{ .family = 6, .src = 3, .dst = 4, .sport = 53, .dport = 4000,
		.proto = 17, .v6_ext = 2 },
	{ .family = 4, .src = 5, .dst = 6, .proto = 1 },
	{ .family = 4, .src = 7, .dst = 8, .sport = 9, .dport = 10,
		.proto = 6, .flags = CFLOW_TCP_FIN, .vlans = 1 },
};

/* The inner packet as it parses alone, reported behind the outer IPv4
 * ethertype. */
static enum cflow_parse_status
tun_reference(enum tun_kind kind, int family, const uint8_t *inner,
		uint32_t len, struct cflow_packet *p)
{
	const struct tun_case *c = &tun_cases[kind];
	struct cflow_parse_params pp = { .link_type = CFLOW_LINK_EN10MB };
	enum cflow_parse_status st;

	if (!c->eth)
		pp.link_type = kind >= T_GTPU ? CFLOW_LINK_RAW :
			family == 6 ? CFLOW_LINK_IPV6 : CFLOW_LINK_IPV4;
	st = cflow_parse(inner, len, &pp, p);
	p->ethertype = 0x0800;
	p->tunnel = (uint8_t)c->bit;
	return st;
}

/* The length of a tunnel frame's outer IP packet (after Ethernet), as
 * its header gives it: what a decapsulated packet's ip_len is. */
static uint32_t
tun_outer_ip_len(const uint8_t *f)
{
	if (f[12] == 0x08 && f[13] == 0x00)
		return (uint32_t)(f[16] << 8 | f[17]);
	return 40 + (uint32_t)(f[18] << 8 | f[19]);
}

/*
 * Each tunnel, each inner packet: with its decap bit, the inner packet's
 * key (as it parses alone), the outer ethertype; without it (decap off,
 * or only the other kinds), the outer flow as ever.
 */
static int
test_parse_tunnels(void)
{
	for (int k = 0; k < T_MAX; k++) {
		const struct tun_case *c = &tun_cases[k];

		for (unsigned int i = 0; i < RTE_DIM_(tun_inner); i++) {
			struct cflow_parse_params on = { .decap = c->bit };
			struct cflow_parse_params others = {
				.decap = CFLOW_DECAP_ALL & ~c->bit };
			struct cflow_packet p, ref, outer, p2, bp[2];
			struct cflow_input in[2] = { { 0 } };
			enum cflow_parse_status bst[2];
			uint8_t inner[256], f[512];
			uint32_t ilen, len, l4, hdr;
			enum cflow_parse_status st, rst;

			if (!c->eth && tun_inner[i].vlans != 0)
				continue;
			ilen = build(inner, &tun_inner[i]);
			len = tun_build(f, k, inner, ilen, &l4, &hdr);
			st = cflow_parse(f, len, &on, &p);
			rst = tun_reference(k, tun_inner[i].family,
				inner + (c->eth ? 0 : 14),
				ilen - (c->eth ? 0 : 14), &ref);
			ref.ip_len = tun_outer_ip_len(f);
			TEST_ASSERT(st == CFLOW_PARSE_OK && rst == st &&
				memcmp(&p, &ref, sizeof(p)) == 0,
				"%s/%u: %s", c->name, i,
				cflow_parse_status_name(st));
			TEST_ASSERT_EQ(cflow_parse(f, len, &on, &p2), st,
				"%s/%u: again", c->name, i);
			/* the burst entry with decapsulation on: the tunnel
			 * frame (the general path), then its inner frame
			 * alone (the fast path's, when it is TCP or UDP) */
			in[0].data = f;
			in[0].len = len;
			in[1].data = inner;
			in[1].len = ilen;
			cflow_parse_burst(in, 2, &on, bp, bst);
			TEST_ASSERT(bst[0] == st &&
				memcmp(&bp[0], &p, sizeof(p)) == 0 &&
				bst[1] == cflow_parse(inner, ilen, &on, &p2) &&
				memcmp(&bp[1], &p2, sizeof(p2)) == 0,
				"%s/%u: burst", c->name, i);
			/* Off: the outer flow. */
			TEST_ASSERT_EQ(cflow_parse(f, len, NULL, &outer),
				CFLOW_PARSE_OK, "%s/%u: off", c->name, i);
			TEST_ASSERT(outer.key.proto == (c->gre ? 47 : 17) &&
				outer.key.addr_lo[15] == 1 &&
				outer.key.addr_hi[15] == 2 &&
				outer.key.port_hi == c->port, "%s/%u: outer key",
				c->name, i);
			TEST_ASSERT_EQ(cflow_parse(f, len, &others, &p2),
				CFLOW_PARSE_OK, "%s/%u: others", c->name, i);
			TEST_ASSERT(memcmp(&p2, &outer, sizeof(p2)) == 0,
				"%s/%u: only the others decapsulated", c->name,
				i);
		}
	}
	return 0;
}

/*
 * Every cut of every tunnel frame: in front of the outer L4 header, as
 * without decap; within the tunnel header, trunc_l4 with the outer
 * addresses; behind it, the inner packet cut as much, as it parses
 * alone (its addresses or none).
 */
static int
test_parse_tunnel_truncation(void)
{
	for (int k = 0; k < T_MAX; k++) {
		const struct tun_case *c = &tun_cases[k];
		struct cflow_parse_params on = { .decap = CFLOW_DECAP_ALL };

		for (unsigned int i = 0; i < RTE_DIM_(tun_inner); i++) {
			uint8_t inner[256], f[512];
			uint32_t ilen, len, l4, hdr;

			if (!c->eth && tun_inner[i].vlans != 0)
				continue;
			ilen = build(inner, &tun_inner[i]);
			len = tun_build(f, k, inner, ilen, &l4, &hdr);
			for (uint32_t cut = 0; cut <= len; cut++) {
				struct cflow_packet p, ref;
				enum cflow_parse_status st, rst;
				uint8_t *b = malloc(cut ? cut : 1);

				memcpy(b, f, cut);
				st = cflow_parse(b, cut, &on, &p);
				if (cut < l4) {
					rst = cflow_parse(b, cut, NULL, &ref);
				} else if (cut < hdr) {
					rst = cflow_parse(b, cut, NULL, &ref);
					/* The outer addresses only. */
					ref.key.port_lo = 0;
					ref.key.port_hi = 0;
					ref.key.proto = 0;
					ref.tcp_flags = 0;
					ref.proto_class = 0;
					ref.hop_limit = 0;
					ref.ip_len = 0;
					rst = CFLOW_PARSE_TRUNC_L4;
				} else {
					rst = tun_reference(k,
						tun_inner[i].family, b + hdr,
						cut - hdr, &ref);
					if (rst == CFLOW_PARSE_OK)
						ref.ip_len =
							tun_outer_ip_len(f);
				}
				free(b);
				TEST_ASSERT(st == rst && memcmp(&p, &ref,
					sizeof(p)) == 0,
					"%s/%u cut at %u of %u: %s, want %s",
					c->name, i, cut, len,
					cflow_parse_status_name(st),
					cflow_parse_status_name(rst));
				if (cut >= l4 && cut < hdr)
					TEST_ASSERT(p.has_addrs &&
						p.key.addr_lo[15] == 1,
						"%s: outer addresses", c->name);
			}
		}
	}
	return 0;
}

/*
 * What is not decapsulated (the outer flow), what a broken tunnel header
 * is, one level only, and a non-IP inner frame.
 */
static int
test_parse_tunnel_edges(void)
{
	struct cflow_parse_params on = { .decap = CFLOW_DECAP_ALL };
	uint8_t inner[256], f[512], g[1024];
	struct cflow_packet p, outer;
	uint32_t ilen, len, l4, hdr, glen, gl4, ghdr;

	ilen = build(inner, &tun_inner[0]);
	/* Not the tunnel's header: keyed as without decap. */
	len = tun_build(f, T_VXLAN, inner, ilen, &l4, &hdr);
	f[l4 + 8] = 0; /* no I flag */
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_OK &&
		cflow_parse(f, len, NULL, &outer) == CFLOW_PARSE_OK &&
		memcmp(&p, &outer, sizeof(p)) == 0, "vxlan without I");
	len = tun_build(f, T_GENEVE_IP, inner, ilen, &l4, &hdr);
	f[l4 + 8] = 0x40; /* version 1 */
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_OK &&
		p.key.proto == 17 && p.key.port_hi == 6081, "geneve v1");
	w16(f + l4 + 10, 0x880b); /* version 0, PPP */
	f[l4 + 8] = 0;
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_OK &&
		p.key.proto == 17 && p.key.port_hi == 6081, "geneve, PPP");
	len = tun_build(f, T_GRE, inner, ilen, &l4, &hdr);
	f[l4 + 1] = 1; /* version 1 */
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_OK &&
		p.key.proto == 47, "gre v1");
	f[l4 + 1] = 0;
	f[l4] = 0x40; /* routing present (RFC 1701) */
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_OK &&
		p.key.proto == 47, "gre with routing");
	f[l4] = 0;
	w16(f + l4 + 2, 0x8847); /* MPLS */
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_OK &&
		p.key.proto == 47, "gre, MPLS");
	len = tun_build(f, T_GTPU, inner, ilen, &l4, &hdr);
	f[l4 + 9] = 1; /* echo request */
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_OK &&
		p.key.proto == 17 && p.key.port_hi == 2152, "gtpu echo");
	f[l4 + 9] = 255;
	f[l4 + 8] = 0x20; /* GTP' */
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_OK &&
		p.key.proto == 17 && p.key.port_hi == 2152, "gtp prime");
	/* GTP-U extensions: length 0, and a chain too long. */
	len = tun_build(f, T_GTPU_EXT, inner, ilen, &l4, &hdr);
	f[l4 + 8 + 16] = 0;
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_BAD_HDRLEN &&
		p.has_addrs && p.key.addr_lo[15] == 1, "gtpu extension of 0");
	{
		uint32_t o = l4 + 8;

		memset(g, 0, sizeof(g));
		memcpy(g, f, l4 + 8);
		g[o] = 0x34;
		g[o + 1] = 255;
		g[o + 11] = 0x85;
		o += 12;
		for (int e = 0; e <= CFLOW_PARSE_GTPU_EXT_MAX; e++) {
			g[o] = 1;
			g[o + 3] = 0x85;
			o += 4;
		}
		w16(g + l4 + 8 + 2, (uint16_t)(o - l4 - 16 + 40));
		glen = o + 40;
		w16(g + 16, (uint16_t)(glen - 14));
		TEST_ASSERT_EQ(cflow_parse(g, glen, &on, &p),
			CFLOW_PARSE_BAD_EXT, "gtpu: 5 extensions");
		g[o - 1] = 0; /* 5th is the last */
		TEST_ASSERT_EQ(cflow_parse(g, glen, &on, &p),
			CFLOW_PARSE_BAD_EXT, "gtpu: 5 extensions, last");
		g[o - 5] = 0; /* 4: allowed, then 44 zero bytes: version 0 */
		TEST_ASSERT_EQ(cflow_parse(g, glen, &on, &p),
			CFLOW_PARSE_BAD_VERSION, "gtpu: 4 extensions");
	}
	/* GTP-U's length field shortens what is parsed. */
	len = tun_build(f, T_GTPU, inner, ilen, &l4, &hdr);
	w16(f + l4 + 8 + 2, 10);
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_TRUNC_L3 &&
		!p.has_addrs, "gtpu length 10");
	/* One level: VXLAN in VXLAN is the inner UDP flow to 4789. */
	len = tun_build(f, T_VXLAN, inner, ilen, &l4, &hdr);
	{
		uint8_t mid[600];

		/* The whole frame f as the inner Ethernet frame. */
		memcpy(mid, f, len);
		glen = tun_build(g, T_VXLAN, mid, len, &gl4, &ghdr);
		TEST_ASSERT_EQ(cflow_parse(g, glen, &on, &p), CFLOW_PARSE_OK,
			"nested");
		TEST_ASSERT(p.key.proto == 17 && p.key.port_hi == 4789 &&
			p.key.port_lo == 50000 && p.key.addr_lo[15] == 1,
			"nested: the inner packet's own 5-tuple");
		TEST_ASSERT_EQ(cflow_parse(f, len, &on, &outer),
			CFLOW_PARSE_OK, "single");
		TEST_ASSERT(outer.key.proto == 6 && outer.key.port_hi == 80,
			"single: the inner TCP flow");
	}
	/* An inner ARP frame: non-IP, no addresses, the outer ethertype. */
	len = tun_build(f, T_VXLAN, inner, ilen, &l4, &hdr);
	w16(f + hdr + 12, 0x0806);
	TEST_ASSERT(cflow_parse(f, len, &on, &p) == CFLOW_PARSE_NON_IP &&
		!p.has_addrs && p.ethertype == 0x0800, "vxlan, ARP");
	/* vlan_in_key: the outer frame's tags, not the inner's. */
	{
		struct spec s = tun_inner[3];
		struct cflow_parse_params pv = { .decap = CFLOW_DECAP_ALL,
			.vlan_in_key = true };

		ilen = build(inner, &s);
		len = tun_build(f, T_VXLAN, inner, ilen, &l4, &hdr);
		TEST_ASSERT(cflow_parse(f, len, &pv, &p) == CFLOW_PARSE_OK &&
			p.key.vlan == 0 && p.tcp_flags == CFLOW_TCP_FIN,
			"inner tag not in the key");
	}
	return 0;
}

/* With vlan_in_key, the VNI, GRE key or TEID is in the key: the same
 * inner flow in two virtual networks is two flows; without it, one. */
static int
test_parse_tunnel_id(void)
{
	static const struct {
		enum tun_kind kind;
		uint32_t at;    /* id offset from the outer L4 header */
		unsigned int bytes;
	} ids[] = {
		{ T_VXLAN, 8 + 4, 3 }, { T_GENEVE_TEB, 8 + 4, 3 },
		{ T_GRE_K, 4, 4 }, { T_GTPU, 8 + 4, 4 },
	};
	struct cflow_parse_params keyed = { .decap = CFLOW_DECAP_ALL,
		.vlan_in_key = true };
	struct cflow_parse_params plain = { .decap = CFLOW_DECAP_ALL };
	struct spec in = tun_inner[0];
	uint8_t inner[256], f[2][512];

	uint32_t ilen = build(inner, &in);

	for (unsigned int k = 0; k < RTE_DIM_(ids); k++) {
		struct cflow_packet p[2], q[2];
		uint32_t len = 0, l4 = 0, hdr = 0;

		for (int v = 0; v < 2; v++) {
			len = tun_build(f[v], ids[k].kind, inner, ilen, &l4,
				&hdr);
			for (unsigned int b = 0; b < ids[k].bytes; b++)
				f[v][l4 + ids[k].at + b] = (uint8_t)(v ? 0xa0 + b :
					0x10 + b);
			TEST_ASSERT(cflow_parse(f[v], len, &keyed, &p[v]) ==
				CFLOW_PARSE_OK && cflow_parse(f[v], len, &plain,
				&q[v]) == CFLOW_PARSE_OK, "%s: parse",
				tun_cases[ids[k].kind].name);
		}
		TEST_ASSERT(p[0].key.tunnel == (ids[k].bytes == 3 ? 0x101112u :
			0x10111213u) && p[1].key.tunnel != p[0].key.tunnel &&
			memcmp(&p[0].key, &p[1].key, sizeof(p[0].key)) != 0,
			"%s: id %#x / %#x", tun_cases[ids[k].kind].name,
			p[0].key.tunnel, p[1].key.tunnel);
		TEST_ASSERT(q[0].key.tunnel == 0 && memcmp(&q[0].key,
			&q[1].key, sizeof(q[0].key)) == 0,
			"%s: not keyed without vlan_in_key",
			tun_cases[ids[k].kind].name);
	}
	return 0;
}

/* The longest IPv6 header at @p f + @p off: from 3000::@p src to
 * 3000::@p dst, 8 destination options of 2048 bytes, then @p nh; the
 * offset past it. */
static uint32_t
v6_longest(uint8_t *f, uint32_t off, uint8_t src, uint8_t dst, uint8_t nh)
{
	f[off] = 0x60;
	f[off + 6] = 60;
	f[off + 8] = 0x30;
	f[off + 23] = src;
	f[off + 24] = 0x30;
	f[off + 39] = dst;
	off += 40;
	for (int k = 0; k < CFLOW_PARSE_IPV6_EXT_MAX; k++) {
		f[off] = k + 1 < CFLOW_PARSE_IPV6_EXT_MAX ? 60 : nh;
		f[off + 1] = 255;
		off += 2048;
	}
	return off;
}

/*
 * CFLOW_PARSE_MAX_HDR through a tunnel: Ethernet, 2 tags, IPv6 with 8
 * extensions of 2048 bytes, UDP, GTP-U with 4 extensions of 1020 bytes,
 * then IPv6 with 8 such extensions and an ICMPv6 error quoting IPv6 with
 * 8 such extensions and 8 bytes of TCP: the bound less the 6 bytes
 * LINUX_SLL2's header is longer, every byte needed. The inner packet's
 * error is about the inner flow (an error is related by its quoted
 * packet, CFLOW_KIND_ICMP_ERROR).
 */
static int
test_parse_tunnel_max_hdr(void)
{
	const uint32_t want = CFLOW_PARSE_MAX_HDR - (CFLOW_PARSE_LINK_HDR_MAX -
		14);
	const uint32_t big = CFLOW_PARSE_MAX_HDR + 4000;
	struct cflow_parse_params on = { .decap = CFLOW_DECAP_GTPU };
	uint8_t *f = calloc(1, big), *b;
	uint32_t off = 12, l3, gtp;
	struct cflow_packet p, q;

	TEST_ASSERT(f != NULL, "alloc");
	for (int k = 0; k < CFLOW_PARSE_VLAN_MAX; k++) {
		w16(f + off, 0x8100);
		off += 4;
	}
	w16(f + off, 0x86dd);
	l3 = off + 2;
	f[l3] = 0x60;
	w16(f + l3 + 4, 0); /* jumbogram: the capture bounds it */
	f[l3 + 6] = 60;
	f[l3 + 8] = 0x20;
	f[l3 + 23] = 1;
	f[l3 + 24] = 0x20;
	f[l3 + 39] = 2;
	off = l3 + 40;
	for (int k = 0; k < CFLOW_PARSE_IPV6_EXT_MAX; k++) {
		f[off] = k + 1 < CFLOW_PARSE_IPV6_EXT_MAX ? 60 : 17;
		f[off + 1] = 255;
		off += 2048;
	}
	w16(f + off, 2152);
	w16(f + off + 2, 2152);
	off += 8;
	gtp = off;
	f[off] = 0x34;
	f[off + 1] = 255;
	w16(f + off + 2, 0xffff);
	f[off + 11] = 0x85;
	off += 12;
	for (int k = 0; k < CFLOW_PARSE_GTPU_EXT_MAX; k++) {
		f[off] = 255;
		f[off + 1020 - 1] = k + 1 < CFLOW_PARSE_GTPU_EXT_MAX ? 0x85 : 0;
		off += 1020;
	}
	(void)gtp;
	off = v6_longest(f, off, 3, 4, 58);
	f[off] = 1;     /* destination unreachable */
	f[off + 1] = 4; /* port unreachable */
	off += 8;
	/* the quoted packet: from 3000::4 (the error's destination) */
	off = v6_longest(f, off, 4, 3, 6);
	w16(f + off, 80);
	w16(f + off + 2, 1234);
	TEST_ASSERT_EQ(off + 8, want, "layout");
	TEST_ASSERT_EQ(cflow_parse(f, big, &on, &p), CFLOW_PARSE_OK,
		"worst case");
	TEST_ASSERT(p.key.port_lo == 1234 && p.key.port_hi == 80 &&
		p.key.addr_lo[0] == 0x30 && p.key.addr_lo[15] == 3 &&
		p.key.proto == 6 && p.kind == CFLOW_KIND_ICMP_ERROR &&
		!p.reversed, "the inner flow");
	b = malloc(CFLOW_PARSE_MAX_HDR);
	memcpy(b, f, CFLOW_PARSE_MAX_HDR);
	TEST_ASSERT(cflow_parse(b, CFLOW_PARSE_MAX_HDR, &on, &q) ==
		CFLOW_PARSE_OK && memcmp(&p, &q, sizeof(p)) == 0,
		"cut to the bound");
	TEST_ASSERT(cflow_parse(b, want, &on, &q) == CFLOW_PARSE_OK &&
		memcmp(&p, &q, sizeof(p)) == 0, "cut to Ethernet's bound");
	TEST_ASSERT_EQ(cflow_parse(b, want - 1, &on, &q),
		CFLOW_PARSE_BAD_EMBEDDED, "one byte short");
	free(b);
	free(f);
	return 0;
}

/*
 * ip_len, RFC 7012's octets: the IP header's own length, not the frame's
 * (Ethernet padding, a snaplen cut, VLAN tags); a tunnel's outer packet;
 * icmp_code with icmp_type.
 */
static int
test_parse_ip_len_icmp_code(void)
{
	struct cflow_parse_params decap = { .decap = CFLOW_DECAP_ALL };
	struct pkt_spec tcp4 = { 4, 0x0a000001, 0x0a000002, 1000, 80, 6, 0x02,
		0 };
	struct pkt_spec udp6 = { 6, 1, 2, 53, 53, 17, 0, 0 };
	/* a redirect: neither a query nor an error (issue 26), the
	 * addresses' flow */
	struct pkt_spec icmp4 = { 4, 0x0a000001, 0x0a000002, 0, 0, 1, 5, 0 };
	struct pkt_spec icmp6 = { 6, 1, 2, 0, 0, 58, 128, 0 };
	uint8_t f[256], inner[128];
	struct cflow_packet p;
	uint32_t len, ilen;

	/* 54 bytes of TCP/IPv4 padded to 60: 40 IP bytes */
	len = pkt_frame(f, &tcp4);
	memset(f + len, 0, 60 - len);
	TEST_ASSERT_EQ(parse_exact(f, 60, NULL, &p), CFLOW_PARSE_OK, "tcp4");
	TEST_ASSERT_EQ(p.ip_len, 40u, "padded: %u", p.ip_len);
	/* a 1400-byte packet cut to its headers: its own length */
	f[16] = 1400 >> 8;
	f[17] = 1400 & 0xff;
	TEST_ASSERT_EQ(parse_exact(f, 54, NULL, &p), CFLOW_PARSE_OK, "cut");
	TEST_ASSERT_EQ(p.ip_len, 1400u, "cut: %u", p.ip_len);
	TEST_ASSERT_EQ(cflow_parse_general(f, 54, NULL, &p), CFLOW_PARSE_OK,
		"general");
	TEST_ASSERT_EQ(p.ip_len, 1400u, "general: %u", p.ip_len);
	len = pkt_frame(f, &udp6);
	TEST_ASSERT_EQ(parse_exact(f, len, NULL, &p), CFLOW_PARSE_OK, "udp6");
	TEST_ASSERT_EQ(p.ip_len, 48u, "udp6: %u", p.ip_len);
	len = pkt_frame(f, &icmp4);
	f[14 + 20 + 1] = 1;     /* host redirect */
	TEST_ASSERT_EQ(parse_exact(f, len, NULL, &p), CFLOW_PARSE_OK, "icmp4");
	TEST_ASSERT(p.icmp_type == 5 && p.icmp_code == 1 && p.ip_len == 28,
		"icmp4: %u/%u, %u bytes", p.icmp_type, p.icmp_code, p.ip_len);
	len = pkt_frame(f, &icmp6);
	TEST_ASSERT_EQ(parse_exact(f, len, NULL, &p), CFLOW_PARSE_OK, "icmp6");
	TEST_ASSERT(p.icmp_type == 128 && p.icmp_code == 0 && p.ip_len == 48,
		"icmp6: %u/%u, %u bytes", p.icmp_type, p.icmp_code, p.ip_len);
	/* a fragment: no flow, no length */
	len = pkt_frame(f, &tcp4);
	f[14 + 7] = 10;
	TEST_ASSERT_EQ(parse_exact(f, len, NULL, &p), CFLOW_PARSE_FRAGMENT,
		"fragment");
	TEST_ASSERT_EQ(p.ip_len, 0u, "fragment: %u", p.ip_len);
	/* VXLAN: the inner flow, the outer packet's bytes */
	ilen = pkt_frame(inner, &tcp4);
	len = pkt_tun_frame(f, TUN_VXLAN, true, 0xc0000201, 0xc0000202, 7,
		inner, ilen);
	TEST_ASSERT_EQ(parse_exact(f, len, &decap, &p), CFLOW_PARSE_OK,
		"vxlan");
	TEST_ASSERT(p.tunnel == CFLOW_DECAP_VXLAN && p.ip_len == len - 14,
		"vxlan: %u bytes, frame %u", p.ip_len, len);
	return 0;
}

/* ---------------------------------------------------- ICMP (issue 26) */

/*
 * ICMP queries are keyed by their identifier (struct cflow_key): the
 * requester's endpoint has it for port, the responder's 0. A request and
 * its replies share a key; a request the other way, or a reply of
 * another identifier, has another. Messages that are neither queries nor
 * errors keep the address pair's key; a query too short for its
 * identifier is cut short.
 */
static int
test_parse_icmp_queries(void)
{
	for (int family = 4; family <= 6; family += 2) {
		uint8_t b[256];
		struct cflow_packet req, rep, back, other, p;
		struct cflow_key want;
		uint32_t n;

		n = icmp_echo_frame(b, family, 1, 200, false, 7);
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &req), CFLOW_PARSE_OK,
			"IPv%d request", family);
		icmp_want_key(&want, family, 1, 200, 7, 0,
			icmp_proto(family));
		TEST_ASSERT(memcmp(&req.key, &want, sizeof(want)) == 0 &&
			req.kind == CFLOW_KIND_FLOW && !req.reversed &&
			req.proto_class == CFLOW_CLASS_ICMP,
			"IPv%d request: requester 10.0.0.1:7, responder :0",
			family);
		n = icmp_echo_frame(b, family, 200, 1, true, 7);
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &rep), CFLOW_PARSE_OK,
			"reply");
		TEST_ASSERT(memcmp(&rep.key, &want, sizeof(want)) == 0 &&
			rep.reversed, "IPv%d: the reply has the request's key",
			family);
		n = icmp_echo_frame(b, family, 200, 1, false, 7);
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &back), CFLOW_PARSE_OK,
			"request back");
		TEST_ASSERT(memcmp(&back.key, &want, sizeof(want)) != 0,
			"IPv%d: a request the other way is another flow",
			family);
		n = icmp_echo_frame(b, family, 200, 1, true, 8);
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &other), CFLOW_PARSE_OK,
			"reply 8");
		TEST_ASSERT(memcmp(&other.key, &want, sizeof(want)) != 0,
			"IPv%d: a reply of identifier 8 is another flow",
			family);
		/* A query cut before its identifier. */
		n = icmp_echo_frame(b, family, 1, 200, false, 7);
		TEST_ASSERT_EQ(cflow_parse(b, n - 8 - 2, NULL, &p),
			CFLOW_PARSE_TRUNC_L4, "IPv%d: 6 bytes of echo",
			family);
		TEST_ASSERT(p.has_addrs, "addresses");
		/* Neither query nor error: the address pair (router
		 * advertisement 9; ICMPv6 neighbour solicitation 135). */
		n = icmp_echo_frame(b, family, 1, 200, false, 7);
		b[14 + (family == 4 ? 20 : 40)] = family == 4 ? 9 : 135;
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &p), CFLOW_PARSE_OK,
			"other ICMP");
		icmp_want_key(&want, family, 1, 200, 0, 0, icmp_proto(family));
		TEST_ASSERT(memcmp(&p.key, &want, sizeof(want)) == 0 &&
			p.kind == CFLOW_KIND_FLOW, "IPv%d: type %u by its "
			"addresses", family, p.icmp_type);
	}
	{
		/* ICMPv4's other queries: timestamp 13/14, information
		 * 15/16, address mask 17/18. */
		static const uint8_t pairs[][2] = { { 13, 14 }, { 15, 16 },
			{ 17, 18 } };

		for (unsigned int i = 0; i < 3; i++) {
			uint8_t b[256];
			struct cflow_packet q, r;
			uint32_t n = icmp_echo_frame(b, 4, 1, 200, false, 99);

			b[34] = pairs[i][0];
			TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &q),
				CFLOW_PARSE_OK, "query %u", pairs[i][0]);
			n = icmp_echo_frame(b, 4, 200, 1, true, 99);
			b[34] = pairs[i][1];
			TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &r),
				CFLOW_PARSE_OK, "reply %u", pairs[i][1]);
			TEST_ASSERT(memcmp(&q.key, &r.key, sizeof(q.key)) ==
				0 && q.key.port_lo == 99, "type %u and %u: "
				"one flow", pairs[i][0], pairs[i][1]);
		}
	}
	return 0;
}

/*
 * ICMP errors are about the packet they quote: the key is that packet's
 * flow, the direction back to its source, the class its own; errors from
 * any source (a router on the path) count. Quoted TCP may be cut after 8
 * bytes (RFC 792). A quoted packet cut shorter or not sane is
 * bad_embedded, with the error's own addresses; an error to another host
 * than the quoted packet's source, one quoting an error or a non-first
 * fragment is unrelated, keyed by its own addresses.
 */
static int
test_parse_icmp_errors(void)
{
	static const struct { int family; uint8_t type, code, proto;
		uint32_t cut; const char *what; } cases[] = {
		{ 4, 3, 3, 17, 0, "port unreachable, UDP" },
		{ 4, 3, 4, 6, 12, "frag-needed, TCP cut to 8 bytes" },
		{ 4, 11, 0, 1, 0, "time exceeded, echo" },
		{ 4, 12, 0, 6, 0, "parameter problem, TCP" },
		{ 4, 3, 1, 132, 0, "host unreachable, SCTP" },
		{ 4, 3, 1, 47, 8, "host unreachable, GRE: no L4 needed" },
		{ 6, 1, 4, 17, 0, "port unreachable, UDP" },
		{ 6, 2, 0, 6, 12, "packet too big, TCP cut to 8 bytes" },
		{ 6, 3, 0, 58, 0, "time exceeded, echo" },
		{ 6, 4, 0, 136, 0, "parameter problem, UDP-Lite" },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int family = cases[i].family;
		uint8_t q[128], b[512];
		struct cflow_packet p;
		struct cflow_key want;
		uint32_t ql, n;
		bool query = cases[i].proto == icmp_proto(family);

		/* 10.0.0.1:40000 sent to 10.0.0.200:53; router .9 or the
		 * destination answers. */
		ql = icmp_quotable(q, family, 1, 200, cases[i].proto, 40000,
			53) - cases[i].cut;
		n = icmp_error_frame(b, family, i % 2 ? 9 : 200, 1,
			cases[i].type, cases[i].code, q, ql);
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &p), CFLOW_PARSE_OK,
			"IPv%d %s", family, cases[i].what);
		if (query)
			icmp_want_key(&want, family, 1, 200, 40000, 0,
				cases[i].proto);
		else if (cases[i].proto == 47)
			icmp_want_key(&want, family, 1, 200, 0, 0, 47);
		else
			icmp_want_key(&want, family, 1, 200, 40000, 53,
				cases[i].proto);
		TEST_ASSERT(memcmp(&p.key, &want, sizeof(want)) == 0,
			"IPv%d %s: the quoted flow's key", family,
			cases[i].what);
		/* back to 10.0.0.1, the key's lower endpoint: reversed */
		TEST_ASSERT(p.kind == CFLOW_KIND_ICMP_ERROR && p.reversed &&
			p.has_addrs && p.tcp_flags == 0 &&
			p.icmp_type == cases[i].type &&
			p.proto_class == (cases[i].proto == 6 ?
				CFLOW_CLASS_TCP : cases[i].proto == 17 ||
				cases[i].proto == 136 ? CFLOW_CLASS_UDP :
				query ? CFLOW_CLASS_ICMP : CFLOW_CLASS_OTHER),
			"IPv%d %s: kind %u reversed %d class %u", family,
			cases[i].what, p.kind, p.reversed, p.proto_class);
		{
			struct cflow_packet g;

			TEST_ASSERT(cflow_parse_general(b, n, NULL, &g) ==
				CFLOW_PARSE_OK && memcmp(&p, &g,
				sizeof(p)) == 0, "%s: the general path",
				cases[i].what);
		}
		/* cut: every length short of 8 bytes of L4 is bad */
		for (uint32_t cut = 1; cases[i].proto != 47 && cut <= 8;
				cut++) {
			uint32_t m = icmp_error_frame(b, family, 9, 1,
				cases[i].type, cases[i].code, q,
				(family == 4 ? 20 : 40) + 8 - cut);

			TEST_ASSERT_EQ(cflow_parse(b, m, NULL, &p),
				CFLOW_PARSE_BAD_EMBEDDED, "IPv%d %s: %u bytes "
				"less", family, cases[i].what, cut);
			icmp_want_key(&want, family, 1, 9, 0, 0, 0);
			TEST_ASSERT(p.has_addrs && memcmp(p.key.addr_lo,
				want.addr_lo, 32) == 0 && p.kind == 0,
				"%s: the error's addresses", cases[i].what);
		}
	}
	for (int family = 4; family <= 6; family += 2) {
		uint8_t q[128], b[512], t = family == 4 ? 3 : 1;
		uint8_t inner[256];
		struct cflow_packet p;
		struct cflow_key want;
		uint32_t ql, n, il;

		ql = icmp_quotable(q, family, 1, 200, 17, 40000, 53);
		/* the quoted IP header cut, or of the other version */
		for (uint32_t m = 0; m < (family == 4 ? 20u : 40u); m += 7) {
			n = icmp_error_frame(b, family, 9, 1, t, 3, q, m);
			TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &p),
				CFLOW_PARSE_BAD_EMBEDDED, "IPv%d: %u bytes of "
				"the quoted header", family, m);
		}
		q[0] ^= 0xf0 & (4 << 4 ^ 6 << 4);
		n = icmp_error_frame(b, family, 9, 1, t, 3, q, ql);
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &p),
			CFLOW_PARSE_BAD_EMBEDDED, "IPv%d quoting the other "
			"version", family);
		q[0] ^= 0xf0 & (4 << 4 ^ 6 << 4);
		/* the ICMP header itself cut */
		n = icmp_error_frame(b, family, 9, 1, t, 3, q, 0);
		TEST_ASSERT_EQ(cflow_parse(b, n - 2, NULL, &p),
			CFLOW_PARSE_BAD_EMBEDDED, "IPv%d: 6 bytes of ICMP",
			family);
		/* to another host than the quoted packet's source */
		n = icmp_error_frame(b, family, 9, 2, t, 3, q, ql);
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &p), CFLOW_PARSE_OK,
			"IPv%d: to another host", family);
		icmp_want_key(&want, family, 9, 2, 0, 0, icmp_proto(family));
		TEST_ASSERT(p.kind == CFLOW_KIND_ICMP_UNRELATED &&
			memcmp(&p.key, &want, sizeof(want)) == 0,
			"IPv%d: to another host: unrelated, its own key",
			family);
		/* quoting an error (about a packet .200 -> .1) */
		il = icmp_error_frame(inner, family, 200, 1, t, 3, q, ql) - 14;
		memmove(inner, inner + 14, il);
		/* make it from .1 to .200: the outer error goes to .1 */
		{
			uint8_t a[16];

			icmp_addr16(a, family, 1);
			memcpy(inner + (family == 4 ? 12 : 8), family == 4 ?
				a + 12 : a, family == 4 ? 4 : 16);
			icmp_addr16(a, family, 200);
			memcpy(inner + (family == 4 ? 16 : 24), family == 4 ?
				a + 12 : a, family == 4 ? 4 : 16);
		}
		n = icmp_error_frame(b, family, 9, 1, t, 3, inner, il);
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &p), CFLOW_PARSE_OK,
			"IPv%d: an error about an error", family);
		TEST_ASSERT(p.kind == CFLOW_KIND_ICMP_UNRELATED,
			"IPv%d: an error about an error: unrelated", family);
		/* quoting a non-first fragment */
		if (family == 4) {
			w16(q + 6, 0x2000 | 100);
			n = icmp_error_frame(b, 4, 9, 1, t, 3, q, ql);
			TEST_ASSERT(cflow_parse(b, n, NULL, &p) ==
				CFLOW_PARSE_OK && p.kind ==
				CFLOW_KIND_ICMP_UNRELATED,
				"quoting a non-first fragment: unrelated");
		}
		/* ICMPv4 redirect (5), source quench (4): not errors here,
		 * plain ICMP of the address pair */
		if (family == 4) {
			w16(q + 6, 0);
			n = icmp_error_frame(b, 4, 9, 1, 5, 1, q, ql);
			TEST_ASSERT(cflow_parse(b, n, NULL, &p) ==
				CFLOW_PARSE_OK && p.kind == CFLOW_KIND_FLOW &&
				p.key.proto == 1 && p.key.port_lo == 0 &&
				p.key.port_hi == 0, "a redirect: plain ICMP");
		}
	}
	return 0;
}

/*
 * The first fragment of a datagram parses to its flow, marked
 * frag_first; cflow_parse_frag() names the datagram of it and of the
 * later ones (addresses, identification, protocol, offset, more); the
 * fast path leaves every fragment to the general one.
 */
static int
test_parse_frag_id(void)
{
	static const struct { int family; uint16_t frag; bool v6_hdr;
		enum cflow_parse_status st; bool first; bool named;
		uint16_t offset; bool more; } cases[] = {
		{ 4, 0x2000, false, CFLOW_PARSE_OK, true, true, 0, true },
		{ 4, 0x2000 | 185, false, CFLOW_PARSE_FRAGMENT, false, true,
			185, true },
		{ 4, 185, false, CFLOW_PARSE_FRAGMENT, false, true, 185,
			false },
		{ 4, 0x4000, false, CFLOW_PARSE_OK, false, false, 0, false },
		{ 4, 0, false, CFLOW_PARSE_OK, false, false, 0, false },
		{ 6, 1, true, CFLOW_PARSE_OK, true, true, 0, true },
		{ 6, 185 << 3 | 1, true, CFLOW_PARSE_FRAGMENT, false, true,
			185, true },
		{ 6, 185 << 3, true, CFLOW_PARSE_FRAGMENT, false, true, 185,
			false },
		/* an atomic fragment (RFC 6946): not fragmented */
		{ 6, 0, true, CFLOW_PARSE_OK, false, false, 0, false },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spec s = { .family = cases[i].family, .src = 1,
			.dst = 2, .sport = 5, .dport = 6, .proto = 17,
			.frag = cases[i].frag, .v6_frag_hdr = cases[i].v6_hdr };
		struct cflow_packet p, g;
		struct cflow_frag_id fi;
		uint8_t b[256];
		uint32_t n = build(b, &s);

		/* the identification: IPv4's at +4, IPv6's in the header */
		if (s.family == 4)
			w16(b + 14 + 4, 0xbeef);
		else
			w32(b + 14 + 40 + 4, 0xdeadbeef);
		TEST_ASSERT_EQ(cflow_parse(b, n, NULL, &p), cases[i].st,
			"case %u", i);
		TEST_ASSERT_EQ(p.frag_first, cases[i].first, "case %u first",
			i);
		TEST_ASSERT_EQ(cflow_parse_frag(b, n, NULL, &g, &fi),
			cases[i].st, "case %u: cflow_parse_frag", i);
		TEST_ASSERT(memcmp(&p, &g, sizeof(p)) == 0,
			"case %u: the same parse", i);
		TEST_ASSERT_EQ(fi.family != 0, cases[i].named, "case %u named",
			i);
		if (!cases[i].named)
			continue;
		TEST_ASSERT(fi.family == s.family && fi.proto == 17 &&
			fi.offset == cases[i].offset &&
			fi.more == cases[i].more && fi.id == (s.family == 4 ?
			0xbeefu : 0xdeadbeefu) && fi.src[15] == 1 &&
			fi.dst[15] == 2, "case %u: family %u proto %u offset "
			"%u more %d id %#x", i, fi.family, fi.proto, fi.offset,
			fi.more, fi.id);
	}
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_parse_ip_len_icmp_code),
	TEST_CASE(test_parse_l4_kinds),
	TEST_CASE(test_parse_ipv4_mapped_and_ports_tiebreak),
	TEST_CASE(test_parse_direction),
	TEST_CASE(test_parse_vlan),
	TEST_CASE(test_parse_non_ip_and_bad_headers),
	TEST_CASE(test_parse_padding),
	TEST_CASE(test_parse_fast_equals_general),
	TEST_CASE(test_parse_fast_v6_equals_general),
	TEST_CASE(test_parse_fragments),
	TEST_CASE(test_parse_icmp_queries),
	TEST_CASE(test_parse_icmp_errors),
	TEST_CASE(test_parse_frag_id),
	TEST_CASE(test_parse_ipv6_extensions),
	TEST_CASE(test_parse_truncation),
	TEST_CASE(test_parse_addrs_unparsed),
	TEST_CASE(test_parse_max_hdr),
	TEST_CASE(test_parse_link_types),
	TEST_CASE(test_parse_link_truncation),
	TEST_CASE(test_parse_link_non_ip),
	TEST_CASE(test_link_type_from_dlt),
	TEST_CASE(test_parse_link_max_hdr),
	TEST_CASE(test_parse_tunnels),
	TEST_CASE(test_parse_tunnel_truncation),
	TEST_CASE(test_parse_tunnel_edges),
	TEST_CASE(test_parse_tunnel_id),
	TEST_CASE(test_parse_tunnel_max_hdr),
	TEST_CASE(test_track_link_types),
	TEST_CASE(test_track_unparsed_counters),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
