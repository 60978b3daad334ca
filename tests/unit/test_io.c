/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * cf_save/cf_load: a round trip for every layout, and rejection of
 * truncated, bit-flipped, wrong-version and other-byte-order inputs;
 * the key hash (cf_params.key_hash) kept, and a damaged or unknown one
 * refused.
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "cuckoo_filter.h"
#include "test.h"

/* Offsets in the documented header (docs/design.md). */
#define OFF_VERSION 8
#define OFF_BYTE_ORDER 12
#define OFF_CHECKSUM 88
#define HEADER_SIZE 96
/* Version 3: the key hash after the header, then a reserved word. */
#define OFF_KEY_HASH 96
#define OFF_EXT_RESERVED 100

static const struct cf_params layouts[] = {
	{ .capacity = 3000, .fp_bits = 8 },
	{ .capacity = 3000, .fp_bits = 12, .value_bits = 16 },
	{ .capacity = 3000, .fp_bits = 16, .bucket_slots = 2 },
	{ .capacity = 3000, .fp_bits = 32, .value_bits = 64 },
	{ .capacity = 3000, .fp_bits = 8, .bucket_slots = 8,
		.value_bits = 8 },
	{ .capacity = 3000, .fp_bits = 13, .table = CF_TABLE_SEMISORT,
		.value_bits = 32 },
	{ .capacity = 3000, .fp_bits = 9, .table = CF_TABLE_SEMISORT },
	/* 782 buckets: not a power of two */
	{ .capacity = 3000, .fp_bits = 16, .value_bits = 16,
		.exact_size = true },
	{ .capacity = 3000, .fp_bits = 13, .table = CF_TABLE_SEMISORT,
		.exact_size = true },
	/* values in the bucket: format version 2 */
	{ .capacity = 3000, .fp_bits = 16, .value_bits = 16,
		.table = CF_TABLE_INTERLEAVED },
	{ .capacity = 3000, .fp_bits = 13, .value_bits = 32,
		.table = CF_TABLE_INTERLEAVED, .exact_size = true },
	/* cf_hash_u64() for 8-byte keys: format version 3, any layout */
	{ .capacity = 3000, .fp_bits = 12, .key_hash = CF_KEY_HASH_U64 },
	{ .capacity = 3000, .fp_bits = 13, .table = CF_TABLE_SEMISORT,
		.key_hash = CF_KEY_HASH_U64 },
	{ .capacity = 3000, .fp_bits = 16, .value_bits = 16,
		.table = CF_TABLE_INTERLEAVED, .exact_size = true,
		.key_hash = CF_KEY_HASH_U64 },
};
#define NB_LAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

/* A filter filled past its first failure (so the stash is saved too). */
static struct cf_filter *
filled(const struct cf_params *p, uint64_t *h, uint64_t *n)
{
	struct cf_params q = *p;
	struct cf_filter *f;
	uint64_t rng = 1;

	q.seed = 0xfeed;
	f = cf_create(&q);
	*n = 0;
	for (int a = 0; f != NULL && a < 4200; a++) {
		uint64_t x = cfu_splitmix64(&rng);

		if (cf_add_with_hash(f, x, (uint64_t)a, NULL) == 0)
			h[(*n)++] = x;
	}
	return f;
}

