/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Blocklists on lib/cuckoo. A prefix entry is the hash of (family,
 * length, masked address); an address is a full-length prefix; a flow
 * entry is the hash of its canonical key. The lengths present are kept,
 * so that a packet is only looked up at those lengths.
 *
 * Compiled file: "CFBLOCK1", version, fingerprint bits, entry counts and
 * the prefix-length sets, with an XXH64 of that header, followed by the
 * filter in lib/cuckoo's own checksummed format.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "blocklist.h"

#define BL_MAGIC "CFBLOCK1"
#define BL_VERSION 1
#define BL_SEED UINT64_C(0xb10c7157)

struct cflow_blocklist {
	struct cf_filter *filter;
	uint64_t entries[CFLOW_BL_KINDS];
	uint8_t v4_len[33];     /* 1 if some prefix has this length */
	uint8_t v6_len[129];
	unsigned int fp_bits;
};

/* The header of a compiled file, in the writer's byte order. */
struct bl_header {
	char magic[8];
	uint32_t version;
	uint32_t fp_bits;
	uint64_t entries[CFLOW_BL_KINDS];
	uint8_t v4_len[33];
	uint8_t v6_len[129];
	uint8_t pad[6];
	uint64_t checksum;      /* XXH64 of the header before this field */
};

/* What is hashed for a prefix: fixed size, zero padded. */
struct prefix_key {
	uint8_t tag;            /* 'P' */
	uint8_t family;
	uint8_t length;
	uint8_t pad;
	uint8_t addr[16];
};

struct flow_key {
	uint8_t tag;            /* 'F' */
	uint8_t pad[7];
	struct cflow_key key;
};

static const char *const kind_names[CFLOW_BL_KINDS] = {
	"none", "address", "prefix", "flow",
};

const char *
cflow_bl_kind_name(enum cflow_bl_kind kind)
{
	return (unsigned int)kind < CFLOW_BL_KINDS ? kind_names[kind] : "?";
}

static void
error(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------- hashing */

/* addr: 16 bytes, IPv4 mapped; only its significant bytes are used. */
static uint64_t
prefix_hash(int family, const uint8_t *addr, unsigned int length)
{
	struct prefix_key k;
	const uint8_t *a = family == 4 ? addr + 12 : addr;
	unsigned int bytes = family == 4 ? 4 : 16;

	memset(&k, 0, sizeof(k));
	k.tag = 'P';
	k.family = (uint8_t)family;
	k.length = (uint8_t)length;
	for (unsigned int b = 0; b < bytes && b * 8 < length; b++) {
		unsigned int keep = length - b * 8 >= 8 ? 8 : length - b * 8;

		k.addr[b] = a[b] & (uint8_t)(0xff00 >> keep);
	}
	return XXH3_64bits_withSeed(&k, sizeof(k), BL_SEED);
}

static uint64_t
flow_hash(const struct cflow_key *key)
{
	struct flow_key k;

	memset(&k, 0, sizeof(k));
	k.tag = 'F';
	k.key = *key;
	k.key.vlan = 0;
	return XXH3_64bits_withSeed(&k, sizeof(k), BL_SEED);
}

/* ---------------------------------------------------------- parsing */

struct entry {
	enum cflow_bl_kind kind;
	int family;
	unsigned int length;
	uint8_t addr[16];
	struct cflow_key flow;
};

static int
parse_addr(const char *s, int *family, uint8_t *addr16)
{
	memset(addr16, 0, 16);
	if (inet_pton(AF_INET, s, addr16 + 12) == 1) {
		addr16[10] = 0xff;
		addr16[11] = 0xff;
		*family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr16) == 1) {
		*family = 6;
		return 0;
	}
	return -1;
}

static int
parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return *end != '\0' || errno != 0 || *v > max ? -1 : 0;
}

static int
parse_proto(const char *s, unsigned long *proto)
{
	static const struct { const char *name; unsigned long num; } names[] = {
		{ "tcp", 6 }, { "udp", 17 }, { "sctp", 132 }, { "icmp", 1 },
		{ "udplite", 136 }, { "icmpv6", 58 },
	};

	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0) {
			*proto = names[i].num;
			return 0;
		}
	return parse_uint(s, 255, proto);
}

