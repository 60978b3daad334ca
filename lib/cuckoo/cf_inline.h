/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CF_INLINE_H_
#define _CF_INLINE_H_

/**
 * @file
 * The per-key calls compiled into the caller's loop: cf_lookup(),
 * cf_add(), cf_lookup_with_hash() and cf_add_with_hash() of
 * cuckoo_filter.h are static inline where this header can answer them
 * itself, and call the library otherwise. Included by cuckoo_filter.h,
 * which a program includes.
 *
 * What is inline: tables of whole-byte buckets of at most 64 bits (4
 * slots of 8, 12 or 16 bits, 8 of 8, 2 of 16 or 32: the default 12-bit
 * table among them) and of 4 slots of 32 bits (the firewall's), any
 * layout but the semi-sorted one, power-of-two or exact size; keys of 8 bytes (other lengths are hashed by the
 * library) or 64-bit hashes; lookups without a position; adds without
 * a position into tables without values that find a free slot in one
 * of their two buckets. Everything else, and a lookup while the stash
 * holds an item, is the library's call (the same function of the
 * shared library as before this header existed). The inline code keeps
 * the library's hash (cf_hash() of the 8 bytes: seeded XXH3, or
 * cf_hash_u64() in a filter of CF_KEY_HASH_U64), table format and
 * choice of slot, so both write the same bytes.
 *
 * Define CF_NO_INLINE before including cuckoo_filter.h to call the
 * library for everything. The inline calls need GCC or clang, an ELF
 * target and a little-endian CPU; elsewhere they are the library's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

/* Included on its own: the declarations first (their include of this
 * header is then a no-op, its guard set). */
#include "cuckoo_filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @cond CF_INTERNAL */
/**
 * Not API: the leading fields of the opaque struct cf_filter that the
 * inline calls read, and an inline add writes (@p table, @p items). Their
 * order and types may change with any release of the library, with the
 * header; the library asserts that they match its own.
 */
struct cf_inline_fields {
	uint8_t *table;
	uint64_t key_flip;
	uint64_t buckets;
	uint64_t bucket_word_mask;
	uint64_t lane_lo;
	uint64_t lane_hi;
	uint64_t items;
	uint64_t int_seed;
	uint64_t alt_mul;
	uint32_t bucket_mask;
	uint32_t pitch_bytes;
	uint32_t fp_bits;
	uint32_t fp_range;
	uint32_t stash_count;
	bool pow2;
	uint8_t inline_kind;
	bool inline_add;
	uint8_t key_hash;
};

/* cf_inline_snap_.go's bit of CF_KEY_HASH_U64 (key_hash << 9). */
#define CF_INLINE_GO_U64 (1u << 9)

/*
 * The layouts the inline calls know (cf_inline_fields.inline_kind): a
 * power-of-two table of 4-slot buckets of 12- or 16-bit fingerprints,
 * compiled with its constants, and any other whole-byte bucket of one
 * word, from the filter's fields.
 */
enum cf_inline_kind {
	CF_INLINE_NONE = 0,  /* the library's calls */
	CF_INLINE_BYTES = 1, /* whole-byte bucket of <= 64 bits */
	CF_INLINE_P12 = 2,   /* 4 x 12 bits, power of two of buckets */
	CF_INLINE_P16 = 3,   /* 4 x 16 bits, power of two of buckets */
	CF_INLINE_W32 = 4,   /* 4 x 32 bits: two words a bucket */
	CF_INLINE_P32 = 5,   /* 4 x 32 bits, power of two of buckets of
			      * 16 bytes (no values between) */
};
/* The multiplier of the fingerprint's mix in the alternate bucket
 * (cf_internal.h: cf_alt_index), Fibonacci hashing's. */
#define CF_ALT_MUL_ UINT64_C(0x9e3779b97f4a7c15)
/* cf_hash_u64()'s multiplier, of both its folds: Fibonacci hashing's
 * (one constant: one register or one movabs for the two; a second
 * constant, MurmurHash3's, was 3% slower at 2^16 and no better spread). */
#define CF_U64_MUL_ UINT64_C(0x9e3779b97f4a7c15)
/** @endcond */

#ifdef CF_INLINE_CALLS

