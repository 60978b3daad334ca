/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Blocklists: every kind of bad line is refused with file:line and
 * nothing is loaded; matching agrees with an exact oracle (a linear
 * scan of the entries) on random packets; compiled files round trip,
 * and damaged ones are refused.
 */

#include <arpa/inet.h>
#include <stdlib.h>
#include <unistd.h>

#include "blocklist.h"
#include "test.h"

static char dir[] = "/tmp/cf_bl_XXXXXX";

static const char *
write_file(const char *name, const char *text)
{
	static char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	fputs(text, fp);
	fclose(fp);
	return path;
}

static int
test_bad_lines(void)
{
	static const struct { const char *text; const char *reason; } bad[] = {
		{ "10.0.0.1\n300.1.1.1\n", ":2: '300.1.1.1' is not" },
		{ "10.0.0.0/33\n", ":1: prefix length '33'" },
		{ "2001:db8::/129\n", ":1: prefix length '129'" },
		{ "10.0.0.0/-1\n", ":1: prefix length" },
		{ "tcpx 1.1.1.1 1 2.2.2.2 2\n", ":1: protocol 'tcpx'" },
		{ "tcp 1.1.1.1 1 ::2 2\n", ":1: addresses" },
		{ "udp 1.1.1.1 70000 2.2.2.2 2\n", ":1: ports" },
		{ "1.1.1.1 2.2.2.2\n", ":1: want an address" },
		{ "# ok\n\n  1.2.3.4  # fine\nnot-an-address\n", ":4:" },
	};
	char err[512];

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *path = write_file("bad.txt", bad[i].text);
		struct cflow_blocklist *bl = cflow_bl_read(path, 0, err,
			sizeof(err));

		TEST_ASSERT(bl == NULL, "case %u loaded", i);
		TEST_ASSERT(strstr(err, bad[i].reason) != NULL &&
			strstr(err, "bad.txt") != NULL,
			"case %u: error '%s', want '%s'", i, err,
			bad[i].reason);
	}
	TEST_ASSERT(cflow_bl_read("/nonexistent", 0, err, sizeof(err)) == NULL
		&& strstr(err, "/nonexistent") != NULL, "missing file");
	return 0;
}

static struct cflow_packet
packet(int family, const char *src, const char *dst, uint16_t sport,
		uint16_t dport, uint8_t proto)
{
	struct cflow_packet p;
	uint8_t s[16] = { [10] = 0xff, [11] = 0xff };
	uint8_t d[16] = { [10] = 0xff, [11] = 0xff };

	memset(&p, 0, sizeof(p));
	if (family == 4) {
		inet_pton(AF_INET, src, s + 12);
		inet_pton(AF_INET, dst, d + 12);
	} else {
		inet_pton(AF_INET6, src, s);
		inet_pton(AF_INET6, dst, d);
	}
	cflow_key_init(&p.key, (uint8_t)family, s, d, sport, dport, proto);
	return p;
}