static uint8_t *
saved(const struct cf_filter *f, size_t *size)
{
	uint8_t *buf;

	*size = cf_save_size(f);
	buf = malloc(*size);
	if (buf != NULL && cf_save_mem(f, buf, *size) != (int64_t)*size) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void
reseal(uint8_t *buf, size_t size)
{
	uint64_t sum = 0;

	if (buf == NULL || size < HEADER_SIZE)
		return;
	memcpy(buf + OFF_CHECKSUM, &sum, 8);
	sum = XXH64(buf, size, 0);
	memcpy(buf + OFF_CHECKSUM, &sum, 8);
}

static int
expect_reject(const uint8_t *buf, size_t size, int err)
{
	struct cf_filter *f;

	errno = 0;
	f = cf_load_mem(buf, size, NULL, 0);
	if (f != NULL) {
		cf_free(f);
		TEST_ASSERT(0, "accepted");
	}
	TEST_ASSERT(errno == err, "errno %d (%s), want %d", errno,
		strerror(errno), err);
	return 0;
}

static int
test_round_trip_mem(void)
{
	static uint64_t h[4200];

	for (unsigned int i = 0; i < NB_LAYOUTS; i++) {
		uint64_t n, rng = 9;
		struct cf_filter *f = filled(&layouts[i], h, &n), *g;
		struct cf_stats a, b;
		struct cf_params pa, pb;
		size_t size, size2;
		uint8_t *buf, *buf2;

		TEST_ASSERT(f != NULL, "create");
		cf_stats(f, &a);
		TEST_ASSERT(a.stash_used > 0, "layout %u: stash unused", i);
		buf = saved(f, &size);
		TEST_ASSERT(buf != NULL, "save");
		g = cf_load_mem(buf, size, NULL, 0);
		TEST_ASSERT(g != NULL, "layout %u: load: %s", i,
			strerror(errno));
		cf_stats(g, &b);
		TEST_ASSERT(a.items == b.items && a.buckets == b.buckets &&
			a.stash_used == b.stash_used, "stats differ");
		cf_get_params(f, &pa);
		cf_get_params(g, &pb);
		TEST_ASSERT(memcmp(&pa, &pb, sizeof(pa)) == 0, "params");
		for (uint64_t k = 0; k < n; k++)
			TEST_ASSERT(cf_lookup_with_hash(g, h[k], NULL),
				"item %lu lost", (unsigned long)k);
		for (int q = 0; q < 100000; q++) {
			uint64_t x = cfu_splitmix64(&rng);

			TEST_ASSERT_EQ(cf_lookup_with_hash(f, x, NULL),
				cf_lookup_with_hash(g, x, NULL), "answers");
		}
		/* The same bytes again, and the loaded filter still works. */
		buf2 = saved(g, &size2);
		TEST_ASSERT(buf2 != NULL && size2 == size &&
			memcmp(buf, buf2, size) == 0, "re-save differs");
		TEST_ASSERT_EQ(cf_delete_with_hash(g, h[0]), 0, "delete");
		TEST_ASSERT_EQ(cf_save_mem(g, buf, HEADER_SIZE), -ENOSPC,
			"short buffer");
		free(buf);
		free(buf2);
		cf_free(f);
		cf_free(g);
	}
	return 0;
}

static int
test_round_trip_file(void)
{
	static uint64_t h[4200];
	char path[] = "/tmp/cf_test_XXXXXX";
	int fd = mkstemp(path);

	TEST_ASSERT(fd >= 0, "mkstemp");
	close(fd);
	for (unsigned int i = 0; i < NB_LAYOUTS; i++) {
		uint64_t n;
		struct cf_filter *f = filled(&layouts[i], h, &n), *g;
		size_t sf, sg;
		uint8_t *bf, *bg;

		TEST_ASSERT_EQ(cf_save_file(f, path), 0, "save_file");
		g = cf_load_file(path, NULL, 0);
		TEST_ASSERT(g != NULL, "load_file: %s", strerror(errno));
		bf = saved(f, &sf);
		bg = saved(g, &sg);
		TEST_ASSERT(sf == sg && memcmp(bf, bg, sf) == 0,
			"file round trip differs");
		free(bf);
		free(bg);
		cf_free(f);
		cf_free(g);
	}
	unlink(path);
	errno = 0;
	TEST_ASSERT(cf_load_file(path, NULL, 0) == NULL && errno == ENOENT,
		"missing file");
	{
		struct cf_filter *f = cf_create(&(struct cf_params){
			.capacity = 1 });
		int ret = cf_save_file(f, "/nonexistent-dir/x");

		cf_free(f);
		TEST_ASSERT_EQ(ret, -ENOENT, "unwritable path");
	}
	return 0;
}

/* Files that are not regular: refused at once, never blocked on (a FIFO
 * with no writer would hang a plain open()), never written through. */
static int
test_files_not_regular(void)
{
	char dir[] = "/tmp/cf_test_XXXXXX", fifo[64];
	struct cf_filter *f = cf_create(&(struct cf_params){ .capacity = 8 });
	struct stat sb;

	TEST_ASSERT(mkdtemp(dir) != NULL && f != NULL, "setup");
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	TEST_ASSERT(mkfifo(fifo, 0600) == 0, "mkfifo");
	errno = 0;
	TEST_ASSERT(cf_load_file(fifo, NULL, 0) == NULL && errno == EINVAL,
		"a FIFO loaded: errno %d", errno);
	errno = 0;
	TEST_ASSERT(cf_load_file(dir, NULL, 0) == NULL && errno == EISDIR,
		"a directory loaded: errno %d", errno);
	TEST_ASSERT_EQ(cf_save_file(f, fifo), -EINVAL, "saved over a FIFO");
	TEST_ASSERT(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode),
		"the FIFO replaced");
	TEST_ASSERT_EQ(cf_save_file(f, dir), -EISDIR, "saved over a dir");
	unlink(fifo);
	rmdir(dir);
	cf_free(f);
	return 0;
}

