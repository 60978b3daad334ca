/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * cf_inline.h: the per-key calls compiled into the caller against the
 * library's own (test_inline_lib.c, built with CF_NO_INLINE). Same hash,
 * same answers, same slots, same saved bytes, on every layout (those the
 * inline code takes and those it passes to the library), with and
 * without a stash, with either hash of 8-byte keys (cf_params.key_hash);
 * and cf_hash_u64()'s quality (--slow): bucket load spread, first
 * failure and false positive rate on sequential and strided integer
 * keys, next to cf_hash() of the same keys, and through cf_add() and
 * cf_lookup() of a filter of CF_KEY_HASH_U64.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include <xxhash.h>

#include "cuckoo_filter.h"
#include "test.h"
#include "test_inline.h"

struct config {
	const char *name;
	struct cf_params p;
};

/* Every kind of cf_inline.h (P12, P16, P32, W32, BYTES) and layouts it hands
 * to the library (values: no inline add; word, other wide and
 * semi-sorted buckets: nothing inline). */
static const struct config configs[] = {
	{ "12x4", { .fp_bits = 12 } },
	{ "16x4", { .fp_bits = 16 } },
	{ "8x4", { .fp_bits = 8 } },
	{ "8x8", { .fp_bits = 8, .bucket_slots = 8 } },
	{ "16x2", { .fp_bits = 16, .bucket_slots = 2 } },
	{ "32x2", { .fp_bits = 32, .bucket_slots = 2 } },
	{ "12x4 exact", { .fp_bits = 12, .exact_size = true } },
	{ "16x4 exact", { .fp_bits = 16, .exact_size = true } },
	{ "12x4 values", { .fp_bits = 12, .value_bits = 32 } },
	{ "16x4 interleaved", { .fp_bits = 16, .value_bits = 16,
		.table = CF_TABLE_INTERLEAVED } },
	{ "12x4 interleaved", { .fp_bits = 12, .value_bits = 32,
		.table = CF_TABLE_INTERLEAVED } },
	{ "13x4 word", { .fp_bits = 13 } },
	{ "32x4", { .fp_bits = 32 } },
	{ "32x4 exact", { .fp_bits = 32, .exact_size = true } },
	{ "32x4 interleaved", { .fp_bits = 32, .value_bits = 32,
		.table = CF_TABLE_INTERLEAVED, .exact_size = true } },
	{ "32x4 interleaved pow2", { .fp_bits = 32, .value_bits = 32,
		.table = CF_TABLE_INTERLEAVED } },
	{ "32x8 slots", { .fp_bits = 32, .bucket_slots = 8 } },
	{ "24x4 slots", { .fp_bits = 24 } },
	{ "13 semisort", { .fp_bits = 13, .table = CF_TABLE_SEMISORT } },
	/* cf_hash_u64() for 8-byte keys: each kind, and the library's */
	{ "12x4 u64", { .fp_bits = 12, .key_hash = CF_KEY_HASH_U64 } },
	{ "16x4 u64", { .fp_bits = 16, .key_hash = CF_KEY_HASH_U64 } },
	{ "32x4 u64", { .fp_bits = 32, .key_hash = CF_KEY_HASH_U64 } },
	{ "32x4 exact u64", { .fp_bits = 32, .exact_size = true,
		.key_hash = CF_KEY_HASH_U64 } },
	{ "8x4 u64", { .fp_bits = 8, .key_hash = CF_KEY_HASH_U64 } },
	{ "12x4 exact u64", { .fp_bits = 12, .exact_size = true,
		.key_hash = CF_KEY_HASH_U64 } },
	{ "12x4 values u64", { .fp_bits = 12, .value_bits = 32,
		.key_hash = CF_KEY_HASH_U64 } },
	{ "13 semisort u64", { .fp_bits = 13, .table = CF_TABLE_SEMISORT,
		.key_hash = CF_KEY_HASH_U64 } },
};

#define NB_CONFIGS (sizeof(configs) / sizeof(configs[0]))

static struct cf_filter *
make(const struct config *c, uint64_t capacity, uint64_t seed)
{
	struct cf_params p = c->p;

	p.capacity = capacity;
	p.seed = seed;
	return cf_create(&p);
}

