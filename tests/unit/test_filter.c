/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * lib/cuckoo behaviour: parameters, the add/lookup/delete contract checked
 * against an exact model, the paper's load and false positive figures,
 * semi-sorting, duplicates, bulk operations, values, positions and scans.
 */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuckoo_filter.h"
#include "test.h"
#include "test_memory.h"

struct variant {
	enum cf_table_type table;
	unsigned int fp_bits;
	unsigned int slots;
	unsigned int value_bits;
	bool exact_size;
};

static const struct variant variants[] = {
	{ CF_TABLE_PLAIN, 4, 4, 0, false },
	{ CF_TABLE_PLAIN, 8, 4, 0, false },
	{ CF_TABLE_PLAIN, 12, 4, 16, false },
	{ CF_TABLE_PLAIN, 13, 4, 0, false },
	{ CF_TABLE_PLAIN, 16, 4, 32, false },
	{ CF_TABLE_PLAIN, 32, 4, 64, false },
	{ CF_TABLE_PLAIN, 12, 2, 8, false },
	{ CF_TABLE_PLAIN, 16, 2, 0, false },
	{ CF_TABLE_PLAIN, 8, 8, 0, false },
	{ CF_TABLE_PLAIN, 16, 8, 16, false },
	{ CF_TABLE_SEMISORT, 5, 4, 0, false },
	{ CF_TABLE_SEMISORT, 9, 4, 8, false },
	{ CF_TABLE_SEMISORT, 13, 4, 16, false },
	{ CF_TABLE_SEMISORT, 16, 4, 0, false },
	/* Bucket counts that are not powers of two. */
	{ CF_TABLE_PLAIN, 16, 4, 16, true },
	{ CF_TABLE_PLAIN, 12, 2, 8, true },
	{ CF_TABLE_PLAIN, 32, 8, 64, true },
	{ CF_TABLE_SEMISORT, 13, 4, 16, true },
	/* Values in the bucket: whole-byte (SWAR on bytes), word and
	 * slot-by-slot fingerprints, padding after each part, 2 to 8
	 * slots, a 64-byte bucket, and not a power of two. */
	{ CF_TABLE_INTERLEAVED, 16, 4, 16, false },
	{ CF_TABLE_INTERLEAVED, 12, 4, 32, false },
	{ CF_TABLE_INTERLEAVED, 13, 4, 8, false },
	{ CF_TABLE_INTERLEAVED, 32, 4, 32, false },
	{ CF_TABLE_INTERLEAVED, 4, 2, 64, false },
	{ CF_TABLE_INTERLEAVED, 8, 8, 16, false },
	{ CF_TABLE_INTERLEAVED, 32, 8, 32, false },
	{ CF_TABLE_INTERLEAVED, 16, 4, 16, true },
	{ CF_TABLE_INTERLEAVED, 12, 2, 8, true },
};
#define NB_VARIANTS (sizeof(variants) / sizeof(variants[0]))

static struct cf_filter *
make(const struct variant *v, uint64_t capacity, uint64_t seed)
{
	struct cf_params p = {
		.capacity = capacity,
		.fp_bits = v->fp_bits,
		.bucket_slots = v->slots,
		.value_bits = v->value_bits,
		.table = v->table,
		.seed = seed,
		.exact_size = v->exact_size,
	};

	return cf_create(&p);
}

static uint64_t
items_of(const struct cf_filter *f)
{
	struct cf_stats st;

	cf_stats(f, &st);
	return st.items;
}

/* ------------------------------------------------------------ params */

static int
expect_einval(struct cf_params p)
{
	struct cf_filter *f;

	errno = 0;
	f = cf_create(&p);
	TEST_ASSERT(f == NULL, "created with rejected parameters");
	TEST_ASSERT_EQ(errno, EINVAL, "errno %d", errno);
	return 0;
}

static int
test_reject_null_params(void)
{
	errno = 0;
	TEST_ASSERT(cf_create(NULL) == NULL, "NULL params accepted");
	TEST_ASSERT_EQ(errno, EINVAL, "errno %d", errno);
	return 0;
}

static int
test_reject_zero_capacity(void)
{
	return expect_einval((struct cf_params){ .capacity = 0 });
}

static int
test_reject_huge_capacity(void)
{
	return expect_einval((struct cf_params){
		.capacity = (UINT64_C(1) << 31) + 1 });
}

static int
test_reject_fp_bits_3(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.fp_bits = 3 });
}

static int
test_reject_fp_bits_33(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.fp_bits = 33 });
}

static int
test_reject_semisort_fp_bits_4(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.fp_bits = 4, .table = CF_TABLE_SEMISORT });
}

static int
test_reject_semisort_fp_bits_17(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.fp_bits = 17, .table = CF_TABLE_SEMISORT });
}

static int
test_reject_semisort_2_slots(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.bucket_slots = 2, .table = CF_TABLE_SEMISORT });
}

static int
test_reject_3_slots(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.bucket_slots = 3 });
}

static int
test_reject_16_slots(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.bucket_slots = 16 });
}

static int
test_reject_max_kicks(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.max_kicks = CF_MAX_KICKS_LIMIT + 1 });
}

static int
test_reject_value_bits_12(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.value_bits = 12 });
}

static int
test_reject_value_bits_128(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.value_bits = 128 });
}

static int
test_reject_table_type(void)
{
	return expect_einval((struct cf_params){ .capacity = 100,
		.table = (enum cf_table_type)3 });
}

/* Interleaved: values required, and a bucket within one cache line. */
static int
test_reject_interleaved(void)
{
	errno = 0;
	TEST_ASSERT(cf_params_bytes(&(struct cf_params){ .capacity = 100,
		.table = CF_TABLE_INTERLEAVED }) == 0 && errno == EINVAL,
		"cf_params_bytes of refused parameters");
	TEST_ASSERT_EQ(expect_einval((struct cf_params){ .capacity = 100,
		.table = CF_TABLE_INTERLEAVED }), 0, "no values");
	TEST_ASSERT_EQ(expect_einval((struct cf_params){ .capacity = 100,
		.table = CF_TABLE_INTERLEAVED, .bucket_slots = 8,
		.value_bits = 64 }), 0, "8 slots of 64-bit values");
	TEST_ASSERT_EQ(expect_einval((struct cf_params){ .capacity = 100,
		.table = CF_TABLE_INTERLEAVED, .fp_bits = 33,
		.value_bits = 8 }), 0, "33-bit fingerprints");
	return 0;
}

/* What an interleaved table costs: nothing more than plain at 16/16 and
 * 32/32 (4 slots), the padding to a power of two otherwise. */
static int
test_interleaved_sizes(void)
{
	static const struct { unsigned int fp, value, slots, stride; } c[] = {
		{ 16, 16, 4, 16 }, { 32, 32, 4, 32 }, { 8, 8, 8, 16 },
		{ 12, 32, 4, 32 }, { 12, 16, 4, 16 }, { 13, 8, 4, 16 },
		{ 32, 32, 8, 64 }, { 4, 64, 2, 32 },
	};

	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct cf_params p = { .capacity = 100000, .fp_bits = c[i].fp,
			.value_bits = c[i].value, .bucket_slots = c[i].slots };
		struct cf_filter *plain = cf_create(&p), *il;
		struct cf_stats sp, si;

		p.table = CF_TABLE_INTERLEAVED;
		il = cf_create(&p);
		TEST_ASSERT(plain != NULL && il != NULL, "case %u: create", i);
		cf_stats(plain, &sp);
		cf_stats(il, &si);
		TEST_ASSERT_EQ(si.buckets, sp.buckets, "case %u: buckets", i);
		/* + 16 bytes of padding past the last bucket */
		TEST_ASSERT_EQ(si.table_bytes, si.buckets * c[i].stride + 16,
			"case %u: %u/%u bits", i, c[i].fp, c[i].value);
		if (c[i].stride * 8 == c[i].slots * (c[i].fp + c[i].value))
			TEST_ASSERT_EQ(si.bytes, sp.bytes, "case %u: no "
				"more memory than plain", i);
		/* told without creating it */
		TEST_ASSERT_EQ(cf_params_bytes(&p), si.bytes, "case %u: "
			"cf_params_bytes, interleaved", i);
		p.table = CF_TABLE_PLAIN;
		TEST_ASSERT_EQ(cf_params_bytes(&p), sp.bytes, "case %u: "
			"cf_params_bytes, plain", i);
		cf_free(plain);
		cf_free(il);
	}
	return 0;
}

static int
test_reject_allocator_without_hooks(void)
{
	struct cf_allocator a = { 0 };

	return expect_einval((struct cf_params){ .capacity = 100,
		.allocator = &a });
}

static int
test_defaults_and_sizing(void)
{
	static const uint64_t caps[] = { 1, 3, 4, 100, 1000, 3932, 3933,
		1000000 };

	for (unsigned int k = 0; k < sizeof(caps) / sizeof(caps[0]); k++) {
		struct cf_params p;
		struct cf_stats st;
		struct cf_filter *f = cf_create(&(struct cf_params){
			.capacity = caps[k] });

		TEST_ASSERT(f != NULL, "create %lu", (unsigned long)caps[k]);
		cf_get_params(f, &p);
		TEST_ASSERT(p.fp_bits == 12 && p.bucket_slots == 4 &&
			p.max_kicks == 500 && p.table == CF_TABLE_PLAIN,
			"defaults not applied");
		cf_stats(f, &st);
		TEST_ASSERT((st.buckets & (st.buckets - 1)) == 0,
			"bucket count %lu", (unsigned long)st.buckets);
		/* Fits at <= 96%, and half the buckets would not. */
		TEST_ASSERT(caps[k] <= st.slots * 0.96 + 1e-9,
			"capacity %lu above 96%% of %lu slots",
			(unsigned long)caps[k], (unsigned long)st.slots);
		TEST_ASSERT(st.buckets == 1 ||
			caps[k] > st.slots / 2 * 0.96,
			"table oversized for %lu", (unsigned long)caps[k]);
		cf_free(f);
	}
	cf_free(NULL);
	return 0;
}

/* ---------------------------------------------------------- contract */

static int
test_bytes_api(void)
{
	struct cf_filter *f = cf_create(&(struct cf_params){
		.capacity = 1000, .fp_bits = 32, .seed = 42 });
	char key[32];

	TEST_ASSERT(f != NULL, "create");
	for (int i = 0; i < 500; i++) {
		int n = snprintf(key, sizeof(key), "flow-%d", i);

		TEST_ASSERT_EQ(cf_add(f, key, (size_t)n), 0, "add %d", i);
	}
	for (int i = 0; i < 500; i++) {
		int n = snprintf(key, sizeof(key), "flow-%d", i);

		TEST_ASSERT_EQ(cf_lookup(f, key, (size_t)n), 1, "lookup %d",
			i);
		TEST_ASSERT_EQ(cf_count(f, key, (size_t)n), 1u, "count %d", i);
		TEST_ASSERT_EQ(cf_add_unique(f, key, (size_t)n), -EEXIST,
			"add_unique of a present key");
	}
	for (int i = 0; i < 500; i++) {
		int n = snprintf(key, sizeof(key), "flow-%d", i);

		TEST_ASSERT_EQ(cf_delete(f, key, (size_t)n), 0, "delete %d",
			i);
	}
	TEST_ASSERT_EQ(items_of(f), 0u, "items left");
	TEST_ASSERT_EQ(cf_delete(f, "flow-1", 6), -ENOENT, "delete absent");
	TEST_ASSERT_EQ(cf_add_unique(f, "x", 1), 0, "add_unique absent");
	TEST_ASSERT_EQ(cf_hash(f, "x", 1), cf_hash(f, "x", 1), "hash");
	cf_free(f);
	return 0;
}

