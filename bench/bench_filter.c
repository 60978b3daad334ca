/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_filter: lib/cuckoo against DPDK's rte_member (HT set-summary,
 * non-cache) and rte_hash, on the same keys in one process.
 *
 * 1. The paper's Table 3 protocol: fill with random keys until the first
 *    failed insertion; items, bits per item, false positive rate and
 *    construction rate, for plain 12-bit, semi-sorted 13-bit and plain
 *    16-bit filters. Paper (2.27 GHz Xeon, 192 MiB filters): CF 12.60
 *    bits/item, 0.19%, 5.00 M/s; ss-CF 12.58 bits/item, 0.09%, 3.13 M/s.
 * 2. Side by side at each table size: fill to the first failure (one call
 *    per key), lookups one call per key and in bursts of 32 at 0, 25, 50,
 *    75 and 100% positive queries, and deletes.
 * 3. The physical ceiling: random independent 64-byte reads, 32 in flight
 *    with prefetch, over a buffer of the filter's size; a filter lookup
 *    reads two lines, so lookups/s cannot exceed reads/s / 2.
 *
 * Keys are 8 random bytes. Every target hashes them itself: lib/cuckoo
 * with seeded XXH3-64 (inlined from Debian's xxhash.h), rte_member with
 * its CRC, rte_hash with rte_hash_crc. Throughput is in million
 * operations per second, median of --reps runs.
 *
 * Usage: bench_filter [--quick] [--sizes 16,25,26] [--reps N]
 *                     [--queries N] [--csv FILE]
 * The full run takes about 5 minutes and 6 GiB of memory.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_member.h>

#include "bench_util.h"
#include "cfutil.h"
#include "cuckoo_filter.h"

#define BURST 32
#define NB_MIXES 5
#define MAX_SIZES 8
#define KEY_SEED UINT64_C(0x5eed)

static const unsigned int mixes[NB_MIXES] = { 0, 25, 50, 75, 100 };

struct options {
	unsigned int sizes[MAX_SIZES]; /* log2 of slots */
	unsigned int nb_sizes;
	unsigned int table3_log2;
	unsigned int reps;
	uint64_t queries;
	const char *csv;
};

/* ------------------------------------------------------------ helpers */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* Key and query arrays are streamed: on 4 KiB pages their TLB misses,
 * costly under nested paging, would be measured instead of the
 * filters. Back them with transparent hugepages, as the filters are. */
static void *
xmalloc(size_t size)
{
	const size_t huge = 2u << 20;
	void *p = NULL;

	size = (size + huge - 1) & ~(huge - 1);
	if (posix_memalign(&p, huge, size) == 0)
		(void)madvise(p, size, MADV_HUGEPAGE);
	else
		p = NULL;
	if (p == NULL) {
		fprintf(stderr, "bench_filter: out of memory (%zu bytes)\n",
			size);
		exit(1);
	}
	return p;
}

/* ------------------------------------------------------------ targets */

struct target;

struct target_ops {
	void *(*create)(uint64_t slots, unsigned int param);
	/* 0 if stored; 1 if stored but the structure has just overflowed
	 * (lib/cuckoo: the item went to the stash); < 0 if refused. */
	int (*add)(void *h, uint64_t key);
	int (*lookup)(void *h, uint64_t key);
	unsigned int (*lookup_bulk)(void *h, const uint64_t *keys);
	int (*del)(void *h, uint64_t key);
	/* Table bytes, or NULL: measured as the DPDK heap it takes. */
	uint64_t (*bytes)(void *h);
	void (*destroy)(void *h);
};

/* lib/cuckoo */

struct cf_target {
	struct cf_filter *f;
	uint64_t slots;
	uint64_t seed;
};

static inline uint64_t
cf_key_hash(const struct cf_target *t, uint64_t key)
{
	return XXH3_64bits_withSeed(&key, sizeof(key), t->seed);
}

static void *
cf_target_create(uint64_t slots, unsigned int param)
{
	struct cf_target *t = xmalloc(sizeof(*t));
	struct cf_stats st;

	t->seed = KEY_SEED;
	t->f = cf_create(&(struct cf_params){
		.capacity = (uint64_t)(slots * 0.95),
		.fp_bits = param & 0xff,
		.table = (param & 0x100) ? CF_TABLE_SEMISORT : CF_TABLE_PLAIN,
		.seed = t->seed,
	});
	if (t->f == NULL) {
		free(t);
		return NULL;
	}
	cf_stats(t->f, &st);
	t->slots = st.slots;
	return t;
}

static int
cf_target_add(void *h, uint64_t key)
{
	struct cf_target *t = h;
	uint32_t pos;

	if (cf_add_with_hash(t->f, cf_key_hash(t, key), 0, &pos) != 0)
		return -ENOSPC;
	return pos >= t->slots;
}

static int
cf_target_lookup(void *h, uint64_t key)
{
	struct cf_target *t = h;

	return cf_lookup_with_hash(t->f, cf_key_hash(t, key), NULL);
}

/* Its hash loop vectorises at AVX-512 (vpmullq): cloned as lib/cuckoo's
 * hot functions are, so that the portable build's figure is the
 * library's, not this loop's at x86-64-v2. */
static CFU_TARGET_CLONES unsigned int
cf_target_lookup_bulk(void *h, const uint64_t *keys)
{
	struct cf_target *t = h;
	const uint64_t seed = t->seed;
	uint64_t hashes[BURST], mask;

	/* Hashed in place from the key array, so the loop vectorises. */
	for (unsigned int k = 0; k < BURST; k++)
		hashes[k] = XXH3_64bits_withSeed(&keys[k], sizeof(keys[k]),
			seed);
	return (unsigned int)cf_lookup_bulk(t->f, hashes, BURST, &mask, NULL);
}

static int
cf_target_del(void *h, uint64_t key)
{
	struct cf_target *t = h;

	return cf_delete_with_hash(t->f, cf_key_hash(t, key));
}

static uint64_t
cf_target_bytes(void *h)
{
	struct cf_stats st;

	cf_stats(((struct cf_target *)h)->f, &st);
	return st.table_bytes;
}

static void
cf_target_destroy(void *h)
{
	struct cf_target *t = h;

	cf_free(t->f);
	free(t);
}

static const struct target_ops cf_ops = {
	.create = cf_target_create,
	.add = cf_target_add,
	.lookup = cf_target_lookup,
	.lookup_bulk = cf_target_lookup_bulk,
	.del = cf_target_del,
	.bytes = cf_target_bytes,
	.destroy = cf_target_destroy,
};

/* rte_member, HT mode, not a cache: 16 x 16-bit signatures per bucket. */

static void *
member_create(uint64_t slots, unsigned int param)
{
	struct rte_member_parameters p = {
		.name = "bench_member",
		.type = RTE_MEMBER_TYPE_HT,
		.is_cache = 0,
		.num_keys = (uint32_t)slots,
		.key_len = sizeof(uint64_t),
		.prim_hash_seed = 1,
		.sec_hash_seed = 2,
		.socket_id = (int)rte_socket_id(),
	};

	(void)param;
	return rte_member_create(&p);
}

static int
member_add(void *h, uint64_t key)
{
	int ret = rte_member_add(h, &key, 1);

	return ret < 0 ? ret : 0;
}

static int
member_lookup(void *h, uint64_t key)
{
	member_set_t set;

	return rte_member_lookup(h, &key, &set);
}

static unsigned int
member_lookup_bulk(void *h, const uint64_t *keys)
{
	const void *ptrs[BURST];
	member_set_t sets[BURST];

	for (unsigned int k = 0; k < BURST; k++)
		ptrs[k] = &keys[k];
	return (unsigned int)rte_member_lookup_bulk(h, ptrs, BURST, sets);
}

static int
member_del(void *h, uint64_t key)
{
	return rte_member_delete(h, &key, 1);
}

static void
member_destroy(void *h)
{
	rte_member_free(h);
}

static const struct target_ops member_ops = {
	.create = member_create,
	.add = member_add,
	.lookup = member_lookup,
	.lookup_bulk = member_lookup_bulk,
	.del = member_del,
	.destroy = member_destroy,
};

/* rte_hash: an exact cuckoo hash table, 8-byte keys, no data. */

static void *
hash_create(uint64_t slots, unsigned int param)
{
	struct rte_hash_parameters p = {
		.name = "bench_hash",
		.entries = (uint32_t)slots,
		.key_len = sizeof(uint64_t),
		.hash_func = rte_hash_crc,
		.hash_func_init_val = 0,
		.socket_id = (int)rte_socket_id(),
	};

	(void)param;
	return rte_hash_create(&p);
}

static int
hash_add(void *h, uint64_t key)
{
	int ret = rte_hash_add_key(h, &key);

	return ret < 0 ? ret : 0;
}

static int
hash_lookup(void *h, uint64_t key)
{
	return rte_hash_lookup(h, &key) >= 0;
}

static unsigned int
hash_lookup_bulk(void *h, const uint64_t *keys)
{
	const void *ptrs[BURST];
	int32_t pos[BURST];
	unsigned int hits = 0;

	for (unsigned int k = 0; k < BURST; k++)
		ptrs[k] = &keys[k];
	rte_hash_lookup_bulk(h, ptrs, BURST, pos);
	for (unsigned int k = 0; k < BURST; k++)
		hits += pos[k] >= 0;
	return hits;
}

static int
hash_del(void *h, uint64_t key)
{
	return rte_hash_del_key(h, &key) >= 0 ? 0 : -ENOENT;
}

static void
hash_destroy(void *h)
{
	rte_hash_free(h);
}

static const struct target_ops hash_ops = {
	.create = hash_create,
	.add = hash_add,
	.lookup = hash_lookup,
	.lookup_bulk = hash_lookup_bulk,
	.del = hash_del,
	.destroy = hash_destroy,
};

struct target {
	const char *label;
	const struct target_ops *ops;
	unsigned int param;
};

#define CF_SEMISORT_PARAM 0x100

static const struct target side_by_side[] = {
	{ "CF12", &cf_ops, 12 },
	{ "ss-CF13", &cf_ops, 13 | CF_SEMISORT_PARAM },
	{ "rte_member", &member_ops, 0 },
	{ "rte_hash", &hash_ops, 0 },
};

/* ---------------------------------------------------- probe ceiling */

/* Random 64-byte reads, BURST independent addresses prefetched, then
 * read: the memory-level parallelism a bulk lookup can use. */
static double
probe_ceiling(uint64_t bytes, uint64_t reads)
{
	uint64_t lines = bytes / 64, rng = 7, sink = 0;
	uint8_t *buf;
	double t0, t;

	if (lines < BURST)
		lines = BURST;
	buf = aligned_alloc(64, lines * 64);
	if (buf == NULL)
		return 0;
	memset(buf, 1, lines * 64);
	t0 = now();
	for (uint64_t r = 0; r < reads; r += BURST) {
		uint64_t off[BURST];

		for (unsigned int k = 0; k < BURST; k++) {
			off[k] = (cfu_splitmix64(&rng) % lines) * 64;
			__builtin_prefetch(buf + off[k]);
		}
		for (unsigned int k = 0; k < BURST; k++)
			sink += buf[off[k]];
	}
	t = now() - t0;
	free(buf);
	if (sink == 0)
		printf("(probe sink)\n");
	return reads / t / 1e6;
}

/* ------------------------------------------------------------- table 3 */

static void
table3(unsigned int log2, uint64_t negatives, FILE *csv)
{
	static const struct { const char *label; unsigned int fp; bool ss; }
	rows[] = {
		{ "CF12", 12, false },
		{ "ss-CF13", 13, true },
		{ "CF16", 16, false },
	};
	uint64_t slots = UINT64_C(1) << log2;

	printf("\n## Paper Table 3 protocol: 2^%u slots, fill to the first "
		"failure (bulk adds of %d, hashing included)\n\n", log2, BURST);
	printf("| filter  | items (M) | load %%  | bits/item | FPR %%   | "
		"construction M/s |\n");
	printf("|---------|-----------|---------|-----------|---------|"
		"------------------|\n");
	for (unsigned int r = 0; r < 3; r++) {
		struct cf_filter *f = cf_create(&(struct cf_params){
			.capacity = (uint64_t)(slots * 0.95),
			.fp_bits = rows[r].fp,
			.table = rows[r].ss ? CF_TABLE_SEMISORT :
				CF_TABLE_PLAIN,
			.seed = KEY_SEED,
		});
		uint64_t rng = KEY_SEED, qrng = ~KEY_SEED, fp = 0;
		struct cf_stats st;
		double t0, t;

		if (f == NULL) {
			printf("| %s: cf_create: %s |\n", rows[r].label,
				strerror(errno));
			continue;
		}
		t0 = now();
		for (;;) {
			uint64_t h[BURST], added;

			for (unsigned int k = 0; k < BURST; k++) {
				uint64_t key = cfu_splitmix64(&rng);

				h[k] = XXH3_64bits_withSeed(&key, sizeof(key),
					KEY_SEED);
			}
			cf_add_bulk(f, h, NULL, BURST, &added);
			cf_stats(f, &st);
			if (st.stash_used != 0 || added != UINT64_MAX >> 32)
				break;
		}
		t = now() - t0;
		for (uint64_t q = 0; q < negatives; q += BURST) {
			uint64_t h[BURST], mask;

			for (unsigned int k = 0; k < BURST; k++) {
				uint64_t key = cfu_splitmix64(&qrng);

				h[k] = XXH3_64bits_withSeed(&key, sizeof(key),
					KEY_SEED);
			}
			fp += (uint64_t)cf_lookup_bulk(f, h, BURST, &mask,
				NULL);
		}
		printf("| %-7s | %9.2f | %7.2f | %9.2f | %7.4f | %16.2f |\n",
			rows[r].label, st.items / 1e6, 100 * st.load_factor,
			st.bits_per_item, 100.0 * fp / negatives,
			st.items / t / 1e6);
		if (csv != NULL)
			fprintf(csv, "table3,%u,%s,%" PRIu64 ",%.4f,%.4f,%.6f,"
				"%.4f\n", log2, rows[r].label, st.items,
				st.load_factor, st.bits_per_item,
				(double)fp / negatives, st.items / t / 1e6);
		cf_free(f);
	}
}

/* -------------------------------------------------------- side by side */

struct queries {
	uint64_t *keys[NB_MIXES];
	uint64_t n;
};

/* Positives are drawn from keys every target stored (the first 90% of
 * the slots); negatives from a disjoint stream. */
static void
queries_build(struct queries *q, const uint64_t *keys, uint64_t stored,
		uint64_t n)
{
	uint64_t rng = 99, neg = UINT64_C(0xdeadbeef);

	q->n = n;
	for (unsigned int m = 0; m < NB_MIXES; m++) {
		q->keys[m] = xmalloc(n * sizeof(uint64_t));
		for (uint64_t i = 0; i < n; i++)
			q->keys[m][i] = cfu_splitmix64(&rng) % 100 < mixes[m] ?
				keys[cfu_splitmix64(&rng) % stored] :
				cfu_splitmix64(&neg) | (UINT64_C(1) << 63);
	}
}

static void
side(unsigned int log2, const struct options *o, FILE *csv)
{
	uint64_t slots = UINT64_C(1) << log2;
	uint64_t *keys = xmalloc(slots * sizeof(uint64_t));
	uint64_t rng = KEY_SEED;
	struct queries q;
	double ceiling;

	/* Distinct keys (top bit clear; negatives have it set). */
	for (uint64_t i = 0; i < slots; i++)
		keys[i] = cfu_splitmix64(&rng) & ~(UINT64_C(1) << 63);
	queries_build(&q, keys, (uint64_t)(slots * 0.9), o->queries);
	ceiling = probe_ceiling(slots * 12 / 8, 32u << 20) / 2;

	printf("\n## 2^%u slots: side by side (M ops/s, median of %u)\n\n",
		log2, o->reps);
	printf("Probe ceiling over %.1f MiB (2 random lines per lookup, 32 "
		"in flight): %.1f M lookups/s\n\n", slots * 12 / 8 / 1048576.0,
		ceiling);
	printf("| target     | load %% | bits/item | insert | delete | FPR %%  "
		"| single 0/25/50/75/100 %%        | bulk32 0/25/50/75/100 %%  "
		"       |\n");
	printf("|------------|--------|-----------|--------|--------|--------"
		"|--------------------------------|------------------------"
		"--------|\n");
	if (csv != NULL)
		fprintf(csv, "ceiling,%u,probe,%.3f\n", log2, ceiling);

	for (unsigned int t = 0; t < sizeof(side_by_side) /
			sizeof(side_by_side[0]); t++) {
		const struct target *tg = &side_by_side[t];
		uint64_t heap0 = heap_bytes(), n = 0, fp = 0, bytes;
		double single[NB_MIXES], bulk[NB_MIXES], ins, del, t0;
		void *h = tg->ops->create(slots, tg->param);

		if (h == NULL) {
			printf("| %-10s | create failed: %s |\n", tg->label,
				strerror(errno));
			continue;
		}
		bytes = tg->ops->bytes != NULL ? tg->ops->bytes(h) :
			heap_bytes() - heap0;
		t0 = now();
		while (n < slots) {
			int ret = tg->ops->add(h, keys[n]);

			if (ret < 0)
				break;
			n++;
			if (ret == 1)
				break;
		}
		ins = n / (now() - t0) / 1e6;
		if (n < (uint64_t)(slots * 0.9)) {
			printf("| %-10s | filled only %" PRIu64 " |\n",
				tg->label, n);
			tg->ops->destroy(h);
			continue;
		}

		for (unsigned int m = 0; m < NB_MIXES; m++) {
			double rs[16], rb[16];

			for (unsigned int r = 0; r < o->reps; r++) {
				uint64_t hits = 0;

				t0 = now();
				for (uint64_t i = 0; i < q.n; i++)
					hits += tg->ops->lookup(h, q.keys[m][i]);
				rs[r] = q.n / (now() - t0) / 1e6;
				if (m == 0)
					fp = hits;
				t0 = now();
				for (uint64_t i = 0; i + BURST <= q.n; i += BURST)
					hits += tg->ops->lookup_bulk(h,
						&q.keys[m][i]);
				rb[r] = q.n / (now() - t0) / 1e6;
			}
			single[m] = median(rs, o->reps);
			bulk[m] = median(rb, o->reps);
		}

		/* Delete a tenth of what was stored. */
		t0 = now();
		for (uint64_t i = 0; i < n / 10; i++)
			tg->ops->del(h, keys[i]);
		del = n / 10 / (now() - t0) / 1e6;

		printf("| %-10s | %6.2f | %9.2f | %6.2f | %6.2f | %6.3f | "
			"%5.1f %5.1f %5.1f %5.1f %5.1f | %5.1f %5.1f %5.1f "
			"%5.1f %5.1f |\n", tg->label, 100.0 * n / slots,
			bytes * 8.0 / n, ins, del, 100.0 * fp / q.n,
			single[0], single[1], single[2], single[3], single[4],
			bulk[0], bulk[1], bulk[2], bulk[3], bulk[4]);
		if (csv != NULL)
			for (unsigned int m = 0; m < NB_MIXES; m++)
				fprintf(csv, "side,%u,%s,%u,%.3f,%.3f,%.4f,"
					"%.3f,%.3f,%.6f\n", log2, tg->label,
					mixes[m], single[m], bulk[m],
					bytes * 8.0 / n, ins, del,
					(double)fp / q.n);
		tg->ops->destroy(h);
	}
	for (unsigned int m = 0; m < NB_MIXES; m++)
		free(q.keys[m]);
	free(keys);
}

/* ---------------------------------------------------------------- scan */

static uint64_t
scan_none(uint32_t first, const uint64_t *values, uint64_t used,
		unsigned int n, void *arg)
{
	uint64_t *seen = arg;

	(void)first;
	(void)values;
	(void)n;
	*seen += (uint64_t)__builtin_popcountll(used);
	return 0;
}

/*
 * The expiry sweep's scan, nothing due: cf_scan_batch() (every item to
 * the callback) against cf_scan_due() (SWAR skip), ns per bucket, over a
 * 95% full table of 16-bit fingerprints and 16-bit values whose stamps
 * (bits 3..15, as lib/cflow's) are all younger than min_age; plain and
 * interleaved layouts.
 */
static void
scan_section(unsigned int log2, unsigned int reps, FILE *csv)
{
	static const enum cf_table_type types[] = { CF_TABLE_PLAIN,
		CF_TABLE_INTERLEAVED };

	printf("\n## Sweep scan, 2^%u slots, 16/16 bits, 95%% full, nothing "
		"due (ns per bucket, median of %u)\n\n"
		"| layout | cf_scan_batch | cf_scan_due | ratio |\n"
		"|---|---:|---:|---:|\n", log2, reps);
	for (unsigned int ti = 0; ti < 2; ti++) {
		struct cf_params p = { .capacity = UINT64_C(1) << log2,
			.fp_bits = 16, .value_bits = 16, .table = types[ti],
			.seed = 3, .exact_size = true };
		struct cf_filter *f = cf_create(&p);
		struct cf_scan_due due = { .shift = 3, .bits = 13,
			.now = 5000, .min_age = 1000 };
		double t_all[16], t_due[16];
		uint64_t rng = 1, seen = 0, cursor = 0;
		struct cf_stats st;

		if (f == NULL) {
			printf("| %s | cf_create: %s | | |\n",
				ti ? "interleaved" : "plain", strerror(errno));
			continue;
		}
		cf_stats(f, &st);
		while ((double)st.items < 0.95 * (double)st.slots) {
			/* stamps 4001..5000: ages below 1000 */
			uint64_t v = (4001 + cfu_splitmix64(&rng) % 1000) << 3;

			if (cf_add_with_hash(f, cfu_splitmix64(&rng), v,
					NULL) != 0)
				break;
			st.items++;
		}
		cf_stats(f, &st);
		/* passes enough for 0.1 s a figure at any size */
		uint64_t passes = 1 + (UINT64_C(1) << 24) / st.buckets;

		for (unsigned int r = 0; r < reps; r++) {
			double t0 = now();

			for (uint64_t k = 0; k < passes; k++)
				cf_scan_batch(f, &cursor, st.buckets,
					scan_none, &seen);
			t_all[r] = (now() - t0) * 1e9 / (double)st.buckets /
				(double)passes;
			t0 = now();
			for (uint64_t k = 0; k < passes; k++)
				if (cf_scan_due(f, &cursor, st.buckets, &due,
						scan_none, &seen) != 0)
					abort();
			t_due[r] = (now() - t0) * 1e9 / (double)st.buckets /
				(double)passes;
		}
		double a = median(t_all, reps), d = median(t_due, reps);

		printf("| %s | %.2f | %.2f | %.1fx |\n",
			ti ? "interleaved" : "plain", a, d, a / d);
		if (csv != NULL)
			fprintf(csv, "scan,%u,%s,%.4f,%.4f,,,,,\n", log2,
				ti ? "interleaved" : "plain", a, d);
		cf_free(f);
	}
}

/* -------------------------------------------------------------- widths */

/* A table of the fingerprint-width comparison. */
struct width_target {
	const char *label;
	unsigned int fp_bits;
	unsigned int value_bits;
	enum cf_table_type table;
};

static const struct width_target width_targets[] = {
	{ "plain 16", 16, 0, CF_TABLE_PLAIN },
	{ "plain 32", 32, 0, CF_TABLE_PLAIN },
	{ "interleaved 16/16", 16, 16, CF_TABLE_INTERLEAVED },
	{ "interleaved 32/32", 32, 32, CF_TABLE_INTERLEAVED },
};

#define NB_WIDTH_TARGETS 4
#define NB_WIDTH_OPS 4

static const char *const width_ops[NB_WIDTH_OPS] = {
	"per key", "per key, position", "bulk32", "bulk32, values",
};

/* ns per lookup of one operation over @p q pre-hashed queries (a
 * function of its own: inlined, its loops took the caller's registers). */
static __attribute__((noinline)) double
width_run(struct cf_filter *f, unsigned int op, const uint64_t *q,
		uint64_t n, uint64_t *sink)
{
	uint64_t hits = 0;
	double t0 = cpu_now();

	for (uint64_t i = 0; i + BURST <= n; i += BURST) {
		uint32_t pos[BURST];
		uint64_t mask, values[BURST];

		switch (op) {
		case 0:
			for (unsigned int k = 0; k < BURST; k++)
				hits += (uint64_t)cf_lookup_with_hash(f,
					q[i + k], NULL);
			break;
		case 1:
			for (unsigned int k = 0; k < BURST; k++)
				hits += (uint64_t)cf_lookup_with_hash(f,
					q[i + k], &pos[k]);
			break;
		case 2:
			hits += (uint64_t)cf_lookup_bulk(f, &q[i], BURST, &mask,
				NULL);
			break;
		default:
			hits += (uint64_t)cf_lookup_bulk_values(f, &q[i], BURST,
				&mask, pos, values);
		}
	}
	*sink += hits;
	return (cpu_now() - t0) * 1e9 / (double)(n / BURST * BURST);
}

/*
 * The cost of a lookup by fingerprint width: 16 against 32 bits (the
 * firewall's default), plain tables and interleaved ones with values (the
 * tracker's), 4 slots, filled to 95%, pre-hashed queries (no key hashing)
 * at 0, 50 and 100% positive; the targets take turns within each round,
 * each round starting at the next one; median ns per lookup of --reps
 * rounds, in this thread's CPU time (cpu_now(): a loaded machine's other
 * jobs holding the core are not counted).
 */
static void
widths_section(unsigned int log2, const struct options *o, FILE *csv)
{
	static const unsigned int wmix[3] = { 0, 50, 100 };
	struct cf_filter *f[NB_WIDTH_TARGETS];
	uint64_t n = o->queries, stored, rng = 21, sink = 0;
	uint64_t *keys, *q[3];
	double t[NB_WIDTH_TARGETS][3][NB_WIDTH_OPS][16];

	stored = (uint64_t)((UINT64_C(1) << log2) * 0.95);
	keys = xmalloc(stored * sizeof(*keys));
	for (uint64_t k = 0; k < stored; k++)
		keys[k] = cfu_splitmix64(&rng);
	for (unsigned int m = 0; m < 3; m++) {
		q[m] = xmalloc(n * sizeof(*q[m]));
		for (uint64_t i = 0; i < n; i++)
			q[m][i] = cfu_splitmix64(&rng) % 100 < wmix[m] ?
				keys[cfu_splitmix64(&rng) % stored] :
				cfu_splitmix64(&rng);
	}
	for (unsigned int ti = 0; ti < NB_WIDTH_TARGETS; ti++) {
		const struct width_target *w = &width_targets[ti];

		f[ti] = cf_create(&(struct cf_params){
			.capacity = stored, .fp_bits = w->fp_bits,
			.value_bits = w->value_bits, .table = w->table,
			.seed = 5 });
		if (f[ti] == NULL) {
			fprintf(stderr, "bench_filter: cf_create: %s\n",
				strerror(errno));
			exit(1);
		}
		for (uint64_t k = 0; k < stored; k++)
			if (cf_add_with_hash(f[ti], keys[k], k, NULL) != 0) {
				fprintf(stderr, "bench_filter: %s: full at "
					"%" PRIu64 "\n", w->label, k);
				exit(1);
			}
	}
	for (unsigned int r = 0; r < o->reps; r++)
		for (unsigned int j = 0; j < NB_WIDTH_TARGETS; j++) {
			unsigned int ti = (r + j) % NB_WIDTH_TARGETS;

			/* its table back in the caches first */
			(void)width_run(f[ti], 2, q[1], n, &sink);
			for (unsigned int m = 0; m < 3; m++)
				for (unsigned int op = 0; op < NB_WIDTH_OPS; op++)
					t[ti][m][op][r] = width_run(f[ti], op,
						q[m], n, &sink);
		}
	printf("\n## Fingerprint widths, 2^%u slots, 95%% full, ns per "
		"lookup, CPU time (median of %u rounds; ratio 32 / 16 bits)\n\n"
		"| table | lookup | 0%% 16 | 0%% 32 | ratio | 50%% 16 | 50%% 32 | "
		"ratio | 100%% 16 | 100%% 32 | ratio |\n"
		"|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		log2, o->reps);
	for (unsigned int ti = 0; ti < NB_WIDTH_TARGETS; ti += 2)
		for (unsigned int op = 0; op < NB_WIDTH_OPS; op++) {
			if (op == 3 && width_targets[ti].value_bits == 0)
				continue;
			printf("| %s | %s |", ti == 0 ? "plain" :
				"interleaved", width_ops[op]);
			for (unsigned int m = 0; m < 3; m++) {
				double a = median(t[ti][m][op], o->reps);
				double b = median(t[ti + 1][m][op], o->reps);

				printf(" %.2f | %.2f | %.2fx |", a, b, b / a);
				if (csv != NULL)
					fprintf(csv, "widths,%u,%s,%u,%s,%.4f,"
						"%.4f,,,\n", log2, ti == 0 ?
						"plain" : "interleaved", wmix[m],
						width_ops[op], a, b);
			}
			printf("\n");
		}
	printf("\n(checksum %" PRIu64 ")\n", sink);
	for (unsigned int ti = 0; ti < NB_WIDTH_TARGETS; ti++)
		cf_free(f[ti]);
	for (unsigned int m = 0; m < 3; m++)
		free(q[m]);
	free(keys);
}

/* --------------------------------------------------------------- main */

static void
usage(const char *prog)
{
	printf("usage: %s [--quick] [--sizes L1,L2,...] [--table3 L] "
		"[--reps N] [--queries N] [--scan] [--widths] [--csv FILE]\n"
		"  --quick      2^16 and 2^20 slots, 1 M queries (~20 s)\n"
		"  --sizes      log2 of slot counts for the side-by-side runs "
		"(default 16,25,26)\n"
		"  --table3     log2 of slots for the Table 3 runs "
		"(default 26)\n"
		"  --reps       repetitions per lookup figure (default 3)\n"
		"  --queries    queries per mix (default 4194304)\n"
		"  --scan       only the sweep's scan: cf_scan_batch against "
		"cf_scan_due\n"
		"               at each size\n"
		"  --widths     only lookups by fingerprint width, 16 against "
		"32 bits, at\n"
		"               each size\n"
		"  --csv        also write the figures as CSV\n", prog);
}

static int
parse_sizes(const char *s, struct options *o)
{
	char *end;

	o->nb_sizes = 0;
	while (*s != '\0' && o->nb_sizes < MAX_SIZES) {
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || v < 10 || v > 30)
			return -1;
		o->sizes[o->nb_sizes++] = (unsigned int)v;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0')
			return -1;
	}
	return o->nb_sizes == 0 ? -1 : 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "sizes", required_argument, NULL, 's' },
		{ "table3", required_argument, NULL, 't' },
		{ "reps", required_argument, NULL, 'r' },
		{ "queries", required_argument, NULL, 'n' },
		{ "csv", required_argument, NULL, 'c' },
		{ "scan", no_argument, NULL, 'S' },
		{ "widths", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = {
		.sizes = { 16, 25, 26 }, .nb_sizes = 3, .table3_log2 = 26,
		.reps = 3, .queries = 4u << 20,
	};
	char prefix[64];
	char *eal_argv[] = { argv[0], "--no-huge", "-m", "8192", "--no-pci",
		"--no-telemetry", "--log-level=lib.*:error", prefix, NULL };
	FILE *csv = NULL;
	bool scan_only = false, widths_only = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'q':
			o.sizes[0] = 16;
			o.sizes[1] = 20;
			o.nb_sizes = 2;
			o.table3_log2 = 20;
			o.queries = 1u << 20;
			break;
		case 's':
			if (parse_sizes(optarg, &o) != 0) {
				fprintf(stderr, "bench_filter: --sizes %s: "
					"want a list of 10..30\n", optarg);
				return 2;
			}
			break;
		case 't':
			o.table3_log2 = (unsigned int)atoi(optarg);
			if (o.table3_log2 < 10 || o.table3_log2 > 30) {
				fprintf(stderr, "bench_filter: --table3 %s: "
					"want 10..30\n", optarg);
				return 2;
			}
			break;
		case 'r':
			o.reps = (unsigned int)atoi(optarg);
			if (o.reps < 1 || o.reps > 16) {
				fprintf(stderr, "bench_filter: --reps %s: "
					"want 1..16\n", optarg);
				return 2;
			}
			break;
		case 'n':
			o.queries = strtoull(optarg, NULL, 10);
			if (o.queries < BURST) {
				fprintf(stderr, "bench_filter: --queries %s: "
					"want at least %d\n", optarg, BURST);
				return 2;
			}
			break;
		case 'c':
			csv = fopen(optarg, "w");
			if (csv == NULL) {
				fprintf(stderr, "bench_filter: --csv %s: %s\n",
					optarg, strerror(errno));
				return 2;
			}
			fprintf(csv, "section,log2,target,a,b,c,d,e,f,g\n");
			break;
		case 'S':
			scan_only = true;
			break;
		case 'W':
			widths_only = true;
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			usage(argv[0]);
			return 2;
		}
	}

	setvbuf(stdout, NULL, _IOLBF, 0); /* progress when redirected */
	snprintf(prefix, sizeof(prefix), "--file-prefix=cfbench%d",
		(int)getpid());
	if (rte_eal_init(8, eal_argv) < 0) {
		fprintf(stderr, "bench_filter: rte_eal_init: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	printf("# bench_filter: lib/cuckoo vs rte_member (HT) vs rte_hash\n");
	if (scan_only) {
		for (unsigned int s = 0; s < o.nb_sizes; s++)
			scan_section(o.sizes[s], o.reps, csv);
	} else if (widths_only) {
		for (unsigned int s = 0; s < o.nb_sizes; s++)
			widths_section(o.sizes[s], &o, csv);
	} else {
		table3(o.table3_log2, o.queries * 4, csv);
		for (unsigned int s = 0; s < o.nb_sizes; s++)
			side(o.sizes[s], &o, csv);
	}
	if (csv != NULL)
		fclose(csv);
	rte_eal_cleanup();
	return 0;
}