static int
test_inline_is_on(void)
{
#ifndef CF_INLINE_CALLS
	TEST_ASSERT(0, "cf_inline.h's calls are off in this build");
#endif
	TEST_ASSERT_EQ(lib_inlined(), 0, "CF_NO_INLINE left them on");
	return 0;
}

/* The inline hash of 8-byte keys is seeded XXH3, cf_hash(). */
static int
test_hash8_is_xxh3(void)
{
	static const uint64_t seeds[] = { 0, 1, 0x5eed, UINT32_MAX,
		UINT64_C(0xffffffff00000000), UINT64_MAX,
		UINT64_C(0x0123456789abcdef) };
	uint64_t x = 42;

	for (unsigned int s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		struct cf_filter *f = make(&configs[0], 1000, seeds[s]);

		TEST_ASSERT(f != NULL, "create");
		for (unsigned int k = 0; k < 20000; k++) {
			uint64_t key = k < 64 ? UINT64_C(1) << k :
				cfu_splitmix64(&x);
			uint64_t want = XXH3_64bits_withSeed(&key, 8, seeds[s]);

			TEST_ASSERT_EQ(cf_hash(f, &key, 8), want, "cf_hash");
			TEST_ASSERT_EQ(cf_inline_hash8_(cf_inline_(f)->key_flip, &key),
				want, "seed %#" PRIx64 " key %#" PRIx64,
				seeds[s], key);
		}
		cf_free(f);
	}
	return 0;
}

/* cf_hash_u64() inline (128-bit integers) and the library's (XXH3's
 * fold) agree; the inline fold in 32-bit multiplies (targets without
 * 128-bit integers) is the same; and a filter of CF_KEY_HASH_U64 hashes
 * 8-byte keys with it, inline and in the library, and other lengths
 * with XXH3. */
static int
test_hash_u64_equals_library(void)
{
	static const uint64_t seeds[] = { 0, 1, UINT64_MAX, 0x5eed };
	uint64_t x = 7;

	for (unsigned int s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		struct cf_filter *f = make(&configs[0], 1000, seeds[s]);

		TEST_ASSERT(f != NULL, "create");
		for (unsigned int k = 0; k < 100000; k++) {
			uint64_t key = k < 3 ? (uint64_t[]){ 0, 1,
				UINT64_MAX }[k] : k < 1000 ? k :
				cfu_splitmix64(&x);

			TEST_ASSERT_EQ(cf_hash_u64(f, key),
				lib_hash_u64(f, key), "key %#" PRIx64, key);
			TEST_ASSERT_EQ(cf_inline_fold32_(key, x),
				cf_inline_fold_(key, x), "fold32");
		}
		cf_free(f);
	}
	for (unsigned int s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		struct config c = { "u64", { .fp_bits = 12,
			.key_hash = CF_KEY_HASH_U64 } };
		struct cf_filter *f = make(&c, 1000, seeds[s]);
		uint8_t bytes[12];

		TEST_ASSERT(f != NULL, "create");
		for (unsigned int k = 0; k < 10000; k++) {
			uint64_t key = cfu_splitmix64(&x);

			TEST_ASSERT_EQ(cf_hash(f, &key, 8), cf_hash_u64(f, key),
				"cf_hash");
			TEST_ASSERT_EQ(cf_inline_key8_(cf_inline_(f), &key),
				cf_hash_u64(f, key), "inline");
			memcpy(bytes, &key, 8);
			memcpy(bytes + 8, &k, 4);
			TEST_ASSERT_EQ(cf_hash(f, bytes, 12),
				XXH3_64bits_withSeed(bytes, 12, seeds[s]),
				"12 bytes");
			TEST_ASSERT_EQ(cf_hash(f, bytes, 4),
				XXH3_64bits_withSeed(bytes, 4, seeds[s]),
				"4 bytes");
		}
		cf_free(f);
	}
	return 0;
}

static int
same_bytes(const struct cf_filter *a, const struct cf_filter *b,
		const char *name)
{
	size_t n = cf_save_size(a);
	uint8_t *x = malloc(n), *y = malloc(n);
	int same;

	TEST_ASSERT(x != NULL && y != NULL, "malloc");
	TEST_ASSERT_EQ(cf_save_size(b), n, "%s: sizes", name);
	cf_save_mem(a, x, n);
	cf_save_mem(b, y, n);
	same = memcmp(x, y, n) == 0;
	free(x);
	free(y);
	TEST_ASSERT(same, "%s: the saved filters differ", name);
	return 0;
}