/* The library's own functions, by their symbols: what the inline calls
 * fall back to. Those that write nothing say so (pure), so that a
 * caller's loop of lookups keeps the filter's fields in registers. */
int cf_lookup_call_(const struct cf_filter *f, const void *key, size_t len)
	__asm__("cf_lookup") __attribute__((pure));
int cf_contains_call_(const struct cf_filter *f, uint64_t hash,
		uint32_t *pos) __asm__("cf_lookup_with_hash")
	__attribute__((pure));
int cf_add_call_(struct cf_filter *f, const void *key, size_t len)
	__asm__("cf_add");
int cf_lookup_with_hash_call_(const struct cf_filter *f, uint64_t hash,
		uint32_t *pos) __asm__("cf_lookup_with_hash");
int cf_add_with_hash_call_(struct cf_filter *f, uint64_t hash,
		uint64_t value, uint32_t *pos) __asm__("cf_add_with_hash");
uint64_t cf_hash_u64_call_(const struct cf_filter *f, uint64_t key)
	__asm__("cf_hash_u64");

static inline __attribute__((always_inline)) const struct cf_inline_fields *
cf_inline_(const struct cf_filter *f)
{
	return (const struct cf_inline_fields *)(const void *)f;
}

/* cf_inline_fold_() in 32-bit multiplies, for targets without 128-bit
 * integers (and a test). */
static inline __attribute__((always_inline)) uint64_t
cf_inline_fold32_(uint64_t a, uint64_t b)
{
	uint64_t lo_lo = (a & UINT32_MAX) * (b & UINT32_MAX);
	uint64_t hi_lo = (a >> 32) * (b & UINT32_MAX);
	uint64_t lo_hi = (a & UINT32_MAX) * (b >> 32);
	uint64_t hi_hi = (a >> 32) * (b >> 32);
	uint64_t cross = (lo_lo >> 32) + (hi_lo & UINT32_MAX) + lo_hi;
	uint64_t hi = (hi_lo >> 32) + (cross >> 32) + hi_hi;

	return (cross << 32 | (lo_lo & UINT32_MAX)) ^ hi;
}

/* The 128-bit product of @p a and @p b, its halves XORed (XXH3's
 * XXH3_mul128_fold64, which the library calls). */
static inline __attribute__((always_inline)) uint64_t
cf_inline_fold_(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
	__extension__ typedef unsigned __int128 u128_;
	u128_ p = (u128_)a * b;

	return (uint64_t)p ^ (uint64_t)(p >> 64);
#else
	return cf_inline_fold32_(a, b);
#endif
}

/* cf_hash_u64() with its seed word: two folds. */
static inline __attribute__((always_inline)) uint64_t
cf_inline_hash_u64_(uint64_t int_seed, uint64_t key)
{
	return cf_inline_fold_(cf_inline_fold_(key ^ int_seed, CF_U64_MUL_),
		CF_U64_MUL_);
}

static inline uint64_t
cf_hash_u64(const struct cf_filter *f, uint64_t key)
{
	return cf_inline_hash_u64_(cf_inline_(f)->int_seed, key);
}

