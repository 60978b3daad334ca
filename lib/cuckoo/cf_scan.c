/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The scan of lib/cuckoo: cf_scan_batch(), cf_scan_due() and cf_scan(),
 * which visit a bounded number of buckets per call from a cursor,
 * hand their items to a callback in batches of up to 64 slots and
 * delete what it selects; the stash at each wrap. cf_scan_due() judges
 * the items' stamps itself (SWAR over a bucket's values), so that the
 * callback sees only the due ones. The bucket primitives are
 * cf_internal.h's, the stash's upkeep cuckoo_filter.c's.
 */

#include <errno.h>
#include <string.h>

#include "cf_internal.h"
#include "cfutil.h"

/* Write the fingerprints and values of bucket i, in slot order: the
 * scan's deletions, a bucket at a time. */
static void
bucket_write(struct cf_filter *f, uint32_t i, struct cf_bucket *b)
{
	if (f->mode == CF_MODE_SEMISORT) {
		/* Re-sorting can move every item of the bucket. */
		f->relocations++;
		cf_semisort_write(f, i, b, NULL);
		return;
	}
	for (uint32_t s = 0; s < f->slots; s++) {
		cf_store_bits(f->table, (uint64_t)i * f->pitch_bits +
				(uint64_t)s * f->fp_bits, f->fp_bits, b->fp[s]);
		if (cf_has_values(f))
			cf_value_store(f, (uint64_t)i * f->slots + s,
					b->value[s]);
	}
}

/*
 * A scan runs a few batches per call between bursts of lookups, so the
 * hardware prefetchers lose its stream: each batch fetches the lines of
 * the buckets this far ahead of its own (two calls ahead, with the
 * tracker's 64 a call). A fixed distance in buckets, so that batches of
 * any size prefetch one contiguous stream, with no holes.
 */
#define SCAN_PREFETCH_AHEAD 128

static inline __attribute__((always_inline)) void
scan_prefetch(const struct cf_filter *f, uint64_t c, uint64_t nb)
{
	const uint8_t *p, *end;

	if (c + nb > f->buckets)
		return;
	p = cf_bucket_addr(f, (uint32_t)c);
	end = cf_bucket_addr(f, (uint32_t)(c + nb - 1)) + f->prefetch_span;
	for (p -= (uintptr_t)p & 63; p <= end; p += 64)
		__builtin_prefetch(p, 0, 1);
	if (f->values == NULL)
		return;
	p = f->values + c * f->slots * f->value_stride;
	end = p + nb * f->slots * f->value_stride - 1;
	for (p -= (uintptr_t)p & 63; p <= end; p += 64)
		__builtin_prefetch(p, 0, 1);
}

/* Occupancy and values of buckets c..c+nb-1 into a batch: slot k of the
 * batch is bucket c + k / slots, slot k % slots. */
static inline __attribute__((always_inline)) uint64_t
scan_gather(const struct cf_filter *f, uint64_t c, uint32_t nb,
		uint64_t *values)
{
	uint64_t used = 0;
	uint32_t n = nb * f->slots;

	if (f->mode == CF_MODE_SEMISORT) {
		for (uint32_t j = 0; j < nb; j++) {
			struct cf_bucket b;

			cf_semisort_read(f, (uint32_t)(c + j), &b);
			for (uint32_t s = 0; s < f->slots; s++) {
				used |= (uint64_t)(b.fp[s] != 0) <<
					(j * f->slots + s);
				values[j * f->slots + s] = b.value[s];
			}
		}
		return used;
	}
	for (uint32_t j = 0; j < nb; j++) {
		uint32_t i = (uint32_t)(c + j);

		if (f->mode == CF_MODE_SLOTS) {
			for (uint32_t s = 0; s < f->slots; s++)
				used |= (uint64_t)(cf_slot_fp(f, i, s) != 0) <<
					(j * f->slots + s);
			continue;
		}
		/* The whole bucket in one load. */
		uint64_t w = cf_bucket_lanes(f, i, f->mode);
		uint64_t fp_mask = cf_low_mask(f->fp_bits);

		for (uint32_t s = 0; s < f->slots; s++)
			used |= (uint64_t)(((w >> (s * f->fp_bits)) &
				fp_mask) != 0) << (j * f->slots + s);
	}
	for (uint32_t k = 0; k < n; k++)
		values[k] = cf_has_values(f) ?
			cf_value_load(f, c * f->slots + k) : 0;
	return used;
}

