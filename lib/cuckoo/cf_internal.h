/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CF_INTERNAL_H_
#define _CF_INTERNAL_H_

/*
 * Private layout of struct cf_filter and the bucket primitives shared by
 * cuckoo_filter.c, cf_scan.c, cf_semisort.c and cf_io.c. Never installed.
 *
 * The table is one bit array: bucket i starts at bit i * pitch_bits.
 * A plain slot holds an f-bit fingerprint, 0 meaning empty. A semi-sorted
 * bucket holds a 12-bit code for the sorted low nibbles of its four
 * fingerprints, then the four (f - 4)-bit high parts in the same order.
 * Plain and semi-sorted buckets are packed (pitch_bits = bucket_bits),
 * their values in an array of their own. An interleaved bucket is a
 * power-of-two stride of at most 64 bytes, aligned: its fingerprints as
 * in a plain one, then from value_off its slots' values, then zero
 * bytes; a hit then reads no other line for its value.
 *
 * Buckets of at most 64 bits are read with one unaligned load and
 * compared as b lanes of f bits at once (SWAR); wider ones slot by slot.
 *
 * Bucket indices, slot positions and slot counts are uint32_t: the
 * parameter check keeps every table at or below CF_MAX_TABLE_SLOTS (2^31)
 * slots, so bucket * slots + s, slots + stash index, and the exact-size
 * alternate h - i + buckets never wrap. Byte and bit offsets (bucket *
 * bucket_bits, slot * value_bytes) are computed in 64 bits.
 */

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "cfutil.h"
/* The library defines the per-key calls that cf_inline.h inlines into
 * its users: here they are the functions themselves. */
#define CF_NO_INLINE 1
#include "cuckoo_filter.h"

/* The error convention (cfutil.h): errno set and -e returned. Public
 * functions fail through these; the hot internal helpers return -e only,
 * so a lookup's or delete's miss inside a bulk call writes no errno. */
static inline int
cf_err(int e)
{
	errno = e;
	return -e;
}

/* @p r, with errno set if it is a failure. */
static inline int
cf_ret(int r)
{
	if (r < 0)
		errno = -r;
	return r;
}

#define CF_ALIGN 64
/* Bytes past the last bucket so that 64-bit loads never leave the table. */
#define CF_TABLE_PAD 16
#define CF_MAX_SLOTS 8
/* Smaller tables stay in a core's L2 (1 MiB on the machines we measured):
 * bulk calls skip the prefetch pass, which would only cost instructions. */
#define CF_PREFETCH_MIN_BYTES (1u << 20)

enum cf_mode {
	CF_MODE_BYTES,    /* plain, whole-byte bucket of <= 64 bits: SWAR */
	CF_MODE_WORD,     /* plain, bucket fits a 64-bit word: SWAR compare */
	CF_MODE_SLOTS,    /* plain, wider bucket: cf_slots_match() */
	CF_MODE_SEMISORT, /* semi-sorted 4-slot bucket, decoded to lanes */
};

/* CF_MODE_SLOTS buckets of whole 16- or 32-bit lanes, compared as
 * vectors (cf_slots_match()). */
enum cf_wide {
	CF_WIDE_NONE,  /* other widths: slot by slot */
	CF_WIDE_32X4,  /* 4 x 32 bits: one 128-bit compare */
	CF_WIDE_32X8,  /* 8 x 32 bits: two */
	CF_WIDE_16X8,  /* 8 x 16 bits: one */
};

struct cf_stash_entry {
	uint32_t bucket; /* one of the item's two buckets */
	uint32_t fp;
	uint64_t value;
	uint64_t aux;    /* its aux word (cf_params.aux_bits) */
};

/* One step of a kick path: fp/value were written into bucket (and
 * cf_filter.path_aux[step] the aux word, with aux words). */
struct cf_kick {
	uint32_t bucket;
	uint32_t fp;
	uint64_t value;
};

/* The fingerprints and values of one bucket, in slot order. */
struct cf_bucket {
	uint32_t fp[CF_MAX_SLOTS];
	uint64_t value[CF_MAX_SLOTS];
};

