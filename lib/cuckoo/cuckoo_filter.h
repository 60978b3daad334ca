/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CUCKOO_FILTER_H_
#define _CUCKOO_FILTER_H_

/**
 * @file
 * Cuckoo filter: approximate set membership with deletion.
 *
 * An implementation of Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo
 * Filter: Practically Better Than Bloom" (CoNEXT 2014): (2,b) buckets,
 * partial-key cuckoo hashing (alternate bucket = i XOR hash(fingerprint)),
 * insertion by bounded random-walk kicks, semi-sorted buckets (section 5.2)
 * and per-slot values (section 6).
 *
 * Beyond the paper:
 * - no false negatives, even when full: a failed kick path is rolled back,
 *   a small stash absorbs the overflow, and once it is full an add fails
 *   with -ENOSPC without touching any stored item;
 * - bounded work when full: once a kick walk has failed with the stash
 *   full, adds make no walk until deletes bring the table below its load
 *   limit again, so an add or a delete on a full table reads two
 *   buckets, not 2 * 500 (see cf_add_with_hash());
 * - bulk operations on up to 64 hashes that prefetch every candidate bucket
 *   before comparing;
 * - slot positions, so a caller can read, update or delete what a lookup
 *   found without hashing again, and an incremental scan to age entries;
 * - memory through caller-supplied allocator hooks (hugepages, NUMA);
 * - save and load with a versioned, checksummed format.
 *
 * Errors (libbpf's convention): a function that fails returns a negative
 * errno and sets errno to it; a constructor returns NULL with errno set.
 * A lookup's miss is an answer (0), not an error.
 *
 * The library has no DPDK dependency. A filter is not thread safe: one
 * writer, and no reader concurrent with a writer (cuckooflow gives each
 * lcore its own filter).
 */

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "cf_alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * cf_lookup(), cf_add(), cf_lookup_with_hash() and cf_add_with_hash() are
 * static inline (cf_inline.h, included at the end) unless CF_NO_INLINE
 * is defined or the compiler or target cannot have them: then they are
 * the library's calls.
 */
/** @cond CF_INTERNAL */
#if !defined(CF_NO_INLINE) && defined(__GNUC__) && defined(__ELF__) && \
	defined(__BYTE_ORDER__) && \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CF_INLINE_CALLS 1
#define CF_INLINE_API static inline
/* The inline function's own symbol, where a compiler emits it out of
 * line (-O0): not the library's, which its fallback calls by name. */
#define CF_INLINE_SYM(name) __asm__(#name "_inline_")
#else
#define CF_INLINE_API
#define CF_INLINE_SYM(name)
#endif
/** @endcond */

/** Maximum number of hashes in one bulk call. */
#define CF_BULK_MAX 64

/** Number of stash entries that hold items the table could not place. */
#define CF_STASH_SIZE 4

/** Default fingerprint width in bits. */
#define CF_DEFAULT_FP_BITS 12
/** Default number of slots per bucket. */
#define CF_DEFAULT_BUCKET_SLOTS 4
/** Default bound on kicks per insertion (the paper's value). */
#define CF_DEFAULT_MAX_KICKS 500
/** Highest accepted bound on kicks per insertion. */
#define CF_MAX_KICKS_LIMIT 65536
/** Highest load factor the bucket count is sized for. */
#define CF_SIZING_LOAD 0.96

/**
 * Most slots a table may have: 2^31. Slot positions (bucket * slots +
 * slot, then the stash after the last slot) and bucket indices are 32-bit
 * in this API, and the bucket index takes 32 bits of the item's hash; a
 * table of 2^31 slots keeps every position, the stash's included, and
 * every product of a bucket and a slot count below 2^31 + CF_STASH_SIZE,
 * with a bit to spare.
 */
#define CF_MAX_TABLE_SLOTS (UINT64_C(1) << 31)

/**
 * Largest accepted cf_params.capacity: CF_SIZING_LOAD of
 * CF_MAX_TABLE_SLOTS, rounded down (2 061 584 302 items). Any larger
 * capacity rounds up to a table of 2^32 slots or more, whose positions do
 * not fit in 32 bits: cf_create() refuses it with EINVAL, whatever the
 * bucket size or sizing mode. 8 GiB of table and 16-bit values hold it
 * with 16-bit fingerprints; several lcores each have a filter of their
 * own.
 */
#define CF_MAX_CAPACITY UINT64_C(2061584302)

/** Bucket layout. */
enum cf_table_type {
	/** Each slot stores a full f-bit fingerprint (f = 4..32). */
	CF_TABLE_PLAIN = 0,
	/**
	 * Semi-sorted 4-slot buckets (paper section 5.2): the low 4 bits of
	 * the four fingerprints are sorted and coded in 12 bits, so an f-bit
	 * fingerprint costs f - 1 bits (f = 5..16, 4 slots per bucket only).
	 */
	CF_TABLE_SEMISORT = 1,
	/**
	 * Plain fingerprints with each bucket's values beside them, in the
	 * same cache line: a bucket is its fingerprints, then its values
	 * (aligned to their size), padded to a power of two of at most 64
	 * bytes. A lookup that reads the value of a hit (a flow table's
	 * state) touches two lines, not three. Needs value_bits. With 16-bit
	 * fingerprints and 16-bit values, 4 slots, it takes no more memory
	 * than CF_TABLE_PLAIN (16 bytes a bucket); other widths pay the
	 * padding (12-bit fingerprints and 32-bit values: 32 bytes against
	 * 22). Files of this layout are format version 2.
	 */
	CF_TABLE_INTERLEAVED = 2,
};

