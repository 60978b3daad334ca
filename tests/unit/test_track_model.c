/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The tracker of lib/cflow against an exact model of its contract (a
 * table of keys, docs/design.md "Contract"): randomised runs, and the
 * scripted timelines of a closed flow's linger.
 */

#include <math.h>
#include <stdlib.h>

#include "cflow.h"
#include "cflow_test.h"
#include "packets.h"
#include "test.h"

/* ----------------------------------------------- randomised vs model */

struct model_flow {
	bool used;              /* first: lp_find() */
	bool closing;
	struct cflow_key key;
	uint8_t cls;
	uint64_t last_ns;
};

struct model {
	struct model_flow *slot;
	uint32_t size;
	struct cflow_counters c;
	uint64_t now_ns;
	uint64_t timeout_ns[CFLOW_CLASS_MAX], linger_ns;
	/* The rule before issue 12: the linger ran from the closing
	 * packet, however many packets of the flow came after it. */
	bool linger_from_close;
};

/* the head of struct model_flow_head */
_Static_assert(offsetof(struct model_flow, key) ==
	offsetof(struct model_flow_head, key), "model_flow's head");

static struct model_flow *
model_find(struct model *m, const struct cflow_key *k)
{
	return model_key_find(m->slot, sizeof(*m->slot), m->size, k);
}

static void
model_remove(struct model *m, struct model_flow *e)
{
	model_key_remove(m->slot, sizeof(*m->slot), m->size, e);
}

/* The tracker's contract, on exact keys and nanoseconds. Times are
 * drawn away from the coarse-tick boundaries (see model_run). */
static void
model_packet(struct model *m, const struct cflow_packet *p, uint64_t at)
{
	bool tcp = p->proto_class == CFLOW_CLASS_TCP;
	bool close = tcp && (p->tcp_flags & (CFLOW_TCP_FIN | CFLOW_TCP_RST));
	bool syn = tcp && (p->tcp_flags & (CFLOW_TCP_SYN | CFLOW_TCP_ACK)) ==
		CFLOW_TCP_SYN;
	struct model_flow *e;

	if (at > m->now_ns)
		m->now_ns = at;
	e = model_find(m, &p->key);
	if (e->used) {
		uint64_t age = m->now_ns - e->last_ns;

		if (!e->closing && age > m->timeout_ns[e->cls]) {
			model_remove(m, e);
			m->c.flows_expired++;
			m->c.active--;
		} else if (!e->closing) {
			if (close) {
				m->c.flows_closed++;
				m->c.active--;
				e->closing = true;
				e->last_ns = m->now_ns;
				return;
			}
			e->last_ns = m->now_ns;
			m->c.flows_seen++;
			return;
		} else if (age > m->linger_ns) {
			model_remove(m, e);
		} else if (syn) {
			model_remove(m, e);
			m->c.reused++;
			goto insert;
		} else {
			/* The linger restarts with each packet of the flow. */
			if (!m->linger_from_close)
				e->last_ns = m->now_ns;
			m->c.flows_seen++;
			return;
		}
	}
	if (close) {
		m->c.orphan_close++;
		return;
	}
insert:
	e = model_find(m, &p->key);
	e->used = true;
	e->key = p->key;
	e->closing = false;
	e->cls = p->proto_class;
	e->last_ns = m->now_ns;
	m->c.flows_new++;
	m->c.active++;
}

static void
model_sweep_all(struct model *m, uint64_t at)
{
	if (at > m->now_ns)
		m->now_ns = at;
	for (uint32_t i = 0; i < m->size; i++) {
		struct model_flow *e = &m->slot[i];
		uint64_t age;

		if (!e->used)
			continue;
		age = m->now_ns - e->last_ns;
		if (e->closing ? age > m->linger_ns :
				age > m->timeout_ns[e->cls]) {
			if (!e->closing) {
				m->c.flows_expired++;
				m->c.active--;
			}
			model_remove(m, e);
			i--; /* a moved entry may now sit here */
		}
	}
}

/*
 * Times step in whole seconds from a large base, with timeouts of whole
 * seconds plus half a second: an age is never within a tick of a
 * timeout, so the tracker's coarse clock and the model's nanoseconds
 * agree on every decision.
 */