/* Exact multiset model: distinct hashes with their copy counts. */
struct model {
	uint64_t *hash;
	unsigned int *count;
	uint32_t n;
	uint64_t total;
};

static int
model_verify(const struct cf_filter *f, const struct model *m)
{
	for (uint32_t k = 0; k < m->n; k++) {
		if (m->count[k] == 0)
			continue;
		TEST_ASSERT(cf_lookup_with_hash(f, m->hash[k], NULL) == 1,
			"false negative for item %u", k);
		TEST_ASSERT(cf_count_with_hash(f, m->hash[k]) >= m->count[k],
			"item %u: %u copies stored, %u added", k,
			cf_count_with_hash(f, m->hash[k]), m->count[k]);
	}
	TEST_ASSERT_EQ(items_of(f), m->total, "items %lu, model %lu",
		(unsigned long)items_of(f), (unsigned long)m->total);
	return 0;
}

static int
model_run(const struct variant *v, uint64_t seed)
{
	enum { OPS = 16000, MAX_KEYS = OPS };
	struct model m = {
		.hash = calloc(MAX_KEYS, sizeof(uint64_t)),
		.count = calloc(MAX_KEYS, sizeof(unsigned int)),
	};
	struct cf_filter *f = make(v, 1500, seed);
	uint64_t rng = seed, nospc = 0;
	int ret = -1;

	if (f == NULL || m.hash == NULL || m.count == NULL)
		goto out;
	for (int op = 0; op < OPS; op++) {
		uint32_t r = (uint32_t)cfu_splitmix64(&rng) % 100;
		uint32_t k = m.n ? (uint32_t)(cfu_splitmix64(&rng) % m.n) : 0;

		if (r < 55 || m.n == 0) {
			/* A new item, or one more copy of a known one. */
			bool copy = r < 10 && m.n != 0;
			uint64_t h = copy ? m.hash[k] : cfu_splitmix64(&rng);
			int rc = cf_add_with_hash(f, h, 0, NULL);

			if (rc == 0) {
				if (!copy) {
					k = m.n++;
					m.hash[k] = h;
				}
				m.count[k]++;
				m.total++;
			} else {
				if (rc != -ENOSPC)
					goto out;
				/* Nothing stored may have been lost. */
				if (nospc++ % 64 == 0 &&
						model_verify(f, &m) != 0)
					goto out;
			}
		} else if (r < 85) {
			if (m.count[k] == 0)
				continue;
			if (cf_delete_with_hash(f, m.hash[k]) != 0) {
				printf("# delete of a stored item failed\n");
				goto out;
			}
			m.count[k]--;
			m.total--;
		} else if (m.count[k] != 0 &&
				cf_lookup_with_hash(f, m.hash[k], NULL) != 1) {
			printf("# false negative at op %d\n", op);
			goto out;
		}
		if (op % 2000 == 0 && model_verify(f, &m) != 0)
			goto out;
	}
	if (model_verify(f, &m) != 0)
		goto out;
	if (nospc == 0) {
		printf("# the run never filled the table\n");
		goto out;
	}
	/* Delete everything: every copy must be found, and nothing left. */
	for (uint32_t k = 0; k < m.n; k++)
		while (m.count[k] > 0) {
			if (cf_delete_with_hash(f, m.hash[k]) != 0) {
				printf("# copy %u of item %u missing\n",
					m.count[k], k);
				goto out;
			}
			m.count[k]--;
			m.total--;
		}
	if (items_of(f) != 0) {
		printf("# %lu items left after deleting all\n",
			(unsigned long)items_of(f));
		goto out;
	}
	ret = 0;
out:
	cf_free(f);
	free(m.hash);
	free(m.count);
	return ret;
}

/* Wide buckets of widths not compared as vectors (cf_slots_match()
 * slot by slot): against the model too. */