/**
 * The hash of 8-byte keys (cf_params.key_hash): what cf_add(),
 * cf_lookup(), cf_delete() and the other byte-key calls, and cf_hash(),
 * do with a key of 8 bytes. Keys of any other length are hashed with
 * seeded XXH3-64 whatever the choice.
 */
enum cf_key_hash {
	/** Seeded XXH3-64 of the 8 bytes (the default; every file saved
	 *  before the choice existed). */
	CF_KEY_HASH_XXH3 = 0,
	/**
	 * cf_hash_u64() of the 8 bytes read as a native uint64_t: two
	 * 128-bit multiplies, about 6 instructions against XXH3's 18, of the
	 * same bucket load spread and false positive rate on sequential,
	 * strided and random keys (test_inline --slow). cf_add(f, &key, 8)
	 * then stores what cf_add_with_hash(f, cf_hash_u64(f, key), ...)
	 * does. Saved as format version 3, which older readers refuse.
	 */
	CF_KEY_HASH_U64 = 1,
};

/**
 * Creation parameters. Zero in any field selects the documented default,
 * so a designated initialiser only names what it changes.
 */
struct cf_params {
	/**
	 * Number of items the filter must hold. The bucket count is the
	 * smallest power of two that holds @p capacity at a load of at most
	 * CF_SIZING_LOAD (or exactly that many, see @p exact_size).
	 * Required; 1..CF_MAX_CAPACITY, so that the table has at most
	 * CF_MAX_TABLE_SLOTS slots.
	 */
	uint64_t capacity;
	/**
	 * Size the table to @p capacity at CF_SIZING_LOAD exactly rather
	 * than to the next power of two: up to half the memory. The
	 * alternate bucket is then (h(fp) - i) mod buckets, not the paper's
	 * i XOR h(fp), which is an involution on power-of-two tables only.
	 */
	bool exact_size;
	/**
	 * Fingerprint bits: 4..32 for CF_TABLE_PLAIN and
	 * CF_TABLE_INTERLEAVED, 5..16 for CF_TABLE_SEMISORT (default
	 * CF_DEFAULT_FP_BITS). The false positive
	 * rate is about 2 * bucket_slots * load / 2^fp_bits.
	 */
	unsigned int fp_bits;
	/** Slots per bucket: 2, 4 or 8 (default 4; semi-sorted: 4 only). */
	unsigned int bucket_slots;
	/** Kicks before an insertion gives up (default 500, max 65536). */
	unsigned int max_kicks;
	/**
	 * Bits of value per slot: 0 (none, default), 8, 16, 32 or 64. Values
	 * move with their fingerprint; they live in an array beside the
	 * table, or in the bucket with CF_TABLE_INTERLEAVED (which refuses
	 * a bucket over 64 bytes: 8 slots of 64-bit values).
	 */
	unsigned int value_bits;
	/** Bucket layout (default CF_TABLE_PLAIN). */
	enum cf_table_type table;
	/**
	 * Bits of a second per-slot payload, the aux word: 0 (none,
	 * default) or 64. With plain values it follows each slot's value
	 * in the values array (a hit's value and word are one line, but
	 * for the 1 in 8 pairs that cross into the next), else it lives in
	 * an array of its own; it moves with its item as the value does
	 * (kicks, their rollback, the stash), and is read or written only
	 * through cf_aux_at(): lookups, scans and save/load never read it
	 * (a loaded filter has none; see cf_aux_attach()). An add stores 0.
	 * For data that a lookup must not pay for, or that is too wide for
	 * the value: lib/cflow's flow records. Scans of values laid out so
	 * judge stamps slot by slot. Not with CF_TABLE_SEMISORT (-EINVAL).
	 */
	unsigned int aux_bits;
	/** Seed of the byte-key hash (XXH3-64), of cf_hash_u64() and of
	 *  the kick RNG. */
	uint64_t seed;
	/**
	 * The hash of 8-byte keys (default CF_KEY_HASH_XXH3); see enum
	 * cf_key_hash. Kept by cf_save_mem() and cf_load_mem(); a value
	 * other than the enum's is refused (EINVAL).
	 */
	enum cf_key_hash key_hash;
	/** NUMA socket passed to the allocator (default allocator ignores). */
	int socket_id;
	/**
	 * Memory hooks, or NULL for the default: 64-byte aligned memory,
	 * 2 MiB aligned and advised for transparent hugepages when large.
	 * The struct is copied.
	 */
	const struct cf_allocator *allocator;
};

