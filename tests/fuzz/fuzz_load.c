/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: cf_load_mem() on arbitrary bytes. A rejected input
 * must set errno; an accepted one must save back to the same bytes (the
 * loader keeps every byte it accepts, and rejects what a filter could not
 * have written), and, after some adds and deletes, be a working filter
 * whose saved form reloads and saves to the same bytes again.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuckoo_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Save f; abort unless it saves to exactly want[0..size) when want is
 * given. The caller frees the bytes, *size their length. */
static uint8_t *
save_check(const struct cf_filter *f, const uint8_t *want, size_t *size)
{
	size_t n = cf_save_size(f);
	uint8_t *buf = malloc(n);

	if (buf == NULL || cf_save_mem(f, buf, n) != (int64_t)n)
		abort();
	if (want != NULL && (n != *size || memcmp(buf, want, n) != 0))
		abort();
	*size = n;
	return buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cf_filter *f;
	size_t saved = size;
	uint8_t *buf, *again;

	errno = 0;
	f = cf_load_mem(data, size, NULL, 0);
	if (f == NULL) {
		if (errno == 0)
			abort();
		return 0;
	}
	free(save_check(f, data, &saved));
	for (uint64_t h = 1; h < 64; h++) {
		uint32_t pos;

		if (cf_lookup_with_hash(f, h * 0x9e3779b97f4a7c15ULL, &pos))
			cf_delete_at(f, pos);
		cf_add_with_hash(f, h, h, NULL);
	}
	buf = save_check(f, NULL, &saved);
	cf_free(f);
	f = cf_load_mem(buf, saved, NULL, 0);
	if (f == NULL)
		abort();
	again = save_check(f, buf, &saved);
	cf_free(f);
	free(again);
	free(buf);
	return 0;
}
