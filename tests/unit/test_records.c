/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Flow records of lib/cflow's tracker (records on) against an exact model
 * of their contract (docs/design.md, "Flow records"): every flow's records
 * hold its packets, IP octets, flags and times, one at each end (idle,
 * end of flow at the linger's end, forced, lack of resources) and one at
 * each active timeout; names join them to the flow's key as a caller's
 * key store would. The model keeps exact keys and nanoseconds; the
 * active timeout's unit is the documented one, computed here.
 */

#include <errno.h>
#include <stdlib.h>

#include "cflow.h"
#include "cflow_records.h"
#include "cflow_test.h"
#include "packets.h"
#include "test.h"

/* A record as compared: the flow's key, what the record says. */
struct rec {
	struct cflow_key key;
	uint8_t reason;
	uint8_t flags;
	uint32_t packets;
	uint64_t bytes;
	uint64_t first_ns, last_ns;
};

struct recs {
	struct rec *r;
	size_t n, cap;
};

static void
recs_add(struct recs *l, const struct rec *r)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->r = realloc(l->r, l->cap * sizeof(*l->r));
	}
	l->r[l->n++] = *r;
}

static int
rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int c = memcmp(&x->key, &y->key, sizeof(x->key));

	if (c != 0)
		return c;
	if (x->first_ns != y->first_ns)
		return x->first_ns < y->first_ns ? -1 : 1;
	if (x->last_ns != y->last_ns)
		return x->last_ns < y->last_ns ? -1 : 1;
	return memcmp(&x->reason, &y->reason, sizeof(*x) -
		offsetof(struct rec, reason) - 2 * sizeof(uint64_t));
}

/* ------------------------------------------ the caller: a key store */

struct named {
	bool used;              /* first: lp_find() */
	uint64_t name;
	struct cflow_key key;
	uint64_t first_ns;
};

struct store {
	struct named *e;
	uint32_t size;
	struct recs got;
	uint64_t unnamed, twice;
};

static bool
name_match(const void *slot, const void *key)
{
	return ((const struct named *)slot)->name == *(const uint64_t *)key;
}

static uint64_t
name_hash(const void *slot)
{
	return cfu_mix64(((const struct named *)slot)->name);
}

static struct named *
store_find(struct store *s, uint64_t name)
{
	return lp_find(s->e, sizeof(*s->e), s->size, cfu_mix64(name),
		name_match, &name);
}

static void
store_remove(struct store *s, struct named *e)
{
	lp_remove(s->e, sizeof(*s->e), s->size, e, name_hash);
}

static void
on_record(const struct cflow_record *r, void *arg)
{
	struct store *s = arg;
	struct named *e = store_find(s, r->name);
	struct rec out;

	if (r->reason == CFLOW_RECORD_NEW) {
		s->twice += e->used;
		e->used = true;
		e->name = r->name;
		e->key = r->pkt->key;
		e->first_ns = r->last_ns;
		return;
	}
	if (!e->used) {
		s->unnamed++;
		return;
	}
	memset(&out, 0, sizeof(out));
	out.key = e->key;
	out.reason = r->reason;
	out.flags = r->tcp_flags;
	out.packets = r->packets;
	out.bytes = r->bytes;
	out.first_ns = e->first_ns;
	out.last_ns = r->last_ns;
	recs_add(&s->got, &out);
	if (r->reason == CFLOW_RECORD_ACTIVE)
		e->first_ns = r->next_ns;
	else
		store_remove(s, e);
}

/* A tracker of @p capacity flows with records into @p st, a store of
 * @p names names; NULL on failure. */
static struct cflow_tracker *
records_tracker(uint64_t capacity, unsigned int fp_bits, struct store *st,
		uint32_t names)
{
	struct cflow_tracker_params p;

	cflow_tracker_params_init(&p, capacity);
	p.fp_bits = fp_bits;
	p.records = true;
	p.record_fn = on_record;
	p.record_arg = st;
	st->size = names;
	st->e = calloc(names, sizeof(*st->e));
	return st->e != NULL ? tracker_with(&p) : NULL;
}

static void
store_free(struct store *st)
{
	free(st->e);
	free(st->got.r);
}

/* --------------------------------------------------- the exact model */

struct mflow {
	bool used;              /* first: lp_find() */
	bool closing;
	struct cflow_key key;
	uint8_t cls, flags;
	uint64_t last_ns;       /* of the flow: timeouts, linger */
	uint64_t first_ns;      /* of its record */
	uint32_t packets;
	uint64_t bytes;
};

