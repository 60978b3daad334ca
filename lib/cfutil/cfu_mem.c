/* SPDX-License-Identifier: BSD-3-Clause */

/* Zeroed tables on transparent huge pages (cfu_zalloc_huge()). */

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cfutil.h"

void *
cfu_zalloc_huge(size_t size, size_t align)
{
	void *p;

	if (size >= CFU_HUGE_ALIGN)
		align = CFU_HUGE_ALIGN;
	if (posix_memalign(&p, align, size) != 0)
		return NULL;
	/* before the first touch, so that faults take huge pages */
	if (size >= CFU_HUGE_ALIGN)
		(void)madvise(p, size & ~(size_t)(CFU_HUGE_ALIGN - 1),
				MADV_HUGEPAGE);
	memset(p, 0, size);
	return p;
}
