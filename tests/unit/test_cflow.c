/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The flow-tracking core: the parser on every header it knows and on
 * every truncation of valid packets, scripted tracker timelines, and a
 * randomised run against an exact model.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cflow.h"
#include "cflow_state.h"
#include "test.h"
#include "test_memory.h"

#define S (UINT64_C(1000000000))

/* ----------------------------------------------------- packet builder */

struct spec {
	int family;         /* 4 or 6 */
	uint8_t src, dst;   /* last address byte */
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t flags;      /* TCP */
	int vlans;          /* 0..3 tags */
	uint16_t vlan_type; /* outer tag type, default 0x8100 */
	uint16_t frag;      /* IPv4 flags+offset field / IPv6 fragment */
	int v6_ext;         /* number of extension headers before L4 */
	bool v6_frag_hdr;   /* put a fragment header in the chain */
};

static void
w16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Build the frame; returns its length. */
static uint32_t
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
	w16(b + l4, s->sport);
	w16(b + l4 + 2, s->dport);
	if (s->proto == 6) {
		b[l4 + 12] = 5 << 4;
		b[l4 + 13] = s->flags;
	}
	return l4 + l4len;
}

static enum cflow_parse_status
parse_spec(const struct spec *s, bool vlan_in_key, struct cflow_packet *p)
{
	uint8_t buf[256];
	uint32_t len = build(buf, s);
	struct cflow_parse_params pp = { .vlan_in_key = vlan_in_key };

	return cflow_parse(buf, len, &pp, p);
}

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
		TEST_ASSERT(kinds[i].ports ? a.key.port_lo == 80 &&
			a.key.port_hi == 4000 :
			a.key.port_lo == 0 && a.key.port_hi == 0,
			"ports %u %u", a.key.port_lo, a.key.port_hi);
		/* Lower endpoint first: address 3 before address 9. */
		TEST_ASSERT_EQ(a.key.addr_lo[15], 3, "canonical order");
		if (kinds[i].proto == 6)
			TEST_ASSERT_EQ(a.tcp_flags, CFLOW_TCP_SYN, "flags");
		/* The reverse direction is the same flow. */
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
static int
test_parse_fast_equals_general(void)
{
	static const uint8_t protos[] = { 6, 17, 1, 47, 132, 136 };
	uint64_t rng = 12345, fast = 0;

	for (int i = 0; i < 200000; i++) {
		uint64_t r = cfu_splitmix64(&rng);
		struct spec sp = { .family = r % 8 == 0 ? 6 : 4,
			.src = (uint8_t)(r >> 8), .dst = (uint8_t)(r >> 16),
			.sport = (uint16_t)(r >> 24), .dport = (uint16_t)(r >> 40),
			.proto = protos[(r >> 56) % 6],
			.flags = (uint8_t)(r >> 32), .vlans = r % 16 == 1 };
		struct cflow_parse_params pp = { 0 };
		struct cflow_packet a, b;
		enum cflow_parse_status sa, sb;
		uint8_t buf[256] = { 0 };
		uint32_t len = build(buf, &sp);
		uint64_t m = cfu_splitmix64(&rng);

		if (m % 3 == 0) /* a byte of the headers changed */
			buf[(m >> 8) % 64] = (uint8_t)(m >> 16);
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
		fast += sa == CFLOW_PARSE_OK && a.key.family == 4 &&
			(a.key.proto == 6 || a.key.proto == 17);
	}
	TEST_ASSERT(fast > 20000, "only %lu frames for the fast path",
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

/* ------------------------------------------------------------ tracker */

struct timeline {
	struct cflow_tracker *t;
	uint8_t buf[256];
};

static struct cflow_tracker *
tracker(uint64_t capacity, unsigned int fp_bits, uint64_t linger_s,
		enum cflow_full_policy policy)
{
	struct cflow_tracker_params p;

	cflow_tracker_params_init(&p, capacity);
	p.fp_bits = fp_bits;
	p.seed = 42;
	p.close_linger_ns = linger_s == 0 ? CFLOW_LINGER_NONE : linger_s * S;
	p.full_policy = policy;
	return cflow_tracker_create(&p);
}

/* Send one packet at time t (ns); returns its verdict. */
static enum cflow_verdict
send(struct cflow_tracker *t, const struct spec *s, uint64_t at)
{
	uint8_t buf[256];
	struct cflow_input in = { .data = buf, .time_ns = at };
	enum cflow_verdict v;

	in.len = build(buf, s);
	in.wire_len = in.len;
	cflow_track_burst(t, &in, 1, &v);
	return v;
}

static int
invariants(const struct cflow_tracker *t)
{
	struct cflow_counters c;

	cflow_counters_get(t, &c);
	TEST_ASSERT_EQ(c.flows_new + c.flows_restored,
		cflow_flows_accounted(&c), "flows_new %lu + restored %lu "
		"!= active %lu + closed %lu + expired %lu + evicted %lu",
		(unsigned long)c.flows_new, (unsigned long)c.flows_restored,
		(unsigned long)c.active,
		(unsigned long)c.flows_closed, (unsigned long)c.flows_expired,
		(unsigned long)c.flows_evicted);
	TEST_ASSERT_EQ(c.packets, cflow_packets_classified(&c), "packets %lu, "
		"classified %lu", (unsigned long)c.packets,
		(unsigned long)cflow_packets_classified(&c));
	return 0;
}

static struct spec
tcp(uint8_t flags, bool reply)
{
	struct spec s = { .family = 4, .src = 1, .dst = 2, .sport = 40000,
		.dport = 443, .proto = 6, .flags = flags };

	if (reply) {
		s.src = 2;
		s.dst = 1;
		s.sport = 443;
		s.dport = 40000;
	}
	return s;
}

/* One packet through cflow_track_parsed() with input flags; its verdict,
 * and its ordinal in *count if count is not NULL. */
static enum cflow_verdict
send_in(struct cflow_tracker *t, const struct spec *s, uint64_t at,
		uint8_t flags, uint8_t *count)
{
	uint8_t buf[256], n;
	struct cflow_input in = { .data = buf, .time_ns = at, .flags = flags };
	struct cflow_packet pkt;
	enum cflow_parse_status st;
	enum cflow_verdict v;

	in.len = build(buf, s);
	in.wire_len = in.len;
	st = cflow_parse(buf, in.len, NULL, &pkt);
	cflow_track_parsed(t, &in, &pkt, &st, 1, &v, &n);
	if (count != NULL)
		*count = n;
	return v;
}

static struct cflow_tracker *
tracker_with(struct cflow_tracker_params *p)
{
	p->seed = 42;
	return cflow_tracker_create(p);
}

/* CFLOW_IN_NO_CREATE: a firewall's outside finds flows, opens none. */
static int
test_track_no_create(void)
{
	struct cflow_tracker_params p = { .capacity = 1000,
		.close_linger_ns = 10 * S };
	struct cflow_tracker *t = tracker_with(&p);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec synack = tcp(CFLOW_TCP_SYN | CFLOW_TCP_ACK, true);
	struct spec ackr = tcp(CFLOW_TCP_ACK, true);
	struct spec rstr = tcp(CFLOW_TCP_RST, true);
	struct spec synr = tcp(CFLOW_TCP_SYN, true);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	struct spec udp_out = { .family = 4, .src = 9, .dst = 3, .sport = 53,
		.dport = 5000, .proto = 17 };
	struct spec udp_in = { .family = 4, .src = 3, .dst = 9, .sport = 5000,
		.dport = 53, .proto = 17 };
	const uint8_t NC = CFLOW_IN_NO_CREATE;
	struct cflow_counters c;

	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send_in(t, &synr, S, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "outside SYN, no flow");
	TEST_ASSERT_EQ(send_in(t, &rstr, S, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "outside RST, no flow");
	TEST_ASSERT_EQ(send_in(t, &udp_out, S, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "outside UDP, no flow");
	TEST_ASSERT_EQ(send_in(t, &udp_out, S + 1, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "still none: nothing was opened");
	TEST_ASSERT_EQ(send_in(t, &udp_in, 2 * S, 0, NULL), CFLOW_NEW,
		"inside opens");
	TEST_ASSERT_EQ(send_in(t, &udp_out, 2 * S + 1, NC, NULL), CFLOW_SEEN,
		"the reply passes");
	TEST_ASSERT_EQ(send_in(t, &syn, 3 * S, 0, NULL), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send_in(t, &synack, 3 * S, NC, NULL), CFLOW_SEEN,
		"SYN/ACK");
	TEST_ASSERT_EQ(send_in(t, &fin, 4 * S, 0, NULL), CFLOW_CLOSING, "FIN");
	/* A SYN from outside on the lingering tuple reopens nothing: a
	 * packet of the closed flow, whose linger it restarts. */
	TEST_ASSERT_EQ(send_in(t, &synr, 5 * S, NC, NULL), CFLOW_SEEN,
		"outside SYN while lingering");
	TEST_ASSERT_EQ(send_in(t, &ackr, 14 * S, NC, NULL), CFLOW_SEEN,
		"linger restarted by it");
	/* Past the linger the outside is unsolicited again. */
	TEST_ASSERT_EQ(send_in(t, &ackr, 30 * S, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "after the linger");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.unsolicited == 5 && c.flows_new == 2 &&
		c.reused == 0 && c.orphan_close == 0 && c.flows_closed == 1,
		"unsolicited %lu new %lu reused %lu", (unsigned long)c.unsolicited,
		(unsigned long)c.flows_new, (unsigned long)c.reused);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* tcp_strict: a TCP flow opens on a SYN without ACK only. */
static int
test_track_tcp_strict(void)
{
	struct cflow_tracker_params p = { .capacity = 1000, .tcp_strict = true };
	struct cflow_tracker *t = tracker_with(&p);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct spec synack = tcp(CFLOW_TCP_SYN | CFLOW_TCP_ACK, true);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec udp = { .family = 4, .src = 3, .dst = 9, .sport = 5000,
		.dport = 53, .proto = 17 };
	struct cflow_counters c;

	TEST_ASSERT_EQ(send_in(t, &ack, S, 0, NULL), CFLOW_UNTRACKED_NOT_SYN,
		"ACK");
	TEST_ASSERT_EQ(send_in(t, &synack, S, 0, NULL),
		CFLOW_UNTRACKED_NOT_SYN, "SYN/ACK");
	TEST_ASSERT_EQ(send_in(t, &fin, S, 0, NULL), CFLOW_UNTRACKED_ORPHAN,
		"a FIN of no flow stays an orphan");
	TEST_ASSERT_EQ(send_in(t, &udp, S, 0, NULL), CFLOW_NEW, "UDP as ever");
	TEST_ASSERT_EQ(send_in(t, &syn, 2 * S, 0, NULL), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send_in(t, &synack, 2 * S, 0, NULL), CFLOW_SEEN,
		"SYN/ACK of the flow");
	TEST_ASSERT_EQ(send_in(t, &ack, 2 * S, 0, NULL), CFLOW_SEEN, "ACK");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.not_syn == 2 && c.flows_new == 2 && c.orphan_close == 1,
		"counters");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	/* Without it, any packet but a FIN/RST opens (loose pickup). */
	p = (struct cflow_tracker_params){ .capacity = 1000 };
	t = tracker_with(&p);
	TEST_ASSERT_EQ(send_in(t, &ack, S, 0, NULL), CFLOW_NEW, "loose");
	cflow_tracker_free(t);
	return 0;
}

/* Admission control: a token bucket of new flows, by the packets' time. */
static int
test_track_admission(void)
{
	struct cflow_tracker_params p = { .capacity = 1000,
		.new_flow_rate = 10, .new_flow_burst = 3,
		.close_linger_ns = 10 * S };
	struct cflow_tracker *t = tracker_with(&p);
	struct spec u = { .family = 4, .src = 3, .dst = 9, .sport = 5000,
		.dport = 53, .proto = 17 };
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cflow_counters c;
	unsigned int admitted = 0;

	for (unsigned int k = 0; k < 5; k++) {
		u.sport = (uint16_t)(6000 + k);
		admitted += send_in(t, &u, S, 0, NULL) == CFLOW_NEW;
	}
	TEST_ASSERT_EQ(admitted, 3, "the burst");
	u.sport = 6003;
	TEST_ASSERT_EQ(send_in(t, &u, S + S / 20, 0, NULL),
		CFLOW_UNTRACKED_LIMITED, "half a token after 50 ms");
	TEST_ASSERT_EQ(send_in(t, &u, S + S / 10, 0, NULL), CFLOW_NEW,
		"one token after 100 ms");
	u.sport = 6000;
	TEST_ASSERT_EQ(send_in(t, &u, S + S / 10, 0, NULL), CFLOW_SEEN,
		"an admitted flow needs no token");
	/* Refilled, never beyond the burst. */
	admitted = 0;
	for (unsigned int k = 0; k < 6; k++) {
		u.sport = (uint16_t)(7000 + k);
		admitted += send_in(t, &u, 100 * S, 0, NULL) == CFLOW_NEW;
	}
	TEST_ASSERT_EQ(admitted, 3, "a full bucket holds the burst");
	/* A limited SYN on a lingering flow leaves its entry. */
	TEST_ASSERT_EQ(send_in(t, &syn, 200 * S, 0, NULL), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send_in(t, &fin, 200 * S, 0, NULL), CFLOW_CLOSING,
		"FIN");
	for (unsigned int k = 0; k < 3; k++) {
		u.sport = (uint16_t)(8000 + k);
		send_in(t, &u, 200 * S, 0, NULL);
	}
	TEST_ASSERT_EQ(send_in(t, &syn, 200 * S, 0, NULL),
		CFLOW_UNTRACKED_LIMITED, "SYN on the lingering tuple, no token");
	TEST_ASSERT_EQ(send_in(t, &ack, 200 * S, 0, NULL), CFLOW_SEEN,
		"the closed flow is still there");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.new_flow_limited == 8 && c.reused == 0,
		"limited %lu reused %lu", (unsigned long)c.new_flow_limited,
		(unsigned long)c.reused);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* Emergency mode: shorter timeouts while the table is loaded. */
static int
test_track_emergency(void)
{
	struct cflow_tracker_params p = { .capacity = 100,
		.emergency_load_ppm = 500000, .emergency_low_ppm = 300000,
		.emergency_timeout_ns = 2 * S };
	struct cflow_tracker *t = tracker_with(&p);
	struct spec u = { .family = 4, .src = 3, .dst = 9, .sport = 5000,
		.dport = 53, .proto = 17 };
	struct cflow_counters c;

	for (unsigned int k = 0; k < 49; k++) {
		u.sport = (uint16_t)(1000 + k);
		send_in(t, &u, S, 0, NULL);
	}
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.emergency == 0 && c.emergency_enter == 0, "49%% load: "
		"active %lu emergency %lu entered %lu", (unsigned long)c.active,
		(unsigned long)c.emergency, (unsigned long)c.emergency_enter);
	u.sport = 2000;
	send_in(t, &u, S, 0, NULL);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.emergency == 1 && c.emergency_enter == 1, "50%% load");
	/* Idle 4 s: past the emergency timeout, far from UDP's 60 s. */
	cflow_sweep_all(t, 5 * S);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 50 && c.emergency == 0 &&
		c.emergency_exit == 1, "expired %lu emergency %lu",
		(unsigned long)c.flows_expired, (unsigned long)c.emergency);
	/* Left: the normal timeouts again. */
	send_in(t, &u, 6 * S, 0, NULL);
	cflow_sweep_all(t, 16 * S);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 50 && c.active == 1,
		"normal timeout restored: expired %lu",
		(unsigned long)c.flows_expired);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	/* A low mark at or above the load is refused. */
	p = (struct cflow_tracker_params){ .emergency_load_ppm = 500000,
		.emergency_low_ppm = 500000 };
	errno = 0;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"low >= load");
	return 0;
}