struct model {
	struct mflow *slot;
	uint32_t size;
	uint64_t now_ns;
	uint64_t timeout_ns[CFLOW_CLASS_MAX], linger_ns;
	uint64_t unit_ns;       /* the active timeout's unit, 0: none */
	uint64_t due_units;
	uint64_t sub_ns;
	struct recs want;
};

/* the head of struct model_flow_head */
_Static_assert(offsetof(struct mflow, key) ==
	offsetof(struct model_flow_head, key), "mflow's head");

static struct mflow *
mfind(struct model *m, const struct cflow_key *k)
{
	return model_key_find(m->slot, sizeof(*m->slot), m->size, k);
}

static void
mremove(struct model *m, struct mflow *e)
{
	model_key_remove(m->slot, sizeof(*m->slot), m->size, e);
}

static void
mrecord(struct model *m, const struct mflow *e, uint8_t reason)
{
	struct rec r;

	memset(&r, 0, sizeof(r));
	r.key = e->key;
	r.reason = reason;
	r.flags = e->flags;
	r.packets = e->packets;
	r.bytes = e->bytes;
	r.first_ns = e->first_ns;
	/* kept to 1/256 of a tick */
	r.last_ns = e->last_ns - e->last_ns % m->sub_ns;
	recs_add(&m->want, &r);
}

/* A packet of a flow's record: cut first at an active timeout (the
 * record's first packet and this one in units, truncated, due_units
 * apart) or before 65535 packets. */
static void
mcount(struct model *m, struct mflow *e, uint8_t flags, uint32_t bytes)
{
	if (e->packets == 0xffff || (m->unit_ns != 0 &&
			m->now_ns / m->unit_ns - e->first_ns / m->unit_ns >=
			m->due_units)) {
		mrecord(m, e, CFLOW_RECORD_ACTIVE);
		e->first_ns = m->now_ns;
		e->packets = 0;
		e->bytes = 0;
		e->flags = 0;
	}
	e->packets++;
	e->bytes += bytes;
	e->flags |= flags;
	e->last_ns = m->now_ns;
}

static void
mpacket(struct model *m, const struct cflow_packet *p, uint32_t bytes,
		uint64_t at)
{
	bool tcp = p->proto_class == CFLOW_CLASS_TCP;
	bool close = tcp && (p->tcp_flags & (CFLOW_TCP_FIN | CFLOW_TCP_RST));
	bool syn = tcp && (p->tcp_flags & (CFLOW_TCP_SYN | CFLOW_TCP_ACK)) ==
		CFLOW_TCP_SYN;
	struct mflow *e;

	if (at > m->now_ns)
		m->now_ns = at;
	e = mfind(m, &p->key);
	if (e->used) {
		uint64_t age = m->now_ns - e->last_ns;

		if (!e->closing && age > m->timeout_ns[e->cls]) {
			mrecord(m, e, CFLOW_RECORD_IDLE);
			mremove(m, e);
		} else if (!e->closing) {
			mcount(m, e, p->tcp_flags, bytes);
			if (close) {
				e->closing = true;
				if (m->linger_ns == 0) {
					mrecord(m, e, CFLOW_RECORD_END);
					mremove(m, e);
				}
			}
			return;
		} else if (age > m->linger_ns) {
			mrecord(m, e, CFLOW_RECORD_END);
			mremove(m, e);
		} else if (syn) {
			mrecord(m, e, CFLOW_RECORD_END);
			mremove(m, e);
			goto insert;
		} else {
			mcount(m, e, p->tcp_flags, bytes);
			return;
		}
	}
	if (close)
		return;
insert:
	e = mfind(m, &p->key);
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->key = p->key;
	e->cls = p->proto_class;
	e->first_ns = m->now_ns;
	mcount(m, e, p->tcp_flags, bytes);
}

/* The sweep at @p at, and (@p end) the end of the run after it. */
static void
msweep_all(struct model *m, uint64_t at, bool end)
{
	if (at > m->now_ns)
		m->now_ns = at;
	for (uint32_t i = 0; i < m->size; i++) {
		struct mflow *e = &m->slot[i];
		uint64_t age;

		if (!e->used)
			continue;
		age = m->now_ns - e->last_ns;
		if (e->closing ? age > m->linger_ns :
				age > m->timeout_ns[e->cls]) {
			mrecord(m, e, e->closing ? CFLOW_RECORD_END :
				CFLOW_RECORD_IDLE);
			mremove(m, e);
			i--;
		} else if (end) {
			mrecord(m, e, e->closing ? CFLOW_RECORD_END :
				CFLOW_RECORD_FORCED);
		}
	}
}