struct cf_filter {
	/*
	 * Read by every lookup. The fields up to inline_add are those of
	 * struct cf_inline_fields (cf_inline.h), which the inline per-key
	 * calls of a caller's program read (and an inline add writes:
	 * table, items), in the same order and types: cuckoo_filter.c
	 * asserts it.
	 */
	uint8_t *table;
	uint64_t key_flip;      /* XXH3's bitflip of 8-byte keys, this seed */
	uint64_t buckets;
	uint64_t bucket_word_mask; /* CF_MODE_BYTES: low bucket_bits set */
	uint64_t lane_lo;       /* bit 0 of each f-bit lane */
	uint64_t lane_hi;       /* top bit of each f-bit lane */
	uint64_t items;         /* in the table, stash excluded */
	uint64_t int_seed;      /* cf_hash_u64()'s, from the seed */
	uint64_t alt_mul;       /* CF_ALT_MUL_: a field for the inline calls */
	uint32_t bucket_mask;   /* buckets - 1 */
	uint32_t pitch_bytes;   /* from one bucket to the next, where whole */
	uint32_t fp_bits;
	uint32_t fp_range;      /* 2^fp_bits - 1: fingerprints are 1..range */
	uint32_t stash_count;
	bool pow2;              /* buckets is a power of two */
	uint8_t inline_kind;    /* enum cf_inline_kind */
	bool inline_add;        /* inline_kind, no values: inline adds */
	uint8_t key_hash;       /* enum cf_key_hash */

	uint8_t *values;        /* NULL without values or interleaved */
	/* Aux words (cf_params.aux_bits): with plain values, inline, each
	 * after its slot's value in the values array (value_stride =
	 * value_bytes + 8), so that a hit's value and word share a line;
	 * else in aux[] by slot. aux[] also holds the kick path's words
	 * (path_aux). */
	bool aux_inline;
	uint32_t value_stride;  /* plain values: bytes from a slot's to the
				 * next's */
	uint64_t *aux;          /* aux words by slot, or NULL */
	bool interleaved;       /* values in the bucket (value_off) */
	uint32_t bucket_bits;   /* bits of fingerprints per bucket */
	uint32_t pitch_bits;    /* from one bucket to the next */
	uint32_t value_off;     /* interleaved: values' byte offset */
	uint32_t slots;         /* slots per bucket */
	uint32_t slot_shift;    /* log2(slots): positions split without a div */
	uint32_t value_bytes;
	uint64_t value_mask;    /* values are stored truncated to this */
	enum cf_mode mode;
	uint32_t prefetch_span; /* offset of a bucket's last byte */
	uint32_t bucket_bytes;  /* CF_MODE_BYTES: bytes per bucket */
	uint32_t wide;          /* CF_MODE_SLOTS: enum cf_wide */
	bool prefetch;          /* table larger than CF_PREFETCH_MIN_BYTES */
	uint8_t lane_of_bit[64];
	struct cf_stash_entry stash[CF_STASH_SIZE];

	/* Semi-sorted layout: width and mask of each high part. */
	uint32_t high_bits;
	uint64_t high_mask;

	/* Written by adds and deletes. */
	/* Load limit: adds walk only while items < walk_limit. UINT64_MAX
	 * until a walk fails with the stash full, then slack items below
	 * the count it failed at; the next walk (once deletes went below)
	 * lifts it again. */
	uint64_t walk_limit;
	uint64_t kicks_total;
	uint64_t relocations;   /* see cf_relocations() */
	uint64_t kicks_max;
	uint64_t adds_failed;
	uint64_t kicks_failed;  /* steps of walks undone */
	uint64_t walks_skipped; /* adds that did not walk: at the limit */
	uint64_t rng;
	struct cf_kick *path;   /* max_kicks entries, for rollback */
	uint64_t *path_aux;     /* and their aux words, or NULL */

	/* Cold. */
	struct cf_params params;
	struct cf_allocator alloc;
	uint64_t table_bytes;
	uint64_t values_bytes;  /* of the values array (with inline aux
				 * words) */
	uint64_t aux_bytes;
	uint64_t path_bytes;
};

