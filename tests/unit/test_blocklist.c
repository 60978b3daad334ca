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

static const struct test_case cases[] = {
	TEST_CASE(test_bad_lines),
	TEST_CASE(test_match_kinds),
	TEST_CASE(test_oracle),
	TEST_CASE(test_damaged_files),
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