/*
 * The active timeout's unit as usage.md and cflow_track.h state it: the
 * smallest power of two of nanoseconds, from 2^20 up, over 1/220 of the
 * active timeout + 9/8 of the longest timeout or linger + 2 s; a record
 * is cut at ceil(active / unit) + 1 units.
 */
static uint64_t
documented_unit(uint64_t active, uint64_t longest, uint64_t *due)
{
	uint64_t span = active + longest + longest / 8 + 2 * S, u = 1 << 20;

	while (span / u >= 220)
		u <<= 1;
	*due = (active + u - 1) / u + 1;
	return u;
}

static void
free_recs(struct recs *l)
{
	free(l->r);
	l->r = NULL;
	l->n = l->cap = 0;
}

/* The two lists, sorted, equal; the first difference said. */
static int
same_records(struct recs *got, struct recs *want, const char *what)
{
	qsort(got->r, got->n, sizeof(*got->r), rec_cmp);
	qsort(want->r, want->n, sizeof(*want->r), rec_cmp);
	for (size_t k = 0; k < got->n && k < want->n; k++) {
		const struct rec *g = &got->r[k], *w = &want->r[k];

		TEST_ASSERT(rec_cmp(g, w) == 0, "%s: record %zu of %zu: got "
			"reason %u packets %u bytes %lu flags %#x first %lu last "
			"%lu, want reason %u packets %u bytes %lu flags %#x first "
			"%lu last %lu (port %u)", what, k, want->n, g->reason,
			g->packets, (unsigned long)g->bytes, g->flags,
			(unsigned long)g->first_ns, (unsigned long)g->last_ns,
			w->reason, w->packets, (unsigned long)w->bytes, w->flags,
			(unsigned long)w->first_ns, (unsigned long)w->last_ns,
			g->key.port_lo);
	}
	TEST_ASSERT_EQ(got->n, want->n, "%s: %zu records, want %zu", what,
		got->n, want->n);
	return 0;
}

static int
records_identity(const struct cflow_tracker *t)
{
	struct cflow_counters c;

	cflow_counters_get(t, &c);
	TEST_ASSERT_EQ(c.flows_new + c.flows_restored + c.lingering_restored,
		c.active + c.lingering + c.records_idle + c.records_end +
		c.records_forced + c.records_resources, "new %lu restored %lu "
		"active %lu lingering %lu idle %lu end %lu forced %lu "
		"resources %lu", (unsigned long)c.flows_new,
		(unsigned long)c.flows_restored, (unsigned long)c.active,
		(unsigned long)c.lingering, (unsigned long)c.records_idle,
		(unsigned long)c.records_end, (unsigned long)c.records_forced,
		(unsigned long)c.records_resources);
	return 0;
}

/*
 * Times step in whole seconds, plus under 0.5 ms within a burst, and
 * timeouts and the linger are whole seconds and a half: an age is never
 * within a tick of one, so that the tracker's ticks and the model's
 * nanoseconds agree on every decision (test_track_model's way).
 * Random traffic on 3000 flows, 32 of them busy TCP flows that close,
 * see packets while lingering and reopen; 32-bit fingerprints (no false
 * positive), a table large enough to evict nothing. Every record of the
 * tracker, named back to its key, equals the model's.
 */