static int
test_match_kinds(void)
{
	const char *path = write_file("list.txt",
		"192.0.2.1\n10.0.0.0/8\n2001:db8::/32\n2001:db9::7\n"
		"tcp 172.16.0.1 1234 172.16.0.2 80\n192.0.2.1\n");
	char err[512];
	struct cflow_blocklist *bl = cflow_bl_read(path, 0, err, sizeof(err));
	struct cflow_bl_info in;
	struct cflow_packet p;

	TEST_ASSERT(bl != NULL, "%s", err);
	cflow_bl_info(bl, &in);
	TEST_ASSERT(in.total == 5 && in.entries[CFLOW_BL_ADDRESS] == 2 &&
		in.entries[CFLOW_BL_PREFIX] == 2 &&
		in.entries[CFLOW_BL_FLOW] == 1 && in.v4_lengths == 2 &&
		in.v6_lengths == 2, "info (duplicate counted once)");
	p = packet(4, "8.8.8.8", "192.0.2.1", 5, 6, 17);
	TEST_ASSERT_EQ(cflow_bl_match(bl, &p), CFLOW_BL_ADDRESS, "dst addr");
	p = packet(4, "10.200.1.1", "8.8.8.8", 5, 6, 17);
	TEST_ASSERT_EQ(cflow_bl_match(bl, &p), CFLOW_BL_PREFIX, "src /8");
	p = packet(4, "11.0.0.1", "8.8.8.8", 5, 6, 17);
	TEST_ASSERT_EQ(cflow_bl_match(bl, &p), CFLOW_BL_NONE, "11/8");
	p = packet(6, "2001:db8:ffff::1", "::1", 5, 6, 17);
	TEST_ASSERT_EQ(cflow_bl_match(bl, &p), CFLOW_BL_PREFIX, "v6 /32");
	p = packet(6, "2001:db9::7", "::1", 5, 6, 17);
	TEST_ASSERT_EQ(cflow_bl_match(bl, &p), CFLOW_BL_ADDRESS, "v6 addr");
	p = packet(6, "2001:db9::8", "::1", 5, 6, 17);
	TEST_ASSERT_EQ(cflow_bl_match(bl, &p), CFLOW_BL_NONE, "v6 other");
	p = packet(4, "172.16.0.2", "172.16.0.1", 80, 1234, 6);
	TEST_ASSERT_EQ(cflow_bl_match(bl, &p), CFLOW_BL_FLOW, "flow reply");
	p = packet(4, "172.16.0.1", "172.16.0.2", 1234, 81, 6);
	TEST_ASSERT_EQ(cflow_bl_match(bl, &p), CFLOW_BL_NONE, "other port");
	p = packet(4, "172.16.0.1", "172.16.0.2", 1234, 80, 17);
	TEST_ASSERT_EQ(cflow_bl_match(bl, &p), CFLOW_BL_NONE, "other proto");
	cflow_bl_free(bl);
	return 0;
}

/* Random entries of every kind, random packets, and an exact oracle. */
struct oracle_entry {
	int family;
	unsigned int len;
	uint8_t addr[16];
	int is_flow;
	struct cflow_key flow;
};

static int
prefix_covers(const struct oracle_entry *e, int family, const uint8_t *a16)
{
	const uint8_t *a = family == 4 ? a16 + 12 : a16;
	const uint8_t *p = e->family == 4 ? e->addr + 12 : e->addr;

	if (e->family != family)
		return 0;
	for (unsigned int bit = 0; bit < e->len; bit++)
		if (((a[bit / 8] ^ p[bit / 8]) >> (7 - bit % 8)) & 1)
			return 0;
	return 1;
}