static inline uint64_t
cf_load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void
cf_store64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline uint64_t
cf_low_mask(uint32_t nbits)
{
	return nbits >= 64 ? UINT64_MAX : (UINT64_C(1) << nbits) - 1;
}

/* Read nbits (<= 64) at bit offset bitpos; little-endian bit order. */
static inline uint64_t
cf_load_bits(const uint8_t *base, uint64_t bitpos, uint32_t nbits)
{
	const uint8_t *p = base + (bitpos >> 3);
	uint32_t sh = bitpos & 7;
	uint64_t v = cf_load64(p) >> sh;

	if (sh + nbits > 64)
		v |= (uint64_t)p[8] << (64 - sh);
	return v & cf_low_mask(nbits);
}

static inline void
cf_store_bits(uint8_t *base, uint64_t bitpos, uint32_t nbits, uint64_t v)
{
	uint8_t *p = base + (bitpos >> 3);
	uint32_t sh = bitpos & 7;
	uint64_t mask = cf_low_mask(nbits);
	uint64_t w = cf_load64(p);

	w = (w & ~(mask << sh)) | ((v & mask) << sh);
	cf_store64(p, w);
	if (sh + nbits > 64) {
		uint32_t spill = sh + nbits - 64;
		uint8_t m = (uint8_t)((1u << spill) - 1);

		p[8] = (uint8_t)((p[8] & ~m) | ((v >> (64 - sh)) & m));
	}
}

static inline bool
cf_has_values(const struct cf_filter *f)
{
	return f->value_bytes != 0;
}

/* Where the value of table slot number slot (bucket * slots + s) is. */
static inline uint8_t *
cf_value_ptr(const struct cf_filter *f, uint64_t slot)
{
	if (f->interleaved)
		return f->table + (slot >> f->slot_shift) * f->pitch_bytes +
			f->value_off + (slot & (f->slots - 1)) * f->value_bytes;
	return f->values + slot * f->value_stride;
}

/* Value of table slot number slot (bucket * slots + s). */
static inline uint64_t
cf_value_load(const struct cf_filter *f, uint64_t slot)
{
	const uint8_t *p = cf_value_ptr(f, slot);
	uint16_t v16;
	uint32_t v32;

	switch (f->value_bytes) {
	case 1:
		return *p;
	case 2:
		memcpy(&v16, p, sizeof(v16));
		return v16;
	case 4:
		memcpy(&v32, p, sizeof(v32));
		return v32;
	default:
		return cf_load64(p);
	}
}

static inline void
cf_value_store(struct cf_filter *f, uint64_t slot, uint64_t value)
{
	uint8_t *p = cf_value_ptr(f, slot);
	uint16_t v16 = (uint16_t)value;
	uint32_t v32 = (uint32_t)value;

	switch (f->value_bytes) {
	case 1:
		*p = (uint8_t)value;
		break;
	case 2:
		memcpy(p, &v16, sizeof(v16));
		break;
	case 4:
		memcpy(p, &v32, sizeof(v32));
		break;
	default:
		cf_store64(p, value);
	}
}

/* Where the aux word of table slot number slot is (aux words on). */
static inline uint8_t *
cf_aux_ptr(const struct cf_filter *f, uint64_t slot)
{
	if (f->aux_inline)
		return f->values + slot * f->value_stride + f->value_bytes;
	return (uint8_t *)&f->aux[slot];
}

/* The aux word of table slot number slot, 0 without aux words. */
static inline uint64_t
cf_aux_load(const struct cf_filter *f, uint64_t slot)
{
	return f->params.aux_bits != 0 ? cf_load64(cf_aux_ptr(f, slot)) : 0;
}

static inline void
cf_aux_store(struct cf_filter *f, uint64_t slot, uint64_t aux)
{
	if (f->params.aux_bits != 0)
		cf_store64(cf_aux_ptr(f, slot), aux);
}