static int
records_run(uint64_t seed, uint64_t linger_s, uint64_t active_s)
{
	enum { FLOWS = 3000, PACKETS = 60000 };
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN,
		CFLOW_TCP_SYN | CFLOW_TCP_ACK, CFLOW_TCP_ACK, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK, CFLOW_TCP_RST };
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct store st = { .size = 16384 };
	struct model m = { .size = 8192 };
	uint64_t rng = seed, at = 1000000 * S + S / 2, due, longest;
	struct cflow_counters c;

	cflow_tracker_params_init(&p, 2 * FLOWS);
	p.fp_bits = 32;
	p.seed = seed;
	for (int k = 0; k < CFLOW_CLASS_MAX; k++)
		p.timeout_ns[k] = (uint64_t)(5 + 3 * k) * S + S / 2;
	p.close_linger_ns = linger_s ? linger_s * S + S / 2 :
		CFLOW_LINGER_NONE;
	p.records = true;
	p.active_timeout_ns = active_s ? active_s * S : CFLOW_ACTIVE_NONE;
	p.record_fn = on_record;
	p.record_arg = &st;
	t = cflow_tracker_create(&p);
	st.e = calloc(st.size, sizeof(*st.e));
	m.slot = calloc(m.size, sizeof(*m.slot));
	TEST_ASSERT(t != NULL && st.e != NULL && m.slot != NULL, "create");
	memcpy(m.timeout_ns, p.timeout_ns, sizeof(m.timeout_ns));
	m.linger_ns = linger_s ? linger_s * S + S / 2 : 0;
	longest = 14 * S + S / 2;
	if (active_s != 0) {
		m.unit_ns = documented_unit(active_s * S, longest, &due);
		m.due_units = due;
		TEST_ASSERT_EQ(cflow_tracker_active_unit_ns(t), m.unit_ns,
			"the unit");
	}
	m.sub_ns = (UINT64_C(1) << 24) / 256;

	for (int n = 0; n < PACKETS; n += CF_BULK_MAX) {
		struct cflow_input in[CF_BULK_MAX];
		uint8_t bufs[CF_BULK_MAX][256];
		struct cflow_packet pkts[CF_BULK_MAX];
		enum cflow_parse_status status[CF_BULK_MAX];

		at += (cfu_splitmix64(&rng) % 3) * S;
		for (int k = 0; k < CF_BULK_MAX; k++) {
			uint32_t f = (uint32_t)(cfu_splitmix64(&rng) % FLOWS);
			static const uint8_t protos[] = { 6, 6, 17, 1, 47 };

			if (f % 8 == 0)
				f = f / 8 % 32 / 2 * 5 + f / 8 % 2;
			struct spec s = { .family = f % 3 ? 4 : 6,
				.src = (uint8_t)f, .dst = (uint8_t)(f >> 8),
				.sport = (uint16_t)(1024 + f), .dport = 80,
				.proto = protos[f % 5],
				.flags = flag_set[cfu_splitmix64(&rng) % 7] };

			if (cfu_splitmix64(&rng) & 1) {
				s.src = (uint8_t)(f >> 8);
				s.dst = (uint8_t)f;
				s.sport = 80;
				s.dport = (uint16_t)(1024 + f);
			}
			/* a packet's time within the burst: sub-tick parts */
			in[k] = (struct cflow_input){ .data = bufs[k],
				.time_ns = at + (uint64_t)k * 7777 };
			in[k].len = in[k].wire_len = build(bufs[k], &s);
			status[k] = cflow_parse(bufs[k], in[k].len, NULL,
				&pkts[k]);
			/* the IP packet: the frame less its 14 bytes of
			 * Ethernet (build() pads nothing) */
			mpacket(&m, &pkts[k], in[k].len - 14, in[k].time_ns);
		}
		if (n / CF_BULK_MAX % 2)
			cflow_track_parsed(t, in, pkts, status, CF_BULK_MAX,
					NULL, NULL);
		else
			cflow_track_burst(t, in, CF_BULK_MAX, NULL);
		cflow_sweep(t, at + 63 * 7777);
		TEST_ASSERT_EQ(records_identity(t), 0, "identity");
	}
	cflow_sweep_all(t, at + 8 * S);
	msweep_all(&m, at + 8 * S, true);
	TEST_ASSERT_EQ(records_identity(t), 0, "identity");
	cflow_counters_get(t, &c);
	TEST_ASSERT_EQ(cflow_tracker_end_records(t), c.active + c.lingering,
		"end of the run");
	TEST_ASSERT(st.unnamed == 0 && st.twice == 0, "unnamed %lu, a name "
		"new twice %lu", (unsigned long)st.unnamed,
		(unsigned long)st.twice);
	cflow_counters_get(t, &c);
	printf("# seed %lu, linger %lu s, active %lu s: records idle %lu "
		"active %lu end %lu shutdown %lu\n", (unsigned long)seed,
		(unsigned long)linger_s, (unsigned long)active_s,
		(unsigned long)c.records_idle, (unsigned long)c.records_active,
		(unsigned long)c.records_end,
		(unsigned long)c.records_shutdown);
	TEST_ASSERT(c.records_idle > 0 && c.records_end > 0 &&
		(active_s == 0 || c.records_active > 0) && c.records_shutdown > 0,
		"the run did not make every kind of record");
	TEST_ASSERT_EQ(same_records(&st.got, &m.want, "records"), 0,
		"seed %lu", (unsigned long)seed);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	free(st.e);
	free(m.slot);
	free_recs(&st.got);
	free_recs(&m.want);
	return 0;
}

