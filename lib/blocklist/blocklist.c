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
 *
 * Files: only regular files are read, opened so that nothing blocks,
 * within size limits checked before reading; text lists are streamed a
 * line at a time; a compiled list is saved through a temporary file and
 * a rename. See blocklist.h and docs/loader.md.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* XXH3 compiled in for the keys' fixed sizes (libxxhash's PLT and its
 * length dispatch, a lookup's worth of cycles per key). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "blocklist.h"

#include "cbl_private.h"
#include "cfutil.h"
#include "cuckoo_filter.h"

#define BL_MAGIC "CFBLOCK1"
#define BL_VERSION 1
#define BL_SEED UINT64_C(0xb10c7157)

/*
 * The IPv4 length index: BL_CELL_BYTES to twice that bytes an IPv4 entry
 * (a power of two of cells) while it is built, at least 2^10 and at most
 * 2^24 cells (a cell a /24). Kept as 2 bits a cell (4 MiB for 2^24
 * cells): nothing, covered by an entry of at most v4_bits, or holding
 * longer entries only; the lengths of the last kind of cell in a packed
 * array, found by rank (docs/design.md). With 16 cells an entry, a
 * random address's cell is answered by its 2 bits 15 times in 16 or
 * more, as a DIR-24-8 table answers with one read.
 */
#define BL_CELL_BITS_MIN 10
#define BL_CELL_BITS_MAX 24
#define BL_CELL_BYTES 16

/* A cell's 2-bit state. */
#define BL_CELL_EMPTY 0u
#define BL_CELL_COVERED 1u      /* an entry of at most v4_bits covers it */
#define BL_CELL_LONGER 2u       /* entries longer than v4_bits only */

/*
 * The prefixes of this many bits or fewer are added to the index once
 * each (v4_added, 2^(BL_ADDED_LEN + 1) bits: 16 KiB). A prefix of len
 * bits is written into 2^(v4_bits - len) cells: the list's lines of the
 * same short prefix, each written again, made the build quadratic (a
 * 12 MB list of 1 M lines "128.0.0.0/1", 2^23 cells each, ran for hours
 * holding the reload). Longer ones write at most 2^(24 - 17) = 128.
 */
#define BL_ADDED_LEN 16

/* Cells a rank counts: a 64-byte line of states. */
#define BL_RANK_SHIFT 8

_Static_assert(BL_CELL_BITS_MAX < 32, "a covered cell's kind is a prefix");
_Static_assert(BL_CELL_BITS_MIN >= BL_RANK_SHIFT, "whole rank blocks");

struct cbl {
	struct cf_filter *filter;
	uint64_t entries[CBL_KINDS];
	uint8_t v4_len[33];     /* 1 if some prefix has this length */
	uint8_t v6_len[129];
	/* the same as lists, shortest first (lengths_index()) */
	uint8_t v4_list[33], v6_list[129];
	uint8_t nb_v4, nb_v6;
	unsigned int fp_bits;
	/*
	 * The IPv4 length index, built where the entries are known (a text
	 * list), else NULL (v4_state). The list's IPv4 lengths 1..32 are
	 * numbered shortest first (v4_slot_len). Cell a >> (32 - v4_bits)
	 * of an address a has 2 bits in v4_state (BL_CELL_*); a cell
	 * holding longer entries only (BL_CELL_LONGER) has their numbers'
	 * bits in v4_lens, v4_cell_bytes (1, 2 or 4: room for the numbers)
	 * at its rank among such cells: v4_rank[c >> BL_RANK_SHIFT] (those
	 * before its line of states) and those before it in the line. An
	 * address
	 * is looked up at the lengths of its cell only (docs/design.md).
	 * v4_cell: the cells in full (bit j: an entry of number j covers
	 * or lies in the cell) while the list is built, then NULL; and
	 * v4_added, the IPv4 prefixes of BL_ADDED_LEN bits or fewer already
	 * in v4_cell (bit 2^len + prefix), so that a repeated one is not
	 * written again into its 2^(v4_bits - len) cells.
	 */
	uint64_t *v4_state;
	uint32_t *v4_rank;
	uint8_t *v4_lens;
	uint8_t *v4_cell;
	uint8_t *v4_added;
	uint64_t v4_nb_longer;
	unsigned int v4_bits;
	unsigned int v4_cell_bytes;
	uint32_t v4_exact;
	uint8_t v4_slot_len[32];
	uint8_t v4_slot_of[33];
};