/* One entry from its whitespace-separated words; 0 or -1 and why. */
static int
parse_entry(char **w, int nw, struct entry *e, char *why, size_t why_len)
{
	memset(e, 0, sizeof(*e));
	if (nw == 1) {
		char *slash = strchr(w[0], '/');
		unsigned long len;

		if (slash != NULL)
			*slash = '\0';
		if (parse_addr(w[0], &e->family, e->addr) != 0) {
			error(why, why_len, "'%s' is not an IPv4 or IPv6 address",
				w[0]);
			return -1;
		}
		e->length = e->family == 4 ? 32 : 128;
		e->kind = CFLOW_BL_ADDRESS;
		if (slash != NULL) {
			if (parse_uint(slash + 1, e->length, &len) != 0) {
				error(why, why_len, "prefix length '%s': want "
					"0..%u", slash + 1, e->length);
				return -1;
			}
			e->kind = len == e->length ? CFLOW_BL_ADDRESS :
				CFLOW_BL_PREFIX;
			e->length = (unsigned int)len;
		}
		return 0;
	}
	if (nw == 5) {
		unsigned long proto, sport, dport;
		uint8_t src[16], dst[16];
		int fs, fd;

		if (parse_proto(w[0], &proto) != 0) {
			error(why, why_len, "protocol '%s': want tcp, udp, sctp, "
				"icmp, icmpv6, udplite or 0..255", w[0]);
			return -1;
		}
		if (parse_addr(w[1], &fs, src) != 0 ||
				parse_addr(w[3], &fd, dst) != 0 || fs != fd) {
			error(why, why_len, "addresses '%s' and '%s': want two of "
				"the same family", w[1], w[3]);
			return -1;
		}
		if (parse_uint(w[2], 65535, &sport) != 0 ||
				parse_uint(w[4], 65535, &dport) != 0) {
			error(why, why_len, "ports '%s' and '%s': want 0..65535",
				w[2], w[4]);
			return -1;
		}
		cflow_key_init(&e->flow, (uint8_t)fs, src, dst, (uint16_t)sport,
			(uint16_t)dport, (uint8_t)proto);
		e->kind = CFLOW_BL_FLOW;
		return 0;
	}
	error(why, why_len, "want an address, a prefix, or 'proto src sport "
		"dst dport' (%d words)", nw);
	return -1;
}

static int
split(char *line, char **w, int max)
{
	int n = 0;
	char *save = NULL, *hash = strchr(line, '#');

	if (hash != NULL)
		*hash = '\0';
	for (char *t = strtok_r(line, " \t\r\n", &save); t != NULL;
			t = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == max)
			return max + 1;
		w[n++] = t;
	}
	return n;
}

static uint64_t
entry_hash(const struct entry *e)
{
	return e->kind == CFLOW_BL_FLOW ? flow_hash(&e->flow) :
		prefix_hash(e->family, e->addr, e->length);
}

/* ---------------------------------------------------------- building */

static struct cflow_blocklist *
bl_alloc(uint64_t capacity, unsigned int fp_bits)
{
	struct cflow_blocklist *bl = calloc(1, sizeof(*bl));

	if (bl == NULL)
		return NULL;
	bl->fp_bits = fp_bits;
	bl->filter = cf_create(&(struct cf_params){
		.capacity = capacity ? capacity : 1,
		.fp_bits = fp_bits,
		.seed = BL_SEED,
	});
	if (bl->filter == NULL) {
		free(bl);
		return NULL;
	}
	return bl;
}