static int
test_model_wide_buckets(void)
{
	static const struct variant wide[] = {
		{ CF_TABLE_PLAIN, 20, 4, 16, false },
		{ CF_TABLE_PLAIN, 24, 8, 0, false },
		{ CF_TABLE_INTERLEAVED, 24, 4, 32, true },
	};

	for (unsigned int i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		for (uint64_t seed = 1; seed <= 2; seed++)
			TEST_ASSERT_EQ(model_run(&wide[i], seed), 0,
				"wide %u (f=%u, b=%u), seed %lu", i,
				wide[i].fp_bits, wide[i].slots,
				(unsigned long)seed);
	return 0;
}

static int
test_model_all_variants(void)
{
	for (unsigned int i = 0; i < NB_VARIANTS; i++)
		for (uint64_t seed = 1; seed <= 2; seed++)
			TEST_ASSERT_EQ(model_run(&variants[i], seed), 0,
				"variant %u (table %d, f=%u, b=%u), seed %lu",
				i, variants[i].table, variants[i].fp_bits,
				variants[i].slots, (unsigned long)seed);
	return 0;
}

/* Keep adding past every failure: the table stays exact and full. */
static int
test_overfill_keeps_items(void)
{
	for (unsigned int i = 0; i < NB_VARIANTS; i++) {
		struct cf_filter *f = make(&variants[i], 4000, 7);
		uint64_t *h = calloc(8192, sizeof(*h));
		uint64_t rng = 99, n = 0, fails = 0;
		struct cf_stats st;

		TEST_ASSERT(f != NULL && h != NULL, "alloc");
		for (int a = 0; a < 8192; a++) {
			uint64_t x = cfu_splitmix64(&rng);

			if (cf_add_with_hash(f, x, 0, NULL) == 0)
				h[n++] = x;
			else
				fails++;
		}
		cf_stats(f, &st);
		TEST_ASSERT(fails > 0 && st.stash_used == CF_STASH_SIZE,
			"variant %u: never full", i);
		TEST_ASSERT_EQ(st.items, n, "variant %u items", i);
		TEST_ASSERT_EQ(st.adds_failed, fails, "variant %u fails", i);
		for (uint64_t k = 0; k < n; k++)
			TEST_ASSERT(cf_lookup_with_hash(f, h[k], NULL),
				"variant %u: item %lu lost", i,
				(unsigned long)k);
		cf_free(f);
		free(h);
	}
	return 0;
}

/* --------------------------------------------------- paper's figures */

/* Load at the first insertion whose kick walk failed (paper Table 2). */
static double
first_failure_load(const struct variant *v, uint64_t seed)
{
	struct cf_filter *f = make(v, (uint64_t)((1u << 20) * 0.95), seed);
	uint64_t rng = seed, items = 0;
	struct cf_stats st;
	double load = 0;

	if (f == NULL)
		return 0;
	cf_stats(f, &st);
	for (;;) {
		uint32_t pos;

		if (cf_add_with_hash(f, cfu_splitmix64(&rng), 0, &pos) != 0 ||
				pos >= st.slots)
			break;
		items++;
	}
	load = (double)items / (double)st.slots;
	cf_free(f);
	return load;
}

static int
test_table2_first_failure(void)
{
	static const struct variant t2[] = {
		{ CF_TABLE_PLAIN, 8, 4, 0, false },
		{ CF_TABLE_PLAIN, 12, 4, 0, false },
		{ CF_TABLE_PLAIN, 16, 4, 0, false },
		{ CF_TABLE_SEMISORT, 13, 4, 0, false },
	};

	for (unsigned int i = 0; i < 4; i++) {
		double load = first_failure_load(&t2[i], 1234 + i);

		printf("# table %d f=%u: first failure at load %.4f\n",
			t2[i].table, t2[i].fp_bits, load);
		TEST_ASSERT(load >= 0.94, "first failure at %.4f < 0.94",
			load);
	}
	return 0;
}

/* Fill 2^18 slots to 95%, then count hits of hashes never added. */
static int
fpr_check(unsigned int fp_bits, uint64_t queries)
{
	struct variant v = { CF_TABLE_PLAIN, fp_bits, 4, 0, false };
	struct cf_filter *f = make(&v, (uint64_t)((1u << 18) * 0.95), 5);
	uint64_t rng = 1000 + fp_bits, qrng = 2000 + fp_bits, fp = 0;
	struct cf_stats st;
	double expected, measured;

	TEST_ASSERT(f != NULL, "create");
	cf_stats(f, &st);
	while (st.items < 0.95 * st.slots) {
		TEST_ASSERT_EQ(cf_add_with_hash(f, cfu_splitmix64(&rng), 0, NULL),
			0, "full before 95%% at %lu items",
			(unsigned long)st.items);
		st.items++;
	}
	cf_stats(f, &st);
	for (uint64_t q = 0; q < queries; q++)
		fp += cf_lookup_with_hash(f, cfu_splitmix64(&qrng), NULL);
	expected = 2.0 * 4 * st.load_factor / pow(2, fp_bits);
	measured = (double)fp / (double)queries;
	printf("# f=%u load %.4f: FPR %.6f%%, 2b*a/2^f %.6f%% (ratio %.3f)\n",
		fp_bits, st.load_factor, 100 * measured, 100 * expected,
		measured / expected);
	TEST_ASSERT(fabs(measured / expected - 1) <= 0.25,
		"FPR %.6g outside 25%% of %.6g", measured, expected);
	TEST_ASSERT(fabs(st.expected_fpr / expected - 1) <= 0.02,
		"cf_stats expected_fpr %.6g vs %.6g", st.expected_fpr,
		expected);
	cf_free(f);
	return 0;
}

static int
test_fpr_8(void)
{
	return fpr_check(8, 1000000);
}

static int
test_fpr_12(void)
{
	return fpr_check(12, 2000000);
}

static int
test_fpr_16(void)
{
	return fpr_check(16, 8000000);
}

/* --------------------------------------------------------- semisort */

static int
semisort_vs_plain(unsigned int fp_bits)
{
	struct variant vp = { CF_TABLE_PLAIN, fp_bits, 4, 0, false };
	struct variant vs = { CF_TABLE_SEMISORT, fp_bits, 4, 0, false };
	struct cf_filter *p = make(&vp, 15000, 3), *s = make(&vs, 15000, 3);
	uint64_t *h = calloc(20000, sizeof(*h));
	uint64_t rng = 77, qrng = 78, n = 0;
	struct cf_stats sp, ss;

	TEST_ASSERT(p != NULL && s != NULL && h != NULL, "create");
	/* Fill past the first failure, then delete a third. */
	for (int a = 0; a < 20000; a++) {
		uint64_t x = cfu_splitmix64(&rng);
		int rp = cf_add_with_hash(p, x, 0, NULL);

		TEST_ASSERT_EQ(cf_add_with_hash(s, x, 0, NULL), rp,
			"add %d differs", a);
		if (rp == 0)
			h[n++] = x;
	}
	for (uint64_t k = 0; k < n; k += 3)
		TEST_ASSERT(cf_delete_with_hash(p, h[k]) == 0 &&
			cf_delete_with_hash(s, h[k]) == 0, "delete %lu",
			(unsigned long)k);
	for (uint64_t k = 0; k < n; k++)
		TEST_ASSERT_EQ(cf_count_with_hash(p, h[k]),
			cf_count_with_hash(s, h[k]), "count %lu",
			(unsigned long)k);
	for (int q = 0; q < 1000000; q++) {
		uint64_t x = cfu_splitmix64(&qrng);

		TEST_ASSERT_EQ(cf_lookup_with_hash(p, x, NULL),
			cf_lookup_with_hash(s, x, NULL), "query %d", q);
	}
	cf_stats(p, &sp);
	cf_stats(s, &ss);
	TEST_ASSERT_EQ(sp.items, ss.items, "items");
	TEST_ASSERT_EQ(sp.buckets, ss.buckets, "buckets");
	/* One bit less per slot: 4 (f - 1) bits per bucket. */
	TEST_ASSERT_EQ((ss.table_bytes - 16) * 8, ss.buckets * 4 *
		(fp_bits - 1), "semi-sorted table bytes");
	TEST_ASSERT_EQ((sp.table_bytes - 16) * 8, sp.buckets * 4 * fp_bits,
		"plain table bytes");
	printf("# f=%u: %lu items, %.2f vs %.2f bits per item\n", fp_bits,
		(unsigned long)ss.items, ss.bits_per_item, sp.bits_per_item);
	cf_free(p);
	cf_free(s);
	free(h);
	return 0;
}

static int
test_semisort_equals_plain(void)
{
	static const unsigned int widths[] = { 5, 9, 13, 16 };

	for (unsigned int i = 0; i < 4; i++)
		TEST_ASSERT_EQ(semisort_vs_plain(widths[i]), 0, "f=%u",
			widths[i]);
	return 0;
}

/* -------------------------------------------------------- duplicates */

static int
test_duplicates(void)
{
	for (unsigned int i = 0; i < NB_VARIANTS; i++) {
		struct cf_filter *f = make(&variants[i], 1000, 11);
		unsigned int b = variants[i].slots;
		uint64_t h = 0x0123456789abcdefULL;

		TEST_ASSERT(f != NULL, "create");
		for (unsigned int c = 0; c < 2 * b; c++)
			TEST_ASSERT_EQ(cf_add_with_hash(f, h, 0, NULL), 0,
				"variant %u: copy %u", i, c);
		TEST_ASSERT_EQ(cf_count_with_hash(f, h), 2 * b, "count");
		TEST_ASSERT_EQ(cf_add_with_hash(f, h, 0, NULL), -ENOSPC,
			"variant %u: copy %u accepted", i, 2 * b);
		TEST_ASSERT_EQ(items_of(f), 2u * b, "items");
		for (unsigned int c = 2 * b; c > 0; c--) {
			TEST_ASSERT_EQ(cf_lookup_with_hash(f, h, NULL), 1,
				"lookup");
			TEST_ASSERT_EQ(cf_delete_with_hash(f, h), 0, "delete");
			TEST_ASSERT_EQ(cf_count_with_hash(f, h), c - 1,
				"count after delete");
		}
		TEST_ASSERT_EQ(cf_delete_with_hash(f, h), -ENOENT,
			"delete past zero");
		cf_free(f);
	}
	return 0;
}

/* -------------------------------------------------------------- bulk */

/* A filter past its first failure, so the stash is in use, and the
 * hashes it holds. */
static struct cf_filter *
full_filter(const struct variant *v, uint64_t *h, uint64_t *n)
{
	struct cf_filter *f = make(v, 3000, 21);
	uint64_t rng = 5;

	*n = 0;
	for (int a = 0; f != NULL && a < 4096; a++) {
		uint64_t x = cfu_splitmix64(&rng);

		if (cf_add_with_hash(f, x, *n + 1, NULL) == 0)
			h[(*n)++] = x;
	}
	return f;
}

/*
 * cf_params_save_size() bounds cf_save_size() without a filter: for every
 * variant, empty it is the saved size and a full stash's entries; full
 * (the stash full too) it is the saved size exactly. Refused parameters
 * give 0 with EINVAL.
 */
static int
test_params_save_size(void)
{
	for (unsigned int i = 0; i < NB_VARIANTS; i++) {
		const struct variant *v = &variants[i];
		struct cf_params p = {
			.capacity = 3000, .fp_bits = v->fp_bits,
			.bucket_slots = v->slots, .value_bits = v->value_bits,
			.table = v->table, .seed = 21,
			.exact_size = v->exact_size,
		};
		uint64_t bound = cf_params_save_size(&p), h[4096], n;
		struct cf_filter *f = make(v, 3000, 21);
		struct cf_stats st;

		TEST_ASSERT(f != NULL && bound != 0, "variant %u", i);
		TEST_ASSERT(cf_save_size(f) < bound && bound - cf_save_size(f)
			<= 64 * CF_STASH_SIZE, "variant %u: empty %zu, bound %lu",
			i, cf_save_size(f), (unsigned long)bound);
		cf_free(f);
		f = full_filter(v, h, &n);
		TEST_ASSERT(f != NULL, "variant %u: full", i);
		cf_stats(f, &st);
		TEST_ASSERT(cf_save_size(f) <= bound, "variant %u: full %zu, "
			"bound %lu", i, cf_save_size(f), (unsigned long)bound);
		if (st.stash_used == CF_STASH_SIZE)
			TEST_ASSERT_EQ(cf_save_size(f), bound, "variant %u", i);
		cf_free(f);
	}
	errno = 0;
	TEST_ASSERT_EQ(cf_params_save_size(&(struct cf_params){
		.capacity = 1000, .fp_bits = 33 }), 0, "fp_bits 33");
	TEST_ASSERT_EQ(errno, EINVAL, "errno %d", errno);
	TEST_ASSERT_EQ(cf_params_save_size(NULL), 0, "NULL");
	return 0;
}

/*
 * cf_prefetch_bulk() changes nothing: on tables large enough that it
 * prefetches (over 1 MiB), the saved bytes and every answer are the same
 * after prefetching any number of hashes, stored or not.
 */
static int
test_prefetch_changes_nothing(void)
{
	for (unsigned int i = 0; i < NB_VARIANTS; i++) {
		struct cf_filter *f = make(&variants[i], 1u << 21, 3);
		uint64_t rng = 11, h[4096];
		int64_t size;
		uint8_t *before, *after;

		TEST_ASSERT(f != NULL, "create");
		for (unsigned int k = 0; k < 4096; k++) {
			h[k] = cfu_splitmix64(&rng);
			TEST_ASSERT_EQ(cf_add_with_hash(f, h[k], k, NULL), 0,
				"add");
		}
		size = (int64_t)cf_save_size(f);
		TEST_ASSERT(size > (1 << 20), "variant %u: %ld bytes, too "
			"small to prefetch", i, (long)size);
		before = malloc((size_t)size);
		after = malloc((size_t)size);
		TEST_ASSERT(before != NULL && after != NULL, "malloc");
		TEST_ASSERT_EQ(cf_save_mem(f, before, (size_t)size), size,
			"save");
		cf_prefetch_bulk(f, h, 0);
		cf_prefetch_bulk(f, h, 1);
		cf_prefetch_bulk(f, h, 4096);
		for (unsigned int k = 0; k < 4096; k++)
			h[k] ^= cfu_splitmix64(&rng) & 1; /* some absent */
		cf_prefetch_bulk(f, h, 4096);
		TEST_ASSERT_EQ(cf_save_mem(f, after, (size_t)size), size,
			"save");
		TEST_ASSERT(memcmp(before, after, (size_t)size) == 0,
			"variant %u: the filter changed", i);
		free(before);
		free(after);
		cf_free(f);
	}
	return 0;
}

static int
test_bulk_lookup_equals_scalar(void)
{
	uint64_t h[4096], q[CF_BULK_MAX], rng = 8, n;

	for (unsigned int i = 0; i < NB_VARIANTS; i++) {
		struct cf_filter *f = full_filter(&variants[i], h, &n);
		struct cf_stats st;

		TEST_ASSERT(f != NULL, "create");
		cf_stats(f, &st);
		TEST_ASSERT(st.stash_used > 0, "variant %u: stash unused", i);
		for (unsigned int size = 1; size <= CF_BULK_MAX; size++) {
			uint32_t pos[CF_BULK_MAX], pos_v[CF_BULK_MAX];
			uint64_t mask, mask_v, vals[CF_BULK_MAX];
			int hits;

			for (unsigned int k = 0; k < size; k++)
				q[k] = cfu_splitmix64(&rng) & 1 ?
					h[cfu_splitmix64(&rng) % n] :
					cfu_splitmix64(&rng);
			hits = cf_lookup_bulk(f, q, size, &mask, pos);
			TEST_ASSERT_EQ(hits, __builtin_popcountll(mask),
				"hit count");
			TEST_ASSERT_EQ(cf_lookup_bulk_values(f, q, size,
				&mask_v, pos_v, vals), hits, "with values");
			TEST_ASSERT_EQ(mask_v, mask, "hits with values");
			for (unsigned int k = 0; k < size; k++) {
				uint32_t p1 = UINT32_MAX;
				int hit = cf_lookup_with_hash(f, q[k], &p1);

				TEST_ASSERT_EQ((int)((mask >> k) & 1), hit,
					"variant %u size %u key %u", i, size,
					k);
				/* without a position: the branch-free path */
				TEST_ASSERT_EQ(cf_lookup_with_hash(f, q[k],
					NULL), hit, "variant %u: membership "
					"alone", i);
				if (!hit)
					continue;
				TEST_ASSERT_EQ(pos[k], p1, "position");
				TEST_ASSERT(pos[k] < st.slots + st.stash_used,
					"position out of range");
				TEST_ASSERT_EQ(pos_v[k], p1, "position, "
					"with values");
				if (variants[i].value_bits != 0) {
					uint64_t val;

					TEST_ASSERT_EQ(cf_value_get(f, pos[k],
						&val), 0, "value at hit");
					TEST_ASSERT_EQ(vals[k], val, "value, "
						"%s", pos[k] >= st.slots ?
						"stash" : "table");
				} else {
					TEST_ASSERT_EQ(vals[k], 0, "no values");
				}
			}
			/* The positions are equal to scalar ones, and the
			 * stash hits are reported past the table slots. */
		}
		TEST_ASSERT_EQ(cf_lookup_bulk(f, q, 0, &(uint64_t){0}, NULL),
			-EINVAL, "n = 0");
		TEST_ASSERT_EQ(cf_lookup_bulk(f, q, CF_BULK_MAX + 1,
			&(uint64_t){0}, NULL), -EINVAL, "n = 65");
		cf_free(f);
	}
	return 0;
}

/* Bulk add and delete leave exactly the state that scalar calls do. */
static int
test_bulk_add_delete_equal_scalar(void)
{
	for (unsigned int i = 0; i < NB_VARIANTS; i++) {
		struct cf_filter *a = make(&variants[i], 2000, 4);
		struct cf_filter *b = make(&variants[i], 2000, 4);
		uint64_t rng = 31, h[CF_BULK_MAX], vals[CF_BULK_MAX];
		size_t size;
		uint8_t *sa, *sb;

		TEST_ASSERT(a != NULL && b != NULL, "create");
		for (unsigned int round = 0; round < 80; round++) {
			unsigned int n = 1 + round % CF_BULK_MAX;
			uint64_t mask, want = 0;
			int added;

			for (unsigned int k = 0; k < n; k++) {
				h[k] = cfu_splitmix64(&rng);
				vals[k] = round * 64 + k;
			}
			added = cf_add_bulk(a, h, vals, n, &mask);
			for (unsigned int k = 0; k < n; k++)
				if (cf_add_with_hash(b, h[k], vals[k],
						NULL) == 0)
					want |= UINT64_C(1) << k;
			TEST_ASSERT_EQ(mask, want, "variant %u round %u", i,
				round);
			TEST_ASSERT_EQ(added, __builtin_popcountll(want),
				"count");
			if (round % 3 == 0) {
				uint64_t dm, dw = 0;

				cf_delete_bulk(a, h, n, &dm);
				for (unsigned int k = 0; k < n; k++)
					if (cf_delete_with_hash(b, h[k]) == 0)
						dw |= UINT64_C(1) << k;
				TEST_ASSERT_EQ(dm, dw, "delete mask");
			}
		}
		size = cf_save_size(a);
		TEST_ASSERT_EQ(size, cf_save_size(b), "sizes");
		sa = malloc(size);
		sb = malloc(size);
		TEST_ASSERT(sa && sb, "alloc");
		cf_save_mem(a, sa, size);
		cf_save_mem(b, sb, size);
		TEST_ASSERT(memcmp(sa, sb, size) == 0,
			"variant %u: bulk and scalar states differ", i);
		free(sa);
		free(sb);
		cf_free(a);
		cf_free(b);
	}
	return 0;
}

/* ------------------------------------------------ values and positions */

/* cf_value_table(): a value written in place where its geometry says is
 * the slot's value, in the plain and interleaved layouts, for 8-, 16-
 * and 32-bit values (stash positions through cf_value_set()); -EINVAL
 * without values. */
static int
test_value_table(void)
{
	static const struct variant vv[] = {
		{ CF_TABLE_PLAIN, 16, 4, 16, true },
		{ CF_TABLE_PLAIN, 12, 4, 32, false },
		{ CF_TABLE_SEMISORT, 16, 4, 8, false },
		{ CF_TABLE_INTERLEAVED, 16, 4, 16, true },
		{ CF_TABLE_INTERLEAVED, 12, 4, 32, false },
		{ CF_TABLE_INTERLEAVED, 16, 8, 16, false },
		{ CF_TABLE_PLAIN, 16, 4, 0, false },
	};

	for (unsigned int i = 0; i < sizeof(vv) / sizeof(vv[0]); i++) {
		struct cf_filter *f = make(&vv[i], 500, 4);
		struct cf_value_table vt;
		uint64_t rng = 9, h[480], v;
		struct cf_stats st;
		uint32_t pos;

		TEST_ASSERT(f != NULL, "variant %u: create", i);
		cf_stats(f, &st);
		if (vv[i].value_bits == 0) {
			TEST_ASSERT_EQ(cf_value_table(f, &vt), -EINVAL,
				"no values");
			cf_free(f);
			continue;
		}
		TEST_ASSERT_EQ(cf_value_table(f, &vt), 0, "variant %u", i);
		TEST_ASSERT(vt.bytes * 8 >= vv[i].value_bits, "bytes");
		/* a full table: kicks and the stash */
		for (int k = 0; k < 480; k++) {
			h[k] = cfu_splitmix64(&rng);
			TEST_ASSERT_EQ(cf_add_with_hash(f, h[k], 1, NULL), 0,
				"add");
		}
		for (int k = 0; k < 480; k++) {
			uint64_t w = (uint64_t)(k * 40503 + 7) &
				((UINT64_C(1) << vv[i].value_bits) - 1);
			uint8_t w8 = (uint8_t)w;
			uint16_t w16 = (uint16_t)w;
			uint32_t w32 = (uint32_t)w;

			TEST_ASSERT_EQ(cf_lookup_with_hash(f, h[k], &pos), 1,
				"lookup");
			if (pos >= st.slots) {
				TEST_ASSERT_EQ(cf_value_set(f, pos, w), 0,
					"stash");
				continue;
			}
			memcpy(vt.base + (pos >> vt.shift) * vt.pitch +
				(pos & vt.slot_mask) * vt.step, vt.bytes == 1 ?
				(const void *)&w8 : vt.bytes == 2 ?
				(const void *)&w16 : (const void *)&w32,
				vt.bytes);
		}
		/* each value where it was written, none other changed */
		for (int k = 0; k < 480; k++) {
			TEST_ASSERT_EQ(cf_lookup_with_hash(f, h[k], &pos), 1,
				"lookup");
			TEST_ASSERT_EQ(cf_value_get(f, pos, &v), 0, "get");
			TEST_ASSERT_EQ(v, (uint64_t)(k * 40503 + 7) &
				((UINT64_C(1) << vv[i].value_bits) - 1),
				"variant %u item %d", i, k);
		}
		cf_free(f);
	}
	return 0;
}

static int
test_values_and_positions(void)
{
	static const struct variant vv[] = {
		{ CF_TABLE_PLAIN, 32, 4, 64, false },
		{ CF_TABLE_PLAIN, 16, 2, 16, false },
		{ CF_TABLE_SEMISORT, 16, 4, 32, false },
	};

	for (unsigned int i = 0; i < 3; i++) {
		struct cf_filter *f = make(&vv[i], 500, 2);
		uint64_t rng = 3, h[400], v;
		uint32_t pos;
		struct cf_stats st;

		TEST_ASSERT(f != NULL, "create");
		cf_stats(f, &st);
		for (int k = 0; k < 400; k++) {
			h[k] = cfu_splitmix64(&rng);
			TEST_ASSERT_EQ(cf_add_with_hash(f, h[k], 1000 + k,
				&pos), 0, "add");
			TEST_ASSERT_EQ(cf_value_get(f, pos, &v), 0, "get");
			TEST_ASSERT_EQ(v, (uint64_t)(1000 + k), "value at add");
		}
		/* Kicks moved values along with their fingerprints. */
		for (int k = 0; k < 400; k++) {
			TEST_ASSERT_EQ(cf_lookup_with_hash(f, h[k], &pos), 1,
				"lookup");
			TEST_ASSERT_EQ(cf_value_get(f, pos, &v), 0, "get");
			TEST_ASSERT_EQ(v, (uint64_t)(1000 + k),
				"variant %u item %d value", i, k);
			TEST_ASSERT_EQ(cf_value_set(f, pos, 7 * k), 0, "set");
		}
		for (int k = 0; k < 400; k++) {
			TEST_ASSERT_EQ(cf_lookup_with_hash(f, h[k], &pos), 1,
				"lookup");
			TEST_ASSERT_EQ(cf_value_get(f, pos, &v), 0, "get");
			TEST_ASSERT_EQ(v, (uint64_t)(7 * k) &
				(vv[i].value_bits == 64 ? UINT64_MAX :
				(UINT64_C(1) << vv[i].value_bits) - 1),
				"value after set");
			if (k % 2 == 0) {
				TEST_ASSERT_EQ(cf_delete_at(f, pos), 0,
					"delete_at");
				TEST_ASSERT_EQ(cf_count_with_hash(f, h[k]), 0u,
					"deleted item still counted");
			}
		}
		TEST_ASSERT_EQ(items_of(f), 200u, "items after delete_at");
		TEST_ASSERT_EQ(cf_value_get(f, (uint32_t)st.slots + 10, &v),
			-EINVAL, "position past the stash");
		TEST_ASSERT_EQ(cf_delete_at(f, UINT32_MAX), -EINVAL,
			"delete_at out of range");
		/* Find an empty slot: -ENOENT. */
		for (uint32_t p = 0; p < st.slots; p++)
			if (cf_value_get(f, p, &v) == -ENOENT) {
				TEST_ASSERT_EQ(cf_delete_at(f, p), -ENOENT,
					"delete_at empty slot");
				TEST_ASSERT_EQ(cf_value_set(f, p, 1), -ENOENT,
					"set on empty slot");
				break;
			}
		cf_free(f);
	}
	{
		struct cf_filter *f = cf_create(&(struct cf_params){
			.capacity = 10 });
		uint64_t v;
		uint32_t pos;

		TEST_ASSERT_EQ(cf_add_with_hash(f, 1, 5, &pos), 0, "add");
		TEST_ASSERT_EQ(cf_value_get(f, pos, &v), -EINVAL,
			"values on a filter without values");
		cf_free(f);
	}
	return 0;
}

/* ------------------------------------------------------------- scan */

struct scan_arg {
	uint64_t now;
	uint64_t visited;
};

static int
older_than(uint32_t pos, uint64_t value, void *arg)
{
	struct scan_arg *a = arg;

	(void)pos;
	a->visited++;
	return value < a->now;
}

static int
test_scan_incremental(void)
{
	for (unsigned int i = 0; i < NB_VARIANTS; i++) {
		struct variant v = variants[i];
		struct cf_filter *f;
		uint64_t rng = 17, h[4096], n = 0, cursor = 0, deleted = 0;
		struct scan_arg arg = { .now = 500 };
		struct cf_stats st;

		v.value_bits = 32;
		f = make(&v, 3000, 9);
		TEST_ASSERT(f != NULL, "create");
		/* Past the first failure, so the stash is scanned too. */
		for (int a = 0; a < 4096; a++) {
			uint64_t x = cfu_splitmix64(&rng);

			if (cf_add_with_hash(f, x, (uint64_t)a % 1000,
					NULL) == 0)
				h[n++] = x;
		}
		cf_stats(f, &st);
		TEST_ASSERT(st.stash_used > 0, "stash unused");
		/* Bounded steps of 7 buckets until one full pass. */
		for (uint64_t done = 0; done < st.buckets; done += 7) {
			uint64_t before = cursor;

			deleted += cf_scan(f, &cursor, 7, older_than, &arg);
			TEST_ASSERT(cursor == (before + 7) % st.buckets ||
				(before + 7 >= st.buckets && cursor ==
				(before + 7) - st.buckets), "cursor");
		}
		/* Re-homing the stash may kick an item into a bucket the
		 * pass had visited: the next pass gets it. */
		deleted += cf_scan(f, &cursor, st.buckets, older_than, &arg);
		TEST_ASSERT(arg.visited >= st.items, "visited %lu of %lu",
			(unsigned long)arg.visited, (unsigned long)st.items);
		for (uint64_t k = 0; k < n; k++) {
			uint32_t pos;
			uint64_t val;

			if (!cf_lookup_with_hash(f, h[k], &pos))
				continue;
			TEST_ASSERT_EQ(cf_value_get(f, pos, &val), 0, "get");
			TEST_ASSERT(val >= 500, "item with value %lu survived",
				(unsigned long)val);
		}
		TEST_ASSERT_EQ(items_of(f), st.items - deleted, "items");
		cf_free(f);
	}
	return 0;
}

/* Every item (position and value), in and out of the stash. */
struct census {
	uint32_t n;
	uint32_t pos[8192];
	uint64_t value[8192];
	bool keep_all;   /* select every item passed */
};

static uint64_t
census_batch(uint32_t first, const uint64_t *values, uint64_t used,
		unsigned int n, void *arg)
{
	struct census *c = arg;

	(void)n;
	for (uint64_t m = used; m != 0; m &= m - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(m);

		if (c->n < 8192) {
			c->pos[c->n] = first + k;
			c->value[c->n] = values[k];
		}
		c->n++;
	}
	return c->keep_all ? used : 0;
}

static bool
is_due(const struct cf_scan_due *d, uint64_t v)
{
	uint64_t mask = (UINT64_C(1) << d->bits) - 1;
	uint64_t age = (d->now - (v >> d->shift)) & mask;
	uint64_t max = d->max_age != 0 ? d->max_age : mask;

	return age > d->min_age && age <= max;
}

/* cf_scan_due() passes exactly the due items, whatever the layout, value
 * width and window (wrapping ages, a bound above), and deletes what its
 * callback selects of them. */
static int
test_scan_due(void)
{
	static struct census all, seen;
	uint64_t rng = 99;
	unsigned int stashed = 0;

	for (unsigned int i = 0; i < NB_VARIANTS; i++) {
		struct variant v = variants[i];
		struct cf_filter *f;
		struct cf_stats st;

		/* 8 slots of 8/8: the 8-lane gathers */
		if (v.value_bits == 0)
			v.value_bits = v.slots != 8 ? 32 : v.fp_bits == 8 ? 8 :
				16;
		f = make(&v, 1500, 5 + i);
		TEST_ASSERT(f != NULL, "create");
		for (int a = 0; a < 2000; a++)
			(void)cf_add_with_hash(f, cfu_splitmix64(&rng),
				cfu_splitmix64(&rng), NULL);
		cf_stats(f, &st);
		stashed += st.stash_used > 0;
		for (int r = 0; r < 40; r++) {
			struct cf_scan_due d = { 0 };
			uint64_t cursor = 0, mask, expect = 0;
			int64_t del;

			d.bits = 1 + (unsigned int)(cfu_splitmix64(&rng) %
				(v.value_bits < 63 ? v.value_bits : 63));
			d.shift = (unsigned int)(cfu_splitmix64(&rng) %
				(v.value_bits - d.bits + 1));
			mask = (UINT64_C(1) << d.bits) - 1;
			if (mask < 2)
				d.bits = 2, d.shift = 0, mask = 3;
			d.now = cfu_splitmix64(&rng);
			d.min_age = cfu_splitmix64(&rng) % mask;
			if (r % 3 == 0)
				d.max_age = d.min_age + 1 +
					cfu_splitmix64(&rng) %
					(mask - d.min_age);
			all.n = seen.n = 0;
			all.keep_all = seen.keep_all = false;
			TEST_ASSERT_EQ(cf_scan_batch(f, &cursor, st.buckets,
				census_batch, &all), 0, "census deleted");
			TEST_ASSERT_EQ(all.n, items_of(f), "census");
			TEST_ASSERT_EQ(cf_scan_due(f, &cursor, st.buckets, &d,
				census_batch, &seen), 0, "deleted");
			/* Both passes visit in position order. */
			for (uint32_t k = 0, j = 0; k < all.n; k++) {
				if (!is_due(&d, all.value[k]))
					continue;
				TEST_ASSERT(j < seen.n && seen.pos[j] ==
					all.pos[k] && seen.value[j] ==
					all.value[k], "variant %u shift %u bits "
					"%u now %lu min %lu max %lu: due item "
					"%u (value %lx) not passed", i,
					d.shift, d.bits, (unsigned long)d.now,
					(unsigned long)d.min_age,
					(unsigned long)d.max_age, all.pos[k],
					(unsigned long)all.value[k]);
				j++;
				expect++;
			}
			TEST_ASSERT_EQ(seen.n, expect, "variant %u: %u passed, "
				"%lu due", i, seen.n, (unsigned long)expect);
			if (r != 39)
				continue;
			/* Delete the due items; none is left, the rest is. */
			seen.keep_all = true;
			seen.n = 0;
			del = cf_scan_due(f, &cursor, st.buckets, &d,
				census_batch, &seen);
			TEST_ASSERT_EQ((uint64_t)del, expect, "deleted");
			all.n = 0;
			TEST_ASSERT_EQ(cf_scan_batch(f, &cursor, st.buckets,
				census_batch, &all), 0, "census");
			TEST_ASSERT_EQ(all.n, st.items - expect, "left");
			for (uint32_t k = 0; k < all.n; k++)
				TEST_ASSERT(!is_due(&d, all.value[k]),
					"due item left");
		}
		cf_free(f);
	}
	TEST_ASSERT(stashed >= NB_VARIANTS / 2, "stash used in %u variants",
		stashed);
	return 0;
}

/* Refusals: no values, a stamp out of the value, an empty window. */
static int
test_scan_due_einval(void)
{
	struct variant v = { CF_TABLE_PLAIN, 16, 4, 16, false };
	struct cf_scan_due ok = { .shift = 3, .bits = 13, .min_age = 10 };
	struct cf_scan_due bad[] = {
		{ .shift = 3, .bits = 0 },
		{ .shift = 3, .bits = 14 },
		{ .shift = 0, .bits = 17 },
		{ .shift = UINT32_MAX, .bits = 2 }, /* a sum that wraps */
		{ .shift = 3, .bits = 13, .min_age = 8191 },
		{ .shift = 3, .bits = 13, .min_age = 10, .max_age = 10 },
		{ .shift = 3, .bits = 13, .min_age = 10, .max_age = 8192 },
	};
	struct census c = { 0 };
	struct cf_filter *f = make(&v, 100, 1);
	uint64_t cursor = 0;

	TEST_ASSERT(f != NULL, "create");
	TEST_ASSERT_EQ(cf_scan_due(f, &cursor, 1, &ok, census_batch, &c), 0,
		"valid test");
	for (unsigned int k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		errno = 0;
		TEST_ASSERT_EQ(cf_scan_due(f, &cursor, 1, &bad[k],
			census_batch, &c), -EINVAL, "case %u", k);
		TEST_ASSERT_EQ(errno, EINVAL, "errno");
	}
	TEST_ASSERT_EQ(cf_scan_due(f, &cursor, 1, NULL, census_batch, &c),
		-EINVAL, "NULL");
	cf_free(f);
	v.value_bits = 0;
	f = make(&v, 100, 1);
	TEST_ASSERT(f != NULL, "create");
	TEST_ASSERT_EQ(cf_scan_due(f, &cursor, 1, &ok, census_batch, &c),
		-EINVAL, "no values");
	cf_free(f);
	return 0;
}

/* -------------------------------------------------- memory and clear */

struct alloc_count {
	int allocs, frees, socket;
};

static void *
count_alloc(size_t size, size_t align, int socket_id, void *ctx)
{
	struct alloc_count *c = ctx;
	void *p;

	c->allocs++;
	c->socket = socket_id;
	if (posix_memalign(&p, align, size) != 0)
		return NULL;
	return memset(p, 0, size);
}

static void
count_free(void *ptr, size_t size, void *ctx)
{
	struct alloc_count *c = ctx;

	(void)size;
	c->frees++;
	free(ptr);
}

static void *
fail_alloc(size_t size, size_t align, int socket_id, void *ctx)
{
	(void)size;
	(void)align;
	(void)socket_id;
	(void)ctx;
	return NULL;
}

static int
test_allocator_hooks(void)
{
	struct alloc_count c = { 0 };
	struct cf_allocator a = { count_alloc, count_free, &c };
	struct cf_allocator bad = { fail_alloc, count_free, &c };
	struct cf_filter *f = cf_create(&(struct cf_params){
		.capacity = 1000, .value_bits = 8, .socket_id = 1,
		.allocator = &a });

	TEST_ASSERT(f != NULL, "create");
	TEST_ASSERT(c.allocs == 4 && c.socket == 1, "allocs %d socket %d",
		c.allocs, c.socket);
	cf_free(f);
	TEST_ASSERT_EQ(c.frees, c.allocs, "leak");
	errno = 0;
	TEST_ASSERT(cf_create(&(struct cf_params){ .capacity = 1000,
		.allocator = &bad }) == NULL && errno == ENOMEM,
		"allocation failure not reported");
	return 0;
}

static int
test_clear(void)
{
	struct cf_filter *f = cf_create(&(struct cf_params){
		.capacity = 1000 });
	uint64_t rng = 1, h[900];
	struct cf_stats st;

	for (int k = 0; k < 900; k++) {
		h[k] = cfu_splitmix64(&rng);
		TEST_ASSERT_EQ(cf_add_with_hash(f, h[k], 0, NULL), 0, "add");
	}
	cf_stats(f, &st);
	TEST_ASSERT(st.load_factor == 900.0 / st.slots &&
		st.bits_per_item == (double)st.table_bytes * 8 / 900 &&
		st.expected_fpr > 0, "stats");
	cf_clear(f);
	cf_stats(f, &st);
	TEST_ASSERT(st.items == 0 && st.kicks_total == 0 &&
		st.load_factor == 0, "not cleared");
	for (int k = 0; k < 900; k++)
		TEST_ASSERT_EQ(cf_count_with_hash(f, h[k]), 0u, "left over");
	cf_free(f);
	return 0;
}

/* While cf_relocations() is unchanged, every position a lookup gave
 * still holds its item: adds into free slots and deletes move nothing;
 * kicks, stash moves and re-sorts change the count. */
static int
test_relocations(void)
{
	static const struct variant vs[] = {
		{ CF_TABLE_PLAIN, 32, 4, 16, false },
		{ CF_TABLE_PLAIN, 32, 4, 16, true },
		{ CF_TABLE_SEMISORT, 16, 4, 16, false },
	};
	static uint64_t h[4200];
	static uint32_t pos[4200];

	for (unsigned int i = 0; i < 3; i++) {
		struct cf_filter *f = make(&vs[i], 3000, 9);
		uint64_t rng = 3, r, changes = 0;
		unsigned int n = 0;

		TEST_ASSERT(f != NULL, "create");
		r = cf_relocations(f);
		for (int a = 0; a < 4200; a++) {
			uint64_t x = cfu_splitmix64(&rng);

			/* Now and then delete the oldest item instead. */
			if (a % 5 == 4 && n > 0) {
				TEST_ASSERT_EQ(cf_delete_with_hash(f, h[0]), 0,
					"delete");
				h[0] = h[--n];
				pos[0] = pos[n];
			} else if (cf_add_with_hash(f, x, 1, &pos[n]) == 0) {
				h[n++] = x;
			}
			if (cf_relocations(f) != r) {
				r = cf_relocations(f);
				changes++;
				for (unsigned int k = 0; k < n; k++)
					TEST_ASSERT(cf_lookup_with_hash(f, h[k],
						&pos[k]), "item lost");
				continue;
			}
			for (unsigned int k = 0; k < n; k++) {
				uint32_t p;

				TEST_ASSERT(cf_lookup_with_hash(f, h[k], &p) &&
					p == pos[k], "variant %u, add %d: item "
					"%u moved from %u to %u, count "
					"unchanged", i, a, k, pos[k], p);
			}
		}
		TEST_ASSERT(changes > 0, "variant %u: nothing ever moved", i);
		cf_free(f);
	}
	return 0;
}


/* ------------------------------------------------- the largest tables */

/* The hash whose bucket is @p bucket (power-of-two tables) and whose
 * fingerprint is @p fp, by the documented split (docs/design.md). */
static uint64_t
hash_at(uint64_t bucket, uint32_t fp, unsigned int fp_bits)
{
	uint64_t range = (UINT64_C(1) << fp_bits) - 1;
	uint64_t low = (((uint64_t)(fp - 1) << 32) + range - 1) / range;

	return bucket << 32 | low;
}

/* The alternate bucket of (i, fp) on a power-of-two table. */
static uint64_t
alt_of(uint64_t i, uint32_t fp, uint64_t buckets)
{
	uint64_t mix = (uint64_t)fp * UINT64_C(0x9e3779b97f4a7c15);

	return (i ^ (mix >> 32)) & (buckets - 1);
}

/*
 * Add, look up (one and bulk), read, write, list and delete items in the
 * highest bucket and in the stash of a filter of 4-bit fingerprints and
 * 16-bit values created with max_kicks 1: every position must be the one
 * the documented layout gives, and every value the one stored.
 */
static int
top_positions(struct cf_filter *f)
{
	struct cf_stats st;
	uint64_t top, bx, by, hx, hy, v, hit, values[1];
	uint32_t pos, p2, list[16];
	unsigned int n, fx = 3, fy = 11;
	bool listed = false;

	cf_stats(f, &st);
	top = st.buckets - 1;
	bx = alt_of(top, fx, st.buckets);
	by = alt_of(top, fy, st.buckets);
	TEST_ASSERT(bx != top && by != top && bx != by, "pick other fps");
	hx = hash_at(top, fx, 4);
	hy = hash_at(top, fy, 4);

	/* One item in the last bucket. */
	TEST_ASSERT_EQ(cf_add_with_hash(f, hx, 0xbeef, &pos), 0, "add");
	TEST_ASSERT(pos >= top * 4 && pos < st.slots, "position %u, last "
		"bucket starts at %lu", pos, (unsigned long)(top * 4));
	TEST_ASSERT(cf_lookup_with_hash(f, hx, &p2) && p2 == pos, "lookup");
	TEST_ASSERT(cf_lookup_bulk_values(f, &hx, 1, &hit, &p2, values) == 1 &&
		p2 == pos && values[0] == 0xbeef, "bulk: pos %u value %lx",
		p2, (unsigned long)values[0]);
	TEST_ASSERT(cf_value_get(f, pos, &v) == 0 && v == 0xbeef, "get");
	TEST_ASSERT(cf_value_set(f, pos, 0x1234) == 0 &&
		cf_value_get(f, pos, &v) == 0 && v == 0x1234, "set");
	n = cf_bucket_positions(f, hx, list);
	for (unsigned int k = 0; k < n; k++)
		listed |= list[k] == pos;
	TEST_ASSERT(n == 1 && listed, "bucket positions");
	TEST_ASSERT_EQ(cf_delete_at(f, pos), 0, "delete_at");
	TEST_ASSERT_EQ(cf_lookup_with_hash(f, hx, NULL), 0, "deleted");

	/*
	 * Into the stash: the last bucket and bx full of fp x, by full of
	 * fp y. An item (last bucket, y) then has both buckets full, and a
	 * walk of one kick moves an x or a y into another full bucket.
	 */
	for (int k = 0; k < 4; k++) {
		TEST_ASSERT_EQ(cf_add_with_hash(f, hx, 1, NULL), 0, "fill");
		TEST_ASSERT_EQ(cf_add_with_hash(f, hash_at(bx, fx, 4), 2,
			NULL), 0, "fill");
		TEST_ASSERT_EQ(cf_add_with_hash(f, hash_at(by, fy, 4), 3,
			NULL), 0, "fill");
	}
	TEST_ASSERT_EQ(cf_add_with_hash(f, hy, 0x5eed, &pos), 0, "to stash");
	cf_stats(f, &st);
	TEST_ASSERT(st.stash_used == 1 && pos == st.slots, "stash position "
		"%u, want %lu", pos, (unsigned long)st.slots);
	TEST_ASSERT(cf_lookup_bulk_values(f, &hy, 1, &hit, &p2, values) == 1,
		"bulk");
	TEST_ASSERT(cf_value_get(f, pos, &v) == 0 && v == 0x5eed, "get");
	TEST_ASSERT(cf_value_set(f, pos, 0x77) == 0 &&
		cf_value_get(f, pos, &v) == 0 && v == 0x77, "set");
	TEST_ASSERT_EQ(cf_count_with_hash(f, hy), 5u, "count");
	TEST_ASSERT_EQ(cf_delete_at(f, pos), 0, "delete_at stash");
	cf_stats(f, &st);
	TEST_ASSERT(st.stash_used == 0 && st.items == 12, "after delete: "
		"stash %lu items %lu", (unsigned long)st.stash_used,
		(unsigned long)st.items);
	TEST_ASSERT_EQ(cf_value_get(f, pos, &v), -EINVAL, "stash emptied");
	return 0;
}

/*
 * Capacities that round up to 2^32 slots (2 061 584 303 and above) used
 * to be accepted with 32-bit positions that wrap: cf_lookup_bulk_values
 * read a hit as a stash entry far past the stash. Now they are refused,
 * and the largest accepted table works up to its last position.
 */
static int
test_largest_table(void)
{
	static const uint64_t caps[] = { UINT64_C(2147483648),
		UINT64_C(2061584303), CF_MAX_CAPACITY };
	double rss0 = rss_mib();

	for (unsigned int k = 0; k < 3; k++) {
		struct cf_filter *f;

		errno = 0;
		f = cf_create(&(struct cf_params){ .capacity = caps[k],
			.fp_bits = 4, .value_bits = 16, .max_kicks = 1,
			.seed = 1, .allocator = &lazy });
		if (f == NULL) {
			TEST_ASSERT(errno == EINVAL &&
				caps[k] > CF_MAX_CAPACITY, "capacity %lu: "
				"errno %d", (unsigned long)caps[k], errno);
			continue;
		}
		/* Accepted: it must work at its top positions. */
		TEST_ASSERT_EQ(top_positions(f), 0, "capacity %lu",
			(unsigned long)caps[k]);
		cf_free(f);
		TEST_ASSERT(caps[k] <= CF_MAX_CAPACITY, "capacity %lu above "
			"CF_MAX_CAPACITY accepted", (unsigned long)caps[k]);
	}
	/* Every layout and sizing: at most 2^31 slots at the limit, EINVAL
	 * one item above it. */
	for (unsigned int b = 2; b <= 8; b *= 2)
		for (int exact = 0; exact < 2; exact++) {
			struct cf_params p = { .capacity = CF_MAX_CAPACITY,
				.fp_bits = 4, .bucket_slots = b,
				.exact_size = exact, .allocator = &lazy };
			struct cf_filter *f = cf_create(&p);
			struct cf_stats st;

			TEST_ASSERT(f != NULL, "b=%u exact=%d: errno %d", b,
				exact, errno);
			cf_stats(f, &st);
			TEST_ASSERT(st.slots <= CF_MAX_TABLE_SLOTS &&
				st.slots * 0.96 >= CF_MAX_CAPACITY,
				"b=%u exact=%d: %lu slots", b, exact,
				(unsigned long)st.slots);
			cf_free(f);
			p.capacity++;
			TEST_ASSERT_EQ(expect_einval(p), 0, "b=%u exact=%d", b,
				exact);
		}
	printf("# resident set: %.1f MiB before, %.1f MiB after\n", rss0,
		rss_mib());
	TEST_ASSERT(rss_mib() < rss0 + 64, "resident set grew from %.1f to "
		"%.1f MiB", rss0, rss_mib());
	return 0;
}

/* -------------------------------------------------- full-table flood */

static uint64_t
kick_steps(const struct cf_filter *f)
{
	struct cf_stats st;

	cf_stats(f, &st);
	return st.kicks_total + st.kicks_failed;
}

/* Stored hashes, every one of which must be found. */
static int
all_found(const struct cf_filter *f, const uint64_t *h, uint64_t n,
		const char *when)
{
	for (uint64_t k = 0; k < n; k++)
		TEST_ASSERT(cf_lookup_with_hash(f, h[k], NULL), "%s: item %lu "
			"of %lu lost", when, (unsigned long)k,
			(unsigned long)n);
	TEST_ASSERT_EQ(items_of(f), n, "%s: item count", when);
	return 0;
}

/*
 * A flood of new items against a full table (a SYN flood): once a walk
 * has failed with the stash full, adds make no walk (kick steps and
 * cf_relocations() stay put), and fail at once or go into a free slot of
 * their two buckets; churn at the limit (delete one, add one, as a
 * tracker evicts) walks no more either. Every stored item is found
 * throughout. Deletes that take the table below its limit bring walks
 * back, and refilling it reaches the paper's load again before its next
 * failed walk.
 */
static int
test_flood_full_table(void)
{
	static const struct variant fv[] = {
		{ CF_TABLE_PLAIN, 12, 4, 16, false },
		{ CF_TABLE_PLAIN, 16, 4, 16, true },
		{ CF_TABLE_SEMISORT, 13, 4, 0, false },
		{ CF_TABLE_PLAIN, 16, 2, 0, false },
		{ CF_TABLE_PLAIN, 8, 8, 8, false },
	};
	enum { FLOOD = 20000 };

	for (unsigned int i = 0; i < sizeof(fv) / sizeof(fv[0]); i++) {
		struct cf_filter *f = make(&fv[i], 15000, 11 + i);
		uint64_t *h = calloc(40000, sizeof(*h));
		uint64_t rng = 100 + i, n = 0, steps, reloc, failed;
		uint64_t fail_items = 0, limit;
		struct cf_stats st;
		double refill;

		TEST_ASSERT(f != NULL && h != NULL, "alloc");
		/* Fill until it turns items away with its stash full. */
		for (int a = 0; a < 40000; a++) {
			uint64_t x = cfu_splitmix64(&rng);

			if (cf_add_with_hash(f, x, 1, NULL) == 0)
				h[n++] = x;
			cf_stats(f, &st);
			/* The limit: a failed walk with the stash full. */
			if (st.adds_failed != 0 && fail_items == 0)
				fail_items = st.items - st.stash_used;
			if (st.adds_failed >= 64)
				break;
		}
		TEST_ASSERT(st.saturated && st.stash_used == CF_STASH_SIZE,
			"variant %u: not at its limit at load %.4f", i,
			st.load_factor);
		TEST_ASSERT_EQ(all_found(f, h, n, "filled"), 0, "variant %u",
			i);

		/* The flood: no walk, nothing moved. */
		steps = kick_steps(f);
		reloc = cf_relocations(f);
		failed = st.adds_failed;
		for (int a = 0; a < FLOOD; a++) {
			uint64_t x = cfu_splitmix64(&rng);

			if (cf_add_with_hash(f, x, 2, NULL) == 0)
				h[n++] = x;
		}
		cf_stats(f, &st);
		printf("# variant %u: load %.4f, flood of %d: %lu added, "
			"%lu kick steps, %lu relocations, %lu walks "
			"skipped\n", i, st.load_factor, FLOOD,
			(unsigned long)(FLOOD - (st.adds_failed - failed)),
			(unsigned long)(kick_steps(f) - steps),
			(unsigned long)(cf_relocations(f) - reloc),
			(unsigned long)st.walks_skipped);
		/* (Semi-sorted buckets re-sort, hence relocate, on every
		 * write.) */
		TEST_ASSERT(kick_steps(f) == steps &&
			(fv[i].table == CF_TABLE_SEMISORT ||
			cf_relocations(f) == reloc),
			"variant %u: the flood walked: %lu kick steps, %lu "
			"relocations", i,
			(unsigned long)(kick_steps(f) - steps),
			(unsigned long)(cf_relocations(f) - reloc));
		TEST_ASSERT(st.walks_skipped >= st.adds_failed - failed &&
			st.adds_failed - failed > FLOOD / 4, "variant %u: "
			"skipped %lu, failed %lu", i,
			(unsigned long)st.walks_skipped,
			(unsigned long)(st.adds_failed - failed));
		TEST_ASSERT_EQ(all_found(f, h, n, "flood"), 0, "variant %u", i);

		/* Churn at the limit, as a tracker evicts: delete one item,
		 * add a new one whose first bucket is the one the deleted
		 * item was in, so that it fits (in the emptied slot, or in
		 * the stash if a stash item took the slot). No walk. */
		steps = kick_steps(f);
		for (int a = 0; a < FLOOD; a++) {
			uint64_t k = cfu_splitmix64(&rng) % n, b, x;
			uint32_t pos;

			TEST_ASSERT(cf_lookup_with_hash(f, h[k], &pos), "find");
			b = pos < st.slots ? pos / fv[i].slots : 0;
			/* The high half that indexes bucket b. */
			b = fv[i].exact_size ? ((b << 32) + st.buckets - 1) /
				st.buckets : b;
			x = b << 32 | (cfu_splitmix64(&rng) & UINT32_MAX);
			TEST_ASSERT_EQ(cf_delete_with_hash(f, h[k]), 0,
				"delete");
			h[k] = h[--n];
			TEST_ASSERT_EQ(cf_add_with_hash(f, x, 3, NULL), 0,
				"variant %u: add after delete", i);
			h[n++] = x;
		}
		cf_stats(f, &st);
		TEST_ASSERT(kick_steps(f) == steps && st.saturated,
			"variant %u: churn walked %lu kick steps", i,
			(unsigned long)(kick_steps(f) - steps));
		TEST_ASSERT_EQ(all_found(f, h, n, "churn"), 0, "variant %u", i);

		/* Deletes: at the documented limit below the count the walk
		 * failed at, walks again, and the refill reaches the
		 * first-failure load again. */
		limit = fail_items - (fail_items / 16 < 500 ? fail_items / 16 :
			500);
		for (;;) {
			uint64_t k = cfu_splitmix64(&rng) % n, prev;

			prev = st.items - st.stash_used;
			TEST_ASSERT_EQ(cf_delete_with_hash(f, h[k]), 0,
				"delete");
			h[k] = h[--n];
			cf_stats(f, &st);
			/* Leaving, the stash items walk back in. */
			if (!st.saturated) {
				TEST_ASSERT(prev == limit && st.stash_used == 0,
					"variant %u: left at %lu items, limit "
					"%lu", i, (unsigned long)prev,
					(unsigned long)limit);
				break;
			}
			TEST_ASSERT(st.items - st.stash_used >= limit,
				"variant %u: saturated at %lu items, limit %lu",
				i, (unsigned long)(st.items - st.stash_used),
				(unsigned long)limit);
		}
		steps = st.kicks_total;
		failed = st.kicks_failed;
		while (st.kicks_failed == failed) {
			uint64_t x = cfu_splitmix64(&rng);

			TEST_ASSERT(n < 40000, "never failed");
			if (cf_add_with_hash(f, x, 4, NULL) == 0)
				h[n++] = x;
			cf_stats(f, &st);
		}
		refill = (double)(st.items - st.stash_used) / (double)st.slots;
		printf("# variant %u: refilled to %.4f before a walk failed "
			"(%lu kicks)\n", i, refill,
			(unsigned long)(st.kicks_total - steps));
		TEST_ASSERT(st.kicks_total > steps, "variant %u: no walk", i);
		TEST_ASSERT(refill >= (fv[i].slots == 2 ? 0.80 :
			fv[i].slots == 4 ? 0.93 : 0.97), "variant %u: a walk "
			"failed at %.4f", i, refill);
		TEST_ASSERT_EQ(all_found(f, h, n, "refill"), 0, "variant %u",
			i);
		cf_free(f);
		free(h);
	}
	return 0;
}

/* cf_bucket_entries: cf_bucket_positions with the values, for every
 * layout. */
static int
test_bucket_entries(void)
{
	for (unsigned int i = 0; i < NB_VARIANTS; i++) {
		struct variant v = variants[i];
		struct cf_filter *f;
		uint64_t rng = 5;

		v.value_bits = v.value_bits ? v.value_bits : 8;
		f = make(&v, 2000, 3);
		TEST_ASSERT(f != NULL, "create");
		for (int a = 0; a < 1900; a++)
			cf_add_with_hash(f, cfu_splitmix64(&rng), (uint64_t)a, NULL);
		for (int q = 0; q < 2000; q++) {
			uint64_t h = cfu_splitmix64(&rng), values[16], x;
			uint32_t pos[16], pos2[16];
			unsigned int n = cf_bucket_entries(f, h, pos, values);

			TEST_ASSERT_EQ(cf_bucket_positions(f, h, pos2), n,
				"variant %u: count", i);
			for (unsigned int k = 0; k < n; k++) {
				TEST_ASSERT(pos[k] == pos2[k] &&
					cf_value_get(f, pos[k], &x) == 0 &&
					x == values[k], "variant %u: entry %u",
					i, k);
			}
			TEST_ASSERT_EQ(cf_bucket_entries(f, h, pos2, NULL), n,
				"variant %u: without values", i);
		}
		cf_free(f);
	}
	return 0;
}

/*
 * A table sized exactly for its capacity (96% load) takes that many
 * items, and more: until its first -ENOSPC every add walks, the stash
 * absorbing failed walks as it did before there was a load limit; the
 * limit comes with the first failed walk that finds the stash full,
 * after exactly CF_STASH_SIZE + 1 failed walks.
 */
static int
test_capacity_reached(void)
{
	static const struct variant cv[] = {
		{ CF_TABLE_PLAIN, 12, 4, 0, true },
		{ CF_TABLE_PLAIN, 16, 4, 16, true },
		{ CF_TABLE_SEMISORT, 13, 4, 0, true },
		{ CF_TABLE_PLAIN, 8, 8, 0, true },
	};

	for (unsigned int i = 0; i < sizeof(cv) / sizeof(cv[0]); i++)
		for (uint64_t seed = 1; seed <= 4; seed++) {
			struct cf_filter *f = make(&cv[i], 100000, seed);
			uint64_t rng = seed * 1000 + i, n = 0;
			struct cf_stats st;

			TEST_ASSERT(f != NULL, "create");
			for (;;) {
				cf_stats(f, &st);
				TEST_ASSERT(!st.saturated, "variant %u seed "
					"%lu: limit before the first -ENOSPC",
					i, (unsigned long)seed);
				if (cf_add_with_hash(f, cfu_splitmix64(&rng), 0,
						NULL) != 0)
					break;
				n++;
			}
			cf_stats(f, &st);
			printf("# variant %u seed %lu: first -ENOSPC at load "
				"%.4f\n", i, (unsigned long)seed,
				st.load_factor);
			TEST_ASSERT(n >= 100000 && st.saturated &&
				st.stash_used == CF_STASH_SIZE &&
				st.kicks_failed == (CF_STASH_SIZE + 1) *
				CF_DEFAULT_MAX_KICKS, "variant %u seed %lu: "
				"%lu items, %lu kicks failed", i,
				(unsigned long)seed, (unsigned long)n,
				(unsigned long)st.kicks_failed);
			rng = seed * 1000 + i;
			for (uint64_t a = 0; a < n; a++)
				TEST_ASSERT(cf_lookup_with_hash(f,
					cfu_splitmix64(&rng), NULL), "lost");
			cf_free(f);
		}
	return 0;
}

/* Every failure sets errno to what it returns (libbpf's convention). */
static int
test_errno_convention(void)
{
	struct cf_params p = { .capacity = 64, .value_bits = 8 };
	struct cf_filter *f = cf_create(&p);
	uint64_t h = 12345, hit, v;
	uint32_t pos;
	char buf[16] = "not a filter";
	int ret;

	TEST_ASSERT(f != NULL, "create");
#define EXPECT_ERRNO(call, e) do { \
	errno = 0; \
	ret = (int)(call); \
	TEST_ASSERT(ret == -(e) && errno == (e), "%s: %d, errno %d", #call, \
		ret, errno); \
} while (0)
	EXPECT_ERRNO(cf_delete_with_hash(f, h), ENOENT);
	TEST_ASSERT_EQ(cf_add_with_hash(f, h, 1, &pos), 0, "add");
	EXPECT_ERRNO(cf_add_unique_with_hash(f, h, 1, NULL), EEXIST);
	EXPECT_ERRNO(cf_lookup_bulk(f, &h, 0, &hit, &pos), EINVAL);
	EXPECT_ERRNO(cf_lookup_bulk_values(f, &h, CF_BULK_MAX + 1, &hit, &pos,
		&v), EINVAL);
	EXPECT_ERRNO(cf_add_bulk(f, &h, NULL, 0, NULL), EINVAL);
	EXPECT_ERRNO(cf_delete_bulk(f, &h, 0, NULL), EINVAL);
	EXPECT_ERRNO(cf_value_get(f, UINT32_MAX, &v), EINVAL);
	EXPECT_ERRNO(cf_value_set(f, UINT32_MAX, 1), EINVAL);
	EXPECT_ERRNO(cf_delete_at(f, UINT32_MAX), EINVAL);
	EXPECT_ERRNO(cf_save_mem(f, buf, sizeof(buf)), ENOSPC);
	TEST_ASSERT_EQ(cf_delete_at(f, pos), 0, "delete_at");
	EXPECT_ERRNO(cf_value_get(f, pos, &v), ENOENT);
	EXPECT_ERRNO(cf_value_set(f, pos, 1), ENOENT);
	EXPECT_ERRNO(cf_delete_at(f, pos), ENOENT);
	/* Full: the last add fails with ENOSPC. */
	for (uint64_t k = 1; ; k++) {
		errno = 0;
		ret = cf_add_with_hash(f, k * UINT64_C(0x9e3779b97f4a7c15), 0,
			NULL);
		if (ret != 0)
			break;
	}
	TEST_ASSERT(ret == -ENOSPC && errno == ENOSPC, "full: %d, errno %d",
		ret, errno);
	cf_free(f);
	errno = 0;
	TEST_ASSERT(cf_load_mem(buf, sizeof(buf), NULL, 0) == NULL &&
		errno == ENODATA, "load: errno %d", errno);
#undef EXPECT_ERRNO
	return 0;
}