/* x in [0, 2^32) mapped onto [0, n): a multiply, not a division. */
static inline uint32_t
cf_range(uint32_t x, uint64_t n)
{
	return (uint32_t)(((uint64_t)x * n) >> 32);
}

/*
 * Index from the high 32 bits, fingerprint from the low 32 bits: two
 * independent parts of one hash. The fingerprint is mapped onto 1..range
 * by a multiply-shift, which is uniform up to range / 2^32, so 0 stays
 * free to mean "empty" without favouring any value.
 */
static inline uint32_t
cf_index(const struct cf_filter *f, uint64_t hash)
{
	return f->pow2 ? (uint32_t)(hash >> 32) & f->bucket_mask :
		cf_range((uint32_t)(hash >> 32), f->buckets);
}

static inline uint32_t
cf_fingerprint(const struct cf_filter *f, uint64_t hash)
{
	return 1 + (uint32_t)(((hash & UINT32_MAX) * f->fp_range) >> 32);
}

/*
 * Partial-key cuckoo hashing: the alternate bucket depends only on the
 * current bucket and the fingerprint. The fingerprint is mixed first
 * (Fibonacci hashing), so that close fingerprints land far apart.
 *
 * On a power-of-two table it is the paper's i XOR h(fp). XOR is not an
 * involution modulo any other bucket count (the blog version's bug);
 * there (cf_params.exact_size) it is (h(fp) - i) mod buckets, which is:
 * h - (h - i) = i.
 */
static inline uint32_t
cf_alt_index(const struct cf_filter *f, uint32_t i, uint32_t fp)
{
	uint64_t mix = (uint64_t)fp * CF_ALT_MUL_;
	uint32_t h, alt;

	if (f->pow2)
		return (i ^ (uint32_t)(mix >> 32)) & f->bucket_mask;
	h = cf_range((uint32_t)(mix >> 32), f->buckets);
	alt = h - i;
	return h >= i ? alt : alt + (uint32_t)f->buckets;
}

static inline const uint8_t *
cf_bucket_addr(const struct cf_filter *f, uint32_t i)
{
	return f->table + (((uint64_t)i * f->pitch_bits) >> 3);
}

static inline void
cf_prefetch_bucket(const struct cf_filter *f, uint32_t i)
{
	const uint8_t *p = cf_bucket_addr(f, i);

	__builtin_prefetch(p, 0, 3);
	/* A second line only when the bucket spans one: a redundant prefetch
	 * still takes a miss buffer, and stalls when they are all busy. */
	if (((uintptr_t)p & 63) + f->prefetch_span >= 64)
		__builtin_prefetch(p + f->prefetch_span, 0, 3);
}

/* Lane flags: the top bit of each f-bit lane of x that is zero. Exact up
 * to and including the lowest zero lane, which is all callers use. */
static inline uint64_t
cf_zero_lanes(const struct cf_filter *f, uint64_t x)
{
	return (x - f->lane_lo) & ~x & f->lane_hi;
}

/*
 * The stash invariant: at most CF_STASH_SIZE entries, each with a bucket
 * of the table, a non-empty fingerprint in range and a value within
 * value_mask. Loading checks it of a file's stash; CFU_ASSERT of the
 * filter's after each change.
 */
static inline bool
cf_stash_valid(const struct cf_filter *f)
{
	if (f->stash_count > CF_STASH_SIZE)
		return false;
	for (uint32_t k = 0; k < f->stash_count; k++) {
		const struct cf_stash_entry *e = &f->stash[k];

		if (e->bucket >= f->buckets || e->fp == 0 ||
				e->fp > f->fp_range ||
				(e->value & ~f->value_mask) != 0)
			return false;
	}
	return true;
}

/* An interleaved bucket's stride in bytes for these parameters, and the
 * offset of its values; 0 if it would exceed a cache line. */