/* count_bits: each packet's ordinal in its flow, saturating. */
static int
test_track_counts(void)
{
	for (unsigned int vb = 16; vb <= 32; vb += 16) {
		struct cflow_tracker_params p = { .capacity = 1000,
			.value_bits = vb, .count_bits = 3,
			.close_linger_ns = 10 * S };
		struct cflow_tracker *t = tracker_with(&p);
		struct spec syn = tcp(CFLOW_TCP_SYN, false);
		struct spec ackr = tcp(CFLOW_TCP_ACK, true);
		struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
		struct spec udp = { .family = 4, .src = 3, .dst = 9,
			.sport = 5000, .dport = 53, .proto = 17 };
		uint8_t n;

		TEST_ASSERT(t != NULL, "create, %u-bit values", vb);
		for (unsigned int k = 1; k <= 10; k++) {
			send_in(t, k & 1 ? &syn : &ackr, k * S / 100, 0, &n);
			TEST_ASSERT_EQ(n, k < 7 ? k : 7, "%u-bit: packet %u",
				vb, k);
		}
		send_in(t, &fin, S, 0, &n);
		TEST_ASSERT_EQ(n, 7, "the FIN, saturated");
		send_in(t, &syn, 2 * S, 0, &n);
		TEST_ASSERT_EQ(n, 1, "reused: a new flow counts from 1");
		send_in(t, &udp, 2 * S, CFLOW_IN_NO_CREATE, &n);
		TEST_ASSERT_EQ(n, 0, "untracked: 0");
		/* The time field kept its meaning: expiry as ever. */
		send_in(t, &udp, 3 * S, 0, &n);
		TEST_ASSERT_EQ(n, 1, "UDP opens");
		cflow_sweep_all(t, 3 * S + 59 * S);
		TEST_ASSERT_EQ(send_in(t, &udp, 3 * S + 59 * S, 0, &n),
			CFLOW_SEEN, "%u-bit: alive before its timeout", vb);
		TEST_ASSERT_EQ(n, 2, "second packet");
		cflow_sweep_all(t, 3 * S + 59 * S + 70 * S);
		TEST_ASSERT_EQ(send_in(t, &udp, 3 * S + 59 * S + 70 * S, 0,
			&n), CFLOW_NEW, "%u-bit: expired after it", vb);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	/* Without count bits, every ordinal is 0. */
	{
		struct cflow_tracker_params p = { .capacity = 1000 };
		struct cflow_tracker *t = tracker_with(&p);
		struct spec udp = { .family = 4, .src = 3, .dst = 9,
			.sport = 5000, .dport = 53, .proto = 17 };
		uint8_t n = 9;

		send_in(t, &udp, S, 0, &n);
		TEST_ASSERT_EQ(n, 0, "no count");
		cflow_tracker_free(t);
	}
	{
		struct cflow_tracker_params p = { .count_bits = 9 };

		TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
			"count_bits 9 refused");
	}
	return 0;
}

static int
test_track_tcp_lifecycle(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 10, CFLOW_FULL_EVICT);
	struct cflow_counters c;
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec synack = tcp(CFLOW_TCP_SYN | CFLOW_TCP_ACK, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	struct spec finr = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);

	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send(t, &syn, 1 * S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &synack, 1 * S + 1000), CFLOW_SEEN, "SYN/ACK");
	TEST_ASSERT_EQ(send(t, &ack, 1 * S + 2000), CFLOW_SEEN, "ACK");
	for (int k = 0; k < 5; k++)
		TEST_ASSERT_EQ(send(t, &ack, 2 * S + k), CFLOW_SEEN, "data");
	TEST_ASSERT_EQ(send(t, &fin, 3 * S), CFLOW_CLOSING, "FIN");
	TEST_ASSERT_EQ(send(t, &finr, 3 * S + 10), CFLOW_SEEN, "FIN back");
	TEST_ASSERT_EQ(send(t, &ack, 3 * S + 20), CFLOW_SEEN, "last ACK");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 1 && c.flows_closed == 1 &&
		c.flows_seen == 9 && c.active == 0, "counters");
	/* The closed entry goes after the linger, uncounted. */
	cflow_sweep_all(t, 5 * S);
	cflow_sweep_all(t, 14 * S);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 0 && c.flows_closed == 1, "linger");
	{
		struct cf_stats st;

		cf_stats(cflow_tracker_filter(t), &st);
		TEST_ASSERT_EQ(st.items, 0u, "entry left after linger");
	}
	/* A packet after the linger starts a new flow. */
	TEST_ASSERT_EQ(send(t, &ack, 15 * S), CFLOW_NEW, "after linger");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

static int
test_track_rst_no_linger_and_orphans(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 0, CFLOW_FULL_EVICT);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec rst = tcp(CFLOW_TCP_RST, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cflow_counters c;

	TEST_ASSERT_EQ(send(t, &syn, S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &rst, S + 5), CFLOW_CLOSING, "RST");
	/* Linger 0: gone at once; a second RST is an orphan. */
	TEST_ASSERT_EQ(send(t, &rst, S + 6), CFLOW_UNTRACKED_ORPHAN, "RST 2");
	TEST_ASSERT_EQ(send(t, &ack, S + 7), CFLOW_NEW, "ACK after RST");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 2 && c.flows_closed == 1 &&
		c.orphan_close == 1 && c.active == 1, "counters");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

static int
test_track_reuse(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 10, CFLOW_FULL_EVICT);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct cflow_counters c;

	send(t, &syn, S);
	TEST_ASSERT_EQ(send(t, &fin, 2 * S), CFLOW_CLOSING, "FIN");
	TEST_ASSERT_EQ(send(t, &syn, 3 * S), CFLOW_NEW, "SYN while closing");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.reused == 1 && c.flows_new == 2 && c.active == 1,
		"reuse counted");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

static int
test_track_udp_idle_on_access(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 10, CFLOW_FULL_EVICT);
	struct spec u = { .family = 6, .src = 1, .dst = 2, .sport = 5353,
		.dport = 53, .proto = 17 };
	struct cflow_counters c;

	TEST_ASSERT_EQ(send(t, &u, 0), CFLOW_NEW, "first");
	TEST_ASSERT_EQ(send(t, &u, 59 * S), CFLOW_SEEN, "59 s later");
	/* 61 s idle > 60 s UDP timeout: expired, then new. */
	TEST_ASSERT_EQ(send(t, &u, 120 * S), CFLOW_NEW, "after timeout");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 1 && c.flows_new == 2, "expired");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* The incremental sweep expires a flow no earlier than its timeout and
 * no later than timeout + max(1 s, timeout / 8), per protocol. */
static int
test_track_sweep_bounds(void)
{
	static const struct { uint8_t proto; uint64_t timeout_s; } cases[] = {
		{ 17, CFLOW_TIMEOUT_UDP_S },
		{ 6, CFLOW_TIMEOUT_TCP_S },
		{ 1, CFLOW_TIMEOUT_ICMP_S },
		{ 47, CFLOW_TIMEOUT_OTHER_S },
	};

	for (unsigned int i = 0; i < 8; i++) {
		/* A big table, so a pass takes many bounded calls. */
		struct cflow_tracker_params p;
		struct cflow_tracker *t;
		/* A call every 1 ms visits up to 64 buckets: a pass of the
		 * 65536 buckets can be done in 1 s, quicker than any period
		 * these timeouts ask for, so the pace is the tracker's. */
		uint64_t start = 1000 * S, step = S / 1000, at;
		uint64_t late = cases[i % 4].timeout_s / 8 > 1 ?
			cases[i % 4].timeout_s * S / 8 : S;
		struct cflow_counters c;

		cflow_tracker_params_init(&p, 200000);
		p.fp_bits = 12;
		p.seed = 42;
		/* 16-bit values: 268 ms ticks, so a 0.8 s shorter pass. */
		p.value_bits = i < 4 ? 32 : 16;
		t = cflow_tracker_create(&p);
		TEST_ASSERT(t != NULL, "create");

		for (uint8_t f = 0; f < 50; f++) {
			struct spec s = { .family = 4, .src = f, .dst = 200,
				.sport = 1000, .dport = 80,
				.proto = cases[i % 4].proto,
				.flags = CFLOW_TCP_ACK };

			send(t, &s, start);
		}
		for (at = start; at <= start + (cases[i % 4].timeout_s + 60) * S;
				at += step) {
			cflow_sweep(t, at);
			cflow_counters_get(t, &c);
			if (at <= start + cases[i % 4].timeout_s * S)
				TEST_ASSERT_EQ(c.flows_expired, 0u,
					"proto %u expired early at +%.2f s",
					cases[i % 4].proto,
					(double)(at - start) / S);
			if (c.flows_expired == 50)
				break;
		}
		TEST_ASSERT_EQ(c.flows_expired, 50u, "not all expired");
		TEST_ASSERT(at <= start + cases[i % 4].timeout_s * S + late,
			"proto %u: last expiry at +%.2f s, bound %.2f",
			cases[i % 4].proto, (double)(at - start) / S,
			(double)(cases[i % 4].timeout_s * S + late) / S);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

/*
 * A full sweep expires exactly the flows whose age in ticks is over
 * timeout + 1 (the rule in cflow_track.c; 32-bit values: ticks of 2^24
 * ns): with every timeout equal, so that the sweep's skip test
 * (cf_scan_due, shortest timeout) is at its edge for every flow, and
 * with the default timeouts and linger, each protocol's own.
 */
static int
test_track_sweep_all_exact(void)
{
	static const uint8_t protos[] = { 17, 6, 1, 47 };
	static const unsigned int classes[] = { CFLOW_CLASS_UDP,
		CFLOW_CLASS_TCP, CFLOW_CLASS_ICMP, CFLOW_CLASS_OTHER };
	const uint64_t tick = UINT64_C(1) << 24, timeout_ticks = 1000;

	for (unsigned int i = 0; i < 8; i++) {
		struct cflow_tracker_params p;
		struct cflow_tracker *t;
		uint64_t start = 1000 * tick, end, timeout;
		struct cflow_counters c;

		cflow_tracker_params_init(&p, 100000);
		p.fp_bits = 32;
		p.seed = 7;
		if (i < 4) {
			for (unsigned int k = 0; k < CFLOW_CLASS_MAX; k++)
				p.timeout_ns[k] = timeout_ticks * tick;
			p.close_linger_ns = CFLOW_LINGER_NONE;
		}
		t = cflow_tracker_create(&p);
		TEST_ASSERT(t != NULL, "create");
		timeout = i < 4 ? timeout_ticks * tick :
			p.timeout_ns[classes[i % 4]];
		/* Flow k last seen k ticks after start. */
		for (uint8_t k = 0; k < 40; k++) {
			struct spec s = { .family = 4, .src = k, .dst = 9,
				.sport = 1000, .dport = 80,
				.proto = protos[i % 4],
				.flags = CFLOW_TCP_ACK };

			send(t, &s, start + k * tick);
		}
		/* Ages timeout + 11 - k ticks: flows 0..9 are over
		 * timeout + 1. */
		end = start + (timeout / tick + 11) * tick;
		cflow_sweep_all(t, end);
		cflow_counters_get(t, &c);
		TEST_ASSERT_EQ(c.flows_expired, 10u, "case %u proto %u: %lu "
			"expired", i, protos[i % 4],
			(unsigned long)c.flows_expired);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

static int
test_track_time_backwards(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 10, CFLOW_FULL_EVICT);
	struct spec u = { .family = 4, .src = 1, .dst = 2, .sport = 1,
		.dport = 2, .proto = 17 };
	struct cflow_counters c;

	send(t, &u, 100000 * S);
	/* The capture again from its start: not idle, no wrap. */
	TEST_ASSERT_EQ(send(t, &u, 5 * S), CFLOW_SEEN, "earlier time");
	cflow_sweep_all(t, 6 * S);
	TEST_ASSERT_EQ(send(t, &u, 100030 * S), CFLOW_SEEN, "30 s later");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 0 && c.flows_new == 1, "no expiry");
	cflow_tracker_free(t);
	return 0;
}

static int
test_track_full_table(void)
{
	for (int policy = 0; policy < 2; policy++) {
		struct cflow_tracker *t = tracker(16, 12, 10,
			(enum cflow_full_policy)policy);
		struct cflow_counters c;
		struct cf_stats st;

		for (int f = 0; f < 200; f++) {
			struct spec s = { .family = 4, .src = (uint8_t)f,
				.dst = (uint8_t)(f >> 8), .sport = 9,
				.dport = 9, .proto = 17 };

			send(t, &s, (uint64_t)f * 1000);
		}
		cflow_counters_get(t, &c);
		cf_stats(cflow_tracker_filter(t), &st);
		TEST_ASSERT_EQ(c.active, st.items, "active vs filter items");
		if (policy == CFLOW_FULL_EVICT)
			TEST_ASSERT(c.flows_evicted > 0 && c.insert_failed == 0,
				"evict: %lu evicted", (unsigned long)
				c.flows_evicted);
		else
			TEST_ASSERT(c.insert_failed > 0 &&
				c.flows_evicted == 0, "untracked");
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

/* Refused by cflow_tracker_create() and by the resolution, EINVAL. */
static int
refused(const struct cflow_tracker_params *p)
{
	struct cflow_tracker_params r;

	errno = 0;
	if (cflow_tracker_create(p) != NULL || errno != EINVAL)
		return -1;
	errno = 0;
	return cflow_tracker_params_resolve(p, &r) == -EINVAL &&
		errno == EINVAL ? 0 : -1;
}

static int
test_track_params_rejected(void)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;

	cflow_tracker_params_init(&p, CF_MAX_CAPACITY + 1);
	TEST_ASSERT_EQ(refused(&p), 0, "capacity over CF_MAX_CAPACITY");
	cflow_tracker_params_init(&p, 10);
	p.close_linger_ns = UINT64_C(100) * 86400 * S;
	TEST_ASSERT_EQ(refused(&p), 0, "linger of 100 days");
	cflow_tracker_params_init(&p, 10);
	p.timeout_ns[CFLOW_CLASS_TCP] = UINT64_C(100) * 86400 * S;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"timeout of 100 days");
	cflow_tracker_params_init(&p, 10);
	p.fp_bits = 40;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"fp_bits 40");
	cflow_tracker_params_init(&p, 10);
	p.fp_bits = 3;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"fp_bits 3");
	cflow_tracker_params_init(&p, 10);
	p.value_bits = 8;
	TEST_ASSERT_EQ(refused(&p), 0, "value_bits 8");
	cflow_tracker_params_init(&p, 10);
	p.value_bits = 16;
	p.timeout_ns[CFLOW_CLASS_TCP] = UINT64_C(26) * 86400 * S;
	TEST_ASSERT_EQ(refused(&p), 0, "16-bit values, timeout of 26 days");
	p.value_bits = 32;
	t = cflow_tracker_create(&p);
	TEST_ASSERT(t != NULL, "32-bit values, timeout of 26 days");
	cflow_tracker_free(t);
	cflow_tracker_params_init(&p, 10);
	p.full_policy = (enum cflow_full_policy)(CFLOW_FULL_UNTRACKED + 1);
	TEST_ASSERT_EQ(refused(&p), 0, "full_policy out of range");
	cflow_tracker_params_init(&p, 10);
	p.hash = (enum cflow_hash_mode)(CFLOW_HASH_RSS + 1);
	TEST_ASSERT_EQ(refused(&p), 0, "hash out of range");
	TEST_ASSERT(cflow_tracker_create(NULL) == NULL && errno == EINVAL,
		"NULL");
	return 0;
}

/*
 * cflow_state_step() against the contract's table (docs/design.md), row
 * by row, and what cflow_count_step() counts for each. A table that
 * keeps the contract on its own store (bench/exact_table.c) gets it from
 * these two.
 */
