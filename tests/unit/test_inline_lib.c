/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The library's own per-key calls, for test_inline.c: this file is
 * compiled with CF_NO_INLINE, so the names below are the library's
 * functions, not cf_inline.h's.
 */

#define CF_NO_INLINE 1
#include "cuckoo_filter.h"
#include "test_inline.h"

int
lib_add(struct cf_filter *f, const void *key, size_t len)
{
	return cf_add(f, key, len);
}

int
lib_lookup(const struct cf_filter *f, const void *key, size_t len)
{
	return cf_lookup(f, key, len);
}

int
lib_add_with_hash(struct cf_filter *f, uint64_t hash, uint64_t value,
		uint32_t *pos)
{
	return cf_add_with_hash(f, hash, value, pos);
}

int
lib_lookup_with_hash(const struct cf_filter *f, uint64_t hash, uint32_t *pos)
{
	return cf_lookup_with_hash(f, hash, pos);
}

uint64_t
lib_hash_u64(const struct cf_filter *f, uint64_t key)
{
	return cf_hash_u64(f, key);
}

int
lib_inlined(void)
{
#ifdef CF_INLINE_CALLS
	return 1;
#else
	return 0;
#endif
}