static int
test_oracle(void)
{
	static const unsigned int v4_lengths[] = { 20, 22, 24, 26, 28, 30, 31,
		32 };
	enum { ENTRIES = 2000, PACKETS = 50000 };
	struct oracle_entry *e = calloc(ENTRIES, sizeof(*e));
	char path[256], err[512];
	uint64_t rng = 3, matched = 0;
	struct cflow_blocklist *bl, *loaded;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/oracle.txt", dir);
	fp = fopen(path, "w");
	for (int i = 0; i < ENTRIES; i++) {
		uint64_t r = test_rand(&rng);
		uint8_t a[16] = { [10] = 0xff, [11] = 0xff };
		char text[64];

		/* Addresses in 10.0.0.0/8, where the packets are too. */
		a[12] = 10;
		a[13] = (uint8_t)r;
		a[14] = (uint8_t)(r >> 8);
		a[15] = (uint8_t)(r >> 16);
		e[i].family = 4;
		memcpy(e[i].addr, a, 16);
		inet_ntop(AF_INET, a + 12, text, sizeof(text));
		if (i % 5 == 4) {
			uint8_t b[16];

			memcpy(b, a, 16);
			b[15] ^= 0x55;
			e[i].is_flow = 1;
			cflow_key_init(&e[i].flow, 4, a, b, 1000, 80, 6);
			fprintf(fp, "tcp %s 1000 ", text);
			inet_ntop(AF_INET, b + 12, text, sizeof(text));
			fprintf(fp, "%s 80\n", text);
		} else {
			e[i].len = v4_lengths[(r >> 24) % 8];
			fprintf(fp, "%s/%u\n", text, e[i].len);
		}
	}
	fclose(fp);
	bl = cflow_bl_read(path, 0, err, sizeof(err));
	TEST_ASSERT(bl != NULL, "%s", err);
	snprintf(path, sizeof(path), "%s/oracle.cf", dir);
	TEST_ASSERT_EQ(cflow_bl_save(bl, path), 0, "save");
	loaded = cflow_bl_load(path, err, sizeof(err));
	TEST_ASSERT(loaded != NULL, "%s", err);
	for (int n = 0; n < PACKETS; n++) {
		uint64_t r = test_rand(&rng);
		uint8_t s[16] = { [10] = 0xff, [11] = 0xff, [12] = 10 };
		uint8_t d[16] = { [10] = 0xff, [11] = 0xff, [12] = 10 };
		struct cflow_packet p;
		int want = 0;

		s[13] = (uint8_t)r;
		s[14] = (uint8_t)(r >> 8);
		s[15] = (uint8_t)(r >> 16);
		d[13] = (uint8_t)(r >> 24);
		d[14] = (uint8_t)(r >> 32);
		d[15] = (uint8_t)(r >> 40);
		if (r >> 63) /* sometimes exactly a listed flow */
			memcpy(d, s, 16), d[15] ^= 0x55;
		memset(&p, 0, sizeof(p));
		cflow_key_init(&p.key, 4, s, d, (r >> 62) & 1 ? 1000 : 999, 80,
			6);
		for (int i = 0; i < ENTRIES && !want; i++)
			want = e[i].is_flow ? memcmp(&e[i].flow, &p.key,
				sizeof(p.key)) == 0 :
				prefix_covers(&e[i], 4, p.key.addr_lo) ||
				prefix_covers(&e[i], 4, p.key.addr_hi);
		TEST_ASSERT_EQ(cflow_bl_match(bl, &p) != CFLOW_BL_NONE, want,
			"packet %d", n);
		TEST_ASSERT_EQ(cflow_bl_match(loaded, &p) != CFLOW_BL_NONE,
			want, "packet %d after load", n);
		matched += want;
	}
	printf("# %lu of %d packets listed\n", (unsigned long)matched, PACKETS);
	TEST_ASSERT(matched > PACKETS / 20 && matched < PACKETS,
		"the oracle test does not exercise both outcomes");
	cflow_bl_free(bl);
	cflow_bl_free(loaded);
	free(e);
	return 0;
}

static int
test_damaged_files(void)
{
	const char *text = write_file("l.txt", "1.2.3.4\n5.6.0.0/16\n");
	char cf[256], err[512];
	struct cflow_blocklist *bl = cflow_bl_read(text, 16, err, sizeof(err));
	uint8_t buf[4096];
	size_t n;
	FILE *fp;

	snprintf(cf, sizeof(cf), "%s/l.cf", dir);
	TEST_ASSERT(bl != NULL && cflow_bl_save(bl, cf) == 0, "save");
	cflow_bl_free(bl);
	fp = fopen(cf, "rb");
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	/* Every truncation and a flip in each byte: refused, no crash. */
	for (size_t len = 8; len < n; len++) {
		fp = fopen(cf, "wb");
		fwrite(buf, 1, len, fp);
		fclose(fp);
		bl = cflow_bl_load(cf, err, sizeof(err));
		TEST_ASSERT(bl == NULL, "truncated to %zu accepted", len);
	}
	for (size_t i = 0; i < n; i++) {
		buf[i] ^= 0x10;
		fp = fopen(cf, "wb");
		fwrite(buf, 1, n, fp);
		fclose(fp);
		buf[i] ^= 0x10;
		bl = cflow_bl_load(cf, err, sizeof(err));
		/* Flipping the magic makes it a (bad) text list. */
		TEST_ASSERT(bl == NULL, "flip at %zu accepted", i);
	}
	/* A text list loads through the same call. */
	bl = cflow_bl_load(text, err, sizeof(err));
	TEST_ASSERT(bl != NULL, "text through load: %s", err);
	cflow_bl_free(bl);
	return 0;
}

/* --------------------------------- packets the parser does not parse */

