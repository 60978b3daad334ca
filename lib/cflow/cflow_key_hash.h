/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The flow key's hash, inline (private to lib/cflow, not installed):
 * cflow_hash_key() is this, and the tracker hashes the keys it is not
 * given a hash for with it in its own loop, where the call cost 4-5
 * cycles a packet at 1 K flows (docs/benchmarks.md, issue 29 round 2).
 */

#ifndef _CFLOW_KEY_HASH_H_
#define _CFLOW_KEY_HASH_H_

/* XXH3 compiled in for the key's fixed size (libxxhash's PLT and its
 * length dispatch cost 8 cycles a packet at 1 K flows). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cflow_parse.h"

/* Seeded XXH3-64 of the canonical key, as cflow_hash_key() documents. */
static inline uint64_t
cflow_key_hash(const struct cflow_key *key, uint64_t seed)
{
	return XXH3_64bits_withSeed(key, sizeof(*key), seed);
}

#endif /* _CFLOW_KEY_HASH_H_ */