struct cflow_blocklist *
cflow_bl_read(const char *path, unsigned int fp_bits, char *err,
		size_t err_len)
{
	FILE *fp = fopen(path, "r");
	struct cflow_blocklist *bl = NULL;
	char line[1024], why[256];
	uint64_t lines = 0;
	int ln = 0;

	if (fp == NULL) {
		error(err, err_len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fp_bits == 0)
		fp_bits = 32;
	/* First pass: validate every line and count, so that nothing is
	 * built from a list with an error. */
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *w[6];
		struct entry e;
		int nw;

		ln++;
		if (strchr(line, '\n') == NULL && !feof(fp)) {
			error(err, err_len, "%s:%d: line too long", path, ln);
			goto out;
		}
		nw = split(line, w, 5);
		if (nw == 0)
			continue;
		if (parse_entry(w, nw, &e, why, sizeof(why)) != 0) {
			error(err, err_len, "%s:%d: %s", path, ln, why);
			goto out;
		}
		lines++;
	}
	bl = bl_alloc(lines, fp_bits);
	if (bl == NULL) {
		error(err, err_len, "%s: %s", path, strerror(errno));
		goto out;
	}
	rewind(fp);
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *w[6];
		struct entry e;
		int nw = split(line, w, 5), ret;

		if (nw == 0 || parse_entry(w, nw, &e, why, sizeof(why)) != 0)
			continue;
		ret = cf_add_unique_with_hash(bl->filter, entry_hash(&e), 0,
				NULL);
		if (ret == -ENOSPC) {
			error(err, err_len, "%s: table full at %" PRIu64
				" entries", path, lines);
			cflow_bl_free(bl);
			bl = NULL;
			goto out;
		}
		if (ret != 0)
			continue; /* a duplicate */
		bl->entries[e.kind]++;
		if (e.kind != CFLOW_BL_FLOW) {
			if (e.family == 4)
				bl->v4_len[e.length] = 1;
			else
				bl->v6_len[e.length] = 1;
		}
	}
out:
	fclose(fp);
	return bl;
}

/* ---------------------------------------------------------- matching */

static bool
listed(const struct cflow_blocklist *bl, uint64_t h)
{
	return cf_lookup_with_hash(bl->filter, h, NULL) == 1;
}

static enum cflow_bl_kind
match_addr(const struct cflow_blocklist *bl, int family, const uint8_t *addr)
{
	const uint8_t *lens = family == 4 ? bl->v4_len : bl->v6_len;
	unsigned int full = family == 4 ? 32 : 128;

	for (unsigned int l = 0; l <= full; l++)
		if (lens[l] && listed(bl, prefix_hash(family, addr, l)))
			return l == full ? CFLOW_BL_ADDRESS : CFLOW_BL_PREFIX;
	return CFLOW_BL_NONE;
}

static enum cflow_bl_kind
match_scalar(const struct cflow_blocklist *bl, const struct cflow_packet *pkt)
{
	enum cflow_bl_kind k = match_addr(bl, pkt->key.family,
			pkt->key.addr_lo);

	if (k == CFLOW_BL_NONE)
		k = match_addr(bl, pkt->key.family, pkt->key.addr_hi);
	if (k == CFLOW_BL_NONE && bl->entries[CFLOW_BL_FLOW] != 0 &&
			listed(bl, flow_hash(&pkt->key)))
		k = CFLOW_BL_FLOW;
	return k;
}

/*
 * Every lookup a packet needs (each present length for each address,
 * then the flow) goes into one bulk call, so that their cache misses
 * overlap. The first hit in that order decides the kind, as a scalar
 * scan would: the shortest listed prefix of the lower address, then of
 * the higher one, then the flow.
 */
enum cflow_bl_kind
cflow_bl_match(const struct cflow_blocklist *bl, const struct cflow_packet *pkt)
{
	const int family = pkt->key.family;
	const uint8_t *lens = family == 4 ? bl->v4_len : bl->v6_len;
	const unsigned int full = family == 4 ? 32 : 128;
	uint64_t hashes[CF_BULK_MAX], hits;
	uint8_t kind[CF_BULK_MAX];
	unsigned int n = 0;

	for (int side = 0; side < 2; side++) {
		const uint8_t *addr = side ? pkt->key.addr_hi : pkt->key.addr_lo;

		for (unsigned int l = 0; l <= full; l++) {
			if (!lens[l])
				continue;
			if (n == CF_BULK_MAX - 1) /* many lengths */
				return match_scalar(bl, pkt);
			kind[n] = l == full ? CFLOW_BL_ADDRESS : CFLOW_BL_PREFIX;
			hashes[n++] = prefix_hash(family, addr, l);
		}
	}
	if (bl->entries[CFLOW_BL_FLOW] != 0) {
		kind[n] = CFLOW_BL_FLOW;
		hashes[n++] = flow_hash(&pkt->key);
	}
	if (n == 0 || cf_lookup_bulk(bl->filter, hashes, n, &hits, NULL) <= 0)
		return CFLOW_BL_NONE;
	return (enum cflow_bl_kind)kind[__builtin_ctzll(hits)];
}