static inline __attribute__((always_inline)) uint64_t
cf_inline_load64_(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * cf_hash() of an 8-byte key: XXH3-64 of 4 to 8 bytes with the filter's
 * seed (xxHash's XXH3_len_4to8_64b and rrmxmx mix), whose seed-dependent
 * part the library computed once (key_flip).
 */
static inline __attribute__((always_inline)) uint64_t
cf_inline_hash8_(uint64_t key_flip, const void *key)
{
	uint64_t x = cf_inline_load64_(key);

	x = ((x << 32) | (x >> 32)) ^ key_flip;
	x ^= ((x << 49) | (x >> 15)) ^ ((x << 24) | (x >> 40));
	x *= UINT64_C(0x9fb21c651e98df25);
	x ^= (x >> 35) + 8;
	x *= UINT64_C(0x9fb21c651e98df25);
	return x ^ (x >> 28);
}

/* One lane's bit in each of 4 lanes of @p fb bits. */
#define CF_INLINE_LANES4_(fb) \
	(UINT64_C(1) | UINT64_C(1) << (fb) | UINT64_C(1) << (2 * (fb)) | \
	 UINT64_C(1) << (3 * (fb)))

/*
 * The geometry of one kind: with @p fb 12 or 16, the constants of 4
 * slots of fb bits on a power-of-two table; with 32, 4 slots of 32 bits
 * (two words of two lanes) on any table; with 0, the filter's fields.
 * The fingerprint (1..fp_range), bucket and alternate bucket are the
 * library's (cf_internal.h: cf_fingerprint, cf_index, cf_alt_index).
 */
struct cf_inline_geo_ {
	const uint8_t *b1;  /* the bucket of the hash */
	uint32_t i1;
	uint32_t fp;
	uint64_t lo;        /* lane_lo */
	uint64_t hi;        /* lane_hi */
	uint32_t pitch;
	uint32_t fp_bits;
};

static inline __attribute__((always_inline)) struct cf_inline_geo_
cf_inline_geo_(const struct cf_inline_fields *v, uint64_t hash, unsigned int fb)
{
	struct cf_inline_geo_ g;
	uint32_t hi = (uint32_t)(hash >> 32);

	if (fb == 32) {
		g.fp_bits = 32;
		g.lo = UINT64_C(0x0000000100000001);
		g.hi = g.lo << 31;
		g.pitch = v->pitch_bytes;
		g.fp = 1 + (uint32_t)(((hash & UINT32_MAX) * UINT32_MAX) >> 32);
		g.i1 = v->pow2 ? hi & v->bucket_mask :
			(uint32_t)(((uint64_t)hi * v->buckets) >> 32);
	} else if (fb != 0) {
		g.fp_bits = fb;
		g.lo = CF_INLINE_LANES4_(fb);
		g.hi = g.lo << (fb - 1);
		/* Opaque to the compiler: one register each for the loop,
		 * and fp * lo one multiply, not a chain of shifts and adds
		 * with the constants built again each time. */
		__asm__("" : "+r"(g.lo), "+r"(g.hi));
		g.pitch = fb / 2;
		g.fp = 1 + (uint32_t)(((hash & UINT32_MAX) *
			((UINT64_C(1) << fb) - 1)) >> 32);
		g.i1 = hi & v->bucket_mask;
	} else {
		g.fp_bits = v->fp_bits;
		g.lo = v->lane_lo;
		g.hi = v->lane_hi;
		g.pitch = v->pitch_bytes;
		g.fp = 1 + (uint32_t)(((hash & UINT32_MAX) * v->fp_range) >>
			32);
		g.i1 = v->pow2 ? hi & v->bucket_mask :
			(uint32_t)(((uint64_t)hi * v->buckets) >> 32);
	}
	g.b1 = v->table + (uint64_t)g.i1 * g.pitch;
	return g;
}

static inline __attribute__((always_inline)) uint32_t
cf_inline_alt_(const struct cf_inline_fields *v, uint32_t i, uint32_t fp,
		unsigned int fb)
{
	uint64_t golden = CF_ALT_MUL_;
	uint32_t mix, h, alt;

	__asm__("" : "+r"(golden));
	mix = (uint32_t)(((uint64_t)fp * golden) >> 32);

	if ((fb != 0 && fb != 32) || v->pow2)
		return (i ^ mix) & v->bucket_mask;
	h = (uint32_t)(((uint64_t)mix * v->buckets) >> 32);
	alt = h - i;
	return h >= i ? alt : alt + (uint32_t)v->buckets;
}

/*
 * The lanes of the bucket word at @p b equal to @p pat's: the top bit of
 * each, exact up to the lowest (SWAR, as the library). The bytes past
 * the bucket need no mask: a borrow runs upward only, and lane_hi has no
 * bit above the last lane.
 */
static inline __attribute__((always_inline)) uint64_t
cf_inline_match_(const struct cf_inline_geo_ *g, const uint8_t *b,
		uint64_t pat)
{
	uint64_t x = cf_inline_load64_(b) ^ pat;

	return (x - g->lo) & ~x & g->hi;
}

/* Membership of a hash in a table of one kind whose stash is empty: both
 * buckets compared before any branch. */
static inline __attribute__((always_inline)) int
cf_inline_contains_k_(const struct cf_filter *f, uint64_t hash,
		unsigned int fb)
{
	const struct cf_inline_fields *v = cf_inline_(f);
	struct cf_inline_geo_ g = cf_inline_geo_(v, hash, fb);
	uint32_t i2 = cf_inline_alt_(v, g.i1, g.fp, fb);
	uint64_t pat = g.fp * g.lo;
	const uint8_t *b2 = v->table + (uint64_t)i2 * g.pitch;
	uint64_t m;

	if (fb == 32) {
		/* each bucket one vector of 4 lanes (GCC's vector
		 * extensions: a compare of 16 bytes where the CPU has one) */
		typedef uint32_t v4u __attribute__((vector_size(16)));
		v4u a, b, e;
		uint64_t w[2];

		memcpy(&a, g.b1, 16);
		memcpy(&b, b2, 16);
		e = (v4u)((a == g.fp) | (b == g.fp));
		memcpy(w, &e, 16);
		return (w[0] | w[1]) != 0;
	}
	m = cf_inline_match_(&g, g.b1, pat) | cf_inline_match_(&g, b2, pat);
	return m != 0;
}

/* An add into a free slot of either bucket (the lowest of the first
 * bucket that has one, as the library), else the library's add. */
static inline __attribute__((always_inline)) int
cf_inline_add_k_(struct cf_filter *f, uint64_t hash, unsigned int fb)
{
	struct cf_inline_fields *v = (struct cf_inline_fields *)(void *)f;
	struct cf_inline_geo_ g = cf_inline_geo_(v, hash, fb);
	uint8_t *b = (uint8_t *)(uintptr_t)g.b1;
	uint64_t z = cf_inline_match_(&g, b, 0), w;

	if (fb == 32 && z == 0) /* its second word */
		z = cf_inline_match_(&g, b += 8, 0);
	if (z == 0) {
		b = v->table + (uint64_t)cf_inline_alt_(v, g.i1, g.fp, fb) *
			g.pitch;
		z = cf_inline_match_(&g, b, 0);
		if (fb == 32 && z == 0)
			z = cf_inline_match_(&g, b += 8, 0);
		if (__builtin_expect(z == 0, 0))
			return cf_add_with_hash_call_(f, hash, 0, NULL);
	}
	/* z's lowest bit is the top bit of the lowest free lane, whose
	 * field starts fp_bits - 1 below: 0, so an OR writes it; the
	 * word's other bytes are written back as they were. */
	w = cf_inline_load64_(b) | ((uint64_t)g.fp <<
		(__builtin_ctzll(z) + 1 - g.fp_bits));
	memcpy(b, &w, sizeof(w));
	v->items++;
	return 0;
}

static inline __attribute__((always_inline)) int
cf_inline_add_(struct cf_filter *f, uint64_t hash)
{
	switch (cf_inline_(f)->inline_kind) {
	case CF_INLINE_P12:
		return cf_inline_add_k_(f, hash, 12);
	case CF_INLINE_P16:
		return cf_inline_add_k_(f, hash, 16);
	case CF_INLINE_W32:
	case CF_INLINE_P32:
		return cf_inline_add_k_(f, hash, 32);
	default:
		return cf_inline_add_k_(f, hash, 0);
	}
}

/*
 * The fields a lookup in a P12, P16 or P32 table reads, all read before
 * any branch: in a caller's loop of lookups, which
 * writes nothing (the library's fallbacks are pure), they are
 * loop-invariant loads the compiler takes out of the loop, as the
 * paper's code has its geometry as constants. @p go is the kind when
 * the stash is empty, else a value no kind has, and for 8-byte keys
 * CF_INLINE_GO_U64 with CF_KEY_HASH_U64: one test for all three.
 */
struct cf_inline_snap_ {
	const uint8_t *table;
	uint64_t key_flip;
	uint64_t int_seed;
	uint64_t lo;       /* lane_lo */
	uint64_t alt_mul;  /* CF_ALT_MUL_ */
	/* 64-bit, so that the bucket numbers need no zero extension */
	uint64_t range;    /* fp_range */
	uint64_t mask;
	uint32_t go;
};

static inline __attribute__((always_inline)) struct cf_inline_snap_
cf_inline_snap_(const struct cf_inline_fields *v)
{
	struct cf_inline_snap_ s;

	s.table = v->table;
	s.key_flip = v->key_flip;
	s.int_seed = v->int_seed;
	s.lo = v->lane_lo;
	s.alt_mul = v->alt_mul;
	s.range = v->fp_range;
	s.mask = v->bucket_mask;
	s.go = v->inline_kind | (v->stash_count != 0) << 8 |
		(uint32_t)v->key_hash << 9;
	return s;
}

/* The fingerprint of a hash and its two buckets in a power-of-two table,
 * as the library derives them (cf_internal.h: cf_fingerprint, cf_index,
 * cf_alt_index), from the snapshot: one multiply each by a register. */
static inline __attribute__((always_inline)) uint64_t
cf_inline_snap_fp_(const struct cf_inline_snap_ *s, uint64_t hash,
		uint64_t *i1, uint64_t *i2)
{
	uint64_t fp = 1 + (((hash & UINT32_MAX) * s->range) >> 32);

	*i1 = (hash >> 32) & s->mask;
	*i2 = (*i1 ^ ((fp * s->alt_mul) >> 32)) & s->mask;
	return fp;
}

/*
 * Membership of a hash in a 4 x @p fb (12 or 16) power-of-two table,
 * stash empty, from the snapshot's values only (multipliers in
 * registers, not constants the compiler would turn into chains of
 * shifts and adds), a bucket's address without a multiply, both bucket
 * words compared as one vector before one branch.
 */
static inline __attribute__((always_inline)) int
cf_inline_has_pow2_(const struct cf_inline_snap_ *s, uint64_t hash,
		unsigned int fb)
{
	const uint64_t hi = CF_INLINE_LANES4_(fb) << (fb - 1);
	uint64_t i1, i2, fp = cf_inline_snap_fp_(s, hash, &i1, &i2);
	uint64_t pat = fp * s->lo;
#if defined(__SSE4_1__)
	__m128i x = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)
		(const void *)(s->table + (size_t)i1 * (fb / 2))),
		_mm_loadl_epi64((const __m128i *)(const void *)
		(s->table + (size_t)i2 * (fb / 2))));

	x = _mm_xor_si128(x, _mm_set1_epi64x((long long)pat));
	x = _mm_andnot_si128(x, _mm_sub_epi64(x,
		_mm_set1_epi64x((long long)CF_INLINE_LANES4_(fb))));
	return !_mm_testz_si128(x, _mm_set1_epi64x((long long)hi));