/** Filter statistics, see cf_stats(). */
struct cf_stats {
	uint64_t items;       /**< Items stored, stash included. */
	uint64_t buckets;     /**< Buckets in the table. */
	uint64_t slots;       /**< Slots in the table (buckets * slots). */
	uint64_t table_bytes; /**< Bytes of the table: fingerprints (and with
			       *   CF_TABLE_INTERLEAVED, values and padding). */
	uint64_t bytes;       /**< All bytes held: table, values, stash. */
	double load_factor;   /**< items / slots. */
	double bits_per_item; /**< table_bytes * 8 / items (0 if empty). */
	double expected_fpr;  /**< False positive rate at this load. */
	uint64_t kicks_total; /**< Kicks made by all successful adds. */
	uint64_t kicks_max;   /**< Longest kick path of a successful add. */
	uint64_t stash_used;  /**< Items now in the stash. */
	uint64_t adds_failed; /**< Adds that returned -ENOSPC. */
	/** Kicks of walks that found no free slot (each then undone). */
	uint64_t kicks_failed;
	/**
	 * Adds (and stash items trying to move back) that found both their
	 * buckets full at the load limit, and so made no walk.
	 */
	uint64_t walks_skipped;
	/** At the load limit now: adds make no kick walk. */
	bool saturated;
};

/** Opaque filter handle. */
struct cf_filter;

/**
 * Create a filter.
 *
 * @param params
 *   Parameters; see struct cf_params.
 * @return
 *   The filter, or NULL with errno set:
 *   - EINVAL if a parameter is out of range or unsupported, including a
 *     capacity above CF_MAX_CAPACITY;
 *   - ENOMEM if memory could not be allocated.
 */
struct cf_filter *cf_create(const struct cf_params *params);

/**
 * The bytes a filter of @p params would hold (cf_stats()' bytes), without
 * creating it: to size a table, or to choose between layouts.
 *
 * @param params
 *   Parameters as cf_create() takes them; NULL is refused (EINVAL).
 * @return
 *   The bytes, or 0 with errno set to EINVAL if cf_create() would refuse
 *   the parameters as out of range.
 */
uint64_t cf_params_bytes(const struct cf_params *params);

/**
 * Free a filter and its memory. NULL is accepted.
 *
 * @param f
 *   The filter, or NULL (nothing is done). Its memory goes back through
 *   the allocator it was created with; positions and pointers into it
 *   are void.
 */
void cf_free(struct cf_filter *f);

/**
 * Hash a key the way the byte-key functions do: seeded XXH3-64, or for
 * an 8-byte key in a filter of CF_KEY_HASH_U64, cf_hash_u64().
 *
 * @param f
 *   The filter.
 * @param key
 *   The key's bytes.
 * @param len
 *   The key's length in bytes.
 * @return
 *   XXH3-64 of the key with the filter's seed (cf_params.seed), or
 *   cf_hash_u64() of its 8 bytes (see cf_params.key_hash): the hash the
 *   byte-key functions pass to their _with_hash() form.
 */
uint64_t cf_hash(const struct cf_filter *f, const void *key, size_t len);

/**
 * A 64-bit hash of an integer key: the key XORed with a word drawn from
 * the filter's seed, then twice a 128-bit multiply by a constant
 * (Fibonacci hashing's) whose two halves are XORed (the "mum" fold of
 * wyhash and of XXH3's XXH3_mul128_fold64). About 6 instructions where seeded XXH3 of the
 * key's 8 bytes takes about 18. Its bucket load spread, fingerprint
 * spread, first-failure load and false positive rate on sequential,
 * strided and random keys are those of XXH3 (test_inline --slow; one
 * multiply, or the paper authors' multiply-shift, fails there on
 * sequential or strided keys). It is the hash of 8-byte keys in a filter
 * created with CF_KEY_HASH_U64 (cf_hash() of the key's bytes then
 * equals it); in a default filter it is for the *_with_hash() calls
 * only, and an item added with it is found only with it. It depends on
 * the seed only, which saved filters keep.
 *
 * @param f
 *   The filter (its seed).
 * @param key
 *   The integer key.
 * @return
 *   The key's 64-bit hash, for cf_add_with_hash() and the other
 *   *_with_hash() calls.
 */
CF_INLINE_API uint64_t cf_hash_u64(const struct cf_filter *f, uint64_t key)
	CF_INLINE_SYM(cf_hash_u64);

/**
 * Add an item by its 64-bit hash. Index and fingerprint come from
 * independent bits: the bucket from the high 32 bits, the fingerprint
 * from the low 32 bits. Adding an item twice stores two copies; at most
 * 2 * bucket_slots copies fit.
 *
 * An item goes into a free slot of its two buckets; if both are full,
 * a random walk of up to max_kicks kicks makes room (paper Algorithm 1);
 * if the walk fails it is undone and the item goes to the stash.
 *
 * Load limit: a walk that fails when the stash is already full (or for
 * a stash item moving back, see cf_delete_with_hash()) shows the table
 * is as full as walks can make it. From then on (cf_stats().saturated)
 * an add whose two buckets are full makes no walk: it goes to the stash
 * if there is room, else fails with -ENOSPC at once. The limit is
 * min(max_kicks, items / 16) items below the count the walk failed at;
 * deletes that take the table below it bring walks back (the next walk
 * lifts the limit until another fails). Filling a table therefore
 * reaches the same load as without the limit: every add walks until the
 * stash has absorbed CF_STASH_SIZE failed walks (the paper's Table 3
 * protocol stops at the first). A full table costs each add two bucket
 * reads, not 2 * max_kicks bucket writes, and failed walks cost a few
 * kicks per delete at most.
 *
 * @param f
 *   The filter.
 * @param hash
 *   A well-mixed 64-bit hash of the item.
 * @param value
 *   Value stored with the item (truncated to value_bits; ignored if 0).
 * @param pos
 *   If not NULL, receives the item's slot position.
 * @return
 *   - 0 on success;
 *   - -ENOSPC if the table and stash are full; no stored item moved.
 */
