/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Cuckoo filter: creation, add with bounded random-walk kicks and
 * rollback, lookup, delete, bulk operations, values and stats (the scan
 * is cf_scan.c).
 * Layout and bucket primitives are in cf_internal.h.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* XXH3 compiled into the per-key calls: through libxxhash's PLT it cost
 * more than the lookup it fed (docs/benchmarks.md, bench_paper). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cf_internal.h"
#include "cfutil.h"

/* ------------------------------------------------------------- memory */

static void *
default_alloc(size_t size, size_t align, int socket_id, void *ctx)
{
	(void)socket_id;
	(void)ctx;
	return cfu_zalloc_huge(size, align);
}

static void
default_free(void *ptr, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	free(ptr);
}

static const struct cf_allocator default_allocator = {
	.alloc = default_alloc,
	.free = default_free,
};

/* ------------------------------------------------------------ creation */

/* Positions are 32-bit and the stash follows the slots. */
_Static_assert(CF_MAX_TABLE_SLOTS + CF_STASH_SIZE <= UINT32_MAX,
	"positions must fit in 32 bits");
_Static_assert(CF_MAX_CAPACITY == CF_MAX_TABLE_SLOTS * 96 / 100,
	"CF_MAX_CAPACITY is CF_SIZING_LOAD of CF_MAX_TABLE_SLOTS");

static uint64_t buckets_for(const struct cf_params *p);

/* cf_inline.h reads (and writes) these fields of a caller's filter
 * through its own struct: the same offsets and sizes. */