/* A frame from src to dst (both IPv4 or both IPv6), TCP or UDP from port
 * 1234 to 80, bent into one of the shapes below. */
struct frame_spec {
	const char *name;
	int vlans;          /* tags in front */
	int v6_ext;         /* IPv6 destination-options headers */
	bool later_frag;    /* a non-first fragment */
	uint8_t proto;      /* 6 or 17 */
	uint8_t tcp_off;    /* TCP data offset, 0: 5 */
	uint32_t l4len;     /* L4 bytes in the IP length and frame, 0: all */
	enum cflow_parse_status st;
};

static uint32_t
frame(uint8_t *b, const char *src, const char *dst,
		const struct frame_spec *f)
{
	uint8_t s[16], d[16];
	int v4 = inet_pton(AF_INET, src, s) == 1;
	uint32_t off = 12, l3, l4, l4len, ext = 0;

	if (v4)
		inet_pton(AF_INET, dst, d);
	else
		inet_pton(AF_INET6, src, s), inet_pton(AF_INET6, dst, d);
	l4len = f->l4len ? f->l4len : f->proto == 6 ? 20 : 8;
	memset(b, 0, 512);
	for (int k = 0; k < f->vlans; k++) {
		b[off] = 0x81;
		b[off + 3] = (uint8_t)(10 + k);
		off += 4;
	}
	b[off] = v4 ? 0x08 : 0x86;
	b[off + 1] = v4 ? 0x00 : 0xdd;
	l3 = off + 2;
	if (v4) {
		b[l3] = 0x45;
		b[l3 + 3] = (uint8_t)(20 + l4len);
		b[l3 + 7] = f->later_frag ? 185 : 0;
		b[l3 + 8] = 64;
		b[l3 + 9] = f->proto;
		memcpy(b + l3 + 12, s, 4);
		memcpy(b + l3 + 16, d, 4);
		l4 = l3 + 20;
	} else {
		uint8_t *nh = b + l3 + 6;

		b[l3] = 0x60;
		b[l3 + 7] = 64;
		memcpy(b + l3 + 8, s, 16);
		memcpy(b + l3 + 24, d, 16);
		l4 = l3 + 40;
		for (int k = 0; k < f->v6_ext; k++, ext += 8, l4 += 8) {
			*nh = 60;
			nh = b + l4;
		}
		if (f->later_frag) {
			*nh = 44;
			nh = b + l4;
			b[l4 + 2] = 185 >> 5; /* offset 185 * 8 */
			b[l4 + 3] = (185 << 3) & 0xff;
			ext += 8;
			l4 += 8;
		}
		*nh = f->proto;
		b[l3 + 5] = (uint8_t)(ext + l4len);
	}
	b[l4] = 1234 >> 8;
	b[l4 + 1] = 1234 & 0xff;
	b[l4 + 3] = 80;
	if (f->proto == 6 && l4len >= 20) {
		b[l4 + 12] = (uint8_t)((f->tcp_off ? f->tcp_off : 5) << 4);
		b[l4 + 13] = CFLOW_TCP_SYN;
	}
	return l4 + l4len;
}

/* The bypasses of issue 11, for each family where they exist. */
static const struct frame_spec bypasses[] = {
	{ "9 extensions", .v6_ext = 9, .proto = 6, .st = CFLOW_PARSE_BAD_EXT },
	{ "3 tags", .vlans = 3, .proto = 17, .st = CFLOW_PARSE_NON_IP },
	{ "TCP offset 4", .proto = 6, .tcp_off = 4,
		.st = CFLOW_PARSE_BAD_HDRLEN },
	{ "UDP 4-byte header", .proto = 17, .l4len = 4,
		.st = CFLOW_PARSE_TRUNC_L4 },
	{ "non-first fragment", .proto = 17, .later_frag = true,
		.st = CFLOW_PARSE_FRAGMENT },
};

enum decision { PASS, BLOCK, UNPARSED };

/* What the application does with a frame: the full match for parsed
 * packets, the address match for the others with addresses, and its
 * --blocklist-unparsed policy for what is left undecided. */