/* With 16-bit values, class "other" gets a 300 s timeout (so 268 ms
 * ticks), and the clock now and then leaps 10 or 37 minutes: the
 * second is past the whole range of the stored ticks (36.6 minutes). */
static int
model_run(unsigned int fp_bits, unsigned int value_bits, uint64_t seed,
		struct cflow_counters *got, struct cflow_counters *want,
		struct cflow_counters *old)
{
	enum { FLOWS = 3000, PACKETS = 60000 };
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN,
		CFLOW_TCP_SYN | CFLOW_TCP_ACK, CFLOW_TCP_ACK, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK, CFLOW_TCP_RST };
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct model m = { .size = 8192 };
	struct model o = { .size = 8192, .linger_from_close = true };
	uint64_t rng = seed, at = 1000000 * S + S / 2;

	cflow_tracker_params_init(&p, 2 * FLOWS);
	p.fp_bits = fp_bits;
	p.value_bits = value_bits;
	p.seed = seed;
	for (int k = 0; k < CFLOW_CLASS_MAX; k++)
		p.timeout_ns[k] = (uint64_t)(5 + 3 * k) * S;
	if (value_bits == 16)
		p.timeout_ns[CFLOW_CLASS_OTHER] = 300 * S;
	p.close_linger_ns = 2 * S;
	t = cflow_tracker_create(&p);
	m.slot = calloc(m.size, sizeof(*m.slot));
	o.slot = calloc(o.size, sizeof(*o.slot));
	TEST_ASSERT(t != NULL && m.slot != NULL && o.slot != NULL, "create");
	memcpy(m.timeout_ns, p.timeout_ns, sizeof(m.timeout_ns));
	m.linger_ns = p.close_linger_ns;
	memcpy(o.timeout_ns, p.timeout_ns, sizeof(o.timeout_ns));
	o.linger_ns = p.close_linger_ns;

	for (int n = 0; n < PACKETS; n += CF_BULK_MAX) {
		struct cflow_input in[CF_BULK_MAX];
		uint8_t bufs[CF_BULK_MAX][256];
		struct cflow_packet pkts[CF_BULK_MAX];
		enum cflow_parse_status status[CF_BULK_MAX];

		/* Mostly forward; now and then a capture restarts. */
		if (cfu_splitmix64(&rng) % 1000 == 0)
			at -= 20 * S;
		else if (value_bits == 16 && cfu_splitmix64(&rng) % 400 == 0)
			at += (cfu_splitmix64(&rng) & 1 ? 600 : 2200) * S;
		else
			at += (cfu_splitmix64(&rng) % 3) * S;
		for (int k = 0; k < CF_BULK_MAX; k++) {
			uint32_t f = (uint32_t)(cfu_splitmix64(&rng) % FLOWS);
			static const uint8_t protos[] = { 6, 6, 17, 1, 47 };

			/* One packet in 8 goes to one of 32 hot TCP flows,
			 * which see packets while closing: lingers restart. */
			if (f % 8 == 0)
				f = f / 8 % 32 / 2 * 5 + f / 8 % 2;
			struct spec s = { .family = f % 3 ? 4 : 6,
				.src = (uint8_t)f, .dst = (uint8_t)(f >> 8),
				.sport = (uint16_t)(1024 + f), .dport = 80,
				.proto = protos[f % 5],
				.flags = flag_set[cfu_splitmix64(&rng) % 7] };
			struct cflow_packet *pkt = &pkts[k];

			if (cfu_splitmix64(&rng) & 1) { /* reply direction */
				s.src = (uint8_t)(f >> 8);
				s.dst = (uint8_t)f;
				s.sport = 80;
				s.dport = (uint16_t)(1024 + f);
			}
			in[k] = (struct cflow_input){ .data = bufs[k],
				.time_ns = at };
			in[k].len = in[k].wire_len = build(bufs[k], &s);
			status[k] = cflow_parse(bufs[k], in[k].len, NULL, pkt);
			model_packet(&m, pkt, at);
			model_packet(&o, pkt, at);
			m.c.packets++;
			o.c.packets++;
		}
		/* Every other burst comes parsed already, as with a
		 * blocklist: both entry points must agree with the model. */
		if (n / CF_BULK_MAX % 2)
			cflow_track_parsed(t, in, pkts, status, CF_BULK_MAX,
					NULL, NULL);
		else
			cflow_track_burst(t, in, CF_BULK_MAX, NULL);
		cflow_sweep(t, at);
	}
	cflow_sweep_all(t, at + 1000 * S);
	model_sweep_all(&m, at + 1000 * S);
	model_sweep_all(&o, at + 1000 * S);
	cflow_counters_get(t, got);
	*want = m.c;
	if (old != NULL)
		*old = o.c;
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	free(m.slot);
	free(o.slot);
	return 0;
}