static int
test_state_step(void)
{
	static const struct {
		enum cflow_state state;
		bool stale, linger;
		unsigned int cls;
		uint8_t flags;
		/* expected */
		enum cflow_verdict verdict;
		enum cflow_state next;
		bool remove, insert, expired, reused;
	} rows[] = {
		/* open, not idle */
		{ CFLOW_STATE_OPEN, false, true, CFLOW_CLASS_TCP, CFLOW_TCP_FIN,
			CFLOW_CLOSING, CFLOW_STATE_CLOSING, 0, 0, 0, 0 },
		{ CFLOW_STATE_OPEN, false, false, CFLOW_CLASS_TCP, CFLOW_TCP_RST,
			CFLOW_CLOSING, CFLOW_STATE_NONE, 1, 0, 0, 0 },
		{ CFLOW_STATE_OPEN, false, true, CFLOW_CLASS_TCP, CFLOW_TCP_ACK,
			CFLOW_SEEN, CFLOW_STATE_OPEN, 0, 0, 0, 0 },
		/* flags count for TCP only */
		{ CFLOW_STATE_OPEN, false, true, CFLOW_CLASS_UDP, CFLOW_TCP_FIN,
			CFLOW_SEEN, CFLOW_STATE_OPEN, 0, 0, 0, 0 },
		/* open, idle: expired, then as untracked */
		{ CFLOW_STATE_OPEN, true, true, CFLOW_CLASS_UDP, 0,
			CFLOW_NEW, CFLOW_STATE_NONE, 1, 1, 1, 0 },
		{ CFLOW_STATE_OPEN, true, true, CFLOW_CLASS_TCP, CFLOW_TCP_FIN,
			CFLOW_UNTRACKED_ORPHAN, CFLOW_STATE_NONE, 1, 0, 1, 0 },
		/* closing, within the linger */
		{ CFLOW_STATE_CLOSING, false, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_SYN, CFLOW_NEW, CFLOW_STATE_NONE, 1, 1, 0, 1 },
		{ CFLOW_STATE_CLOSING, false, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_SYN | CFLOW_TCP_ACK, CFLOW_SEEN,
			CFLOW_STATE_CLOSING, 0, 0, 0, 0 },
		{ CFLOW_STATE_CLOSING, false, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_FIN, CFLOW_SEEN, CFLOW_STATE_CLOSING, 0, 0, 0,
			0 },
		/* closing, linger over: removed uncounted, then untracked */
		{ CFLOW_STATE_CLOSING, true, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_ACK, CFLOW_NEW, CFLOW_STATE_NONE, 1, 1, 0, 0 },
		{ CFLOW_STATE_CLOSING, true, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_RST, CFLOW_UNTRACKED_ORPHAN, CFLOW_STATE_NONE,
			1, 0, 0, 0 },
		/* untracked (stale ignored) */
		{ CFLOW_STATE_NONE, true, true, CFLOW_CLASS_TCP, CFLOW_TCP_FIN,
			CFLOW_UNTRACKED_ORPHAN, CFLOW_STATE_NONE, 0, 0, 0, 0 },
		{ CFLOW_STATE_NONE, false, false, CFLOW_CLASS_ICMP, 0,
			CFLOW_NEW, CFLOW_STATE_NONE, 0, 1, 0, 0 },
	};

	for (unsigned int k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct cflow_step st = cflow_state_step(rows[k].state,
			rows[k].stale, rows[k].cls, rows[k].flags,
			rows[k].linger);
		struct cflow_counters c = { .active = 1 };
		enum cflow_verdict v;

		TEST_ASSERT(st.verdict == rows[k].verdict &&
			st.next == rows[k].next &&
			st.remove == rows[k].remove &&
			st.insert == rows[k].insert &&
			st.expired == rows[k].expired &&
			st.reused == rows[k].reused,
			"row %u: verdict %u next %u remove %d insert %d "
			"expired %d reused %d", k, st.verdict, st.next,
			st.remove, st.insert, st.expired, st.reused);
		v = cflow_count_step(&c, &st, true);
		TEST_ASSERT_EQ(v, rows[k].verdict, "row %u: counted", k);
		TEST_ASSERT(c.flows_expired == rows[k].expired &&
			c.reused == rows[k].reused &&
			c.flows_new == (v == CFLOW_NEW) &&
			c.flows_seen == (v == CFLOW_SEEN) &&
			c.flows_closed == (v == CFLOW_CLOSING) &&
			c.orphan_close == (v == CFLOW_UNTRACKED_ORPHAN) &&
			c.active == (uint64_t)(1 + (v == CFLOW_NEW) -
				rows[k].expired - (v == CFLOW_CLOSING)),
			"row %u: counters", k);
		if (st.insert) {
			memset(&c, 0, sizeof(c));
			TEST_ASSERT_EQ(cflow_count_step(&c, &st, false),
				CFLOW_UNTRACKED_FULL, "row %u: full", k);
			TEST_ASSERT(c.insert_failed == 1 && c.flows_new == 0,
				"row %u: full counted", k);
		}
	}
	/* Packets that do not parse to a key. */
	{
		struct cflow_counters c = { 0 };

		TEST_ASSERT_EQ(cflow_count_untracked(&c, CFLOW_PARSE_NON_IP),
			CFLOW_UNTRACKED_NON_IP, "non-IP");
		TEST_ASSERT_EQ(cflow_count_untracked(&c,
			CFLOW_PARSE_FRAGMENT), CFLOW_UNTRACKED_FRAGMENT,
			"fragment");
		for (int st = CFLOW_PARSE_MALFORMED_FIRST;
				st <= CFLOW_PARSE_MALFORMED_LAST; st++)
			TEST_ASSERT_EQ(cflow_count_untracked(&c,
				(enum cflow_parse_status)st),
				CFLOW_UNTRACKED_MALFORMED, "status %d", st);
		TEST_ASSERT(c.non_ip == 1 && c.fragments == 1 &&
			cflow_malformed_total(&c) ==
			CFLOW_PARSE_MALFORMED_LAST -
			CFLOW_PARSE_MALFORMED_FIRST + 1, "untracked counted");
	}
	return 0;
}

/* @p r holds every documented default (cflow.h), the seed aside. */
static int
check_defaults(const struct cflow_tracker_params *r)
{
	TEST_ASSERT_EQ(r->capacity, CFLOW_CAPACITY_DEFAULT, "capacity");
	TEST_ASSERT_EQ(r->capacity, UINT64_C(1) << 20, "capacity 2^20");
	TEST_ASSERT_EQ(r->fp_bits, 12u, "fp_bits");
	TEST_ASSERT_EQ(r->value_bits, 32u, "value_bits");
	TEST_ASSERT(!r->exact_size, "exact_size");
	TEST_ASSERT_EQ(r->hash, CFLOW_HASH_XXH3, "hash");
	TEST_ASSERT_EQ(r->timeout_ns[CFLOW_CLASS_TCP], 300 * S, "tcp");
	TEST_ASSERT_EQ(r->timeout_ns[CFLOW_CLASS_UDP], 60 * S, "udp");
	TEST_ASSERT_EQ(r->timeout_ns[CFLOW_CLASS_ICMP], 30 * S, "icmp");
	TEST_ASSERT_EQ(r->timeout_ns[CFLOW_CLASS_OTHER], 60 * S, "other");
	TEST_ASSERT_EQ(r->close_linger_ns, 10 * S, "linger");
	TEST_ASSERT_EQ(r->full_policy, CFLOW_FULL_EVICT, "full_policy");
	TEST_ASSERT_EQ(r->sweep_max_buckets, 64u, "sweep_max_buckets");
	TEST_ASSERT(r->allocator == NULL && r->socket_id == 0 &&
		!r->flow_time && !r->parse.vlan_in_key &&
		r->parse.link_type == CFLOW_LINK_EN10MB &&
		r->parse.decap == 0, "the rest zero");
	return 0;
}

static int
test_track_params_zero_is_default(void)
{
	struct cflow_tracker_params z, r, r2, q;
	struct cflow_tracker *t, *t2;
	struct spec udp = { .family = 4, .src = 1, .dst = 2, .sport = 5353,
		.dport = 53, .proto = 17 };
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cf_stats st;

	/* A zeroed struct is a tracker with the defaults. */
	memset(&z, 0, sizeof(z));
	t = cflow_tracker_create(&z);
	TEST_ASSERT(t != NULL, "zeroed params: %s", strerror(errno));
	cflow_tracker_params_get(t, &r);
	TEST_ASSERT_EQ(check_defaults(&r), 0, "tracker's defaults");
	TEST_ASSERT(r.seed != 0, "seed drawn");
	cf_stats(cflow_tracker_filter(t), &st);
	TEST_ASSERT(st.slots * 96 / 100 >= CFLOW_CAPACITY_DEFAULT,
		"table of %lu slots for 2^20 flows", (unsigned long)st.slots);
	t2 = cflow_tracker_create(&z);
	TEST_ASSERT(t2 != NULL, "second");
	cflow_tracker_params_get(t2, &r2);
	TEST_ASSERT(r2.seed != r.seed, "each zeroed tracker draws a seed");
	cflow_tracker_free(t2);
	cflow_tracker_free(t);

	/* The resolution: the same values, idempotent. */
	TEST_ASSERT_EQ(cflow_tracker_params_resolve(&z, &r), 0, "resolve");
	TEST_ASSERT_EQ(check_defaults(&r), 0, "resolved defaults");
	r2 = r;
	TEST_ASSERT_EQ(cflow_tracker_params_resolve(&r2, &r2), 0, "again");
	TEST_ASSERT(r2.seed == r.seed && r2.capacity == r.capacity &&
		r2.timeout_ns[CFLOW_CLASS_ICMP] == r.timeout_ns[CFLOW_CLASS_ICMP]
		&& r2.close_linger_ns == r.close_linger_ns, "idempotent");
	/* params_init spells out the same. */
	cflow_tracker_params_init(&q, 0);
	TEST_ASSERT_EQ(check_defaults(&q), 0, "params_init's defaults");
	TEST_ASSERT(q.seed != 0, "params_init's seed");
	/* fixed_seed keeps a seed of 0; CFLOW_LINGER_NONE stays. */
	z.fixed_seed = true;
	z.close_linger_ns = CFLOW_LINGER_NONE;
	TEST_ASSERT_EQ(cflow_tracker_params_resolve(&z, &r), 0, "fixed");
	TEST_ASSERT(r.seed == 0 && r.close_linger_ns == CFLOW_LINGER_NONE,
		"seed 0 kept, no linger");

	/* The defaults at work, on a small table: UDP idles out after
	 * 60 s (late by at most max(1 s, 60 s / 8)), a closed TCP flow
	 * lingers 10 s. */
	memset(&z, 0, sizeof(z));
	z.capacity = 1000;
	t = cflow_tracker_create(&z);
	TEST_ASSERT(t != NULL, "capacity only");
	TEST_ASSERT_EQ(send(t, &udp, 1000 * S), CFLOW_NEW, "udp");
	TEST_ASSERT_EQ(send(t, &udp, 1059 * S), CFLOW_SEEN, "59 s idle");
	TEST_ASSERT_EQ(send(t, &udp, 1118 * S), CFLOW_SEEN, "59 s again");
	TEST_ASSERT_EQ(send(t, &udp, 1187 * S), CFLOW_NEW, "69 s idle");
	TEST_ASSERT_EQ(send(t, &syn, 1200 * S), CFLOW_NEW, "syn");
	TEST_ASSERT_EQ(send(t, &fin, 1201 * S), CFLOW_CLOSING, "fin");
	TEST_ASSERT_EQ(send(t, &ack, 1210 * S), CFLOW_SEEN, "9 s lingering");
	TEST_ASSERT_EQ(send(t, &ack, 1222 * S), CFLOW_NEW, "linger over");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* ------------------------------------------------- the largest tables */

/* One packet of @p s tracked under the given flow hash. */
static enum cflow_verdict
send_hashed(struct cflow_tracker *t, const struct spec *s, uint64_t hash,
		uint64_t at)
{
	uint8_t buf[256];
	struct cflow_input in = { .data = buf, .time_ns = at,
		.has_hash = true, .hash = hash };
	enum cflow_verdict v;

	in.len = in.wire_len = build(buf, s);
	cflow_track_burst(t, &in, 1, &v);
	return v;
}

/*
 * --flows 2061584303 to 2147483648 made tables of 2^32 slots whose
 * 32-bit positions wrap: the worker crashed in cf_lookup_bulk_values on
 * the second packet of a flow. They are refused now; the largest table
 * accepted tracks flows in its last bucket (chosen through the given
 * hash) with the right verdicts.
 */
static int
test_track_largest_table(void)
{
	static const uint64_t caps[] = { UINT64_C(2147483648),
		UINT64_C(2061584303), CF_MAX_CAPACITY };
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec ack = tcp(CFLOW_TCP_ACK, true);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	double rss0 = rss_mib();

	for (unsigned int k = 0; k < 3; k++) {
		struct cflow_tracker_params p;
		struct cflow_tracker *t;
		struct cflow_counters c;
		struct cf_stats st;
		uint64_t top, hash[2];
		uint32_t pos;

		cflow_tracker_params_init(&p, caps[k]);
		p.fp_bits = 4;
		p.value_bits = 16;
		p.seed = 1;
		p.allocator = &lazy;
		errno = 0;
		t = cflow_tracker_create(&p);
		if (t == NULL) {
			TEST_ASSERT(errno == EINVAL &&
				caps[k] > CF_MAX_CAPACITY, "capacity %lu: "
				"errno %d", (unsigned long)caps[k], errno);
			continue;
		}
		cf_stats(cflow_tracker_filter(t), &st);
		top = st.buckets - 1;
		/* Bucket from the high half, fingerprints 1 and 8. */
		hash[0] = top << 32;
		hash[1] = top << 32 | UINT32_C(0x80000000);
		for (int f = 0; f < 2; f++) {
			TEST_ASSERT_EQ(send_hashed(t, &syn, hash[f], S),
				CFLOW_NEW, "capacity %lu: SYN",
				(unsigned long)caps[k]);
			TEST_ASSERT(cf_lookup_with_hash(cflow_tracker_filter(t),
				hash[f], &pos) && pos >= top * 4 &&
				pos < st.slots, "position %u", pos);
			TEST_ASSERT_EQ(send_hashed(t, &ack, hash[f], 2 * S),
				CFLOW_SEEN, "capacity %lu: ACK",
				(unsigned long)caps[k]);
			TEST_ASSERT_EQ(send_hashed(t, &fin, hash[f], 3 * S),
				CFLOW_CLOSING, "FIN");
			TEST_ASSERT_EQ(send_hashed(t, &ack, hash[f], 4 * S),
				CFLOW_SEEN, "ACK while closing");
		}
		cflow_counters_get(t, &c);
		TEST_ASSERT(c.flows_new == 2 && c.flows_closed == 2 &&
			c.flows_seen == 4 && c.active == 0, "counters");
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
		TEST_ASSERT(caps[k] <= CF_MAX_CAPACITY, "capacity %lu above "
			"CF_MAX_CAPACITY accepted", (unsigned long)caps[k]);
	}
	printf("# resident set: %.1f MiB before, %.1f MiB after\n", rss0,
		rss_mib());
	TEST_ASSERT(rss_mib() < rss0 + 64, "resident set grew from %.1f to "
		"%.1f MiB", rss0, rss_mib());
	return 0;
}

/* ----------------------------------------------- randomised vs model */

struct model_flow {
	struct cflow_key key;
	bool used, closing;
	uint8_t cls;
	uint64_t last_ns;
};

struct model {
	struct model_flow *slot;
	uint32_t size;
	struct cflow_counters c;
	uint64_t now_ns;
	uint64_t timeout_ns[CFLOW_CLASS_MAX], linger_ns;
	/* The rule before issue 12: the linger ran from the closing
	 * packet, however many packets of the flow came after it. */
	bool linger_from_close;
};

static struct model_flow *
model_find(struct model *m, const struct cflow_key *k)
{
	uint32_t i = (uint32_t)cflow_hash_key(k, 1) % m->size;

	while (m->slot[i].used &&
			memcmp(&m->slot[i].key, k, sizeof(*k)) != 0)
		i = (i + 1) % m->size;
	return &m->slot[i];
}

/* Tombstone-free delete for linear probing: re-place the cluster. */
static void
model_remove(struct model *m, struct model_flow *e)
{
	uint32_t i = (uint32_t)(e - m->slot);

	e->used = false;
	for (i = (i + 1) % m->size; m->slot[i].used; i = (i + 1) % m->size) {
		struct model_flow moved = m->slot[i];

		m->slot[i].used = false;
		*model_find(m, &moved.key) = moved;
	}
}

/* The tracker's contract, on exact keys and nanoseconds. Times are
 * drawn away from the coarse-tick boundaries (see model_run). */
static void
model_packet(struct model *m, const struct cflow_packet *p, uint64_t at)
{
	bool tcp = p->proto_class == CFLOW_CLASS_TCP;
	bool close = tcp && (p->tcp_flags & (CFLOW_TCP_FIN | CFLOW_TCP_RST));
	bool syn = tcp && (p->tcp_flags & (CFLOW_TCP_SYN | CFLOW_TCP_ACK)) ==
		CFLOW_TCP_SYN;
	struct model_flow *e;

	if (at > m->now_ns)
		m->now_ns = at;
	e = model_find(m, &p->key);
	if (e->used) {
		uint64_t age = m->now_ns - e->last_ns;

		if (!e->closing && age > m->timeout_ns[e->cls]) {
			model_remove(m, e);
			m->c.flows_expired++;
			m->c.active--;
		} else if (!e->closing) {
			if (close) {
				m->c.flows_closed++;
				m->c.active--;
				e->closing = true;
				e->last_ns = m->now_ns;
				return;
			}
			e->last_ns = m->now_ns;
			m->c.flows_seen++;
			return;
		} else if (age > m->linger_ns) {
			model_remove(m, e);
		} else if (syn) {
			model_remove(m, e);
			m->c.reused++;
			goto insert;
		} else {
			/* The linger restarts with each packet of the flow. */
			if (!m->linger_from_close)
				e->last_ns = m->now_ns;
			m->c.flows_seen++;
			return;
		}
	}
	if (close) {
		m->c.orphan_close++;
		return;
	}
insert:
	e = model_find(m, &p->key);
	e->used = true;
	e->key = p->key;
	e->closing = false;
	e->cls = p->proto_class;
	e->last_ns = m->now_ns;
	m->c.flows_new++;
	m->c.active++;
}

static void
model_sweep_all(struct model *m, uint64_t at)
{
	if (at > m->now_ns)
		m->now_ns = at;
	for (uint32_t i = 0; i < m->size; i++) {
		struct model_flow *e = &m->slot[i];
		uint64_t age;

		if (!e->used)
			continue;
		age = m->now_ns - e->last_ns;
		if (e->closing ? age > m->linger_ns :
				age > m->timeout_ns[e->cls]) {
			if (!e->closing) {
				m->c.flows_expired++;
				m->c.active--;
			}
			model_remove(m, e);
			i--; /* a moved entry may now sit here */
		}
	}
}

/*
 * Times step in whole seconds from a large base, with timeouts of whole
 * seconds plus half a second: an age is never within a tick of a
 * timeout, so the tracker's coarse clock and the model's nanoseconds
 * agree on every decision.
 */
/* With 16-bit values, class "other" gets a 300 s timeout (so 268 ms
 * ticks), and the clock now and then leaps 10 or 37 minutes: the
 * second is past the whole range of the stored ticks (36.6 minutes). */
static int
model_run(unsigned int fp_bits, unsigned int value_bits, uint64_t seed,
		struct cflow_counters *got, struct cflow_counters *want,
		struct cflow_counters *old)
{
	enum { FLOWS = 3000, PACKETS = 60000 };
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN,
		CFLOW_TCP_SYN | CFLOW_TCP_ACK, CFLOW_TCP_ACK, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK, CFLOW_TCP_RST };
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct model m = { .size = 8192 };
	struct model o = { .size = 8192, .linger_from_close = true };
	uint64_t rng = seed, at = 1000000 * S + S / 2;

	cflow_tracker_params_init(&p, 2 * FLOWS);
	p.fp_bits = fp_bits;
	p.value_bits = value_bits;
	p.seed = seed;
	for (int k = 0; k < CFLOW_CLASS_MAX; k++)
		p.timeout_ns[k] = (uint64_t)(5 + 3 * k) * S;
	if (value_bits == 16)
		p.timeout_ns[CFLOW_CLASS_OTHER] = 300 * S;
	p.close_linger_ns = 2 * S;
	t = cflow_tracker_create(&p);
	m.slot = calloc(m.size, sizeof(*m.slot));
	o.slot = calloc(o.size, sizeof(*o.slot));
	TEST_ASSERT(t != NULL && m.slot != NULL && o.slot != NULL, "create");
	memcpy(m.timeout_ns, p.timeout_ns, sizeof(m.timeout_ns));
	m.linger_ns = p.close_linger_ns;
	memcpy(o.timeout_ns, p.timeout_ns, sizeof(o.timeout_ns));
	o.linger_ns = p.close_linger_ns;

	for (int n = 0; n < PACKETS; n += CF_BULK_MAX) {
		struct cflow_input in[CF_BULK_MAX];
		uint8_t bufs[CF_BULK_MAX][256];
		struct cflow_packet pkts[CF_BULK_MAX];
		enum cflow_parse_status status[CF_BULK_MAX];

		/* Mostly forward; now and then a capture restarts. */
		if (cfu_splitmix64(&rng) % 1000 == 0)
			at -= 20 * S;
		else if (value_bits == 16 && cfu_splitmix64(&rng) % 400 == 0)
			at += (cfu_splitmix64(&rng) & 1 ? 600 : 2200) * S;
		else
			at += (cfu_splitmix64(&rng) % 3) * S;
		for (int k = 0; k < CF_BULK_MAX; k++) {
			uint32_t f = (uint32_t)(cfu_splitmix64(&rng) % FLOWS);
			static const uint8_t protos[] = { 6, 6, 17, 1, 47 };

			/* One packet in 8 goes to one of 32 hot TCP flows,
			 * which see packets while closing: lingers restart. */
			if (f % 8 == 0)
				f = f / 8 % 32 / 2 * 5 + f / 8 % 2;
			struct spec s = { .family = f % 3 ? 4 : 6,
				.src = (uint8_t)f, .dst = (uint8_t)(f >> 8),
				.sport = (uint16_t)(1024 + f), .dport = 80,
				.proto = protos[f % 5],
				.flags = flag_set[cfu_splitmix64(&rng) % 7] };
			struct cflow_packet *pkt = &pkts[k];

			if (cfu_splitmix64(&rng) & 1) { /* reply direction */
				s.src = (uint8_t)(f >> 8);
				s.dst = (uint8_t)f;
				s.sport = 80;
				s.dport = (uint16_t)(1024 + f);
			}
			in[k] = (struct cflow_input){ .data = bufs[k],
				.time_ns = at };
			in[k].len = in[k].wire_len = build(bufs[k], &s);
			status[k] = cflow_parse(bufs[k], in[k].len, NULL, pkt);
			model_packet(&m, pkt, at);
			model_packet(&o, pkt, at);
			m.c.packets++;
			o.c.packets++;
		}
		/* Every other burst comes parsed already, as with a
		 * blocklist: both entry points must agree with the model. */
		if (n / CF_BULK_MAX % 2)
			cflow_track_parsed(t, in, pkts, status, CF_BULK_MAX,
					NULL, NULL);
		else
			cflow_track_burst(t, in, CF_BULK_MAX, NULL);
		cflow_sweep(t, at);
	}
	cflow_sweep_all(t, at + 1000 * S);
	model_sweep_all(&m, at + 1000 * S);
	model_sweep_all(&o, at + 1000 * S);
	cflow_counters_get(t, got);
	*want = m.c;
	if (old != NULL)
		*old = o.c;
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	free(m.slot);
	free(o.slot);
	return 0;
}

