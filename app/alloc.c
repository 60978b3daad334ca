/* SPDX-License-Identifier: BSD-3-Clause */

/* lib/cuckoo's allocator hooks on the DPDK heap. */

#include <rte_malloc.h>

#include "run.h"

static void *
zmalloc_socket(size_t size, size_t align, int socket_id, void *ctx)
{
	(void)ctx;
	return rte_zmalloc_socket("cuckooflow", size, (unsigned int)align,
			socket_id);
}

static void
dpdk_free(void *ptr, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	rte_free(ptr);
}

const struct cf_allocator app_dpdk_allocator = {
	.alloc = zmalloc_socket,
	.free = dpdk_free,
};
