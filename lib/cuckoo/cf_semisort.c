/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Semi-sorted buckets (paper section 5.2). The order of the four
 * fingerprints in a bucket carries no information, so the bucket stores
 * them sorted by their low 4 bits: there are C(16 + 4 - 1, 4) = 3876
 * sorted 4-nibble multisets, and a 12-bit code replaces the 16 nibble
 * bits, saving one bit per slot. Values follow their fingerprints.
 */

#include <pthread.h>

#include "cf_internal.h"


uint16_t cf_semisort_decode[4096];
/* Code of each sorted nibble quadruple packed as n0 | n1 << 4 | ... */
static uint16_t semisort_encode[1 << 16];
static pthread_once_t semisort_once = PTHREAD_ONCE_INIT;

static void
semisort_build(void)
{
	uint16_t code = 0;

	for (uint32_t a = 0; a < 16; a++)
		for (uint32_t b = a; b < 16; b++)
			for (uint32_t c = b; c < 16; c++)
				for (uint32_t d = c; d < 16; d++) {
					uint16_t packed = (uint16_t)(a |
						b << 4 | c << 8 | d << 12);

					cf_semisort_decode[code] = packed;
					semisort_encode[packed] = code++;
				}
}

void
cf_semisort_init(void)
{
	pthread_once(&semisort_once, semisort_build);
}

void
cf_semisort_read(const struct cf_filter *f, uint32_t i, struct cf_bucket *b)
{
	uint64_t lanes = cf_bucket_lanes(f, i, CF_MODE_SEMISORT);
	uint64_t lane_mask = cf_low_mask(f->fp_bits);

	for (uint32_t s = 0; s < 4; s++) {
		b->fp[s] = (uint32_t)((lanes >> (s * f->fp_bits)) & lane_mask);
		b->value[s] = cf_has_values(f) ?
			cf_value_load(f, (uint64_t)i * 4 + s) : 0;
	}
}

/*
 * Write the four entries of b sorted; order[s] receives the slot that
 * entry s of b now occupies. b is left sorted.
 */
void
cf_semisort_write(struct cf_filter *f, uint32_t i, struct cf_bucket *b,
		uint32_t *order)
{
	uint32_t idx[4] = {0, 1, 2, 3};
	struct cf_bucket sorted;
	uint32_t packed = 0;
	uint64_t word;

	/* Insertion sort of 4: stable, so equal entries keep their order. */
	for (uint32_t s = 1; s < 4; s++) {
		uint32_t cur = idx[s], t = s;

		while (t > 0 && cf_sort_key(b->fp[idx[t - 1]]) >
				cf_sort_key(b->fp[cur])) {
			idx[t] = idx[t - 1];
			t--;
		}
		idx[t] = cur;
	}

	word = 0;
	for (uint32_t s = 0; s < 4; s++) {
		uint32_t fp = b->fp[idx[s]];

		sorted.fp[s] = fp;
		sorted.value[s] = b->value[idx[s]];
		packed |= (fp & 0xf) << (4 * s);
		word |= (uint64_t)(fp >> 4) << (12 + s * f->high_bits);
		if (order != NULL)
			order[idx[s]] = s;
	}
	word |= semisort_encode[packed];
	cf_store_bits(f->table, (uint64_t)i * f->pitch_bits, f->bucket_bits,
			word);

	if (cf_has_values(f))
		for (uint32_t s = 0; s < 4; s++)
			cf_value_store(f, (uint64_t)i * 4 + s, sorted.value[s]);
	*b = sorted;
}
