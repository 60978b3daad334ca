/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The key store of flow records (cflow_records.h): entries in an array,
 * found through an index of linear probing (entry number + 1, 0 free;
 * twice the capacity or more, a power of two, so at most half full),
 * keyed by (worker, name); a removal shifts the rest of its cluster
 * back (no tombstones). Free entries are a stack of their numbers, and
 * their first_ns is UINT64_MAX (FREE_NS): a scan of the entries in their
 * order, for orphans, passes them at one compare.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cflow_records.h"
#include "cfutil.h"

#define MAX_CAPACITY (UINT64_C(1) << 31)
#define FREE_NS UINT64_MAX

struct rs_entry {
	uint64_t name;
	uint64_t flow_id;
	uint64_t first_ns;      /* the next record's first packet (epoch) */
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport, dport, port, worker;
	uint8_t family, proto, proto_class, icmp_type, icmp_code;
};

struct cflow_recstore {
	struct rs_entry *e;
	uint32_t *index;        /* entry + 1, or 0 */
	uint32_t *free_list;    /* numbers of the free entries */
	uint32_t nb_free;
	uint64_t mask;          /* index slots - 1 */
	uint64_t next_id;
	uint64_t expire_next;   /* the entry the next expiry step starts at */
	struct cflow_recstore_stats st;
};

static uint64_t
index_slots(uint64_t capacity)
{
	uint64_t n = 16;

	while (n < 2 * capacity)
		n <<= 1;
	return n;
}

uint64_t
cflow_recstore_bytes(uint64_t capacity)
{
	if (capacity == 0 || capacity > MAX_CAPACITY)
		return 0;
	return sizeof(struct cflow_recstore) + capacity *
		(sizeof(struct rs_entry) + sizeof(uint32_t)) +
		index_slots(capacity) * sizeof(uint32_t);
}

struct cflow_recstore *
cflow_recstore_create(uint64_t capacity)
{
	uint64_t slots = index_slots(capacity);
	struct cflow_recstore *s;

	if (capacity == 0 || capacity > MAX_CAPACITY) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		goto nomem;
	s->e = calloc(capacity, sizeof(*s->e));
	s->index = calloc(slots, sizeof(*s->index));
	s->free_list = malloc(capacity * sizeof(*s->free_list));
	if (s->e == NULL || s->index == NULL || s->free_list == NULL) {
		cflow_recstore_free(s);
		goto nomem;
	}
	/* Entry 0 first: the low numbers are used first. */
	for (uint64_t k = 0; k < capacity; k++) {
		s->free_list[k] = (uint32_t)(capacity - 1 - k);
		s->e[k].first_ns = FREE_NS;
	}
	s->nb_free = (uint32_t)capacity;
	s->mask = slots - 1;
	s->next_id = 1;
	s->st.capacity = capacity;
	s->st.bytes = cflow_recstore_bytes(capacity);
	return s;
nomem:
	errno = ENOMEM;
	return NULL;
}

void
cflow_recstore_free(struct cflow_recstore *s)
{
	if (s == NULL)
		return;
	free(s->e);
	free(s->index);
	free(s->free_list);
	free(s);
}

static inline uint64_t
slot_of(const struct cflow_recstore *s, uint16_t worker, uint64_t name)
{
	return cfu_mix64(name ^ (uint64_t)worker << 48 ^ worker) & s->mask;
}

/* The index slot of (worker, name), or the free one it would take. */
static uint64_t
find(const struct cflow_recstore *s, uint16_t worker, uint64_t name)
{
	uint64_t i = slot_of(s, worker, name);

	for (;; i = (i + 1) & s->mask) {
		uint32_t x = s->index[i];

		if (x == 0 || (s->e[x - 1].name == name &&
				s->e[x - 1].worker == worker))
			return i;
	}
}

/* Free index slot @p i and its entry; shift the cluster back. */
static void
remove_at(struct cflow_recstore *s, uint64_t i)
{
	uint64_t j = i;

	s->e[s->index[i] - 1].first_ns = FREE_NS;
	s->free_list[s->nb_free++] = s->index[i] - 1;
	s->st.entries--;
	for (;;) {
		uint64_t home;
		uint32_t x;

		s->index[i] = 0;
		/* the next entry of the cluster that may move up to i */
		for (;;) {
			j = (j + 1) & s->mask;
			x = s->index[j];
			if (x == 0)
				return;
			home = slot_of(s, s->e[x - 1].worker, s->e[x - 1].name);
			/* home outside (i, j], cyclically: it may fill i */
			if (((j - home) & s->mask) >= ((j - i) & s->mask))
				break;
		}
		s->index[i] = x;
		i = j;
	}
}

/* The entry of @p worker's @p name: the one that holds it (@p held),
 * or a free one taken for it; NULL if none holds it and none is free. */
static struct rs_entry *
entry_for(struct cflow_recstore *s, uint16_t worker, uint64_t name,
		bool *held)
{
	uint64_t i = find(s, worker, name);

	*held = s->index[i] != 0;
	if (!*held) {
		if (s->nb_free == 0)
			return NULL;
		s->index[i] = s->free_list[--s->nb_free] + 1;
		s->st.entries++;
	}
	return &s->e[s->index[i] - 1];
}

uint64_t
cflow_recstore_add(struct cflow_recstore *s, uint16_t worker, uint64_t name,
		const struct cflow_event *e)
{
	bool held;
	struct rs_entry *x = entry_for(s, worker, name, &held);

	if (x == NULL) {
		s->st.full++;
		return 0;
	}
	/* held: the flow that had the name ended unrecorded */
	s->st.replaced += held;
	x->name = name;
	x->worker = worker;
	x->flow_id = s->next_id++;
	x->first_ns = e->time_ns;
	memcpy(x->src, e->src, sizeof(x->src));
	memcpy(x->dst, e->dst, sizeof(x->dst));
	x->sport = e->sport;
	x->dport = e->dport;
	x->port = e->port;
	x->family = e->family;
	x->proto = e->proto;
	x->proto_class = e->proto_class;
	x->icmp_type = e->icmp_type;
	x->icmp_code = e->icmp_code;
	s->st.added++;
	return x->flow_id;
}