/* 32-bit fingerprints: no false positive in these runs, so the tracker
 * must agree with the model exactly, with 32- and 16-bit values. */
static int
test_track_model_fp32_exact(void)
{
	for (uint64_t run = 0; run < 6; run++) {
		unsigned int value_bits = run < 3 ? 32 : 16;
		uint64_t seed = 1 + run % 3;
		struct cflow_counters g, w, o;

		TEST_ASSERT_EQ(model_run(32, value_bits, seed, &g, &w, &o), 0,
			"run");
		printf("# %u-bit values, seed %lu: new %lu seen %lu closed %lu "
			"expired %lu orphan %lu reused %lu; lingering from the "
			"close: new %lu orphan %lu reused %lu\n", value_bits,
			(unsigned long)seed, (unsigned long)w.flows_new,
			(unsigned long)w.flows_seen,
			(unsigned long)w.flows_closed,
			(unsigned long)w.flows_expired,
			(unsigned long)w.orphan_close, (unsigned long)w.reused,
			(unsigned long)o.flows_new,
			(unsigned long)o.orphan_close, (unsigned long)o.reused);
		TEST_ASSERT(g.flows_new == w.flows_new &&
			g.flows_seen == w.flows_seen &&
			g.flows_closed == w.flows_closed &&
			g.flows_expired == w.flows_expired &&
			g.orphan_close == w.orphan_close &&
			g.reused == w.reused && g.active == w.active &&
			g.flows_evicted == 0 && g.insert_failed == 0,
			"%u-bit values, seed %lu: tracker new %lu seen %lu "
			"closed %lu expired %lu orphan %lu reused %lu active %lu",
			value_bits, (unsigned long)seed,
			(unsigned long)g.flows_new,
			(unsigned long)g.flows_seen,
			(unsigned long)g.flows_closed,
			(unsigned long)g.flows_expired,
			(unsigned long)g.orphan_close, (unsigned long)g.reused,
			(unsigned long)g.active);
		TEST_ASSERT(w.flows_expired > 0 && w.flows_closed > 0 &&
			w.reused > 0 && w.orphan_close > 0,
			"the run did not exercise every transition");
		/* Packets of closing flows restart the linger: the old rule
		 * would have decided some of them otherwise. */
		TEST_ASSERT(o.flows_new != w.flows_new ||
			o.orphan_close != w.orphan_close ||
			o.reused != w.reused,
			"the run never restarted a linger that mattered");
	}
	return 0;
}

/* With short fingerprints a new flow can match another flow's entry (a
 * false positive): it is then counted seen, not new. The gap stays
 * within a generous multiple of the expected number of such events. */
static int
test_track_model_short_fp(void)
{
	static const unsigned int widths[] = { 12, 16 };

	for (unsigned int i = 0; i < 2; i++) {
		struct cflow_counters g, w;
		double lookups, expected, bound;

		TEST_ASSERT_EQ(model_run(widths[i], 32, 7, &g, &w, NULL), 0,
			"run");
		/* Each untracked packet's lookup compares with at most
		 * 2 * 4 entries of a table that is at most half full. */
		lookups = (double)(w.flows_new + w.orphan_close);
		expected = lookups * 8 * 0.5 / (double)(1u << widths[i]);
		bound = 10 + 4 * expected;
		printf("# f=%u: new %lu vs %lu, expected false positives "
			"%.1f\n", widths[i], (unsigned long)g.flows_new,
			(unsigned long)w.flows_new, expected);
		TEST_ASSERT(w.flows_new >= g.flows_new &&
			(double)(w.flows_new - g.flows_new) <= bound,
			"f=%u: %lu new vs %lu", widths[i],
			(unsigned long)g.flows_new, (unsigned long)w.flows_new);
		TEST_ASSERT(fabs((double)g.flows_seen - (double)w.flows_seen) <=
			3 * bound, "seen");
	}
	return 0;
}

/* -------------------------------------------- the linger follows the flow */

#define MS (S / 1000)
#define FIN_ACK (CFLOW_TCP_FIN | CFLOW_TCP_ACK)
#define SYN_ACK (CFLOW_TCP_SYN | CFLOW_TCP_ACK)

/* One packet of the scripted flow (tcp(), either direction) and its
 * verdict. */
struct linger_step {
	uint64_t at;
	bool reply;
	uint8_t flags;
	enum cflow_verdict want;
};

/* Counters of the exact model for @p steps, with the linger from each
 * packet of the closing flow, or (@p from_close) from the closing packet
 * only, as before issue 12. */
static int
linger_model(const struct linger_step *steps, unsigned int n, bool from_close,
		struct cflow_counters *c)
{
	struct cflow_tracker_params p;
	struct model m = { .size = 64, .linger_from_close = from_close };

	cflow_tracker_params_init(&p, 1000);
	memcpy(m.timeout_ns, p.timeout_ns, sizeof(m.timeout_ns));
	m.linger_ns = 10 * S;
	m.slot = calloc(m.size, sizeof(*m.slot));
	TEST_ASSERT(m.slot != NULL, "alloc");
	for (unsigned int k = 0; k < n; k++) {
		struct spec s = tcp(steps[k].flags, steps[k].reply);
		struct cflow_packet pkt;
		uint8_t buf[256];

		TEST_ASSERT_EQ(cflow_parse(buf, build(buf, &s), NULL, &pkt),
			CFLOW_PARSE_OK, "parse");
		model_packet(&m, &pkt, steps[k].at);
		m.c.packets++;
	}
	*c = m.c;
	free(m.slot);
	return 0;
}

static bool
linger_same(const struct cflow_counters *a, const struct cflow_counters *b)
{
	return a->flows_new == b->flows_new && a->flows_seen == b->flows_seen &&
		a->flows_closed == b->flows_closed &&
		a->flows_expired == b->flows_expired &&
		a->orphan_close == b->orphan_close &&
		a->reused == b->reused && a->active == b->active;
}

/*
 * Replay @p steps on a tracker with a 10 s linger, one packet at a time:
 * each verdict as scripted, the counters those of the model, and (the
 * old rule's) different for the same packets. Then the closed flow's
 * entry must still be there 9 s after the last packet, and gone 11 s
 * after it.
 */
static int
linger_replay(const struct linger_step *steps, unsigned int n,
		struct cflow_counters *got, struct cflow_counters *old)
{
	struct cflow_tracker *t = tracker(1000, 32, 10, CFLOW_FULL_EVICT);
	struct cflow_counters want;
	uint64_t last = steps[n - 1].at;
	struct cf_stats st;

	TEST_ASSERT(t != NULL, "create");
	for (unsigned int k = 0; k < n; k++) {
		struct spec s = tcp(steps[k].flags, steps[k].reply);
		enum cflow_verdict v = send(t, &s, steps[k].at);

		TEST_ASSERT_EQ(v, steps[k].want, "packet %u at %.3f s: "
			"verdict %d, want %d", k, (double)steps[k].at / S, v,
			steps[k].want);
	}
	cflow_counters_get(t, got);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	TEST_ASSERT_EQ(linger_model(steps, n, false, &want), 0, "model");
	TEST_ASSERT_EQ(linger_model(steps, n, true, old), 0, "old model");
	TEST_ASSERT(linger_same(got, &want), "tracker and model differ: "
		"new %lu/%lu seen %lu/%lu closed %lu/%lu orphan %lu/%lu",
		(unsigned long)got->flows_new, (unsigned long)want.flows_new,
		(unsigned long)got->flows_seen, (unsigned long)want.flows_seen,
		(unsigned long)got->flows_closed,
		(unsigned long)want.flows_closed,
		(unsigned long)got->orphan_close,
		(unsigned long)want.orphan_close);
	TEST_ASSERT(!linger_same(old, &want), "the old rule gives the same "
		"counters");
	cflow_sweep_all(t, last + 9 * S);
	cf_stats(cflow_tracker_filter(t), &st);
	TEST_ASSERT_EQ(st.items, 1u, "9 s after the last packet: the closed "
		"flow lingers");
	cflow_sweep_all(t, last + 11 * S);
	cf_stats(cflow_tracker_filter(t), &st);
	TEST_ASSERT_EQ(st.items, 0u, "11 s after the last packet: removed");
	cflow_counters_get(t, got);
	TEST_ASSERT(got->flows_expired == 0 && got->flows_closed == 1,
		"the linger's end is not counted");
	cflow_tracker_free(t);
	return 0;
}

/*
 * The server's FIN retransmitted every 3 s for 12 s, linger 10 s: one
 * flow, closed once; the retransmissions and the client's late FIN are
 * packets of the closed flow, not orphan closes. From the first FIN, the
 * linger ended before the 14 s retransmission: 2 orphan closes.
 */