/* Empty the slots of buckets c.. that @p del selects. */
static void
scan_delete(struct cf_filter *f, uint64_t c, uint64_t del)
{
	while (del != 0) {
		uint32_t k = (uint32_t)__builtin_ctzll(del);
		uint32_t i = (uint32_t)(c + (k >> f->slot_shift));
		struct cf_bucket b;

		cf_bucket_read(f, i, &b);
		/* Every selected slot of this bucket at once. */
		for (uint32_t s = 0; s < f->slots; s++) {
			uint32_t bit = (i - (uint32_t)c) * f->slots + s;

			if (!((del >> bit) & 1))
				continue;
			/* del is masked with the slots in use. */
			CFU_ASSERT(b.fp[s] != 0 && f->items > 0);
			b.fp[s] = 0;
			b.value[s] = 0;
			del &= ~(UINT64_C(1) << bit);
			f->items--;
		}
		bucket_write(f, i, &b);
	}
}

/*
 * The due test of cf_scan_due(), prepared. An item is due when
 * (now - stamp - lo) mod 2^bits <= span, lo = min_age + 1 and span =
 * max_age - lo: one compare for the two bounds.
 *
 * SWAR form (swar): a bucket's values as whole 64-bit words of lanes of
 * L = 8 * value_bytes bits, the stamp shifted to the low `bits` of its
 * lane, with the lane's bit `bits` free as a guard: with G that bit of
 * every lane, (now | G) - x and (d | G) - lo never borrow across lanes,
 * and a + (2^bits - 1 - span) sets the guard exactly where a > span.
 * The lane flags then become slot bits with one multiply (lane_slots).
 */
struct due_prep {
	uint32_t shift;
	uint64_t smask;          /* 2^bits - 1 */
	uint64_t now, lo, span;
	bool swar;
	uint32_t bits;
	uint32_t words;          /* 8-byte words of a bucket's values */
	uint32_t lanes;          /* value lanes a word */
	uint64_t fm, g, now_g, lo_rep, c_rep, mul;
	uint32_t mul_shift;
	/* used slots from the fingerprint word (modes BYTES and WORD with
	 * fp_bits >= slots): exact nonzero lanes, then one multiply */
	bool fp_swar;
	uint64_t fp_low;         /* low fp_bits - 1 bits of each lane */
	uint64_t fp_mul;
	uint32_t fp_mul_shift;
	/* both in one word a bucket, fingerprints whole bytes (CF_MODE_BYTES):
	 * due_batch_words(), with the values' stride */
	bool words1;
	uint32_t value_stride;
};

/* The multiplier that gathers one flag per lane of @p lane_bits (at bit
 * 0 of each of @p lanes lanes) into @p lanes consecutive bits from bit
 * (lane_bits - 1) * (lanes - 1): partial products at lane_bits * k +
 * (lane_bits - 1) * j never collide for lanes <= lane_bits. */
static uint64_t
lane_gather_mul(uint32_t lane_bits, uint32_t lanes)
{
	uint64_t m = 0;

	for (uint32_t j = 0; j < lanes; j++)
		m |= UINT64_C(1) << ((lane_bits - 1) * j);
	return m;
}

static inline uint64_t
lane_slots(uint64_t flags, uint64_t mul, uint32_t mul_shift, uint32_t lanes)
{
	return ((flags * mul) >> mul_shift) & ((UINT64_C(1) << lanes) - 1);
}

static int
due_prepare(const struct cf_filter *f, const struct cf_scan_due *d,
		struct due_prep *p)
{
	uint32_t lane_bits = f->value_bytes * 8;
	uint64_t max_age;

	if (!cf_has_values(f) || d->bits < 1 || d->bits > 63 ||
			d->shift > f->params.value_bits ||
			d->bits > f->params.value_bits - d->shift)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->shift = d->shift;
	p->bits = d->bits;
	p->smask = cf_low_mask(d->bits);
	max_age = d->max_age == 0 ? p->smask : d->max_age;
	if (d->min_age >= p->smask || max_age <= d->min_age ||
			max_age > p->smask)
		return -EINVAL;
	p->now = d->now & p->smask;
	p->lo = d->min_age + 1;
	p->span = max_age - p->lo;
	/* Whole words of lanes with a guard bit above the stamp (values
	 * side by side: not with aux words between them). */
	p->swar = (f->slots * f->value_bytes) % 8 == 0 && d->bits < lane_bits &&
		!f->aux_inline;
	if (p->swar) {
		uint64_t rep = 0;

		p->words = f->slots * f->value_bytes / 8;
		p->lanes = 8 / f->value_bytes;
		for (uint32_t k = 0; k < p->lanes; k++)
			rep |= UINT64_C(1) << (k * lane_bits);
		p->fm = p->smask * rep;
		p->g = (p->smask + 1) * rep;
		p->now_g = p->now * rep | p->g;
		p->lo_rep = p->lo * rep;
		p->c_rep = (p->smask - p->span) * rep;
		p->mul = lane_gather_mul(lane_bits, p->lanes);
		p->mul_shift = (lane_bits - 1) * (p->lanes - 1);
	}
	p->fp_swar = (f->mode == CF_MODE_BYTES || f->mode == CF_MODE_WORD) &&
		f->fp_bits >= f->slots;
	if (p->fp_swar) {
		p->fp_low = f->lane_hi - f->lane_lo;
		p->fp_mul = lane_gather_mul(f->fp_bits, f->slots);
		p->fp_mul_shift = (f->fp_bits - 1) * (f->slots - 1);
	}
	p->words1 = p->swar && p->words == 1 && p->fp_swar &&
		f->mode == CF_MODE_BYTES;
	p->value_stride = f->interleaved ? f->pitch_bytes : 8;
	return 0;
}