CF_INLINE_API int cf_add_with_hash(struct cf_filter *f, uint64_t hash,
		uint64_t value, uint32_t *pos) CF_INLINE_SYM(cf_add_with_hash);

/**
 * cf_add_with_hash() of cf_hash(key), with value 0.
 *
 * @param f
 *   The filter.
 * @param key
 *   The item's bytes.
 * @param len
 *   Their length in bytes.
 * @return
 *   0 on success, -ENOSPC if the table and stash are full (errno set).
 */
CF_INLINE_API int cf_add(struct cf_filter *f, const void *key, size_t len)
	CF_INLINE_SYM(cf_add);

/**
 * cf_add_with_hash() that also stores @p aux as the item's aux word
 * (cf_params.aux_bits; ignored without): the word moves with the item
 * from its add on, with no position needed to set it.
 *
 * @param f
 *   The filter.
 * @param hash
 *   The item's 64-bit hash, as cf_add_with_hash() takes it.
 * @param value
 *   Its value (with value_bits; ignored without).
 * @param aux
 *   Its aux word.
 * @param pos
 *   Receives the item's slot position if not NULL, as
 *   cf_add_with_hash() does.
 * @return
 *   0 on success, -ENOSPC if the table and stash are full (errno set).
 */
int cf_add_with_hash_aux(struct cf_filter *f, uint64_t hash, uint64_t value,
		uint64_t aux, uint32_t *pos);

/**
 * Add an item unless its fingerprint is already found (test-and-add).
 * An item never added can be reported present at the false positive rate.
 *
 * @param f
 *   The filter.
 * @param hash
 *   A well-mixed 64-bit hash of the item.
 * @param value
 *   Value stored with the item if added (truncated to value_bits;
 *   ignored if value_bits is 0); a found item's value is not changed.
 * @param pos
 *   If not NULL, receives the slot position of the item added or found.
 * @return
 *   - 0 if added;
 *   - -EEXIST if found (@p pos, if not NULL, receives its position);
 *   - -ENOSPC if not found and no room.
 */
int cf_add_unique_with_hash(struct cf_filter *f, uint64_t hash,
		uint64_t value, uint32_t *pos);

/**
 * cf_add_unique_with_hash() of cf_hash(key), with value 0.
 *
 * @param f
 *   The filter.
 * @param key
 *   The item's bytes.
 * @param len
 *   Their length in bytes.
 * @return
 *   0 if added, -EEXIST if found, -ENOSPC if not found and no room
 *   (errno set on the two errors).
 */
int cf_add_unique(struct cf_filter *f, const void *key, size_t len);

/**
 * Look an item up.
 *
 * @param f
 *   The filter.
 * @param hash
 *   A well-mixed 64-bit hash of the item.
 * @param pos
 *   If not NULL and the item is found, receives its slot position.
 * @return
 *   1 if found (possibly a false positive), 0 if not (never wrong).
 */
CF_INLINE_API int cf_lookup_with_hash(const struct cf_filter *f,
		uint64_t hash, uint32_t *pos) CF_INLINE_SYM(cf_lookup_with_hash);

/**
 * cf_lookup_with_hash() of cf_hash(key).
 *
 * @param f
 *   The filter.
 * @param key
 *   The item's bytes.
 * @param len
 *   Their length in bytes.
 * @return
 *   1 if found (possibly a false positive), 0 if not (never wrong).
 */
CF_INLINE_API int cf_lookup(const struct cf_filter *f, const void *key,
		size_t len) CF_INLINE_SYM(cf_lookup);

/**
 * Delete one copy of an item. Deleting an item that was never added may
 * remove another item with the same fingerprint (a false negative for it):
 * only delete what was added.
 *
 * A stash item of which the emptied bucket is one of the two buckets
 * moves into it. Below the load limit (see cf_add_with_hash()), the
 * other stash items also try a walk each, until one fails; at the limit
 * they stay in the stash, where lookups find them, until a slot of
 * their buckets is emptied.
 *
 * @param f
 *   The filter.
 * @param hash
 *   The 64-bit hash the item was added with.
 * @return
 *   - 0 if one copy was deleted;
 *   - -ENOENT if not found.
 */
int cf_delete_with_hash(struct cf_filter *f, uint64_t hash);

/**
 * cf_delete_with_hash() of cf_hash(key).
 *
 * @param f
 *   The filter.
 * @param key
 *   The item's bytes.
 * @param len
 *   Their length in bytes.
 * @return
 *   0 if one copy was deleted, -ENOENT if not found (errno set).
 */
int cf_delete(struct cf_filter *f, const void *key, size_t len);

/**
 * Count the stored copies of an item's fingerprint in its two buckets
 * and the stash.
 *
 * @param f
 *   The filter.
 * @param hash
 *   A well-mixed 64-bit hash of the item.
 * @return
 *   The number of copies, 0 to 2 * bucket_slots + CF_STASH_SIZE; other
 *   items of the same fingerprint and buckets count too.
 */