/* The header of a compiled file, in the writer's byte order. */
struct bl_header {
	char magic[8];
	uint32_t version;
	uint32_t fp_bits;
	uint64_t entries[CBL_KINDS];
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

/* What a flow entry hashes: its own layout, pinned by the compiled
 * format (tests/unit/test_golden.c), not the parser's struct cflow_key,
 * which may grow. */
struct flow_key {
	uint8_t tag;            /* 'F' */
	uint8_t pad[7];
	uint8_t addr_lo[16];
	uint8_t addr_hi[16];
	uint16_t port_lo;
	uint16_t port_hi;
	uint8_t proto;
	uint8_t family;
	uint16_t pad2;
	uint32_t vlan;          /* 0 */
};

static const char *const kind_names[CBL_KINDS] = {
	"none", "address", "prefix", "flow",
};

const char *
cbl_kind_name(enum cbl_kind kind)
{
	return (unsigned int)kind < CBL_KINDS ? kind_names[kind] : "?";
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

_Static_assert(sizeof(struct prefix_key) == 20, "the compiled format's key");

/* The bytes of an IPv4 address (16 bytes, mapped) as one word in memory
 * order, masked to its first @p length bits. */
static inline uint32_t
v4_masked(const uint8_t *addr16, unsigned int length)
{
	uint32_t w, m = length == 0 ? 0 : htonl(UINT32_MAX <<
		(32 - (length > 32 ? 32 : length)));

	memcpy(&w, addr16 + 12, sizeof(w));
	return w & m;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* XXH3's 16-byte mix of the words @p lo, @p hi at secret offset @p at. */
static inline uint64_t
mix16(uint64_t lo, uint64_t hi, unsigned int at)
{
	const uint8_t *sec = XXH3_kSecret + at;

	return XXH3_mul128_fold64(lo ^ (XXH_readLE64(sec) + BL_SEED),
		hi ^ (XXH_readLE64(sec + 8) - BL_SEED));
}

/*
 * XXH3-64 (seed BL_SEED) of an IPv4 struct prefix_key, its 20 bytes
 * composed in registers: xxHash's XXH3_len_17to128_64b for 20 bytes, two
 * 16-byte mixes of bytes 0..15 and 4..19. Bytes 0..7 are 'P', 4, the
 * length, 0 and the masked address; all others are 0 but the address at
 * 4..7. A key built in memory and read back as words stalled on store
 * forwarding (words across stores of other sizes).
 */
static inline uint64_t
prefix_hash_v4(uint32_t masked, unsigned int length)
{
	uint64_t w0 = 'P' | (uint64_t)4 << 8 | (uint64_t)length << 16 |
		(uint64_t)masked << 32;
	uint64_t acc = 20 * XXH_PRIME64_1;

	acc += mix16(w0, 0, 0);
	acc += mix16(masked, 0, 16);
	return XXH3_avalanche(acc);
}
#endif

/* addr: 16 bytes, IPv4 mapped; only its significant bytes are used. */
static uint64_t
prefix_hash(int family, const uint8_t *addr, unsigned int length)
{
	struct prefix_key k;
	unsigned int bytes = 16;

	if (family == 4) {
		uint32_t w = v4_masked(addr, length);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		return prefix_hash_v4(w, length);
#else
		memset(&k, 0, sizeof(k));
		k.tag = 'P';
		k.family = 4;
		k.length = (uint8_t)length;
		memcpy(k.addr, &w, sizeof(w));
		return XXH3_64bits_withSeed(&k, sizeof(k), BL_SEED);
#endif
	}
	memset(&k, 0, sizeof(k));
	k.tag = 'P';
	k.family = (uint8_t)family;
	k.length = (uint8_t)length;
	for (unsigned int b = 0; b < bytes && b * 8 < length; b++) {
		unsigned int keep = length - b * 8 >= 8 ? 8 : length - b * 8;

		k.addr[b] = addr[b] & (uint8_t)(0xff00 >> keep);
	}
	return XXH3_64bits_withSeed(&k, sizeof(k), BL_SEED);
}

_Static_assert(sizeof(struct flow_key) == 52, "the compiled format's flow key");

/* The listed lengths of each family as lists, for the matchers. */
static void
lengths_index(struct cbl *bl)
{
	bl->nb_v4 = bl->nb_v6 = 0;
	for (unsigned int l = 0; l <= 32; l++)
		if (bl->v4_len[l])
			bl->v4_list[bl->nb_v4++] = (uint8_t)l;
	for (unsigned int l = 0; l <= 128; l++)
		if (bl->v6_len[l])
			bl->v6_list[bl->nb_v6++] = (uint8_t)l;
}

/* ------------------------------------------------------ length index */

/* An index of cells for @p n IPv4 entries of the lengths @p seen (seen[l]
 * non-zero: length l listed): about one entry a cell. */
static int
index_alloc(struct cbl *bl, uint64_t n, const uint8_t *seen)
{
	unsigned int bits = BL_CELL_BITS_MIN, slots = 0;

	for (unsigned int l = 1; l <= 32; l++)
		slots += seen[l] != 0;
	bl->v4_cell_bytes = slots <= 8 ? 1 : slots <= 16 ? 2 : 4;
	while (bits < BL_CELL_BITS_MAX && (UINT64_C(1) << bits) *
			bl->v4_cell_bytes < n * BL_CELL_BYTES)
		bits++;
	slots = 0;
	for (unsigned int l = 1; l <= 32; l++) {
		if (!seen[l])
			continue;
		bl->v4_slot_of[l] = (uint8_t)slots;
		bl->v4_slot_len[slots] = (uint8_t)l;
		if (l <= bits)
			bl->v4_exact |= UINT32_C(1) << slots;
		slots++;
	}
	/* the full cells for the build only (index_finish()) */
	bl->v4_cell = calloc((size_t)1 << bits, bl->v4_cell_bytes);
	bl->v4_added = calloc((size_t)1 << (BL_ADDED_LEN + 1 - 3), 1);
	if (bl->v4_cell == NULL || bl->v4_added == NULL)
		return -ENOMEM;
	bl->v4_bits = bits;
	return 0;
}

static inline uint32_t
v4_word(const uint8_t *addr16)
{
	uint32_t a;

	memcpy(&a, addr16 + 12, sizeof(a));
	return ntohl(a);
}

/* The v4_cell_bytes-wide word at @p p: a full cell (v4_cell) or a
 * cell's lengths (v4_lens). */
static inline uint32_t
lens_read(const struct cbl *bl, const uint8_t *p)
{
	uint16_t v16;
	uint32_t v32;

	switch (bl->v4_cell_bytes) {
	case 1:
		return *p;
	case 2:
		memcpy(&v16, p, sizeof(v16));
		return v16;
	default:
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
}

/* The full cell @p c (while the index is built). */
static uint32_t
cell_get(const struct cbl *bl, uint64_t c)
{
	return lens_read(bl, bl->v4_cell + c * bl->v4_cell_bytes);
}

/* The cell of IPv4 address @p a (host order). */
static inline uint64_t
cell_of(const struct cbl *bl, uint32_t a)
{
	return a >> (32 - bl->v4_bits);
}

/* The word of the state of cell @p c. */
static inline const uint64_t *
cell_word(const struct cbl *bl, uint64_t c)
{
	return bl->v4_state + (c >> 5);
}

/* The 2-bit state of cell @p c. */
static inline unsigned int
cell_state(const struct cbl *bl, uint64_t c)
{
	return (unsigned int)(*cell_word(bl, c) >> (2 * (c & 31))) & 3;
}

/* A bit at 2k for each BL_CELL_LONGER cell k of a word of states. */
static inline uint64_t
longer_bits(uint64_t w)
{
	return (w >> 1) & ~w & UINT64_C(0x5555555555555555);
}

/* Where the lengths (bits of their numbers) of BL_CELL_LONGER cell @p c
 * are: its rank among such cells in v4_lens. */
static inline const uint8_t *
cell_lens_at(const struct cbl *bl, uint64_t c)
{
	const uint64_t *w = bl->v4_state + ((c >> BL_RANK_SHIFT) <<
		(BL_RANK_SHIFT - 5));
	unsigned int in = (unsigned int)(c >> 5) &
		((1u << (BL_RANK_SHIFT - 5)) - 1);
	uint64_t r = bl->v4_rank[c >> BL_RANK_SHIFT];

	for (unsigned int i = 0; i < in; i++)
		r += (uint64_t)__builtin_popcountll(longer_bits(w[i]));
	r += (uint64_t)__builtin_popcountll(longer_bits(w[in]) &
		((UINT64_C(1) << (2 * (c & 31))) - 1));
	return bl->v4_lens + r * bl->v4_cell_bytes;
}


/* The lengths of BL_CELL_LONGER cell @p c. */
static uint32_t
cell_lens(const struct cbl *bl, uint64_t c)
{
	return lens_read(bl, cell_lens_at(bl, c));
}

/*
 * The full cells as kept: 2 bits a cell (on huge pages: a random cell a
 * packet, as DIR-24-8's tbl24), the ranks, and the lengths of the
 * BL_CELL_LONGER cells in cell order; the full cells freed.
 */
static int
index_finish(struct cbl *bl)
{
	uint64_t cells = UINT64_C(1) << bl->v4_bits, n = 0;
	size_t bytes = bl->v4_cell_bytes;

	bl->v4_state = cfu_zalloc_huge(cells / 4, 64);
	bl->v4_rank = malloc((cells >> BL_RANK_SHIFT) * sizeof(uint32_t));
	if (bl->v4_state == NULL || bl->v4_rank == NULL)
		return -ENOMEM;
	for (uint64_t c = 0; c < cells; c++) {
		uint32_t v = cell_get(bl, c);
		uint64_t s = (v & bl->v4_exact) != 0 ? BL_CELL_COVERED :
			v != 0 ? BL_CELL_LONGER : BL_CELL_EMPTY;

		if ((c & ((UINT64_C(1) << BL_RANK_SHIFT) - 1)) == 0)
			bl->v4_rank[c >> BL_RANK_SHIFT] = (uint32_t)n;
		bl->v4_state[c >> 5] |= s << (2 * (c & 31));
		n += s == BL_CELL_LONGER;
	}
	bl->v4_lens = malloc(n == 0 ? 1 : n * bytes);
	if (bl->v4_lens == NULL)
		return -ENOMEM;
	bl->v4_nb_longer = n;
	n = 0;
	for (uint64_t c = 0; c < cells; c++)
		if (cell_state(bl, c) == BL_CELL_LONGER)
			memcpy(bl->v4_lens + bytes * n++, bl->v4_cell +
				bytes * c, bytes);
	free(bl->v4_cell);
	bl->v4_cell = NULL;
	free(bl->v4_added);
	bl->v4_added = NULL;
	return 0;
}

/* The cells an IPv4 entry of length @p len (1..32) at @p addr covers or
 * lies in get its length's bit. */
static void
index_add(struct cbl *bl, const uint8_t *addr, unsigned int len)
{
	uint32_t a = v4_word(addr), bit = UINT32_C(1) << bl->v4_slot_of[len];
	uint64_t first, count = 1;

	if (len <= BL_ADDED_LEN) {
		uint32_t at = (UINT32_C(1) << len) + (a >> (32 - len));
		uint8_t mask = (uint8_t)(1u << (at & 7));

		if (bl->v4_added[at >> 3] & mask)
			return; /* the same cells, the same bit: done */
		bl->v4_added[at >> 3] |= mask;
	}
	if (len <= bl->v4_bits) {
		first = (uint64_t)(a >> (32 - len)) << (bl->v4_bits - len);
		count = UINT64_C(1) << (bl->v4_bits - len);
	} else {
		first = a >> (32 - bl->v4_bits);
	}
	for (uint64_t c = first; c < first + count; c++) {
		uint8_t *p = bl->v4_cell + c * bl->v4_cell_bytes;
		uint16_t v16;
		uint32_t v32;

		switch (bl->v4_cell_bytes) {
		case 1:
			*p |= (uint8_t)bit;
			break;
		case 2:
			memcpy(&v16, p, sizeof(v16));
			v16 |= (uint16_t)bit;
			memcpy(p, &v16, sizeof(v16));
			break;
		default:
			memcpy(&v32, p, sizeof(v32));
			v32 |= bit;
			memcpy(p, &v32, sizeof(v32));
		}
	}
}

static inline enum cbl_kind
length_kind(unsigned int len, unsigned int full)
{
	return len == full ? CBL_ADDRESS : CBL_PREFIX;
}

/*
 * What the index leaves of an IPv4 address's lookups, in the order of a
 * scan (shortest length first): if an entry of at most v4_bits covers
 * it (or a /0 is listed), the kind of the shortest, which no lookup can
 * precede, and no lookup; else CBL_NONE and the numbers of its cell's
 * lengths in @p lens (bit j: length v4_slot_len[j]).
 */
static inline enum cbl_kind
index_cell(const struct cbl *bl, const uint8_t *addr, uint32_t *lens)
{
	uint64_t c = cell_of(bl, v4_word(addr));
	unsigned int s = cell_state(bl, c);

	*lens = 0;
	if (bl->v4_len[0] || s == BL_CELL_COVERED)
		return CBL_PREFIX;      /* a length of at most v4_bits */
	if (s == BL_CELL_LONGER)
		*lens = cell_lens(bl, c);
	return CBL_NONE;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * XXH3-64 (seed BL_SEED) of a struct flow_key, its 52 bytes composed
 * from the key's fields in registers: xxHash's XXH3_len_17to128_64b for
 * 52 bytes, 16-byte mixes at offsets 0, 16, 20 (len - 32) and 36
 * (len - 16), as prefix_hash_v4() does for the prefix key (the struct
 * built in memory and read back stalled on store forwarding). Bytes: 'F'
 * and 7 zeros, addr_lo (8..23), addr_hi (24..39), port_lo, port_hi,
 * proto, family, then 6 zeros. The golden lists pin the value.
 */
static uint64_t
flow_hash(const struct cflow_key *key)
{
	const uint8_t *lo = key->addr_lo, *hi = key->addr_hi;
	uint64_t acc = 52 * XXH_PRIME64_1;

	acc += mix16('F', XXH_readLE64(lo), 0);
	acc += mix16(XXH_readLE64(lo + 8), XXH_readLE64(hi), 32);
	acc += mix16(XXH_readLE32(lo + 12) |
		(uint64_t)XXH_readLE32(hi) << 32, XXH_readLE64(hi + 4), 48);
	acc += mix16(XXH_readLE32(hi + 12) | (uint64_t)key->port_lo << 32 |
		(uint64_t)key->port_hi << 48, (uint64_t)key->proto |
		(uint64_t)key->family << 8, 16);
	return XXH3_avalanche(acc);
}
#else
static uint64_t
flow_hash(const struct cflow_key *key)
{
	struct flow_key k;

	memset(&k, 0, sizeof(k));
	k.tag = 'F';
	memcpy(k.addr_lo, key->addr_lo, sizeof(k.addr_lo));
	memcpy(k.addr_hi, key->addr_hi, sizeof(k.addr_hi));
	k.port_lo = key->port_lo;
	k.port_hi = key->port_hi;
	k.proto = key->proto;
	k.family = key->family;
	return XXH3_64bits_withSeed(&k, sizeof(k), BL_SEED);
}
#endif

/* ---------------------------------------------------------- parsing */

struct entry {
	enum cbl_kind kind;
	int family;
	unsigned int length;
	uint8_t addr[16];
	struct cflow_key flow;
};

int
cbl_parse_addr(const char *s, int *family, uint8_t *addr16)
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

int
cbl_parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return *end != '\0' || errno != 0 || *v > max ? -1 : 0;
}

int
cbl_parse_proto(const char *s, unsigned long *proto)
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
	return cbl_parse_uint(s, 255, proto);
}

/*
 * One entry from its whitespace-separated words; 0 or -1 and why. The
 * reason never quotes the words: a file that is not a list at all (a
 * reload of the wrong path) must not have its content echoed into
 * messages that telemetry or logs show.
 */
static int
parse_entry(char **w, int nw, struct entry *e, char *why, size_t why_len)
{
	memset(e, 0, sizeof(*e));
	if (nw == 1) {
		char *slash = strchr(w[0], '/');
		unsigned long len;

		if (slash != NULL)
			*slash = '\0';
		if (cbl_parse_addr(w[0], &e->family, e->addr) != 0) {
			error(why, why_len, "not an IPv4 or IPv6 address");
			return -1;
		}
		e->length = e->family == 4 ? 32 : 128;
		e->kind = CBL_ADDRESS;
		if (slash != NULL) {
			if (cbl_parse_uint(slash + 1, e->length, &len) != 0) {
				error(why, why_len, "prefix length: want 0..%u",
					e->length);
				return -1;
			}
			e->kind = len == e->length ? CBL_ADDRESS :
				CBL_PREFIX;
			e->length = (unsigned int)len;
		}
		return 0;
	}
	if (nw == 5) {
		unsigned long proto, sport, dport;
		uint8_t src[16], dst[16];
		int fs, fd;

		if (cbl_parse_proto(w[0], &proto) != 0) {
			error(why, why_len, "protocol: want tcp, udp, sctp, "
				"icmp, icmpv6, udplite or 0..255");
			return -1;
		}
		if (cbl_parse_addr(w[1], &fs, src) != 0 ||
				cbl_parse_addr(w[3], &fd, dst) != 0 || fs != fd) {
			error(why, why_len, "addresses: want two of the same "
				"family");
			return -1;
		}
		if (cbl_parse_uint(w[2], 65535, &sport) != 0 ||
				cbl_parse_uint(w[4], 65535, &dport) != 0) {
			error(why, why_len, "ports: want 0..65535");
			return -1;
		}
		cflow_key_init(&e->flow, (uint8_t)fs, src, dst, (uint16_t)sport,
			(uint16_t)dport, (uint8_t)proto);
		e->kind = CBL_FLOW;
		return 0;
	}
	if (nw > 5)
		error(why, why_len, "want an address, a prefix, or 'proto src "
			"sport dst dport' (more than 5 words)");
	else
		error(why, why_len, "want an address, a prefix, or 'proto src "
			"sport dst dport' (%d words)", nw);
	return -1;
}

int
cbl_split(char *line, char **w, int max)
{
	int n = 0;
	char *save = NULL;

	/* a comment: '#' (FireHOL, ipset, nft) or ';' (Spamhaus DROP,
	 * EDROP: "1.10.16.0/20 ; SBL256894"), to the end of the line */
	line[strcspn(line, "#;")] = '\0';
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
	return e->kind == CBL_FLOW ? flow_hash(&e->flow) :
		prefix_hash(e->family, e->addr, e->length);
}

/* ------------------------------------------------------------ input */


static int
refuse_size(const char *path, const struct stat *sb, const char *what,
		uint64_t max, char *err, size_t err_len)
{
	return cfu_fail(EFBIG, err, err_len,
		"%s: %" PRIu64 " bytes, larger than "
		"the %" PRIu64 " MiB limit for %s", path,
		(uint64_t)sb->st_size, max >> 20, what);
}

/* Read len bytes at off; the count read (short at end of file) or -errno. */
static ssize_t
pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done,
				off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}


void
cbl_line_reader_init(struct cbl_line_reader *r, int fd, const char *path)
{
	r->fd = fd;
	r->path = path;
	r->line = 0;
	r->bytes = 0;
	r->pos = 0;
	r->len = 0;
}

/* 1 and a line in out (no newline), 0 at end of file, or -errno. */
int
cbl_next_line(struct cbl_line_reader *r, char out[CBL_LINE_MAX + 1], char *err,
		size_t err_len)
{
	size_t n = 0;
	bool started = false;

	for (;;) {
		char c;

		if (r->pos == r->len) {
			ssize_t got = read(r->fd, r->buf, sizeof(r->buf));

			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				int e = errno;

				return cfu_fail(e, err, err_len, "%s:%" PRIu64
					": read error: %s", r->path,
					r->line + !started, strerror(e));
			}
			if (got == 0) {
				if (!started)
					return 0;
				break; /* a last line without a newline */
			}
			r->bytes += (uint64_t)got;
			if (r->bytes > CBL_TEXT_MAX)
				return cfu_fail(EFBIG, err, err_len,
					"%s: grew past the %" PRIu64 " MiB "
					"limit for text lists while being "
					"read", r->path,
					CBL_TEXT_MAX >> 20);
			r->pos = 0;
			r->len = (size_t)got;
		}
		if (!started) {
			started = true;
			r->line++;
		}
		c = r->buf[r->pos++];
		if (c == '\n')
			break;
		if (c == '\0')
			return cfu_fail(EINVAL, err, err_len, "%s:%" PRIu64
				": NUL byte (not a text list?)", r->path,
				r->line);
		if (n == CBL_LINE_MAX)
			return cfu_fail(EINVAL, err, err_len, "%s:%" PRIu64
				": line too long (more than %d bytes)",
				r->path, r->line, CBL_LINE_MAX);
		out[n++] = c;
	}
	out[n] = '\0';
	return 1;
}

/* ---------------------------------------------------------- building */

static struct cbl *
bl_alloc(uint64_t capacity, unsigned int fp_bits)
{
	struct cbl *bl = calloc(1, sizeof(*bl));

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

/*
 * The second pass: the entries added to @p bl, read again from the start
 * of @p fd. 0, or a negative errno with @p err set: -ENOSPC when the
 * filter is full, -EAGAIN when the file changed since the first pass
 * (@p lines entries, the IPv4 lengths @p v4_seen).
 */
static int
add_pass(struct cbl *bl, struct cbl_line_reader *r, int fd,
		const char *path, uint64_t lines, const uint8_t *v4_seen,
		char *err, size_t err_len)
{
	char line[CBL_LINE_MAX + 1];
	uint64_t added = 0;
	int ret;

	if (lseek(fd, 0, SEEK_SET) != 0) {
		ret = errno;
		return cfu_fail(ret, err, err_len, "%s: %s", path,
			strerror(ret));
	}
	cbl_line_reader_init(r, fd, path);
	while ((ret = cbl_next_line(r, line, err, err_len)) > 0) {
		char *w[6], why[256];
		struct entry e;
		int nw = cbl_split(line, w, 5);

		if (nw == 0)
			continue;
		if (parse_entry(w, nw, &e, why, sizeof(why)) != 0 ||
				++added > lines)
			break;
		/* an IPv4 length the first pass did not see has no bit in
		 * the index (none at all without IPv4 entries then): the
		 * file changed, refused rather than matched wrongly */
		if (e.kind != CBL_FLOW && e.family == 4 &&
				!v4_seen[e.length])
			break;
		ret = cf_add_unique_with_hash(bl->filter, entry_hash(&e), 0,
				NULL);
		if (ret == -ENOSPC)
			return cfu_fail(ENOSPC, err, err_len,
				"%s: table full at %" PRIu64 " entries",
				path, lines);
		/* A duplicate (-EEXIST) is counted once; its length is
		 * listed all the same: it may be another entry whose
		 * fingerprint the filter already holds, found only if its
		 * length is looked up. */
		if (ret == 0)
			bl->entries[e.kind]++;
		if (e.kind != CBL_FLOW) {
			if (e.family == 4)
				bl->v4_len[e.length] = 1;
			else
				bl->v6_len[e.length] = 1;
			if (e.family == 4 && e.length != 0)
				index_add(bl, e.addr, e.length);
		}
	}
	if (ret < 0)
		return ret;
	if (ret > 0 || added != lines)
		return cfu_fail(EAGAIN, err, err_len,
			"%s: changed while being read", path);
	return 0;
}

/*
 * Two passes over the open file: the first validates every line and
 * counts the entries, so that nothing is built from a list with an error
 * and the table is sized once; the second adds them. A file edited in
 * place between the passes is refused rather than half read.
 *
 * A filter sized to the count holds up to 96% of its slots, and a small
 * one can fill before that (its cuckoo walks find no room): then the
 * table is built again at twice the size, up to BL_GROW_MAX times, so a
 * valid list is never refused for its own sizing. A list that fits the
 * first size is built exactly as before (the saved files do not change).
 */
#define BL_GROW_MAX 3

static struct cbl *
read_text(int fd, const char *path, unsigned int fp_bits, char *err,
		size_t err_len)
{
	struct cbl *bl = NULL;
	char line[CBL_LINE_MAX + 1], why[256];
	struct cbl_line_reader *r = malloc(sizeof(*r));
	uint64_t lines = 0, v4 = 0, cap;
	uint8_t v4_seen[33] = { 0 };
	int ret, e, grow;

	if (r == NULL) {
		cfu_fail(ENOMEM, err, err_len, "%s: %s", path,
			strerror(ENOMEM));
		return NULL;
	}
	if (fp_bits == 0)
		fp_bits = 32;
	cbl_line_reader_init(r, fd, path);
	while ((ret = cbl_next_line(r, line, err, err_len)) > 0) {
		char *w[6];
		struct entry e;
		int nw = cbl_split(line, w, 5);

		if (nw == 0)
			continue;
		if (parse_entry(w, nw, &e, why, sizeof(why)) != 0) {
			cfu_fail(EINVAL, err, err_len, "%s:%" PRIu64 ": %s",
				path,
				r->line, why);
			goto out;
		}
		lines++;
		if (e.kind != CBL_FLOW && e.family == 4) {
			v4++;
			v4_seen[e.length] = 1;
		}
	}
	if (ret < 0)
		goto out;
	for (grow = 0, cap = lines; ; grow++, cap *= 2) {
		errno = 0;
		bl = bl_alloc(cap, fp_bits);
		/* an index for IPv4 entries only: none without them */
		if (bl == NULL ||
				(v4 != 0 && index_alloc(bl, v4, v4_seen) != 0)) {
			e = errno != 0 ? errno : ENOMEM;
			cfu_fail(e, err, err_len,
				"%s: a table for %" PRIu64 " entries: %s",
				path, lines, strerror(e));
			goto fail;
		}
		ret = add_pass(bl, r, fd, path, lines, v4_seen, err,
			err_len);
		if (ret == 0 && bl->v4_cell != NULL && index_finish(bl) != 0)
			ret = cfu_fail(ENOMEM, err, err_len,
				"%s: an index for %" PRIu64 " entries: %s",
				path, v4, strerror(ENOMEM));
		if (ret != -ENOSPC || grow == BL_GROW_MAX)
			break;
		cbl_free(bl);
		bl = NULL;
	}
	if (ret != 0) {
		errno = -ret;
		goto fail;
	}
	lengths_index(bl);
	goto out;
fail:
	e = errno;
	cbl_free(bl);
	bl = NULL;
	errno = e;
out:
	free(r);
	return bl;
}

/*
 * A list read whole, never a part of it: a file another process holds
 * open for writing (truncated, then being written, maybe with pauses) is
 * not read at all; one written, replaced (renamed over) or removed while
 * it was read is read again, up to BL_READ_TRIES times, then refused.
 * @p read gets the open file and its fstat(); @p drop frees what it
 * returned when the file changed under it.
 */
#define BL_READ_TRIES 3

typedef void *(*bl_fd_reader_fn)(int fd, const char *path,
		const struct stat *sb, void *arg, char *err, size_t err_len);

static void *
read_whole(const char *path, bl_fd_reader_fn read, void (*drop)(void *),
		void *arg, char *err, size_t err_len)
{
	for (int tries = 1; ; tries++) {
		struct stat sb;
		void *out;
		int fd, e;

		fd = cfu_file_open(path, &sb, err, err_len);
		if (fd < 0)
			return NULL;
		if (cfu_file_no_writer(fd) == -EBUSY) {
			close(fd);
			cfu_fail(EBUSY, err, err_len, "%s: being written "
				"(another process has it open for writing): "
				"not read", path);
			return NULL;
		}
		out = read(fd, path, &sb, arg, err, err_len);
		e = errno;
		/* an error too may be the writer's doing (a line cut) */
		if (cfu_file_unchanged(fd, path, &sb) == 0) {
			close(fd);
			if (out == NULL)
				errno = e;
			return out;
		}
		close(fd);
		if (out != NULL)
			drop(out);
		if (tries == BL_READ_TRIES) {
			cfu_fail(EAGAIN, err, err_len, "%s: changed while "
				"being read (%d times): not read", path,
				BL_READ_TRIES);
			return NULL;
		}
	}
}

struct text_call {
	cbl_text_reader_fn read;
	void *arg;
};

static void *
text_fn(int fd, const char *path, const struct stat *sb, void *arg,
		char *err, size_t err_len)
{
	const struct text_call *c = arg;

	if ((uint64_t)sb->st_size > CBL_TEXT_MAX) {
		refuse_size(path, sb, "text lists", CBL_TEXT_MAX, err,
			err_len);
		return NULL;
	}
	return c->read(fd, path, c->arg, err, err_len);
}

void *
cbl_text_file_read(const char *path, cbl_text_reader_fn read,
		void (*drop)(void *), void *arg, char *err, size_t err_len)
{
	struct text_call c = { read, arg };

	return read_whole(path, text_fn, drop, &c, err, err_len);
}

static void *
read_text_fn(int fd, const char *path, void *arg, char *err, size_t err_len)
{
	return read_text(fd, path, *(const unsigned int *)arg, err, err_len);
}

static void
drop_cbl(void *bl)
{
	cbl_free(bl);
}

struct cbl *
cbl_read(const char *path, unsigned int fp_bits, char *err,
		size_t err_len)
{
	return cbl_text_file_read(path, read_text_fn, drop_cbl, &fp_bits, err,
		err_len);
}

/* ---------------------------------------------------------- matching */

static bool
listed(const struct cbl *bl, uint64_t h)
{
	return cf_lookup_with_hash(bl->filter, h, NULL) == 1;
}

static enum cbl_kind
match_addr(const struct cbl *bl, int family, const uint8_t *addr)
{
	const uint8_t *lens = family == 4 ? bl->v4_len : bl->v6_len;
	unsigned int full = family == 4 ? 32 : 128;
	enum cbl_kind k;
	uint32_t cell;

	if (family == 4 && bl->v4_state != NULL) {
		k = index_cell(bl, addr, &cell);
		for (; k == CBL_NONE && cell != 0; cell &= cell - 1) {
			unsigned int l = bl->v4_slot_len[__builtin_ctz(cell)];

			if (listed(bl, prefix_hash(4, addr, l)))
				k = length_kind(l, 32);
		}
		return k;
	}
	for (unsigned int l = 0; l <= full; l++)
		if (lens[l] && listed(bl, prefix_hash(family, addr, l)))
			return length_kind(l, full);
	return CBL_NONE;
}

static enum cbl_kind
match_scalar(const struct cbl *bl, const struct cflow_packet *pkt, bool flow)
{
	enum cbl_kind k = match_addr(bl, pkt->key.family,
			pkt->key.addr_lo);

	if (k == CBL_NONE)
		k = match_addr(bl, pkt->key.family, pkt->key.addr_hi);
	if (k == CBL_NONE && flow && bl->entries[CBL_FLOW] != 0 &&
			listed(bl, flow_hash(&pkt->key)))
		k = CBL_FLOW;
	return k;
}

/*
 * Every lookup a packet needs (each present length for each address,
 * then the flow) goes into one bulk call, so that their cache misses
 * overlap. The first hit in that order decides the kind, as a scalar
 * scan would: the shortest listed prefix of the lower address, then of
 * the higher one, then the flow.
 */
/* The lookups cbl_match() makes for @p pkt: each listed length of its
 * family for each address, then (with @p flow) the flow; appended from
 * hashes[n], their kinds to kind[]. */
/*
 * With an IPv4 length index, an address is looked up at its cell's
 * lengths only, and one that an indexed entry covers needs no lookup:
 * its kind is then @p *dflt, the packet's answer unless a lookup before
 * it in that order hits, and nothing after it is looked up.
 */
static unsigned int
match_keys(const struct cbl *bl, const struct cflow_packet *pkt, bool flow,
		uint64_t *hashes, uint8_t *kind, unsigned int n,
		enum cbl_kind *dflt)
{
	const int family = pkt->key.family;
	const uint8_t *list = family == 4 ? bl->v4_list : bl->v6_list;
	const unsigned int nb = family == 4 ? bl->nb_v4 : bl->nb_v6;
	const unsigned int full = family == 4 ? 32 : 128;

	*dflt = CBL_NONE;
	for (int side = 0; side < 2; side++) {
		const uint8_t *addr = side ? pkt->key.addr_hi : pkt->key.addr_lo;
		uint32_t cell;

		if (family == 4 && bl->v4_state != NULL) {
			*dflt = index_cell(bl, addr, &cell);
			if (*dflt != CBL_NONE)
				return n;
			for (; cell != 0; cell &= cell - 1) {
				unsigned int l = bl->v4_slot_len[
					__builtin_ctz(cell)];

				kind[n] = length_kind(l, 32);
				hashes[n++] = prefix_hash(4, addr, l);
			}
			continue;
		}
		for (unsigned int j = 0; j < nb; j++) {
			kind[n] = length_kind(list[j], full);
			hashes[n++] = prefix_hash(family, addr, list[j]);
		}
	}
	if (flow && bl->entries[CBL_FLOW] != 0) {
		kind[n] = CBL_FLOW;
		hashes[n++] = flow_hash(&pkt->key);
	}
	return n;
}

/* The most lookups match_keys() makes for @p pkt (the index may leave
 * fewer). */
static inline unsigned int
match_key_count(const struct cbl *bl, const struct cflow_packet *pkt,
		bool flow)
{
	return 2u * (pkt->key.family == 4 ? bl->nb_v4 : bl->nb_v6) +
		(flow && bl->entries[CBL_FLOW] != 0);
}

/* One packet's lookups in one bulk call, so that their misses overlap;
 * the first hit in match_keys()' order decides the kind. */
static enum cbl_kind
match_one(const struct cbl *bl, const struct cflow_packet *pkt, bool flow)
{
	uint64_t hashes[CF_BULK_MAX], hits;
	uint8_t kind[CF_BULK_MAX];
	enum cbl_kind dflt;
	unsigned int n = match_keys(bl, pkt, flow, hashes, kind, 0, &dflt);

	if (n == 0 || cf_lookup_bulk(bl->filter, hashes, n, &hits, NULL) <= 0)
		return dflt;
	return (enum cbl_kind)kind[__builtin_ctzll(hits)];
}

/*
 * An ICMP error's own source (pkt->err_src): the key holds the flow the
 * error quotes, which a listed sender could choose freely, so the
 * sender is matched as an address of the packet too (never a flow).
 */
static enum cbl_kind
match_err_src(const struct cbl *bl, const struct cflow_packet *pkt)
{
	if (pkt->kind != CFLOW_KIND_ICMP_ERROR)
		return CBL_NONE;
	return match_addr(bl, pkt->key.family, pkt->err_src);
}

enum cbl_kind
cbl_match(const struct cbl *bl, const struct cflow_packet *pkt)
{
	enum cbl_kind kind = match_err_src(bl, pkt);

	if (kind != CBL_NONE)
		return kind;
	if (match_key_count(bl, pkt, true) > CF_BULK_MAX) /* many lengths */
		return match_scalar(bl, pkt, true);
	return match_one(bl, pkt, true);
}

/* Look up what a burst gathered; each packet's first hit in its own
 * order decides its kind. */
static void
burst_flush(const struct cbl *bl, const uint64_t *hashes,
		const uint8_t *kind, const uint8_t *owner, unsigned int n,
		enum cbl_kind *kinds)
{
	uint64_t hits;

	if (n == 0 || cf_lookup_bulk(bl->filter, hashes, n, &hits, NULL) <= 0)
		return;
	for (; hits != 0; hits &= hits - 1) {
		unsigned int b = (unsigned int)__builtin_ctzll(hits);

		if (kinds[owner[b]] == CBL_NONE)
			kinds[owner[b]] = (enum cbl_kind)kind[b];
	}
}

/* Cells prefetched this many ahead of their reads in burst_by_index()
 * (addresses, two a packet): enough misses in flight to cover a
 * memory read, without a row of 64 or 128 prefetches stalling on the
 * line fill buffers. bench_blocklist's ratio to rte_fib, medians of 8
 * runs under load: 16 ahead 0.87x, 32 0.70x, 48 0.72x. */
#ifndef BL_CELL_AHEAD
#define BL_CELL_AHEAD 32
#endif

/*
 * A packet's answer from the states of its lower and higher addresses'
 * cells (cell_pair[lo << 2 | hi]): the lower address's covering length
 * first; a longer length in a cell needs lookups (BL_PAIR_LOOK), before
 * any answer that follows it, which is then the kind without a hit.
 */
#define BL_PAIR_LOOK 0x80
static const uint8_t cell_pair[16] = {
	[BL_CELL_EMPTY << 2 | BL_CELL_EMPTY] = CBL_NONE,
	[BL_CELL_EMPTY << 2 | BL_CELL_COVERED] = CBL_PREFIX,
	[BL_CELL_EMPTY << 2 | BL_CELL_LONGER] = BL_PAIR_LOOK | CBL_NONE,
	[BL_CELL_COVERED << 2 | BL_CELL_EMPTY] = CBL_PREFIX,
	[BL_CELL_COVERED << 2 | BL_CELL_COVERED] = CBL_PREFIX,
	[BL_CELL_COVERED << 2 | BL_CELL_LONGER] = CBL_PREFIX,
	[BL_CELL_LONGER << 2 | BL_CELL_EMPTY] = BL_PAIR_LOOK | CBL_NONE,
	[BL_CELL_LONGER << 2 | BL_CELL_COVERED] = BL_PAIR_LOOK | CBL_PREFIX,
	[BL_CELL_LONGER << 2 | BL_CELL_LONGER] = BL_PAIR_LOOK | CBL_NONE,
};

/* No cell: in burst_cells()' cells to look up. */
#define BL_NO_CELL UINT32_MAX

/*
 * burst_by_index() for IPv4 packets, in a list without flows or a /0:
 * the addresses' cells located in one pass, then their 2-bit states
 * read in order with their prefetches BL_CELL_AHEAD addresses ahead, so
 * that the misses overlap the work instead of a row of prefetches
 * stalling. A packet whose cells leave lookups (a BL_CELL_LONGER cell
 * of its lower address, or of its higher one where the lower's is
 * empty) has its cells' ranks prefetched, then their lengths, then is
 * looked up with the others in bulk calls in match_keys()' order:
 * what match_keys() would do, without locating the cells again.
 */
static uint64_t
burst_cells(const struct cbl *bl, const struct cflow_packet *pkts,
		uint64_t mask, enum cbl_kind *kinds, uint64_t *errs)
{
	const unsigned int shift = 32 - bl->v4_bits;
	uint32_t cell[128], look[128];
	const uint8_t *lens[128];
	uint64_t hashes[CF_BULK_MAX], left = mask, e = 0;
	uint8_t kind[CF_BULK_MAX], owner[CF_BULK_MAX];
	uint8_t who[64], dflt[64];
	unsigned int n = 0, nl = 0, m = 0;

	for (uint64_t todo = mask; todo != 0; todo &= todo - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(todo);
		const struct cflow_key *key = &pkts[k].key;

		e |= (uint64_t)(pkts[k].kind == CFLOW_KIND_ICMP_ERROR) << k;
		if (key->family != 4)
			continue;
		cell[2 * n] = v4_word(key->addr_lo) >> shift;
		cell[2 * n + 1] = v4_word(key->addr_hi) >> shift;
		/* fetched as they are located, the work between them
		 * keeping the fill buffers from stalling */
		__builtin_prefetch(cell_word(bl, cell[2 * n]));
		__builtin_prefetch(cell_word(bl, cell[2 * n + 1]));
		who[n++] = (uint8_t)k;
		left &= ~(UINT64_C(1) << k);
	}
	*errs = e;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int lo, hi;
		uint8_t d;

		lo = cell_state(bl, cell[2 * i]);
		hi = cell_state(bl, cell[2 * i + 1]);
		d = cell_pair[lo << 2 | hi];
		kinds[who[i]] = d & BL_PAIR_LOOK ? CBL_NONE :
			(enum cbl_kind)d;
		if (!(d & BL_PAIR_LOOK))
			continue;
		look[2 * nl] = lo == BL_CELL_LONGER ? cell[2 * i] : BL_NO_CELL;
		look[2 * nl + 1] = hi == BL_CELL_LONGER ? cell[2 * i + 1] :
			BL_NO_CELL;
		for (unsigned int side = 0; side < 2; side++)
			if (look[2 * nl + side] != BL_NO_CELL)
				__builtin_prefetch(&bl->v4_rank[
					look[2 * nl + side] >> BL_RANK_SHIFT]);
		dflt[nl] = d & ~BL_PAIR_LOOK;
		who[nl++] = who[i];
	}
	/* their lengths located (ranks and states fetched) and fetched */
	for (unsigned int j = 0; j < 2 * nl; j++) {
		lens[j] = look[j] == BL_NO_CELL ? NULL :
			cell_lens_at(bl, look[j]);
		if (lens[j] != NULL)
			__builtin_prefetch(lens[j]);
	}
	/* the lookups, each packet's first hit its kind, else dflt */
	for (unsigned int j = 0; j < nl; j++) {
		const struct cflow_key *key = &pkts[who[j]].key;

		for (unsigned int side = 0; side < 2; side++) {
			const uint8_t *addr = side ? key->addr_hi :
				key->addr_lo;
			uint32_t v;

			if (lens[2 * j + side] == NULL)
				continue;
			v = lens_read(bl, lens[2 * j + side]);
			if (m + (unsigned int)__builtin_popcount(v) >
					CF_BULK_MAX) {
				burst_flush(bl, hashes, kind, owner, m, kinds);
				m = 0;
			}
			for (; v != 0; v &= v - 1) {
				unsigned int l = bl->v4_slot_len[
					__builtin_ctz(v)];

				owner[m] = who[j];
				kind[m] = length_kind(l, 32);
				hashes[m++] = prefix_hash(4, addr, l);
			}
		}
	}
	burst_flush(bl, hashes, kind, owner, m, kinds);
	for (unsigned int j = 0; j < nl; j++)
		if (kinds[who[j]] == CBL_NONE)
			kinds[who[j]] = (enum cbl_kind)dflt[j];
	return left;
}

/*
 * burst_by_index() for a list of flows only: each packet's flow hashed
 * and the burst looked up in one bulk call (at most 64 packets, at most
 * CF_BULK_MAX), without match_keys()' bookkeeping. Answers them all.
 */
static uint64_t
burst_flows(const struct cbl *bl, const struct cflow_packet *pkts,
		uint64_t mask, enum cbl_kind *kinds)
{
	uint64_t hashes[CF_BULK_MAX], hits = 0;
	uint8_t who[CF_BULK_MAX];
	unsigned int n = 0;

	_Static_assert(CF_BULK_MAX >= 64, "a burst in one bulk call");
	if (bl->entries[CBL_FLOW] == 0)
		return 0;
	for (uint64_t todo = mask; todo != 0; todo &= todo - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(todo);

		who[n] = (uint8_t)k;
		hashes[n++] = flow_hash(&pkts[k].key);
	}
	if (n == 0 || cf_lookup_bulk(bl->filter, hashes, n, &hits, NULL) <= 0)
		return 0;
	for (; hits != 0; hits &= hits - 1)
		kinds[who[__builtin_ctzll(hits)]] = CBL_FLOW;
	return 0;
}

/*
 * The packets of @p mask that the index answers alone, answered: IPv4
 * packets whose lower address's cell has a length that covers it
 * (CBL_PREFIX: lengths of at most v4_bits < 32), or has no length at
 * all and whose higher address's cell has a covering length or none, in
 * a list without flows (a flow lookup would come after). What
 * match_keys() would leave without lookups, without its per-lookup
 * bookkeeping. Returns the packets left for lookups.
 */
static uint64_t
burst_by_index(const struct cbl *bl, const struct cflow_packet *pkts,
		uint64_t mask, enum cbl_kind *kinds, uint64_t *errs)
{
	if (bl->v4_state != NULL && !bl->v4_len[0] &&
			bl->entries[CBL_FLOW] == 0)
		return burst_cells(bl, pkts, mask, kinds, errs);
	*errs = 0;
	for (uint64_t t = mask; t != 0; t &= t - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(t);

		*errs |= (uint64_t)(pkts[k].kind == CFLOW_KIND_ICMP_ERROR) <<
			k;
	}
	if (bl->nb_v4 == 0 && bl->nb_v6 == 0)
		return burst_flows(bl, pkts, mask, kinds);
	if (bl->v4_state == NULL)
		return mask;
	/* a /0 or flows: looked up by match_keys(), the cells fetched
	 * together, their misses overlapping, before the first is read */
	for (uint64_t todo = mask; todo != 0; todo &= todo - 1) {
		const struct cflow_key *key = &pkts[__builtin_ctzll(todo)].key;

		if (key->family != 4)
			continue;
		__builtin_prefetch(cell_word(bl, cell_of(bl,
			v4_word(key->addr_lo))));
		__builtin_prefetch(cell_word(bl, cell_of(bl,
			v4_word(key->addr_hi))));
	}
	return mask;
}

void
cbl_match_burst(const struct cbl *bl, const struct cflow_packet *pkts,
		unsigned int n, uint64_t mask, enum cbl_kind *kinds)
{
	uint64_t hashes[CF_BULK_MAX], todo, looked, errs = 0;
	uint8_t kind[CF_BULK_MAX], owner[CF_BULK_MAX];
	enum cbl_kind dflt[64];
	unsigned int m = 0;

	if (n > 64)
		n = 64;
	for (unsigned int k = 0; k < n; k++)
		kinds[k] = CBL_NONE;
	if (n < 64)
		mask &= (UINT64_C(1) << n) - 1;
	/* what the index answers alone, its cells prefetched ahead; the
	 * ICMP errors */
	looked = todo = burst_by_index(bl, pkts, mask, kinds, &errs);
	/* a packet's lookups hit before its index answer, if any */
	for (; todo != 0; todo &= todo - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(todo);
		unsigned int need = match_key_count(bl, &pkts[k], true);

		dflt[k] = CBL_NONE;
		if (need > CF_BULK_MAX) {
			kinds[k] = match_scalar(bl, &pkts[k], true);
			continue;
		}
		if (m + need > CF_BULK_MAX) {
			burst_flush(bl, hashes, kind, owner, m, kinds);
			m = 0;
		}
		for (unsigned int j = m; j < m + need; j++)
			owner[j] = (uint8_t)k;
		m = match_keys(bl, &pkts[k], true, hashes, kind, m, &dflt[k]);
	}
	burst_flush(bl, hashes, kind, owner, m, kinds);
	/* then the index's answer */
	for (; looked != 0; looked &= looked - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(looked);

		if (kinds[k] == CBL_NONE)
			kinds[k] = dflt[k];
	}
	/* an ICMP error's own sender first, as cbl_match() has it (its
	 * kind, where both match) */
	for (; errs != 0; errs &= errs - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(errs);
		enum cbl_kind e = match_err_src(bl, &pkts[k]);

		if (e != CBL_NONE)
			kinds[k] = e;
	}
}

/*
 * cbl_match() without the flow: the address and prefix lookups of
 * both addresses in one bulk call, the first hit in the same order
 * deciding the kind. Ports are unknown here, so flow entries are never
 * looked up (see blocklist.h for what the caller does about them).
 */
enum cbl_kind
cbl_match_addrs(const struct cbl *bl,
		const struct cflow_packet *pkt)
{
	const int family = pkt->key.family;

	enum cbl_kind kind;

	if (!pkt->has_addrs || (family != 4 && family != 6))
		return CBL_NONE;
	kind = match_err_src(bl, pkt);
	if (kind != CBL_NONE)
		return kind;
	if (match_key_count(bl, pkt, false) > CF_BULK_MAX) /* many lengths */
		return match_scalar(bl, pkt, false);
	return match_one(bl, pkt, false);
}

int
cbl_match_text(const struct cbl *bl, const char *entry,
		enum cbl_kind *kind, char *err, size_t err_len)
{
	char buf[CBL_LINE_MAX + 1], why[256], *w[6];
	struct cflow_packet pkt;
	struct entry e;
	int nw;