static inline bool
due_one(const struct due_prep *p, uint64_t v)
{
	uint64_t stamp = (v >> p->shift) & p->smask;

	return ((p->now - stamp - p->lo) & p->smask) <= p->span;
}

/* Slots (bit s) of one word of values whose stamps are due (SWAR). */
static inline uint64_t
due_word_slots(const struct due_prep *p, uint64_t word)
{
	uint64_t x = (word >> p->shift) & p->fm;
	uint64_t d = (p->now_g - x) & p->fm;
	uint64_t a = ((d | p->g) - p->lo_rep) & p->fm;
	uint64_t flags = ~(a + p->c_rep) & p->g;

	return lane_slots(flags >> p->bits, p->mul, p->mul_shift, p->lanes);
}

/* Slots (bit s) of a bucket word of fingerprints that are not 0
 * (p->fp_swar): exact nonzero lanes, gathered. */
static inline uint64_t
nonzero_fp_slots(const struct cf_filter *f, const struct due_prep *p,
		uint64_t w)
{
	uint64_t nz = (((w & p->fp_low) + p->fp_low) | w) & f->lane_hi;

	return lane_slots(nz >> (f->fp_bits - 1), p->fp_mul, p->fp_mul_shift,
			f->slots);
}

/* Slots (bit s) of bucket i whose values are due, used or not. */
static inline uint64_t
due_values(const struct cf_filter *f, const struct due_prep *p, uint32_t i)
{
	uint64_t slot0 = (uint64_t)i * f->slots, due = 0;

	if (!p->swar) {
		for (uint32_t s = 0; s < f->slots; s++)
			due |= (uint64_t)due_one(p, cf_value_load(f,
					slot0 + s)) << s;
		return due;
	}
	const uint8_t *v = cf_value_ptr(f, slot0);

	for (uint32_t w = 0; w < p->words; w++)
		due |= due_word_slots(p, cf_load64(v + 8 * w)) <<
			(w * p->lanes);
	return due;
}

/* Slots (bit s) of bucket i holding an item. */
static inline uint64_t
used_slots(const struct cf_filter *f, const struct due_prep *p, uint32_t i)
{
	uint64_t used = 0;

	if (p->fp_swar)
		return nonzero_fp_slots(f, p, cf_bucket_lanes(f, i, f->mode));
	if (f->mode == CF_MODE_SEMISORT) {
		struct cf_bucket b;

		cf_semisort_read(f, i, &b);
		for (uint32_t s = 0; s < f->slots; s++)
			used |= (uint64_t)(b.fp[s] != 0) << s;
		return used;
	}
	for (uint32_t s = 0; s < f->slots; s++)
		used |= (uint64_t)(cf_slot_fp(f, i, s) != 0) << s;
	return used;
}

/* The due items of buckets c..c+nb-1 (bit j * slots + s) when a
 * bucket's values and its fingerprints are a word each: branch-free. */
static inline __attribute__((always_inline)) uint64_t
due_batch_words(const struct cf_filter *f, const struct due_prep *p,
		uint64_t c, uint32_t nb)
{
	const uint8_t *fp = f->table + c * f->pitch_bytes;
	const uint8_t *v = cf_value_ptr(f, c * f->slots);
	uint64_t due = 0;

	for (uint32_t j = 0; j < nb; j++) {
		due |= (due_word_slots(p, cf_load64(v)) &
			nonzero_fp_slots(f, p, cf_load64(fp) &
				f->bucket_word_mask)) << (j * f->slots);
		v += p->value_stride;
		fp += f->pitch_bytes;
	}
	return due;
}