static inline uint32_t
cf_interleave_stride(const struct cf_params *p, uint32_t *value_off)
{
	uint32_t value_bytes = p->value_bits / 8;
	uint32_t fp_bytes = (p->bucket_slots * p->fp_bits + 7) / 8;
	uint32_t off = value_bytes == 0 ? fp_bytes :
		(fp_bytes + value_bytes - 1) / value_bytes * value_bytes;
	uint32_t need = off + p->bucket_slots * value_bytes, stride = 1;

	while (stride < need)
		stride <<= 1;
	if (value_off != NULL)
		*value_off = off;
	return stride <= CF_ALIGN ? stride : 0;
}

/* Slots of the table, the stash excluded: the first stash position. */
static inline uint32_t
cf_table_slots(const struct cf_filter *f)
{
	return (uint32_t)(f->buckets * f->slots);
}

/* Remove stash entry k. */
static inline void
cf_stash_remove(struct cf_filter *f, uint32_t k)
{
	CFU_ASSERT(k < f->stash_count);
	/* The entries after k move down one position. */
	f->relocations++;
	f->stash_count--;
	memmove(&f->stash[k], &f->stash[k + 1],
			(f->stash_count - k) * sizeof(f->stash[0]));
	CFU_ASSERT(cf_stash_valid(f));
}

/* Stash items take free slots of their buckets, with no walk: after a
 * scan emptied slots of many buckets (cuckoo_filter.c). */
void cf_stash_rehome_any(struct cf_filter *f);
/* Below the load limit, stash items also try a walk each, until one
 * fails (cuckoo_filter.c). */
void cf_stash_rehome_walk(struct cf_filter *f);

/* Fill defaults and check; 0 or -EINVAL. Sets the bucket count. */
int cf_params_resolve(const struct cf_params *in, struct cf_params *out,
		uint64_t *buckets);
/* Derive the layout fields of f from f->params and a bucket count. */
void cf_geometry_init(struct cf_filter *f, uint64_t buckets);
/* Read the fingerprints and values of bucket i, in slot order. */
void cf_bucket_read(const struct cf_filter *f, uint32_t i,
		struct cf_bucket *b);
/* Allocate an empty filter; NULL with errno set. */
struct cf_filter *cf_create_geometry(const struct cf_params *p,
		uint64_t buckets);

/*
 * Order of entries in a semi-sorted bucket: low nibble first, so that the
 * nibbles come out sorted. Plain buckets pick kick victims by rank in the
 * same order, so both layouts place items identically.
 */
static inline uint32_t
cf_sort_key(uint32_t fp)
{
	return (fp & 0xf) << 28 | fp >> 4;
}

/* Sorted 4-nibble multisets: C(16 + 4 - 1, 4). */
#define CF_SEMISORT_CODES 3876

/* Sorted low nibbles of each 12-bit semi-sorted code, 4 bits each. */
extern uint16_t cf_semisort_decode[4096];

/* Expand a semi-sorted bucket word to 4 lanes of f bits. */
static inline __attribute__((always_inline)) uint64_t
cf_semisort_lanes(const struct cf_filter *f, uint64_t word)
{
	uint32_t nibbles = cf_semisort_decode[word & 0xfff];
	uint64_t highs = word >> 12;
	uint64_t lanes = 0;

	for (uint32_t k = 0; k < 4; k++) {
		uint64_t high = (highs >> (k * f->high_bits)) & f->high_mask;
		uint64_t lane = (high << 4) | ((nibbles >> (4 * k)) & 0xf);

		lanes |= lane << (k * f->fp_bits);
	}
	return lanes;
}

void cf_semisort_read(const struct cf_filter *f, uint32_t i,
		struct cf_bucket *b);
void cf_semisort_write(struct cf_filter *f, uint32_t i, struct cf_bucket *b,
		uint32_t *order);
void cf_semisort_init(void);

/* Bucket i as b lanes of f bits (word and semi-sorted modes). */
static inline __attribute__((always_inline)) uint64_t
cf_bucket_lanes(const struct cf_filter *f, uint32_t i, enum cf_mode mode)
{
	uint64_t w;

	if (mode == CF_MODE_BYTES)
		return cf_load64(f->table + (uint64_t)i * f->pitch_bytes) &
			f->bucket_word_mask;
	w = cf_load_bits(f->table, (uint64_t)i * f->pitch_bits,
			f->bucket_bits);
	return mode == CF_MODE_SEMISORT ? cf_semisort_lanes(f, w) : w;
}

