/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Top sources of new flows: Space-Saving over source addresses.
 *
 * One allocation holds, after the struct:
 *
 * - counters[m]: an address, its count and error, and its place in its
 *   bucket's list (prev, next, bucket);
 * - buckets[m]: Metwally's Stream Summary, one bucket a count that some
 *   counter has, with the list of those counters; the buckets in a list
 *   by count ascending (min_bucket .. max_bucket), the unused ones in a
 *   free list. Non-empty buckets are never more than counters taken, so
 *   m of them always suffice;
 * - index[T], T the power of two >= 2m: linear probing from address to
 *   counter, each slot the low 32 bits of the address's hash (its home
 *   slot is tag & mask, so a deletion shifts entries back without
 *   hashing them again) and the counter; at most half full;
 * - scratch[2m]: counter numbers, for cflow_topk_merge().
 *
 * An addition is a hash, a probe, and a move of one counter to the next
 * bucket (count + 1): the bucket after its own if that has count + 1, its
 * own bucket if it is the only counter there, else a new bucket between.
 * O(1), nothing allocated.
 *
 * Merge. With f the floor of a sketch (its least count if full, else 0)
 * and, for an address, c' and e' its count and error in a sketch, f in
 * both for a sketch that does not monitor it: merged count c'_1 + c'_2,
 * error e'_1 + e'_2, the m of greatest count kept. Why the guarantees
 * hold for the union (induction on additions and merges, from these
 * invariants of a sketch: true in [c - e, c], e <= f, an address not
 * monitored has true <= f, the counts add up to at most N):
 *
 * - an address monitored by one sketch only has true <= c + f_other and
 *   >= c - e; by both, the sums of the bounds; by neither, true <=
 *   f_1 + f_2;
 * - every merged count is at least f_1 + f_2 (each c' >= f), so the
 *   merged floor is too, and every merged error (<= f_1 + f_2) and
 *   every address dropped or in neither (true <= its merged count <=
 *   the m-th largest, or <= f_1 + f_2) is within the floor;
 * - the m kept counts add up to at most S_1 + S_2 <= N: for any m
 *   addresses, the c'_1 they take add up to at most S_1 (those that
 *   sketch 1 does not monitor take f_1 each, and as many of its own
 *   counters, each >= f_1, are left out), so m * floor <= N;
 * - a merge of sketches that are not full and have at most m addresses
 *   together has floor 0 and keeps everything: still exact.
 *
 * Equal capacities make the third point hold; cflow_topk_merge()
 * requires them.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cflow_track.h"
#include "cflow_topk.h"
#include "cfutil.h"

#define NIL UINT32_MAX
#define ALIGN 64
/* Merge's marks in a counter's bucket field, rebuilt after. */
#define UNMATCHED 0
#define MATCHED 1

struct topk_key {
	uint64_t w[2];      /* the address, IPv4 in the first 4 bytes */
	uint8_t family;
};

struct topk_counter {
	uint64_t w[2];
	uint64_t count;
	uint64_t error;
	uint32_t prev, next; /* in the bucket's list */
	uint32_t bucket;
	uint8_t family;
};

struct topk_bucket {
	uint64_t count;
	uint32_t first;      /* a counter */
	uint32_t prev, next; /* by count ascending; next: free list */
};

struct topk_slot {
	uint32_t tag;        /* low 32 bits of the hash */
	uint32_t idx;        /* a counter, NIL when empty */
};

struct cflow_topk {
	uint32_t capacity;   /* m */
	uint32_t used;       /* counters taken: 0..used-1 */
	uint32_t mask;       /* index slots - 1 */
	uint32_t min_bucket, max_bucket;
	uint32_t free_bucket;
	uint64_t total;
	uint64_t seed;
	struct topk_counter *counters;
	struct topk_bucket *buckets;
	struct topk_slot *index;
	uint32_t *scratch;
	size_t bytes;
	struct cf_allocator alloc;
};

/* ------------------------------------------------------------- memory */

struct topk_layout {
	size_t counters, buckets, index, scratch, bytes;
	uint32_t slots;
};