unsigned int cf_count_with_hash(const struct cf_filter *f, uint64_t hash);

/**
 * cf_count_with_hash() of cf_hash(key).
 *
 * @param f
 *   The filter.
 * @param key
 *   The item's bytes.
 * @param len
 *   Their length in bytes.
 * @return
 *   The number of copies, as cf_count_with_hash().
 */
unsigned int cf_count(const struct cf_filter *f, const void *key,
		size_t len);

/**
 * Remove every item; parameters and seed are kept, counters reset.
 *
 * @param f
 *   The filter.
 */
void cf_clear(struct cf_filter *f);

/**
 * Look up to CF_BULK_MAX hashes: derive every bucket pair, prefetch them
 * all, then compare.
 *
 * @param f
 *   The filter.
 * @param hashes
 *   The hashes.
 * @param n
 *   How many (1..CF_BULK_MAX).
 * @param hit_mask
 *   Receives bit k set if hashes[k] was found.
 * @param pos
 *   If not NULL, pos[k] receives the slot position of each hit.
 * @return
 *   The number of hits, or -EINVAL if n is 0 or above CF_BULK_MAX.
 */
int cf_lookup_bulk(const struct cf_filter *f, const uint64_t *hashes,
		unsigned int n, uint64_t *hit_mask, uint32_t *pos);

/**
 * Prefetch both candidate buckets of each of @p n hashes (with
 * CF_TABLE_INTERLEAVED, their values too: the same lines). The filter is
 * not changed. For a caller that pipelines its own loop: issued for the
 * next batch before work on the current one. Nothing is done for a
 * table small enough to stay in cache. (The application does not use
 * it: docs/benchmarks.md measured no gain across its bursts, whose bulk
 * lookups already overlap their misses.)
 *
 * @param f
 *   The filter (not changed).
 * @param hashes
 *   The hashes whose buckets to prefetch.
 * @param n
 *   Any number of hashes.
 */
void cf_prefetch_bulk(const struct cf_filter *f, const uint64_t *hashes,
		unsigned int n);

/**
 * cf_lookup_bulk() that also reads each hit's value: the value lines of
 * every hit are prefetched first, so that their misses overlap.
 *
 * @param f
 *   The filter.
 * @param hashes
 *   The hashes.
 * @param n
 *   How many (1..CF_BULK_MAX).
 * @param hit_mask
 *   Receives bit k set if hashes[k] was found.
 * @param pos
 *   Receives the slot position of each hit (required).
 * @param values
 *   values[k] receives the value of each hit (0 without values).
 * @return
 *   As cf_lookup_bulk().
 */
int cf_lookup_bulk_values(const struct cf_filter *f, const uint64_t *hashes,
		unsigned int n, uint64_t *hit_mask, uint32_t *pos,
		uint64_t *values);

/**
 * Add up to CF_BULK_MAX hashes in order, with every candidate bucket
 * prefetched first.
 *
 * @param f
 *   The filter.
 * @param hashes
 *   Well-mixed 64-bit hashes of the items.
 * @param values
 *   Values to store with the items, or NULL for 0.
 * @param n
 *   How many (1..CF_BULK_MAX).
 * @param added_mask
 *   If not NULL, receives bit k set if hashes[k] was added.
 * @return
 *   The number added (the others found no room), or -EINVAL for a bad n.
 */
int cf_add_bulk(struct cf_filter *f, const uint64_t *hashes,
		const uint64_t *values, unsigned int n, uint64_t *added_mask);

/**
 * Delete one copy of each of up to CF_BULK_MAX hashes, in order.
 *
 * @param f
 *   The filter.
 * @param hashes
 *   The hashes the items were added with.
 * @param n
 *   How many (1..CF_BULK_MAX).
 * @param deleted_mask
 *   If not NULL, receives bit k set if hashes[k] was deleted.
 * @return
 *   The number deleted, or -EINVAL for a bad n.
 */
int cf_delete_bulk(struct cf_filter *f, const uint64_t *hashes,
		unsigned int n, uint64_t *deleted_mask);

/*
 * Slot positions name a slot of the table (bucket * slots + slot) or of
 * the stash (slots + k). A position stays valid until the next add,
 * delete, clear or scan on the filter: inserting may move items (kicks,
 * and re-sorting of semi-sorted buckets).
 */

/**
 * Read the value stored at a slot position.
 *
 * @param f
 *   The filter.
 * @param pos
 *   A slot position from a lookup, add or scan (see above).
 * @param value
 *   Receives the value; not written on an error.
 * @return
 *   - 0 and *value set;
 *   - -EINVAL if pos is out of range or the filter has no values;
 *   - -ENOENT if the slot is empty.
 */
int cf_value_get(const struct cf_filter *f, uint32_t pos, uint64_t *value);

/**
 * Write the value at a slot position (truncated to value_bits).
 *
 * @param f
 *   The filter.
 * @param pos
 *   A slot position from a lookup, add or scan (see above).
 * @param value
 *   The new value.
 * @return
 *   0, -EINVAL or -ENOENT as cf_value_get().
 */
int cf_value_set(struct cf_filter *f, uint32_t pos, uint64_t value);