static int
test_reject_truncated(void)
{
	static uint64_t h[4200];

	for (unsigned int i = 0; i < NB_LAYOUTS; i++) {
		uint64_t n;
		struct cf_filter *f = filled(&layouts[i], h, &n);
		size_t size;
		uint8_t *buf = saved(f, &size);

		TEST_ASSERT(buf != NULL, "save");
		for (size_t len = 0; len < size; len += 1 + len / 64)
			TEST_ASSERT_EQ(expect_reject(buf, len, ENODATA), 0,
				"layout %u cut at %zu", i, len);
		TEST_ASSERT_EQ(expect_reject(buf, size - 1, ENODATA), 0,
			"one byte short");
		free(buf);
		cf_free(f);
	}
	return 0;
}

static int
test_reject_trailing_bytes(void)
{
	struct cf_filter *f = cf_create(&(struct cf_params){ .capacity = 50 });
	size_t size;
	uint8_t *buf = saved(f, &size), *big = calloc(1, size + 1);

	memcpy(big, buf, size);
	TEST_ASSERT_EQ(expect_reject(big, size + 1, EBADMSG), 0, "trailing");
	free(buf);
	free(big);
	cf_free(f);
	return 0;
}

static int
test_reject_bit_flips(void)
{
	static uint64_t h[4200];
	uint64_t rng = 4;

	for (unsigned int i = 0; i < NB_LAYOUTS; i++) {
		uint64_t n;
		struct cf_filter *f = filled(&layouts[i], h, &n);
		size_t size;
		uint8_t *buf = saved(f, &size);

		/* Every header bit, then random payload bits. */
		for (size_t bit = 0; bit < size * 8; bit = bit < HEADER_SIZE *
				8 ? bit + 1 : bit + 1 + cfu_splitmix64(&rng) % 997) {
			struct cf_filter *g;

			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			g = cf_load_mem(buf, size, NULL, 0);
			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			TEST_ASSERT(g == NULL, "layout %u: flip of bit %zu "
				"accepted", i, bit);
		}
		free(buf);
		cf_free(f);
	}
	return 0;
}

