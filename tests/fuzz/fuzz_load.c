/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: cf_load_mem() on arbitrary bytes. A rejected input
 * must set errno; an accepted one must be a working filter whose saved
 * form reloads to the same bytes.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuckoo_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cf_filter *f;
	size_t saved;
	uint8_t *buf;

	errno = 0;
	f = cf_load_mem(data, size, NULL, 0);
	if (f == NULL) {
		if (errno == 0)
			abort();
		return 0;
	}
	for (uint64_t h = 1; h < 64; h++) {
		uint32_t pos;

		if (cf_lookup_with_hash(f, h * 0x9e3779b97f4a7c15ULL, &pos))
			cf_delete_at(f, pos);
		cf_add_with_hash(f, h, h, NULL);
	}
	saved = cf_save_size(f);
	buf = malloc(saved);
	if (buf == NULL || cf_save_mem(f, buf, saved) != (int64_t)saved)
		abort();
	cf_free(f);
	f = cf_load_mem(buf, saved, NULL, 0);
	if (f == NULL)
		abort();
	cf_free(f);
	free(buf);
	return 0;
}
