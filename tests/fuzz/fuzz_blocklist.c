/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: cbl_match_burst() against cbl_match() and a model,
 * on random text lists. The input is read as a stream of bytes (0 once
 * exhausted):
 *
 * - four base IPv4 addresses and four base IPv6 ones, each entry's and
 *   packet's addresses a base with one byte changed or not, so that
 *   entries and packets meet;
 * - up to 63 entries: addresses, prefixes of any length (often at the
 *   index's boundaries: 0, 1, 7..10, 15..17, 23..25, 31, 32), flows,
 *   of both families, duplicates as they come; written as a text list
 *   and read with cbl_read() (the IPv4 length index: 1-, 2- or 4-byte
 *   cells for up to 8, 16 or 32 lengths, flows-only lists, a /0);
 * - with a byte of the input (3 times in 8), 70 to 4200 more IPv4
 *   entries of one length (32, 24, 20, 17 or 12) in the bases' /16s: a
 *   longer list takes a larger index (2^11 to 2^17 cells: lengths up to
 *   11, 13, 15 or 17 then answered by a cell's state alone), which 63
 *   entries never reach;
 * - a burst of up to 64 packets (keys by cflow_key_init(), ICMP errors
 *   with their own sender, VLANs) and a 64-bit mask of parsed ones.
 *
 * Any broken invariant aborts: a packet of the mask gets from the burst
 * what cbl_match() gives it alone, any other CBL_NONE; and that is the
 * model's answer: an ICMP error's sender's shortest listed covering
 * length, else the lower address's, else the higher's (CBL_ADDRESS at
 * full length, else CBL_PREFIX), else CBL_FLOW for a listed flow (the
 * filter's 32-bit fingerprints make a false match too rare to meet).
 * cbl_match_addrs() is the same without the flow. With a bit of the
 * input, the same again on the list saved and loaded (cbl_save(),
 * cbl_load(): no index, the filter alone).
 */

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocklist.h"
#include "cflow.h"
#include "cfutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ENTRIES 63
#define MAX_FILL 4200

/* More entries, by a byte's low 4 bits: none 10 times in 16. */
static const uint16_t fill_counts[16] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 70, 70, 300, 300, 1100, MAX_FILL,
};
static const uint8_t fill_lengths[8] = { 32, 32, 32, 24, 20, 17, 12, 32 };

struct in_stream {
	const uint8_t *p;
	size_t left;
};

static uint8_t
get8(struct in_stream *s)
{
	if (s->left == 0)
		return 0;
	s->left--;
	return *s->p++;
}

struct ref_entry {
	enum cbl_kind kind;
	int family;
	unsigned int length;
	uint8_t addr[16];       /* IPv4 mapped */
	struct cflow_key flow;
};

static const uint8_t edge_lengths[] = {
	0, 1, 7, 8, 9, 10, 11, 15, 16, 17, 23, 24, 25, 31, 32,
};

/* An address of @p family: a base, perhaps with one byte changed. */
static void
make_addr(struct in_stream *s, int family, uint8_t bases[2][4][16],
		uint8_t *out)
{
	uint8_t pick = get8(s), pos, val;

	memcpy(out, bases[family == 6][pick & 3], 16);
	if (pick & 4) {
		pos = get8(s);
		val = get8(s);
		if (family == 4)
			out[12 + (pos & 3)] ^= val;
		else
			out[pos & 15] ^= val;
	}
}

static bool
covers(const struct ref_entry *e, int family, const uint8_t *a)
{
	unsigned int full = e->length, off = family == 4 ? 12 : 0;

	if (e->kind == CBL_FLOW || e->family != family)
		return false;
	for (unsigned int b = 0; b < full; b++) {
		unsigned int i = off + b / 8, m = 0x80u >> (b % 8);

		if ((e->addr[i] & m) != (a[i] & m))
			return false;
	}
	return true;
}

/* The shortest listed length covering @p a, or -1. */
static int
ref_addr(const struct ref_entry *es, unsigned int n, int family,
		const uint8_t *a)
{
	int best = -1;

	for (unsigned int i = 0; i < n; i++)
		if (covers(&es[i], family, a) &&
				(best < 0 || es[i].length < (unsigned int)best))
			best = (int)es[i].length;
	return best;
}

static enum cbl_kind
ref_kind_of(int len, int family)
{
	if (len < 0)
		return CBL_NONE;
	return len == (family == 4 ? 32 : 128) ? CBL_ADDRESS : CBL_PREFIX;
}

static enum cbl_kind
ref_match(const struct ref_entry *es, unsigned int n,
		const struct cflow_packet *p, bool flow)
{
	const struct cflow_key *k = &p->key;
	enum cbl_kind kind = CBL_NONE;

	if (p->kind == CFLOW_KIND_ICMP_ERROR)
		kind = ref_kind_of(ref_addr(es, n, k->family, p->err_src),
			k->family);
	if (kind == CBL_NONE)
		kind = ref_kind_of(ref_addr(es, n, k->family, k->addr_lo),
			k->family);
	if (kind == CBL_NONE)
		kind = ref_kind_of(ref_addr(es, n, k->family, k->addr_hi),
			k->family);
	for (unsigned int i = 0; flow && kind == CBL_NONE && i < n; i++) {
		const struct cflow_key *f = &es[i].flow;

		if (es[i].kind == CBL_FLOW && f->family == k->family &&
				f->proto == k->proto &&
				f->port_lo == k->port_lo &&
				f->port_hi == k->port_hi &&
				memcmp(f->addr_lo, k->addr_lo, 16) == 0 &&
				memcmp(f->addr_hi, k->addr_hi, 16) == 0)
			kind = CBL_FLOW;
	}
	return kind;
}

static void
addr_text(int family, const uint8_t *a, char *out, size_t len)
{
	if (inet_ntop(family == 4 ? AF_INET : AF_INET6,
			family == 4 ? a + 12 : a, out, (socklen_t)len) == NULL)
		abort();
}

/* The burst against cbl_match() one by one, and both against the model;
 * cbl_match_addrs() against the model without flows. */
static void
check_burst(const struct cbl *bl, const struct cflow_packet *pkts,
		unsigned int np, uint64_t mask, const struct ref_entry *es,
		unsigned int ne)
{
	enum cbl_kind kinds[64];

	cbl_match_burst(bl, pkts, np, mask, kinds);
	for (unsigned int k = 0; k < np; k++) {
		enum cbl_kind one = cbl_match(bl, &pkts[k]);
		enum cbl_kind ref = ref_match(es, ne, &pkts[k], true);

		if (((mask >> k) & 1) ? kinds[k] != one :
				kinds[k] != CBL_NONE) {
			fprintf(stderr, "packet %u: burst %d, alone %d\n", k,
				kinds[k], one);
			abort();
		}
		if (one != ref) {
			fprintf(stderr, "packet %u: cbl_match %d, model %d\n",
				k, one, ref);
			abort();
		}
		if (cbl_match_addrs(bl, &pkts[k]) !=
				ref_match(es, ne, &pkts[k], false))
			abort();
	}
}

static const uint8_t protos[4] = { 6, 17, 1, 58 };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ref_entry es[MAX_ENTRIES + MAX_FILL];
	static struct cflow_packet pkts[64];
	struct in_stream s = { data, size };
	uint8_t bases[2][4][16];
	char path[] = "/tmp/fuzz_blocklist_XXXXXX", err[256];
	char a1[INET6_ADDRSTRLEN], a2[INET6_ADDRSTRLEN];
	unsigned int ne, np, nf;
	uint64_t mask = 0;
	uint8_t save, fill;
	struct cbl *bl;
	FILE *f;
	int fd;

	memset(bases, 0, sizeof(bases));
	for (unsigned int i = 0; i < 4; i++) {
		bases[0][i][10] = bases[0][i][11] = 0xff;
		for (unsigned int b = 12; b < 16; b++)
			bases[0][i][b] = get8(&s);
		bases[1][i][0] = 0x20;
		bases[1][i][1] = 0x01;
		for (unsigned int b = 2; b < 16; b += 3)
			bases[1][i][b] = get8(&s);
	}
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	f = fdopen(fd, "w");
	if (f == NULL)
		abort();
	ne = get8(&s) % (MAX_ENTRIES + 1);
	for (unsigned int i = 0; i < ne; i++) {
		struct ref_entry *e = &es[i];
		uint8_t t = get8(&s), full;

		memset(e, 0, sizeof(*e));
		e->family = t & 1 ? 6 : 4;
		full = e->family == 4 ? 32 : 128;
		make_addr(&s, e->family, bases, e->addr);
		switch ((t >> 1) & 3) {
		case 0:
			e->length = full;
			break;
		case 1:
			e->length = get8(&s) % (full + 1u);
			break;
		case 2:
			e->length = edge_lengths[get8(&s) %
				sizeof(edge_lengths)];
			if (e->family == 6)
				e->length += 96 * ((t >> 3) & 1);
			break;
		default: {
			uint8_t other[16];
			uint16_t sp = get8(&s) & 7, dp = get8(&s) & 7;
			uint8_t proto = protos[(t >> 3) & 3];

			make_addr(&s, e->family, bases, other);
			e->kind = CBL_FLOW;
			cflow_key_init(&e->flow, (uint8_t)e->family, e->addr,
				other, sp, dp, proto);
			addr_text(e->family, e->addr, a1, sizeof(a1));
			addr_text(e->family, other, a2, sizeof(a2));
			fprintf(f, "%u %s %u %s %u\n", proto, a1, sp, a2, dp);
			continue;
		}
		}
		e->kind = e->length == full ? CBL_ADDRESS : CBL_PREFIX;
		addr_text(e->family, e->addr, a1, sizeof(a1));
		fprintf(f, "%s/%u\n", a1, e->length);
	}
	fill = get8(&s);
	nf = fill_counts[fill & 15];
	for (unsigned int i = 0; i < nf; i++, ne++) {
		struct ref_entry *e = &es[ne];
		uint64_t x = cfu_mix64(((uint64_t)fill << 32) + i);

		memset(e, 0, sizeof(*e));
		e->family = 4;
		memcpy(e->addr, bases[0][i & 3], 16);
		e->addr[14] ^= (uint8_t)(x >> 8);
		e->addr[15] ^= (uint8_t)x;
		e->length = fill_lengths[fill >> 5];
		e->kind = e->length == 32 ? CBL_ADDRESS : CBL_PREFIX;
		addr_text(4, e->addr, a1, sizeof(a1));
		fprintf(f, "%s/%u\n", a1, e->length);
	}
	if (fclose(f) != 0)
		abort();
	bl = cbl_read(path, 0, err, sizeof(err));
	if (bl == NULL) {
		/* a valid list is never refused, "table full" included: the
		 * reader builds a filter too full for its cuckoo walks again
		 * at twice the size (test_small_lists_fit) */
		/* the list is left for a look */
		fprintf(stderr, "cbl_read: %s\n", err);
		abort();
	}
	unlink(path);
	np = get8(&s) % 65;
	for (unsigned int b = 0; b < 8; b++)
		mask |= (uint64_t)get8(&s) << (8 * b);
	save = get8(&s);
	if (save & 1)
		mask = ~UINT64_C(0);
	save &= 2;
	for (unsigned int k = 0; k < np; k++) {
		struct cflow_packet *p = &pkts[k];
		uint8_t t = get8(&s), src[16], dst[16];
		int family = t & 1 ? 6 : 4;

		memset(p, 0, sizeof(*p));
		make_addr(&s, family, bases, src);
		make_addr(&s, family, bases, dst);
		cflow_key_init(&p->key, (uint8_t)family, src, dst,
			get8(&s) & 7, get8(&s) & 7, protos[(t >> 1) & 3]);
		p->key.vlan = (t >> 3) & 1;
		p->has_addrs = true;
		if (t & 0x10) {
			p->kind = CFLOW_KIND_ICMP_ERROR;
			make_addr(&s, family, bases, p->err_src);
		}
	}
	check_burst(bl, pkts, np, mask, es, ne);
	if (save) {
		/* the same list compiled: no index, the filter alone */
		char cpath[] = "/tmp/fuzz_blocklist_XXXXXX";
		int cfd = mkstemp(cpath);
		struct cbl *cl;

		if (cfd < 0 || close(cfd) != 0)
			abort();
		if (cbl_save(bl, cpath, err, sizeof(err)) != 0)
			abort();
		cl = cbl_load(cpath, err, sizeof(err));
		unlink(cpath);
		if (cl == NULL)
			abort();
		check_burst(cl, pkts, np, mask, es, ne);
		cbl_free(cl);
	}
	cbl_free(bl);
	return 0;
}