static int
test_reject_wrong_version(void)
{
	static const uint32_t unknown[] = { 0, 4, 0x100, UINT32_MAX };
	struct cf_filter *f = cf_create(&(struct cf_params){ .capacity = 50 });
	struct cf_filter *g = cf_create(&(struct cf_params){ .capacity = 50,
		.value_bits = 16, .table = CF_TABLE_INTERLEAVED });
	size_t size, gsize;
	uint8_t *buf = saved(f, &size), *gbuf = saved(g, &gsize);
	uint32_t v;

	TEST_ASSERT(buf != NULL && gbuf != NULL, "save");
	memcpy(&v, buf + OFF_VERSION, 4);
	TEST_ASSERT_EQ(v, 1u, "a plain filter is written as version 1");
	memcpy(&v, gbuf + OFF_VERSION, 4);
	TEST_ASSERT_EQ(v, 2u, "an interleaved one as version 2");
	for (unsigned int i = 0; i < sizeof(unknown) / sizeof(unknown[0]);
			i++) {
		memcpy(buf + OFF_VERSION, &unknown[i], 4);
		reseal(buf, size);
		TEST_ASSERT_EQ(expect_reject(buf, size, EPROTONOSUPPORT), 0,
			"version %u", unknown[i]);
	}
	/* Each layout has one version: a plain table called version 2,
	 * an interleaved one called version 1, is a damaged file. */
	v = 2;
	memcpy(buf + OFF_VERSION, &v, 4);
	reseal(buf, size);
	TEST_ASSERT_EQ(expect_reject(buf, size, EBADMSG), 0, "plain, v2");
	v = 1;
	memcpy(gbuf + OFF_VERSION, &v, 4);
	reseal(gbuf, gsize);
	TEST_ASSERT_EQ(expect_reject(gbuf, gsize, EBADMSG), 0,
		"interleaved, v1");
	/* A version 1 file called version 3 has no extension: its first
	 * table bytes read as one are not a key hash (all zero here). */
	v = 3;
	memcpy(buf + OFF_VERSION, &v, 4);
	reseal(buf, size);
	TEST_ASSERT_EQ(expect_reject(buf, size, EBADMSG), 0, "plain, v3");
	free(buf);
	free(gbuf);
	cf_free(f);
	cf_free(g);
	return 0;
}

/*
 * An interleaved bucket's padding (past its fingerprints, between them
 * and its values, after its values) must be zero, as a filter writes it:
 * else a loaded filter would not save byte for byte as it was read.
 */
static int
test_reject_interleave_padding(void)
{
	/* 13-bit fingerprints: 52 bits in 7 bytes (4 spare bits), values
	 * from byte 8 (byte 7 spare), 16 bytes of values, 8 spare bytes
	 * to the 32-byte stride. */
	struct cf_filter *f = cf_create(&(struct cf_params){ .capacity = 200,
		.fp_bits = 13, .value_bits = 32,
		.table = CF_TABLE_INTERLEAVED, .seed = 3 });
	static const struct { unsigned int off; uint8_t bit; } spare[] = {
		{ 6, 0x10 }, { 6, 0x80 }, { 7, 0x01 }, { 24, 0x01 },
		{ 31, 0x80 },
	};
	size_t size;
	uint8_t *buf;
	struct cf_filter *g;

	TEST_ASSERT(f != NULL, "create");
	for (uint64_t k = 1; k <= 150; k++)
		TEST_ASSERT_EQ(cf_add_with_hash(f, k * 0x9e3779b97f4a7c15ull,
			k, NULL), 0, "add");
	buf = saved(f, &size);
	TEST_ASSERT(buf != NULL, "save");
	g = cf_load_mem(buf, size, NULL, 0);
	TEST_ASSERT(g != NULL, "the file as written loads");
	cf_free(g);
	for (unsigned int i = 0; i < sizeof(spare) / sizeof(spare[0]); i++)
		for (unsigned int bucket = 0; bucket < 3; bucket++) {
			size_t at = HEADER_SIZE + bucket * 32 + spare[i].off;

			buf[at] ^= spare[i].bit;
			reseal(buf, size);
			TEST_ASSERT_EQ(expect_reject(buf, size, EBADMSG), 0,
				"bucket %u, byte %u", bucket, spare[i].off);
			buf[at] ^= spare[i].bit;
		}
	free(buf);
	cf_free(f);
	return 0;
}

