/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The fragment follower (cflow_frag.h): a table of datagrams by their
 * identity (struct cflow_frag_id up to its offset), open addressing over
 * a window of slots, each holding its first fragment's parse; and a hold
 * of later fragments that came before their first one. Both fixed at
 * creation. Entries age out by time alone: a datagram older than the
 * timeout is a free slot, a held fragment older is given back by
 * cflow_frag_expire().
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "cflow_frag.h"
#include "cflow_track.h"

#define NS_PER_S UINT64_C(1000000000)
/* The identity of a datagram: addresses, identification, protocol,
 * family (frag_fill() zeroes the rest of the struct). */
#define IDENT_LEN offsetof(struct cflow_frag_id, offset)
/* Slots a datagram may take from its hash on. */
#define WINDOW 8u

_Static_assert(IDENT_LEN == 38, "struct cflow_frag_id: the identity first");

struct dgram {
	uint64_t hash;          /* 0: never used */
	uint64_t time_ns;       /* its first fragment's */
	uint16_t l4_hdr;        /* bytes of transport header it carried */
	uint8_t ident[IDENT_LEN];
	struct cflow_packet pkt; /* its first fragment's parse */
};

struct held {
	void *item;             /* NULL: a free entry */
	uint64_t time_ns;
	uint64_t hash;
	uint64_t seq;           /* arrival order */
	uint8_t ident[IDENT_LEN];
};

struct cflow_frag {
	struct dgram *dgrams;
	uint32_t mask;          /* slots - 1 */
	struct held *hold;
	uint32_t hold_max;
	uint32_t nb_held;
	uint64_t oldest_ns;     /* no held entry is older (a lower bound) */
	uint64_t seq;
	uint64_t timeout_ns;
	uint64_t seed;
	struct cflow_frag_counters c;
};

/* The resolved sizes of @p p: 0, or -EINVAL. */
static int
resolve(const struct cflow_frag_params *p, uint32_t *slots, uint32_t *hold,
		uint64_t *timeout_ns)
{
	uint32_t want = p->datagrams != 0 ? p->datagrams :
		CFLOW_FRAG_DATAGRAMS_DEFAULT;

	if (want > CFLOW_FRAG_MAX || p->hold > CFLOW_FRAG_MAX)
		return -EINVAL;
	*slots = WINDOW;
	while (*slots < want)
		*slots <<= 1;
	*hold = p->no_hold ? 0 : p->hold != 0 ? p->hold :
		CFLOW_FRAG_HOLD_DEFAULT;
	*timeout_ns = p->timeout_ns != 0 ? p->timeout_ns :
		CFLOW_FRAG_TIMEOUT_S * NS_PER_S;
	return 0;
}

uint64_t
cflow_frag_memory(const struct cflow_frag_params *p)
{
	uint32_t slots, hold;
	uint64_t timeout;

	if (resolve(p, &slots, &hold, &timeout) != 0)
		return 0;
	return sizeof(struct cflow_frag) + (uint64_t)slots *
		sizeof(struct dgram) + (uint64_t)hold * sizeof(struct held);
}

struct cflow_frag *
cflow_frag_create(const struct cflow_frag_params *p)
{
	struct cflow_frag *f;
	uint32_t slots, hold;
	uint64_t timeout;

	if (resolve(p, &slots, &hold, &timeout) != 0) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		goto nomem;
	f->dgrams = calloc(slots, sizeof(*f->dgrams));
	f->hold = calloc(hold != 0 ? hold : 1, sizeof(*f->hold));
	if (f->dgrams == NULL || f->hold == NULL) {
		cflow_frag_free(f);
		goto nomem;
	}
	f->mask = slots - 1;
	f->hold_max = hold;
	f->timeout_ns = timeout;
	f->seed = p->seed != 0 ? p->seed : cflow_random_seed();
	return f;
nomem:
	errno = ENOMEM;
	return NULL;
}