#define CF_INLINE_FIELD(name) \
	_Static_assert(offsetof(struct cf_filter, name) == \
		offsetof(struct cf_inline_fields, name) && \
		sizeof(((struct cf_filter *)0)->name) == \
		sizeof(((struct cf_inline_fields *)0)->name), \
		"cf_inline_fields." #name)
CF_INLINE_FIELD(table);
CF_INLINE_FIELD(key_flip);
CF_INLINE_FIELD(buckets);
CF_INLINE_FIELD(bucket_word_mask);
CF_INLINE_FIELD(lane_lo);
CF_INLINE_FIELD(lane_hi);
CF_INLINE_FIELD(items);
CF_INLINE_FIELD(int_seed);
CF_INLINE_FIELD(alt_mul);
CF_INLINE_FIELD(bucket_mask);
CF_INLINE_FIELD(pitch_bytes);
CF_INLINE_FIELD(fp_bits);
CF_INLINE_FIELD(fp_range);
CF_INLINE_FIELD(stash_count);
CF_INLINE_FIELD(pow2);
CF_INLINE_FIELD(inline_kind);
CF_INLINE_FIELD(inline_add);
CF_INLINE_FIELD(key_hash);

static int
params_resolve(const struct cf_params *in, struct cf_params *p)
{
	if (in == NULL)
		return cf_err(EINVAL);
	*p = *in;
	if (p->fp_bits == 0)
		p->fp_bits = CF_DEFAULT_FP_BITS;
	if (p->bucket_slots == 0)
		p->bucket_slots = CF_DEFAULT_BUCKET_SLOTS;
	if (p->max_kicks == 0)
		p->max_kicks = CF_DEFAULT_MAX_KICKS;

	if (p->capacity == 0 || p->capacity > CF_MAX_CAPACITY)
		return cf_err(EINVAL);
	if (p->bucket_slots != 2 && p->bucket_slots != 4 &&
			p->bucket_slots != 8)
		return cf_err(EINVAL);
	if (p->max_kicks > CF_MAX_KICKS_LIMIT)
		return cf_err(EINVAL);
	if (p->value_bits != 0 && p->value_bits != 8 && p->value_bits != 16 &&
			p->value_bits != 32 && p->value_bits != 64)
		return cf_err(EINVAL);
	if (p->key_hash != CF_KEY_HASH_XXH3 && p->key_hash != CF_KEY_HASH_U64)
		return cf_err(EINVAL);
	if (p->aux_bits != 0 && (p->aux_bits != 64 ||
			p->table == CF_TABLE_SEMISORT))
		return cf_err(EINVAL);
	switch (p->table) {
	case CF_TABLE_PLAIN:
		if (p->fp_bits < 4 || p->fp_bits > 32)
			return cf_err(EINVAL);
		break;
	case CF_TABLE_SEMISORT:
		if (p->fp_bits < 5 || p->fp_bits > 16 || p->bucket_slots != 4)
			return cf_err(EINVAL);
		break;
	case CF_TABLE_INTERLEAVED:
		if (p->fp_bits < 4 || p->fp_bits > 32 || p->value_bits == 0 ||
				cf_interleave_stride(p, NULL) == 0)
			return cf_err(EINVAL);
		break;
	default:
		return cf_err(EINVAL);
	}
	/* Implied by the capacity bound for every bucket size and sizing;
	 * checked so that no table can ever outgrow 32-bit positions. */
	if (buckets_for(p) * p->bucket_slots > CF_MAX_TABLE_SLOTS)
		return cf_err(EINVAL);
	return 0;
}

/* Buckets holding capacity at <= 96% load: that many with exact_size,
 * else the next power of two. */
static uint64_t
buckets_for(const struct cf_params *p)
{
	uint64_t need = (p->capacity * 100 + p->bucket_slots * 96 - 1) /
		(p->bucket_slots * 96);
	uint64_t buckets = 1;

	if (p->exact_size)
		return need;
	while (buckets < need)
		buckets <<= 1;
	return buckets;
}

static void
rng_seed(struct cf_filter *f)
{
	uint64_t x = f->params.seed;

	f->rng = cfu_splitmix64(&x) | 1;
}

/* xorshift64*: the kick walk needs speed, not cryptographic quality. */
static inline uint32_t
rng_next(struct cf_filter *f)
{
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return (uint32_t)((f->rng * UINT64_C(0x2545f4914f6cdd1d)) >> 32);
}

/*
 * The part of XXH3-64 of a 4- to 8-byte key that depends on the seed
 * alone (xxHash's XXH3_len_4to8_64b: its "bitflip"), for cf_inline.h's
 * hash of 8-byte keys; test_filter checks that the two agree.
 */
static uint64_t
key_flip(uint64_t seed)
{
	uint64_t s8, s16;

	memcpy(&s8, XXH3_kSecret + 8, sizeof(s8));
	memcpy(&s16, XXH3_kSecret + 16, sizeof(s16));
	seed ^= (uint64_t)__builtin_bswap32((uint32_t)seed) << 32;
	return (s8 ^ s16) - seed;
}

/* cf_hash_u64()'s key: a stream of its own from the seed. */
static void
int_hash_init(struct cf_filter *f, uint64_t seed)
{
	uint64_t x = seed ^ UINT64_C(0x6a09e667f3bcc909);

	f->int_seed = cfu_splitmix64(&x);
}

void
cf_geometry_init(struct cf_filter *f, uint64_t buckets)
{
	const struct cf_params *p = &f->params;
	uint32_t lanes;

	f->buckets = buckets;
	f->pow2 = (buckets & (buckets - 1)) == 0;
	f->bucket_mask = (uint32_t)(buckets - 1);
	f->slots = p->bucket_slots;
	f->slot_shift = (uint32_t)__builtin_ctz(p->bucket_slots);
	f->fp_bits = p->fp_bits;
	f->fp_range = (uint32_t)cf_low_mask(p->fp_bits);
	f->value_bytes = p->value_bits / 8;
	f->value_mask = p->value_bits != 0 ? cf_low_mask(p->value_bits) : 0;
	f->wide = CF_WIDE_NONE;
	if (p->table == CF_TABLE_SEMISORT) {
		f->mode = CF_MODE_SEMISORT;
		f->bucket_bits = 4 * (p->fp_bits - 1);
		f->high_bits = p->fp_bits - 4;
		f->high_mask = cf_low_mask(f->high_bits);
		lanes = 4;
	} else {
		f->bucket_bits = f->slots * f->fp_bits;
		if (f->bucket_bits > 64)
			f->mode = CF_MODE_SLOTS;
		else if (f->bucket_bits % 8 == 0)
			f->mode = CF_MODE_BYTES;
		else
			f->mode = CF_MODE_WORD;
		lanes = f->mode != CF_MODE_SLOTS ? f->slots : 0;
		f->bucket_bytes = f->bucket_bits / 8;
		f->wide = f->mode != CF_MODE_SLOTS ? CF_WIDE_NONE :
			f->fp_bits == 32 && f->slots == 4 ? CF_WIDE_32X4 :
			f->fp_bits == 32 && f->slots == 8 ? CF_WIDE_32X8 :
			f->fp_bits == 16 && f->slots == 8 ? CF_WIDE_16X8 :
			CF_WIDE_NONE;
		f->bucket_word_mask = cf_low_mask(f->bucket_bits);
	}
	f->interleaved = p->table == CF_TABLE_INTERLEAVED;
	f->pitch_bits = f->bucket_bits;
	f->pitch_bytes = f->bucket_bytes;
	f->value_off = 0;
	if (f->interleaved) {
		f->pitch_bytes = cf_interleave_stride(p, &f->value_off);
		f->pitch_bits = 8 * f->pitch_bytes;
	}
	/* The inline calls (cf_inline.h) handle whole-byte buckets of one
	 * word; their adds write no value and no aux word. */
	f->inline_kind = f->wide == CF_WIDE_32X4 ? (f->pow2 &&
			f->pitch_bytes == 16 ? CF_INLINE_P32 :
			CF_INLINE_W32) :
		f->mode != CF_MODE_BYTES ? CF_INLINE_NONE :
		!f->pow2 || f->slots != 4 || f->interleaved ? CF_INLINE_BYTES :
		f->fp_bits == 12 ? CF_INLINE_P12 :
		f->fp_bits == 16 ? CF_INLINE_P16 : CF_INLINE_BYTES;
	f->inline_add = f->inline_kind != CF_INLINE_NONE &&
		f->value_bytes == 0 && p->aux_bits == 0;
	f->key_flip = key_flip(p->seed);
	f->key_hash = (uint8_t)p->key_hash;
	f->alt_mul = CF_ALT_MUL_;
	int_hash_init(f, p->seed);
	f->lane_lo = 0;
	for (uint32_t k = 0; k < lanes; k++)
		f->lane_lo |= UINT64_C(1) << (k * f->fp_bits);
	f->lane_hi = f->lane_lo << (f->fp_bits - 1);
	for (uint32_t bit = 0; bit < 64; bit++) {
		uint32_t lane = bit / f->fp_bits;

		f->lane_of_bit[bit] = (uint8_t)(lane < f->slots ?
				lane : f->slots - 1);
	}
	/* Last byte a bucket can touch, from its first byte. */
	f->prefetch_span = f->interleaved ? f->pitch_bytes - 1 :
		(7 + f->bucket_bits - 1) >> 3;
	f->table_bytes = ((buckets * f->pitch_bits + 7) >> 3) + CF_TABLE_PAD;
	f->prefetch = f->table_bytes > CF_PREFETCH_MIN_BYTES;
	/* Aux words beside plain values (a hit reads one line for both);
	 * else an array of their own. The kick path's in aux[] either way. */
	f->aux_inline = p->aux_bits != 0 && !f->interleaved &&
		f->value_bytes != 0;
	f->value_stride = f->value_bytes + (f->aux_inline ? 8 : 0);
	f->values_bytes = f->interleaved ? 0 :
		buckets * f->slots * f->value_stride;
	f->aux_bytes = p->aux_bits == 0 ? 0 : ((f->aux_inline ? 0 :
		buckets * f->slots) + p->max_kicks) * 8;
	f->path_bytes = (uint64_t)p->max_kicks * sizeof(struct cf_kick);
}

/* Allocate a filter of @p buckets buckets from resolved parameters. */
struct cf_filter *
cf_create_geometry(const struct cf_params *p, uint64_t buckets)
{
	const struct cf_allocator *a = p->allocator != NULL ?
		p->allocator : &default_allocator;
	struct cf_filter *f;

	if (a->alloc == NULL || a->free == NULL) {
		errno = EINVAL;
		return NULL;
	}
	f = a->alloc(sizeof(*f), CF_ALIGN, p->socket_id, a->ctx);
	if (f == NULL)
		goto nomem;
	memset(f, 0, sizeof(*f));
	f->params = *p;
	f->params.allocator = NULL;
	f->alloc = *a;
	cf_geometry_init(f, buckets);

	f->table = a->alloc(f->table_bytes, CF_ALIGN, p->socket_id, a->ctx);
	if (f->table == NULL)
		goto free_filter;
	if (f->values_bytes != 0) {
		f->values = a->alloc(f->values_bytes, CF_ALIGN, p->socket_id,
				a->ctx);
		if (f->values == NULL)
			goto free_table;
	}
	if (f->aux_bytes != 0) {
		f->aux = a->alloc(f->aux_bytes, CF_ALIGN, p->socket_id, a->ctx);
		if (f->aux == NULL)
			goto free_values;
		f->path_aux = f->aux + (f->aux_inline ? 0 :
			buckets * f->slots);
	}
	f->path = a->alloc(f->path_bytes, CF_ALIGN, p->socket_id, a->ctx);
	if (f->path == NULL)
		goto free_aux;
	if (f->mode == CF_MODE_SEMISORT)
		cf_semisort_init();
	rng_seed(f);
	f->walk_limit = UINT64_MAX;
	return f;

free_aux:
	if (f->aux != NULL)
		a->free(f->aux, f->aux_bytes, a->ctx);
free_values:
	if (f->values != NULL)
		a->free(f->values, f->values_bytes, a->ctx);
free_table:
	a->free(f->table, f->table_bytes, a->ctx);
free_filter:
	a->free(f, sizeof(*f), a->ctx);
nomem:
	errno = ENOMEM;
	return NULL;
}

struct cf_filter *
cf_create(const struct cf_params *params)
{
	struct cf_params p;
	int ret = params_resolve(params, &p);

	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	return cf_create_geometry(&p, buckets_for(&p));
}

int
cf_params_resolve(const struct cf_params *in, struct cf_params *out,
		uint64_t *buckets)
{
	int ret = params_resolve(in, out);

	if (ret == 0)
		*buckets = buckets_for(out);
	return ret;
}

uint64_t
cf_params_bytes(const struct cf_params *params)
{
	struct cf_filter geo;
	struct cf_params p;
	uint64_t buckets;

	if (cf_params_resolve(params, &p, &buckets) != 0)
		return 0;
	memset(&geo, 0, sizeof(geo));
	geo.params = p;
	cf_geometry_init(&geo, buckets);
	return sizeof(geo) + geo.table_bytes + geo.values_bytes +
		geo.aux_bytes + geo.path_bytes;
}

void
cf_free(struct cf_filter *f)
{
	struct cf_allocator a;

	if (f == NULL)
		return;
	a = f->alloc;
	a.free(f->path, f->path_bytes, a.ctx);
	if (f->aux != NULL)
		a.free(f->aux, f->aux_bytes, a.ctx);
	if (f->values != NULL)
		a.free(f->values, f->values_bytes, a.ctx);
	a.free(f->table, f->table_bytes, a.ctx);
	a.free(f, sizeof(*f), a.ctx);
}

/* cf_inline.h's, for callers without it (XXH3_mul128_fold64 is the
 * inline code's cf_inline_fold_). */
uint64_t
cf_hash_u64(const struct cf_filter *f, uint64_t key)
{
	return XXH3_mul128_fold64(XXH3_mul128_fold64(key ^ f->int_seed,
		CF_U64_MUL_), CF_U64_MUL_);
}

static inline __attribute__((always_inline)) uint64_t
key_hash(const struct cf_filter *f, const void *key, size_t len)
{
	/* 8-byte keys (integers, IPv4 address pairs) hash through a copy
	 * of XXH3 compiled for that length: no dispatch on it. */
	if (len == 8) {
		if (f->key_hash == CF_KEY_HASH_U64)
			return cf_hash_u64(f, cf_load64(key));
		return XXH3_64bits_withSeed(key, 8, f->params.seed);
	}
	return XXH3_64bits_withSeed(key, len, f->params.seed);
}

uint64_t
cf_hash(const struct cf_filter *f, const void *key, size_t len)
{
	return key_hash(f, key, len);
}

/* -------------------------------------------------------- slot access */

static inline uint64_t
slot_value(const struct cf_filter *f, uint32_t i, uint32_t s)
{
	return cf_has_values(f) ?
		cf_value_load(f, (uint64_t)i * f->slots + s) : 0;
}

void
cf_bucket_read(const struct cf_filter *f, uint32_t i, struct cf_bucket *b)
{
	if (f->mode == CF_MODE_SEMISORT) {
		cf_semisort_read(f, i, b);
		return;
	}
	for (uint32_t s = 0; s < f->slots; s++) {
		b->fp[s] = cf_slot_fp(f, i, s);
		b->value[s] = slot_value(f, i, s);
	}
}

/* Write fp/value/aux into slot s of bucket i; return the slot it ends
 * in (semi-sorted buckets, which have no aux words, re-sort on every
 * write). */
static uint32_t
slot_put(struct cf_filter *f, uint32_t i, uint32_t s, uint32_t fp,
		uint64_t value, uint64_t aux)
{
	CFU_ASSERT(i < f->buckets && s < f->slots);
	CFU_ASSERT(fp <= f->fp_range && (value & ~f->value_mask) == 0);
	if (f->mode == CF_MODE_SEMISORT) {
		struct cf_bucket b;
		uint32_t order[4];

		cf_semisort_read(f, i, &b);
		b.fp[s] = fp;
		b.value[s] = value;
		f->relocations++;
		cf_semisort_write(f, i, &b, order);
		return order[s];
	}
	cf_store_bits(f->table, (uint64_t)i * f->pitch_bits +
			(uint64_t)s * f->fp_bits, f->fp_bits, fp);
	if (cf_has_values(f))
		cf_value_store(f, (uint64_t)i * f->slots + s, value);
	cf_aux_store(f, (uint64_t)i * f->slots + s, aux);
	return s;
}

/* Slot of bucket i holding exactly fp, value and aux, or -1. */
static int
find_exact(const struct cf_filter *f, uint32_t i, uint32_t fp,
		uint64_t value, uint64_t aux)
{
	struct cf_bucket b;

	cf_bucket_read(f, i, &b);
	for (uint32_t s = 0; s < f->slots; s++)
		if (b.fp[s] == fp && b.value[s] == value &&
				cf_aux_load(f, (uint64_t)i * f->slots + s) ==
				aux)
			return (int)s;
	return -1;
}

/* Fingerprint of slot s of bucket i. */
static inline uint32_t
slot_fp(const struct cf_filter *f, uint32_t i, uint32_t s)
{
	struct cf_bucket b;

	if (f->mode != CF_MODE_SEMISORT)
		return cf_slot_fp(f, i, s);
	cf_semisort_read(f, i, &b);
	return b.fp[s];
}

/* The fingerprints of bucket i, without the values. */
static inline void
bucket_fps(const struct cf_filter *f, uint32_t i, uint32_t *fps)
{
	uint64_t lanes, mask = cf_low_mask(f->fp_bits);

	if (f->mode == CF_MODE_SLOTS) {
		for (uint32_t s = 0; s < f->slots; s++)
			fps[s] = cf_slot_fp(f, i, s);
		return;
	}
	lanes = cf_bucket_lanes(f, i, f->mode);
	for (uint32_t s = 0; s < f->slots; s++)
		fps[s] = (uint32_t)((lanes >> (s * f->fp_bits)) & mask);
}

static unsigned int
count_in_bucket(const struct cf_filter *f, uint32_t i, uint32_t fp)
{
	uint32_t fps[CF_MAX_SLOTS] = { 0 };
	unsigned int n = 0;

	bucket_fps(f, i, fps);
	for (uint32_t s = 0; s < f->slots; s++)
		n += fps[s] == fp;
	return n;
}

/* ------------------------------------------------------------- stash */

static int
stash_find(const struct cf_filter *f, uint32_t i1, uint32_t i2, uint32_t fp)
{
	for (uint32_t k = 0; k < f->stash_count; k++) {
		const struct cf_stash_entry *e = &f->stash[k];

		if (e->fp == fp && (e->bucket == i1 || e->bucket == i2))
			return (int)k;
	}
	return -1;
}

/* ---------------------------------------------------------------- add */

static int
locate(const struct cf_filter *f, uint32_t i1, uint32_t i2, uint32_t fp,
		uint64_t value, uint64_t aux, uint32_t *pos)
{
	int s = find_exact(f, i1, fp, value, aux);

	if (s >= 0) {
		*pos = i1 * f->slots + (uint32_t)s;
		return 0;
	}
	s = find_exact(f, i2, fp, value, aux);
	if (s >= 0) {
		*pos = i2 * f->slots + (uint32_t)s;
		return 0;
	}
	return -ENOENT;
}

/*
 * The slots of bucket @p b by rank in cf_sort_key() order (ties by
 * slot): order[r] is the slot of the entry of rank r. Victims are chosen
 * by rank: uniform either way, but the choice then depends on the
 * bucket's contents only, not on its layout.
 */
static void
rank_order(const struct cf_filter *f, const struct cf_bucket *b,
		uint32_t *order)
{
	uint32_t key[CF_MAX_SLOTS];

	if (f->mode == CF_MODE_SEMISORT) {
		for (uint32_t s = 0; s < f->slots; s++)
			order[s] = s; /* already sorted */
		return;
	}
	for (uint32_t s = 0; s < f->slots; s++)
		key[s] = cf_sort_key(b->fp[s]);
	for (uint32_t s = 0; s < f->slots; s++) {
		uint32_t rank = 0;

		for (uint32_t t = 0; t < f->slots; t++)
			rank += key[t] < key[s] || (key[t] == key[s] && t < s);
		order[rank] = s;
	}
}

/*
 * Victim for a kick out of full bucket i: the first entry, in rank order
 * from a random rank, whose alternate bucket has a free slot, else the
 * entry of that random rank. All alternates are prefetched together, so
 * one memory latency looks one step ahead for every entry: near full,
 * walks get much shorter, and each step still moves one item.
 */
static uint32_t
choose_victim(const struct cf_filter *f, uint32_t i, const struct cf_bucket *b,
		uint32_t r0)
{
	uint32_t alt[CF_MAX_SLOTS], order[CF_MAX_SLOTS];

	for (uint32_t s = 0; s < f->slots; s++) {
		alt[s] = cf_alt_index(f, i, b->fp[s]);
		cf_prefetch_bucket(f, alt[s]);
	}
	rank_order(f, b, order);
	for (uint32_t r = 0; r < f->slots; r++) {
		uint32_t s = order[(r0 + r) & (f->slots - 1)];

		if (cf_find_in_bucket(f, alt[s], 0, f->mode) >= 0)
			return s;
	}
	return order[r0];
}

/*
 * Random walk (paper Algorithm 1): swap the homeless fingerprint with a
 * random slot of its bucket, and move the evicted one to its alternate
 * bucket, up to max_kicks times. Each step is recorded, so that a walk
 * that finds no empty slot is undone in reverse and no stored item is
 * ever dropped (the paper's code keeps the last victim aside instead).
 */
static int
kick(struct cf_filter *f, uint32_t i1, uint32_t i2, uint32_t fp,
		uint64_t value, uint64_t aux, uint32_t *pos)
{
	const uint32_t new_fp = fp;
	const uint64_t new_value = value, new_aux = aux;
	uint32_t i = (rng_next(f) & 1) ? i2 : i1;
	uint32_t n;

	for (n = 0; n < f->params.max_kicks; n++) {
		struct cf_bucket b;
		uint32_t s, old_fp;
		uint64_t old_value, old_aux;
		int e;

		cf_bucket_read(f, i, &b);
		s = choose_victim(f, i, &b, rng_next(f) & (f->slots - 1));
		old_fp = b.fp[s];
		old_value = b.value[s];
		old_aux = cf_aux_load(f, (uint64_t)i * f->slots + s);
		/* The walk only enters full buckets. */
		CFU_ASSERT(s < f->slots && old_fp != 0);
		f->path[n] = (struct cf_kick){ i, fp, value };
		if (f->path_aux != NULL)
			f->path_aux[n] = aux;
		slot_put(f, i, s, fp, value, aux);
		fp = old_fp;
		value = old_value;
		aux = old_aux;
		i = cf_alt_index(f, i, fp);
		e = cf_find_in_bucket(f, i, 0, f->mode);
		if (e >= 0) {
			slot_put(f, i, (uint32_t)e, fp, value, aux);
			f->items++;
			f->kicks_total += n + 1;
			if (n + 1 > f->kicks_max)
				f->kicks_max = n + 1;
			if (pos != NULL)
				locate(f, i1, i2, new_fp, new_value, new_aux,
					pos);
			return 0;
		}
	}
	f->kicks_failed += n;
	/*
	 * Undo in reverse: step n wrote path[n] into its bucket, and every
	 * later step that overwrote it there was undone first, so an entry
	 * equal to path[n] is in that bucket (any of equal copies will do).
	 * find_exact() cannot miss; a miss would be a corrupted table, and
	 * its -1 must never become a slot index.
	 */
	while (n-- > 0) {
		const struct cf_kick *k = &f->path[n];
		uint64_t k_aux = f->path_aux != NULL ? f->path_aux[n] : 0;
		int s = find_exact(f, k->bucket, k->fp, k->value, k_aux);

		CFU_ASSERT(s >= 0);
		slot_put(f, k->bucket, (uint32_t)s, fp, value, aux);
		fp = k->fp;
		value = k->value;
		aux = k_aux;
	}
	return -ENOSPC;
}

/*
 * A walk found no free slot with the stash full, or for a stash item:
 * the table is at its load limit. Adds make no walk until deletes take
 * it slack items below the count the walk failed at, slack =
 * min(max_kicks, items / 16): a failed walk costs max_kicks steps and as
 * many to undo, so failed walks then cost a few steps per delete at
 * most, and a table that only churns at its limit (a flood evicting
 * flows) walks no more.
 */
static void
saturate(struct cf_filter *f)
{
	uint64_t slack = f->items / 16;

	if (slack > f->params.max_kicks)
		slack = f->params.max_kicks;
	f->walk_limit = f->items - slack;
}

static int
add_fp(struct cf_filter *f, uint32_t i1, uint32_t fp, uint64_t value,
		uint64_t aux, uint32_t *pos, bool use_stash)
{
	uint32_t i2 = cf_alt_index(f, i1, fp);
	uint32_t i = i1;
	bool saturated;
	int s;

	/* Stored values are truncated; the kick path compares them. */
	value &= f->value_mask;
	s = cf_find_in_bucket(f, i1, 0, f->mode);
	if (s < 0) {
		i = i2;
		s = cf_find_in_bucket(f, i2, 0, f->mode);
	}
	if (s >= 0) {
		s = (int)slot_put(f, i, (uint32_t)s, fp, value, aux);
		f->items++;
		if (pos != NULL)
			*pos = i * f->slots + (uint32_t)s;
		return 0;
	}
	/* At the load limit with no room in the stash: fail at once. This
	 * is a full table's common case (a flood of new flows). */
	saturated = f->items >= f->walk_limit;
	if (saturated && (!use_stash || f->stash_count == CF_STASH_SIZE)) {
		f->walks_skipped++;
		return -ENOSPC;
	}
	/* Both buckets full of this fingerprint: 2b copies, no more fit.
	 * (Counted only where the first slot of bucket i1 holds it: a
	 * full one has it in every slot.) */
	if (slot_fp(f, i1, 0) == fp && count_in_bucket(f, i1, fp) +
			(i1 != i2 ? count_in_bucket(f, i2, fp) : 0) ==
			f->slots * (i1 != i2 ? 2 : 1))
		return -ENOSPC;
	if (saturated) {
		/* At the load limit: no walk, which would most likely fail
		 * and cost 2 * max_kicks bucket writes. */
		f->walks_skipped++;
	} else {
		/* Below it again (deletes): walks as usual. */
		f->walk_limit = UINT64_MAX;
		/* Kicks move other items, even when rolled back. */
		f->relocations++;
		if (kick(f, i1, i2, fp, value, aux, pos) == 0)
			return 0;
		/* The stash absorbs the odd failed walk, as it always did,
		 * so that a table fills to its sizing load and beyond; the
		 * table is at its limit once a failed walk finds the stash
		 * full, or fails for a stash item. */
		if (!use_stash || f->stash_count == CF_STASH_SIZE) {
			saturate(f);
			return -ENOSPC;
		}
	}
	if (!use_stash || f->stash_count == CF_STASH_SIZE)
		return -ENOSPC;
	CFU_ASSERT(f->stash_count < CF_STASH_SIZE);
	f->stash[f->stash_count] = (struct cf_stash_entry){ i1, fp, value,
		aux };
	if (pos != NULL)
		*pos = cf_table_slots(f) + f->stash_count;
	f->stash_count++;
	CFU_ASSERT(cf_stash_valid(f));
	return 0;
}

/*
 * A slot of bucket i was emptied: stash items of which i is one of the
 * two buckets take its free slots, with no walk. Every other stash item
 * has both its buckets as full as when it was stashed (only a delete
 * empties a slot), so it cannot fit without a walk.
 */
static void
stash_rehome_bucket(struct cf_filter *f, uint32_t i)
{
	uint32_t k = 0;

	while (k < f->stash_count) {
		struct cf_stash_entry e = f->stash[k];
		int s;

		if (e.bucket != i && cf_alt_index(f, e.bucket, e.fp) != i) {
			k++;
			continue;
		}
		s = cf_find_in_bucket(f, i, 0, f->mode);
		if (s < 0)
			return;
		slot_put(f, i, (uint32_t)s, e.fp, e.value, e.aux);
		f->items++;
		cf_stash_remove(f, k);
	}
}

/* Slots of many buckets were emptied (a scan): every stash item takes a
 * free slot of its buckets if it has one, with no walk. */
void
cf_stash_rehome_any(struct cf_filter *f)
{
	uint32_t k = 0;

	while (k < f->stash_count) {
		struct cf_stash_entry e = f->stash[k];
		uint32_t i = e.bucket;
		int s = cf_find_in_bucket(f, i, 0, f->mode);

		if (s < 0) {
			i = cf_alt_index(f, e.bucket, e.fp);
			s = cf_find_in_bucket(f, i, 0, f->mode);
		}
		if (s < 0) {
			k++;
			continue;
		}
		slot_put(f, i, (uint32_t)s, e.fp, e.value, e.aux);
		f->items++;
		cf_stash_remove(f, k);
	}
}

/*
 * Below the load limit, stash items also try a walk each, until one
 * fails (which sets the limit): at the limit a walk would only fail, and
 * retrying every stash item after every delete was what made deletes
 * from a full table cost four failed walks each.
 */
void
cf_stash_rehome_walk(struct cf_filter *f)
{
	uint32_t k = 0;

	while (k < f->stash_count && f->items < f->walk_limit) {
		struct cf_stash_entry e = f->stash[k];

		if (add_fp(f, e.bucket, e.fp, e.value, e.aux, NULL,
				false) == 0)
			cf_stash_remove(f, k);
		else
			k++;
	}
}

/* After a delete from bucket i of the table. */
static inline void
stash_rehome(struct cf_filter *f, uint32_t i)
{
	if (f->stash_count != 0)
		stash_rehome_bucket(f, i);
	if (f->stash_count != 0 && f->items < f->walk_limit)
		cf_stash_rehome_walk(f);
}

/*
 * An add that finds a free slot in either bucket, compiled for one
 * layout: no dispatch on it, no walk. -ENOSPC sends the caller to
 * add_fp(), which walks.
 */
static inline __attribute__((always_inline)) int
add_free_mode(struct cf_filter *f, uint32_t i1, uint32_t fp, uint64_t value,
		uint64_t aux, uint32_t *pos, enum cf_mode mode)
{
	uint32_t i = i1;
	int s = cf_find_in_bucket(f, i1, 0, mode);

	if (s < 0) {
		i = cf_alt_index(f, i1, fp);
		s = cf_find_in_bucket(f, i, 0, mode);
		if (s < 0)
			return -ENOSPC;
	}
	value &= f->value_mask;
	cf_store_bits(f->table, (uint64_t)i * f->pitch_bits +
			(uint64_t)s * f->fp_bits, f->fp_bits, fp);
	if (cf_has_values(f))
		cf_value_store(f, (uint64_t)i * f->slots + (uint32_t)s, value);
	cf_aux_store(f, (uint64_t)i * f->slots + (uint32_t)s, aux);
	f->items++;
	if (pos != NULL)
		*pos = i * f->slots + (uint32_t)s;
	return 0;
}

/* An add: a free slot through the path compiled for the layout, else
 * add_fp()'s walk. Semi-sorted buckets re-sort on every write: add_fp()
 * for them. */
static inline __attribute__((always_inline)) int
add_one(struct cf_filter *f, uint32_t i1, uint32_t fp, uint64_t value,
		uint64_t aux, uint32_t *pos)
{
	int ret = -ENOSPC;

	if (f->mode == CF_MODE_WORD)
		ret = add_free_mode(f, i1, fp, value, aux, pos, CF_MODE_WORD);
	else if (f->mode == CF_MODE_BYTES)
		ret = add_free_mode(f, i1, fp, value, aux, pos,
			CF_MODE_BYTES);
	else if (f->mode == CF_MODE_SLOTS)
		ret = add_free_mode(f, i1, fp, value, aux, pos,
			CF_MODE_SLOTS);
	if (ret == 0)
		return 0;
	ret = add_fp(f, i1, fp, value, aux, pos, true);
	if (ret < 0)
		f->adds_failed++;
	return ret;
}

/* The per-key calls are cloned too: a bucket is fields of run-time
 * widths, and BMI2's shifts (shlx, shrx) take 1 uop where a shift by
 * %cl takes 3 on Intel cores. */
CFU_TARGET_CLONES int
cf_add_with_hash(struct cf_filter *f, uint64_t hash, uint64_t value,
		uint32_t *pos)
{
	return cf_ret(add_one(f, cf_index(f, hash), cf_fingerprint(f, hash),
			value, 0, pos));
}

CFU_TARGET_CLONES int
cf_add_with_hash_aux(struct cf_filter *f, uint64_t hash, uint64_t value,
		uint64_t aux, uint32_t *pos)
{
	if (f->params.aux_bits == 0)
		aux = 0;
	return cf_ret(add_one(f, cf_index(f, hash), cf_fingerprint(f, hash),
			value, aux, pos));
}

CFU_TARGET_CLONES int
cf_add(struct cf_filter *f, const void *key, size_t len)
{
	uint64_t hash = key_hash(f, key, len);

	return cf_ret(add_one(f, cf_index(f, hash), cf_fingerprint(f, hash),
			0, 0, NULL));
}

/* ------------------------------------------------------------- lookup */

/*
 * A lookup compiled for one layout: both buckets are read and compared
 * before anything branches, so that their loads overlap and a mix of
 * hits and misses mispredicts only where a position is wanted. The
 * stash is looked at only when it holds something.
 */
static inline __attribute__((always_inline)) int
lookup_mode(const struct cf_filter *f, uint64_t hash, uint32_t *pos,
		enum cf_mode mode)
{
	uint32_t fp = cf_fingerprint(f, hash);
	uint32_t i1 = cf_index(f, hash);
	uint32_t i2 = cf_alt_index(f, i1, fp);
	uint64_t m1 = cf_bucket_match(f, i1, fp, mode);
	uint64_t m2 = cf_bucket_match(f, i2, fp, mode);
	int s;

	if (pos == NULL) {
		int hit = (m1 | m2) != 0;

		if (__builtin_expect(f->stash_count != 0, 0))
			hit |= stash_find(f, i1, i2, fp) >= 0;
		return hit;
	}
	if ((m1 | m2) != 0) {
		*pos = m1 != 0 ? i1 * f->slots + cf_match_slot(f, m1, mode) :
			i2 * f->slots + cf_match_slot(f, m2, mode);
		return 1;
	}
	if (f->stash_count != 0) {
		s = stash_find(f, i1, i2, fp);
		if (s >= 0) {
			*pos = cf_table_slots(f) + (uint32_t)s;
			return 1;
		}
	}
	return 0;
}

static inline __attribute__((always_inline)) int
lookup(const struct cf_filter *f, uint64_t hash, uint32_t *pos)
{
	switch (f->mode) {
	case CF_MODE_BYTES:
		return lookup_mode(f, hash, pos, CF_MODE_BYTES);
	case CF_MODE_WORD:
		return lookup_mode(f, hash, pos, CF_MODE_WORD);
	case CF_MODE_SEMISORT:
		return lookup_mode(f, hash, pos, CF_MODE_SEMISORT);
	default:
		return lookup_mode(f, hash, pos, CF_MODE_SLOTS);
	}
}

CFU_TARGET_CLONES int
cf_lookup_with_hash(const struct cf_filter *f, uint64_t hash, uint32_t *pos)
{
	if (pos == NULL)
		return lookup(f, hash, NULL);
	return lookup(f, hash, pos);
}

CFU_TARGET_CLONES int
cf_lookup(const struct cf_filter *f, const void *key, size_t len)
{
	return lookup(f, key_hash(f, key, len), NULL);
}

/* After cf_lookup_with_hash(): clang wants a multiversioned function
 * defined before its first call. */
int
cf_add_unique_with_hash(struct cf_filter *f, uint64_t hash, uint64_t value,
		uint32_t *pos)
{
	if (cf_lookup_with_hash(f, hash, pos))
		return cf_err(EEXIST);
	return cf_add_with_hash(f, hash, value, pos);
}

int
cf_add_unique(struct cf_filter *f, const void *key, size_t len)
{
	return cf_add_unique_with_hash(f, key_hash(f, key, len), 0, NULL);
}

unsigned int
cf_count_with_hash(const struct cf_filter *f, uint64_t hash)
{
	uint32_t fp = cf_fingerprint(f, hash);
	uint32_t i1 = cf_index(f, hash);
	uint32_t i2 = cf_alt_index(f, i1, fp);
	unsigned int n = count_in_bucket(f, i1, fp);

	if (i2 != i1)
		n += count_in_bucket(f, i2, fp);
	for (uint32_t k = 0; k < f->stash_count; k++)
		n += f->stash[k].fp == fp &&
			(f->stash[k].bucket == i1 || f->stash[k].bucket == i2);
	return n;
}

unsigned int
cf_count(const struct cf_filter *f, const void *key, size_t len)
{
	return cf_count_with_hash(f, key_hash(f, key, len));
}

/* ------------------------------------------------------------- delete */

static void
table_remove(struct cf_filter *f, uint32_t i, uint32_t s)
{
	CFU_ASSERT(f->items > 0 && slot_fp(f, i, s) != 0);
	slot_put(f, i, s, 0, 0, 0);
	f->items--;
}

static int
delete_fp(struct cf_filter *f, uint32_t i1, uint32_t fp)
{
	uint32_t i2 = cf_alt_index(f, i1, fp);
	int s;

	s = cf_find_in_bucket(f, i1, fp, f->mode);
	if (s >= 0) {
		table_remove(f, i1, (uint32_t)s);
		stash_rehome(f, i1);
		return 0;
	}
	s = cf_find_in_bucket(f, i2, fp, f->mode);
	if (s >= 0) {
		table_remove(f, i2, (uint32_t)s);
		stash_rehome(f, i2);
		return 0;
	}
	s = stash_find(f, i1, i2, fp);
	if (s < 0)
		return -ENOENT;
	cf_stash_remove(f, (uint32_t)s);
	return 0;
}

int
cf_delete_with_hash(struct cf_filter *f, uint64_t hash)
{
	return cf_ret(delete_fp(f, cf_index(f, hash),
			cf_fingerprint(f, hash)));
}

int
cf_delete(struct cf_filter *f, const void *key, size_t len)
{
	return cf_delete_with_hash(f, key_hash(f, key, len));
}

void
cf_clear(struct cf_filter *f)
{
	memset(f->table, 0, f->table_bytes);
	if (f->values != NULL)
		memset(f->values, 0, f->values_bytes);
	if (f->aux != NULL && !f->aux_inline)
		memset(f->aux, 0, f->buckets * f->slots * 8);
	f->stash_count = 0;
	f->items = 0;
	f->walk_limit = UINT64_MAX;
	f->relocations++;
	f->kicks_total = 0;
	f->kicks_max = 0;
	f->adds_failed = 0;
	f->kicks_failed = 0;
	f->walks_skipped = 0;
	rng_seed(f);
}

/* --------------------------------------------------------------- bulk */

/* Add the stash's hits among the misses of a burst. Branch-free over the
 * burst: whether a key hit the table is data, and mispredicts. */
static uint64_t
stash_bulk(const struct cf_filter *f, unsigned int n, const uint32_t *b1,
		const uint32_t *b2, const uint32_t *fps, uint64_t hits,
		uint32_t *pos)
{
	uint64_t stash_hits = 0;

	for (uint32_t e = 0; e < f->stash_count; e++) {
		const struct cf_stash_entry *se = &f->stash[e];

		for (unsigned int k = 0; k < n; k++) {
			uint64_t m = (uint64_t)(se->fp == fps[k] &&
				((se->bucket == b1[k]) | (se->bucket == b2[k])));

			stash_hits |= m << k;
		}
	}
	stash_hits &= ~hits;
	if (pos != NULL)
		for (uint64_t m = stash_hits; m != 0; m &= m - 1) {
			unsigned int k = (unsigned int)__builtin_ctzll(m);

			int e = stash_find(f, b1[k], b2[k], fps[k]);

			CFU_ASSERT(e >= 0); /* the compare above matched it */
			pos[k] = cf_table_slots(f) + (uint32_t)e;
		}
	return hits | stash_hits;
}

/* The compare pass of whole-byte buckets as straight-line arithmetic
 * on arrays, which the compiler turns into SIMD gathers and compares. */
static inline __attribute__((always_inline)) uint64_t
bytes_match_burst(const struct cf_filter *f, unsigned int n,
		const uint32_t *b1, const uint32_t *b2, const uint32_t *fps)
{
	const uint8_t *table = f->table;
	const uint64_t bytes = f->pitch_bytes, mask = f->bucket_word_mask;
	const uint64_t lo = f->lane_lo, hi = f->lane_hi;
	uint8_t hit[CF_BULK_MAX];
	uint64_t hits = 0;

	for (unsigned int k = 0; k < n; k++) {
		uint64_t w1 = cf_load64(table + b1[k] * bytes) & mask;
		uint64_t w2 = cf_load64(table + b2[k] * bytes) & mask;
		uint64_t x1 = w1 ^ (fps[k] * lo), x2 = w2 ^ (fps[k] * lo);
		uint64_t z = ((x1 - lo) & ~x1 & hi) | ((x2 - lo) & ~x2 & hi);

		hit[k] = z != 0;
	}
	for (unsigned int k = 0; k < n; k++)
		hits |= (uint64_t)hit[k] << k;
	return hits;
}

/* The compare pass of buckets of 4 x 32 bits: each bucket one 128-bit
 * compare with the key's fingerprint in every lane, the two ORed and
 * reduced by one movemask (SSE2, VEX-encoded in the AVX2 and AVX-512
 * clones; as rte_hash compares its signatures). GCC's vector
 * extensions where there is no SSE2. */
static inline __attribute__((always_inline)) uint64_t
wide32_match_burst(const struct cf_filter *f, unsigned int n,
		const uint32_t *b1, const uint32_t *b2, const uint32_t *fps)
{
	const uint8_t *table = f->table;
	const uint64_t bytes = f->pitch_bytes;
	uint64_t hits = 0;

	for (unsigned int k = 0; k < n; k++) {
#ifdef __SSE2__
		__m128i v = _mm_set1_epi32((int)fps[k]);
		__m128i eq = _mm_or_si128(_mm_cmpeq_epi32(_mm_loadu_si128(
			(const __m128i *)(const void *)(table + b1[k] *
			bytes)), v), _mm_cmpeq_epi32(_mm_loadu_si128(
			(const __m128i *)(const void *)(table + b2[k] *
			bytes)), v));

		hits |= (uint64_t)(_mm_movemask_epi8(eq) != 0) << k;
#else
		typedef uint32_t v4u __attribute__((vector_size(16)));
		v4u a, b, eq;
		uint64_t w[2];

		memcpy(&a, table + b1[k] * bytes, sizeof(a));
		memcpy(&b, table + b2[k] * bytes, sizeof(b));
		eq = (v4u)((a == fps[k]) | (b == fps[k]));
		memcpy(w, &eq, sizeof(w));
		hits |= (uint64_t)((w[0] | w[1]) != 0) << k;
#endif
	}
	return hits;
}

/*
 * Two passes over a burst, as rte_member_lookup_bulk does: derive every
 * bucket pair and prefetch both lines, then compare. The compare pass is
 * branch-free on hit or miss in every layout (cf_bucket_match(); wider
 * buckets, 32-bit fingerprints among them, as vectors), so that mixed
 * bursts do not mispredict.
 */
static inline __attribute__((always_inline)) int
lookup_bulk_mode(const struct cf_filter *f, const uint64_t *hashes,
		unsigned int n, uint64_t *hit_mask, uint32_t *pos,
		enum cf_mode mode)
{
	uint32_t b1[CF_BULK_MAX], b2[CF_BULK_MAX], fps[CF_BULK_MAX];
	uint64_t hits = 0;

	for (unsigned int k = 0; k < n; k++) {
		fps[k] = cf_fingerprint(f, hashes[k]);
		b1[k] = cf_index(f, hashes[k]);
		b2[k] = cf_alt_index(f, b1[k], fps[k]);
	}
	if (f->prefetch)
		for (unsigned int k = 0; k < n; k++) {
			cf_prefetch_bucket(f, b1[k]);
			cf_prefetch_bucket(f, b2[k]);
		}
	if (mode == CF_MODE_BYTES || mode == CF_MODE_SLOTS) {
		if (mode == CF_MODE_BYTES)
			hits = bytes_match_burst(f, n, b1, b2, fps);
		else if (f->wide == CF_WIDE_32X4)
			hits = wide32_match_burst(f, n, b1, b2, fps);
		else
			for (unsigned int k = 0; k < n; k++)
				hits |= (uint64_t)((cf_slots_match(f, b1[k],
					fps[k]) | cf_slots_match(f, b2[k],
					fps[k])) != 0) << k;
		/* Positions of the hits only, from lines now in cache. Both
		 * buckets matched and one selected, without a branch: which
		 * of the two holds a key is a coin toss, and a branch on it
		 * was mispredicted about every other hit (27% of this
		 * function's samples at 1 K flows, issue 29 round 2). */
		for (uint64_t m = pos != NULL ? hits : 0; m != 0; m &= m - 1) {
			unsigned int k = (unsigned int)__builtin_ctzll(m);
			uint64_t m1 = cf_bucket_match(f, b1[k], fps[k], mode);
			uint64_t m2 = cf_bucket_match(f, b2[k], fps[k], mode);
			/* all ones if the hit is in the second bucket: a
			 * mask, not a ?: that GCC's AVX-512 clone made a
			 * branch again (mispredicted on half the hits,
			 * 20% of this function's samples at 1 K flows) */
			uint64_t second = (uint64_t)(m1 == 0);

			__asm__("" : "+r"(second));
			second = -second;
			CFU_ASSERT((m1 | m2) != 0); /* a hit of one of the two */
			pos[k] = (b1[k] ^ ((b1[k] ^ b2[k]) & (uint32_t)second)) *
				f->slots + cf_match_slot(f, m1 | (m2 & second),
					mode);
		}
		goto stash;
	}
	for (unsigned int k = 0; k < n; k++) {
		uint64_t m1 = cf_bucket_match(f, b1[k], fps[k], mode);
		uint64_t m2 = cf_bucket_match(f, b2[k], fps[k], mode);

		hits |= (uint64_t)((m1 | m2) != 0) << k;
		if (pos != NULL) {
			/* (bit 63 only where there is no match: any slot) */
			uint32_t l1 = cf_match_slot(f, m1 | UINT64_C(1) << 63,
					mode);
			uint32_t l2 = cf_match_slot(f, m2 | UINT64_C(1) << 63,
					mode);

			pos[k] = m1 != 0 ? b1[k] * f->slots + l1 :
				b2[k] * f->slots + l2;
		}
	}
stash:
	if (f->stash_count != 0)
		hits = stash_bulk(f, n, b1, b2, fps, hits, pos);
	*hit_mask = hits;
	return __builtin_popcountll(hits);
}

/* cf_lookup_bulk(), inlined into each clone of it and of
 * cf_lookup_bulk_values(). */
static inline __attribute__((always_inline)) int
lookup_bulk(const struct cf_filter *f, const uint64_t *hashes,
		unsigned int n, uint64_t *hit_mask, uint32_t *pos)
{
	if (n == 0 || n > CF_BULK_MAX)
		return cf_err(EINVAL);
	switch (f->mode) {
	case CF_MODE_BYTES:
		return lookup_bulk_mode(f, hashes, n, hit_mask, pos,
				CF_MODE_BYTES);
	case CF_MODE_WORD:
		return lookup_bulk_mode(f, hashes, n, hit_mask, pos,
				CF_MODE_WORD);
	case CF_MODE_SEMISORT:
		return lookup_bulk_mode(f, hashes, n, hit_mask, pos,
				CF_MODE_SEMISORT);
	default:
		return lookup_bulk_mode(f, hashes, n, hit_mask, pos,
				CF_MODE_SLOTS);
	}
}

/* The hot functions (bulk lookups, scans) are cloned for AVX2 and
 * AVX-512 (CFU_TARGET_CLONES): their compare and gather loops are
 * vectorized by the compiler. */
CFU_TARGET_CLONES int
cf_lookup_bulk(const struct cf_filter *f, const uint64_t *hashes,
		unsigned int n, uint64_t *hit_mask, uint32_t *pos)
{
	return lookup_bulk(f, hashes, n, hit_mask, pos);
}

void
cf_prefetch_bulk(const struct cf_filter *f, const uint64_t *hashes,
		unsigned int n)
{
	if (!f->prefetch)
		return;
	for (unsigned int k = 0; k < n; k++) {
		uint64_t h = hashes[k];
		uint32_t i1 = cf_index(f, h);
		uint32_t i2 = cf_alt_index(f, i1, cf_fingerprint(f, h));

		cf_prefetch_bucket(f, i1);
		cf_prefetch_bucket(f, i2);
	}
}

CFU_TARGET_CLONES int
cf_lookup_bulk_values(const struct cf_filter *f, const uint64_t *hashes,
		unsigned int n, uint64_t *hit_mask, uint32_t *pos,
		uint64_t *values)
{
	uint32_t slots = cf_table_slots(f);
	int ret = lookup_bulk(f, hashes, n, hit_mask, pos);

	if (ret < 0)
		return ret;
	/* At the load limit, a miss is likely a new item that finds both
	 * its buckets full, and a caller that evicts (the tracker) reads
	 * their values next: fetch those lines now, so that the misses of
	 * the whole burst overlap. */
	if (f->values != NULL && f->prefetch && f->items >= f->walk_limit)
		for (uint64_t m = ~*hit_mask & (UINT64_MAX >> (64 - n)); m != 0;
				m &= m - 1) {
			uint64_t h = hashes[__builtin_ctzll(m)];
			uint32_t i1 = cf_index(f, h);
			uint32_t i2 = cf_alt_index(f, i1, cf_fingerprint(f, h));

			__builtin_prefetch(f->values + (uint64_t)i1 *
				f->slots * f->value_stride, 0, 3);
			__builtin_prefetch(f->values + (uint64_t)i2 *
				f->slots * f->value_stride, 0, 3);
		}
	if (ret == 0)
		return ret;
	/* With aux words, the caller updates the hits' (lib/cflow's
	 * records): for writing. Inline, they are the value's line, and the
	 * next one when the pair crosses into it. */
	if (f->values != NULL && f->prefetch)
		for (uint64_t m = *hit_mask; m != 0; m &= m - 1) {
			uint32_t p = pos[__builtin_ctzll(m)];
			const uint8_t *v = f->values + (uint64_t)p *
				f->value_stride;

			if (p >= slots)
				continue;
			if (!f->aux_inline) {
				__builtin_prefetch(v, 0, 3);
				continue;
			}
			__builtin_prefetch(v, 1, 3);
			if ((((uintptr_t)v & 63) + f->value_stride) > 64)
				__builtin_prefetch(v + f->value_stride - 1, 1, 3);
		}
	if (f->aux != NULL && !f->aux_inline && f->prefetch)
		for (uint64_t m = *hit_mask; m != 0; m &= m - 1) {
			uint32_t p = pos[__builtin_ctzll(m)];

			if (p < slots)
				__builtin_prefetch(f->aux + p, 1, 3);
		}
	for (uint64_t m = *hit_mask; m != 0; m &= m - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(m);

		values[k] = !cf_has_values(f) ? 0 : pos[k] < slots ?
			cf_value_load(f, pos[k]) : f->stash[pos[k] - slots].value;
	}
	return ret;
}

static void
prefetch_pairs(const struct cf_filter *f, const uint64_t *hashes,
		unsigned int n, uint32_t *b1, uint32_t *fps)
{
	for (unsigned int k = 0; k < n; k++) {
		fps[k] = cf_fingerprint(f, hashes[k]);
		b1[k] = cf_index(f, hashes[k]);
		cf_prefetch_bucket(f, b1[k]);
		cf_prefetch_bucket(f, cf_alt_index(f, b1[k], fps[k]));
	}
}

int
cf_add_bulk(struct cf_filter *f, const uint64_t *hashes,
		const uint64_t *values, unsigned int n, uint64_t *added_mask)
{
	uint32_t b1[CF_BULK_MAX], fps[CF_BULK_MAX];
	uint64_t added = 0;

	if (n == 0 || n > CF_BULK_MAX)
		return cf_err(EINVAL);
	prefetch_pairs(f, hashes, n, b1, fps);
	for (unsigned int k = 0; k < n; k++)
		if (add_one(f, b1[k], fps[k], values != NULL ? values[k] : 0,
				0, NULL) == 0)
			added |= UINT64_C(1) << k;
	if (added_mask != NULL)
		*added_mask = added;
	return __builtin_popcountll(added);
}

int
cf_delete_bulk(struct cf_filter *f, const uint64_t *hashes, unsigned int n,
		uint64_t *deleted_mask)
{
	uint32_t b1[CF_BULK_MAX], fps[CF_BULK_MAX];
	uint64_t deleted = 0;

	if (n == 0 || n > CF_BULK_MAX)
		return cf_err(EINVAL);
	prefetch_pairs(f, hashes, n, b1, fps);
	for (unsigned int k = 0; k < n; k++)
		if (delete_fp(f, b1[k], fps[k]) == 0)
			deleted |= UINT64_C(1) << k;
	if (deleted_mask != NULL)
		*deleted_mask = deleted;
	return __builtin_popcountll(deleted);
}

/* ----------------------------------------------------- slot positions */

/* Resolve pos to a stash index (>= 0), or a table slot (-1 with i/s). */
static int
position(const struct cf_filter *f, uint32_t pos, uint32_t *i, uint32_t *s,
		uint32_t *stash_k)
{
	uint32_t slots = cf_table_slots(f);

	if (pos < slots) {
		*i = pos >> f->slot_shift;
		*s = pos & (f->slots - 1);
		return 0;
	}
	if (pos - slots < f->stash_count) {
		*stash_k = pos - slots;
		return 1;
	}
	return -EINVAL;
}

static bool
slot_empty(const struct cf_filter *f, uint32_t i, uint32_t s)
{
	return slot_fp(f, i, s) == 0;
}

int
cf_value_get(const struct cf_filter *f, uint32_t pos, uint64_t *value)
{
	uint32_t i, s, k;
	int where = position(f, pos, &i, &s, &k);

	if (where < 0 || !cf_has_values(f))
		return cf_err(EINVAL);
	if (where == 1) {
		*value = f->stash[k].value;
		return 0;
	}
	if (slot_empty(f, i, s))
		return cf_err(ENOENT);
	*value = slot_value(f, i, s);
	return 0;
}

int
cf_value_set(struct cf_filter *f, uint32_t pos, uint64_t value)
{
	uint32_t i, s, k;
	int where = position(f, pos, &i, &s, &k);

	if (where < 0 || !cf_has_values(f))
		return cf_err(EINVAL);
	value &= f->value_mask;
	if (where == 1) {
		f->stash[k].value = value;
		return 0;
	}
	if (slot_empty(f, i, s))
		return cf_err(ENOENT);
	cf_value_store(f, (uint64_t)i * f->slots + s, value);
	return 0;
}

int
cf_delete_at(struct cf_filter *f, uint32_t pos)
{
	uint32_t i, s, k;
	int where = position(f, pos, &i, &s, &k);

	if (where < 0)
		return cf_err(EINVAL);
	if (where == 1) {
		cf_stash_remove(f, k);
		return 0;
	}
	if (slot_empty(f, i, s))
		return cf_err(ENOENT);
	table_remove(f, i, s);
	stash_rehome(f, i);
	return 0;
}

void *
cf_aux_at(struct cf_filter *f, uint32_t pos)
{
	uint32_t slots = cf_table_slots(f);

	if (f->params.aux_bits == 0)
		return NULL;
	if (pos < slots)
		return cf_aux_ptr(f, pos);
	if (pos - slots < f->stash_count)
		return &f->stash[pos - slots].aux;
	return NULL;
}

int
cf_value_table(struct cf_filter *f, struct cf_value_table *t)
{
	if (!cf_has_values(f))
		return cf_err(EINVAL);
	if (f->interleaved)
		*t = (struct cf_value_table){
			.base = f->table + f->value_off,
			.shift = f->slot_shift,
			.slot_mask = f->slots - 1,
			.pitch = f->pitch_bytes,
			.step = f->value_bytes,
			.bytes = f->value_bytes,
		};
	else
		*t = (struct cf_value_table){
			.base = f->values,
			.pitch = f->value_stride,
			.bytes = f->value_bytes,
		};
	return 0;
}

uint8_t *
cf_aux_table(struct cf_filter *f, uint32_t *stride)
{
	if (f->params.aux_bits == 0)
		return NULL;
	*stride = f->aux_inline ? f->value_stride : 8;
	return cf_aux_ptr(f, 0);
}

uint64_t
cf_aux_get(const struct cf_filter *f, uint32_t pos)
{
	const uint8_t *a = cf_aux_at((struct cf_filter *)(uintptr_t)f, pos);

	return a != NULL ? cf_load64(a) : 0;
}

int
cf_aux_set(struct cf_filter *f, uint32_t pos, uint64_t aux)
{
	uint8_t *a = cf_aux_at(f, pos);

	if (a == NULL)
		return cf_err(EINVAL);
	cf_store64(a, aux);
	return 0;
}

int
cf_aux_attach(struct cf_filter *f)
{
	struct cf_filter geo;
	uint8_t *values = NULL;

	if (f->mode == CF_MODE_SEMISORT)
		return cf_err(EINVAL);
	if (f->params.aux_bits != 0)
		return cf_err(EEXIST);
	/* The geometry with aux words: the values array may change. */
	memset(&geo, 0, sizeof(geo));
	geo.params = f->params;
	geo.params.aux_bits = 64;
	cf_geometry_init(&geo, f->buckets);
	if (geo.aux_inline) {
		values = f->alloc.alloc(geo.values_bytes, CF_ALIGN,
			f->params.socket_id, f->alloc.ctx);
		if (values == NULL)
			return cf_err(ENOMEM);
		memset(values, 0, geo.values_bytes);
	}
	f->aux = f->alloc.alloc(geo.aux_bytes, CF_ALIGN, f->params.socket_id,
		f->alloc.ctx);
	if (f->aux == NULL) {
		if (values != NULL)
			f->alloc.free(values, geo.values_bytes, f->alloc.ctx);
		return cf_err(ENOMEM);
	}
	memset(f->aux, 0, geo.aux_bytes);
	if (values != NULL) {
		for (uint64_t k = 0; k < f->buckets * f->slots; k++)
			memcpy(values + k * geo.value_stride, f->values +
				k * f->value_bytes, f->value_bytes);
		f->alloc.free(f->values, f->values_bytes, f->alloc.ctx);
		f->values = values;
	}
	f->path_aux = f->aux + (geo.aux_inline ? 0 : f->buckets * f->slots);
	for (uint32_t k = 0; k < f->stash_count; k++)
		f->stash[k].aux = 0;
	f->aux_inline = geo.aux_inline;
	f->value_stride = geo.value_stride;
	f->values_bytes = geo.values_bytes;
	f->aux_bytes = geo.aux_bytes;
	f->params.aux_bits = 64;
	f->inline_add = false;  /* an add now writes its aux word too */
	return 0;
}

/* The name of an item in bucket @p i with fingerprint @p fp. */
static inline uint64_t
name_of(const struct cf_filter *f, uint32_t i, uint32_t fp)
{
	uint32_t alt = cf_alt_index(f, i, fp);

	return (uint64_t)(alt < i ? alt : i) << 32 | fp;
}

uint64_t
cf_name_of_hash(const struct cf_filter *f, uint64_t hash)
{
	return name_of(f, cf_index(f, hash), cf_fingerprint(f, hash));
}

int
cf_name_at(const struct cf_filter *f, uint32_t pos, uint64_t *name)
{
	uint32_t i, s, k;
	int where = position(f, pos, &i, &s, &k);
	uint32_t fp;

	if (where < 0)
		return cf_err(EINVAL);
	if (where == 1) {
		*name = name_of(f, f->stash[k].bucket, f->stash[k].fp);
		return 0;
	}
	fp = slot_fp(f, i, s);
	if (fp == 0)
		return cf_err(ENOENT);
	*name = name_of(f, i, fp);
	return 0;
}

unsigned int
cf_bucket_entries(const struct cf_filter *f, uint64_t hash, uint32_t *pos,
		uint64_t *values)
{
	uint32_t i1 = cf_index(f, hash);
	uint32_t bucket[2] = { i1, cf_alt_index(f, i1, cf_fingerprint(f, hash)) };
	unsigned int n = 0;

	for (unsigned int k = 0; k < (bucket[0] != bucket[1] ? 2u : 1u); k++) {
		uint32_t fps[CF_MAX_SLOTS] = { 0 };

		bucket_fps(f, bucket[k], fps);
		for (uint32_t s = 0; s < f->slots; s++) {
			if (fps[s] == 0)
				continue;
			if (values != NULL)
				values[n] = slot_value(f, bucket[k], s);
			pos[n++] = bucket[k] * f->slots + s;
		}
	}
	return n;
}

unsigned int
cf_bucket_positions(const struct cf_filter *f, uint64_t hash, uint32_t *pos)
{
	return cf_bucket_entries(f, hash, pos, NULL);
}

/* -------------------------------------------------------------- stats */

void
cf_stats(const struct cf_filter *f, struct cf_stats *st)
{
	uint64_t slots = f->buckets * f->slots;
	double compared;

	memset(st, 0, sizeof(*st));
	st->items = f->items + f->stash_count;
	st->buckets = f->buckets;
	st->slots = slots;
	st->table_bytes = f->table_bytes;
	/* as cf_params_bytes() */
	st->bytes = sizeof(*f) + f->table_bytes + f->values_bytes +
		f->aux_bytes + f->path_bytes;
	st->load_factor = (double)st->items / (double)slots;
	st->bits_per_item = st->items != 0 ?
		(double)f->table_bytes * 8 / (double)st->items : 0;
	/* A negative lookup compares its fingerprint with the items of two
	 * buckets (2 * b * load on average) and the stash. */
	compared = 2.0 * f->slots * st->load_factor + f->stash_count;
	st->expected_fpr = -expm1(compared * log1p(-1.0 / f->fp_range));
	st->kicks_total = f->kicks_total;
	st->kicks_max = f->kicks_max;
	st->stash_used = f->stash_count;
	st->adds_failed = f->adds_failed;
	st->kicks_failed = f->kicks_failed;
	st->walks_skipped = f->walks_skipped;
	st->saturated = f->items >= f->walk_limit;
}

uint64_t
cf_relocations(const struct cf_filter *f)
{
	return f->relocations;
}

void
cf_get_params(const struct cf_filter *f, struct cf_params *params)
{
	*params = f->params;
}

#ifndef CFU_MARCH
#define CFU_MARCH "the compiler's default"
#endif

/*
 * The clone CFU_TARGET_CLONES's resolvers pick, by the same test of the
 * same flags (libgcc's __cpu_model, which they read), highest first.
 */
const char *
cf_dispatch_isa(void)
{
#ifdef CFU_CLONES
	__builtin_cpu_init();
	if (__builtin_cpu_supports("x86-64-v4"))
		return "x86-64-v4 (AVX-512)";
	if (__builtin_cpu_supports("x86-64-v3"))
		return "x86-64-v3 (AVX2)";
	return "baseline (-march=" CFU_MARCH ")";
#else
	return "no dispatch (-march=" CFU_MARCH ")";
#endif
}
