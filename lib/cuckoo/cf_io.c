/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Save and load. The format is the header below, then the table bytes,
 * the value bytes and the stash entries, all in the writer's byte order.
 * Version 1 holds plain and semi-sorted tables; version 2, which a
 * version 1 reader refuses, interleaved ones (their values inside the
 * table bytes, no value bytes). Plain and semi-sorted filters are still
 * written as version 1, so that older readers keep reading them.
 * Version 3 is a filter of any layout whose 8-byte keys hash otherwise
 * than with XXH3 (cf_params.key_hash): the header is followed by struct
 * cf_file_ext naming the hash, so that a reader that does not know it
 * (older ones refuse version 3) never answers with the wrong hash.
 * The checksum is XXH64 (seed 0) of the whole output with the checksum
 * field zeroed. Loading treats the input as hostile: sizes are derived
 * from validated parameters, never trusted, and every bucket is checked
 * before a filter is returned.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "cf_internal.h"
#include "cfutil.h"

#define CF_FILE_MAGIC "CUCKOOF\0"
#define CF_FILE_VERSION 1
#define CF_FILE_VERSION_INTERLEAVED 2
#define CF_FILE_VERSION_KEY_HASH 3
#define CF_BYTE_ORDER 0x01020304u

struct cf_file_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;   /* CF_BYTE_ORDER as the writer stores it */
	uint32_t table;
	uint32_t fp_bits;
	uint32_t bucket_slots;
	uint32_t max_kicks;
	uint32_t value_bits;
	uint32_t stash_count;
	uint64_t capacity;
	uint64_t seed;
	uint64_t buckets;
	uint64_t items;        /* in the table, stash excluded */
	uint64_t table_bytes;
	uint64_t values_bytes;
	uint64_t checksum;
};

_Static_assert(sizeof(struct cf_file_header) == 96, "header layout");

/* After the header in version 3 files. */
struct cf_file_ext {
	uint32_t key_hash;     /* enum cf_key_hash, not CF_KEY_HASH_XXH3 */
	uint32_t reserved;     /* 0 */
};

_Static_assert(sizeof(struct cf_file_ext) == 8, "extension layout");

struct cf_file_stash {
	uint32_t bucket;
	uint32_t fp;
	uint64_t value;
};

_Static_assert(sizeof(struct cf_file_stash) == 16, "stash layout");

/* The value bytes of the file: each slot's value (not an aux word that
 * follows it in memory). */
static uint64_t
file_values_bytes(const struct cf_filter *f)
{
	return f->interleaved ? 0 : f->buckets * f->slots * f->value_bytes;
}

/* Slots [first, first + n) of the values array, compacted to the file's
 * values into @p out. */
static void
values_compact(const struct cf_filter *f, uint64_t first, uint64_t n,
		uint8_t *out)
{
	for (uint64_t k = 0; k < n; k++)
		memcpy(out + k * f->value_bytes, f->values + (first + k) *
			f->value_stride, f->value_bytes);
}

/* The bytes before the table: the header, and in version 3 the
 * extension. */
static size_t
head_size(enum cf_key_hash key_hash)
{
	return sizeof(struct cf_file_header) + (key_hash != CF_KEY_HASH_XXH3 ?
		sizeof(struct cf_file_ext) : 0);
}

/* Fills @p h and @p ext; returns the bytes of @p ext the file holds
 * (0 before version 3). */
static size_t
header_fill(const struct cf_filter *f, struct cf_file_header *h,
		struct cf_file_ext *ext)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, CF_FILE_MAGIC, sizeof(h->magic));
	h->version = f->params.key_hash != CF_KEY_HASH_XXH3 ?
		CF_FILE_VERSION_KEY_HASH : f->interleaved ?
		CF_FILE_VERSION_INTERLEAVED : CF_FILE_VERSION;
	*ext = (struct cf_file_ext){ (uint32_t)f->params.key_hash, 0 };
	h->byte_order = CF_BYTE_ORDER;
	h->table = f->params.table;
	h->fp_bits = f->params.fp_bits;
	h->bucket_slots = f->params.bucket_slots;
	h->max_kicks = f->params.max_kicks;
	h->value_bits = f->params.value_bits;
	h->stash_count = f->stash_count;
	h->capacity = f->params.capacity;
	h->seed = f->params.seed;
	h->buckets = f->buckets;
	h->items = f->items;
	h->table_bytes = f->table_bytes;
	h->values_bytes = file_values_bytes(f);
	return head_size(f->params.key_hash) - sizeof(*h);
}