/** Where the table's slot values are (cf_value_table()). */
struct cf_value_table {
	uint8_t *base;          /**< the first bucket's first value */
	uint32_t shift;         /**< position >> shift: the bucket */
	uint32_t slot_mask;     /**< position & slot_mask: the slot */
	uint64_t pitch;         /**< bytes from one bucket's values to the
				 *   next's */
	uint32_t step;          /**< bytes from one slot's value to the
				 *   next's, within a bucket */
	uint32_t bytes;         /**< bytes of a value: 1, 2, 4 or 8 */
};

/**
 * The values of the table's slots, for a hot path to write the value of
 * an item it found without a call: the value of position pos <
 * cf_stats().slots is at base + (pos >> shift) * pitch + (pos &
 * slot_mask) * step, in @c bytes bytes (host order, unaligned: memcpy),
 * truncated to value_bits by the caller; stash positions take
 * cf_value_set(). Plain and interleaved layouts alike. Valid until the
 * filter is freed.
 *
 * @param f
 *   The filter.
 * @param t
 *   Receives the table's geometry.
 * @return
 *   0, or -EINVAL if the filter has no values.
 */
int cf_value_table(struct cf_filter *f, struct cf_value_table *t);

/**
 * The aux word (cf_params.aux_bits) of the item at a slot position, to
 * read or write in place: valid until the next add, delete, clear or
 * scan, as the position is. The 8 bytes may be unaligned: read and
 * write them with memcpy().
 *
 * @return
 *   A pointer to the item's 64-bit aux word, or NULL if the filter has
 *   none or @p pos is out of range (the slot's emptiness is not
 *   checked: an empty slot's word means nothing).
 * @param f
 *   The filter.
 * @param pos
 *   A slot position from a lookup, add or scan.
 */
void *cf_aux_at(struct cf_filter *f, uint32_t pos);

/**
 * The aux words of the table's slots: position pos < cf_stats().slots
 * has its word at base + pos * *stride (unaligned: memcpy), for a hot
 * path to reach it without a call (stash positions: cf_aux_at()). NULL
 * without aux words. Valid until the filter is freed or
 * cf_aux_attach()'d.
 *
 * @param f
 *   The filter.
 * @param stride
 *   Receives the bytes from one slot's word to the next.
 * @return
 *   The table's first word, or NULL.
 */
uint8_t *cf_aux_table(struct cf_filter *f, uint32_t *stride);

/**
 * cf_aux_at() for reading.
 *
 * @param f
 *   The filter.
 * @param pos
 *   A slot position from a lookup, add or scan.
 * @return
 *   The word, or 0 where cf_aux_at() gives NULL.
 */
uint64_t cf_aux_get(const struct cf_filter *f, uint32_t pos);

/**
 * Write the aux word at a position.
 *
 * @param f
 *   The filter.
 * @param pos
 *   A slot position from a lookup, add or scan.
 * @param aux
 *   The new word.
 * @return
 *   0, or -EINVAL (errno set) where cf_aux_at() gives NULL.
 */
int cf_aux_set(struct cf_filter *f, uint32_t pos, uint64_t aux);

/**
 * Give a filter that has none (a loaded one, say) an aux word per slot,
 * every item's 0 (its values move to the layout aux words take).
 *
 * @param f
 *   The filter.
 * @return
 *   0; -EINVAL (errno set) for a semi-sorted filter, -EEXIST if it has
 *   one, -ENOMEM.
 */
int cf_aux_attach(struct cf_filter *f);

/**
 * The name of an item: what tells it from every other item whatever
 * moves it, without its key. An item's two buckets and its fingerprint
 * never change while it is stored (kicks and the stash move it between
 * the two), so (the lower of its two buckets) << 32 | fingerprint names
 * it from its add to its delete. Two items with the same name are ones
 * the filter cannot tell apart (a lookup of either finds the first).
 *
 * @param f
 *   The filter.
 * @param hash
 *   The item's 64-bit hash, as its add took it.
 * @return
 *   The name.
 */
uint64_t cf_name_of_hash(const struct cf_filter *f, uint64_t hash);

/**
 * cf_name_of_hash() of the item at a slot position.
 *
 * @param f
 *   The filter.
 * @param pos
 *   A slot position from a lookup, add or scan.
 * @param name
 *   Receives the name.
 * @return
 *   0 with *name set; -EINVAL if @p pos is out of range, -ENOENT if the
 *   slot is empty.
 */
int cf_name_at(const struct cf_filter *f, uint32_t pos, uint64_t *name);

/**
 * Delete the item at a slot position.
 *
 * @param f
 *   The filter.
 * @param pos
 *   A slot position from a lookup, add or scan (see above).
 * @return
 *   - 0 if deleted;
 *   - -EINVAL if pos is out of range;
 *   - -ENOENT if the slot is empty.
 */
int cf_delete_at(struct cf_filter *f, uint32_t pos);

/**
 * Positions of the occupied slots of the two buckets @p hash maps to:
 * the entries an item would compete with, for an eviction policy when
 * the filter is full. Stash entries are not included.
 *
 * @param f
 *   The filter.
 * @param hash
 *   A well-mixed 64-bit hash of the item.
 * @param pos
 *   Receives up to 2 * bucket_slots positions.
 * @return
 *   The number of positions written.
 */
unsigned int cf_bucket_positions(const struct cf_filter *f, uint64_t hash,
		uint32_t *pos);