static int
test_records_model(void)
{
	for (uint64_t seed = 1; seed <= 3; seed++) {
		TEST_ASSERT_EQ(records_run(seed, 2, 20), 0, "linger 2 s, "
			"active 20 s");
		TEST_ASSERT_EQ(records_run(seed, 0, 20), 0, "no linger");
		TEST_ASSERT_EQ(records_run(seed, 2, 0), 0, "no active timeout");
	}
	return 0;
}

/* A flow of 70000 packets: its record is cut before it counts 65536. */
static int
test_records_overflow(void)
{
	struct store st = { 0 };
	struct cflow_tracker *t = records_tracker(1000, 12, &st, 64);
	struct spec s = tcp(CFLOW_TCP_ACK, false);
	uint8_t buf[256];
	struct cflow_input in[CF_BULK_MAX];
	uint64_t at = 1000 * S;
	uint32_t len;

	TEST_ASSERT(t != NULL, "create");
	len = build(buf, &s);
	/* 1400 bytes on the wire, 54 captured */
	buf[16] = 1386 >> 8;
	buf[17] = 1386 & 0xff;
	for (int k = 0; k < CF_BULK_MAX; k++)
		in[k] = (struct cflow_input){ .data = buf, .len = len,
			.wire_len = 1400 };
	for (int n = 0; n < 70000; n += CF_BULK_MAX) {
		for (int k = 0; k < CF_BULK_MAX; k++)
			in[k].time_ns = at + (uint64_t)(n + k) * 1000;
		cflow_track_burst(t, in, n + CF_BULK_MAX <= 70000 ?
			CF_BULK_MAX : 70000 - n, NULL);
	}
	TEST_ASSERT_EQ(cflow_tracker_end_records(t), 1u, "one flow");
	TEST_ASSERT_EQ(st.got.n, 2u, "records");
	TEST_ASSERT(st.got.r[0].reason == CFLOW_RECORD_ACTIVE &&
		st.got.r[0].packets == 65535 &&
		st.got.r[0].bytes == 65535ull * 1386 &&
		st.got.r[1].reason == CFLOW_RECORD_FORCED &&
		st.got.r[1].packets == 70000 - 65535 &&
		st.got.r[1].first_ns == at + 65535ull * 1000,
		"%u %u/%lu, %u %u first %lu", st.got.r[0].reason,
		st.got.r[0].packets, (unsigned long)st.got.r[0].bytes,
		st.got.r[1].reason, st.got.r[1].packets,
		(unsigned long)st.got.r[1].first_ns);
	cflow_tracker_free(t);
	store_free(&st);
	return 0;
}

/*
 * A full table (64 flows) with eviction: each evicted flow ends
 * with a lack-of-resources record, a closed one lingering with an end
 * record; a flush ends the rest (forced); every flow's packets are in
 * exactly one record.
 */
static int
test_records_evict_flush(void)
{
	struct store st = { 0 };
	struct cflow_tracker *t = records_tracker(64, 32, &st, 4096);
	struct cflow_counters c;
	uint64_t at = 5000 * S, packets = 0, recorded = 0;

	TEST_ASSERT(t != NULL, "create");
	for (unsigned int f = 0; f < 1000; f++) {
		struct spec s = { .family = 4, .src = (uint8_t)f,
			.dst = (uint8_t)(f >> 8), .sport = (uint16_t)(2000 + f),
			.dport = 443, .proto = 6, .flags = CFLOW_TCP_SYN };

		(void)send(t, &s, at + f * 1000);
		s.flags = f % 3 ? CFLOW_TCP_ACK : CFLOW_TCP_FIN |
			CFLOW_TCP_ACK;
		(void)send(t, &s, at + f * 1000 + 500);
		packets += 2;
	}
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.records_resources > 0 && c.records_end > 0,
		"resources %lu end %lu", (unsigned long)c.records_resources,
		(unsigned long)c.records_end);
	TEST_ASSERT_EQ(records_identity(t), 0, "identity");
	(void)cflow_tracker_flush(t);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.records_forced > 0 && c.active == 0 && c.lingering == 0,
		"forced %lu", (unsigned long)c.records_forced);
	TEST_ASSERT_EQ(records_identity(t), 0, "identity after the flush");
	for (size_t k = 0; k < st.got.n; k++)
		recorded += st.got.r[k].packets;
	TEST_ASSERT_EQ(recorded, packets, "packets in records");
	TEST_ASSERT_EQ(st.got.n, 1000u, "one record a flow: %zu", st.got.n);
	cflow_tracker_free(t);
	store_free(&st);
	return 0;
}

