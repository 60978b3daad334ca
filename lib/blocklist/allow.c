/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Allow lists: exact rules (protocol, destination prefix, port or any)
 * in an open-addressing table keyed by the masked destination, so that
 * a packet is looked up once per prefix length present (twice: its port
 * and "any"). See blocklist.h.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "blocklist.h"
#include "cbl_private.h"
#include "cfutil.h"

#define ANY_PORT UINT32_C(0x10000)
/* icmp, icmpv6: echo requests only (an ICMP query keys its requester's
 * side with its identifier, which no rule names) */
#define ECHO_PORT UINT32_C(0x10001)
#define ALLOW_SEED UINT64_C(0xa110f1e5)

/* What a rule is compared on: fixed size, zero padded. */
struct rule {
	uint8_t addr[16];       /* masked to length */
	uint32_t port;          /* 0..65535 or ANY_PORT */
	uint8_t family;
	uint8_t length;
	uint8_t proto;
	uint8_t pad;
};

struct cbl_allow {
	struct rule *rules;
	uint32_t nb_rules;
	uint32_t mask;          /* table size - 1 */
	uint32_t *table;        /* rule index + 1; 0 is empty */
	uint8_t lens[2][129];   /* lengths present, by family 4 and 6 */
	unsigned int nb_lens[2];
};

static uint64_t
rule_hash(const struct rule *r)
{
	return XXH3_64bits_withSeed(r, sizeof(*r), ALLOW_SEED);
}

static void
mask_addr(uint8_t out[16], const uint8_t addr[16], int family,
		unsigned int length)
{
	unsigned int bits = family == 4 ? 96 + length : length;

	memset(out, 0, 16);
	for (unsigned int b = 0; b < 16 && b * 8 < bits; b++) {
		unsigned int keep = bits - b * 8 >= 8 ? 8 : bits - b * 8;

		out[b] = addr[b] & (uint8_t)(0xff00 >> keep);
	}
}

static bool
has_ports(unsigned long proto)
{
	return proto == 6 || proto == 17 || proto == 132 || proto == 136;
}

static bool
is_icmp(unsigned long proto)
{
	return proto == 1 || proto == 58;
}

/* One rule from its words; 0 or -1 with why (never quoting them). */
static int
parse_rule(char **w, int nw, struct rule *r, char *why, size_t why_len)
{
	unsigned long proto, len, port;
	uint8_t addr[16];
	char *slash;
	int family;

	memset(r, 0, sizeof(*r));
	if (nw != 3) {
		snprintf(why, why_len, "want 'PROTO ADDR[/LEN] PORT' (%s%d "
			"words)", nw > 3 ? "more than " : "", nw > 3 ? 3 : nw);
		return -1;
	}
	if (cbl_parse_proto(w[0], &proto) != 0) {
		snprintf(why, why_len, "protocol: want tcp, udp, sctp, "
			"udplite, icmp, icmpv6 or 0..255");
		return -1;
	}
	slash = strchr(w[1], '/');
	if (slash != NULL)
		*slash = '\0';
	if (cbl_parse_addr(w[1], &family, addr) != 0) {
		snprintf(why, why_len, "not an IPv4 or IPv6 address");
		return -1;
	}
	len = family == 4 ? 32 : 128;
	if (slash != NULL && cbl_parse_uint(slash + 1, len, &len) != 0) {
		snprintf(why, why_len, "prefix length: want 0..%u",
			family == 4 ? 32 : 128);
		return -1;
	}
	if (strcmp(w[2], "any") == 0) {
		r->port = ANY_PORT;
	} else if (is_icmp(proto) && strcmp(w[2], "echo") == 0) {
		r->port = ECHO_PORT;
	} else if (!has_ports(proto)) {
		snprintf(why, why_len, "port: protocol %lu has no ports: "
			"want 'any'%s", proto, is_icmp(proto) ?
			" or 'echo'" : "");
		return -1;
	} else if (cbl_parse_uint(w[2], 65535, &port) != 0) {
		snprintf(why, why_len, "port: want 0..65535 or 'any'");
		return -1;
	} else {
		r->port = (uint32_t)port;
	}
	r->family = (uint8_t)family;
	r->length = (uint8_t)len;
	r->proto = (uint8_t)proto;
	mask_addr(r->addr, addr, family, (unsigned int)len);
	return 0;
}

/* The table slot holding @p key, or the empty one where it would go. */
static uint32_t
slot_of(const struct cbl_allow *al, const struct rule *key)
{
	uint32_t i = (uint32_t)rule_hash(key) & al->mask;

	while (al->table[i] != 0 &&
			memcmp(&al->rules[al->table[i] - 1], key,
				sizeof(*key)) != 0)
		i = (i + 1) & al->mask;
	return i;
}

static int
build(struct cbl_allow *al)
{
	uint32_t size = 16, kept = 0;

	while (size < 2 * al->nb_rules)
		size <<= 1;
	al->table = calloc(size, sizeof(*al->table));
	if (al->table == NULL)
		return -ENOMEM;
	al->mask = size - 1;
	for (uint32_t k = 0; k < al->nb_rules; k++) {
		const struct rule *r = &al->rules[k];
		uint32_t i = slot_of(al, r);
		unsigned int f = r->family == 6;

		if (al->table[i] != 0)
			continue;       /* a duplicate */
		al->rules[kept] = *r;
		al->table[i] = ++kept;
		if (!al->lens[f][r->length]) {
			al->lens[f][r->length] = 1;
			al->nb_lens[f]++;
		}
	}
	al->nb_rules = kept;
	return 0;
}