/**
 * cf_bucket_positions() that also reads each entry's value, in one pass
 * over the two buckets: what an eviction policy needs to choose.
 *
 * @param f
 *   The filter.
 * @param hash
 *   A well-mixed 64-bit hash of the item.
 * @param pos
 *   Receives up to 2 * bucket_slots positions.
 * @param values
 *   values[k] receives the value at pos[k] (0 without values), or NULL.
 * @return
 *   The number of entries written.
 */
unsigned int cf_bucket_entries(const struct cf_filter *f, uint64_t hash,
		uint32_t *pos, uint64_t *values);

/**
 * Scan callback: called for each stored item with its position and value
 * (0 when the filter has no values). Return non-zero to delete the item.
 */
typedef int (*cf_scan_fn)(uint32_t pos, uint64_t value, void *arg);

/**
 * Visit @p nb_buckets buckets from *cursor on, calling @p fn on each
 * item and deleting those it selects. The cursor advances and wraps; the
 * stash is visited each time the cursor wraps. Call it with a cursor of 0
 * to start, and with nb_buckets = cf_stats().buckets for a full pass.
 * Kicks (by adds, or by deletes that move stash items back into the
 * table) can move an item into a bucket the pass has already visited: it
 * is then visited in the next pass. @p fn must not modify the filter.
 *
 * @param f
 *   The filter.
 * @param cursor
 *   The next bucket to visit (0 to start); advanced, modulo the bucket
 *   count.
 * @param nb_buckets
 *   How many buckets to visit.
 * @param fn
 *   Called on each item; non-zero deletes it.
 * @param arg
 *   Passed to @p fn.
 * @return
 *   The number of items deleted.
 */
uint64_t cf_scan(struct cf_filter *f, uint64_t *cursor, uint64_t nb_buckets,
		cf_scan_fn fn, void *arg);

/**
 * Batch scan callback: @p n slots with consecutive positions from
 * @p first (table slots, or the stash), their values (0 without values)
 * and @p used (bit k set: slot first + k holds an item). Returns the
 * mask of the items to delete. It must not modify the filter.
 */
typedef uint64_t (*cf_scan_batch_fn)(uint32_t first, const uint64_t *values,
		uint64_t used, unsigned int n, void *arg);

/**
 * cf_scan() with one callback per batch of up to 64 slots instead of one
 * per item: for scans that run on the datapath, as expiry does.
 *
 * @param f
 *   The filter.
 * @param cursor
 *   The next bucket to visit (0 to start); advanced, modulo the bucket
 *   count.
 * @param nb_buckets
 *   How many buckets to visit.
 * @param fn
 *   Called on each batch; returns the mask of the items to delete.
 * @param arg
 *   Passed to @p fn.
 * @return
 *   The number of items deleted.
 */
uint64_t cf_scan_batch(struct cf_filter *f, uint64_t *cursor,
		uint64_t nb_buckets, cf_scan_batch_fn fn, void *arg);

/**
 * An age test for cf_scan_due(). A value holds a stamp in bits
 * [shift, shift + bits): a time in some unit, truncated to @p bits. An
 * item's age is (now - stamp) mod 2^bits; it is due when its age is over
 * @p min_age and at most @p max_age.
 */
struct cf_scan_due {
	/** Lowest bit of the stamp in a value. */
	unsigned int shift;
	/** Width of the stamp, 1..63, with shift + bits <= value_bits. */
	unsigned int bits;
	/** The current stamp (only its low @p bits count). */
	uint64_t now;
	/** Ages up to this one are not due; below 2^bits - 1. */
	uint64_t min_age;
	/**
	 * Ages over this one are not due either (stamps ahead of @p now,
	 * say); over min_age, at most 2^bits - 1. 0 means 2^bits - 1.
	 */
	uint64_t max_age;
};

/**
 * cf_scan_batch() that passes @p fn only the items due by @p due: @p used
 * has the due items' bits only, and a batch with none is not passed at
 * all. For a callback that deletes only due items (expiry by age) it
 * deletes the same items as cf_scan_batch(), at a fraction of the work:
 * where a bucket's values fill whole 64-bit words (4 slots of 16 or 32
 * bits, 8 of 8 or 16, 2 of 32, any of 64) and the stamp leaves a bit of
 * its value free above it (bits + shift < the value's width, or shift
 * > 0), its stamps are judged a word at a time (SWAR); with one word of
 * values and a bucket of whole-byte fingerprints in one word (4 slots of
 * 16/16, 12/16, 8 slots of 8/8), a bucket costs a few word operations
 * and no branch. Other shapes are judged slot by slot. Stash items are
 * judged one by one.
 *
 * @param f
 *   The filter.
 * @param cursor
 *   As cf_scan_batch().
 * @param nb_buckets
 *   As cf_scan_batch().
 * @param due
 *   The age test (see struct cf_scan_due).
 * @param fn
 *   Called on each batch with due items; returns the mask of those to
 *   delete.
 * @param arg
 *   Passed to @p fn.
 * @return
 *   The number of items deleted, or -EINVAL (errno set) if the filter
 *   has no values or @p due is out of range.
 */
int64_t cf_scan_due(struct cf_filter *f, uint64_t *cursor,
		uint64_t nb_buckets, const struct cf_scan_due *due,
		cf_scan_batch_fn fn, void *arg);

