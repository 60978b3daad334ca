/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * An exact flow table on rte_hash with lib/cflow's tracker contract; see
 * exact_table.h. Its per-packet logic is the tracker's own state machine
 * (cflow_state.h) on this store.
 *
 * Per rte_hash position, one 64-bit state: bit 0 closing, bits 1-2
 * class, bit 3 in use, bit 4 the key's higher endpoint is the inside
 * one (sided), bits 5-63 the last-seen time in ns. rte_hash
 * positions are stable while a key is in the table (displacements move
 * signatures, not keys), so the state is updated without a second hash
 * operation.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "cflow_state.h"
#include "exact_table.h"

#define STATE_CLOSING 1u
#define STATE_USED 8u
#define STATE_HI_INSIDE 16u
#define STATE_TIME_SHIFT 5

struct exact_table {
	struct rte_hash *h;
	uint64_t *state;        /* by position */
	uint32_t positions;
	uint32_t cursor;        /* sweep position */
	uint32_t sweep_max;     /* positions a sweep call visits at most */
	uint64_t timeout_ns[CFLOW_CLASS_MAX];
	uint64_t linger_ns;      /* 0 with CFLOW_LINGER_NONE */
	bool tcp_strict;
	bool sided;
	uint64_t now_ns;
	uint64_t sweep_period_ns;
	struct cflow_pace sweep_pace; /* in positions */
	struct cflow_counters c;
};