static struct cbl_allow *
read_rules(int fd, const char *path, char *err, size_t err_len)
{
	struct cbl_line_reader *r = malloc(sizeof(*r));
	struct cbl_allow *al = calloc(1, sizeof(*al));
	char line[CBL_LINE_MAX + 1], why[128];
	uint32_t cap = 0;
	int ret, e;

	if (r == NULL || al == NULL) {
		cfu_fail(ENOMEM, err, err_len, "%s: %s", path,
			strerror(ENOMEM));
		goto fail;
	}
	cbl_line_reader_init(r, fd, path);
	while ((ret = cbl_next_line(r, line, err, err_len)) > 0) {
		char *w[4];
		int nw = cbl_split(line, w, 3);

		if (nw == 0)
			continue;
		if (al->nb_rules == CBL_ALLOW_MAX) {
			cfu_fail(E2BIG, err, err_len, "%s:%" PRIu64 ": more "
				"than %u rules", path, r->line,
				CBL_ALLOW_MAX);
			goto fail;
		}
		if (al->nb_rules == cap) {
			struct rule *n;

			cap = cap ? 2 * cap : 64;
			n = realloc(al->rules, cap * sizeof(*n));
			if (n == NULL) {
				cfu_fail(ENOMEM, err, err_len, "%s: %s", path,
					strerror(ENOMEM));
				goto fail;
			}
			al->rules = n;
		}
		if (parse_rule(w, nw, &al->rules[al->nb_rules], why,
				sizeof(why)) != 0) {
			cfu_fail(EINVAL, err, err_len, "%s:%" PRIu64 ": %s",
				path, r->line, why);
			goto fail;
		}
		al->nb_rules++;
	}
	if (ret < 0)
		goto fail;
	ret = build(al);
	if (ret != 0) {
		cfu_fail(-ret, err, err_len, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	free(r);
	return al;
fail:
	e = errno;
	free(r);
	cbl_allow_free(al);
	errno = e;
	return NULL;
}

static void *
read_rules_fn(int fd, const char *path, void *arg, char *err, size_t err_len)
{
	(void)arg;
	return read_rules(fd, path, err, err_len);
}

static void
drop_rules(void *al)
{
	cbl_allow_free(al);
}

struct cbl_allow *
cbl_allow_read(const char *path, char *err, size_t err_len)
{
	return cbl_text_file_read(path, read_rules_fn, drop_rules, NULL, err,
		err_len);
}

bool
cbl_allow_match(const struct cbl_allow *al, const struct cflow_packet *pkt)
{
	const struct cflow_key *k = &pkt->key;
	const uint8_t *dst = pkt->reversed ? k->addr_lo : k->addr_hi;
	uint16_t dport = pkt->reversed ? k->port_lo : k->port_hi;
	unsigned int f = k->family == 6;
	/* an echo request (ICMP 8, ICMPv6 128) */
	bool echo = (k->proto == 1 && pkt->icmp_type == 8) ||
		(k->proto == 58 && pkt->icmp_type == 128);
	struct rule key;

	if (al->nb_lens[f] == 0)
		return false;
	memset(&key, 0, sizeof(key));
	key.family = k->family;
	key.proto = k->proto;
	for (unsigned int len = 0; len <= (f ? 128u : 32u); len++) {
		if (!al->lens[f][len])
			continue;
		mask_addr(key.addr, dst, k->family, len);
		key.length = (uint8_t)len;
		key.port = has_ports(k->proto) ? dport : echo ? ECHO_PORT :
			ANY_PORT;
		if (al->table[slot_of(al, &key)] != 0)
			return true;
		if (key.port != ANY_PORT) {
			key.port = ANY_PORT;
			if (al->table[slot_of(al, &key)] != 0)
				return true;
		}
	}
	return false;
}

uint64_t
cbl_allow_rules(const struct cbl_allow *al)
{
	return al->nb_rules;
}

static int
rule_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct rule));
}

uint64_t
cbl_allow_digest(const struct cbl_allow *al)
{
	struct rule *sorted = malloc(al->nb_rules ? al->nb_rules *
		sizeof(*sorted) : 1);
	uint64_t d;

	if (sorted == NULL) {
		errno = ENOMEM;
		return 0;
	}
	/* Rules are whole, zero padded and deduplicated (build()): sorted,
	 * they are the list's canonical form. */
	if (al->nb_rules != 0) {
		memcpy(sorted, al->rules, al->nb_rules * sizeof(*sorted));
		qsort(sorted, al->nb_rules, sizeof(*sorted), rule_cmp);
	}
	d = XXH64(sorted, al->nb_rules * sizeof(*sorted), ALLOW_SEED);
	free(sorted);
	return d != 0 ? d : 1;
}

void
cbl_allow_free(struct cbl_allow *al)
{
	if (al == NULL)
		return;
	free(al->table);
	free(al->rules);
	free(al);
}