static enum decision
decide(const struct cflow_blocklist *bl, const uint8_t *b, uint32_t len,
		enum cflow_bl_kind *kind)
{
	struct cflow_bl_info info;
	struct cflow_packet p;
	enum cflow_parse_status st = cflow_parse(b, len, NULL, &p);

	*kind = CFLOW_BL_NONE;
	if (st == CFLOW_PARSE_OK)
		*kind = cflow_bl_match(bl, &p);
	else if (p.has_addrs)
		*kind = cflow_bl_match_addrs(bl, &p);
	else
		return UNPARSED;
	if (*kind != CFLOW_BL_NONE)
		return BLOCK;
	cflow_bl_info(bl, &info);
	return st != CFLOW_PARSE_OK && info.entries[CFLOW_BL_FLOW] != 0 ?
		UNPARSED : PASS;
}

/*
 * Issue 11: packets from or to a listed address or prefix are matched
 * whatever the parser made of what follows their IP header; others are
 * not; the flow entries of a list make the others undecided (their
 * ports are unknown), and without flow entries they pass.
 */
static int
test_match_addrs_unparsed(void)
{
	static const struct {
		const char *src, *dst;
		enum cflow_bl_kind kind;
	} pairs[] = {
		{ "192.0.2.1", "8.8.8.8", CFLOW_BL_ADDRESS },
		{ "8.8.4.4", "192.0.2.1", CFLOW_BL_ADDRESS },
		{ "198.51.100.77", "8.8.8.8", CFLOW_BL_PREFIX },
		{ "192.0.2.2", "8.8.8.8", CFLOW_BL_NONE },
		{ "203.0.113.1", "203.0.113.2", CFLOW_BL_NONE }, /* a flow's */
		{ "2001:db9::7", "2001:4860::8888", CFLOW_BL_ADDRESS },
		{ "2001:4860::8888", "2001:db8:1::5", CFLOW_BL_PREFIX },
		{ "2001:dba::1", "2001:4860::8888", CFLOW_BL_NONE },
		{ "2001:db9::1", "2001:db9::2", CFLOW_BL_NONE }, /* a flow's */
	};
	const char *entries = "192.0.2.1\n198.51.100.0/24\n2001:db8::/32\n"
		"2001:db9::7\n";
	char text[512], err[512];
	struct cflow_blocklist *flows, *noflows;
	uint8_t b[512];

	snprintf(text, sizeof(text), "%stcp 203.0.113.1 1234 203.0.113.2 80\n"
		"tcp 2001:db9::1 1234 2001:db9::2 80\n", entries);
	flows = cflow_bl_read(write_file("flows.txt", text), 0, err,
		sizeof(err));
	TEST_ASSERT(flows != NULL, "%s", err);
	noflows = cflow_bl_read(write_file("noflows.txt", entries), 0, err,
		sizeof(err));
	TEST_ASSERT(noflows != NULL, "%s", err);
	for (unsigned int i = 0; i < sizeof(bypasses) / sizeof(bypasses[0]);
			i++) {
		const struct frame_spec *f = &bypasses[i];

		for (unsigned int j = 0; j < sizeof(pairs) / sizeof(pairs[0]);
				j++) {
			bool v6 = strchr(pairs[j].src, ':') != NULL;
			struct frame_spec ok = { "parsed", .proto = 6 };
			uint32_t len;
			struct cflow_packet p;
			enum cflow_bl_kind k;
			enum decision d;

			if (f->v6_ext && !v6)
				continue; /* an IPv6 bypass only */
			len = frame(b, pairs[j].src, pairs[j].dst, f);
			TEST_ASSERT_EQ(cflow_parse(b, len, NULL, &p), f->st,
				"%s %s: status", f->name, pairs[j].src);
			TEST_ASSERT(p.has_addrs && p.key.family == (v6 ? 6 : 4),
				"%s %s: addresses", f->name, pairs[j].src);
			TEST_ASSERT_EQ(cflow_bl_match_addrs(flows, &p),
				pairs[j].kind, "%s %s -> %s: kind", f->name,
				pairs[j].src, pairs[j].dst);
			TEST_ASSERT_EQ(cflow_bl_match_addrs(noflows, &p),
				pairs[j].kind, "%s %s: kind, no flows", f->name,
				pairs[j].src);
			d = decide(flows, b, len, &k);
			TEST_ASSERT_EQ(d, pairs[j].kind != CFLOW_BL_NONE ?
				BLOCK : UNPARSED, "%s %s: decision", f->name,
				pairs[j].src);
			d = decide(noflows, b, len, &k);
			TEST_ASSERT_EQ(d, pairs[j].kind != CFLOW_BL_NONE ?
				BLOCK : PASS, "%s %s: decision, no flows",
				f->name, pairs[j].src);
			/* The same addresses parsed: the same kind, and a
			 * listed flow matched as a flow. */
			len = frame(b, pairs[j].src, pairs[j].dst, &ok);
			TEST_ASSERT_EQ(cflow_parse(b, len, NULL, &p),
				CFLOW_PARSE_OK, "parsed");
			TEST_ASSERT_EQ(cflow_bl_match_addrs(flows, &p),
				pairs[j].kind, "%s: parsed, by address",
				pairs[j].src);
			TEST_ASSERT_EQ(decide(flows, b, len, &k),
				strncmp(pairs[j].src, "2001:db9::1", 11) == 0 ||
				strncmp(pairs[j].src, "203.", 4) == 0 ||
				pairs[j].kind != CFLOW_BL_NONE ? BLOCK : PASS,
				"%s: parsed", pairs[j].src);
		}
	}
	cflow_bl_free(flows);
	cflow_bl_free(noflows);
	unlink(write_file("flows.txt", ""));
	unlink(write_file("noflows.txt", ""));
	return 0;
}