/*
 * Two filters of each layout, the same operations on each: the inline
 * calls on one, the library's on the other. Filled past their capacity
 * (kicks, stash, refusals), with 8-byte keys (inline hash) and keys of
 * other lengths (the library's), then looked up: members, absent keys.
 */
static int
check_config(const struct config *c, bool by_hash)
{
	const uint64_t capacity = 2000;
	struct cf_filter *a = make(c, capacity, 99), *b = make(c, capacity, 99);
	uint64_t x = 1, q = 2, ops;
	struct cf_stats st;
	unsigned int refused = 0;

	TEST_ASSERT(a != NULL && b != NULL, "%s: create", c->name);
	cf_stats(a, &st);
	ops = st.slots * 13 / 10;
	for (unsigned int k = 0; k < ops; k++) {
		uint64_t key = cfu_splitmix64(&x);
		size_t len = k % 7 == 3 ? 5 : 8;
		int ra, rb;

		if (by_hash) {
			ra = cf_add_with_hash(a, key, key, NULL);
			rb = lib_add_with_hash(b, key, key, NULL);
		} else {
			ra = cf_add(a, &key, len);
			rb = lib_add(b, &key, len);
		}
		TEST_ASSERT_EQ(ra, rb, "%s: add %u: %d against %d", c->name,
			k, ra, rb);
		refused += ra != 0;
	}
	cf_stats(a, &st);
	TEST_ASSERT(refused != 0 && st.stash_used != 0, "%s: %u refused, "
		"stash %" PRIu64 ": not filled", c->name, refused,
		st.stash_used);
	if (same_bytes(a, b, c->name) != 0)
		return -1;
	x = 1;
	for (unsigned int k = 0; k < ops; k++) {
		uint64_t key = cfu_splitmix64(&x), absent = cfu_splitmix64(&q);
		size_t len = k % 7 == 3 ? 5 : 8;

		if (by_hash) {
			TEST_ASSERT_EQ(cf_lookup_with_hash(a, key, NULL),
				lib_lookup_with_hash(b, key, NULL), "%s", c->name);
			TEST_ASSERT_EQ(cf_lookup_with_hash(a, absent, NULL),
				lib_lookup_with_hash(b, absent, NULL), "%s",
				c->name);
		} else {
			TEST_ASSERT_EQ(cf_lookup(a, &key, len),
				lib_lookup(b, &key, len), "%s", c->name);
			TEST_ASSERT_EQ(cf_lookup(a, &absent, 8),
				lib_lookup(b, &absent, 8), "%s", c->name);
		}
	}
	cf_free(a);
	cf_free(b);
	return 0;
}

static int
test_inline_equals_library(void)
{
	for (unsigned int i = 0; i < NB_CONFIGS; i++)
		if (check_config(&configs[i], false) != 0 ||
				check_config(&configs[i], true) != 0)
			return -1;
	return 0;
}

/* Every item added through the inline calls is found, the stash's
 * included; a refused add says so through errno, as the library does. */
static int
test_inline_no_false_negative(void)
{
	for (unsigned int i = 0; i < NB_CONFIGS; i++) {
		struct cf_filter *f = make(&configs[i], 500, 3);
		uint64_t keys[2000], x = 5;
		unsigned int n = 0;

		TEST_ASSERT(f != NULL, "create");
		for (unsigned int k = 0; k < 2000; k++) {
			uint64_t key = cfu_splitmix64(&x);
			int ret;

			errno = 0;
			ret = cf_add(f, &key, 8);
			if (ret == 0)
				keys[n++] = key;
			else
				TEST_ASSERT(ret == -ENOSPC && errno == ENOSPC,
					"%s: %d, errno %d", configs[i].name,
					ret, errno);
		}
		TEST_ASSERT(n < 2000, "%s: never full", configs[i].name);
		for (unsigned int k = 0; k < n; k++)
			TEST_ASSERT_EQ(cf_lookup(f, &keys[k], 8), 1,
				"%s: key %u lost", configs[i].name, k);
		cf_free(f);
	}
	return 0;
}

/* ------------------------------------------------- cf_hash_u64 quality */