/* Whether every word of @p want is a flag of the first "flags" line of
 * /proc/cpuinfo: the kernel's view, not libgcc's __cpu_model that the
 * clones' resolvers and cf_dispatch_isa() read. */
static bool
cpuinfo_has(const char *want)
{
	char line[8192], word[64];
	const char *w = want;
	bool all = true;
	FILE *f = fopen("/proc/cpuinfo", "r");
	int n;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL &&
			strncmp(line, "flags", 5) != 0)
		;
	fclose(f);
	if (strncmp(line, "flags", 5) != 0)
		return false;
	while (sscanf(w, "%63s%n", word, &n) == 1) {
		char pad[80];

		snprintf(pad, sizeof(pad), " %s ", word);
		line[strcspn(line, "\n")] = ' ';
		all &= strstr(line, pad) != NULL;
		w += n;
	}
	return all;
}

/* cf_dispatch_isa() names the clone this CPU's flags call for: the
 * x86-64 levels' flags as the kernel lists them (abm: LZCNT). */
static int
test_dispatch_isa(void)
{
	const char *isa = cf_dispatch_isa();
	bool v3 = cpuinfo_has("avx avx2 bmi1 bmi2 f16c fma abm movbe xsave");
	bool v4 = v3 && cpuinfo_has("avx512f avx512bw avx512cd avx512dq "
			"avx512vl");
	const char *want;

	TEST_ASSERT(isa != NULL && isa == cf_dispatch_isa(), "%p", isa);
	printf("# code path: %s; /proc/cpuinfo: %s\n", isa,
		v4 ? "x86-64-v4" : v3 ? "x86-64-v3" : "below x86-64-v3");
#ifdef CFU_CLONES
	__builtin_cpu_init();
	/* libgcc's flags agree with the kernel's */
	TEST_ASSERT_EQ(!!__builtin_cpu_supports("avx2"),
		cpuinfo_has("avx2"), "avx2");
	TEST_ASSERT_EQ(!!__builtin_cpu_supports("avx512bw"),
		cpuinfo_has("avx512bw"), "avx512bw");
	want = v4 ? "x86-64-v4 (AVX-512)" : v3 ? "x86-64-v3 (AVX2)" :
		"baseline (-march=";
#else
	want = "no dispatch (-march=";
#endif
	TEST_ASSERT(strncmp(isa, want, strlen(want)) == 0 &&
		(want[strlen(want) - 1] != '=' || isa[strlen(isa) - 1] == ')'),
		"%s, want %s", isa, want);
	return 0;
}