static int
test_track_linger_fin_retransmitted(void)
{
	static const struct linger_step steps[] = {
		{ 1000 * MS, false, CFLOW_TCP_SYN, CFLOW_NEW },
		{ 1010 * MS, true, SYN_ACK, CFLOW_SEEN },
		{ 1020 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 1500 * MS, true, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 2000 * MS, true, FIN_ACK, CFLOW_CLOSING },
		{ 5000 * MS, true, FIN_ACK, CFLOW_SEEN },
		{ 8000 * MS, true, FIN_ACK, CFLOW_SEEN },
		{ 11000 * MS, true, FIN_ACK, CFLOW_SEEN },
		{ 14000 * MS, true, FIN_ACK, CFLOW_SEEN },
		{ 14200 * MS, false, FIN_ACK, CFLOW_SEEN },
		{ 14300 * MS, true, CFLOW_TCP_ACK, CFLOW_SEEN },
	};
	enum { N = sizeof(steps) / sizeof(steps[0]) };
	struct cflow_counters c, old;

	TEST_ASSERT_EQ(linger_replay(steps, N, &c, &old), 0, "replay");
	TEST_ASSERT(c.flows_new == 1 && c.flows_closed == 1 &&
		c.flows_seen == 9 && c.orphan_close == 0 && c.active == 0,
		"new %lu closed %lu seen %lu orphan %lu",
		(unsigned long)c.flows_new, (unsigned long)c.flows_closed,
		(unsigned long)c.flows_seen, (unsigned long)c.orphan_close);
	/* From the first FIN: the 14 s retransmission and the client's FIN
	 * are orphan closes, the last ACK a second flow. */
	TEST_ASSERT(old.flows_new == 2 && old.flows_closed == 1 &&
		old.flows_seen == 6 && old.orphan_close == 2 &&
		old.active == 1, "old rule: new %lu closed %lu seen %lu "
		"orphan %lu", (unsigned long)old.flows_new,
		(unsigned long)old.flows_closed, (unsigned long)old.flows_seen,
		(unsigned long)old.orphan_close);
	return 0;
}

/*
 * Half closed: after the server's FIN (at 10 s) the client keeps sending
 * data every 2 s for 11 s, then closes its side. One flow, closed once.
 * From the server's FIN, the linger ended before the client's 21 s
 * packet: a second flow, closed again by the client's FIN.
 */
static int
test_track_linger_half_closed(void)
{
	static const struct linger_step steps[] = {
		{ 1000 * MS, false, CFLOW_TCP_SYN, CFLOW_NEW },
		{ 1010 * MS, true, SYN_ACK, CFLOW_SEEN },
		{ 1020 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 5000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 10000 * MS, true, FIN_ACK, CFLOW_CLOSING },
		{ 12000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 14000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 16000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 18000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 20000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 21000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 21500 * MS, false, FIN_ACK, CFLOW_SEEN },
		{ 21600 * MS, true, CFLOW_TCP_ACK, CFLOW_SEEN },
	};
	enum { N = sizeof(steps) / sizeof(steps[0]) };
	struct cflow_counters c, old;

	TEST_ASSERT_EQ(linger_replay(steps, N, &c, &old), 0, "replay");
	TEST_ASSERT(c.flows_new == 1 && c.flows_closed == 1 &&
		c.flows_seen == 11 && c.orphan_close == 0 && c.active == 0,
		"new %lu closed %lu seen %lu orphan %lu",
		(unsigned long)c.flows_new, (unsigned long)c.flows_closed,
		(unsigned long)c.flows_seen, (unsigned long)c.orphan_close);
	TEST_ASSERT(old.flows_new == 2 && old.flows_closed == 2 &&
		old.flows_seen == 9 && old.orphan_close == 0 &&
		old.active == 0, "old rule: new %lu closed %lu seen %lu "
		"orphan %lu", (unsigned long)old.flows_new,
		(unsigned long)old.flows_closed, (unsigned long)old.flows_seen,
		(unsigned long)old.orphan_close);
	return 0;
}

/*
 * A SYN on a closing flow is a new connection however long the linger
 * was kept alive: reused, and the new flow open.
 */
static int
test_track_linger_reuse_after_restarts(void)
{
	struct cflow_tracker *t = tracker(1000, 32, 10, CFLOW_FULL_EVICT);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cflow_counters c;

	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send(t, &syn, S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &fin, 2 * S), CFLOW_CLOSING, "FIN");
	for (uint64_t k = 1; k <= 5; k++)
		TEST_ASSERT_EQ(send(t, &ack, 2 * S + k * 4 * S), CFLOW_SEEN,
			"ACK %lu while closing", (unsigned long)k);
	/* 25 s after the FIN, 3 s after the last packet. */
	TEST_ASSERT_EQ(send(t, &syn, 25 * S), CFLOW_NEW, "SYN while closing");
	TEST_ASSERT_EQ(send(t, &ack, 40 * S), CFLOW_SEEN, "the new flow");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.reused == 1 && c.flows_new == 2 && c.flows_closed == 1 &&
		c.active == 1 && c.orphan_close == 0, "reused %lu new %lu "
		"closed %lu active %lu", (unsigned long)c.reused,
		(unsigned long)c.flows_new, (unsigned long)c.flows_closed,
		(unsigned long)c.active);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/*
 * flow_time: packets of a closing flow restamp it as an open flow's do,
 * with the later of its stamp and the packet's time. The flow closes at
 * 10 s; another flow moves the clock to 30 s; the closing flow's packets
 * at 15 s and 20 s (their own times) keep it, a packet at 12 s (earlier
 * than its stamp) does not take the stamp back, and one at 29 s, 9 s
 * after its latest packet, still finds it: from 12 s or from the FIN, it
 * would have ended.
 */
static int
test_track_linger_flow_time(void)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct spec g = { .family = 4, .src = 7, .dst = 8, .sport = 53,
		.dport = 53, .proto = 17 };
	struct cflow_counters c;

	cflow_tracker_params_init(&p, 1000);
	p.seed = 42;
	p.fp_bits = 32;
	p.flow_time = true;
	p.close_linger_ns = 10 * S;
	t = cflow_tracker_create(&p);
	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send(t, &syn, 1 * S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &fin, 10 * S), CFLOW_CLOSING, "FIN");
	TEST_ASSERT_EQ(send(t, &g, 30 * S), CFLOW_NEW, "other stream");
	TEST_ASSERT_EQ(send(t, &ack, 15 * S), CFLOW_SEEN, "ACK at 15 s");
	TEST_ASSERT_EQ(send(t, &ack, 20 * S), CFLOW_SEEN, "ACK at 20 s");
	TEST_ASSERT_EQ(send(t, &ack, 12 * S), CFLOW_SEEN, "ACK at 12 s");
	TEST_ASSERT_EQ(send(t, &ack, 29 * S), CFLOW_SEEN, "ACK at 29 s");
	/* 38 s: 9 s after the 29 s packet; 49 s: 11 s after the 38 s one. */
	TEST_ASSERT_EQ(send(t, &ack, 38 * S), CFLOW_SEEN, "ACK at 38 s");
	TEST_ASSERT_EQ(send(t, &ack, 49 * S), CFLOW_NEW, "ACK at 49 s");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 3 && c.flows_closed == 1 &&
		c.flows_seen == 5 && c.orphan_close == 0, "new %lu closed %lu "
		"seen %lu", (unsigned long)c.flows_new,
		(unsigned long)c.flows_closed, (unsigned long)c.flows_seen);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

static int
test_track_rss_hash_and_fallback(void)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct cflow_counters c;
	struct cflow_tracker_params q;
	struct spec u = { .family = 4, .src = 1, .dst = 2, .sport = 1,
		.dport = 2, .proto = 17 };
	uint8_t buf[256];
	struct cflow_input in[2] = {
		{ .data = buf, .time_ns = S, .rss = 0xabcd1234, .has_rss = true },
		{ .data = buf, .time_ns = S },
	};

	cflow_tracker_params_init(&p, 100);
	cflow_tracker_params_init(&q, 100);
	TEST_ASSERT(p.seed != q.seed, "default seeds are not random");
	p.hash = CFLOW_HASH_RSS;
	t = cflow_tracker_create(&p);
	in[0].len = in[0].wire_len = in[1].len = in[1].wire_len =
		build(buf, &u);
	cflow_track_burst(t, in, 2, NULL);
	cflow_counters_get(t, &c);
	/* The same flow hashed two ways: two entries, one fallback. */
	TEST_ASSERT(c.hash_fallback == 1 && c.flows_new == 2,
		"fallback %lu new %lu", (unsigned long)c.hash_fallback,
		(unsigned long)c.flows_new);
	cflow_track_burst(t, in, 1, NULL);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_seen == 1 && c.hash_fallback == 1, "RSS again");
	cflow_tracker_free(t);
	return 0;
}

/* A caller's hash (the application hashes each key once, to pick the
 * flow's lcore) stands for the tracker's own; a different one is
 * another flow. */
static int
test_track_given_hash(void)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct cflow_counters c;
	struct cflow_packet pkt;
	struct spec u = { .family = 4, .src = 1, .dst = 2, .sport = 1,
		.dport = 2, .proto = 17 };
	uint8_t buf[256];
	struct cflow_input in[3] = {
		{ .data = buf, .time_ns = S },
		{ .data = buf, .time_ns = S, .has_hash = true },
		{ .data = buf, .time_ns = S, .has_hash = true },
	};

	cflow_tracker_params_init(&p, 100);
	t = cflow_tracker_create(&p);
	in[0].len = in[0].wire_len = build(buf, &u);
	in[1].len = in[1].wire_len = in[2].len = in[2].wire_len = in[0].len;
	TEST_ASSERT(cflow_parse(buf, in[0].len, &p.parse, &pkt) ==
		CFLOW_PARSE_OK, "parse");
	in[1].hash = cflow_hash_key(&pkt.key, p.seed);
	in[2].hash = in[1].hash ^ 0x5a5a5a5a5a5a5a5aull;
	cflow_track_burst(t, in, 2, NULL);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 1 && c.flows_seen == 1,
		"own and given hash: new %lu seen %lu",
		(unsigned long)c.flows_new, (unsigned long)c.flows_seen);
	cflow_track_burst(t, in + 2, 1, NULL);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 2, "another hash is another flow");
	cflow_tracker_free(t);
	return 0;
}

/* More packets than one bulk lookup takes: every one is counted. */
static int
test_track_long_burst(void)
{
	enum { N = 2 * CF_BULK_MAX + 36 };
	struct cflow_tracker *t = tracker(1000, 32, 10, CFLOW_FULL_EVICT);
	static uint8_t bufs[N][256];
	struct cflow_input in[N];
	enum cflow_verdict v[N];
	struct cflow_counters c;

	for (int k = 0; k < N; k++) {
		struct spec s = { .family = 4, .src = (uint8_t)(k / 2),
			.dst = 200, .sport = 9, .dport = 9, .proto = 17 };

		in[k] = (struct cflow_input){ .data = bufs[k], .time_ns = S };
		in[k].len = in[k].wire_len = build(bufs[k], &s);
	}
	cflow_track_burst(t, in, N, v);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.packets == N && c.flows_new == N / 2 &&
		c.flows_seen == N / 2, "packets %lu new %lu seen %lu",
		(unsigned long)c.packets, (unsigned long)c.flows_new,
		(unsigned long)c.flows_seen);
	TEST_ASSERT(v[N - 2] == CFLOW_NEW && v[N - 1] == CFLOW_SEEN,
		"verdicts past the first chunk");
	cflow_tracker_free(t);
	return 0;
}

/* Packets of one flow in one burst each see what the one before left:
 * the value the bulk lookup read is stale once the first has written. */
static int
test_track_same_flow_in_burst(void)
{
	struct cflow_tracker *t = tracker(1000, 32, 10, CFLOW_FULL_EVICT);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	const struct spec *burst[] = { &ack, &fin, &fin, &ack };
	/* The first packet refreshes a flow idle for just under its 300 s
	 * timeout; the others come past the timeout of the old time. */
	static const uint64_t at[] = { 300 * S, 302 * S, 303 * S, 304 * S };
	static const enum cflow_verdict want[] = { CFLOW_SEEN, CFLOW_CLOSING,
		CFLOW_SEEN, CFLOW_SEEN };
	uint8_t bufs[4][256];
	struct cflow_input in[4];
	enum cflow_verdict v[4];
	struct cflow_counters c;

	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send(t, &ack, 1 * S), CFLOW_NEW, "open");
	for (int k = 0; k < 4; k++) {
		in[k] = (struct cflow_input){ .data = bufs[k],
			.time_ns = at[k] };
		in[k].len = in[k].wire_len = build(bufs[k], burst[k]);
	}
	cflow_track_burst(t, in, 4, v);
	for (int k = 0; k < 4; k++)
		TEST_ASSERT_EQ(v[k], want[k], "packet %d: verdict %d", k, v[k]);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 1 && c.flows_closed == 1 &&
		c.flows_expired == 0 && c.active == 0, "new %lu closed %lu "
		"expired %lu active %lu", (unsigned long)c.flows_new,
		(unsigned long)c.flows_closed, (unsigned long)c.flows_expired,
		(unsigned long)c.active);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* Flow f's frame (IPv4 from f's low byte to @p dst, TCP for 3 flows in
 * 4, else UDP) with TCP flags @p flags, built in @p buf, at time @p at. */
static struct cflow_input
churn_frame(uint8_t *buf, uint32_t f, uint8_t dst, uint8_t flags,
		uint64_t at)
{
	struct spec sp = { .family = 4, .src = (uint8_t)f, .dst = dst,
		.sport = 1000, .dport = 80, .proto = f % 4 ? 6 : 17,
		.flags = flags };
	struct cflow_input in = { .data = buf, .time_ns = at };

	in.len = in.wire_len = build(buf, &sp);
	return in;
}

/*
 * The interleaved layout decides exactly as the plain one: the same
 * stream into both, on a small table kept full (kicks, stash,
 * evictions), with FIN/SYN churn, expiry and per-flow packet counts,
 * at 16/16 and 12/32 bits, gives the same verdicts, counts and
 * counters. In bursts, so that the bulk paths run.
 */
static int
test_track_interleaved_equals_plain(void)
{
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK, CFLOW_TCP_RST };
	static const unsigned int widths[][2] = { { 16, 16 }, { 12, 32 } };

	for (unsigned int w = 0; w < 2; w++) {
		struct cflow_tracker *t[2];
		struct cflow_counters c[2];
		uint64_t rng = 5 + w, at = 1000 * S;

		for (int l = 0; l < 2; l++) {
			struct cflow_tracker_params p;

			cflow_tracker_params_init(&p, 64);
			p.fp_bits = widths[w][0];
			p.value_bits = widths[w][1];
			p.seed = 42;
			p.count_bits = 3;
			p.table = l ? CF_TABLE_INTERLEAVED : CF_TABLE_PLAIN;
			for (int k = 0; k < CFLOW_CLASS_MAX; k++)
				p.timeout_ns[k] = 5 * S;
			t[l] = cflow_tracker_create(&p);
			TEST_ASSERT(t[l] != NULL, "create %d: %s", l,
				strerror(errno));
		}
		for (int n = 0; n < 600; n++) {
			static uint8_t bufs[CF_BULK_MAX][256];
			struct cflow_input in[CF_BULK_MAX];
			enum cflow_verdict v[2][CF_BULK_MAX];
			struct cflow_packet pkts[CF_BULK_MAX];
			enum cflow_parse_status st[CF_BULK_MAX];
			uint8_t cnt[2][CF_BULK_MAX];

			at += S / 8;
			for (int k = 0; k < CF_BULK_MAX; k++) {
				/* few flows, many (a full table), few
				 * again: the many expire meanwhile */
				uint32_t f = (uint32_t)(cfu_splitmix64(&rng) %
					(n >= 200 && n < 400 ? 5000 : 120));
				in[k] = churn_frame(bufs[k], f, (uint8_t)(f >> 8),
					flag_set[cfu_splitmix64(&rng) % 5],
					at + (uint64_t)k);
				st[k] = cflow_parse(bufs[k], in[k].len, NULL,
					&pkts[k]);
			}
			for (int l = 0; l < 2; l++) {
				cflow_track_parsed(t[l], in, pkts, st,
					CF_BULK_MAX, v[l], cnt[l]);
				cflow_sweep(t[l], at + S / 16);
			}
			TEST_ASSERT(memcmp(v[0], v[1], sizeof(v[0])) == 0 &&
				memcmp(cnt[0], cnt[1], sizeof(cnt[0])) == 0,
				"%u/%u bits, burst %d: verdicts differ",
				widths[w][0], widths[w][1], n);
		}
		cflow_counters_get(t[0], &c[0]);
		cflow_counters_get(t[1], &c[1]);
		TEST_ASSERT(memcmp(&c[0], &c[1], sizeof(c[0])) == 0,
			"%u/%u bits: counters differ", widths[w][0],
			widths[w][1]);
		TEST_ASSERT(c[0].flows_evicted > 0 && c[0].flows_expired > 0 &&
			c[0].flows_closed > 0, "%u/%u bits: the history "
			"missed a case: %lu evicted, %lu expired",
			widths[w][0], widths[w][1],
			(unsigned long)c[0].flows_evicted,
			(unsigned long)c[0].flows_expired);
		for (int l = 0; l < 2; l++) {
			TEST_ASSERT_EQ(invariants(t[l]), 0, "invariants");
			cflow_tracker_free(t[l]);
		}
	}
	return 0;
}

