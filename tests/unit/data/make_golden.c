/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * How the golden fixtures of tests/unit/test_golden.c were made. The
 * fixtures are frozen: this program is not built nor run by the tests,
 * and running it again must not be needed. It is kept to document what
 * the files hold, and to make new ones (under new names) if a format
 * version is added; see docs/golden.md.
 *
 * Build and run from the top of the tree, after ninja -C build:
 *
 *   cc -std=gnu11 -O2 -Ilib/cfutil -Ilib/cuckoo -Ilib/cflow \
 *       -Ilib/blocklist tests/unit/data/make_golden.c \
 *       build/lib/blocklist/libblocklist.a \
 *       build/lib/cuckoo/libcuckoo.a -lxxhash -lm -lpthread \
 *       -o /tmp/make_golden
 *   /tmp/make_golden files tests/unit/data   # the six filter files and
 *                                            # the two compiled lists
 *   /tmp/make_golden kat                     # the known-answer tables
 *
 * "files" prints the figures test_golden.c records for each file;
 * "kat" prints the C tables of test_golden.c's known answers, derived
 * through the public API exactly as the test derives them.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocklist.h"
#include "cuckoo_filter.h"
#include "cfutil.h"

#define HEADER_SIZE 96
/* Hashes never added to any file, and how many are asked. */
#define NONMEMBER_SEED UINT64_C(0x6e6f6e6d656d6265)
#define NONMEMBER_QUERIES 100000


/* The value stored with an item (truncated to value_bits by the filter). */
static uint64_t
value_of(uint64_t h)
{
	return h ^ (h >> 29);
}

struct golden_filter {
	const char *name;
	struct cf_params params;
	uint64_t stream_seed;
	unsigned int items;     /* adds; 0: until the stash holds 2 */
};

static const struct golden_filter filters[] = {
	{ "plain12.cf", { .capacity = 1000, .fp_bits = 12,
		.seed = 0x601de401 }, 1, 900 },
	{ "semi13_v8.cf", { .capacity = 1000, .fp_bits = 13,
		.table = CF_TABLE_SEMISORT, .value_bits = 8,
		.seed = 0x601de402 }, 2, 900 },
	{ "fp16_v16.cf", { .capacity = 500, .fp_bits = 16,
		.value_bits = 16, .seed = 0x601de403 }, 3, 450 },
	{ "exact13_v32.cf", { .capacity = 1000, .fp_bits = 13,
		.exact_size = true, .value_bits = 32,
		.seed = 0x601de404 }, 4, 900 },
	{ "stash20_b8_v64.cf", { .capacity = 60, .fp_bits = 20,
		.bucket_slots = 8, .value_bits = 64, .max_kicks = 50,
		.seed = 0x601de405 }, 5, 0 },
	/* format version 2: the interleaved layout (13-bit fingerprints:
	 * 52 bits in 7 bytes, values from byte 8, 32-byte buckets) */
	{ "il13_v32.cf", { .capacity = 1000, .fp_bits = 13,
		.table = CF_TABLE_INTERLEAVED, .value_bits = 32,
		.seed = 0x601de406 }, 6, 900 },
};

static int
write_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (fp == NULL || fwrite(buf, 1, len, fp) != len || fclose(fp) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}

static int
make_filter(const char *dir, const struct golden_filter *g)
{
	struct cf_filter *f = cf_create(&g->params);
	uint64_t x = g->stream_seed, unique = 0, hits = 0;
	unsigned int n = 0;
	struct cf_stats st;
	struct cf_params p;
	uint8_t *buf;
	size_t size;

	if (f == NULL)
		return -1;
	for (;;) {
		uint64_t h = cfu_splitmix64(&x);

		if (cf_add_with_hash(f, h, value_of(h), NULL) != 0) {
			fprintf(stderr, "%s: add %u failed\n", g->name, n);
			return -1;
		}
		n++;
		cf_stats(f, &st);
		if (g->items != 0 ? n == g->items : st.stash_used >= 2)
			break;
	}
	x = g->stream_seed;
	for (unsigned int k = 0; k < n; k++)
		unique += cf_count_with_hash(f, cfu_splitmix64(&x)) == 1;
	/* Queries never added: the false positives, exactly. */
	x = NONMEMBER_SEED;
	for (unsigned int k = 0; k < NONMEMBER_QUERIES; k++)
		hits += cf_lookup_with_hash(f, cfu_splitmix64(&x), NULL);
	size = cf_save_size(f);
	buf = malloc(size);
	if (buf == NULL || cf_save_mem(f, buf, size) != (int64_t)size ||
			write_file(dir, g->name, buf, size) != 0)
		return -1;
	cf_get_params(f, &p);
	printf("%s: %zu bytes, items %u (table %" PRIu64 ", stash %" PRIu64
		"), count 1 for %" PRIu64 ", non-member hits %" PRIu64
		", buckets %" PRIu64 ", fp %u, "
		"slots %u, values %u, kicks %u\n", g->name, size, n,
		st.items - st.stash_used, st.stash_used, unique, hits,
		st.buckets,
		p.fp_bits, p.bucket_slots, p.value_bits, p.max_kicks);
	free(buf);
	cf_free(f);
	return 0;
}

