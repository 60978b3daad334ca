/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Top sources of new flows (lib/cflow/cflow_topk.h): Space-Saving's
 * guarantees checked against exact counts, on exact, adversarial and
 * random streams, through merges and resets. --slow: a million new
 * flows from a Zipf mix of 100 000 hosts and planted scanners, split
 * over 1 to 4 workers' sketches and merged.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "cflow_topk.h"
#include "test.h"

/* Hosts: an id, even ids IPv4 10.x.y.z, odd ones IPv6 2001:db8::id. */
#define MAX_HOSTS (1u << 17)
#define MAX_M 4096
#define PARTS 4

static uint64_t truth[PARTS + 1][MAX_HOSTS]; /* [PARTS]: the union */
static struct cflow_topk_entry ents[MAX_M];
static int nents; /* entries check_sketch() listed */
static uint8_t listed[MAX_HOSTS];

static void
host_addr(uint32_t h, uint8_t *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (h & 1) {
		*family = 6;
		addr[0] = 0x20;
		addr[1] = 0x01;
		addr[2] = 0x0d;
		addr[3] = 0xb8;
		addr[13] = (uint8_t)(h >> 16);
		addr[14] = (uint8_t)(h >> 8);
		addr[15] = (uint8_t)h;
	} else {
		*family = 4;
		addr[0] = 10;
		addr[1] = (uint8_t)(h >> 16);
		addr[2] = (uint8_t)(h >> 8);
		addr[3] = (uint8_t)h;
	}
}

/* The host of an entry, UINT32_MAX if it is none of ours. */
static uint32_t
host_of(const struct cflow_topk_entry *e)
{
	uint8_t family, addr[16];
	uint32_t h;

	if (e->family == 6)
		h = (uint32_t)e->addr[13] << 16 | e->addr[14] << 8 |
			e->addr[15];
	else
		h = (uint32_t)e->addr[1] << 16 | e->addr[2] << 8 | e->addr[3];
	if (h >= MAX_HOSTS)
		return UINT32_MAX;
	host_addr(h, &family, addr);
	if (family != e->family || memcmp(addr, e->addr, 16) != 0)
		return UINT32_MAX;
	return h;
}

static void
clear_truth(void)
{
	memset(truth, 0, sizeof(truth));
}

/* One new flow from host @p h into sketch @p s, counted in part @p part
 * and in the union. */
static int
feed(struct cflow_topk *s, unsigned int part, uint32_t h)
{
	uint8_t family, addr[16];

	host_addr(h, &family, addr);
	truth[part][h]++;
	if (part != PARTS)
		truth[PARTS][h]++;
	return cflow_topk_add(s, family, addr);
}

static struct cflow_topk *
sketch(uint32_t m)
{
	return cflow_topk_create(&(struct cflow_topk_params){
		.capacity = m });
}

/*
 * Every guarantee of @p s against @p t (exact counts of @p hosts hosts,
 * @p n additions): total, each entry's bounds, order, the floor (<= n/m,
 * >= every error and every true count not monitored), the counts' sum
 * (== n, or <= n after a merge). With @p exact, no error at all.
 */