/*
 * Warm restart: a table saved with records is taken over only by a
 * tracker with records (the state's layout differs); its flows keep
 * their state, not their records (the aux words are not saved): their
 * records come with no new-flow record before (a caller's key store
 * counts them unnamed), from the packets after the restart.
 */
static int
test_records_restore(void)
{
	struct store st = { 0 }, st2 = { 0 };
	struct cflow_tracker *t = records_tracker(1000, 32, &st, 256), *u;
	struct cflow_tracker *plain;
	struct cflow_tracker_params p;
	struct cflow_counters c;
	char err[256];
	uint64_t at = 100 * S;
	size_t n;
	void *buf;

	TEST_ASSERT(t != NULL, "create");
	for (unsigned int f = 0; f < 20; f++) {
		struct spec s = { .family = 4, .src = (uint8_t)f, .dst = 200,
			.sport = (uint16_t)(3000 + f), .dport = 53,
			.proto = 17 };

		(void)send(t, &s, at + f * 1000);
	}
	n = cflow_tracker_save_size(t);
	buf = malloc(n);
	TEST_ASSERT(buf != NULL && cflow_tracker_save(t, buf, n) ==
		(int64_t)n, "save");
	cflow_tracker_params_init(&p, 1000);
	p.fp_bits = 32;
	plain = tracker_with(&p);
	TEST_ASSERT(plain != NULL && cflow_tracker_restore(plain, buf, n, NULL,
		err, sizeof(err)) == -ESTALE && strstr(err, "records"),
		"restored without records: %s", err);
	u = records_tracker(1000, 32, &st2, 256);
	TEST_ASSERT(u != NULL && cflow_tracker_restore(u, buf, n, NULL, err,
		sizeof(err)) == 0, "restore: %s", err);
	/* one more packet of flow 3, then the end of the run */
	{
		struct spec s = { .family = 4, .src = 3, .dst = 200,
			.sport = 3003, .dport = 53, .proto = 17 };

		(void)send(u, &s, at + S);
	}
	TEST_ASSERT_EQ(cflow_tracker_end_records(u), 20u, "end records");
	cflow_counters_get(u, &c);
	TEST_ASSERT(c.flows_restored == 20 && c.records_shutdown == 20,
		"restored %lu", (unsigned long)c.flows_restored);
	TEST_ASSERT(st2.unnamed == 20 && st2.got.n == 0, "unnamed %lu",
		(unsigned long)st2.unnamed);
	free(buf);
	cflow_tracker_free(t);
	cflow_tracker_free(u);
	cflow_tracker_free(plain);
	store_free(&st);
	store_free(&st2);
	return 0;
}

/* Records need 32-bit values and a callback; off, no aux words. */
static int
test_records_params(void)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t, *off;
	struct cf_stats s1, s0;

	cflow_tracker_params_init(&p, 1000);
	p.records = true;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"no callback");
	p.record_fn = on_record;
	p.value_bits = 16;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"16-bit values");
	p.value_bits = 32;
	t = cflow_tracker_create(&p);
	p.records = false;
	off = cflow_tracker_create(&p);
	TEST_ASSERT(t != NULL && off != NULL, "create");
	cf_stats(cflow_tracker_filter(t), &s1);
	cf_stats(cflow_tracker_filter(off), &s0);
	TEST_ASSERT_EQ(s1.bytes, s0.bytes + 8 * (s0.slots +
		CF_DEFAULT_MAX_KICKS), "8 bytes a slot (and a kick path's)");
	TEST_ASSERT_EQ(cflow_tracker_active_unit_ns(off), 0u, "off");
	/* 1800 s and the default 300 s: units of 2^34 ns (17.2 s) */
	TEST_ASSERT_EQ(cflow_tracker_active_unit_ns(t), UINT64_C(1) << 34,
		"unit");
	cflow_tracker_free(t);
	cflow_tracker_free(off);
	return 0;
}