static int
make_blocklist(const char *dir, unsigned int fp_bits, const char *name)
{
	char list[4096], out[4096], err[512];
	struct cbl *bl;
	struct cbl_info in;

	snprintf(list, sizeof(list), "%s/golden_list.txt", dir);
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	bl = cbl_read(list, fp_bits, err, sizeof(err));
	if (bl == NULL || cbl_save(bl, out, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	cbl_info(bl, &in);
	printf("%s: addresses %" PRIu64 ", prefixes %" PRIu64 ", flows %"
		PRIu64 ", v4 lengths %u, v6 lengths %u, fp %u\n", name,
		in.entries[CBL_ADDRESS], in.entries[CBL_PREFIX],
		in.entries[CBL_FLOW], in.v4_lengths, in.v6_lengths,
		in.fp_bits);
	cbl_free(bl);
	return 0;
}

/* ------------------------------------------------- known answers */

static const uint64_t kat_hash[16] = {
	UINT64_C(0x0000000000000000), UINT64_C(0xffffffffffffffff),
	UINT64_C(0x00000000ffffffff), UINT64_C(0xffffffff00000000),
	UINT64_C(0x8000000080000000), UINT64_C(0x0123456789abcdef),
	UINT64_C(0xfedcba9876543210), UINT64_C(0x9e3779b97f4a7c15),
	UINT64_C(0x00000001fffffffe), UINT64_C(0x7fffffff00000001),
	UINT64_C(0xe220a8397b1dcdaf), UINT64_C(0x6e789e6aa1b965f4),
	UINT64_C(0x06c45d188009454f), UINT64_C(0xf88bb8a8724c81ec),
	UINT64_C(0x1b39896a51a8749b), UINT64_C(0x53cb9f0c747ea2ea),
};

static const struct { unsigned int slots; bool exact; } kat_tables[] = {
	{ 4, false }, { 4, true }, { 2, false }, { 2, true }, { 8, false },
	{ 8, true },
};
#define KAT_CAPACITY 1000

static uint64_t
load_bits(const uint8_t *p, uint64_t bit, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int k = 0; k < n; k++)
		v |= (uint64_t)(p[(bit + k) / 8] >> ((bit + k) % 8) & 1) << k;
	return v;
}

/* The item's bucket, fingerprint (plain: its slot's bits) and alternate
 * bucket, as test_golden.c derives them. */
static int
derive(const struct cf_params *p, uint64_t h, uint32_t *i1, uint32_t *fp,
		uint32_t *i2)
{
	struct cf_filter *f = cf_create(p);
	uint32_t pos = 0, pos2 = 0;
	uint8_t buf[1 << 16];
	int ret = 0;

	if (f == NULL)
		return -1;
	if (cf_add_with_hash(f, h, 0, &pos) != 0)
		ret = -1;
	for (unsigned int k = 1; k < p->bucket_slots; k++)
		cf_add_with_hash(f, h, 0, NULL);
	*i1 = pos / p->bucket_slots;
	switch (cf_add_with_hash(f, h, 0, &pos2)) {
	case 0:
		*i2 = pos2 / p->bucket_slots;
		break;
	case -ENOSPC:
		*i2 = *i1;
		break;
	default:
		ret = -1;
	}
	if (cf_save_mem(f, buf, sizeof(buf)) < 0)
		ret = -1;
	*fp = (uint32_t)load_bits(buf + HEADER_SIZE, (uint64_t)pos *
		p->fp_bits, p->fp_bits);
	cf_free(f);
	return ret;
}

static int
kat(void)
{
	uint32_t i1, fp, i2;

	printf("static const uint32_t kat_fp[29][16] = {\n");
	for (unsigned int f = 4; f <= 32; f++) {
		struct cf_params p = { .capacity = KAT_CAPACITY,
			.bucket_slots = 4, .fp_bits = f };

		printf("\t{ /* f = %u */\n\t\t", f);
		for (int k = 0; k < 16; k++) {
			if (derive(&p, kat_hash[k], &i1, &fp, &i2) != 0)
				return -1;
			printf("0x%" PRIx32 ",%s", fp, k == 15 ? "\n" :
				k % 6 == 5 ? "\n\t\t" : " ");
		}
		printf("\t},\n");
	}
	printf("};\n\n");
	for (unsigned int t = 0; t < sizeof(kat_tables) /
			sizeof(kat_tables[0]); t++) {
		struct cf_params p = { .capacity = KAT_CAPACITY,
			.bucket_slots = kat_tables[t].slots,
			.exact_size = kat_tables[t].exact, .fp_bits = 12 };
		struct cf_filter *f = cf_create(&p);
		struct cf_stats st;

		cf_stats(f, &st);
		cf_free(f);
		printf("\t{ .slots = %u, .exact = %s, .buckets = %" PRIu64
			",\n\t  .i1 = {", p.bucket_slots, p.exact_size ?
			"true" : "false", st.buckets);
		for (int k = 0; k < 16; k++) {
			derive(&p, kat_hash[k], &i1, &fp, &i2);
			printf("%s%" PRIu32 ",", k % 8 == 0 ? "\n\t\t" : " ",
				i1);
		}
		printf("\n\t  },\n\t  .i2 = {\n");
		for (unsigned int w = 4; w <= 32; w++) {
			p.fp_bits = w;
			printf("\t\t{");
			for (int k = 0; k < 16; k++) {
				if (derive(&p, kat_hash[k], &i1, &fp, &i2) != 0)
					return -1;
				printf("%s%" PRIu32 ",", k == 8 ?
					"\n\t\t " : k ? " " : " ", i2);
			}
			printf(" }, /* f = %u */\n", w);
		}
		printf("\t  },\n\t},\n");
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "kat") == 0)
		return kat() == 0 ? 0 : 1;
	if (argc != 3 || strcmp(argv[1], "files") != 0) {
		fprintf(stderr, "usage: make_golden files DIR | kat\n");
		return 2;
	}
	for (unsigned int i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
		if (make_filter(argv[2], &filters[i]) != 0)
			return 1;
	if (make_blocklist(argv[2], 0, "golden_list_fp32.cfbl") != 0 ||
			make_blocklist(argv[2], 12, "golden_list_fp12.cfbl") != 0)
		return 1;
	return 0;
}