static void
stash_fill(const struct cf_filter *f, struct cf_file_stash *out)
{
	for (uint32_t k = 0; k < f->stash_count; k++)
		out[k] = (struct cf_file_stash){ f->stash[k].bucket,
			f->stash[k].fp, f->stash[k].value };
}

size_t
cf_save_size(const struct cf_filter *f)
{
	return head_size(f->params.key_hash) + f->table_bytes +
		file_values_bytes(f) + f->stash_count *
		sizeof(struct cf_file_stash);
}

uint64_t
cf_params_save_size(const struct cf_params *params)
{
	struct cf_filter geo;
	struct cf_params p;
	uint64_t buckets;

	if (params == NULL || cf_params_resolve(params, &p, &buckets) != 0) {
		errno = EINVAL;
		return 0;
	}
	memset(&geo, 0, sizeof(geo));
	geo.params = p;
	cf_geometry_init(&geo, buckets);
	return head_size(p.key_hash) + geo.table_bytes +
		file_values_bytes(&geo) + CF_STASH_SIZE *
		sizeof(struct cf_file_stash);
}

int64_t
cf_save_mem(const struct cf_filter *f, void *buf, size_t len)
{
	struct cf_file_stash stash[CF_STASH_SIZE];
	size_t size = cf_save_size(f);
	struct cf_file_header h;
	struct cf_file_ext ext;
	size_t ext_bytes;
	uint8_t *p = buf;

	if (len < size)
		return cf_err(ENOSPC);
	ext_bytes = header_fill(f, &h, &ext);
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, &ext, ext_bytes);
	p += ext_bytes;
	memcpy(p, f->table, f->table_bytes);
	p += f->table_bytes;
	if (f->aux_inline)
		values_compact(f, 0, f->buckets * f->slots, p);
	else if (f->values_bytes != 0)
		memcpy(p, f->values, f->values_bytes);
	p += file_values_bytes(f);
	/* The output is unaligned past the table: copy, never cast. */
	stash_fill(f, stash);
	memcpy(p, stash, f->stash_count * sizeof(stash[0]));
	h.checksum = XXH64(buf, size, 0);
	memcpy((uint8_t *)buf + offsetof(struct cf_file_header, checksum),
			&h.checksum, sizeof(h.checksum));
	return (int64_t)size;
}

/* Write and checksum. */
static int
write_sum(int fd, const void *buf, size_t len, XXH64_state_t *st)
{
	XXH64_update(st, buf, len);
	return cfu_write_all(fd, buf, len);
}

struct save_ctx {
	const struct cf_filter *f;
	XXH64_state_t *st;
};

/* The file's bytes, its checksum patched into the header at the end. */
static int
save_fill(int fd, void *arg)
{
	struct cf_file_stash stash[CF_STASH_SIZE];
	const struct save_ctx *c = arg;
	const struct cf_filter *f = c->f;
	struct cf_file_header h;
	struct cf_file_ext ext;
	size_t ext_bytes;
	int ret;

	ext_bytes = header_fill(f, &h, &ext);
	stash_fill(f, stash);
	ret = write_sum(fd, &h, sizeof(h), c->st);
	if (ret == 0)
		ret = write_sum(fd, &ext, ext_bytes, c->st);
	if (ret == 0)
		ret = write_sum(fd, f->table, f->table_bytes, c->st);
	if (ret == 0 && f->aux_inline) {
		/* compacted a chunk at a time */
		uint8_t chunk[4096];
		uint64_t slots = f->buckets * f->slots, per = sizeof(chunk) /
			f->value_bytes;

		for (uint64_t k = 0; ret == 0 && k < slots; k += per) {
			uint64_t n = slots - k < per ? slots - k : per;

			values_compact(f, k, n, chunk);
			ret = write_sum(fd, chunk, n * f->value_bytes, c->st);
		}
	} else if (ret == 0 && f->values_bytes != 0) {
		ret = write_sum(fd, f->values, f->values_bytes, c->st);
	}
	if (ret == 0)
		ret = write_sum(fd, stash, f->stash_count * sizeof(stash[0]),
				c->st);
	h.checksum = XXH64_digest(c->st);
	if (ret == 0 && pwrite(fd, &h.checksum, sizeof(h.checksum),
			offsetof(struct cf_file_header, checksum)) !=
			sizeof(h.checksum))
		ret = -EIO;
	return ret;
}

