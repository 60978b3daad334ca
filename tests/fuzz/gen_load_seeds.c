/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Writes the seed corpus of fuzz_load: one small saved filter per layout,
 * filled past its first failure so the stash is in the file too.
 * Usage: gen_load_seeds DIR
 */

#include <stdio.h>

#include "cuckoo_filter.h"

static const struct cf_params layouts[] = {
	{ .capacity = 30, .fp_bits = 8 },
	{ .capacity = 30, .fp_bits = 12, .value_bits = 16 },
	{ .capacity = 30, .fp_bits = 32, .bucket_slots = 2, .value_bits = 64 },
	{ .capacity = 30, .fp_bits = 7, .bucket_slots = 8, .value_bits = 8 },
	{ .capacity = 30, .fp_bits = 13, .table = CF_TABLE_SEMISORT },
	{ .capacity = 30, .fp_bits = 9, .table = CF_TABLE_SEMISORT,
		.value_bits = 32 },
	/* format version 3: cf_hash_u64() for 8-byte keys */
	{ .capacity = 30, .fp_bits = 12, .key_hash = CF_KEY_HASH_U64 },
	{ .capacity = 30, .fp_bits = 16, .value_bits = 16,
		.table = CF_TABLE_INTERLEAVED, .key_hash = CF_KEY_HASH_U64 },
};

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 1;
	}
	for (unsigned int i = 0; i < sizeof(layouts) / sizeof(layouts[0]);
			i++) {
		struct cf_filter *f = cf_create(&layouts[i]);
		char path[4096];
		int ret;

		for (uint64_t h = 1; h < 64; h++)
			cf_add_with_hash(f, h * 0x9e3779b97f4a7c15ULL, h, NULL);
		snprintf(path, sizeof(path), "%s/seed-%u.cf", argv[1], i);
		ret = cf_save_file(f, path);
		cf_free(f);
		if (ret != 0) {
			fprintf(stderr, "%s: error %d\n", path, ret);
			return 1;
		}
	}
	return 0;
}