#else
	uint64_t x1 = cf_inline_load64_(s->table + (size_t)i1 * (fb / 2)) ^
		pat;
	uint64_t x2 = cf_inline_load64_(s->table + (size_t)i2 * (fb / 2)) ^
		pat;

	return (((x1 - s->lo) & ~x1) | ((x2 - s->lo) & ~x2)) & hi ? 1 : 0;
#endif
}

/*
 * The same for 4 x 32 bits (CF_INLINE_P32): each bucket one aligned
 * vector compared with the fingerprint in each lane (as rte_hash
 * compares its signatures: cmpeq and movemask).
 */
static inline __attribute__((always_inline)) int
cf_inline_has_p32_(const struct cf_filter *f,
		const struct cf_inline_snap_ *s, uint64_t hash)
{
#if defined(__SSE2__)
	uint64_t i1, i2, fp = cf_inline_snap_fp_(s, hash, &i1, &i2);
	__m128i v = _mm_set1_epi32((int)fp);
	__m128i a = _mm_load_si128((const __m128i *)(const void *)
		(s->table + (size_t)i1 * 16));
	__m128i b = _mm_load_si128((const __m128i *)(const void *)
		(s->table + (size_t)i2 * 16));

	__m128i m = _mm_or_si128(_mm_cmpeq_epi32(a, v),
		_mm_cmpeq_epi32(b, v));

	(void)f;
#if defined(__SSE4_1__)
	/* ptest: no pmovmskb, and the flag without a zero extension */
	return !_mm_testz_si128(m, m);
#else
	return _mm_movemask_epi8(m) != 0;
#endif
#else
	(void)s;
	return cf_inline_contains_k_(f, hash, 32);
#endif
}