void
cflow_frag_free(struct cflow_frag *f)
{
	if (f == NULL)
		return;
	free(f->dgrams);
	free(f->hold);
	free(f);
}

static inline uint64_t
ident_hash(const struct cflow_frag *f, const struct cflow_frag_id *fi)
{
	return XXH3_64bits_withSeed(fi, IDENT_LEN, f->seed) | 1;
}

/* Still followed at @p now_ns. */
static inline bool
live(const struct cflow_frag *f, const struct dgram *d, uint64_t now_ns)
{
	return d->hash != 0 && (now_ns < d->time_ns ||
		now_ns - d->time_ns <= f->timeout_ns);
}

/* The datagram of @p fi, live at @p now_ns, or NULL. */
static struct dgram *
dgram_find(struct cflow_frag *f, const struct cflow_frag_id *fi, uint64_t h,
		uint64_t now_ns)
{
	for (uint32_t j = 0; j < WINDOW; j++) {
		struct dgram *d = &f->dgrams[(h + j) & f->mask];

		if (d->hash == h && live(f, d, now_ns) &&
				memcmp(d->ident, fi, IDENT_LEN) == 0)
			return d;
	}
	return NULL;
}

/* A slot for a new datagram of hash @p h: a free or dead one of its
 * window, else the oldest (evicted). */
static struct dgram *
dgram_slot(struct cflow_frag *f, uint64_t h, uint64_t now_ns)
{
	struct dgram *oldest = NULL;

	for (uint32_t j = 0; j < WINDOW; j++) {
		struct dgram *d = &f->dgrams[(h + j) & f->mask];

		if (!live(f, d, now_ns))
			return d;
		if (oldest == NULL || d->time_ns < oldest->time_ns)
			oldest = d;
	}
	f->c.evicted++;
	return oldest;
}

/* Bytes of the transport header a first fragment of @p proto carried:
 * what a later fragment must not overlap (its ports, TCP's flags). */
static uint16_t
transport_header(uint8_t proto)
{
	switch (proto) {
	case 6:
		return 20;
	case 132:
		return 12;
	case 1:
	case 17:
	case 58:
	case 136:
		return 8;
	default:
		return 0;
	}
}

/* The held items of hash @p h and identity @p fi, taken out, in the
 * order they came. */
static unsigned int
hold_take(struct cflow_frag *f, const struct cflow_frag_id *fi, uint64_t h,
		void **out)
{
	struct held *got[64];
	unsigned int n = 0, total = 0;

	/* Oldest first, a batch of at most 64 a scan: as many scans as
	 * batches (one, but for a flood of one datagram's fragments). */
	for (;;) {
		n = 0;
		for (uint32_t k = 0; k < f->hold_max && f->nb_held != 0;
				k++) {
			struct held *e = &f->hold[k];
			unsigned int at;

			if (e->item == NULL || e->hash != h ||
					memcmp(e->ident, fi, IDENT_LEN) != 0)
				continue;
			/* keep the 64 oldest, sorted */
			if (n == 64 && e->seq > got[63]->seq)
				continue;
			at = n < 64 ? n++ : 63;
			while (at > 0 && got[at - 1]->seq > e->seq) {
				got[at] = got[at - 1];
				at--;
			}
			got[at] = e;
		}
		for (unsigned int k = 0; k < n; k++) {
			out[total++] = got[k]->item;
			got[k]->item = NULL;
			f->nb_held--;
		}
		if (n < 64)
			return total;
	}
}

static bool
hold_put(struct cflow_frag *f, const struct cflow_frag_id *fi, uint64_t h,
		void *item, uint64_t now_ns)
{
	if (f->nb_held == f->hold_max)
		return false;
	for (uint32_t k = 0; k < f->hold_max; k++) {
		struct held *e = &f->hold[k];

		if (e->item != NULL)
			continue;
		e->item = item;
		e->time_ns = now_ns;
		e->hash = h;
		e->seq = f->seq++;
		memcpy(e->ident, fi, IDENT_LEN);
		if (f->nb_held++ == 0 || now_ns < f->oldest_ns)
			f->oldest_ns = now_ns;
		return true;
	}
	return false;
}