static int
test_reject_other_byte_order(void)
{
	struct cf_filter *f = cf_create(&(struct cf_params){ .capacity = 50 });
	size_t size;
	uint8_t *buf = saved(f, &size);
	uint32_t bo;

	memcpy(&bo, buf + OFF_BYTE_ORDER, 4);
	bo = __builtin_bswap32(bo);
	memcpy(buf + OFF_BYTE_ORDER, &bo, 4);
	reseal(buf, size);
	TEST_ASSERT_EQ(expect_reject(buf, size, ENOTSUP), 0, "byte order");
	free(buf);
	cf_free(f);
	return 0;
}

static int
test_reject_bad_magic(void)
{
	struct cf_filter *f = cf_create(&(struct cf_params){ .capacity = 50 });
	size_t size;
	uint8_t *buf = saved(f, &size);

	buf[0] = 'X';
	reseal(buf, size);
	TEST_ASSERT_EQ(expect_reject(buf, size, EBADMSG), 0, "magic");
	TEST_ASSERT_EQ(expect_reject(buf, 3, ENODATA), 0, "tiny input");
	free(buf);
	cf_free(f);
	return 0;
}

/* Well-sealed but impossible contents are caught by the checks, not
 * only by the checksum. */
static int
test_reject_inconsistent_fields(void)
{
	static const struct { size_t off; uint32_t val; } edits[] = {
		{ 16, 9 },        /* table type */
		{ 20, 40 },       /* fp_bits */
		{ 24, 3 },        /* bucket_slots */
		{ 28, 0 },        /* max_kicks */
		{ 32, 12 },       /* value_bits */
		{ 36, 9 },        /* stash_count */
		{ 40, 0 },        /* capacity, low word */
		{ 56, 1 },        /* buckets, low word */
		{ 64, 999999 },   /* items, low word */
		{ 72, 64 },       /* table_bytes, low word */
	};

	for (unsigned int e = 0; e < sizeof(edits) / sizeof(edits[0]); e++) {
		struct cf_filter *f = cf_create(&(struct cf_params){
			.capacity = 50, .table = CF_TABLE_SEMISORT,
			.fp_bits = 13 });
		size_t size;
		uint8_t *buf;

		cf_add_with_hash(f, 12345, 0, NULL);
		buf = saved(f, &size);
		memcpy(buf + edits[e].off, &edits[e].val, 4);
		reseal(buf, size);
		TEST_ASSERT(cf_load_mem(buf, size, NULL, 0) == NULL,
			"edit at offset %zu accepted", edits[e].off);
		free(buf);
		cf_free(f);
	}
	{
		/* A semi-sorted code past the 3876 valid ones. */
		struct cf_filter *f = cf_create(&(struct cf_params){
			.capacity = 50, .table = CF_TABLE_SEMISORT,
			.fp_bits = 13 });
		size_t size;
		uint8_t *buf = saved(f, &size);

		buf[HEADER_SIZE] = 0xff;
		buf[HEADER_SIZE + 1] |= 0x0f;
		reseal(buf, size);
		TEST_ASSERT_EQ(expect_reject(buf, size, EBADMSG), 0,
			"semi-sorted code 4095");
		free(buf);
		cf_free(f);
	}
	return 0;
}

/*
 * The header of a table of 2^32 slots (capacity 2^31, 4-bit
 * fingerprints), which cf_create used to accept: its positions do not
 * fit in 32 bits, so the header alone is refused, as a bad field, before
 * the length is even compared or anything allocated.
 */