/* 32-bit fingerprints: no false positive in these runs, so the tracker
 * must agree with the model exactly, with 32- and 16-bit values. */
static int
test_track_model_fp32_exact(void)
{
	for (uint64_t run = 0; run < 6; run++) {
		unsigned int value_bits = run < 3 ? 32 : 16;
		uint64_t seed = 1 + run % 3;
		struct cflow_counters g, w, o;

		TEST_ASSERT_EQ(model_run(32, value_bits, seed, &g, &w, &o), 0,
			"run");
		printf("# %u-bit values, seed %lu: new %lu seen %lu closed %lu "
			"expired %lu orphan %lu reused %lu; lingering from the "
			"close: new %lu orphan %lu reused %lu\n", value_bits,
			(unsigned long)seed, (unsigned long)w.flows_new,
			(unsigned long)w.flows_seen,
			(unsigned long)w.flows_closed,
			(unsigned long)w.flows_expired,
			(unsigned long)w.orphan_close, (unsigned long)w.reused,
			(unsigned long)o.flows_new,
			(unsigned long)o.orphan_close, (unsigned long)o.reused);
		TEST_ASSERT(g.flows_new == w.flows_new &&
			g.flows_seen == w.flows_seen &&
			g.flows_closed == w.flows_closed &&
			g.flows_expired == w.flows_expired &&
			g.orphan_close == w.orphan_close &&
			g.reused == w.reused && g.active == w.active &&
			g.flows_evicted == 0 && g.insert_failed == 0,
			"%u-bit values, seed %lu: tracker new %lu seen %lu "
			"closed %lu expired %lu orphan %lu reused %lu active %lu",
			value_bits, (unsigned long)seed,
			(unsigned long)g.flows_new,
			(unsigned long)g.flows_seen,
			(unsigned long)g.flows_closed,
			(unsigned long)g.flows_expired,
			(unsigned long)g.orphan_close, (unsigned long)g.reused,
			(unsigned long)g.active);
		TEST_ASSERT(w.flows_expired > 0 && w.flows_closed > 0 &&
			w.reused > 0 && w.orphan_close > 0,
			"the run did not exercise every transition");
		/* Packets of closing flows restart the linger: the old rule
		 * would have decided some of them otherwise. */
		TEST_ASSERT(o.flows_new != w.flows_new ||
			o.orphan_close != w.orphan_close ||
			o.reused != w.reused,
			"the run never restarted a linger that mattered");
	}
	return 0;
}

/* With short fingerprints a new flow can match another flow's entry (a
 * false positive): it is then counted seen, not new. The gap stays
 * within a generous multiple of the expected number of such events. */
static int
test_track_model_short_fp(void)
{
	static const unsigned int widths[] = { 12, 16 };

	for (unsigned int i = 0; i < 2; i++) {
		struct cflow_counters g, w;
		double lookups, expected, bound;

		TEST_ASSERT_EQ(model_run(widths[i], 32, 7, &g, &w, NULL), 0,
			"run");
		/* Each untracked packet's lookup compares with at most
		 * 2 * 4 entries of a table that is at most half full. */
		lookups = (double)(w.flows_new + w.orphan_close);
		expected = lookups * 8 * 0.5 / (double)(1u << widths[i]);
		bound = 10 + 4 * expected;
		printf("# f=%u: new %lu vs %lu, expected false positives "
			"%.1f\n", widths[i], (unsigned long)g.flows_new,
			(unsigned long)w.flows_new, expected);
		TEST_ASSERT(w.flows_new >= g.flows_new &&
			(double)(w.flows_new - g.flows_new) <= bound,
			"f=%u: %lu new vs %lu", widths[i],
			(unsigned long)g.flows_new, (unsigned long)w.flows_new);
		TEST_ASSERT(fabs((double)g.flows_seen - (double)w.flows_seen) <=
			3 * bound, "seen");
	}
	return 0;
}