/*
 * A burst must do what the same packets do one at a time, whatever the
 * earlier packets of the burst changed: here on a small table kept full
 * (kicks, stash, evictions of other flows), with FIN/SYN churn and
 * repeated flows. Two trackers with one seed see one history.
 */
static int
test_track_burst_equals_single(void)
{
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK };

	for (int policy = 0; policy < 2; policy++) {
		struct cflow_tracker *b = tracker(16, 32, 10,
			(enum cflow_full_policy)policy);
		struct cflow_tracker *o = tracker(16, 32, 10,
			(enum cflow_full_policy)policy);
		struct cflow_counters cb, co;
		uint64_t rng = 77, at = 1000 * S;

		TEST_ASSERT(b != NULL && o != NULL, "create");
		for (int n = 0; n < 400; n++) {
			static uint8_t bufs[CF_BULK_MAX][256];
			struct cflow_input in[CF_BULK_MAX];
			enum cflow_verdict vb[CF_BULK_MAX], vo;

			at += S / 10;
			for (int k = 0; k < CF_BULK_MAX; k++) {
				uint32_t f = (uint32_t)(cfu_splitmix64(&rng) % 60);
				in[k] = churn_frame(bufs[k], f, 200,
					flag_set[cfu_splitmix64(&rng) % 5],
					at + (uint64_t)k);
			}
			cflow_track_burst(b, in, CF_BULK_MAX, vb);
			for (int k = 0; k < CF_BULK_MAX; k++) {
				cflow_track_burst(o, &in[k], 1, &vo);
				TEST_ASSERT_EQ(vb[k], vo, "policy %d, burst %d, "
					"packet %d: %d in a burst, %d alone",
					policy, n, k, vb[k], vo);
			}
		}
		cflow_counters_get(b, &cb);
		cflow_counters_get(o, &co);
		TEST_ASSERT(memcmp(&cb, &co, sizeof(cb)) == 0, "counters");
		TEST_ASSERT(policy == CFLOW_FULL_EVICT ? cb.flows_evicted > 0 :
			cb.insert_failed > 0, "the table never filled");
		TEST_ASSERT_EQ(invariants(b), 0, "invariants");
		cflow_tracker_free(b);
		cflow_tracker_free(o);
	}
	return 0;
}

/* ------------------------------------------- several streams (flow_time) */

struct stamped {
	uint64_t at;
	struct spec s;
};

/* Track one packet; with @p flow_time trackers sweep as of @p watermark,
 * else plainly. Returns its verdict. */
static enum cflow_verdict
send_swept(struct cflow_tracker *t, const struct stamped *p, bool flow_time,
		uint64_t latest, uint64_t watermark)
{
	enum cflow_verdict v = send(t, &p->s, p->at);

	if (flow_time)
		cflow_sweep_at(t, latest, watermark);
	else
		cflow_sweep(t, latest);
	return v;
}

/*
 * Stream A carries flow F (UDP, 60 s timeout) at 10 s and 50 s; stream B
 * carries flow G every 20 s. The tracker has seen B's 80 s when F's 50 s
 * packet arrives: with flow_time F is seen, as in a time-ordered replay;
 * without, it is expired and new again.
 */
static int
test_track_flow_time_two_streams(void)
{
	struct spec f = { .family = 4, .src = 1, .dst = 2, .sport = 1000,
		.dport = 53, .proto = 17 };
	struct spec g = { .family = 4, .src = 3, .dst = 4, .sport = 2000,
		.dport = 53, .proto = 17 };
	/* Arrival order, and the stream each packet comes from. */
	const struct stamped merged[] = {
		{ 0, g }, { 10 * S, f }, { 20 * S, g }, { 40 * S, g },
		{ 60 * S, g }, { 80 * S, g }, { 50 * S, f }, { 100 * S, g },
	};
	static const int stream[] = { 1, 0, 1, 1, 1, 1, 0, 1 };
	/* Time order: F's 50 s packet between G's 40 and 60 s. */
	static const int ordered[] = { 0, 1, 2, 3, 6, 4, 5, 7 };
	enum { N = sizeof(merged) / sizeof(merged[0]) };

	for (int mode = 0; mode < 3; mode++) {
		/* 0: ordered replay, 1: merged with flow_time, 2: merged. */
		struct cflow_tracker_params p;
		struct cflow_tracker *t;
		struct cflow_counters c;
		uint64_t last[2] = { 0, 0 }, latest = 0;
		enum cflow_verdict v_f50 = CFLOW_VERDICT_MAX;

		cflow_tracker_params_init(&p, 64);
		p.seed = 42;
		p.fp_bits = 32;
		p.flow_time = mode == 1;
		t = cflow_tracker_create(&p);
		TEST_ASSERT(t != NULL, "create");
		for (int k = 0; k < N; k++) {
			int i = mode != 0 ? k : ordered[k];
			enum cflow_verdict v;

			if (merged[i].at > latest)
				latest = merged[i].at;
			last[stream[i]] = merged[i].at;
			v = send_swept(t, &merged[i], mode == 1, latest,
				last[0] < last[1] ? last[0] : last[1]);
			if (i == 6)
				v_f50 = v;
		}
		cflow_sweep_all(t, latest);
		cflow_counters_get(t, &c);
		if (mode != 2) {
			TEST_ASSERT_EQ(v_f50, CFLOW_SEEN, "mode %d: F at 50 s",
				mode);
			TEST_ASSERT(c.flows_new == 2 && c.flows_seen == 6 &&
				c.flows_expired == 0 && c.active == 2,
				"mode %d: new %lu seen %lu expired %lu", mode,
				(unsigned long)c.flows_new,
				(unsigned long)c.flows_seen,
				(unsigned long)c.flows_expired);
		} else {
			/* Today's clock: F judged at 80 s, 70 s idle. */
			TEST_ASSERT_EQ(v_f50, CFLOW_NEW, "latest time: F");
			TEST_ASSERT(c.flows_new == 3 && c.flows_expired == 1,
				"latest time: new %lu expired %lu",
				(unsigned long)c.flows_new,
				(unsigned long)c.flows_expired);
		}
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		if (mode == 1) {
			/* The sweep judges as of the watermark (a table of a
			 * few buckets is one call): as of 60 s, F (50 s) is
			 * not idle and G, stamped later (100 s), is age 0. */
			TEST_ASSERT_EQ(cflow_sweep_at(t, 200 * S, 60 * S),
				0u, "as of 60 s");
			TEST_ASSERT_EQ(cflow_sweep_at(t, 300 * S, 115 * S),
				1u, "F as of 115 s");
			/* A watermark past now is now. */
			TEST_ASSERT_EQ(cflow_sweep_at(t, 400 * S, 900 * S),
				1u, "G as of 400 s");
		}
		cflow_tracker_free(t);
	}
	return 0;
}

/*
 * A time-ordered sequence of packets over many flows, each flow assigned
 * to one of two streams, merged with each stream lagging by up to twice
 * the longest timeout: a flow_time tracker that sweeps as of the
 * watermark must end with the counters of a time-ordered replay. Ticks
 * are the tracker's in both, so the decisions match exactly; with
 * 16-bit values the run spans the tick range several times.
 */
enum { MS_FLOWS = 2000, MS_PACKETS = 40000, MS_BURST = 8 };

struct ms_run {
	struct stamped *pkt;       /* time order */
	uint8_t *stream;           /* of each packet: its flow's */
	uint32_t *order;           /* merged arrival order */
};

static struct cflow_tracker *
ms_tracker(unsigned int value_bits, bool flow_time)
{
	struct cflow_tracker_params p;

	cflow_tracker_params_init(&p, 2 * MS_FLOWS);
	p.fp_bits = 32;
	p.value_bits = value_bits;
	p.seed = 5;
	/* Up to 8 s: twice that is under 17 s, 1/8 of the 16-bit range. */
	p.timeout_ns[CFLOW_CLASS_TCP] = 5 * S;
	p.timeout_ns[CFLOW_CLASS_UDP] = 3 * S;
	p.timeout_ns[CFLOW_CLASS_ICMP] = 4 * S;
	p.timeout_ns[CFLOW_CLASS_OTHER] = 8 * S;
	p.close_linger_ns = 2 * S;
	p.flow_time = flow_time;
	return cflow_tracker_create(&p);
}

/* Feed the packets in the order of idx, MS_BURST at a time; v[i] gets
 * packet i's verdict. mode 0: plain sweeps; 1: flow_time and sweeps as of
 * the watermark. */
static int
ms_feed(const struct ms_run *r, const uint32_t *idx, unsigned int value_bits,
		int mode, struct cflow_counters *c, enum cflow_verdict *v)
{
	struct cflow_tracker *t = ms_tracker(value_bits, mode == 1);
	uint64_t last[2], latest = 0;
	uint32_t left[2] = { 0, 0 };

	TEST_ASSERT(t != NULL, "create");
	for (int s = 0; s < 2; s++)
		last[s] = r->pkt[0].at;
	for (uint32_t k = 0; k < MS_PACKETS; k++)
		left[r->stream[k]]++;
	for (uint32_t n = 0; n < MS_PACKETS; n += MS_BURST) {
		static uint8_t bufs[MS_BURST][256];
		struct cflow_input in[MS_BURST];
		enum cflow_verdict vb[MS_BURST];
		uint64_t mark = UINT64_MAX;

		for (int k = 0; k < MS_BURST; k++) {
			uint32_t i = idx[n + k];

			in[k] = (struct cflow_input){ .data = bufs[k],
				.time_ns = r->pkt[i].at };
			in[k].len = in[k].wire_len = build(bufs[k],
				&r->pkt[i].s);
			if (r->pkt[i].at > latest)
				latest = r->pkt[i].at;
			last[r->stream[i]] = r->pkt[i].at;
			left[r->stream[i]]--;
		}
		cflow_track_burst(t, in, MS_BURST, vb);
		for (int k = 0; k < MS_BURST; k++)
			v[idx[n + k]] = vb[k];
		/* Streams exhausted don't hold the watermark back. */
		for (int s = 0; s < 2; s++)
			if (left[s] != 0 && last[s] < mark)
				mark = last[s];
		if (mode == 1)
			cflow_sweep_at(t, latest, mark == UINT64_MAX ?
				latest : mark);
		else
			cflow_sweep(t, latest);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	}
	cflow_sweep_all(t, latest + S);
	cflow_counters_get(t, c);
	cflow_tracker_free(t);
	return 0;
}

static bool
ms_same(const struct cflow_counters *a, const struct cflow_counters *b)
{
	return a->flows_new == b->flows_new &&
		a->flows_seen == b->flows_seen &&
		a->flows_closed == b->flows_closed &&
		a->flows_expired == b->flows_expired &&
		a->orphan_close == b->orphan_close &&
		a->reused == b->reused && a->active == b->active &&
		a->flows_evicted == b->flows_evicted &&
		a->insert_failed == b->insert_failed;
}

static int
test_track_flow_time_merged_streams(void)
{
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN,
		CFLOW_TCP_SYN | CFLOW_TCP_ACK, CFLOW_TCP_ACK, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK, CFLOW_TCP_RST };
	static const uint8_t protos[] = { 6, 6, 17, 1, 47 };
	const uint64_t max_lag = 16 * S; /* twice the longest timeout */
	struct ms_run r;
	uint32_t *seq = malloc(MS_PACKETS * sizeof(*seq));
	uint64_t *arrival = malloc(MS_PACKETS * sizeof(*arrival));
	enum cflow_verdict *v_want = malloc(MS_PACKETS * sizeof(*v_want));
	enum cflow_verdict *v_got = malloc(2 * MS_PACKETS * sizeof(*v_got));

	r.pkt = malloc(MS_PACKETS * sizeof(*r.pkt));
	r.stream = malloc(MS_PACKETS);
	r.order = malloc(MS_PACKETS * sizeof(*r.order));
	TEST_ASSERT(seq && arrival && v_want && v_got && r.pkt && r.stream &&
		r.order, "alloc");
	for (uint64_t run = 0; run < 4; run++) {
		unsigned int value_bits = run < 2 ? 32 : 16;
		uint64_t rng = 100 + run, at = 1000 * S, lag[2] = { 0, 0 };
		uint64_t prev[2] = { 0, 0 }, lag_seen = 0;
		struct cflow_counters want, got, plain;
		uint32_t n = 0, ia[2] = { 0, 0 };

		/* Time order: about 10 s between a flow's packets. */
		for (uint32_t k = 0; k < MS_PACKETS; k++) {
			uint32_t f = (uint32_t)(cfu_splitmix64(&rng) % MS_FLOWS);
			struct spec s = { .family = 4, .src = (uint8_t)f,
				.dst = (uint8_t)(f >> 8),
				.sport = (uint16_t)(1024 + f), .dport = 80,
				.proto = protos[f % 5],
				.flags = flag_set[cfu_splitmix64(&rng) % 7] };
			struct cflow_packet pk;
			uint8_t buf[256];

			at += cfu_splitmix64(&rng) % (10 * S / 1000);
			r.pkt[k] = (struct stamped){ at, s };
			/* By the canonical key's hash, as the application
			 * picks a flow's worker (ICMP flows f and f' can be
			 * one flow: no ports, and the addresses swapped). */
			if (cflow_parse(buf, build(buf, &s), NULL, &pk) !=
					CFLOW_PARSE_OK)
				TEST_ASSERT(false, "parse");
			r.stream[k] = (uint8_t)(cflow_hash_key(&pk.key, run) &
				1);
			seq[k] = k;
			/* Each stream's arrival: its time plus a lag that
			 * jumps now and then, mostly near 0 or max_lag,
			 * never before its last. */
			if (cfu_splitmix64(&rng) % 200 == 0)
				lag[r.stream[k]] = cfu_splitmix64(&rng) & 1 ?
					max_lag - cfu_splitmix64(&rng) % S :
					cfu_splitmix64(&rng) % S;
			arrival[k] = at + lag[r.stream[k]];
			if (arrival[k] < prev[r.stream[k]])
				arrival[k] = prev[r.stream[k]];
			prev[r.stream[k]] = arrival[k];
		}
		/* Merge the streams by arrival, each in its order. */
		while (n < MS_PACKETS) {
			while (ia[0] < MS_PACKETS && r.stream[ia[0]] != 0)
				ia[0]++;
			while (ia[1] < MS_PACKETS && r.stream[ia[1]] != 1)
				ia[1]++;
			if (ia[1] == MS_PACKETS || (ia[0] < MS_PACKETS &&
					arrival[ia[0]] <= arrival[ia[1]]))
				r.order[n++] = ia[0]++;
			else
				r.order[n++] = ia[1]++;
		}
		TEST_ASSERT_EQ(ms_feed(&r, seq, value_bits, 0, &want, v_want),
			0, "ordered");
		TEST_ASSERT_EQ(ms_feed(&r, r.order, value_bits, 1, &got, v_got),
			0, "merged, flow_time");
		TEST_ASSERT_EQ(ms_feed(&r, r.order, value_bits, 0, &plain,
			v_got + MS_PACKETS), 0, "merged, latest time");
		/* How far behind the latest time seen packets came. */
		for (uint32_t k = 0, front = 0; k < MS_PACKETS; k++) {
			uint64_t x = r.pkt[r.order[k]].at;

			if (x > r.pkt[front].at)
				front = r.order[k];
			if (r.pkt[front].at - x > lag_seen)
				lag_seen = r.pkt[front].at - x;
		}
		printf("# %u-bit values, lag up to %.1f s: new %lu seen %lu "
			"closed %lu expired %lu orphan %lu reused %lu active "
			"%lu; at the latest time: new %lu expired %lu\n",
			value_bits, (double)lag_seen / S,
			(unsigned long)want.flows_new,
			(unsigned long)want.flows_seen,
			(unsigned long)want.flows_closed,
			(unsigned long)want.flows_expired,
			(unsigned long)want.orphan_close,
			(unsigned long)want.reused, (unsigned long)want.active,
			(unsigned long)plain.flows_new,
			(unsigned long)plain.flows_expired);
		TEST_ASSERT(want.flows_expired > 0 && want.flows_closed > 0 &&
			want.reused > 0 && want.orphan_close > 0 &&
			want.flows_evicted == 0 && want.insert_failed == 0,
			"the run did not exercise every transition");
		TEST_ASSERT(ms_same(&got, &want), "%u-bit values, flow_time: "
			"new %lu seen %lu closed %lu expired %lu orphan %lu "
			"reused %lu active %lu", value_bits,
			(unsigned long)got.flows_new,
			(unsigned long)got.flows_seen,
			(unsigned long)got.flows_closed,
			(unsigned long)got.flows_expired,
			(unsigned long)got.orphan_close,
			(unsigned long)got.reused, (unsigned long)got.active);
		for (uint32_t k = 0; k < MS_PACKETS; k++)
			TEST_ASSERT_EQ(v_got[k], v_want[k], "packet %u: %d, "
				"%d in time order", k, v_got[k], v_want[k]);
		/* The merge matters: judged at the latest time, it differs. */
		TEST_ASSERT(!ms_same(&plain, &want), "merge had no effect");
	}
	free(seq);
	free(arrival);
	free(v_want);
	free(v_got);
	free(r.pkt);
	free(r.stream);
	free(r.order);
	return 0;
}