/*
 * cflow_bl_match() without the flow: the address and prefix lookups of
 * both addresses in one bulk call, the first hit in the same order
 * deciding the kind. Ports are unknown here, so flow entries are never
 * looked up (see blocklist.h for what the caller does about them).
 */
enum cflow_bl_kind
cflow_bl_match_addrs(const struct cflow_blocklist *bl,
		const struct cflow_packet *pkt)
{
	const int family = pkt->key.family;
	const uint8_t *lens = family == 4 ? bl->v4_len : bl->v6_len;
	const unsigned int full = family == 4 ? 32 : 128;
	uint64_t hashes[CF_BULK_MAX], hits;
	uint8_t kind[CF_BULK_MAX];
	unsigned int n = 0;

	if (!pkt->has_addrs || (family != 4 && family != 6))
		return CFLOW_BL_NONE;
	for (int side = 0; side < 2; side++) {
		const uint8_t *addr = side ? pkt->key.addr_hi : pkt->key.addr_lo;

		for (unsigned int l = 0; l <= full; l++) {
			enum cflow_bl_kind k;

			if (!lens[l])
				continue;
			if (n == CF_BULK_MAX) { /* many lengths */
				k = match_addr(bl, family, pkt->key.addr_lo);
				return k != CFLOW_BL_NONE ? k :
					match_addr(bl, family, pkt->key.addr_hi);
			}
			kind[n] = l == full ? CFLOW_BL_ADDRESS : CFLOW_BL_PREFIX;
			hashes[n++] = prefix_hash(family, addr, l);
		}
	}
	if (n == 0 || cf_lookup_bulk(bl->filter, hashes, n, &hits, NULL) <= 0)
		return CFLOW_BL_NONE;
	return (enum cflow_bl_kind)kind[__builtin_ctzll(hits)];
}

int
cflow_bl_match_text(const struct cflow_blocklist *bl, const char *entry,
		enum cflow_bl_kind *kind, char *err, size_t err_len)
{
	char buf[512], *w[6];
	struct cflow_packet pkt;
	struct entry e;
	int nw;

	snprintf(buf, sizeof(buf), "%s", entry);
	nw = split(buf, w, 5);
	if (parse_entry(w, nw, &e, err, err_len) != 0)
		return -EINVAL;
	if (e.kind == CFLOW_BL_FLOW) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.key = e.flow;
		*kind = cflow_bl_match(bl, &pkt);
	} else if (e.kind == CFLOW_BL_PREFIX) {
		/* A prefix query asks whether that exact prefix is listed. */
		*kind = listed(bl, prefix_hash(e.family, e.addr, e.length)) ?
			CFLOW_BL_PREFIX : CFLOW_BL_NONE;
	} else {
		*kind = match_addr(bl, e.family, e.addr);
	}
	return 0;
}

/* ------------------------------------------------------------ files */

static uint64_t
header_sum(const struct bl_header *h)
{
	return XXH64(h, offsetof(struct bl_header, checksum), 0);
}