static int
check_sketch(const struct cflow_topk *s, const uint64_t *t, uint32_t hosts,
		bool merged, bool exact)
{
	uint32_t m = cflow_topk_capacity(s);
	uint64_t floor = cflow_topk_floor(s), sum = 0, n = 0;
	int k;

	for (uint32_t h = 0; h < hosts; h++)
		n += t[h];
	TEST_ASSERT(m <= MAX_M, "m %u", m);
	TEST_ASSERT_EQ(cflow_topk_total(s), n, "total %lu, truth %lu",
		cflow_topk_total(s), n);
	TEST_ASSERT(floor * m <= n, "floor %lu, n %lu, m %u", floor, n, m);
	k = cflow_topk_list(s, ents, m);
	TEST_ASSERT(k >= 0 && (uint32_t)k <= m, "k %d", k);
	nents = k;
	memset(listed, 0, hosts);
	for (int i = 0; i < k; i++) {
		const struct cflow_topk_entry *e = &ents[i];
		uint32_t h = host_of(e);

		TEST_ASSERT(h < hosts, "entry %d: not a host", i);
		TEST_ASSERT(!listed[h], "host %u listed twice", h);
		listed[h] = 1;
		TEST_ASSERT(e->count >= 1 && e->error < e->count,
			"host %u: count %lu, error %lu", h, e->count,
			e->error);
		TEST_ASSERT(e->count - e->error <= t[h] && t[h] <= e->count,
			"host %u: true %lu not in [%lu, %lu]", h, t[h],
			e->count - e->error, e->count);
		TEST_ASSERT(e->error <= floor, "host %u: error %lu > floor "
			"%lu", h, e->error, floor);
		TEST_ASSERT(!exact || e->error == 0, "host %u: error %lu",
			h, e->error);
		if (i > 0)
			TEST_ASSERT(ents[i - 1].count > e->count ||
				(ents[i - 1].count == e->count &&
				 ents[i - 1].error <= e->error),
				"entry %d out of order", i);
		sum += e->count;
	}
	TEST_ASSERT(merged ? sum <= n : sum == n, "sum %lu, n %lu", sum, n);
	for (uint32_t h = 0; h < hosts; h++)
		TEST_ASSERT(listed[h] || t[h] <= floor,
			"host %u: true %lu > floor %lu, not monitored", h,
			t[h], floor);
	return 0;
}

/* The list of @p s's top @p n: each guaranteed entry is truly among the
 * top n: above every host not listed. */
static int
check_guaranteed(const struct cflow_topk *s, const uint64_t *t,
		uint32_t hosts, unsigned int n, unsigned int *nguaranteed)
{
	uint64_t best_unlisted = 0;
	int k = cflow_topk_list(s, ents, n);

	TEST_ASSERT(k >= 0 && (unsigned int)k <= n, "k %d", k);
	memset(listed, 0, hosts);
	for (int i = 0; i < k; i++)
		listed[host_of(&ents[i])] = 1;
	for (uint32_t h = 0; h < hosts; h++)
		if (!listed[h] && t[h] > best_unlisted)
			best_unlisted = t[h];
	*nguaranteed = 0;
	for (int i = 0; i < k; i++) {
		uint32_t h = host_of(&ents[i]);

		if (!ents[i].guaranteed)
			continue;
		(*nguaranteed)++;
		TEST_ASSERT(t[h] > best_unlisted, "host %u guaranteed, true "
			"%lu, a host not listed %lu", h, t[h],
			best_unlisted);
	}
	return 0;
}

/* ------------------------------------------------------------ streams */

/* Zipf(@p s) over @p hosts: cdf[i] = P(rank <= i). */
static double *
zipf_cdf(uint32_t hosts, double s)
{
	double *cdf = malloc(hosts * sizeof(*cdf)), sum = 0;

	if (cdf == NULL)
		return NULL;
	for (uint32_t i = 0; i < hosts; i++)
		cdf[i] = sum += pow(i + 1, -s);
	for (uint32_t i = 0; i < hosts; i++)
		cdf[i] /= sum;
	return cdf;
}

static double
uniform01(uint64_t *x)
{
	return (double)(cfu_splitmix64(x) >> 11) * 0x1p-53;
}

