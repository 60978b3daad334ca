/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _TEST_MEMORY_H_
#define _TEST_MEMORY_H_

/*
 * Tables of gigabytes in unit tests: an allocator of anonymous mappings,
 * whose pages nobody touches are never mapped (the default allocator
 * zeroes, hence maps, all of its memory), and the resident set to show
 * it.
 */

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuckoo_filter.h"

static void *
lazy_alloc(size_t size, size_t align, int socket_id, void *ctx)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	(void)align; /* page aligned */
	(void)socket_id;
	(void)ctx;
	return p == MAP_FAILED ? NULL : p;
}

static void
lazy_free(void *ptr, size_t size, void *ctx)
{
	(void)ctx;
	munmap(ptr, size);
}

static const struct cf_allocator lazy = { lazy_alloc, lazy_free, NULL };

/* Resident set in MiB. */
static inline double
rss_mib(void)
{
	unsigned long size = 0, resident = 0;
	FILE *fp = fopen("/proc/self/statm", "r");

	if (fp != NULL) {
		if (fscanf(fp, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(fp);
	}
	return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

#endif /* _TEST_MEMORY_H_ */