int
cflow_bl_save(const struct cflow_blocklist *bl, const char *path)
{
	struct bl_header h;
	size_t size = cf_save_size(bl->filter);
	uint8_t *buf = malloc(sizeof(h) + size);
	FILE *fp;
	int ret = 0;

	if (buf == NULL)
		return -ENOMEM;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, BL_MAGIC, sizeof(h.magic));
	h.version = BL_VERSION;
	h.fp_bits = bl->fp_bits;
	memcpy(h.entries, bl->entries, sizeof(h.entries));
	memcpy(h.v4_len, bl->v4_len, sizeof(h.v4_len));
	memcpy(h.v6_len, bl->v6_len, sizeof(h.v6_len));
	h.checksum = header_sum(&h);
	memcpy(buf, &h, sizeof(h));
	cf_save_mem(bl->filter, buf + sizeof(h), size);
	fp = fopen(path, "wb");
	if (fp == NULL || fwrite(buf, 1, sizeof(h) + size, fp) !=
			sizeof(h) + size)
		ret = -errno;
	if (fp != NULL && fclose(fp) != 0 && ret == 0)
		ret = -errno;
	free(buf);
	return ret;
}

struct cflow_blocklist *
cflow_bl_load(const char *path, char *err, size_t err_len)
{
	struct cflow_blocklist *bl;
	struct bl_header h;
	struct stat sb;
	uint8_t *buf;
	FILE *fp = fopen(path, "rb");
	size_t n;

	if (fp == NULL || fstat(fileno(fp), &sb) != 0) {
		error(err, err_len, "%s: %s", path, strerror(errno));
		if (fp != NULL)
			fclose(fp);
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	n = buf != NULL ? fread(buf, 1, (size_t)sb.st_size, fp) : 0;
	fclose(fp);
	if (buf == NULL || n != (size_t)sb.st_size) {
		error(err, err_len, "%s: cannot read", path);
		free(buf);
		return NULL;
	}
	if (n < 8 || memcmp(buf, BL_MAGIC, 8) != 0) {
		free(buf);
		return cflow_bl_read(path, 0, err, err_len); /* a text list */
	}
	if (n < sizeof(h)) {
		error(err, err_len, "%s: truncated compiled blocklist", path);
		free(buf);
		return NULL;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.checksum != header_sum(&h) || h.version != BL_VERSION) {
		error(err, err_len, "%s: %s", path, h.checksum !=
			header_sum(&h) ? "corrupted header (checksum)" :
			"unsupported format version");
		free(buf);
		return NULL;
	}
	bl = calloc(1, sizeof(*bl));
	if (bl == NULL) {
		free(buf);
		return NULL;
	}
	bl->filter = cf_load_mem(buf + sizeof(h), n - sizeof(h), NULL, 0);
	if (bl->filter == NULL) {
		error(err, err_len, "%s: filter: %s", path, strerror(errno));
		free(bl);
		free(buf);
		return NULL;
	}
	bl->fp_bits = h.fp_bits;
	memcpy(bl->entries, h.entries, sizeof(h.entries));
	for (unsigned int l = 0; l <= 32; l++)
		bl->v4_len[l] = h.v4_len[l] != 0;
	for (unsigned int l = 0; l <= 128; l++)
		bl->v6_len[l] = h.v6_len[l] != 0;
	free(buf);
	return bl;
}

void
cflow_bl_info(const struct cflow_blocklist *bl, struct cflow_bl_info *info)
{
	struct cf_stats st;
	unsigned int lookups;

	memset(info, 0, sizeof(*info));
	memcpy(info->entries, bl->entries, sizeof(info->entries));
	for (int k = 1; k < CFLOW_BL_KINDS; k++)
		info->total += bl->entries[k];
	for (unsigned int l = 0; l <= 32; l++)
		info->v4_lengths += bl->v4_len[l];
	for (unsigned int l = 0; l <= 128; l++)
		info->v6_lengths += bl->v6_len[l];
	cf_stats(bl->filter, &st);
	info->fp_bits = bl->fp_bits;
	info->bits_per_entry = st.items ? st.table_bytes * 8.0 / st.items : 0;
	/* An IPv4 packet: 2 addresses x its family's lengths, plus a flow. */
	lookups = 2 * (info->v4_lengths > info->v6_lengths ?
		info->v4_lengths : info->v6_lengths) +
		(bl->entries[CFLOW_BL_FLOW] != 0);
	info->expected_false_match = st.expected_fpr * lookups;
}

void
cflow_bl_free(struct cflow_blocklist *bl)
{
	if (bl == NULL)
		return;
	cf_free(bl->filter);
	free(bl);
}