static int
test_reject_table_too_large(void)
{
	struct cf_filter *f = cf_create(&(struct cf_params){ .capacity = 50,
		.fp_bits = 4 });
	uint64_t capacity = UINT64_C(1) << 31, buckets = UINT64_C(1) << 30;
	uint64_t table_bytes = buckets * 16 / 8 + 16;
	size_t size;
	uint8_t *buf = saved(f, &size);

	TEST_ASSERT(buf != NULL, "save");
	memcpy(buf + 40, &capacity, 8);
	memcpy(buf + 56, &buckets, 8);
	memcpy(buf + 72, &table_bytes, 8);
	reseal(buf, size);
	TEST_ASSERT_EQ(expect_reject(buf, size, EBADMSG), 0, "2^32 slots");
	/* The largest table allowed is only short of its bytes. */
	capacity = CF_MAX_CAPACITY;
	buckets >>= 1;
	table_bytes = buckets * 16 / 8 + 16;
	memcpy(buf + 40, &capacity, 8);
	memcpy(buf + 56, &buckets, 8);
	memcpy(buf + 72, &table_bytes, 8);
	reseal(buf, size);
	TEST_ASSERT_EQ(expect_reject(buf, size, ENODATA), 0, "2^31 slots");
	free(buf);
	cf_free(f);
	return 0;
}

/*
 * 8-byte keys added with cf_add() (the inline calls where the layout has
 * them) are found by cf_lookup() after a save and a load, in memory and
 * through a file, with either key hash: the loaded filter hashes them as
 * the saved one did. With CF_KEY_HASH_U64 that is cf_hash_u64(), the file
 * is version 3, and XXH3 would lose them (checked: the keys are not
 * found under the other hash).
 */