/* Packets without addresses never match by address, even a list of
 * everything; packets with them all do. */
static int
test_match_addrs_none(void)
{
	static const struct frame_spec nine_tags = { "9 tags", .vlans = 9,
		.proto = 6, .st = CFLOW_PARSE_NON_IP };
	static const struct frame_spec eight_tags = { "8 tags", .vlans = 8,
		.proto = 6, .st = CFLOW_PARSE_NON_IP };
	char err[512];
	struct cflow_blocklist *bl = cflow_bl_read(write_file("all.txt",
		"0.0.0.0/0\n::/0\n"), 0, err, sizeof(err));
	struct cflow_packet p;
	enum cflow_bl_kind k;
	uint8_t b[512];
	uint32_t len;

	TEST_ASSERT(bl != NULL, "%s", err);
	memset(&p, 0, sizeof(p));
	TEST_ASSERT_EQ(cflow_bl_match_addrs(bl, &p), CFLOW_BL_NONE, "zero");
	len = frame(b, "1.2.3.4", "5.6.7.8", &nine_tags);
	TEST_ASSERT_EQ(cflow_parse(b, len, NULL, &p), CFLOW_PARSE_NON_IP, "9");
	TEST_ASSERT(!p.has_addrs, "9 tags: no addresses");
	TEST_ASSERT_EQ(cflow_bl_match_addrs(bl, &p), CFLOW_BL_NONE, "9 tags");
	TEST_ASSERT_EQ(decide(bl, b, len, &k), UNPARSED, "9 tags: unparsed");
	len = frame(b, "::1", "::2", &eight_tags);
	TEST_ASSERT_EQ(cflow_parse(b, len, NULL, &p), CFLOW_PARSE_NON_IP, "8");
	TEST_ASSERT_EQ(cflow_bl_match_addrs(bl, &p), CFLOW_BL_PREFIX,
		"8 tags, ::/0");
	b[12] = 0x08; /* ARP */
	b[13] = 0x06;
	TEST_ASSERT_EQ(cflow_parse(b, len, NULL, &p), CFLOW_PARSE_NON_IP,
		"ARP");
	TEST_ASSERT_EQ(cflow_bl_match_addrs(bl, &p), CFLOW_BL_NONE, "ARP");
	cflow_bl_free(bl);
	unlink(write_file("all.txt", ""));
	return 0;
}

/*
 * cflow_bl_match_addrs() against the exact oracle on random IPv6
 * addresses: a list of many prefix lengths (the lookups no longer fit
 * one bulk call) and one of a few; and it agrees with cflow_bl_match()
 * on a list without flows.
 */