static uint32_t
zipf_draw(const double *cdf, uint32_t hosts, uint64_t *x)
{
	double u = uniform01(x);
	uint32_t lo = 0, hi = hosts - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* -------------------------------------------------------------- cases */

static int
test_topk_params(void)
{
	struct cflow_topk *s;
	uint8_t a[16] = { 10, 0, 0, 1 };

	TEST_ASSERT(cflow_topk_memsize(0) ==
		cflow_topk_memsize(CFLOW_TOPK_CAPACITY_DEFAULT), "default");
	TEST_ASSERT(cflow_topk_memsize(1024) <= 1024 * 96 + 256,
		"%zu bytes", cflow_topk_memsize(1024));
	TEST_ASSERT_EQ(cflow_topk_memsize(CFLOW_TOPK_CAPACITY_MAX + 1), 0,
		"too large");
	errno = 0;
	s = sketch(CFLOW_TOPK_CAPACITY_MAX + 1);
	TEST_ASSERT(s == NULL && errno == EINVAL, "capacity over the max");
	s = cflow_topk_create(&(struct cflow_topk_params){
		.allocator = &(struct cf_allocator){ NULL, NULL, NULL } });
	TEST_ASSERT(s == NULL && errno == EINVAL, "allocator without hooks");

	s = cflow_topk_create(NULL);
	TEST_ASSERT(s != NULL, "defaults");
	TEST_ASSERT_EQ(cflow_topk_capacity(s), CFLOW_TOPK_CAPACITY_DEFAULT,
		"capacity");
	TEST_ASSERT_EQ(cflow_topk_add(s, 5, a), -EINVAL, "family 5");
	TEST_ASSERT_EQ(cflow_topk_add(s, 0, a), -EINVAL, "family 0");
	TEST_ASSERT_EQ(cflow_topk_add(s, 4, NULL), -EINVAL, "NULL address");
	TEST_ASSERT_EQ(cflow_topk_add(NULL, 4, a), -EINVAL, "NULL sketch");
	TEST_ASSERT_EQ(cflow_topk_total(s), 0, "nothing counted");
	TEST_ASSERT_EQ(cflow_topk_list(s, ents, 8), 0, "empty");
	TEST_ASSERT_EQ(cflow_topk_list(s, NULL, 0), 0, "n 0");
	TEST_ASSERT_EQ(cflow_topk_list(s, NULL, 1), -EINVAL, "NULL out");
	TEST_ASSERT_EQ(cflow_topk_list(NULL, ents, 1), -EINVAL, "NULL");
	TEST_ASSERT_EQ(cflow_topk_merge(s, s), -EINVAL, "itself");
	TEST_ASSERT_EQ(cflow_topk_merge(s, NULL), -EINVAL, "NULL src");
	cflow_topk_free(s);
	cflow_topk_free(NULL);
	return 0;
}

/* An allocator that counts what it holds. */
static size_t held;

static void *
counting_alloc(size_t size, size_t align, int socket_id, void *ctx)
{
	void *p;

	(void)socket_id;
	(void)ctx;
	if (posix_memalign(&p, align, size) != 0)
		return NULL;
	held += size;
	return p;
}

static void
counting_free(void *ptr, size_t size, void *ctx)
{
	(void)ctx;
	held -= size;
	free(ptr);
}

static int
test_topk_allocator(void)
{
	struct cf_allocator a = { counting_alloc, counting_free, NULL };
	struct cflow_topk *s;

	s = cflow_topk_create(&(struct cflow_topk_params){
		.capacity = 100, .allocator = &a });
	TEST_ASSERT(s != NULL, "create");
	TEST_ASSERT_EQ(held, cflow_topk_memsize(100), "held %zu", held);
	for (uint32_t i = 0; i < 1000; i++)
		TEST_ASSERT_EQ(feed(s, 0, i % 300), 0, "add");
	TEST_ASSERT_EQ(held, cflow_topk_memsize(100), "no allocation on add");
	cflow_topk_free(s);
	TEST_ASSERT_EQ(held, 0, "freed");
	return 0;
}

/* At most m distinct sources: every count exact, in order. */
static int
test_topk_exact(void)
{
	static const uint32_t caps[] = { 1, 2, 7, 64, 1000 };

	for (unsigned int c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		uint32_t m = caps[c], hosts = m;
		uint64_t x = 17 + c;
		struct cflow_topk *s = sketch(m);

		TEST_ASSERT(s != NULL, "create %u", m);
		clear_truth();
		for (uint32_t i = 0; i < 20 * m; i++) {
			/* skewed: low ids more often */
			uint32_t h = (uint32_t)(cfu_splitmix64(&x) % hosts);

			h = (uint32_t)(cfu_splitmix64(&x) % (h + 1));
			TEST_ASSERT_EQ(feed(s, 0, h), 0, "add");
		}
		if (check_sketch(s, truth[0], hosts, false, true) != 0)
			return -1;
		for (uint32_t h = 0; h < hosts; h++)
			TEST_ASSERT(truth[0][h] == 0 || listed[h],
				"m %u: host %u missing", m, h);
		cflow_topk_free(s);
	}
	return 0;
}

/* IPv4 a.b.c.d and the IPv6 address of the same first bytes are two
 * addresses; an IPv4 address passed with other bytes after its 4 is the
 * same IPv4 address, listed with those bytes zero. */
static int
test_topk_families_apart(void)
{
	uint8_t v4[16] = { 192, 0, 2, 1 }, v4junk[16];
	uint8_t v6[16] = { 192, 0, 2, 1 };
	struct cflow_topk *s = sketch(8);
	int k;

	TEST_ASSERT(s != NULL, "create");
	memset(v4junk, 0xa5, sizeof(v4junk));
	memcpy(v4junk, v4, 4);
	for (int i = 0; i < 3; i++)
		TEST_ASSERT_EQ(cflow_topk_add(s, 4, v4), 0, "v4");
	for (int i = 0; i < 2; i++)
		TEST_ASSERT_EQ(cflow_topk_add(s, 4, v4junk), 0, "v4 junk");
	for (int i = 0; i < 4; i++)
		TEST_ASSERT_EQ(cflow_topk_add(s, 6, v6), 0, "v6");
	k = cflow_topk_list(s, ents, 8);
	TEST_ASSERT_EQ(k, 2, "two addresses, %d", k);
	TEST_ASSERT(ents[0].family == 4 && ents[0].count == 5 &&
		ents[0].error == 0 && memcmp(ents[0].addr, v4, 16) == 0,
		"IPv4 first: count %lu", ents[0].count);
	TEST_ASSERT(ents[1].family == 6 && ents[1].count == 4 &&
		ents[1].error == 0 && memcmp(ents[1].addr, v6, 16) == 0,
		"IPv6: count %lu", ents[1].count);
	TEST_ASSERT(ents[0].guaranteed && ents[1].guaranteed, "exact");
	cflow_topk_free(s);
	return 0;
}

/*
 * Adversarial streams, each against the bounds: churn over m + 1 hosts
 * (every addition evicts), a heavy host between fresh ones, heavy hosts
 * buried under a run of singletons, a staircase up then down.
 */
static int
test_topk_adversarial(void)
{
	static const uint32_t caps[] = { 1, 2, 8, 16 };

	for (unsigned int c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		uint32_t m = caps[c], next;
		struct cflow_topk *s = sketch(m);

		TEST_ASSERT(s != NULL, "create");
		for (int kind = 0; kind < 4; kind++) {
			cflow_topk_reset(s);
			clear_truth();
			next = 1000;
			switch (kind) {
			case 0:
				for (uint32_t i = 0; i < 50 * (m + 1); i++)
					feed(s, 0, i % (m + 1));
				break;
			case 1:
				for (uint32_t i = 0; i < 200 * m; i++) {
					feed(s, 0, 0);
					feed(s, 0, next++);
				}
				break;
			case 2:
				for (uint32_t h = 0; h < m; h++)
					for (int i = 0; i < 100; i++)
						feed(s, 0, h);
				for (uint32_t i = 0; i < 300 * m; i++)
					feed(s, 0, next++);
				for (uint32_t h = 0; h < m; h++)
					feed(s, 0, h);
				break;
			case 3:
				for (uint32_t h = 0; h < 4 * m; h++)
					for (uint32_t i = 0; i <= h; i++)
						feed(s, 0, h);
				for (uint32_t h = 4 * m; h-- > 0;)
					for (uint32_t i = 0; i <= h; i++)
						feed(s, 0, 100 + h);
				break;
			}
			if (check_sketch(s, truth[0], next, false, false) != 0) {
				printf("# m %u, stream %d\n", m, kind);
				return -1;
			}
		}
		cflow_topk_free(s);
	}
	return 0;
}

/* Random streams: uniform and Zipf(0.8, 1.1, 1.5), several capacities. */
static int
test_topk_random(void)
{
	static const uint32_t caps[] = { 1, 3, 16, 100, 512 };
	static const double zipf_s[] = { 0.8, 1.1, 1.5 };
	const uint32_t hosts = 50000, n = 50000;
	double *cdf[3];
	uint64_t x = 42;

	for (int z = 0; z < 3; z++) {
		cdf[z] = zipf_cdf(hosts, zipf_s[z]);
		TEST_ASSERT(cdf[z] != NULL, "cdf");
	}
	for (unsigned int c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		struct cflow_topk *s = sketch(caps[c]);

		TEST_ASSERT(s != NULL, "create");
		for (int d = 0; d < 4; d++) {
			cflow_topk_reset(s);
			clear_truth();
			for (uint32_t i = 0; i < n; i++) {
				uint32_t h = d == 0 ?
					(uint32_t)(cfu_splitmix64(&x) %
						(10 * caps[c])) :
					zipf_draw(cdf[d - 1], hosts, &x);

				TEST_ASSERT_EQ(feed(s, 0, h), 0, "add");
			}
			if (check_sketch(s, truth[0], hosts, false, false)) {
				printf("# m %u, stream %d\n", caps[c], d);
				return -1;
			}
		}
		cflow_topk_free(s);
	}
	for (int z = 0; z < 3; z++)
		free(cdf[z]);
	return 0;
}

/* What a sketch lists does not depend on its seed. */
static int
test_topk_seed_independent(void)
{
	static struct cflow_topk_entry other[64];
	struct cflow_topk *a, *b;
	uint64_t x = 7;
	int ka, kb;

	a = cflow_topk_create(&(struct cflow_topk_params){
		.capacity = 64, .seed = 1 });
	b = cflow_topk_create(&(struct cflow_topk_params){
		.capacity = 64, .seed = 0xdeadbeef });
	TEST_ASSERT(a != NULL && b != NULL, "create");
	for (uint32_t i = 0; i < 20000; i++) {
		uint32_t h = (uint32_t)(cfu_splitmix64(&x) % 500);

		h = (uint32_t)(cfu_splitmix64(&x) % (h + 1));
		TEST_ASSERT_EQ(feed(a, 0, h), 0, "add");
		TEST_ASSERT_EQ(feed(b, 1, h), 0, "add");
	}
	ka = cflow_topk_list(a, ents, 64);
	kb = cflow_topk_list(b, other, 64);
	TEST_ASSERT(ka == 64 && kb == 64, "%d %d", ka, kb);
	TEST_ASSERT(memcmp(ents, other, sizeof(other)) == 0, "same lists");
	cflow_topk_free(a);
	cflow_topk_free(b);
	return 0;
}

/* A reset sketch counts as a new one. */
static int
test_topk_reset(void)
{
	static struct cflow_topk_entry fresh_list[32];
	struct cflow_topk *s = sketch(32), *fresh = sketch(32);
	uint64_t x = 99;
	int k;

	TEST_ASSERT(s != NULL && fresh != NULL, "create");
	for (uint32_t i = 0; i < 10000; i++)
		feed(s, 0, (uint32_t)(cfu_splitmix64(&x) % 1000));
	cflow_topk_reset(s);
	TEST_ASSERT_EQ(cflow_topk_total(s), 0, "total");
	TEST_ASSERT_EQ(cflow_topk_floor(s), 0, "floor");
	TEST_ASSERT_EQ(cflow_topk_list(s, ents, 32), 0, "empty");
	clear_truth();
	for (uint32_t i = 0; i < 10000; i++) {
		uint32_t h = (uint32_t)(cfu_splitmix64(&x) % 200);

		feed(s, 0, h);
		feed(fresh, 1, h);
	}
	if (check_sketch(s, truth[0], 1000, false, false) != 0)
		return -1;
	k = cflow_topk_list(s, ents, 32);
	TEST_ASSERT_EQ(k, cflow_topk_list(fresh, fresh_list, 32), "k");
	TEST_ASSERT(memcmp(ents, fresh_list, k * sizeof(ents[0])) == 0,
		"as a fresh sketch");
	cflow_topk_free(s);
	cflow_topk_free(fresh);
	return 0;
}

/* A short list's guaranteed entries are truly in the top n; with a
 * skewed stream some are. */
static int
test_topk_guaranteed(void)
{
	static const unsigned int ns[] = { 1, 5, 10, 20, 64, 100 };
	const uint32_t hosts = 20000;
	double *cdf = zipf_cdf(hosts, 1.3);
	struct cflow_topk *s = sketch(64);
	unsigned int g;
	uint64_t x = 5;

	TEST_ASSERT(cdf != NULL && s != NULL, "create");
	clear_truth();
	for (uint32_t i = 0; i < 100000; i++)
		feed(s, 0, zipf_draw(cdf, hosts, &x));
	if (check_sketch(s, truth[0], hosts, false, false) != 0)
		return -1;
	for (unsigned int i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		if (check_guaranteed(s, truth[0], hosts, ns[i], &g) != 0)
			return -1;
		printf("# top %u: %u guaranteed\n", ns[i], g);
		if (ns[i] <= 10)
			TEST_ASSERT(g >= 1, "top %u: none guaranteed", ns[i]);
	}
	free(cdf);
	cflow_topk_free(s);
	return 0;
}

/* Split a stream over @p parts sketches of capacity @p m (hosts drawn by
 * @p draw), check each, merge them into a report, check it against the
 * union. @p tree: merge pairs first, then the pairs. */
static int
merge_run(uint32_t m, unsigned int parts, uint32_t n, uint32_t hosts,
		const double *cdf, uint64_t seed, bool tree, bool exact)
{
	struct cflow_topk *s[PARTS], *report = sketch(m);
	uint64_t x = seed;

	TEST_ASSERT(report != NULL, "create");
	clear_truth();
	for (unsigned int p = 0; p < parts; p++) {
		s[p] = sketch(m);
		TEST_ASSERT(s[p] != NULL, "create");
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t h = cdf != NULL ? zipf_draw(cdf, hosts, &x) :
			(uint32_t)(cfu_splitmix64(&x) % hosts);
		/* uneven parts: part 0 gets the most */
		unsigned int p = (unsigned int)(cfu_splitmix64(&x) %
			(parts * (parts + 1) / 2));

		p = p < parts ? 0 : p % parts;
		TEST_ASSERT_EQ(feed(s[p], p, h), 0, "add");
	}
	for (unsigned int p = 0; p < parts; p++)
		if (check_sketch(s[p], truth[p], hosts, false, exact) != 0)
			return -1;
	if (tree && parts == 4) {
		TEST_ASSERT_EQ(cflow_topk_merge(s[0], s[1]), 0, "merge");
		TEST_ASSERT_EQ(cflow_topk_merge(s[2], s[3]), 0, "merge");
		TEST_ASSERT_EQ(cflow_topk_merge(report, s[0]), 0, "merge");
		TEST_ASSERT_EQ(cflow_topk_merge(report, s[2]), 0, "merge");
	} else {
		for (unsigned int p = 0; p < parts; p++)
			TEST_ASSERT_EQ(cflow_topk_merge(report, s[p]), 0,
				"merge");
	}
	if (check_sketch(report, truth[PARTS], hosts, true, exact) != 0)
		return -1;
	/* The report goes on counting as one sketch would. */
	for (uint32_t i = 0; i < n / 4; i++)
		feed(report, PARTS, (uint32_t)(cfu_splitmix64(&x) % hosts));
	if (check_sketch(report, truth[PARTS], hosts, true, exact) != 0)
		return -1;
	for (unsigned int p = 0; p < parts; p++)
		cflow_topk_free(s[p]);
	cflow_topk_free(report);
	return 0;
}

static int
test_topk_merge(void)
{
	const uint32_t hosts = 30000;
	double *cdf = zipf_cdf(hosts, 1.1);
	struct cflow_topk *a = sketch(16), *b = sketch(32);

	TEST_ASSERT(cdf != NULL && a != NULL && b != NULL, "create");
	TEST_ASSERT_EQ(cflow_topk_merge(a, b), -EINVAL, "capacities differ");
	cflow_topk_free(a);
	cflow_topk_free(b);
	/* few hosts: exact through the merge */
	for (unsigned int parts = 1; parts <= PARTS; parts++)
		if (merge_run(64, parts, 5000, 40, NULL, parts, false,
				true) != 0)
			return -1;
	for (uint32_t m = 1; m <= 256; m *= 4)
		for (unsigned int parts = 2; parts <= PARTS; parts++)
			for (int z = 0; z < 2; z++)
				if (merge_run(m, parts, 40000, z ? hosts :
						20 * m, z ? cdf : NULL,
						m * 10 + parts, parts == 4,
						false) != 0) {
					printf("# m %u, %u parts, %s\n", m,
						parts, z ? "zipf" : "uniform");
					return -1;
				}
	free(cdf);
	return 0;
}

/* Disjoint parts, full and not, and an empty one: merged bounds. */
static int
test_topk_merge_disjoint(void)
{
	struct cflow_topk *s[3], *report = sketch(32);
	uint64_t x = 3;

	TEST_ASSERT(report != NULL, "create");
	clear_truth();
	for (int p = 0; p < 3; p++) {
		s[p] = sketch(32);
		TEST_ASSERT(s[p] != NULL, "create");
	}
	/* part 0: 1000 hosts, full; part 1: 20 hosts of its own; part 2:
	 * nothing */
	for (uint32_t i = 0; i < 20000; i++)
		feed(s[0], 0, (uint32_t)(cfu_splitmix64(&x) % 1000));
	for (uint32_t i = 0; i < 3000; i++)
		feed(s[1], 1, 2000 + (uint32_t)(cfu_splitmix64(&x) % 20));
	for (int order = 0; order < 2; order++) {
		cflow_topk_reset(report);
		for (int p = 0; p < 3; p++)
			TEST_ASSERT_EQ(cflow_topk_merge(report,
				s[order ? 2 - p : p]), 0, "merge");
		if (check_sketch(report, truth[PARTS], 2020, true, false))
			return -1;
		/* part 1's heavy hosts, all above part 0's floor + theirs */
		for (uint32_t h = 2000; h < 2020; h++)
			TEST_ASSERT(listed[h], "host %u lost", h);
	}
	/* into a full sketch directly */
	TEST_ASSERT_EQ(cflow_topk_merge(s[0], s[1]), 0, "merge");
	if (check_sketch(s[0], truth[PARTS], 2020, true, false) != 0)
		return -1;
	for (int p = 0; p < 3; p++)
		cflow_topk_free(s[p]);
	cflow_topk_free(report);
	return 0;
}

/*
 * --slow: a capture's worth of new flows, 1 M, from a Zipf(1.1) mix of
 * 100 000 hosts and 8 planted scanners (0.12% to 3% of the flows each),
 * spread at random over 1 to 4 workers' sketches of the default size
 * and merged: every scanner and the true top 10 found, with bounds.
 */
static int
test_topk_zipf_1m(void)
{
	static const double planted_rate[] = {
		0.03, 0.02, 0.01, 0.005, 0.003, 0.002, 0.0015, 0.0012,
	};
	const unsigned int nplanted = 8;
	const uint32_t zipf_hosts = 100000, hosts = zipf_hosts + nplanted;
	const uint32_t n = 1000000, m = CFLOW_TOPK_CAPACITY_DEFAULT;
	double *cdf = zipf_cdf(zipf_hosts, 1.1), cum[8], sum = 0;
	static uint32_t top[11];

	TEST_ASSERT(cdf != NULL, "cdf");
	for (unsigned int i = 0; i < nplanted; i++)
		cum[i] = sum += planted_rate[i];
	for (unsigned int workers = 1; workers <= PARTS; workers++) {
		struct cflow_topk *w[PARTS], *report = sketch(0);
		uint64_t x = 2024, floor;
		unsigned int g = 0, in_top = 0;
		int k;

		TEST_ASSERT(report != NULL, "create");
		for (unsigned int p = 0; p < workers; p++) {
			w[p] = sketch(0);
			TEST_ASSERT(w[p] != NULL, "create");
		}
		clear_truth();
		for (uint32_t i = 0; i < n; i++) {
			double u = uniform01(&x);
			uint32_t h = zipf_hosts;
			unsigned int p;

			while (h < hosts && u >= cum[h - zipf_hosts])
				h++;
			if (h == hosts)
				h = zipf_draw(cdf, zipf_hosts, &x);
			/* RSS spreads one source's flows over workers */
			p = (unsigned int)(cfu_splitmix64(&x) % workers);
			TEST_ASSERT_EQ(feed(w[p], p, h), 0, "add");
		}
		for (unsigned int p = 0; p < workers; p++) {
			if (check_sketch(w[p], truth[p], hosts, false,
					false) != 0)
				return -1;
			TEST_ASSERT_EQ(cflow_topk_merge(report, w[p]), 0,
				"merge");
		}
		if (check_sketch(report, truth[PARTS], hosts, workers > 1,
				false) != 0)
			return -1;
		floor = cflow_topk_floor(report);
		printf("# %u workers: floor %lu (N/m %u), scanners:", workers,
			floor, n / m);
		for (uint32_t h = zipf_hosts; h < hosts; h++) {
			TEST_ASSERT(listed[h], "scanner %u missing", h);
			for (int i = 0; i < nents; i++)
				if (host_of(&ents[i]) == h) {
					printf(" %lu [%lu, %lu]",
						truth[PARTS][h],
						ents[i].count - ents[i].error,
						ents[i].count);
					break;
				}
		}
		printf("\n");
		/* the true top 11, by count */
		for (int t = 0; t < 11; t++) {
			top[t] = UINT32_MAX;
			for (uint32_t h = 0; h < hosts; h++) {
				bool taken = false;

				for (int u = 0; u < t; u++)
					taken |= top[u] == h;
				if (!taken && (top[t] == UINT32_MAX ||
						truth[PARTS][h] >
						truth[PARTS][top[t]]))
					top[t] = h;
			}
		}
		TEST_ASSERT(truth[PARTS][top[9]] > truth[PARTS][top[10]],
			"a tie at the 10th");
		k = cflow_topk_list(report, ents, 10);
		TEST_ASSERT_EQ(k, 10, "top 10");
		for (int i = 0; i < k; i++) {
			uint32_t h = host_of(&ents[i]);

			g += ents[i].guaranteed;
			for (int t = 0; t < 10; t++)
				in_top += top[t] == h;
			if (workers == PARTS)
				printf("# %2d: %s%u true %lu [%lu, %lu]%s\n",
					i + 1, h >= zipf_hosts ? "scanner " :
					"host ", h, truth[PARTS][h],
					ents[i].count - ents[i].error,
					ents[i].count, ents[i].guaranteed ?
					" guaranteed" : "");
		}
		printf("# %u workers: %u of the true top 10 listed, %u "
			"guaranteed\n", workers, in_top, g);
		TEST_ASSERT_EQ(in_top, 10, "%u of the true top 10 listed",
			in_top);
		TEST_ASSERT_EQ(g, 10, "%u of 10 guaranteed", g);
		for (unsigned int p = 0; p < workers; p++)
			cflow_topk_free(w[p]);
		cflow_topk_free(report);
	}
	free(cdf);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_topk_params),
	TEST_CASE(test_topk_allocator),
	TEST_CASE(test_topk_exact),
	TEST_CASE(test_topk_families_apart),
	TEST_CASE(test_topk_adversarial),
	TEST_CASE(test_topk_random),
	TEST_CASE(test_topk_seed_independent),
	TEST_CASE(test_topk_reset),
	TEST_CASE(test_topk_guaranteed),
	TEST_CASE(test_topk_merge),
	TEST_CASE(test_topk_merge_disjoint),
	TEST_CASES_END()
};

/* The million-flow Zipf run: "test_topk --slow", meson's suite
 * unit-slow. */
static const struct test_case slow_cases[] = {
	TEST_CASE(test_topk_zipf_1m),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--slow") == 0)
		return test_run(slow_cases, argc - 1, argv + 1);
	return test_run(cases, argc, argv);
}