static size_t
round_up(size_t n)
{
	return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

static int
layout_of(uint32_t m, struct topk_layout *l)
{
	uint32_t slots = 2;

	if (m == 0)
		m = CFLOW_TOPK_CAPACITY_DEFAULT;
	if (m > CFLOW_TOPK_CAPACITY_MAX)
		return -EINVAL;
	while (slots < 2 * m)
		slots <<= 1;
	l->slots = slots;
	l->counters = round_up(sizeof(struct cflow_topk));
	l->buckets = l->counters + round_up(m * sizeof(struct topk_counter));
	l->index = l->buckets + round_up(m * sizeof(struct topk_bucket));
	l->scratch = l->index + round_up(slots * sizeof(struct topk_slot));
	l->bytes = l->scratch + round_up(2 * (size_t)m * sizeof(uint32_t));
	return 0;
}

size_t
cflow_topk_memsize(uint32_t capacity)
{
	struct topk_layout l;

	return layout_of(capacity, &l) == 0 ? l.bytes : 0;
}

static void *
default_alloc(size_t size, size_t align, int socket_id, void *ctx)
{
	void *p;

	(void)socket_id;
	(void)ctx;
	if (posix_memalign(&p, align, size) != 0)
		return NULL;
	return memset(p, 0, size);
}

static void
default_free(void *ptr, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	free(ptr);
}

struct cflow_topk *
cflow_topk_create(const struct cflow_topk_params *params)
{
	struct cflow_topk_params p = { 0 };
	struct cf_allocator a = { default_alloc, default_free, NULL };
	struct topk_layout l;
	struct cflow_topk *s;
	uint8_t *mem;

	if (params != NULL)
		p = *params;
	if (p.allocator != NULL)
		a = *p.allocator;
	if (layout_of(p.capacity, &l) != 0 || a.alloc == NULL ||
			a.free == NULL) {
		errno = EINVAL;
		return NULL;
	}
	mem = a.alloc(l.bytes, ALIGN, p.socket_id, a.ctx);
	if (mem == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	s = (struct cflow_topk *)mem;
	memset(s, 0, sizeof(*s));
	s->capacity = p.capacity != 0 ? p.capacity :
		CFLOW_TOPK_CAPACITY_DEFAULT;
	s->mask = l.slots - 1;
	s->seed = p.seed != 0 ? p.seed : cflow_random_seed();
	s->counters = (struct topk_counter *)(mem + l.counters);
	s->buckets = (struct topk_bucket *)(mem + l.buckets);
	s->index = (struct topk_slot *)(mem + l.index);
	s->scratch = (uint32_t *)(mem + l.scratch);
	s->bytes = l.bytes;
	s->alloc = a;
	cflow_topk_reset(s);
	return s;
}

void
cflow_topk_free(struct cflow_topk *s)
{
	if (s == NULL)
		return;
	s->alloc.free(s, s->bytes, s->alloc.ctx);
}

/* ------------------------------------------------------ keys and index */

static inline int
key_make(struct topk_key *k, uint8_t family, const uint8_t *addr)
{
	k->w[0] = 0;
	k->w[1] = 0;
	k->family = family;
	if (family == 4)
		memcpy(k->w, addr, 4);
	else if (family == 6)
		memcpy(k->w, addr, 16);
	else
		return -EINVAL;
	return 0;
}

static inline uint64_t
key_hash(const struct cflow_topk *s, const uint64_t w[2], uint8_t family)
{
	return XXH3_64bits_withSeed(w, 16, s->seed ^ family);
}

static inline bool
key_eq(const struct topk_counter *c, const struct topk_key *k)
{
	return c->w[0] == k->w[0] && c->w[1] == k->w[1] &&
		c->family == k->family;
}

/* The counter of @p k, or NIL and in @p empty the slot it would take. */
static inline uint32_t
index_find(const struct cflow_topk *s, const struct topk_key *k,
		uint64_t h, uint32_t *empty)
{
	uint32_t tag = (uint32_t)h, i = tag & s->mask;

	for (;;) {
		const struct topk_slot *sl = &s->index[i];

		if (sl->idx == NIL) {
			*empty = i;
			return NIL;
		}
		if (sl->tag == tag && key_eq(&s->counters[sl->idx], k))
			return sl->idx;
		i = (i + 1) & s->mask;
	}
}

/* Index counter @p c, known to be absent, under hash @p h. */
static void
index_insert(struct cflow_topk *s, uint32_t c, uint64_t h)
{
	uint32_t i = (uint32_t)h & s->mask;

	while (s->index[i].idx != NIL)
		i = (i + 1) & s->mask;
	s->index[i].tag = (uint32_t)h;
	s->index[i].idx = c;
}

/* Remove counter @p c's address, shifting back the entries behind it
 * that may move (Knuth's algorithm R): no tombstones. */
static void
index_remove(struct cflow_topk *s, uint32_t c)
{
	const struct topk_counter *ct = &s->counters[c];
	uint32_t mask = s->mask, i, j, home;

	i = (uint32_t)key_hash(s, ct->w, ct->family) & mask;
	while (s->index[i].idx != c) {
		CFU_ASSERT(s->index[i].idx != NIL);
		i = (i + 1) & mask;
	}
	for (j = i;;) {
		j = (j + 1) & mask;
		if (s->index[j].idx == NIL)
			break;
		home = s->index[j].tag & mask;
		/* j's entry may fill the hole if the hole is in [home, j). */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->index[i] = s->index[j];
			i = j;
		}
	}
	s->index[i].idx = NIL;
}

static void
index_clear(struct cflow_topk *s)
{
	memset(s->index, 0xff, ((size_t)s->mask + 1) * sizeof(*s->index));
}

/* ----------------------------------------------------- stream summary */

/* A bucket of count @p count between @p prev and @p next (NIL: ends). */
static inline uint32_t
bucket_new(struct cflow_topk *s, uint64_t count, uint32_t prev,
		uint32_t next)
{
	uint32_t b = s->free_bucket;
	struct topk_bucket *bk = &s->buckets[b];

	CFU_ASSERT(b != NIL);
	s->free_bucket = bk->next;
	bk->count = count;
	bk->first = NIL;
	bk->prev = prev;
	bk->next = next;
	if (prev != NIL)
		s->buckets[prev].next = b;
	else
		s->min_bucket = b;
	if (next != NIL)
		s->buckets[next].prev = b;
	else
		s->max_bucket = b;
	return b;
}

static inline void
bucket_drop(struct cflow_topk *s, uint32_t b)
{
	struct topk_bucket *bk = &s->buckets[b];

	if (bk->prev != NIL)
		s->buckets[bk->prev].next = bk->next;
	else
		s->min_bucket = bk->next;
	if (bk->next != NIL)
		s->buckets[bk->next].prev = bk->prev;
	else
		s->max_bucket = bk->prev;
	bk->next = s->free_bucket;
	s->free_bucket = b;
}

static inline void
counter_attach(struct cflow_topk *s, uint32_t c, uint32_t b)
{
	struct topk_counter *ct = &s->counters[c];
	struct topk_bucket *bk = &s->buckets[b];

	ct->bucket = b;
	ct->prev = NIL;
	ct->next = bk->first;
	if (bk->first != NIL)
		s->counters[bk->first].prev = c;
	bk->first = c;
}

static inline void
counter_detach(struct cflow_topk *s, uint32_t c)
{
	struct topk_counter *ct = &s->counters[c];

	if (ct->prev != NIL)
		s->counters[ct->prev].next = ct->next;
	else
		s->buckets[ct->bucket].first = ct->next;
	if (ct->next != NIL)
		s->counters[ct->next].prev = ct->prev;
}

/* Add 1 to counter @p c's count, moving it to the bucket of count + 1. */
static inline void
counter_increment(struct cflow_topk *s, uint32_t c)
{
	struct topk_counter *ct = &s->counters[c];
	uint32_t b = ct->bucket, nb = s->buckets[b].next;

	ct->count++;
	if (nb != NIL && s->buckets[nb].count == ct->count) {
		counter_detach(s, c);
		counter_attach(s, c, nb);
		if (s->buckets[b].first == NIL)
			bucket_drop(s, b);
	} else if (s->buckets[b].first == c && ct->next == NIL) {
		/* Alone in its bucket, and the next is above count + 1. */
		s->buckets[b].count = ct->count;
	} else {
		nb = bucket_new(s, ct->count, b, nb);
		counter_detach(s, c);
		counter_attach(s, c, nb);
	}
}

static inline uint64_t
floor_of(const struct cflow_topk *s)
{
	return s->used == s->capacity ? s->buckets[s->min_bucket].count : 0;
}

/* Empty the bucket structure: every bucket free. */
static void
buckets_clear(struct cflow_topk *s)
{
	for (uint32_t b = 0; b < s->capacity; b++)
		s->buckets[b].next = b + 1 < s->capacity ? b + 1 : NIL;
	s->free_bucket = 0;
	s->min_bucket = NIL;
	s->max_bucket = NIL;
}

void
cflow_topk_reset(struct cflow_topk *s)
{
	if (s == NULL)
		return;
	s->used = 0;
	s->total = 0;
	buckets_clear(s);
	index_clear(s);
}

int
cflow_topk_add(struct cflow_topk *s, uint8_t family, const uint8_t *addr)
{
	struct topk_counter *ct;
	struct topk_key k;
	uint32_t c, empty;
	uint64_t h;

	if (s == NULL || addr == NULL || key_make(&k, family, addr) != 0) {
		errno = EINVAL;
		return -EINVAL;
	}
	s->total++;
	h = key_hash(s, k.w, family);
	c = index_find(s, &k, h, &empty);
	if (c != NIL) {
		counter_increment(s, c);
		return 0;
	}
	if (s->used < s->capacity) {
		uint32_t b = s->min_bucket;

		c = s->used++;
		ct = &s->counters[c];
		ct->count = 1;
		ct->error = 0;
		if (b == NIL || s->buckets[b].count != 1)
			b = bucket_new(s, 1, NIL, b);
		counter_attach(s, c, b);
		s->index[empty].tag = (uint32_t)h;
		s->index[empty].idx = c;
	} else {
		/* Take over a counter of least count. */
		c = s->buckets[s->min_bucket].first;
		ct = &s->counters[c];
		index_remove(s, c);
		ct->error = ct->count;
		index_insert(s, c, h);
		counter_increment(s, c);
	}
	ct->w[0] = k.w[0];
	ct->w[1] = k.w[1];
	ct->family = family;
	return 0;
}

/* ------------------------------------------------------------ sorting */

typedef int (*cmp_fn)(const void *a, const void *b, const void *ctx);

static void
swap_bytes(uint8_t *a, uint8_t *b, size_t size)
{
	while (size-- > 0) {
		uint8_t t = *a;

		*a++ = *b;
		*b++ = t;
	}
}

static void
sift_down(uint8_t *base, size_t root, size_t n, size_t size, cmp_fn cmp,
		const void *ctx)
{
	for (;;) {
		size_t child = 2 * root + 1;

		if (child >= n)
			return;
		if (child + 1 < n && cmp(base + child * size,
				base + (child + 1) * size, ctx) < 0)
			child++;
		if (cmp(base + root * size, base + child * size, ctx) >= 0)
			return;
		swap_bytes(base + root * size, base + child * size, size);
		root = child;
	}
}

/* Heapsort, ascending by @p cmp: in place, no allocation (glibc's qsort
 * may allocate), and the same order with every libc. */
static void
heap_sort(void *base, size_t n, size_t size, cmp_fn cmp, const void *ctx)
{
	uint8_t *b = base;

	if (n < 2)
		return;
	for (size_t i = n / 2; i-- > 0;)
		sift_down(b, i, n, size, cmp, ctx);
	for (size_t end = n - 1; end > 0; end--) {
		swap_bytes(b, b + end * size, size);
		sift_down(b, 0, end, size, cmp, ctx);
	}
}

static int
cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* Counter numbers by count descending, then number. */
static int
by_count_desc(const void *a, const void *b, const void *ctx)
{
	const struct topk_counter *ct = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r = cmp_u64(ct[y].count, ct[x].count);

	return r != 0 ? r : (x > y) - (x < y);
}

/* Counter numbers by count ascending, then number. */
static int
by_count_asc(const void *a, const void *b, const void *ctx)
{
	return by_count_desc(b, a, ctx);
}

/* List order: count descending, error ascending, family, address. */
static int
entry_order(const void *a, const void *b, const void *ctx)
{
	const struct cflow_topk_entry *x = a, *y = b;
	int r;

	(void)ctx;
	r = cmp_u64(y->count, x->count);
	if (r == 0)
		r = cmp_u64(x->error, y->error);
	if (r == 0)
		r = (x->family > y->family) - (x->family < y->family);
	if (r == 0)
		r = memcmp(x->addr, y->addr, sizeof(x->addr));
	return r;
}

/* -------------------------------------------------------------- reads */

int
cflow_topk_list(const struct cflow_topk *s, struct cflow_topk_entry *out,
		unsigned int n)
{
	uint64_t bound;
	unsigned int k = 0;

	if (s == NULL || (out == NULL && n != 0)) {
		errno = EINVAL;
		return -EINVAL;
	}
	bound = floor_of(s);
	for (uint32_t b = s->max_bucket; b != NIL; b = s->buckets[b].prev) {
		for (uint32_t c = s->buckets[b].first; c != NIL;
				c = s->counters[c].next) {
			const struct topk_counter *ct = &s->counters[c];
			struct cflow_topk_entry *e;

			if (k == n) {
				/* The (n+1)th bounds every address unlisted. */
				bound = ct->count;
				goto listed;
			}
			e = &out[k++];
			memset(e, 0, sizeof(*e));
			memcpy(e->addr, ct->w, sizeof(e->addr));
			e->family = ct->family;
			e->count = ct->count;
			e->error = ct->error;
		}
	}
listed:
	for (unsigned int i = 0; i < k; i++)
		out[i].guaranteed = out[i].count - out[i].error > bound;
	heap_sort(out, k, sizeof(*out), entry_order, NULL);
	return (int)k;
}

uint64_t
cflow_topk_total(const struct cflow_topk *s)
{
	return s != NULL ? s->total : 0;
}

uint64_t
cflow_topk_floor(const struct cflow_topk *s)
{
	return s != NULL ? floor_of(s) : 0;
}

uint32_t
cflow_topk_capacity(const struct cflow_topk *s)
{
	return s != NULL ? s->capacity : 0;
}

/* -------------------------------------------------------------- merge */

/* Rebuild the buckets and the index from the counters' counts and keys. */
static void
rebuild(struct cflow_topk *s)
{
	uint32_t *order = s->scratch;

	buckets_clear(s);
	for (uint32_t c = 0; c < s->used; c++)
		order[c] = c;
	heap_sort(order, s->used, sizeof(*order), by_count_asc, s->counters);
	for (uint32_t i = 0; i < s->used; i++) {
		uint32_t c = order[i], b = s->max_bucket;

		if (b == NIL || s->buckets[b].count != s->counters[c].count)
			b = bucket_new(s, s->counters[c].count, b, NIL);
		counter_attach(s, c, b);
	}
	index_clear(s);
	for (uint32_t c = 0; c < s->used; c++) {
		const struct topk_counter *ct = &s->counters[c];

		index_insert(s, c, key_hash(s, ct->w, ct->family));
	}
}

int
cflow_topk_merge(struct cflow_topk *dst, const struct cflow_topk *src)
{
	const struct topk_counter *sc;
	uint32_t *mine, *theirs, nm = 0, nt = 0, i = 0, j = 0, m;
	uint64_t fd, fs;

	if (dst == NULL || src == NULL || dst == src ||
			dst->capacity != src->capacity) {
		errno = EINVAL;
		return -EINVAL;
	}
	m = dst->capacity;
	sc = src->counters;
	fd = floor_of(dst);
	fs = floor_of(src);
	mine = dst->scratch;
	theirs = dst->scratch + m;

	/* Addresses of both: sums. Theirs alone: noted. */
	for (uint32_t c = 0; c < dst->used; c++)
		dst->counters[c].bucket = UNMATCHED;
	for (uint32_t y = 0; y < src->used; y++) {
		struct topk_key k = { { sc[y].w[0], sc[y].w[1] }, sc[y].family };
		uint32_t c, empty;

		c = index_find(dst, &k, key_hash(dst, k.w, k.family), &empty);
		if (c == NIL) {
			theirs[nt++] = y;
			continue;
		}
		dst->counters[c].count += sc[y].count;
		dst->counters[c].error += sc[y].error;
		dst->counters[c].bucket = MATCHED;
	}
	/* Mine alone: src's floor as count and error. */
	for (uint32_t c = 0; c < dst->used; c++) {
		struct topk_counter *ct = &dst->counters[c];

		if (ct->bucket == UNMATCHED) {
			ct->count += fs;
			ct->error += fs;
		}
		mine[nm++] = c;
	}
	/* The m greatest of mine and theirs (count + fd): ties to mine. */
	if (nm + nt <= m) {
		j = nt;
	} else {
		heap_sort(mine, nm, sizeof(*mine), by_count_desc,
			dst->counters);
		heap_sort(theirs, nt, sizeof(*theirs), by_count_desc, sc);
		while (i + j < m) {
			if (j < nt && (i == nm ||
					sc[theirs[j]].count + fd >
					dst->counters[mine[i]].count))
				j++;
			else
				i++;
		}
	}
	/* Theirs taken go to free counters, then over mine dropped. */
	for (uint32_t t = 0; t < j; t++) {
		const struct topk_counter *y = &sc[theirs[t]];
		struct topk_counter *ct;

		if (dst->used < m)
			ct = &dst->counters[dst->used++];
		else
			ct = &dst->counters[mine[i++]];
		ct->w[0] = y->w[0];
		ct->w[1] = y->w[1];
		ct->family = y->family;
		ct->count = y->count + fd;
		ct->error = y->error + fd;
	}
	dst->total += src->total;
	rebuild(dst);
	return 0;
}