/* Integer key streams a hash of integers must not mind. */
static uint64_t
stream_key(unsigned int kind, uint64_t k, uint64_t *rng)
{
	switch (kind) {
	case 0:
		return k;                      /* 0, 1, 2, ... */
	case 1:
		return k << 32;                /* high words only */
	case 2:
		return k * 4096 + 0x0a000000;  /* IPv4-like, stride 4096 */
	default:
		return cfu_splitmix64(rng);    /* random */
	}
}

static const char *const stream_names[] = { "sequential", "k << 32",
	"stride 4096", "random" };

enum quality_hash { Q_XXH3, Q_U64, Q_OPTION, Q_MULSHIFT };

static const char *const hash_names[] = { "cf_hash", "cf_hash_u64",
	"cf_add/cf_lookup, CF_KEY_HASH_U64", "multiply-shift (control)" };

/* The hashes compared: cf_hash() of the key's bytes, cf_hash_u64(), and
 * as a control that the checks can fail, the 2-independent
 * multiply-shift (Dietzfelbinger) of the paper authors' code, the high
 * word of a * key + b with 128-bit a, b (fixed random words). */
static uint64_t
quality_hash(const struct cf_filter *f, enum quality_hash h, uint64_t key)
{
	__extension__ typedef unsigned __int128 u128;
	const u128 a = (u128)UINT64_C(0x4ed499699c3bea4e) << 64 |
		UINT64_C(0xd0b93cbdd50c3729);
	const u128 b = (u128)UINT64_C(0x8a7b1c2d3e4f5061) << 64 |
		UINT64_C(0x1726354453627180);

	switch (h) {
	case Q_XXH3:
		return cf_hash(f, &key, sizeof(key));
	case Q_U64:
		return cf_hash_u64(f, key);
	case Q_OPTION: /* f of CF_KEY_HASH_U64 */
		return cf_hash(f, &key, sizeof(key));
	default:
		return (uint64_t)((a * key + b) >> 64);
	}
}

/*
 * The primary buckets of 4 keys a bucket (2^18 buckets), and the
 * fingerprints (12 bits) of the same keys, against uniform: the larger
 * of the two chi-square statistics' distances from their mean, in
 * standard deviations. A uniform hash stays below 5 but with odds of 1
 * in 3 million. Lower is no defect: a bucket load more even than random.
 */
static double
spread(const struct cf_filter *f, enum quality_hash hash, unsigned int kind)
{
	const uint32_t buckets = 1u << 18, fps = 4095;
	const uint64_t n = 4 * (uint64_t)buckets;
	uint32_t *count = calloc(buckets, sizeof(*count));
	uint32_t *fcount = calloc(fps + 1, sizeof(*fcount));
	uint64_t rng = 77;
	double chi = 0, fchi = 0, z, fz;

	if (count == NULL || fcount == NULL)
		abort();
	for (uint64_t k = 0; k < n; k++) {
		uint64_t h = quality_hash(f, hash, stream_key(kind, k, &rng));

		count[(h >> 32) & (buckets - 1)]++;
		fcount[((h & UINT32_MAX) * fps) >> 32]++;
	}
	for (uint32_t i = 0; i < buckets; i++)
		chi += (count[i] - 4.0) * (count[i] - 4.0) / 4.0;
	for (uint32_t i = 0; i < fps; i++) {
		double e = (double)n / fps;

		fchi += (fcount[i] - e) * (fcount[i] - e) / e;
	}
	free(count);
	free(fcount);
	z = (chi - (buckets - 1)) / sqrt(2.0 * (buckets - 1));
	fz = (fchi - (fps - 1)) / sqrt(2.0 * (fps - 1));
	printf("# %s, %s: bucket load chi-square z = %.2f, fingerprints "
		"z = %.2f\n", hash_names[hash], stream_names[kind], z, fz);
	return z > fz ? z : fz;
}

/*
 * 2^20 slots of 12-bit fingerprints filled with a stream's keys until
 * the first refused add (at least 94%, as test_filter's Table 2 check),
 * then the false positive rate of 4 M keys never added, the next ones
 * of the same stream (neighbours of the members): within 15% of
 * cf_stats()' expected rate at 95% load (the count's own deviation is
 * about 1%).
 */