static int
test_round_trip_key_hash(void)
{
	static const struct cf_params shapes[] = {
		{ .capacity = 3000, .fp_bits = 12 },     /* inline P12 */
		{ .capacity = 3000, .fp_bits = 16, .exact_size = true },
		{ .capacity = 3000, .fp_bits = 32 },     /* inline P32 */
		{ .capacity = 3000, .fp_bits = 12, .value_bits = 16 },
		{ .capacity = 3000, .fp_bits = 13, .table = CF_TABLE_SEMISORT },
	};
	char path[] = "/tmp/cf_test_XXXXXX";
	int fd = mkstemp(path);

	TEST_ASSERT(fd >= 0, "mkstemp");
	close(fd);
	for (unsigned int i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
	for (int kh = CF_KEY_HASH_XXH3; kh <= CF_KEY_HASH_U64; kh++) {
		struct cf_params p = shapes[i], q;
		struct cf_filter *f, *g[2];
		const uint64_t n = 2800;
		uint64_t lost_other = 0, other_hash, k;
		struct cf_stats st;
		size_t size;
		uint8_t *buf;
		uint32_t v;

		p.key_hash = (enum cf_key_hash)kh;
		p.seed = 0xfeed + i;
		f = cf_create(&p);
		TEST_ASSERT(f != NULL, "create");
		/* sequential integers: the keys a cheap hash could fail */
		for (k = 0; k < n; k++)
			TEST_ASSERT_EQ(cf_add(f, &k, sizeof(k)), 0, "add %lu",
				(unsigned long)k);
		buf = saved(f, &size);
		TEST_ASSERT(buf != NULL, "save");
		memcpy(&v, buf + OFF_VERSION, 4);
		TEST_ASSERT_EQ(v, kh == CF_KEY_HASH_U64 ? 3u : 1u,
			"shape %u, key hash %d: version", i, kh);
		cf_stats(f, &st);
		TEST_ASSERT_EQ(size, (size_t)cf_params_save_size(&p) -
			(CF_STASH_SIZE - st.stash_used) * 16, "size");
		TEST_ASSERT_EQ(cf_save_file(f, path), 0, "save_file");
		g[0] = cf_load_mem(buf, size, NULL, 0);
		g[1] = cf_load_file(path, NULL, 0);
		for (int w = 0; w < 2; w++) {
			TEST_ASSERT(g[w] != NULL, "load: %s", strerror(errno));
			cf_get_params(g[w], &q);
			TEST_ASSERT_EQ((int)q.key_hash, kh, "key hash kept");
			for (k = 0; k < n; k++) {
				TEST_ASSERT_EQ(cf_hash(g[w], &k, 8),
					cf_hash(f, &k, 8), "hash of %lu",
					(unsigned long)k);
				TEST_ASSERT_EQ(cf_lookup(g[w], &k, sizeof(k)), 1,
					"shape %u, key hash %d, %s: key %lu "
					"lost", i, kh, w ? "file" : "mem",
					(unsigned long)k);
			}
			if (kh == CF_KEY_HASH_U64)
				for (k = 0; k < 1000; k++)
					TEST_ASSERT_EQ(cf_hash(g[w], &k, 8),
						cf_hash_u64(g[w], k), "u64");
			k = 5;
			TEST_ASSERT_EQ(cf_delete(g[w], &k, sizeof(k)), 0,
				"delete");
			cf_free(g[w]);
		}
		/* the other hash would not find them: the field matters */
		other_hash = 0;
		for (k = 0; k < n; k++) {
			other_hash = kh == CF_KEY_HASH_U64 ?
				XXH3_64bits_withSeed(&k, 8, p.seed) :
				cf_hash_u64(f, k);
			lost_other += !cf_lookup_with_hash(f, other_hash, NULL);
		}
		TEST_ASSERT(lost_other > n / 2, "shape %u: the other hash "
			"finds %lu of %lu", i, (unsigned long)(n - lost_other),
			(unsigned long)n);
		free(buf);
		cf_free(f);
	}
	unlink(path);
	return 0;
}

/* A damaged or unknown key hash in a version 3 file, and in params. */
static int
test_reject_key_hash(void)
{
	static const struct {
		uint32_t off, value;
		int err;
	} bad[] = {
		{ OFF_KEY_HASH, CF_KEY_HASH_XXH3, EBADMSG }, /* v1/v2's */
		{ OFF_KEY_HASH, 2, EPROTONOSUPPORT },        /* unknown */
		{ OFF_KEY_HASH, UINT32_MAX, EPROTONOSUPPORT },
		{ OFF_EXT_RESERVED, 1, EBADMSG },
		{ OFF_EXT_RESERVED, UINT32_MAX, EBADMSG },
	};
	struct cf_params p = { .capacity = 50,
		.key_hash = CF_KEY_HASH_U64 };
	struct cf_filter *f = cf_create(&p);
	size_t size;
	uint8_t *buf = saved(f, &size);

	TEST_ASSERT(buf != NULL, "save");
	TEST_ASSERT_EQ(size, (size_t)cf_save_size(f), "size");
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t *copy = malloc(size);

		TEST_ASSERT(copy != NULL, "malloc");
		memcpy(copy, buf, size);
		memcpy(copy + bad[i].off, &bad[i].value, 4);
		reseal(copy, size);
		TEST_ASSERT_EQ(expect_reject(copy, size, bad[i].err), 0,
			"case %u", i);
		free(copy);
	}
	/* the header alone, and part of the extension */
	TEST_ASSERT_EQ(expect_reject(buf, HEADER_SIZE + 4, ENODATA), 0,
		"cut in the extension");
	free(buf);
	cf_free(f);
	/* an unknown value is refused by every call that takes params */
	p.key_hash = (enum cf_key_hash)2;
	errno = 0;
	TEST_ASSERT(cf_create(&p) == NULL && errno == EINVAL, "create");
	errno = 0;
	TEST_ASSERT(cf_params_bytes(&p) == 0 && errno == EINVAL, "bytes");
	errno = 0;
	TEST_ASSERT(cf_params_save_size(&p) == 0 && errno == EINVAL,
		"save size");
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_round_trip_mem),
	TEST_CASE(test_round_trip_file),
	TEST_CASE(test_round_trip_key_hash),
	TEST_CASE(test_reject_key_hash),
	TEST_CASE(test_files_not_regular),
	TEST_CASE(test_reject_truncated),
	TEST_CASE(test_reject_trailing_bytes),
	TEST_CASE(test_reject_bit_flips),
	TEST_CASE(test_reject_wrong_version),
	TEST_CASE(test_reject_interleave_padding),
	TEST_CASE(test_reject_other_byte_order),
	TEST_CASE(test_reject_bad_magic),
	TEST_CASE(test_reject_inconsistent_fields),
	TEST_CASE(test_reject_table_too_large),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
