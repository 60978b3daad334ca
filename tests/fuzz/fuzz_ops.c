/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: a byte string is a filter layout and a sequence of
 * add, add_unique, delete, delete_at, lookup, bulk (its hits and their
 * positions against single lookups), scan and save/load operations on a
 * small key universe, checked against an exact model.
 * Any false negative, count mismatch or lost item aborts.
 *
 * Each item's value is its key, so that a scan callback knows which key
 * it deletes: with values, the scan deletes the items whose key has a
 * residue picked by the input, and the model loses them too. Without
 * values (all 0) a deleted item's key is unknown, so the scan only
 * checks what it visits and deletes nothing.
 *
 * Two keys with the same fingerprint and bucket pair alias: a delete of
 * one may remove the other's item. The filter cannot tell them apart, but
 * with values the slot says which item went, so the model charges the
 * delete to the value that vanished (a census of the values before and
 * after), and the census must equal the model at the end.
 *
 * Bit 4 of the first byte gives the filter aux words (cf_params.aux_bits,
 * with values): each item's word is a function of its key, stored by the
 * add (cf_add_with_hash_aux(), or cf_aux_set() at the position an add
 * gives), and every item a scan or a lookup finds must still have its own
 * (aux words move with their items through kicks, their rollback, the
 * stash and deletes; a reload attaches words of 0, which are set again).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuckoo_filter.h"

#define KEYS 256

static const struct cf_params layouts[] = {
	{ .capacity = 40, .fp_bits = 4 },
	{ .capacity = 40, .fp_bits = 12, .value_bits = 16 },
	{ .capacity = 40, .fp_bits = 32, .bucket_slots = 2, .value_bits = 8 },
	{ .capacity = 40, .fp_bits = 16, .bucket_slots = 8 },
	{ .capacity = 40, .fp_bits = 5, .table = CF_TABLE_SEMISORT },
	{ .capacity = 40, .fp_bits = 13, .table = CF_TABLE_SEMISORT,
		.value_bits = 32 },
	{ .capacity = 40, .fp_bits = 8, .max_kicks = 3 },
	{ .capacity = 1, .fp_bits = 8 },
	/* buckets of 4 x 32 bits: the wide compare of the bulk lookup */
	{ .capacity = 40, .fp_bits = 32 },
	{ .capacity = 200, .fp_bits = 32, .value_bits = 16 },
};