/* The due items of buckets c..c+nb-1, as a batch's used mask, and their
 * values (the others' left unset). */
static inline __attribute__((always_inline)) uint64_t
due_gather(const struct cf_filter *f, const struct due_prep *p, uint64_t c,
		uint32_t nb, uint64_t *values)
{
	uint64_t due = 0;

	if (p->words1) {
		due = due_batch_words(f, p, c, nb);
	} else {
		for (uint32_t j = 0; j < nb; j++) {
			uint64_t d = due_values(f, p, (uint32_t)(c + j));

			if (d != 0)
				due |= (d & used_slots(f, p,
					(uint32_t)(c + j))) << (j * f->slots);
		}
	}
	for (uint64_t m = due; m != 0; m &= m - 1) {
		uint32_t k = (uint32_t)__builtin_ctzll(m);

		values[k] = cf_value_load(f, c * f->slots + k);
	}
	return due;
}

static inline __attribute__((always_inline)) uint64_t
scan_run(struct cf_filter *f, uint64_t *cursor, uint64_t nb_buckets,
		const struct due_prep *p, cf_scan_batch_fn fn, void *arg)
{
	uint64_t c = *cursor < f->buckets ? *cursor : 0;
	uint64_t deleted = 0, values[64];

	while (nb_buckets > 0) {
		uint64_t nb = 64 / f->slots, used, del;

		if (nb > nb_buckets)
			nb = nb_buckets;
		if (nb > f->buckets - c)
			nb = f->buckets - c;
		if (f->prefetch)
			scan_prefetch(f, c + SCAN_PREFETCH_AHEAD, nb);
		used = p == NULL ? scan_gather(f, c, (uint32_t)nb, values) :
			due_gather(f, p, c, (uint32_t)nb, values);
		del = used == 0 ? 0 : fn((uint32_t)(c * f->slots), values,
				used, (unsigned int)nb * f->slots, arg) & used;
		if (del != 0) {
			scan_delete(f, c, del);
			deleted += (uint64_t)__builtin_popcountll(del);
		}
		nb_buckets -= nb;
		c += nb;
		if (c < f->buckets)
			continue;
		c = 0;
		if (f->stash_count == 0)
			continue;
		used = 0;
		for (uint32_t k = 0; k < f->stash_count; k++) {
			values[k] = f->stash[k].value;
			used |= (uint64_t)(p == NULL ||
					due_one(p, values[k])) << k;
		}
		del = used == 0 ? 0 : fn(cf_table_slots(f), values, used,
				f->stash_count, arg) & used;
		/* From the top, so that removals do not shift the rest. */
		for (uint32_t k = f->stash_count; k-- > 0;)
			if ((del >> k) & 1) {
				cf_stash_remove(f, k);
				deleted++;
			}
	}
	*cursor = c;
	/* Stash items move back only now, so that a pass that wraps sees
	 * them in the stash rather than in a bucket it has visited. */
	if (deleted != 0 && f->stash_count != 0)
		cf_stash_rehome_any(f);
	if (deleted != 0 && f->stash_count != 0)
		cf_stash_rehome_walk(f);
	return deleted;
}

CFU_TARGET_CLONES uint64_t
cf_scan_batch(struct cf_filter *f, uint64_t *cursor, uint64_t nb_buckets,
		cf_scan_batch_fn fn, void *arg)
{
	return scan_run(f, cursor, nb_buckets, NULL, fn, arg);
}

CFU_TARGET_CLONES int64_t
cf_scan_due(struct cf_filter *f, uint64_t *cursor, uint64_t nb_buckets,
		const struct cf_scan_due *due, cf_scan_batch_fn fn, void *arg)
{
	struct due_prep p;

	if (due == NULL || due_prepare(f, due, &p) < 0)
		return cf_err(EINVAL);
	return (int64_t)scan_run(f, cursor, nb_buckets, &p, fn, arg);
}

struct scan_each {
	cf_scan_fn fn;
	void *arg;
};

static uint64_t
scan_each_item(uint32_t first, const uint64_t *values, uint64_t used,
		unsigned int n, void *arg)
{
	const struct scan_each *e = arg;
	uint64_t del = 0;

	(void)n;
	for (uint64_t m = used; m != 0; m &= m - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(m);

		if (e->fn(first + k, values[k], e->arg))
			del |= UINT64_C(1) << k;
	}
	return del;
}

uint64_t
cf_scan(struct cf_filter *f, uint64_t *cursor, uint64_t nb_buckets,
		cf_scan_fn fn, void *arg)
{
	struct scan_each e = { fn, arg };

	return cf_scan_batch(f, cursor, nb_buckets, scan_each_item, &e);
}