/* ------------------------------------------------------------- aux words */

/*
 * Aux words follow their items wherever the filter moves them: kicks,
 * rolled-back walks, the stash and its moves back. Distinct names only
 * (two items of one name are one to the filter: a lookup of either finds
 * the first). Each stored item's aux word is a tag of its own and its
 * value the tag's low bits; after every operation batch, each item's
 * lookup position holds its tag, value and name.
 */
static int
aux_run(const struct variant *v, uint64_t seed)
{
	enum { OPS = 12000, MAX = OPS };
	uint64_t *hash = calloc(MAX, sizeof(*hash)), *tag = calloc(MAX, 8);
	uint64_t *name = calloc(MAX, 8);
	bool *in = calloc(MAX, sizeof(*in));
	struct cf_params p = {
		.capacity = 1500, .fp_bits = v->fp_bits,
		.bucket_slots = v->slots, .value_bits = v->value_bits,
		.table = v->table, .seed = seed, .exact_size = v->exact_size,
		.aux_bits = 64,
	};
	struct cf_filter *f = cf_create(&p);
	uint64_t rng = seed * 7919, nospc = 0;
	bool stashed = false;
	uint32_t n = 0;
	int ret = -1;

	if (f == NULL || hash == NULL || tag == NULL || name == NULL ||
			in == NULL)
		goto out;
	for (int op = 0; op < OPS; op++) {
		uint32_t r = (uint32_t)cfu_splitmix64(&rng) % 100;

		if (r < 60 || n == 0) {
			uint64_t h = cfu_splitmix64(&rng), nm;
			bool taken = false;
			uint32_t pos;
			int rc;

			nm = cf_name_of_hash(f, h);
			for (uint32_t k = 0; k < n && !taken; k++)
				taken = in[k] && name[k] == nm;
			if (taken)
				continue;
			rc = cf_add_with_hash(f, h, 0, &pos);
			if (rc == -ENOSPC) {
				nospc++;
				continue;
			}
			if (rc != 0)
				goto out;
			if (cf_aux_at(f, pos) == NULL ||
					cf_aux_get(f, pos) != 0) {
				printf("# op %d: a new item's aux word is not 0\n",
					op);
				goto out;
			}
			hash[n] = h;
			name[n] = nm;
			tag[n] = cfu_splitmix64(&rng) | 1;
			(void)cf_aux_set(f, pos, tag[n]);
			if (v->value_bits != 0)
				(void)cf_value_set(f, pos, tag[n]);
			in[n++] = true;
		} else {
			uint32_t k = (uint32_t)(cfu_splitmix64(&rng) % n);

			if (!in[k])
				continue;
			if (cf_delete_with_hash(f, hash[k]) != 0)
				goto out;
			in[k] = false;
		}
		if (op % 97 != 0 && op != OPS - 1)
			continue;
		{
			struct cf_stats st;

			cf_stats(f, &st);
			stashed |= st.stash_used != 0;
		}
		for (uint32_t k = 0; k < n; k++) {
			uint64_t val = 0, nm = 0, mask = v->value_bits == 64 ?
				UINT64_MAX : (UINT64_C(1) << v->value_bits) - 1;
			uint32_t pos;

			if (!in[k])
				continue;
			if (cf_lookup_with_hash(f, hash[k], &pos) != 1 ||
					cf_aux_get(f, pos) != tag[k] ||
					cf_name_at(f, pos, &nm) != 0 ||
					nm != name[k] || (v->value_bits != 0 &&
					(cf_value_get(f, pos, &val) != 0 ||
					 val != (tag[k] & mask)))) {
				printf("# op %d: item %u lost its aux word "
					"(%#llx, want %#llx), value or name\n",
					op, k, (unsigned long long)cf_aux_get(f,
					pos), (unsigned long long)tag[k]);
				goto out;
			}
		}
	}
	{
		struct cf_stats st;

		cf_stats(f, &st);
		if (nospc == 0 || st.kicks_total == 0 || !stashed) {
			printf("# the run never filled the table (or the "
				"stash)\n");
			goto out;
		}
	}
	ret = 0;
out:
	cf_free(f);
	free(hash);
	free(tag);
	free(name);
	free(in);
	return ret;
}