/* A new-flow event of the key store's tests: UDP from 10.0.0.@p k. */
static struct cflow_event
store_event(uint8_t k, uint64_t time_ns)
{
	struct cflow_event e = {
		.time_ns = time_ns, .family = 4, .proto = 17,
		.proto_class = CFLOW_CLASS_UDP, .sport = 1000 + k, .dport = 53,
		.port = 1,
	};

	e.src[0] = 10;
	e.src[3] = k;
	e.dst[0] = 192;
	return e;
}

/* The key store across a warm restart: cflow_recstore_save() then
 * cflow_recstore_restore() keep each entry (worker, name, key, flow id),
 * its next record starting at the save; new ids follow the largest; a
 * length that is not a save's is refused whole; past the capacity the
 * rest are counted full; cflow_recstore_forget() frees an entry
 * uncounted. */
static int
test_records_store_restart(void)
{
	struct cflow_recstore *a = cflow_recstore_create(8), *b, *c;
	struct cflow_record r = { .reason = CFLOW_RECORD_ACTIVE,
		.last_ns = 500, .next_ns = 600, .packets = 2, .bytes = 80 };
	struct cflow_recstore_stats st;
	struct cflow_flow_record out;
	struct cflow_event e;
	uint8_t buf[4096];
	int64_t n;

	TEST_ASSERT(a != NULL, "create");
	for (uint8_t k = 1; k <= 3; k++) {
		e = store_event(k, 100 * k);
		TEST_ASSERT_EQ(cflow_recstore_add(a, k % 2, 0x100 + k, &e),
			(uint64_t)k, "id");
	}
	/* flow 2's active timeout: its next record from 600 */
	r.name = 0x102;
	TEST_ASSERT_EQ(cflow_recstore_name(a, 0, &r, 0, &out), 0, "active");
	TEST_ASSERT(cflow_recstore_save(a, 7000, buf, 16) == -ENOSPC,
		"too small");
	n = cflow_recstore_save(a, 7000, buf, sizeof(buf));
	TEST_ASSERT(n > 0 && (uint64_t)n <= cflow_recstore_save_bound(3),
		"saved %ld", (long)n);
	b = cflow_recstore_create(8);
	TEST_ASSERT(b != NULL, "create");
	TEST_ASSERT(cflow_recstore_restore(b, buf, (uint64_t)n - 1) ==
		-EBADMSG, "cut");
	cflow_recstore_stats_get(b, &st);
	TEST_ASSERT_EQ(st.entries, 0u, "nothing added from a cut save");
	TEST_ASSERT_EQ(cflow_recstore_restore(b, buf, (uint64_t)n), 3, "3");
	for (uint8_t k = 1; k <= 3; k++) {
		r = (struct cflow_record){ .name = 0x100 + k, .last_ns = 8000,
			.packets = k, .bytes = 40u * k,
			.reason = CFLOW_RECORD_END };
		TEST_ASSERT_EQ(cflow_recstore_name(b, k % 2, &r, 0, &out), 0,
			"named %u", k);
		TEST_ASSERT(out.flow_id == k && out.first_ns == 7000 &&
			out.last_ns == 8000 && out.sport == 1000 + k &&
			out.src[3] == k && out.port == 1 && out.packets == k,
			"flow %u", k);
	}
	/* the worker is part of the name */
	r.name = 0x101;
	TEST_ASSERT_EQ(cflow_recstore_name(b, 0, &r, 0, &out), -ENOENT,
		"worker 0 has no 0x101");
	e = store_event(9, 9000);
	TEST_ASSERT_EQ(cflow_recstore_add(b, 0, 0x200, &e), 4u, "next id");
	TEST_ASSERT_EQ(cflow_recstore_forget(b, 0, 0x200), 0, "forget");
	TEST_ASSERT_EQ(cflow_recstore_forget(b, 0, 0x200), -ENOENT, "gone");
	cflow_recstore_stats_get(b, &st);
	TEST_ASSERT(st.entries == 0 && st.unnamed == 1 && st.named == 3,
		"entries %lu unnamed %lu named %lu", (unsigned long)st.entries,
		(unsigned long)st.unnamed, (unsigned long)st.named);
	/* a smaller store: the rest counted full */
	c = cflow_recstore_create(2);
	TEST_ASSERT(c != NULL, "create");
	TEST_ASSERT_EQ(cflow_recstore_restore(c, buf, (uint64_t)n), 2, "2");
	cflow_recstore_stats_get(c, &st);
	TEST_ASSERT(st.entries == 2 && st.full == 1, "full %lu",
		(unsigned long)st.full);
	/* orphans: entries whose record started before a time go */
	TEST_ASSERT_EQ(cflow_recstore_expire(a, 150, 0, NULL), 1u, "flow 1 (100)");
	TEST_ASSERT_EQ(cflow_recstore_expire(a, 650, 0, NULL), 2u, "3 (300), 2 (600)");
	cflow_recstore_stats_get(a, &st);
	TEST_ASSERT(st.entries == 0 && st.expired == 3, "expired %lu",
		(unsigned long)st.expired);
	cflow_recstore_free(a);
	cflow_recstore_free(b);
	cflow_recstore_free(c);
	return 0;
}