/* The sweep's pacing: work owed in proportion to time, capped. */
static int
test_pace(void)
{
	struct cflow_pace p = { 0 };

	TEST_ASSERT_EQ(cflow_pace_take(&p, 5 * S, 100, S, 1000), 0u,
		"the first call starts the clock");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 5 * S + S / 2, 100, S, 1000), 50u,
		"half a period, half the units");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 6 * S, 100, S, 20), 20u,
		"at most max a call");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 6 * S, 100, S, 1000), 30u,
		"the rest stays owed");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 100 * S, 100, S, 1000), 100u,
		"never more than total owed");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 100 * S, 100, S, 1000), 0u,
		"nothing owed without time");
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
	TEST_ASSERT_EQ(CFLOW_PARSE_MAX_HDR, 36996, "the bound");
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

/* Parse frame (len bytes) in a buffer of exactly that size (ASan). */
static enum cflow_parse_status
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

/* Flow f of a flood: a TCP SYN from 10.x.y.z, port 1024 + (f >> 16). */
static struct spec
flood_flow(uint32_t f)
{
	struct spec s = { .family = 4, .src = (uint8_t)f,
		.dst = (uint8_t)(f >> 8), .sport = (uint16_t)(1024 + (f >> 16)),
		.dport = 80, .proto = 6, .flags = CFLOW_TCP_SYN };

	return s;
}

static uint64_t
flow_hash(uint32_t f, uint64_t seed)
{
	struct spec s = flood_flow(f);
	struct cflow_packet pkt;
	uint8_t buf[256];

	cflow_parse(buf, build(buf, &s), NULL, &pkt);
	return cflow_hash_key(&pkt.key, seed);
}

/*
 * A SYN flood against a full table, per policy: the table reaches its
 * load limit while filling; from then on new flows make no kick walk
 * (kick steps and relocations stay put but for stash moves), evict gives
 * every one a slot by evicting in its own buckets, untracked turns away
 * those whose buckets are full; the counters keep their invariants
 * after every burst, and every flow not evicted is still found. Expiry
 * then empties the table and new flows walk again.
 */
static int
test_track_flood_full_table(void)
{
	enum { FLOOD_BURSTS = 200, MAX_FLOWS = 40000 };
	static uint8_t bufs[CF_BULK_MAX][256];
	static bool stored[MAX_FLOWS];

	for (int policy = 0; policy < 2; policy++) {
		/* 32-bit fingerprints: no false positive to blur the
		 * accounting. */
		struct cflow_tracker *t = tracker(4000, 32, 10,
			(enum cflow_full_policy)policy);
		const struct cf_filter *f = cflow_tracker_filter(t);
		uint64_t at = 10 * S, steps, reloc, lost = 0, kept = 0;
		uint64_t evicted0, failed0;
		uint32_t next = 0;
		unsigned int verdicts[CFLOW_VERDICT_MAX] = { 0 };
		struct cflow_counters c;
		struct cf_stats st;

		TEST_ASSERT(t != NULL, "create");
		memset(stored, 0, sizeof(stored));
		/* Fill to the load limit with a full stash. */
		do {
			struct cflow_input in[CF_BULK_MAX];
			enum cflow_verdict v[CF_BULK_MAX];

			for (int k = 0; k < CF_BULK_MAX; k++, next++) {
				struct spec sp = flood_flow(next);

				in[k] = (struct cflow_input){ .data = bufs[k],
					.time_ns = at };
				in[k].len = in[k].wire_len = build(bufs[k],
					&sp);
			}
			cflow_track_burst(t, in, CF_BULK_MAX, v);
			for (int k = 0; k < CF_BULK_MAX; k++)
				stored[next - CF_BULK_MAX + k] =
					v[k] == CFLOW_NEW;
			at += S / 1000;
			cf_stats(f, &st);
			TEST_ASSERT(next < 4 * st.slots, "policy %d: never at "
				"the limit", policy);
		} while (!st.saturated || st.stash_used != CF_STASH_SIZE);
		cflow_counters_get(t, &c);
		evicted0 = c.flows_evicted;
		failed0 = c.insert_failed;
		steps = st.kicks_total + st.kicks_failed;
		reloc = cf_relocations(f);

		/* The flood. */
		for (int b = 0; b < FLOOD_BURSTS; b++) {
			struct cflow_input in[CF_BULK_MAX];
			enum cflow_verdict v[CF_BULK_MAX];

			for (int k = 0; k < CF_BULK_MAX; k++, next++) {
				struct spec sp = flood_flow(next);

				in[k] = (struct cflow_input){ .data = bufs[k],
					.time_ns = at };
				in[k].len = in[k].wire_len = build(bufs[k],
					&sp);
			}
			cflow_track_burst(t, in, CF_BULK_MAX, v);
			for (int k = 0; k < CF_BULK_MAX; k++) {
				verdicts[v[k]]++;
				stored[next - CF_BULK_MAX + k] =
					v[k] == CFLOW_NEW;
			}
			at += S / 1000;
			TEST_ASSERT_EQ(invariants(t), 0, "policy %d, burst %d",
				policy, b);
		}
		cflow_counters_get(t, &c);
		cf_stats(f, &st);
		printf("# %s: load %.4f, flood of %d: %u new, %u turned away, "
			"%lu evicted, %lu kick steps, %lu relocations, %lu "
			"walks skipped\n", policy ? "untracked" : "evict",
			st.load_factor, FLOOD_BURSTS * CF_BULK_MAX,
			verdicts[CFLOW_NEW], verdicts[CFLOW_UNTRACKED_FULL],
			(unsigned long)(c.flows_evicted - evicted0),
			(unsigned long)(st.kicks_total + st.kicks_failed -
			steps), (unsigned long)(cf_relocations(f) - reloc),
			(unsigned long)st.walks_skipped);
		TEST_ASSERT_EQ(verdicts[CFLOW_NEW] +
			verdicts[CFLOW_UNTRACKED_FULL],
			(unsigned int)(FLOOD_BURSTS * CF_BULK_MAX), "verdicts");
		if (policy == CFLOW_FULL_EVICT)
			TEST_ASSERT(verdicts[CFLOW_UNTRACKED_FULL] == 0 &&
				c.insert_failed == 0 &&
				c.flows_evicted - evicted0 >
				FLOOD_BURSTS * CF_BULK_MAX / 2, "evict: %u "
				"untracked, %lu evicted",
				verdicts[CFLOW_UNTRACKED_FULL],
				(unsigned long)(c.flows_evicted - evicted0));
		else
			TEST_ASSERT(c.flows_evicted == 0 &&
				c.insert_failed - failed0 ==
				verdicts[CFLOW_UNTRACKED_FULL] &&
				verdicts[CFLOW_UNTRACKED_FULL] >
				FLOOD_BURSTS * CF_BULK_MAX / 2, "untracked: "
				"%u turned away",
				verdicts[CFLOW_UNTRACKED_FULL]);
		/* Bounded work: no walk; stash items moving into evicted
		 * slots are the only relocations. */
		TEST_ASSERT(st.kicks_total + st.kicks_failed == steps,
			"policy %d: %lu kick steps in the flood", policy,
			(unsigned long)(st.kicks_total + st.kicks_failed -
			steps));
		TEST_ASSERT(cf_relocations(f) - reloc <= 64, "policy %d: %lu "
			"relocations in the flood", policy,
			(unsigned long)(cf_relocations(f) - reloc));
		TEST_ASSERT(st.walks_skipped >= FLOOD_BURSTS * CF_BULK_MAX / 2,
			"policy %d: %lu walks skipped", policy,
			(unsigned long)st.walks_skipped);
		TEST_ASSERT_EQ(c.active, st.items, "active vs items");
		/* No false negatives: a stored flow is gone only if evicted. */
		for (uint32_t k = 0; k < next; k++) {
			if (!stored[k])
				continue;
			if (cf_lookup_with_hash(f, flow_hash(k, 42), NULL))
				kept++;
			else
				lost++;
		}
		TEST_ASSERT(lost == c.flows_evicted &&
			kept + lost == c.flows_new && kept == c.active,
			"policy %d: %lu stored flows lost, %lu evicted", policy,
			(unsigned long)lost, (unsigned long)c.flows_evicted);

		/* Everything expires: below the limit, new flows walk. */
		at += 400 * S;
		cflow_sweep_all(t, at);
		cf_stats(f, &st);
		TEST_ASSERT(st.items == 0 && !st.saturated, "after expiry: "
			"%lu items, saturated %d", (unsigned long)st.items,
			st.saturated);
		steps = st.kicks_total;
		while (st.stash_used == 0) {
			struct spec sp = flood_flow(next++);

			TEST_ASSERT_EQ(send(t, &sp, at), CFLOW_NEW, "refill");
			cf_stats(f, &st);
		}
		printf("# %s: refilled to %.4f with %lu kicks before a walk "
			"failed\n", policy ? "untracked" : "evict",
			st.load_factor,
			(unsigned long)(st.kicks_total - steps));
		TEST_ASSERT(st.kicks_total > steps && st.load_factor >= 0.93,
			"refill: load %.4f", st.load_factor);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

#define RTE_DIM_(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ tunnels */

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
			struct cflow_packet p, ref, outer, p2;
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
			TEST_ASSERT(st == CFLOW_PARSE_OK && rst == st &&
				memcmp(&p, &ref, sizeof(p)) == 0,
				"%s/%u: %s", c->name, i,
				cflow_parse_status_name(st));
			TEST_ASSERT_EQ(cflow_parse(f, len, &on, &p2), st,
				"%s/%u: again", c->name, i);
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
					rst = CFLOW_PARSE_TRUNC_L4;
				} else {
					rst = tun_reference(k,
						tun_inner[i].family, b + hdr,
						cut - hdr, &ref);
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

/*
 * CFLOW_PARSE_MAX_HDR through a tunnel: Ethernet, 2 tags, IPv6 with 8
 * extensions of 2048 bytes, UDP, GTP-U with 4 extensions of 1020 bytes,
 * then IPv6 with 8 such extensions and TCP: the bound less the 6 bytes
 * LINUX_SLL2's header is longer, every byte needed.
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
	l3 = off;
	f[l3] = 0x60;
	f[l3 + 6] = 60;
	f[l3 + 8] = 0x30;
	f[l3 + 23] = 3;
	f[l3 + 24] = 0x30;
	f[l3 + 39] = 4;
	off = l3 + 40;
	for (int k = 0; k < CFLOW_PARSE_IPV6_EXT_MAX; k++) {
		f[off] = k + 1 < CFLOW_PARSE_IPV6_EXT_MAX ? 60 : 6;
		f[off + 1] = 255;
		off += 2048;
	}
	w16(f + off, 1234);
	w16(f + off + 2, 80);
	f[off + 12] = 5 << 4;
	f[off + 13] = CFLOW_TCP_SYN;
	TEST_ASSERT_EQ(off + 20, want, "layout");
	TEST_ASSERT_EQ(cflow_parse(f, big, &on, &p), CFLOW_PARSE_OK,
		"worst case");
	TEST_ASSERT(p.key.port_lo == 1234 && p.key.port_hi == 80 &&
		p.key.addr_lo[0] == 0x30, "the inner flow");
	b = malloc(CFLOW_PARSE_MAX_HDR);
	memcpy(b, f, CFLOW_PARSE_MAX_HDR);
	TEST_ASSERT(cflow_parse(b, CFLOW_PARSE_MAX_HDR, &on, &q) ==
		CFLOW_PARSE_OK && memcmp(&p, &q, sizeof(p)) == 0,
		"cut to the bound");
	TEST_ASSERT(cflow_parse(b, want, &on, &q) == CFLOW_PARSE_OK &&
		memcmp(&p, &q, sizeof(p)) == 0, "cut to Ethernet's bound");
	TEST_ASSERT_EQ(cflow_parse(b, want - 1, &on, &q),
		CFLOW_PARSE_TRUNC_L4, "one byte short");
	free(b);
	free(f);
	return 0;
}
/* ------------------------------------------------------- warm restart */

/* 40 UDP flows and one TCP flow at 1 s, the TCP flow closed (lingering)
 * at 2 s: a table to save. */
static struct cflow_tracker *
restart_first_run(void)
{
	struct cflow_tracker *t = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);

	if (t == NULL)
		return NULL;
	for (uint16_t k = 0; k < 40; k++) {
		struct spec u = { .family = 4, .src = 1, .dst = 2,
			.sport = (uint16_t)(1000 + k), .dport = 53,
			.proto = 17 };

		if (send(t, &u, S) != CFLOW_NEW)
			goto fail;
	}
	if (send(t, &syn, S) != CFLOW_NEW ||
			send(t, &fin, 2 * S) != CFLOW_CLOSING)
		goto fail;
	return t;
fail:
	cflow_tracker_free(t);
	return NULL;
}

static void *
restart_save(const struct cflow_tracker *t, size_t *len)
{
	void *buf;

	*len = cflow_tracker_save_size(t);
	buf = malloc(*len);
	if (buf != NULL && cflow_tracker_save(t, buf, *len) != (int64_t)*len) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * cflow_tracker_save_bound() bounds what a tracker of the same parameters
 * saves, empty or with flows, across table shapes; refused parameters give
 * 0 with EINVAL.
 */
static int
test_track_save_bound(void)
{
	static const struct {
		uint64_t capacity;
		unsigned int fp_bits, value_bits;
		bool exact_size;
		enum cf_table_type table;
	} shapes[] = {
		{ 1000, 12, 32, false, CF_TABLE_PLAIN },
		{ 1000, 16, 16, false, CF_TABLE_INTERLEAVED },
		{ 100000, 12, 32, true, CF_TABLE_PLAIN },
		{ 5000, 32, 32, false, CF_TABLE_INTERLEAVED },
		{ 5000, 8, 16, true, CF_TABLE_PLAIN },
	};

	for (unsigned int i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct cflow_tracker_params p = {
			.capacity = shapes[i].capacity,
			.fp_bits = shapes[i].fp_bits,
			.value_bits = shapes[i].value_bits,
			.exact_size = shapes[i].exact_size,
			.table = shapes[i].table,
			.seed = 5, .fixed_seed = true,
		};
		uint64_t bound = cflow_tracker_save_bound(&p);
		struct cflow_tracker *t = cflow_tracker_create(&p);

		TEST_ASSERT(t != NULL && bound != 0, "shape %u", i);
		for (uint16_t k = 0; k < 500; k++) {
			struct spec u = { .family = 4, .src = 2, .dst = 1,
				.sport = 53, .dport = (uint16_t)(1000 + k),
				.proto = 17 };

			(void)send(t, &u, S);
		}
		TEST_ASSERT(cflow_tracker_save_size(t) <= bound &&
			bound - cflow_tracker_save_size(t) <= 64 *
			CF_STASH_SIZE, "shape %u: saves %zu, bound %lu", i,
			cflow_tracker_save_size(t), (unsigned long)bound);
		cflow_tracker_free(t);
	}
	errno = 0;
	TEST_ASSERT_EQ(cflow_tracker_save_bound(&(struct cflow_tracker_params){
		.capacity = 1000, .value_bits = 24 }), 0, "value_bits 24");
	TEST_ASSERT_EQ(errno, EINVAL, "errno %d", errno);
	return 0;
}

/*
 * A tracker takes over a saved table: flows alive across the restart are
 * found, not counted new; the saved clock goes on, so that the time
 * spent down ages them; the closed flow still lingers.
 */
static int
test_track_restore(void)
{
	struct cflow_tracker *a = restart_first_run(), *b, *c;
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cflow_counters cb, cc;
	uint64_t saved_ns = 0;
	char err[128];
	size_t len;
	void *buf;

	TEST_ASSERT(a != NULL, "first run");
	buf = restart_save(a, &len);
	TEST_ASSERT(buf != NULL, "save");
	TEST_ASSERT_EQ(cflow_tracker_save(a, buf, len - 1), -ENOSPC, "short");

	/* 10 s later: every UDP flow found; the TCP flow lingers (a late
	 * ACK is seen, a SYN reuses it). */
	b = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	TEST_ASSERT(b != NULL, "second tracker");
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, &saved_ns, err,
		sizeof(err)), 0, "restore: %s", err);
	TEST_ASSERT_EQ(saved_ns, 2 * S, "saved clock");
	cflow_counters_get(b, &cb);
	TEST_ASSERT(cb.active == 40 && cb.flows_restored == 40 &&
		cb.flows_new == 0, "restored: active %lu restored %lu",
		(unsigned long)cb.active, (unsigned long)cb.flows_restored);
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, NULL, NULL, 0),
		-EBUSY, "restored twice");
	for (uint16_t k = 0; k < 40; k++) {
		struct spec u = { .family = 4, .src = 2, .dst = 1, .sport = 53,
			.dport = (uint16_t)(1000 + k), .proto = 17 };

		TEST_ASSERT_EQ(send(b, &u, 10 * S), CFLOW_SEEN, "flow %u", k);
	}
	TEST_ASSERT_EQ(send(b, &ack, 10 * S), CFLOW_SEEN, "ACK while closing");
	TEST_ASSERT_EQ(send(b, &syn, 11 * S), CFLOW_NEW, "SYN reuses it");
	cflow_counters_get(b, &cb);
	TEST_ASSERT(cb.flows_new == 1 && cb.reused == 1 && cb.active == 41 &&
		cb.flows_seen == 41, "new %lu reused %lu active %lu seen %lu",
		(unsigned long)cb.flows_new, (unsigned long)cb.reused,
		(unsigned long)cb.active, (unsigned long)cb.flows_seen);
	TEST_ASSERT_EQ(invariants(b), 0, "invariants after restore");

	/* Down for 100 s, over the UDP timeout: every flow expires, none is
	 * found again. */
	c = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	TEST_ASSERT(c != NULL, "third tracker");
	TEST_ASSERT_EQ(cflow_tracker_restore(c, buf, len, NULL, NULL, 0), 0,
		"restore");
	cflow_sweep_all(c, 102 * S);
	cflow_counters_get(c, &cc);
	TEST_ASSERT(cc.flows_expired == 40 && cc.active == 0, "expired %lu "
		"active %lu", (unsigned long)cc.flows_expired,
		(unsigned long)cc.active);
	TEST_ASSERT_EQ(invariants(c), 0, "invariants after expiry");
	cflow_tracker_free(a);
	cflow_tracker_free(b);
	cflow_tracker_free(c);
	free(buf);
	return 0;
}