/* -------------------------------------------- the linger follows the flow */

#define MS (S / 1000)
#define FIN_ACK (CFLOW_TCP_FIN | CFLOW_TCP_ACK)
#define SYN_ACK (CFLOW_TCP_SYN | CFLOW_TCP_ACK)

/* One packet of the scripted flow (tcp(), either direction) and its
 * verdict. */
struct linger_step {
	uint64_t at;
	bool reply;
	uint8_t flags;
	enum cflow_verdict want;
};

/* Counters of the exact model for @p steps, with the linger from each
 * packet of the closing flow, or (@p from_close) from the closing packet
 * only, as before issue 12. */
static int
linger_model(const struct linger_step *steps, unsigned int n, bool from_close,
		struct cflow_counters *c)
{
	struct cflow_tracker_params p;
	struct model m = { .size = 64, .linger_from_close = from_close };

	cflow_tracker_params_init(&p, 1000);
	memcpy(m.timeout_ns, p.timeout_ns, sizeof(m.timeout_ns));
	m.linger_ns = 10 * S;
	m.slot = calloc(m.size, sizeof(*m.slot));
	TEST_ASSERT(m.slot != NULL, "alloc");
	for (unsigned int k = 0; k < n; k++) {
		struct spec s = tcp(steps[k].flags, steps[k].reply);
		struct cflow_packet pkt;
		uint8_t buf[256];

		TEST_ASSERT_EQ(cflow_parse(buf, build(buf, &s), NULL, &pkt),
			CFLOW_PARSE_OK, "parse");
		model_packet(&m, &pkt, steps[k].at);
		m.c.packets++;
	}
	*c = m.c;
	free(m.slot);
	return 0;
}

static bool
linger_same(const struct cflow_counters *a, const struct cflow_counters *b)
{
	return a->flows_new == b->flows_new && a->flows_seen == b->flows_seen &&
		a->flows_closed == b->flows_closed &&
		a->flows_expired == b->flows_expired &&
		a->orphan_close == b->orphan_close &&
		a->reused == b->reused && a->active == b->active;
}

/*
 * Replay @p steps on a tracker with a 10 s linger, one packet at a time:
 * each verdict as scripted, the counters those of the model, and (the
 * old rule's) different for the same packets. Then the closed flow's
 * entry must still be there 9 s after the last packet, and gone 11 s
 * after it.
 */
static int
linger_replay(const struct linger_step *steps, unsigned int n,
		struct cflow_counters *got, struct cflow_counters *old)
{
	struct cflow_tracker *t = tracker(1000, 32, 10, CFLOW_FULL_EVICT);
	struct cflow_counters want;
	uint64_t last = steps[n - 1].at;
	struct cf_stats st;

	TEST_ASSERT(t != NULL, "create");
	for (unsigned int k = 0; k < n; k++) {
		struct spec s = tcp(steps[k].flags, steps[k].reply);
		enum cflow_verdict v = send(t, &s, steps[k].at);

		TEST_ASSERT_EQ(v, steps[k].want, "packet %u at %.3f s: "
			"verdict %d, want %d", k, (double)steps[k].at / S, v,
			steps[k].want);
	}
	cflow_counters_get(t, got);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	TEST_ASSERT_EQ(linger_model(steps, n, false, &want), 0, "model");
	TEST_ASSERT_EQ(linger_model(steps, n, true, old), 0, "old model");
	TEST_ASSERT(linger_same(got, &want), "tracker and model differ: "
		"new %lu/%lu seen %lu/%lu closed %lu/%lu orphan %lu/%lu",
		(unsigned long)got->flows_new, (unsigned long)want.flows_new,
		(unsigned long)got->flows_seen, (unsigned long)want.flows_seen,
		(unsigned long)got->flows_closed,
		(unsigned long)want.flows_closed,
		(unsigned long)got->orphan_close,
		(unsigned long)want.orphan_close);
	TEST_ASSERT(!linger_same(old, &want), "the old rule gives the same "
		"counters");
	cflow_sweep_all(t, last + 9 * S);
	cf_stats(cflow_tracker_filter(t), &st);
	TEST_ASSERT_EQ(st.items, 1u, "9 s after the last packet: the closed "
		"flow lingers");
	cflow_sweep_all(t, last + 11 * S);
	cf_stats(cflow_tracker_filter(t), &st);
	TEST_ASSERT_EQ(st.items, 0u, "11 s after the last packet: removed");
	cflow_counters_get(t, got);
	TEST_ASSERT(got->flows_expired == 0 && got->flows_closed == 1,
		"the linger's end is not counted");
	cflow_tracker_free(t);
	return 0;
}

