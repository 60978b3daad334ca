/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CF_ALLOC_H_
#define _CF_ALLOC_H_

/**
 * @file
 * lib/cuckoo's memory hooks, struct cf_allocator: what the filter
 * (cuckoo_filter.h) and the structures of lib/cflow built beside it
 * (cflow_topk.h) take their memory through, without the filter's API.
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Memory hooks. cuckooflow passes rte_zmalloc_socket()/rte_free().
 */
struct cf_allocator {
	/**
	 * Return @p size bytes of zeroed memory aligned to @p align (a power
	 * of two, at least 64), preferably on NUMA socket @p socket_id, or
	 * NULL.
	 */
	void *(*alloc)(size_t size, size_t align, int socket_id, void *ctx);
	/** Release memory from alloc(); @p size is the size requested. */
	void (*free)(void *ptr, size_t size, void *ctx);
	void *ctx; /**< Passed to both hooks. */
};

#ifdef __cplusplus
}
#endif

#endif /* _CF_ALLOC_H_ */
