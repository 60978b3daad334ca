/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _TEST_INLINE_H_
#define _TEST_INLINE_H_

/* The library's per-key calls (test_inline_lib.c, built with
 * CF_NO_INLINE), against which test_inline.c checks cf_inline.h's. */

#include <stddef.h>
#include <stdint.h>

struct cf_filter;

int lib_add(struct cf_filter *f, const void *key, size_t len);
int lib_lookup(const struct cf_filter *f, const void *key, size_t len);
int lib_add_with_hash(struct cf_filter *f, uint64_t hash, uint64_t value,
		uint32_t *pos);
int lib_lookup_with_hash(const struct cf_filter *f, uint64_t hash,
		uint32_t *pos);
uint64_t lib_hash_u64(const struct cf_filter *f, uint64_t key);
/* 1 if CF_INLINE_CALLS was defined there (it must not be). */
int lib_inlined(void);

#endif /* _TEST_INLINE_H_ */