/* Membership of a hash, the snapshot taken: the 12-bit table (the
 * library's and the application's default) first, then the 32-bit one
 * (the firewall's), then the 16-bit one, then the rest. Each test
 * further down costs a lookup about 0.3 ns in a caller's loop
 * (bench_filter --widths at 2^12 slots: the kind tested second 2.44 ns,
 * third 2.77 ns, whichever of 16 and 32 bits it is). */
static inline __attribute__((always_inline)) int
cf_inline_lookup_(const struct cf_filter *f, struct cf_inline_snap_ s,
		uint64_t hash)
{
	if (__builtin_expect(s.go == CF_INLINE_P12, 1))
		return cf_inline_has_pow2_(&s, hash, 12);
	if (s.go == CF_INLINE_P32)
		return cf_inline_has_p32_(f, &s, hash);
	if (s.go == CF_INLINE_P16)
		return cf_inline_has_pow2_(&s, hash, 16);
	if (s.go == CF_INLINE_W32)
		return cf_inline_contains_k_(f, hash, 32);
	if (s.go == CF_INLINE_BYTES)
		return cf_inline_contains_k_(f, hash, 0);
	return cf_contains_call_(f, hash, NULL);
}

/* cf_hash() of an 8-byte key, by the filter's key_hash. */
static inline __attribute__((always_inline)) uint64_t
cf_inline_key8_(const struct cf_inline_fields *v, const void *key)
{
	if (v->key_hash == CF_KEY_HASH_U64)
		return cf_inline_hash_u64_(v->int_seed,
			cf_inline_load64_(key));
	return cf_inline_hash8_(v->key_flip, key);
}