/*
 * The server's FIN retransmitted every 3 s for 12 s, linger 10 s: one
 * flow, closed once; the retransmissions and the client's late FIN are
 * packets of the closed flow, not orphan closes. From the first FIN, the
 * linger ended before the 14 s retransmission: 2 orphan closes.
 */
static int
test_track_linger_fin_retransmitted(void)
{
	static const struct linger_step steps[] = {
		{ 1000 * MS, false, CFLOW_TCP_SYN, CFLOW_NEW },
		{ 1010 * MS, true, SYN_ACK, CFLOW_SEEN },
		{ 1020 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 1500 * MS, true, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 2000 * MS, true, FIN_ACK, CFLOW_CLOSING },
		{ 5000 * MS, true, FIN_ACK, CFLOW_SEEN },
		{ 8000 * MS, true, FIN_ACK, CFLOW_SEEN },
		{ 11000 * MS, true, FIN_ACK, CFLOW_SEEN },
		{ 14000 * MS, true, FIN_ACK, CFLOW_SEEN },
		{ 14200 * MS, false, FIN_ACK, CFLOW_SEEN },
		{ 14300 * MS, true, CFLOW_TCP_ACK, CFLOW_SEEN },
	};
	enum { N = sizeof(steps) / sizeof(steps[0]) };
	struct cflow_counters c, old;

	TEST_ASSERT_EQ(linger_replay(steps, N, &c, &old), 0, "replay");
	TEST_ASSERT(c.flows_new == 1 && c.flows_closed == 1 &&
		c.flows_seen == 9 && c.orphan_close == 0 && c.active == 0,
		"new %lu closed %lu seen %lu orphan %lu",
		(unsigned long)c.flows_new, (unsigned long)c.flows_closed,
		(unsigned long)c.flows_seen, (unsigned long)c.orphan_close);
	/* From the first FIN: the 14 s retransmission and the client's FIN
	 * are orphan closes, the last ACK a second flow. */
	TEST_ASSERT(old.flows_new == 2 && old.flows_closed == 1 &&
		old.flows_seen == 6 && old.orphan_close == 2 &&
		old.active == 1, "old rule: new %lu closed %lu seen %lu "
		"orphan %lu", (unsigned long)old.flows_new,
		(unsigned long)old.flows_closed, (unsigned long)old.flows_seen,
		(unsigned long)old.orphan_close);
	return 0;
}

/*
 * Half closed: after the server's FIN (at 10 s) the client keeps sending
 * data every 2 s for 11 s, then closes its side. One flow, closed once.
 * From the server's FIN, the linger ended before the client's 21 s
 * packet: a second flow, closed again by the client's FIN.
 */
static int
test_track_linger_half_closed(void)
{
	static const struct linger_step steps[] = {
		{ 1000 * MS, false, CFLOW_TCP_SYN, CFLOW_NEW },
		{ 1010 * MS, true, SYN_ACK, CFLOW_SEEN },
		{ 1020 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 5000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 10000 * MS, true, FIN_ACK, CFLOW_CLOSING },
		{ 12000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 14000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 16000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 18000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 20000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 21000 * MS, false, CFLOW_TCP_ACK, CFLOW_SEEN },
		{ 21500 * MS, false, FIN_ACK, CFLOW_SEEN },
		{ 21600 * MS, true, CFLOW_TCP_ACK, CFLOW_SEEN },
	};
	enum { N = sizeof(steps) / sizeof(steps[0]) };
	struct cflow_counters c, old;

	TEST_ASSERT_EQ(linger_replay(steps, N, &c, &old), 0, "replay");
	TEST_ASSERT(c.flows_new == 1 && c.flows_closed == 1 &&
		c.flows_seen == 11 && c.orphan_close == 0 && c.active == 0,
		"new %lu closed %lu seen %lu orphan %lu",
		(unsigned long)c.flows_new, (unsigned long)c.flows_closed,
		(unsigned long)c.flows_seen, (unsigned long)c.orphan_close);
	TEST_ASSERT(old.flows_new == 2 && old.flows_closed == 2 &&
		old.flows_seen == 9 && old.orphan_close == 0 &&
		old.active == 0, "old rule: new %lu closed %lu seen %lu "
		"orphan %lu", (unsigned long)old.flows_new,
		(unsigned long)old.flows_closed, (unsigned long)old.flows_seen,
		(unsigned long)old.orphan_close);
	return 0;
}