/* Untrusted input and other parameters: refused with the reason, the
 * tracker unchanged. */
static int
test_track_restore_refused(void)
{
	struct cflow_tracker *a = restart_first_run(), *b;
	struct cflow_tracker_params p;
	struct cflow_counters c;
	char err[128];
	uint8_t *bad;
	size_t len;
	void *buf;

	TEST_ASSERT(a != NULL, "first run");
	buf = restart_save(a, &len);
	TEST_ASSERT(buf != NULL, "save");
	bad = malloc(len + 1);
	TEST_ASSERT(bad != NULL, "malloc");
	b = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	TEST_ASSERT(b != NULL, "tracker");

	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, 10, NULL, err,
		sizeof(err)), -ENODATA, "a header cut");
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len - 1, NULL, err,
		sizeof(err)), -ENODATA, "a table cut");
	memcpy(bad, buf, len);
	bad[len] = 0;
	TEST_ASSERT_EQ(cflow_tracker_restore(b, bad, len + 1, NULL, err,
		sizeof(err)), -EBADMSG, "a byte after");
	for (size_t at = 0; at < len; at += len / 97 + 1) {
		int ret;

		memcpy(bad, buf, len);
		bad[at] ^= 0x20;
		ret = cflow_tracker_restore(b, bad, len, NULL, err,
			sizeof(err));
		TEST_ASSERT(ret == -EBADMSG || ret == -ENODATA ||
			ret == -ENOTSUP || ret == -EPROTONOSUPPORT,
			"byte %zu flipped: %d (%s)", at, ret, err);
	}
	cflow_counters_get(b, &c);
	TEST_ASSERT(c.active == 0 && c.flows_restored == 0, "unchanged");
	cflow_tracker_free(b);

	/* Other table parameters: each named. */
	static const struct {
		unsigned int fp_bits, value_bits;
		uint64_t capacity, seed, linger_s;
		const char *name;
	} other[] = {
		{ 12, 0, 1000, 42, 10, "fingerprint bits" },
		{ 16, 0, 2000, 42, 10, "capacity" },
		{ 16, 0, 1000, 43, 10, "seed" },
		{ 16, 16, 1000, 42, 10, "tick" },
	};
	for (unsigned int i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		cflow_tracker_params_init(&p, other[i].capacity);
		p.fp_bits = other[i].fp_bits;
		p.seed = other[i].seed;
		p.close_linger_ns = other[i].linger_s * S;
		p.full_policy = CFLOW_FULL_EVICT;
		if (other[i].value_bits != 0)
			p.value_bits = other[i].value_bits;
		b = cflow_tracker_create(&p);
		TEST_ASSERT(b != NULL, "tracker %u", i);
		err[0] = '\0';
		TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, NULL, err,
			sizeof(err)), -ESTALE, "%s", other[i].name);
		TEST_ASSERT(strstr(err, other[i].name) != NULL, "%s: \"%s\"",
			other[i].name, err);
		cflow_tracker_free(b);
	}
	/* Other timeouts on the same tick: taken over. */
	cflow_tracker_params_init(&p, 1000);
	p.fp_bits = 16;
	p.seed = 42;
	p.close_linger_ns = 10 * S;
	p.timeout_ns[CFLOW_CLASS_UDP] = 5 * S;
	b = cflow_tracker_create(&p);
	TEST_ASSERT(b != NULL, "tracker");
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, NULL, err,
		sizeof(err)), 0, "other timeouts: %s", err);
	cflow_sweep_all(b, 9 * S);
	cflow_counters_get(b, &c);
	TEST_ASSERT_EQ(c.flows_expired, 40, "the new timeout applies");
	cflow_tracker_free(b);
	/* A tracker that has tracked a packet. */
	b = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	TEST_ASSERT(b != NULL, "tracker");
	send(b, &(struct spec){ .family = 4, .src = 9, .dst = 8, .sport = 1,
		.dport = 2, .proto = 17 }, S);
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, NULL, err,
		sizeof(err)), -EBUSY, "a used tracker");
	cflow_tracker_free(b);
	cflow_tracker_free(a);
	free(bad);
	free(buf);
	return 0;
}


/* ------------------------------------------------ lookup, flush, events */

static struct cflow_packet
parsed(const struct spec *s)
{
	struct cflow_packet p;
	uint8_t buf[256];

	memset(&p, 0, sizeof(p));
	(void)cflow_parse(buf, build(buf, s), NULL, &p);
	return p;
}

/* One flow looked up by its key as the table holds it: open, idle,
 * closing, expired, unknown; a flush empties the table and counts the
 * open flows it removed. */
static int
test_track_lookup_flush(void)
{
	struct cflow_tracker *t = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec u = { .family = 6, .src = 1, .dst = 2, .sport = 5353,
		.dport = 53, .proto = 17 };
	struct spec other = { .family = 4, .src = 7, .dst = 8, .sport = 1,
		.dport = 2, .proto = 17 };
	struct cflow_packet ps = parsed(&syn), pu = parsed(&u);
	struct cflow_tracker_params p;
	struct cflow_flow_info fi;
	struct cflow_counters c;

	TEST_ASSERT(t != NULL, "tracker");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), 0, "unknown");
	TEST_ASSERT(!fi.tracked, "unknown: not tracked");
	TEST_ASSERT_EQ(send(t, &syn, S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &u, S), CFLOW_NEW, "UDP");
	TEST_ASSERT_EQ(send(t, &other, 5 * S), CFLOW_NEW, "clock to 5 s");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), 1, "TCP");
	TEST_ASSERT(fi.tracked && !fi.closing && !fi.expired &&
		fi.proto_class == CFLOW_CLASS_TCP, "TCP open");
	TEST_ASSERT(fi.idle_ns > 39 * S / 10 && fi.idle_ns < 41 * S / 10,
		"idle %lu ns", (unsigned long)fi.idle_ns);
	TEST_ASSERT_EQ(send(t, &fin, 6 * S), CFLOW_CLOSING, "FIN");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), 1, "closing");
	TEST_ASSERT(fi.closing && !fi.expired && fi.idle_ns < S / 10,
		"closing, just now");
	/* 64 s: the UDP flow is past its 60 s, the FIN's linger (10 s)
	 * is over; not swept yet. */
	TEST_ASSERT_EQ(send(t, &other, 64 * S), CFLOW_SEEN, "clock to 64 s");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &pu.key, &fi), 1, "UDP");
	TEST_ASSERT(fi.expired && !fi.closing &&
		fi.proto_class == CFLOW_CLASS_UDP, "UDP expired");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), 1, "TCP");
	TEST_ASSERT(fi.expired && fi.closing, "linger over");

	TEST_ASSERT_EQ(cflow_tracker_flush(t), 2, "two open flows flushed");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_flushed == 2 && c.active == 0, "flushed %lu "
		"active %lu", (unsigned long)c.flows_flushed,
		(unsigned long)c.active);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants after a flush");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &pu.key, &fi), 0, "gone");
	TEST_ASSERT_EQ(send(t, &other, 65 * S), CFLOW_NEW, "opened anew");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);

	cflow_tracker_params_init(&p, 1000);
	p.hash = CFLOW_HASH_RSS;
	t = cflow_tracker_create(&p);
	TEST_ASSERT(t != NULL, "rss tracker");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), -ENOTSUP,
		"no key lookup with the NIC's hash");
	cflow_tracker_free(t);
	return 0;
}

/* Events carry the packet's own direction; JSON is one object. */
static int
test_event_json(void)
{
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec rst = tcp(CFLOW_TCP_RST | CFLOW_TCP_ACK, true);
	struct spec u6 = { .family = 6, .src = 1, .dst = 2, .sport = 5353,
		.dport = 53, .proto = 17 };
	struct cflow_packet ps = parsed(&syn), pr = parsed(&rst);
	struct cflow_packet pu = parsed(&u6);
	struct cflow_event e, er;
	char buf[CFLOW_EVENT_JSON_MAX], small[40];
	int n;

	TEST_ASSERT_EQ(cflow_event_init(&e, &ps, CFLOW_SEEN, 1, 60), 0,
		"no event for SEEN");
	TEST_ASSERT_EQ(cflow_event_init(&e, &ps, CFLOW_NEW,
		UINT64_C(1700000000123456789), 60), 1, "NEW");
	TEST_ASSERT_EQ(cflow_event_init(&er, &pr, CFLOW_CLOSING, 2, 54), 1,
		"CLOSING");
	/* The reply's source is the SYN's destination. */
	TEST_ASSERT(memcmp(er.src, e.dst, 16) == 0 &&
		memcmp(er.dst, e.src, 16) == 0 && er.sport == 443 &&
		er.dport == 40000 && e.sport == 40000 && e.dport == 443,
		"directions");
	TEST_ASSERT(e.type == CFLOW_EVENT_NEW && e.reason == CFLOW_CLOSE_NONE &&
		er.type == CFLOW_EVENT_CLOSE && er.reason == CFLOW_CLOSE_RST,
		"types");
	e.worker = 3;
	e.port = 1;
	n = cflow_event_json(&e, buf, sizeof(buf));
	TEST_ASSERT(n > 0 && (size_t)n == strlen(buf), "json");
	TEST_ASSERT(strstr(buf, "\"event\":\"new\",\"time\":"
		"\"2023-11-14T22:13:20.123456789Z\",\"time_ns\":"
		"1700000000123456789,\"worker\":3,\"port\":1,\"proto\":6,"
		"\"class\":\"tcp\"") != NULL && strstr(buf, "\"sport\":40000,")
		&& strstr(buf, "\"dport\":443,\"len\":60,\"tcp_flags\":2}"),
		"%s", buf);
	n = cflow_event_json(&er, buf, sizeof(buf));
	TEST_ASSERT(n > 0 && strstr(buf, "\"reason\":\"rst\"}") != NULL, "%s",
		buf);
	TEST_ASSERT_EQ(cflow_event_json(&er, small, sizeof(small)), -ENOSPC,
		"small buffer");
	TEST_ASSERT_EQ(cflow_event_init(&e, &pu, CFLOW_NEW, 0, 80), 1, "v6");
	n = cflow_event_json(&e, buf, sizeof(buf));
	TEST_ASSERT(n > 0 && strstr(buf, "\"class\":\"udp\"") &&
		strstr(buf, "\"src\":\"") && strchr(strstr(buf, "\"src\":\""),
		':') != NULL, "%s", buf);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_parse_l4_kinds),
	TEST_CASE(test_parse_ipv4_mapped_and_ports_tiebreak),
	TEST_CASE(test_parse_direction),
	TEST_CASE(test_track_no_create),
	TEST_CASE(test_track_tcp_strict),
	TEST_CASE(test_track_admission),
	TEST_CASE(test_track_emergency),
	TEST_CASE(test_track_counts),
	TEST_CASE(test_parse_vlan),
	TEST_CASE(test_parse_non_ip_and_bad_headers),
	TEST_CASE(test_parse_padding),
	TEST_CASE(test_parse_fast_equals_general),
	TEST_CASE(test_parse_fragments),
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
	TEST_CASE(test_track_tcp_lifecycle),
	TEST_CASE(test_track_rst_no_linger_and_orphans),
	TEST_CASE(test_track_reuse),
	TEST_CASE(test_track_udp_idle_on_access),
	TEST_CASE(test_track_sweep_bounds),
	TEST_CASE(test_track_sweep_all_exact),
	TEST_CASE(test_track_time_backwards),
	TEST_CASE(test_track_full_table),
	TEST_CASE(test_track_params_rejected),
	TEST_CASE(test_track_params_zero_is_default),
	TEST_CASE(test_state_step),
	TEST_CASE(test_track_largest_table),
	TEST_CASE(test_track_rss_hash_and_fallback),
	TEST_CASE(test_track_long_burst),
	TEST_CASE(test_track_given_hash),
	TEST_CASE(test_track_same_flow_in_burst),
	TEST_CASE(test_track_burst_equals_single),
	TEST_CASE(test_track_interleaved_equals_plain),
	TEST_CASE(test_track_flow_time_two_streams),
	TEST_CASE(test_track_flow_time_merged_streams),
	TEST_CASE(test_track_flood_full_table),
	TEST_CASE(test_pace),
	TEST_CASE(test_track_model_fp32_exact),
	TEST_CASE(test_track_model_short_fp),
	TEST_CASE(test_track_linger_fin_retransmitted),
	TEST_CASE(test_track_linger_half_closed),
	TEST_CASE(test_track_linger_reuse_after_restarts),
	TEST_CASE(test_track_linger_flow_time),
	TEST_CASE(test_track_save_bound),
	TEST_CASE(test_track_restore),
	TEST_CASE(test_track_restore_refused),
	TEST_CASE(test_track_lookup_flush),
	TEST_CASE(test_event_json),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