/* The 12-bit power-of-two table with CF_KEY_HASH_U64 by one compare
 * (the choice of a caller who asked for the cheaper hash); else the
 * hash of the filter's choice (one predicted branch), then the kinds in
 * their order. */
static inline __attribute__((always_inline)) int
cf_lookup(const struct cf_filter *f, const void *key, size_t len)
{
	struct cf_inline_snap_ s = cf_inline_snap_(cf_inline_(f));
	uint64_t h;

	if (len != 8)
		return cf_lookup_call_(f, key, len);
	if (__builtin_expect(s.go == (CF_INLINE_P12 | CF_INLINE_GO_U64), 1))
		return cf_inline_has_pow2_(&s, cf_inline_hash_u64_(s.int_seed,
			cf_inline_load64_(key)), 12);
	if (__builtin_expect(!(s.go & CF_INLINE_GO_U64), 1))
		return cf_inline_lookup_(f, s, cf_inline_hash8_(s.key_flip,
			key));
	h = cf_inline_hash_u64_(s.int_seed, cf_inline_load64_(key));
	s.go &= ~CF_INLINE_GO_U64;
	return cf_inline_lookup_(f, s, h);
}

static inline int
cf_add(struct cf_filter *f, const void *key, size_t len)
{
	const struct cf_inline_fields *v = cf_inline_(f);

	if (len != 8 || !v->inline_add)
		return cf_add_call_(f, key, len);
	return cf_inline_add_(f, cf_inline_key8_(v, key));
}

static inline int
cf_lookup_with_hash(const struct cf_filter *f, uint64_t hash, uint32_t *pos)
{
	struct cf_inline_snap_ s = cf_inline_snap_(cf_inline_(f));

	if (pos != NULL)
		return cf_lookup_with_hash_call_(f, hash, pos);
	s.go &= ~CF_INLINE_GO_U64;
	return cf_inline_lookup_(f, s, hash);
}

/* A table without values (inline_add): @p value is not stored. */
static inline int
cf_add_with_hash(struct cf_filter *f, uint64_t hash, uint64_t value,
		uint32_t *pos)
{
	if (pos != NULL || !cf_inline_(f)->inline_add)
		return cf_add_with_hash_call_(f, hash, value, pos);
	return cf_inline_add_(f, hash);
}

#endif /* inline calls */

#ifdef __cplusplus
}
#endif

#endif /* _CF_INLINE_H_ */