int
cf_save_file(const struct cf_filter *f, const char *path)
{
	struct save_ctx c = { .f = f };
	int ret;

	c.st = XXH64_createState();
	if (c.st == NULL)
		return cf_err(ENOMEM);
	XXH64_reset(c.st, 0);
	ret = cfu_write_durable(path, save_fill, &c, NULL, 0);
	XXH64_freeState(c.st);
	return cf_ret(ret);
}

static uint32_t
swap32(uint32_t x)
{
	return __builtin_bswap32(x);
}

/* Check the header and the input length; 0 or a negative errno. */
static int
header_check(const void *buf, size_t len, struct cf_file_header *h,
		struct cf_params *p, uint64_t *buckets)
{
	uint64_t want_buckets, total;
	struct cf_filter geo;

	if (len < sizeof(*h))
		return cf_err(ENODATA);
	memcpy(h, buf, sizeof(*h));
	if (memcmp(h->magic, CF_FILE_MAGIC, sizeof(h->magic)) != 0)
		return cf_err(EBADMSG);
	if (h->byte_order == swap32(CF_BYTE_ORDER))
		return cf_err(ENOTSUP);
	if (h->byte_order != CF_BYTE_ORDER)
		return cf_err(EBADMSG);
	if (h->version != CF_FILE_VERSION &&
			h->version != CF_FILE_VERSION_INTERLEAVED &&
			h->version != CF_FILE_VERSION_KEY_HASH)
		return cf_err(EPROTONOSUPPORT);

	memset(p, 0, sizeof(*p));
	p->capacity = h->capacity;
	p->fp_bits = h->fp_bits;
	p->bucket_slots = h->bucket_slots;
	p->max_kicks = h->max_kicks;
	p->value_bits = h->value_bits;
	p->table = (enum cf_table_type)h->table;
	p->seed = h->seed;
	if (h->version == CF_FILE_VERSION_KEY_HASH) {
		struct cf_file_ext ext;

		if (len < sizeof(*h) + sizeof(ext))
			return cf_err(ENODATA);
		memcpy(&ext, (const uint8_t *)buf + sizeof(*h), sizeof(ext));
		/* XXH3 files are versions 1 and 2, whose readers read them */
		if (ext.key_hash == CF_KEY_HASH_XXH3 || ext.reserved != 0)
			return cf_err(EBADMSG);
		if (ext.key_hash != CF_KEY_HASH_U64)
			return cf_err(EPROTONOSUPPORT);
		p->key_hash = (enum cf_key_hash)ext.key_hash;
	}
	/* Zero means "default" to cf_create, but a file states every value. */
	if (h->fp_bits == 0 || h->bucket_slots == 0 || h->max_kicks == 0 ||
			h->table > CF_TABLE_INTERLEAVED)
		return cf_err(EBADMSG);
	/* Each layout has its version, and only one, but for version 3. */
	if (h->version != CF_FILE_VERSION_KEY_HASH &&
			(h->table == CF_TABLE_INTERLEAVED) !=
			(h->version == CF_FILE_VERSION_INTERLEAVED))
		return cf_err(EBADMSG);
	/* The file holds no flag for exact_size: the bucket count tells. */
	if (cf_params_resolve(p, p, &want_buckets) != 0)
		return cf_err(EBADMSG);
	if (h->buckets != want_buckets) {
		p->exact_size = true;
		if (cf_params_resolve(p, p, &want_buckets) != 0 ||
				h->buckets != want_buckets)
			return cf_err(EBADMSG);
	}
	if (h->stash_count > CF_STASH_SIZE ||
			h->items > h->buckets * h->bucket_slots)
		return cf_err(EBADMSG);

	memset(&geo, 0, sizeof(geo));
	geo.params = *p;
	cf_geometry_init(&geo, want_buckets);
	if (h->table_bytes != geo.table_bytes ||
			h->values_bytes != geo.values_bytes)
		return cf_err(EBADMSG);
	*buckets = want_buckets;
	total = head_size(p->key_hash) + h->table_bytes + h->values_bytes +
		h->stash_count * sizeof(struct cf_file_stash);
	if (len < total)
		return cf_err(ENODATA);
	if (len > total)
		return cf_err(EBADMSG);
	return 0;
}