/* Lane flags of the slots of bucket i holding fp (word/semisort modes). */
static inline __attribute__((always_inline)) uint64_t
cf_match_lanes(const struct cf_filter *f, uint32_t i, uint32_t fp,
		enum cf_mode mode)
{
	return cf_zero_lanes(f, cf_bucket_lanes(f, i, mode) ^
			((uint64_t)fp * f->lane_lo));
}

static inline uint32_t
cf_slot_fp(const struct cf_filter *f, uint32_t i, uint32_t s)
{
	return (uint32_t)cf_load_bits(f->table,
			(uint64_t)i * f->pitch_bits + (uint64_t)s * f->fp_bits,
			f->fp_bits);
}

#ifdef __SSE2__
/* Bit k set where 32-bit lane k of the 16 bytes at @p p is @p fp. */
static inline __attribute__((always_inline)) uint32_t
cf_match_128_32(const uint8_t *p, __m128i fp)
{
	__m128i eq = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)p), fp);

	return (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(eq));
}
#endif

/*
 * The slots of a CF_MODE_SLOTS bucket i that hold fp, as a mask (bit s:
 * slot s): every slot compared, nothing branches on the contents. Whole
 * 32- and 16-bit lanes are compared 4 or 8 at a time (SSE2: a compare
 * and a movemask, as rte_hash compares its signatures); other widths
 * slot by slot, the matches OR-accumulated.
 */
static inline __attribute__((always_inline)) uint32_t
cf_slots_match(const struct cf_filter *f, uint32_t i, uint32_t fp)
{
	uint32_t m = 0;
#ifdef __SSE2__
	const uint8_t *p = f->table + (uint64_t)i * f->pitch_bytes;
	__m128i eq, v = _mm_set1_epi32((int)fp);

	switch (f->wide) {
	case CF_WIDE_32X4:
		return cf_match_128_32(p, v);
	case CF_WIDE_32X8:
		return cf_match_128_32(p, v) | cf_match_128_32(p + 16, v) << 4;
	case CF_WIDE_16X8:
		/* the 8 results packed to bytes, one mask bit each */
		eq = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)p),
			_mm_set1_epi16((short)fp));
		return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(eq,
			_mm_setzero_si128()));
	default:
		break;
	}
#endif
	for (uint32_t s = 0; s < f->slots; s++)
		m |= (uint32_t)(cf_slot_fp(f, i, s) == fp) << s;
	return m;
}

/*
 * The slots of bucket i that hold fp, in every mode: lane flags (the top
 * bit of each f-bit lane, exact up to the lowest) or, CF_MODE_SLOTS, a
 * slot mask. Non-zero if any slot does; cf_match_slot() names the first.
 * No branch on the bucket's contents.
 */
static inline __attribute__((always_inline)) uint64_t
cf_bucket_match(const struct cf_filter *f, uint32_t i, uint32_t fp,
		enum cf_mode mode)
{
	return mode == CF_MODE_SLOTS ? cf_slots_match(f, i, fp) :
		cf_match_lanes(f, i, fp, mode);
}

/* The first slot of a non-zero cf_bucket_match(). */
static inline __attribute__((always_inline)) uint32_t
cf_match_slot(const struct cf_filter *f, uint64_t m, enum cf_mode mode)
{
	return mode == CF_MODE_SLOTS ? (uint32_t)__builtin_ctzll(m) :
		f->lane_of_bit[__builtin_ctzll(m)];
}

/* Slot of bucket i holding fp, or -1. */
static inline __attribute__((always_inline)) int
cf_find_in_bucket(const struct cf_filter *f, uint32_t i, uint32_t fp,
		enum cf_mode mode)
{
	uint64_t m = cf_bucket_match(f, i, fp, mode);

	return m ? (int)cf_match_slot(f, m, mode) : -1;
}

#endif /* _CF_INTERNAL_H_ */