enum cflow_frag_action
cflow_frag_packet(struct cflow_frag *f, const struct cflow_frag_id *fi,
		struct cflow_packet *pkt, enum cflow_parse_status *status,
		void *item, uint64_t now_ns, void **released,
		unsigned int *nb_released)
{
	uint64_t h = ident_hash(f, fi);
	struct dgram *d = dgram_find(f, fi, h, now_ns);

	*nb_released = 0;
	if (*status == CFLOW_PARSE_OK && fi->offset == 0) {
		/* A first fragment: remembered, unless its datagram is
		 * followed already (a copy; another flow's is an overlap). */
		if (d != NULL) {
			if (memcmp(&d->pkt.key, &pkt->key, sizeof(pkt->key)) != 0)
				f->c.overlaps++;
			return CFLOW_FRAG_PASS;
		}
		d = dgram_slot(f, h, now_ns);
		d->hash = h;
		d->time_ns = now_ns;
		d->l4_hdr = transport_header(fi->proto);
		memcpy(d->ident, fi, IDENT_LEN);
		d->pkt = *pkt;
		d->pkt.kind = CFLOW_KIND_FRAGMENT;
		d->pkt.tcp_flags = 0;
		d->pkt.frag_first = false;
		f->c.datagrams++;
		if (f->nb_held != 0) {
			*nb_released = hold_take(f, fi, h, released);
			f->c.released += *nb_released;
		}
		return CFLOW_FRAG_PASS;
	}
	if (*status != CFLOW_PARSE_FRAGMENT)
		return CFLOW_FRAG_PASS;
	if (d != NULL) {
		if ((uint32_t)fi->offset * 8 < d->l4_hdr) {
			f->c.overlaps++;
			return CFLOW_FRAG_PASS;
		}
		*pkt = d->pkt;
		*status = CFLOW_PARSE_OK;
		f->c.followed++;
		return CFLOW_FRAG_FOLLOWED;
	}
	if (f->hold_max == 0)
		return CFLOW_FRAG_PASS;         /* no_hold: nothing to count */
	if (!hold_put(f, fi, h, item, now_ns)) {
		f->c.hold_full++;
		return CFLOW_FRAG_PASS;
	}
	f->c.held++;
	return CFLOW_FRAG_HELD;
}

unsigned int
cflow_frag_expire(struct cflow_frag *f, uint64_t now_ns, bool all,
		void **out, unsigned int max)
{
	uint64_t oldest = UINT64_MAX;
	unsigned int n = 0;

	if (f->nb_held == 0 || (!all && (now_ns < f->oldest_ns ||
			now_ns - f->oldest_ns <= f->timeout_ns)))
		return 0;
	for (uint32_t k = 0; k < f->hold_max && f->nb_held != 0; k++) {
		struct held *e = &f->hold[k];

		if (e->item == NULL)
			continue;
		if (n < max && (all || (now_ns >= e->time_ns &&
				now_ns - e->time_ns > f->timeout_ns))) {
			out[n++] = e->item;
			e->item = NULL;
			f->nb_held--;
			continue;
		}
		if (e->time_ns < oldest)
			oldest = e->time_ns;
	}
	f->oldest_ns = oldest;
	f->c.expired += n;
	return n;
}

unsigned int
cflow_frag_held(const struct cflow_frag *f)
{
	return f->nb_held;
}

unsigned int
cflow_frag_hold(const struct cflow_frag *f)
{
	return f->hold_max;
}

void
cflow_frag_counters_get(const struct cflow_frag *f,
		struct cflow_frag_counters *c)
{
	*c = f->c;
}