static uint64_t
key_hash(uint32_t k)
{
	uint64_t z = (k + 1) * UINT64_C(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	return z ^ (z >> 31);
}

/* The aux word of key k's items. */
static uint64_t
aux_of(uint64_t k)
{
	return key_hash((uint32_t)k ^ 0x5a5a) | 1;
}

struct model {
	unsigned int count[KEYS];
	uint64_t total;
};

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
verify(const struct cf_filter *f, const struct model *m)
{
	struct cf_stats st;

	for (uint32_t k = 0; k < KEYS; k++)
		if (m->count[k] != 0) {
			check(cf_lookup_with_hash(f, key_hash(k), NULL) == 1);
			check(cf_count_with_hash(f, key_hash(k)) >=
				m->count[k]);
		}
	cf_stats(f, &st);
	check(st.items == m->total);
}

static void census(struct cf_filter *f, unsigned int *cnt);

static bool
has_aux(const struct cf_filter *f)
{
	struct cf_params p;

	cf_get_params(f, &p);
	return p.aux_bits != 0;
}

/* With aux words, the item at pos (value v) has its key's word. */
static void
check_aux(const struct cf_filter *f, uint32_t pos, uint64_t v)
{
	if (has_aux(f))
		check(cf_aux_get(f, pos) == aux_of(v));
}

static bool
has_values(const struct cf_filter *f)
{
	struct cf_params p;

	cf_get_params(f, &p);
	return p.value_bits != 0;
}

/* With values, the filter holds exactly the model's multiset of keys. */
static void
verify_values(struct cf_filter *f, const struct model *m)
{
	unsigned int cnt[KEYS];

	if (!has_values(f))
		return;
	census(f, cnt);
	for (uint32_t k = 0; k < KEYS; k++)
		check(cnt[k] == m->count[k]);
}

struct census_arg {
	unsigned int *cnt;
	const struct cf_filter *f;
};

struct scan_arg {
	struct model *m;
	const struct cf_filter *f;
	bool values;
	uint32_t residue;       /* delete keys k with k % 7 == residue */
	uint64_t deleted;
};

static int
census_one(uint32_t pos, uint64_t value, void *arg)
{
	struct census_arg *c = arg;

	check(value < KEYS);
	check_aux(c->f, pos, value);
	c->cnt[value]++;
	return 0;
}

/* How many items hold each value: one full pass, deleting nothing. */
static void
census(struct cf_filter *f, unsigned int *cnt)
{
	struct cf_stats st;
	struct census_arg c = { cnt, f };
	uint64_t cursor = 0;

	memset(cnt, 0, KEYS * sizeof(*cnt));
	cf_stats(f, &st);
	check(cf_scan(f, &cursor, st.buckets, census_one, &c) == 0);
}

/* With values, the value whose count fell by one between two censuses. */
static uint32_t
census_lost(const unsigned int *before, const unsigned int *after)
{
	uint32_t lost = KEYS;

	for (uint32_t v = 0; v < KEYS; v++) {
		if (before[v] == after[v])
			continue;
		check(lost == KEYS && before[v] == after[v] + 1);
		lost = v;
	}
	check(lost < KEYS);
	return lost;
}

static int
scan_delete(uint32_t pos, uint64_t value, void *arg)
{
	struct scan_arg *a = arg;
	uint64_t stored;

	if (!a->values) {
		check(value == 0);
		check(cf_value_get(a->f, pos, &stored) == -EINVAL);
		return 0;
	}
	/* Every item visited is one the model holds, at pos. */
	check(value < KEYS && a->m->count[value] != 0);
	check(cf_value_get(a->f, pos, &stored) == 0 && stored == value);
	check_aux(a->f, pos, value);
	if (value % 7 != a->residue)
		return 0;
	a->m->count[value]--;
	a->m->total--;
	a->deleted++;
	return 1;
}

struct due_arg {
	struct scan_arg *a;
	const struct cf_scan_due *d;
};

/* cf_scan_due's batches: every item passed is due and held, at its
 * position; deletes as scan_delete does. */
static uint64_t
due_delete(uint32_t first, const uint64_t *values, uint64_t used,
		unsigned int n, void *arg)
{
	const struct due_arg *da = arg;
	uint64_t mask = (UINT64_C(1) << da->d->bits) - 1, del = 0;
	uint64_t max = da->d->max_age != 0 ? da->d->max_age : mask;

	check(n <= 64);
	for (uint64_t u = used; u != 0; u &= u - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(u);
		uint64_t age = (da->d->now - (values[k] >> da->d->shift)) &
			mask;

		check(k < n);
		check(age > da->d->min_age && age <= max);
		if (scan_delete(first + k, values[k], da->a))
			del |= UINT64_C(1) << k;
	}
	return del;
}

/* After an attach: each item's word 0, then its key's. */
static int
aux_reset(uint32_t pos, uint64_t value, void *arg)
{
	struct cf_filter *g = arg;

	check(cf_aux_get(g, pos) == 0);
	check(cf_aux_set(g, pos, aux_of(value)) == 0);
	return 0;
}

static struct cf_filter *
reload(struct cf_filter *f)
{
	size_t size = cf_save_size(f);
	uint8_t *buf = malloc(size);
	struct cf_filter *g;

	check(buf != NULL && cf_save_mem(f, buf, size) == (int64_t)size);
	g = cf_load_mem(buf, size, NULL, 0);
	check(g != NULL);
	free(buf);
	if (has_aux(f)) {
		/* A loaded filter has none: attached, every word is 0. */
		struct cf_stats st;
		uint64_t cursor = 0;

		check(!has_aux(g) && cf_aux_attach(g) == 0 && has_aux(g));
		check(cf_aux_attach(g) == -EEXIST);
		cf_stats(g, &st);
		check(cf_scan(g, &cursor, st.buckets, aux_reset, g) == 0);
	}
	cf_free(f);
	return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model m;
	struct cf_filter *f;
	struct cf_params p;
	uint64_t cursor = 0;

	if (size < 1)
		return 0;
	/* The byte modulo the layouts' count picks a layout; bit 3 puts
	 * a plain one's values in its buckets (CF_TABLE_INTERLEAVED,
	 * 16-bit values if it had none). */
	p = layouts[data[0] % (sizeof(layouts) / sizeof(layouts[0]))];
	if ((data[0] & 8) && p.table == CF_TABLE_PLAIN) {
		p.table = CF_TABLE_INTERLEAVED;
		if (p.value_bits == 0)
			p.value_bits = 16;
	}
	/* bit 4: aux words (values too, 16 bits if none) */
	if ((data[0] & 16) && p.table != CF_TABLE_SEMISORT) {
		p.aux_bits = 64;
		if (p.value_bits == 0)
			p.value_bits = 16;
	}
	f = cf_create(&p);
	check(f != NULL);
	memset(&m, 0, sizeof(m));
	for (size_t i = 1; i + 1 < size; i += 2) {
		uint32_t op = data[i] % 9, k = data[i + 1];
		uint64_t h = key_hash(k), mask;
		uint32_t pos;
		int rc;

		switch (op) {
		case 0:
			rc = cf_add_with_hash_aux(f, h, k, aux_of(k), NULL);
			check(rc == 0 || rc == -ENOSPC);
			if (rc == 0) {
				m.count[k]++;
				m.total++;
			}
			break;
		case 1:
			rc = cf_add_with_hash(f, h, k, &pos);
			check(rc == 0 || rc == -ENOSPC);
			if (rc == 0 && has_aux(f)) {
				/* an add stores 0, at the position given */
				check(cf_aux_get(f, pos) == 0);
				check(cf_aux_set(f, pos, aux_of(k)) == 0);
			}
			if (rc == 0) {
				m.count[k]++;
				m.total++;
			}
			break;
		case 2:
			rc = cf_add_unique_with_hash(f, h, k, &pos);
			check(rc == 0 || rc == -EEXIST || rc == -ENOSPC);
			check(rc != 0 || m.count[k] == 0);
			if (rc == 0 && has_aux(f))
				check(cf_aux_set(f, pos, aux_of(k)) == 0);
			if (rc == 0) {
				m.count[k]++;
				m.total++;
			}
			break;
		case 3:
			if (has_values(f)) {
				unsigned int before[KEYS], after[KEYS];
				uint32_t v;

				census(f, before);
				rc = cf_delete_with_hash(f, h);
				check(m.count[k] == 0 || rc == 0);
				if (rc != 0)
					break;
				census(f, after);
				v = census_lost(before, after);
				check(m.count[v] != 0);
				m.count[v]--;
				m.total--;
				break;
			}
			rc = cf_delete_with_hash(f, h);
			check(m.count[k] == 0 || rc == 0);
			if (m.count[k] != 0) {
				m.count[k]--;
				m.total--;
			} else if (rc == 0) {
				/* Deleting what was never added removes
				 * someone else's fingerprint: stop here. */
				cf_free(f);
				return 0;
			}
			break;
		case 4:
			if (m.count[k] == 0)
				break;
			check(cf_lookup_with_hash(f, h, &pos) == 1);
			if (has_values(f)) {
				uint64_t v;

				/* The slot found may hold an alias of k. */
				check(cf_value_get(f, pos, &v) == 0 &&
					v < KEYS && m.count[v] != 0);
				check_aux(f, pos, v);
				k = (uint32_t)v;
			}
			check(cf_delete_at(f, pos) == 0);
			m.count[k]--;
			m.total--;
			break;
		case 5: {
			uint64_t hs[CF_BULK_MAX];
			uint32_t n = 1 + k % CF_BULK_MAX, ps[CF_BULK_MAX];

			for (uint32_t j = 0; j < n; j++)
				hs[j] = key_hash((k + j * 7) % KEYS);
			check(cf_lookup_bulk(f, hs, n, &mask, ps) >= 0);
			for (uint32_t j = 0; j < n; j++) {
				uint32_t one = UINT32_MAX;

				check(((mask >> j) & 1) ==
					(uint64_t)cf_lookup_with_hash(f,
						hs[j], &one));
				/* a hit's position: the one a lookup of
				 * the key alone gives (first bucket first,
				 * its first matching slot, then the stash) */
				check(((mask >> j) & 1) == 0 ||
					ps[j] == one);
			}
			break;
		}
		case 6: {
			struct cf_params p;
			struct scan_arg a = { &m, f, false, k % 8, 0 };

			cf_get_params(f, &p);
			a.values = p.value_bits != 0;
			/* residue 7: a scan that deletes nothing. */
			if (!a.values || (k & 8) == 0) {
				check(cf_scan(f, &cursor, k % 5, scan_delete,
					&a) == a.deleted);
				break;
			}
			/* the same, of the items whose low bits are due */
			struct cf_scan_due d = {
				.shift = k % 3,
				.bits = 2 + k % (p.value_bits - 3),
				.now = h,
				.min_age = k % 3,
				.max_age = k & 16 ? 3 + k % 5 : 0,
			};
			struct due_arg da = { &a, &d };

			if (d.max_age > (UINT64_C(1) << d.bits) - 1)
				d.max_age = 0;

			check(cf_scan_due(f, &cursor, k % 5, &d, due_delete,
				&da) == (int64_t)a.deleted);
			break;
		}
		case 7:
			f = reload(f);
			break;
		default:
			check(m.count[k] == 0 ||
				cf_lookup_with_hash(f, h, NULL) == 1);
			break;
		}
	}
	verify(f, &m);
	verify_values(f, &m);
	cf_free(f);
	return 0;
}