	/* Never a shortened query: it could ask about another entry. */
	if (strlen(entry) > CBL_LINE_MAX)
		return cfu_fail(EINVAL, err, err_len,
			"an entry longer than %d bytes", CBL_LINE_MAX);
	memcpy(buf, entry, strlen(entry) + 1);
	nw = cbl_split(buf, w, 5);
	if (parse_entry(w, nw, &e, why, sizeof(why)) != 0)
		return cfu_fail(EINVAL, err, err_len, "%s", why);
	if (e.kind == CBL_FLOW) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.key = e.flow;
		*kind = cbl_match(bl, &pkt);
	} else if (e.kind == CBL_PREFIX) {
		/* A prefix query asks whether that exact prefix is listed. */
		*kind = listed(bl, prefix_hash(e.family, e.addr, e.length)) ?
			CBL_PREFIX : CBL_NONE;
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

struct bl_fill {
	const uint8_t *buf;
	size_t len;
};

static int
bl_fill(int fd, void *ctx)
{
	const struct bl_fill *f = ctx;

	return cfu_write_all(fd, f->buf, f->len);
}

/* Serialized whole, then written durably (cfu_write_durable): a reader,
 * a live reload, sees the old file or the new one. */
int
cbl_save(const struct cbl *bl, const char *path, char *err,
		size_t err_len)
{
	size_t size = cf_save_size(bl->filter), total = sizeof(struct bl_header)
		+ size;
	struct bl_header h;
	struct bl_fill fill;
	uint8_t *buf;
	int64_t n;
	int ret, e;

	buf = malloc(total);
	if (buf == NULL)
		return cfu_fail(ENOMEM, err, err_len, "%s: %s", path,
			strerror(ENOMEM));
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, BL_MAGIC, sizeof(h.magic));
	h.version = BL_VERSION;
	h.fp_bits = bl->fp_bits;
	memcpy(h.entries, bl->entries, sizeof(h.entries));
	memcpy(h.v4_len, bl->v4_len, sizeof(h.v4_len));
	memcpy(h.v6_len, bl->v6_len, sizeof(h.v6_len));
	h.checksum = header_sum(&h);
	memcpy(buf, &h, sizeof(h));
	n = cf_save_mem(bl->filter, buf + sizeof(h), size);
	if (n < 0 || (size_t)n != size) {
		e = n < 0 ? (int)-n : EIO;
		ret = cfu_fail(e, err, err_len,
			"%s: serializing the filter: %s", path, strerror(e));
		goto out;
	}
	fill.buf = buf;
	fill.len = total;
	ret = cfu_write_durable(path, bl_fill, &fill, err, err_len);
out:
	free(buf);
	return ret;
}

/* lib/cuckoo's file format (docs/design.md): where its checksum is. */
#define CF_FILE_HEADER_SIZE 96
#define CF_FILE_CHECKSUM_AT 88

/* Why cf_load_mem() refused @p buf, said to a user. */
static const char *
filter_reason(int e, const uint8_t *buf, size_t len)
{
	uint8_t hdr[CF_FILE_HEADER_SIZE];
	uint64_t want, got;
	XXH64_state_t *st;

	switch (e) {
	case ENODATA:
		return "truncated: the file is damaged";
	case ENOTSUP:
		return "written on a machine of the other byte order";
	case EPROTONOSUPPORT:
		return "unsupported filter format version";
	case EBADMSG:
		break;
	default:
		return strerror(e);
	}
	if (len < CF_FILE_HEADER_SIZE)
		return "truncated: the file is damaged";
	st = XXH64_createState();
	if (st == NULL)
		return "damaged (checksum mismatch or invalid data)";
	/* The header with its checksum field zeroed, in one update: three
	 * (88 bytes, 8 zeros, the rest) made gcc 12 at -march=x86-64-v2
	 * warn of an out-of-bounds pointer in the inlined XXH64_update. */
	memcpy(hdr, buf, sizeof(hdr));
	memset(hdr + CF_FILE_CHECKSUM_AT, 0, sizeof(uint64_t));
	XXH64_reset(st, 0);
	XXH64_update(st, hdr, sizeof(hdr));
	XXH64_update(st, buf + CF_FILE_HEADER_SIZE, len - CF_FILE_HEADER_SIZE);
	got = XXH64_digest(st);
	XXH64_freeState(st);
	memcpy(&want, buf + CF_FILE_CHECKSUM_AT, sizeof(want));
	return got != want ? "checksum mismatch: the file is damaged" :
		"invalid filter data (checksum correct): not a file this "
		"version wrote";
}

/* A compiled list from the open file, of sb->st_size bytes. */
static struct cbl *
load_compiled(int fd, const char *path, const struct stat *sb, char *err,
		size_t err_len)
{
	size_t body = (size_t)sb->st_size - sizeof(struct bl_header);
	struct cbl *bl;
	struct bl_header h;
	uint8_t *buf;
	ssize_t n;
	int e;

	if ((uint64_t)sb->st_size > CBL_COMPILED_MAX) {
		refuse_size(path, sb, "compiled lists", CBL_COMPILED_MAX,
			err, err_len);
		return NULL;
	}
	if ((size_t)sb->st_size < sizeof(h)) {
		cfu_fail(ENODATA, err, err_len,
			"%s: truncated compiled blocklist "
			"(%zu bytes, the header alone is %zu): the file is "
			"damaged", path, (size_t)sb->st_size, sizeof(h));
		return NULL;
	}
	n = pread_full(fd, &h, sizeof(h), 0);
	if (n < 0) {
		cfu_fail((int)-n, err, err_len, "%s: read error: %s", path,
			strerror((int)-n));
		return NULL;
	}
	if ((size_t)n != sizeof(h)) {
		cfu_fail(EAGAIN, err, err_len, "%s: changed while being read",
			path);
		return NULL;
	}
	/* A later version may change the header (and so its checksum) but
	 * keeps the magic and the version where they are: refused by name,
	 * whatever its checksum. Version 0 is no version: damage. */
	if (h.version > BL_VERSION || (h.version != BL_VERSION &&
			h.checksum == header_sum(&h))) {
		cfu_fail(EPROTONOSUPPORT, err, err_len,
			"%s: compiled blocklist "
			"format version %" PRIu32 ", this build reads %d", path,
			h.version, BL_VERSION);
		return NULL;
	}
	if (h.checksum != header_sum(&h)) {
		cfu_fail(EBADMSG, err, err_len,
			"%s: header checksum mismatch: the "
			"file is damaged", path);
		return NULL;
	}
	/* The size is bounded, and the header checked: now read the rest. */
	buf = malloc(body != 0 ? body : 1);
	bl = calloc(1, sizeof(*bl));
	if (buf == NULL || bl == NULL) {
		cfu_fail(ENOMEM, err, err_len, "%s: %s", path,
			strerror(ENOMEM));
		goto fail;
	}
	n = pread_full(fd, buf, body, (off_t)sizeof(h));
	if (n < 0) {
		cfu_fail((int)-n, err, err_len, "%s: read error: %s", path,
			strerror((int)-n));
		goto fail;
	}
	if ((size_t)n != body) {
		cfu_fail(EAGAIN, err, err_len, "%s: changed while being read",
			path);
		goto fail;
	}
	bl->filter = cf_load_mem(buf, body, NULL, 0);
	if (bl->filter == NULL) {
		e = errno;
		cfu_fail(e, err, err_len, "%s: filter %s", path,
			filter_reason(e, buf, body));
		goto fail;
	}
	bl->fp_bits = h.fp_bits;
	memcpy(bl->entries, h.entries, sizeof(h.entries));
	for (unsigned int l = 0; l <= 32; l++)
		bl->v4_len[l] = h.v4_len[l] != 0;
	for (unsigned int l = 0; l <= 128; l++)
		bl->v6_len[l] = h.v6_len[l] != 0;
	lengths_index(bl);
	free(buf);
	return bl;
fail:
	e = errno;
	free(bl);
	free(buf);
	errno = e;
	return NULL;
}

static void *
load_fn(int fd, const char *path, const struct stat *sb, void *arg,
		char *err, size_t err_len)
{
	const uint64_t max = CBL_COMPILED_MAX > CBL_TEXT_MAX ?
		CBL_COMPILED_MAX : CBL_TEXT_MAX;
	char magic[sizeof(BL_MAGIC) - 1];
	ssize_t n;

	(void)arg;
	if ((uint64_t)sb->st_size > max) {
		refuse_size(path, sb, "blocklists", max, err, err_len);
		return NULL;
	}
	n = pread_full(fd, magic, sizeof(magic), 0);
	if (n < 0) {
		cfu_fail((int)-n, err, err_len, "%s: read error: %s", path,
			strerror((int)-n));
		return NULL;
	}
	if ((size_t)n == sizeof(magic) &&
			memcmp(magic, BL_MAGIC, sizeof(magic)) == 0)
		return load_compiled(fd, path, sb, err, err_len);
	if ((uint64_t)sb->st_size > CBL_TEXT_MAX) {
		refuse_size(path, sb, "text lists", CBL_TEXT_MAX, err,
			err_len);
		return NULL;
	}
	return read_text(fd, path, 0, err, err_len);
}

struct cbl *
cbl_load(const char *path, char *err, size_t err_len)
{
	return read_whole(path, load_fn, drop_cbl, NULL, err, err_len);
}

void
cbl_info(const struct cbl *bl, struct cbl_info *info)
{
	struct cf_stats st;
	unsigned int lookups;

	memset(info, 0, sizeof(*info));
	memcpy(info->entries, bl->entries, sizeof(info->entries));
	for (int k = 1; k < CBL_KINDS; k++)
		info->total += bl->entries[k];
	for (unsigned int l = 0; l <= 32; l++)
		info->v4_lengths += bl->v4_len[l];
	for (unsigned int l = 0; l <= 128; l++)
		info->v6_lengths += bl->v6_len[l];
	cf_stats(bl->filter, &st);
	info->fp_bits = bl->fp_bits;
	info->bits_per_entry = st.items ? st.table_bytes * 8.0 / st.items : 0;
	/*
	 * A packet of the family with more listed lengths, the worse one:
	 * its 2 addresses at each of those lengths, plus the flow lookup if
	 * the list has flows. The union bound of their false positives.
	 */
	lookups = 2 * (info->v4_lengths > info->v6_lengths ?
		info->v4_lengths : info->v6_lengths) +
		(bl->entries[CBL_FLOW] != 0);
	info->expected_false_match = st.expected_fpr * lookups;
}

uint64_t
cbl_bytes(const struct cbl *bl)
{
	struct cf_stats st;

	cf_stats(bl->filter, &st);
	return st.bytes + sizeof(*bl) + (bl->v4_state == NULL ? 0 :
		(UINT64_C(1) << bl->v4_bits) / 4 + ((UINT64_C(1) <<
		bl->v4_bits) >> BL_RANK_SHIFT) * sizeof(uint32_t) +
		bl->v4_nb_longer * bl->v4_cell_bytes);
}

void
cbl_free(struct cbl *bl)
{
	if (bl == NULL)
		return;
	cf_free(bl->filter);
	free(bl->v4_cell);
	free(bl->v4_added);
	free(bl->v4_state);
	free(bl->v4_rank);
	free(bl->v4_lens);
	free(bl);
}