int
cflow_recstore_name(struct cflow_recstore *s, uint16_t worker,
		const struct cflow_record *r, uint64_t offset_ns,
		struct cflow_flow_record *out)
{
	uint64_t i;
	struct rs_entry *x;

	if (r->reason == CFLOW_RECORD_NEW)
		return -EINVAL;
	i = find(s, worker, r->name);
	if (s->index[i] == 0) {
		s->st.unnamed++;
		return -ENOENT;
	}
	x = &s->e[s->index[i] - 1];
	memset(out, 0, sizeof(*out));
	out->flow_id = x->flow_id;
	out->first_ns = x->first_ns;
	out->last_ns = r->last_ns + offset_ns;
	/* a record's last packet is kept to a fraction of a tick,
	 * truncated: never before its first */
	if (out->last_ns < out->first_ns)
		out->last_ns = out->first_ns;
	out->packets = r->packets;
	out->bytes = r->bytes;
	memcpy(out->src, x->src, sizeof(out->src));
	memcpy(out->dst, x->dst, sizeof(out->dst));
	out->sport = x->sport;
	out->dport = x->dport;
	out->port = x->port;
	out->worker = worker;
	out->family = x->family;
	out->proto = x->proto;
	out->proto_class = x->proto_class;
	out->reason = r->reason;
	out->tcp_flags = r->tcp_flags;
	out->icmp_type = x->icmp_type;
	out->icmp_code = x->icmp_code;
	s->st.named++;
	if (r->reason == CFLOW_RECORD_ACTIVE)
		x->first_ns = r->next_ns + offset_ns;
	else
		remove_at(s, i);
	return 0;
}

int
cflow_recstore_forget(struct cflow_recstore *s, uint16_t worker,
		uint64_t name)
{
	uint64_t i = find(s, worker, name);

	if (s->index[i] == 0)
		return -ENOENT;
	remove_at(s, i);
	return 0;
}

uint64_t
cflow_recstore_expire(struct cflow_recstore *s, uint64_t before_ns,
		uint64_t max_entries, bool *done)
{
	uint64_t k = s->expire_next, end = s->st.capacity, removed = 0;

	if (max_entries != 0 && max_entries < end - k)
		end = k + max_entries;
	/* In the entries' order: they never move (a removal shifts index
	 * slots only), so a pass in steps meets each entry once. A free
	 * entry's FREE_NS never passes the compare: one that does is live,
	 * and the index holds it under its key. */
	for (; k < end; k++) {
		const struct rs_entry *x = &s->e[k];

		if (x->first_ns >= before_ns)
			continue;
		remove_at(s, find(s, x->worker, x->name));
		removed++;
	}
	s->expire_next = end < s->st.capacity ? end : 0;
	if (done != NULL)
		*done = s->expire_next == 0;
	s->st.expired += removed;
	return removed;
}

/* The saved keys: this header, then the entries as they lie (the same
 * build reads them: the state file's version). */
struct rs_saved {
	uint32_t entry_size;
	uint32_t zero;
	uint64_t entries;
};

uint64_t
cflow_recstore_save_bound(uint64_t capacity)
{
	if (capacity == 0 || capacity > MAX_CAPACITY)
		return 0;
	return sizeof(struct rs_saved) + capacity * sizeof(struct rs_entry);
}

int64_t
cflow_recstore_save(const struct cflow_recstore *s, uint64_t resume_ns,
		void *buf, uint64_t cap)
{
	struct rs_saved h = {
		.entry_size = sizeof(struct rs_entry),
		.entries = s->st.entries,
	};
	uint8_t *p = (uint8_t *)buf + sizeof(h);

	if (cap < sizeof(h) + h.entries * sizeof(struct rs_entry))
		return -ENOSPC;
	memcpy(buf, &h, sizeof(h));
	for (uint64_t i = 0; i <= s->mask; i++) {
		struct rs_entry x;

		if (s->index[i] == 0)
			continue;
		x = s->e[s->index[i] - 1];
		x.first_ns = resume_ns;
		memcpy(p, &x, sizeof(x));
		p += sizeof(x);
	}
	return p - (uint8_t *)buf;
}

int64_t
cflow_recstore_restore(struct cflow_recstore *s, const void *buf,
		uint64_t len)
{
	const uint8_t *p = (const uint8_t *)buf + sizeof(struct rs_saved);
	struct rs_saved h;
	int64_t added = 0;

	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.entry_size != sizeof(struct rs_entry) || h.zero != 0 ||
			h.entries > MAX_CAPACITY ||
			len - sizeof(h) != h.entries * sizeof(struct rs_entry))
		return -EBADMSG;
	for (uint64_t k = 0; k < h.entries; k++, p += sizeof(struct rs_entry)) {
		struct rs_entry x, *to;
		bool held;

		memcpy(&x, p, sizeof(x));
		to = entry_for(s, x.worker, x.name, &held);
		if (to == NULL) {
			s->st.full += h.entries - k;
			break;
		}
		*to = x;
		if (x.flow_id >= s->next_id)
			s->next_id = x.flow_id + 1;
		added++;
	}
	return added;
}

void
cflow_recstore_stats_get(const struct cflow_recstore *s,
		struct cflow_recstore_stats *st)
{
	*st = s->st;
}