static int
test_match_addrs_oracle(void)
{
	enum { ENTRIES = 400, PACKETS = 20000 };
	struct oracle_entry *e = calloc(ENTRIES, sizeof(*e));
	uint64_t rng = 11;

	for (int list = 0; list < 2; list++) {
		char path[256], err[512];
		uint64_t matched = 0;
		struct cflow_blocklist *bl;
		FILE *fp;

		snprintf(path, sizeof(path), "%s/v6.txt", dir);
		fp = fopen(path, "w");
		for (int i = 0; i < ENTRIES; i++) {
			uint64_t r = test_rand(&rng), r2 = test_rand(&rng);
			char text[64];

			e[i].family = 6;
			memcpy(e[i].addr, &r, 8);
			memcpy(e[i].addr + 8, &r2, 6);
			/* list 0: lengths 16..128; list 1: 5 of them */
			e[i].len = list == 0 ? 16 + (unsigned int)(r2 >> 48) %
				113 : 24 + 26 * (unsigned int)((r2 >> 48) % 5);
			inet_ntop(AF_INET6, e[i].addr, text, sizeof(text));
			fprintf(fp, "%s/%u\n", text, e[i].len);
		}
		fclose(fp);
		bl = cflow_bl_read(path, 0, err, sizeof(err));
		TEST_ASSERT(bl != NULL, "%s", err);
		for (int n = 0; n < PACKETS; n++) {
			uint64_t r = test_rand(&rng);
			uint8_t a[2][16];
			struct cflow_packet p;
			int want = 0;

			/* Near a random entry: its first r % 129 bits. */
			for (int side = 0; side < 2; side++) {
				const struct oracle_entry *near =
					&e[test_rand(&rng) % ENTRIES];
				unsigned int keep = test_rand(&rng) % 129;

				for (int byte = 0; byte < 16; byte++) {
					uint8_t rnd = (uint8_t)test_rand(&rng);
					unsigned int k = keep > byte * 8u ?
						keep - byte * 8u : 0;
					uint8_t mask = k >= 8 ? 0xff :
						(uint8_t)(0xff00 >> k);

					a[side][byte] = (near->addr[byte] & mask)
						| (rnd & ~mask);
				}
			}
			memset(&p, 0, sizeof(p));
			cflow_key_init(&p.key, 6, a[0], a[1], 0, 0, 0);
			p.has_addrs = true;
			for (int i = 0; i < ENTRIES && !want; i++)
				want = prefix_covers(&e[i], 6, p.key.addr_lo) ||
					prefix_covers(&e[i], 6, p.key.addr_hi);
			TEST_ASSERT_EQ(cflow_bl_match_addrs(bl, &p) !=
				CFLOW_BL_NONE, want, "list %d packet %d (%lu)",
				list, n, (unsigned long)r);
			TEST_ASSERT_EQ(cflow_bl_match_addrs(bl, &p),
				cflow_bl_match(bl, &p), "list %d packet %d: kind",
				list, n);
			matched += want;
		}
		printf("# list %d: %lu of %d packets listed\n", list,
			(unsigned long)matched, PACKETS);
		TEST_ASSERT(matched > PACKETS / 20 && matched < PACKETS,
			"list %d: both outcomes", list);
		cflow_bl_free(bl);
		unlink(path);
	}
	free(e);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_bad_lines),
	TEST_CASE(test_match_kinds),
	TEST_CASE(test_oracle),
	TEST_CASE(test_damaged_files),
	TEST_CASE(test_match_addrs_unparsed),
	TEST_CASE(test_match_addrs_none),
	TEST_CASE(test_match_addrs_oracle),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	int ret;

	if (mkdtemp(dir) == NULL)
		return 1;
	ret = test_run(cases, argc, argv);
	for (const char *f = "bad.txt\0list.txt\0oracle.txt\0oracle.cf\0l.txt\0"
			"l.cf\0"; *f; f += strlen(f) + 1) {
		char p[256];

		snprintf(p, sizeof(p), "%s/%s", dir, f);
		unlink(p);
	}
	rmdir(dir);
	return ret;
}