struct exact_table *
exact_table_create(const struct cflow_tracker_params *params, int socket_id)
{
	static unsigned int instances;
	uint64_t shortest = UINT64_MAX, entries;
	struct cflow_tracker_params r, *p = &r;
	struct exact_table *t;
	char name[RTE_HASH_NAMESIZE];
	int err;

	/* The tracker's defaults and checks. */
	if (cflow_tracker_params_resolve(params, &r) != 0)
		return NULL;
	/* The tracker's headroom: room for capacity at <= 96% load. */
	entries = (p->capacity * 100 + 95) / 96;
	if (entries >= UINT32_MAX - 1) {
		errno = EINVAL;
		return NULL;
	}
	t = rte_zmalloc_socket("exact_table", sizeof(*t), 0, socket_id);
	if (t == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(name, sizeof(name), "exact_flows_%u", instances++);
	t->h = rte_hash_create(&(struct rte_hash_parameters){
		.name = name,
		.entries = (uint32_t)entries,
		.key_len = sizeof(struct cflow_key),
		.hash_func = rte_hash_crc,
		.hash_func_init_val = (uint32_t)p->seed,
		.socket_id = socket_id,
	});
	/* rte_hash_create() tells why in rte_errno (ENOMEM, EEXIST, ...). */
	err = t->h == NULL ? rte_errno : ENOMEM;
	t->positions = (uint32_t)entries + 1;
	t->state = t->h == NULL ? NULL : rte_zmalloc_socket("exact_state",
			sizeof(*t->state) * t->positions, 0, socket_id);
	if (t->state == NULL) {
		exact_table_free(t);
		errno = err != 0 ? err : ENOMEM;
		return NULL;
	}
	for (unsigned int c = 0; c < CFLOW_CLASS_MAX; c++) {
		t->timeout_ns[c] = p->timeout_ns[c];
		if (p->timeout_ns[c] < shortest)
			shortest = p->timeout_ns[c];
	}
	t->tcp_strict = p->tcp_strict;
	t->sided = p->sided;
	t->linger_ns = p->close_linger_ns == CFLOW_LINGER_NONE ? 0 :
		p->close_linger_ns;
	/* The tracker's bound: as many slots as its buckets hold. */
	t->sweep_max = p->sweep_max_buckets * 4;
	/* The tracker's promise, with exact times: a full pass per
	 * max(1 s, shortest timeout / 8). */
	t->sweep_period_ns = shortest / 8 > NS_PER_S ? shortest / 8 :
			NS_PER_S;
	return t;
}

void
exact_table_free(struct exact_table *t)
{
	if (t == NULL)
		return;
	rte_hash_free(t->h);
	rte_free(t->state);
	rte_free(t);
}

void
exact_table_counters(const struct exact_table *t, struct cflow_counters *c)
{
	*c = t->c;
}

/* @p side: STATE_HI_INSIDE or 0. */
static inline uint64_t
state_make(uint64_t now_ns, unsigned int cls, bool closing, uint64_t side)
{
	return now_ns << STATE_TIME_SHIFT | STATE_USED | side | cls << 1 |
		(closing ? STATE_CLOSING : 0);
}

/*
 * One parsed packet whose flow is at @p pos (< 0: not in the table): the
 * tracker's state machine (cflow_state.h) on this store, judged with
 * exact times. *moved is set when a key was added or removed.
 */
static enum cflow_verdict
track_one(struct exact_table *t, const struct cflow_packet *pkt,
		uint8_t in_flags, int32_t pos,
		bool *moved)
{
	uint64_t s = pos >= 0 ? t->state[pos] : 0;
	uint64_t age = t->now_ns - (s >> STATE_TIME_SHIFT);
	unsigned int cls = (s >> 1) & 3;
	bool closing = s & STATE_CLOSING, inserted = false;
	bool stale = age > (closing ? t->linger_ns : t->timeout_ns[cls]);
	struct cflow_step step;

	if (pkt->kind != CFLOW_KIND_FLOW) {
		/* an ICMP error, a later fragment: looked up, nothing done */
		step = cflow_state_follow(pkt->kind, pos >= 0 && !stale &&
			(!t->sided || cflow_side_ok((s & STATE_HI_INSIDE) != 0,
				pkt->reversed, in_flags)));
		return cflow_count_step(&t->c, &step, false);
	}
	if (t->sided && pos >= 0 && !stale && !cflow_side_ok(
			(s & STATE_HI_INSIDE) != 0, pkt->reversed, in_flags)) {
		step = cflow_state_wrong_dir();
	} else {
		step = cflow_state_step(pos < 0 ? CFLOW_STATE_NONE :
				closing ? CFLOW_STATE_CLOSING :
				CFLOW_STATE_OPEN, stale, pkt->proto_class,
			pkt->tcp_flags, t->linger_ns != 0);
		/* What the packet may open (no admission control here). */
		cflow_state_admit(&step, in_flags, t->tcp_strict,
			pkt->proto_class, pkt->tcp_flags);
	}
	if (step.remove) {
		rte_hash_del_key(t->h, &pkt->key);
		t->state[pos] = 0;
		*moved = true;
	}
	if (step.next != CFLOW_STATE_NONE) {
		t->state[pos] = state_make(t->now_ns, cls,
				step.next == CFLOW_STATE_CLOSING,
				s & STATE_HI_INSIDE);
	} else if (step.insert) {
		int32_t at = rte_hash_add_key(t->h, &pkt->key);

		*moved = true;
		inserted = at >= 0;
		if (inserted)
			t->state[at] = state_make(t->now_ns, pkt->proto_class,
					false, t->sided && cflow_side_hi_inside(
					pkt->reversed, in_flags) ?
					STATE_HI_INSIDE : 0);
	}
	return cflow_count_step(&t->c, &step, inserted);
}

void
exact_table_track(struct exact_table *t, const struct cflow_input *in,
		const struct cflow_packet *pkts,
		const enum cflow_parse_status *status, unsigned int n,
		enum cflow_verdict *verdicts, uint8_t *counts)
{
	const void *keys[CF_BULK_MAX];
	int32_t pos[CF_BULK_MAX];
	uint8_t index[CF_BULK_MAX];
	unsigned int m = 0;
	bool moved = false;

	/* No per-flow packet count in this table. */
	if (counts != NULL)
		memset(counts, 0, n);
	for (unsigned int k = 0; k < n; k++) {
		cflow_count_packet(&t->c, &in[k]);
		if (status[k] == CFLOW_PARSE_OK &&
				pkts[k].kind != CFLOW_KIND_ICMP_UNRELATED) {
			keys[m] = &pkts[k].key;
			index[m++] = (uint8_t)k;
			continue;
		}
		if (status[k] == CFLOW_PARSE_OK) {
			struct cflow_step step = cflow_state_follow(
				pkts[k].kind, false);

			verdicts[k] = cflow_count_step(&t->c, &step, false);
			continue;
		}
		verdicts[k] = cflow_count_untracked(&t->c, status[k]);
	}
	if (m != 0)
		rte_hash_lookup_bulk(t->h, keys, m, pos);
	for (unsigned int j = 0; j < m; j++) {
		unsigned int k = index[j];

		if (in[k].time_ns > t->now_ns)
			t->now_ns = in[k].time_ns;
		/* An earlier packet of the burst added or removed a key. */
		if (moved)
			pos[j] = rte_hash_lookup(t->h, keys[j]);
		verdicts[k] = track_one(t, &pkts[k], in[k].flags, pos[j],
				&moved);
	}
}

/* Visit @p nb positions from the cursor on, removing idle and
 * lingered-out flows. */
static uint64_t
exact_sweep_n(struct exact_table *t, uint64_t now_ns, uint64_t nb)
{
	uint64_t expired = 0;

	if (now_ns > t->now_ns)
		t->now_ns = now_ns;
	while (nb-- > 0) {
		uint32_t pos = t->cursor;
		uint64_t s = t->state[pos], age;
		void *key;

		t->cursor = pos + 1 < t->positions ? pos + 1 : 0;
		if (!(s & STATE_USED))
			continue;
		age = t->now_ns - (s >> STATE_TIME_SHIFT);
		if (s & STATE_CLOSING ? age <= t->linger_ns :
				age <= t->timeout_ns[(s >> 1) & 3])
			continue;
		if (rte_hash_get_key_with_position(t->h, pos, &key) != 0)
			continue;
		rte_hash_del_key(t->h, key);
		t->state[pos] = 0;
		if (!(s & STATE_CLOSING)) {
			expired++;
			t->c.active--;
		}
	}
	t->c.flows_expired += expired;
	return expired;
}

/* As many positions as the time since the last call asks for (at most
 * sweep_max). Single-stream only: idleness is judged at now_ns. */
uint64_t
exact_table_sweep(struct exact_table *t, uint64_t now_ns, uint64_t as_of_ns)
{
	(void)as_of_ns;
	return exact_sweep_n(t, now_ns, cflow_pace_take(&t->sweep_pace,
			now_ns > t->now_ns ? now_ns : t->now_ns, t->positions,
			t->sweep_period_ns, t->sweep_max));
}

uint64_t
exact_table_sweep_all(struct exact_table *t, uint64_t now_ns)
{
	return exact_sweep_n(t, now_ns, t->positions);
}