static bool
interleave_pad_zero(const struct cf_filter *f, uint64_t i)
{
	const uint8_t *b = f->table + i * f->pitch_bytes;
	uint32_t fp_end = (f->bucket_bits + 7) / 8;
	uint32_t values_end = f->value_off + f->slots * f->value_bytes;

	/* the bits of the last fingerprint byte past the fingerprints */
	if (f->bucket_bits % 8 != 0 &&
			(b[fp_end - 1] >> (f->bucket_bits % 8)) != 0)
		return false;
	for (uint32_t k = fp_end; k < f->value_off; k++)
		if (b[k] != 0)
			return false;
	for (uint32_t k = values_end; k < f->pitch_bytes; k++)
		if (b[k] != 0)
			return false;
	return true;
}

/* Every table slot and stash entry must be one a filter can hold. */
static int
content_check(struct cf_filter *f, const struct cf_file_header *h)
{
	uint64_t items = 0;
	uint8_t *pad = f->table + f->table_bytes - CF_TABLE_PAD;

	for (uint64_t i = 0; i < f->buckets; i++) {
		if (f->mode == CF_MODE_SEMISORT) {
			uint64_t w = cf_load_bits(f->table, i * f->pitch_bits,
					f->bucket_bits);

			if ((w & 0xfff) >= CF_SEMISORT_CODES)
				return cf_err(EBADMSG);
		}
		struct cf_bucket b;

		cf_bucket_read(f, (uint32_t)i, &b);
		for (uint32_t s = 0; s < f->slots; s++)
			items += b.fp[s] != 0;
		/* An interleaved bucket's bytes that are neither
		 * fingerprints nor values are zero, as a filter keeps them:
		 * a loaded filter saves byte for byte as it was read. */
		if (f->interleaved && !interleave_pad_zero(f, i))
			return cf_err(EBADMSG);
	}
	if (items != h->items)
		return cf_err(EBADMSG);
	if (!cf_stash_valid(f))
		return cf_err(EBADMSG);
	for (uint32_t k = 0; k < CF_TABLE_PAD; k++)
		if (pad[k] != 0)
			return cf_err(EBADMSG);
	return 0;
}

struct cf_filter *
cf_load_mem(const void *buf, size_t len, const struct cf_allocator *allocator,
		int socket_id)
{
	struct cf_file_header h;
	struct cf_file_stash stash[CF_STASH_SIZE];
	const uint8_t *p = buf;
	struct cf_params params;
	struct cf_filter *f;
	uint64_t buckets, sum;
	uint8_t zero[sizeof(h.checksum)] = {0};
	XXH64_state_t *st;
	int ret;

	if (buf == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ret = header_check(buf, len, &h, &params, &buckets);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	st = XXH64_createState();
	if (st == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	XXH64_reset(st, 0);
	XXH64_update(st, p, offsetof(struct cf_file_header, checksum));
	XXH64_update(st, zero, sizeof(zero));
	XXH64_update(st, p + sizeof(h), len - sizeof(h));
	sum = XXH64_digest(st);
	XXH64_freeState(st);
	if (sum != h.checksum) {
		errno = EBADMSG;
		return NULL;
	}

	params.allocator = allocator;
	params.socket_id = socket_id;
	f = cf_create_geometry(&params, buckets);
	if (f == NULL)
		return NULL;
	p += head_size(params.key_hash);
	memcpy(f->table, p, f->table_bytes);
	p += f->table_bytes;
	if (f->values_bytes != 0)
		memcpy(f->values, p, f->values_bytes);
	p += f->values_bytes;
	memcpy(stash, p, h.stash_count * sizeof(stash[0]));
	for (uint32_t k = 0; k < h.stash_count; k++)
		f->stash[k] = (struct cf_stash_entry){ stash[k].bucket,
			stash[k].fp, stash[k].value, 0 };
	f->stash_count = h.stash_count;
	f->items = h.items;
	ret = content_check(f, &h);
	if (ret < 0) {
		cf_free(f);
		errno = -ret;
		return NULL;
	}
	return f;
}

struct cf_filter *
cf_load_file(const char *path, const struct cf_allocator *allocator,
		int socket_id)
{
	struct cf_filter *f;
	size_t len;
	char *buf = cfu_file_read(path, SIZE_MAX / 2, &len, NULL, 0);
	int e;

	if (buf == NULL)
		return NULL;
	f = cf_load_mem(buf, len, allocator, socket_id);
	e = errno;
	free(buf);
	if (f == NULL)
		errno = e;
	return f;
}