/* Orphan expiry in steps: a pass in steps of 37 entries removes exactly
 * the live entries older than the limit, as one whole pass would, however
 * the steps fall and whatever moved in the index meanwhile (removals
 * between steps shift index slots; entries never move); a free entry is
 * never counted, nor a new flow that took an old flow's name; "done"
 * comes with the step that ends the pass, and the next pass starts over. */
static int
test_records_store_expire_steps(void)
{
	enum { CAP = 1000, STEP = 37 };
	static uint64_t time_of[CAP];   /* by name - 1; 0: not in */
	struct cflow_recstore *s = cflow_recstore_create(CAP);
	struct cflow_recstore_stats st;
	uint64_t x = 7, removed = 0, want = 0, calls = 0;
	struct cflow_record r = { .reason = CFLOW_RECORD_END };
	struct cflow_flow_record out;
	bool done = false;

	TEST_ASSERT(s != NULL, "create");
	for (uint64_t n = 1; n <= CAP; n++) {
		struct cflow_event e = store_event((uint8_t)n, n * 10);

		TEST_ASSERT(cflow_recstore_add(s, n % 3, n, &e) != 0, "%lu",
			(unsigned long)n);
		time_of[n - 1] = n * 10;
	}
	/* a third of them end; half of those come back newer */
	for (uint64_t k = 0; k < CAP / 3; k++) {
		uint64_t n;

		x = cfu_mix64(x + k);
		n = x % CAP + 1;
		if (time_of[n - 1] == 0)
			continue;
		TEST_ASSERT_EQ(cflow_recstore_forget(s, n % 3, n), 0, "forget");
		time_of[n - 1] = 0;
		if (x & 1) {
			struct cflow_event e = store_event((uint8_t)n, 20000 + n);

			TEST_ASSERT(cflow_recstore_add(s, n % 3, n, &e) != 0,
				"again");
			time_of[n - 1] = 20000 + n;
		}
	}
	for (uint64_t n = 1; n <= CAP; n++)
		want += time_of[n - 1] != 0 && time_of[n - 1] < 5000;
	TEST_ASSERT(want > 100, "%lu to expire", (unsigned long)want);
	while (!done) {
		uint64_t n;

		removed += cflow_recstore_expire(s, 5000, STEP, &done);
		calls++;
		/* between steps: one flow ends (its index cluster shifts) */
		x = cfu_mix64(x + calls);
		n = x % CAP + 1;
		if (time_of[n - 1] >= 5000) {
			TEST_ASSERT_EQ(cflow_recstore_forget(s, n % 3, n), 0,
				"end");
			time_of[n - 1] = 0;
		}
	}
	TEST_ASSERT_EQ(calls, (uint64_t)(CAP + STEP - 1) / STEP, "steps");
	TEST_ASSERT_EQ(removed, want, "removed");
	for (uint64_t n = 1; n <= CAP; n++) {
		r.name = n;
		TEST_ASSERT_EQ(cflow_recstore_name(s, n % 3, &r, 0, &out),
			time_of[n - 1] >= 5000 ? 0 : -ENOENT, "name %lu at %lu",
			(unsigned long)n, (unsigned long)time_of[n - 1]);
	}
	cflow_recstore_stats_get(s, &st);
	TEST_ASSERT(st.entries == 0 && st.expired == want, "entries %lu",
		(unsigned long)st.entries);
	/* the next pass starts at the first entry, whole */
	TEST_ASSERT_EQ(cflow_recstore_expire(s, UINT64_MAX - 1, 0, &done),
		0u, "empty");
	TEST_ASSERT(done, "one call, whole");
	cflow_recstore_free(s);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_records_params),
	TEST_CASE(test_records_model),
	TEST_CASE(test_records_overflow),
	TEST_CASE(test_records_evict_flush),
	TEST_CASE(test_records_restore),
	TEST_CASE(test_records_store_restart),
	TEST_CASE(test_records_store_expire_steps),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