static int
test_aux_follows_items(void)
{
	static const struct variant v[] = {
		{ CF_TABLE_PLAIN, 12, 4, 32, false },
		{ CF_TABLE_PLAIN, 12, 4, 32, true },
		{ CF_TABLE_PLAIN, 16, 4, 16, true },
		{ CF_TABLE_PLAIN, 13, 4, 0, false },
		{ CF_TABLE_PLAIN, 32, 8, 64, false },
		{ CF_TABLE_INTERLEAVED, 16, 4, 16, false },
		{ CF_TABLE_INTERLEAVED, 12, 4, 32, true },
	};

	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (uint64_t seed = 1; seed <= 3; seed++)
			TEST_ASSERT_EQ(aux_run(&v[i], seed), 0, "variant %u "
				"(table %d, f=%u, b=%u, exact %d), seed %lu", i,
				v[i].table, v[i].fp_bits, v[i].slots,
				v[i].exact_size, (unsigned long)seed);
	return 0;
}

/* What aux words cost and where they are refused; one attached later. */
static int
test_aux_params(void)
{
	struct cf_params p = { .capacity = 1000, .value_bits = 32,
		.aux_bits = 64 };
	struct cf_filter *f, *g;
	struct cf_stats st, sg;
	uint64_t name;
	uint32_t pos;
	void *buf;
	int64_t n;

	TEST_ASSERT_EQ(expect_einval((struct cf_params){ .capacity = 100,
		.aux_bits = 32 }), 0, "aux_bits 32");
	TEST_ASSERT_EQ(expect_einval((struct cf_params){ .capacity = 100,
		.aux_bits = 64, .table = CF_TABLE_SEMISORT }), 0,
		"semi-sorted with aux words");
	f = cf_create(&p);
	p.aux_bits = 0;
	g = cf_create(&p);
	TEST_ASSERT(f != NULL && g != NULL, "create");
	cf_stats(f, &st);
	cf_stats(g, &sg);
	/* 8 bytes a slot, and the kick path's */
	TEST_ASSERT_EQ(st.bytes, sg.bytes + (st.slots + CF_DEFAULT_MAX_KICKS) *
		8, "8 bytes a slot");
	p.aux_bits = 64;
	TEST_ASSERT_EQ(cf_params_bytes(&p), st.bytes, "cf_params_bytes");
	TEST_ASSERT(cf_aux_at(g, 0) == NULL, "aux word without aux words");
	TEST_ASSERT(cf_aux_at(f, (uint32_t)st.slots) == NULL,
		"aux word past the slots and stash");
	TEST_ASSERT_EQ(cf_add_with_hash(f, 0x123456789abcdefULL, 5, &pos), 0,
		"add");
	TEST_ASSERT_EQ(cf_aux_set(f, pos, 42), 0, "set");
	TEST_ASSERT_EQ(cf_name_at(f, pos, &name), 0, "name");
	TEST_ASSERT_EQ(name, cf_name_of_hash(f, 0x123456789abcdefULL), "name");
	TEST_ASSERT_EQ(cf_name_at(f, pos ^ 1, &name), -ENOENT, "empty slot");
	/* Save and load: the aux words are not saved; attached, zero. */
	buf = malloc(cf_save_size(f));
	TEST_ASSERT(buf != NULL, "alloc");
	n = cf_save_mem(f, buf, cf_save_size(f));
	TEST_ASSERT(n > 0, "save");
	cf_free(g);
	g = cf_load_mem(buf, (size_t)n, NULL, 0);
	free(buf);
	TEST_ASSERT(g != NULL && cf_aux_at(g, pos) == NULL, "load");
	TEST_ASSERT_EQ(cf_aux_attach(g), 0, "attach");
	{
		uint64_t v = 0;

		TEST_ASSERT(cf_value_get(g, pos, &v) == 0 && v == 5,
			"the value after attach: %lu", (unsigned long)v);
		TEST_ASSERT(cf_lookup_with_hash(g, 0x123456789abcdefULL,
			NULL) == 1, "found after attach");
	}
	TEST_ASSERT_EQ(cf_aux_attach(g), -EEXIST, "attach twice");
	TEST_ASSERT(cf_aux_at(g, pos) != NULL && cf_aux_get(g, pos) == 0,
		"attached words are 0");
	cf_stats(g, &sg);
	TEST_ASSERT_EQ(sg.bytes, st.bytes, "attached: bytes");
	cf_clear(f);
	TEST_ASSERT_EQ(cf_aux_get(f, pos), 0u, "cleared");
	cf_free(g);
	/* A full table with aux words saves its values (not the words)
	 * to memory and to a file as a table without: the same bytes. */
	{
		char path[] = "/tmp/test_filter_aux_XXXXXX";
		struct cf_params q = p;
		struct cf_filter *plain;
		uint64_t rng = 5;
		size_t n1, n2;
		void *b1, *b2;
		int fd = mkstemp(path);

		TEST_ASSERT(fd >= 0, "mkstemp");
		close(fd);
		q.aux_bits = 0;
		plain = cf_create(&q);
		TEST_ASSERT(plain != NULL, "create");
		for (int k = 0; k < 900; k++) {
			uint64_t h = cfu_splitmix64(&rng), v = h >> 40;

			if (cf_add_with_hash(f, h, v, &pos) == 0)
				(void)cf_aux_set(f, pos, h);
			(void)cf_add_with_hash(plain, h, v, NULL);
		}
		n1 = cf_save_size(f);
		n2 = cf_save_size(plain);
		b1 = malloc(n1);
		b2 = malloc(n2);
		TEST_ASSERT(b1 != NULL && b2 != NULL && n1 == n2 &&
			cf_save_mem(f, b1, n1) == (int64_t)n1 &&
			cf_save_mem(plain, b2, n2) == (int64_t)n2 &&
			memcmp(b1, b2, n1) == 0, "saved to memory as without");
		TEST_ASSERT_EQ(cf_save_file(f, path), 0, "save to a file");
		g = cf_load_file(path, NULL, 0);
		unlink(path);
		TEST_ASSERT(g != NULL && cf_save_mem(g, b1, n1) ==
			(int64_t)n1 && memcmp(b1, b2, n1) == 0,
			"saved to a file as without");
		free(b1);
		free(b2);
		cf_free(g);
		cf_free(plain);
	}
	cf_free(f);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_aux_follows_items),
	TEST_CASE(test_aux_params),
	TEST_CASE(test_dispatch_isa),
	TEST_CASE(test_params_save_size),
	TEST_CASE(test_errno_convention),
	TEST_CASE(test_reject_null_params),
	TEST_CASE(test_reject_zero_capacity),
	TEST_CASE(test_reject_huge_capacity),
	TEST_CASE(test_reject_fp_bits_3),
	TEST_CASE(test_reject_fp_bits_33),
	TEST_CASE(test_reject_semisort_fp_bits_4),
	TEST_CASE(test_reject_semisort_fp_bits_17),
	TEST_CASE(test_reject_semisort_2_slots),
	TEST_CASE(test_reject_3_slots),
	TEST_CASE(test_reject_16_slots),
	TEST_CASE(test_reject_max_kicks),
	TEST_CASE(test_reject_value_bits_12),
	TEST_CASE(test_reject_value_bits_128),
	TEST_CASE(test_reject_table_type),
	TEST_CASE(test_reject_interleaved),
	TEST_CASE(test_interleaved_sizes),
	TEST_CASE(test_reject_allocator_without_hooks),
	TEST_CASE(test_defaults_and_sizing),
	TEST_CASE(test_bytes_api),
	TEST_CASE(test_model_all_variants),
	TEST_CASE(test_model_wide_buckets),
	TEST_CASE(test_overfill_keeps_items),
	TEST_CASE(test_semisort_equals_plain),
	TEST_CASE(test_duplicates),
	TEST_CASE(test_bulk_lookup_equals_scalar),
	TEST_CASE(test_prefetch_changes_nothing),
	TEST_CASE(test_relocations),
	TEST_CASE(test_bulk_add_delete_equal_scalar),
	TEST_CASE(test_values_and_positions),
	TEST_CASE(test_value_table),
	TEST_CASE(test_scan_incremental),
	TEST_CASE(test_scan_due),
	TEST_CASE(test_scan_due_einval),
	TEST_CASE(test_allocator_hooks),
	TEST_CASE(test_clear),
	TEST_CASE(test_largest_table),
	TEST_CASE(test_flood_full_table),
	TEST_CASE(test_bucket_entries),
	TEST_CASES_END()
};

/*
 * The statistical cases: false positive rates and load factors measured
 * on large tables, the slow part of this test (several times slower under
 * ASan). Run by "test_filter --slow [case]", meson's suite unit-slow,
 * which tools/test.sh runs and a developer may skip with
 * "meson test --no-suite unit-slow".
 */
static const struct test_case slow_cases[] = {
	TEST_CASE(test_table2_first_failure),
	TEST_CASE(test_fpr_8),
	TEST_CASE(test_fpr_12),
	TEST_CASE(test_fpr_16),
	TEST_CASE(test_capacity_reached),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--slow") == 0)
		return test_run(slow_cases, argc - 1, argv + 1);
	return test_run(cases, argc, argv);
}