static int
fill_and_fpr(enum quality_hash hash, unsigned int kind)
{
	struct config c = { "quality", { .fp_bits = 12,
		.key_hash = hash == Q_OPTION ? CF_KEY_HASH_U64 :
		CF_KEY_HASH_XXH3 } };
	struct cf_filter *f = make(&c, (1u << 20) * 95 / 100, 11);
	uint64_t rng = 5, k = 0, hits = 0, key;
	const uint64_t queries = 4000000;
	struct cf_stats st;
	double load, fpr, want;

	TEST_ASSERT(f != NULL, "create");
	/* the option's keys through the byte-key calls (inline) */
	while (hash == Q_OPTION ? (key = stream_key(kind, k, &rng),
			cf_add(f, &key, 8) == 0) :
			cf_add_with_hash(f, quality_hash(f, hash,
			stream_key(kind, k, &rng)), 0, NULL) == 0)
		k++;
	cf_stats(f, &st);
	load = st.load_factor;
	TEST_ASSERT(load >= 0.94, "%s: first failure at load %.4f",
		stream_names[kind], load);
	/* back to 95% exactly, then absent keys */
	cf_clear(f);
	rng = 5;
	for (k = 0; k < (uint64_t)(0.95 * st.slots); k++) {
		key = stream_key(kind, k, &rng);
		TEST_ASSERT_EQ(hash == Q_OPTION ? cf_add(f, &key, 8) :
			cf_add_with_hash(f, quality_hash(f, hash, key), 0,
			NULL), 0, "refill");
	}
	cf_stats(f, &st);
	for (uint64_t q = 0; q < queries; q++) {
		key = stream_key(kind, k + q, &rng);
		hits += (uint64_t)(hash == Q_OPTION ? cf_lookup(f, &key, 8) :
			cf_lookup_with_hash(f, quality_hash(f, hash, key),
			NULL));
	}
	fpr = (double)hits / queries;
	want = st.expected_fpr;
	printf("# %s, %s: first failure at load %.4f, FPR %.4f%% "
		"(expected %.4f%%)\n", hash_names[hash], stream_names[kind],
		load, 100 * fpr, 100 * want);
	cf_free(f);
	TEST_ASSERT(fabs(fpr / want - 1) < 0.15, "%s: FPR %.4f%%, expected "
		"%.4f%%", stream_names[kind], 100 * fpr, 100 * want);
	return 0;
}

static int
test_hash_u64_quality(void)
{
	struct config c = { "spread", { .fp_bits = 12 } };
	struct config cu = { "spread", { .fp_bits = 12,
		.key_hash = CF_KEY_HASH_U64 } };
	struct cf_filter *f = make(&c, 1000, 0x5eed);
	struct cf_filter *fu = make(&cu, 1000, 0x5eed);
	double z;

	TEST_ASSERT(f != NULL && fu != NULL, "create");
	for (unsigned int kind = 0; kind < 4; kind++)
		for (int h = Q_OPTION; h >= Q_XXH3; h--) {
			z = spread(h == Q_OPTION ? fu : f,
				(enum quality_hash)h, kind);
			if (z >= 5) {
				cf_free(f);
				cf_free(fu);
			}
			TEST_ASSERT(z < 5, "%s, %s: uneven (z %.2f)",
				hash_names[h], stream_names[kind], z);
			if (fill_and_fpr((enum quality_hash)h, kind) != 0) {
				cf_free(f);
				cf_free(fu);
				return -1;
			}
		}
	cf_free(fu);
	/* the control: a hash linear in the key fails on sequential keys */
	z = spread(f, Q_MULSHIFT, 0);
	cf_free(f);
	TEST_ASSERT(z >= 5, "the control passed (z %.2f): the check cannot "
		"tell", z);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_inline_is_on),
	TEST_CASE(test_hash8_is_xxh3),
	TEST_CASE(test_hash_u64_equals_library),
	TEST_CASE(test_inline_equals_library),
	TEST_CASE(test_inline_no_false_negative),
	TEST_CASES_END()
};

/* The statistical case: suite unit-slow (see test_filter.c). */
static const struct test_case slow_cases[] = {
	TEST_CASE(test_hash_u64_quality),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--slow") == 0)
		return test_run(slow_cases, argc - 1, argv + 1);
	return test_run(cases, argc, argv);
}