/*
 * A SYN on a closing flow is a new connection however long the linger
 * was kept alive: reused, and the new flow open.
 */
static int
test_track_linger_reuse_after_restarts(void)
{
	struct cflow_tracker *t = tracker(1000, 32, 10, CFLOW_FULL_EVICT);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cflow_counters c;

	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send(t, &syn, S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &fin, 2 * S), CFLOW_CLOSING, "FIN");
	for (uint64_t k = 1; k <= 5; k++)
		TEST_ASSERT_EQ(send(t, &ack, 2 * S + k * 4 * S), CFLOW_SEEN,
			"ACK %lu while closing", (unsigned long)k);
	/* 25 s after the FIN, 3 s after the last packet. */
	TEST_ASSERT_EQ(send(t, &syn, 25 * S), CFLOW_NEW, "SYN while closing");
	TEST_ASSERT_EQ(send(t, &ack, 40 * S), CFLOW_SEEN, "the new flow");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.reused == 1 && c.flows_new == 2 && c.flows_closed == 1 &&
		c.active == 1 && c.orphan_close == 0, "reused %lu new %lu "
		"closed %lu active %lu", (unsigned long)c.reused,
		(unsigned long)c.flows_new, (unsigned long)c.flows_closed,
		(unsigned long)c.active);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/*
 * flow_time: packets of a closing flow restamp it as an open flow's do,
 * with the later of its stamp and the packet's time. The flow closes at
 * 10 s; another flow moves the clock to 30 s; the closing flow's packets
 * at 15 s and 20 s (their own times) keep it, a packet at 12 s (earlier
 * than its stamp) does not take the stamp back, and one at 29 s, 9 s
 * after its latest packet, still finds it: from 12 s or from the FIN, it
 * would have ended.
 */
static int
test_track_linger_flow_time(void)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct spec g = { .family = 4, .src = 7, .dst = 8, .sport = 53,
		.dport = 53, .proto = 17 };
	struct cflow_counters c;

	cflow_tracker_params_init(&p, 1000);
	p.seed = 42;
	p.fp_bits = 32;
	p.flow_time = true;
	p.close_linger_ns = 10 * S;
	t = cflow_tracker_create(&p);
	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send(t, &syn, 1 * S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &fin, 10 * S), CFLOW_CLOSING, "FIN");
	TEST_ASSERT_EQ(send(t, &g, 30 * S), CFLOW_NEW, "other stream");
	TEST_ASSERT_EQ(send(t, &ack, 15 * S), CFLOW_SEEN, "ACK at 15 s");
	TEST_ASSERT_EQ(send(t, &ack, 20 * S), CFLOW_SEEN, "ACK at 20 s");
	TEST_ASSERT_EQ(send(t, &ack, 12 * S), CFLOW_SEEN, "ACK at 12 s");
	TEST_ASSERT_EQ(send(t, &ack, 29 * S), CFLOW_SEEN, "ACK at 29 s");
	/* 38 s: 9 s after the 29 s packet; 49 s: 11 s after the 38 s one. */
	TEST_ASSERT_EQ(send(t, &ack, 38 * S), CFLOW_SEEN, "ACK at 38 s");
	TEST_ASSERT_EQ(send(t, &ack, 49 * S), CFLOW_NEW, "ACK at 49 s");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 3 && c.flows_closed == 1 &&
		c.flows_seen == 5 && c.orphan_close == 0, "new %lu closed %lu "
		"seen %lu", (unsigned long)c.flows_new,
		(unsigned long)c.flows_closed, (unsigned long)c.flows_seen);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_track_model_fp32_exact),
	TEST_CASE(test_track_model_short_fp),
	TEST_CASE(test_track_linger_fin_retransmitted),
	TEST_CASE(test_track_linger_half_closed),
	TEST_CASE(test_track_linger_reuse_after_restarts),
	TEST_CASE(test_track_linger_flow_time),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