/**
 * Fill @p stats.
 *
 * @param f
 *   The filter.
 * @param stats
 *   Receives the statistics.
 */
void cf_stats(const struct cf_filter *f, struct cf_stats *stats);

/**
 * Read back the parameters in effect (defaults filled in).
 *
 * @param f
 *   The filter.
 * @param params
 *   Receives the parameters; its allocator is NULL (the hooks in use
 *   are not given back).
 */
void cf_get_params(const struct cf_filter *f, struct cf_params *params);

/**
 * The code path lib/cuckoo's hot functions (bulk lookups, the scans) run
 * on this CPU. The library is built for a baseline (-Dmarch, x86-64-v2
 * by default) and, unless built with -Ddispatch=false, carries clones of
 * those functions for AVX2 and AVX-512 CPUs, one of which the loader
 * chose by the CPU's flags (docs/design.md, "Portable build").
 *
 * @return
 *   A static string: "x86-64-v4 (AVX-512)" or "x86-64-v3 (AVX2)" for a
 *   clone, else "baseline (-march=M)" with the build's -march; "no
 *   dispatch (-march=M)" in a build without clones (-Ddispatch=false,
 *   clang, not x86-64).
 */
const char *cf_dispatch_isa(void);

/**
 * A count that changes whenever an item other than the one being added or
 * deleted may have changed position: kicks, stash moves, semi-sorted
 * re-sorts, cf_clear(). A caller holding positions from an earlier lookup
 * keeps them while it is unchanged; adding into a free slot, deleting,
 * and setting values leave the others where they are.
 *
 * @param f
 *   The filter.
 * @return
 *   The count; compare two readings of one filter for equality only.
 */
uint64_t cf_relocations(const struct cf_filter *f);

/**
 * Bytes that cf_save_mem() writes.
 *
 * @param f
 *   The filter.
 * @return
 *   The size of the serialised filter now (it grows with the stash).
 */
size_t cf_save_size(const struct cf_filter *f);

/**
 * The most bytes cf_save_mem() writes for a filter created with
 * @p params (its stash full), without creating one: a bound for a file
 * read back into such a filter.
 *
 * @param params
 *   Parameters as cf_create() takes them; NULL is refused (EINVAL).
 * @return
 *   The size, or 0 (errno EINVAL) if cf_create() would refuse @p params.
 */
uint64_t cf_params_save_size(const struct cf_params *params);

/**
 * Serialise the filter: magic, format version, byte order, parameters,
 * seed, item count, table, values, stash and an XXH64 checksum.
 *
 * @param f
 *   The filter.
 * @param buf
 *   Output buffer, any alignment.
 * @param len
 *   Its size in bytes; at least cf_save_size().
 * @return
 *   The number of bytes written, or -ENOSPC if @p len is below
 *   cf_save_size().
 */
int64_t cf_save_mem(const struct cf_filter *f, void *buf, size_t len);

/**
 * Write cf_save_mem() output to @p path durably: a new temporary file
 * next to it (PATH.tmp.PID.N, created exclusively), synced, renamed over
 * @p path and the directory synced, so that a reader or a crash sees the
 * old file or the new one, whole.
 *
 * @param f
 *   The filter.
 * @param path
 *   The file to write (replaced whole).
 * @return
 *   0, or a negative errno (errno set): -EISDIR or -EINVAL if @p path
 *   exists and is not a regular file, else from the file system calls.
 */
int cf_save_file(const struct cf_filter *f, const char *path);

/**
 * Create a filter from cf_save_mem() output. The input is untrusted:
 * every field is checked before any memory is allocated.
 *
 * @param buf
 *   cf_save_mem() or cf_save_file() output (not NULL: EINVAL); not kept.
 * @param len
 *   Its length in bytes.
 * @param allocator
 *   Memory hooks for the new filter, or NULL for the default.
 * @param socket_id
 *   NUMA socket passed to the allocator.
 * @return
 *   The filter, or NULL with errno set:
 *   - ENODATA if the input is shorter than its header says;
 *   - EBADMSG if the magic, a field or the checksum is wrong;
 *   - EPROTONOSUPPORT if the format version, or the key hash a version
 *     3 file names (cf_params.key_hash), is not one this library knows;
 *   - ENOTSUP if it was written on a host of the other byte order;
 *   - ENOMEM if memory could not be allocated.
 */
struct cf_filter *cf_load_mem(const void *buf, size_t len,
		const struct cf_allocator *allocator, int socket_id);

/**
 * cf_load_mem() of a file's contents. Only a regular file is read (a
 * FIFO or device is refused before any blocking open: EINVAL, EISDIR for
 * a directory); a file that changes size while read is refused (EAGAIN).
 * Otherwise errno as cf_load_mem(), or as set by open() or read().
 *
 * @param path
 *   The file, as cf_save_file() wrote it.
 * @param allocator
 *   Memory hooks for the new filter, or NULL for the default.
 * @param socket_id
 *   NUMA socket passed to the allocator.
 * @return
 *   The filter, or NULL with errno set.
 */
struct cf_filter *cf_load_file(const char *path,
		const struct cf_allocator *allocator, int socket_id);

#ifdef __cplusplus
}
#endif

#include "cf_inline.h"

#endif /* _CUCKOO_FILTER_H_ */
