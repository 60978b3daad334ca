/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The tracker's clock (issue 24): one notion of the latest time seen,
 * every packet's time counting in order whether it parses or not, and a
 * leap of the clock that keeps, with flow_time, the flows of a stream
 * still behind: merged streams, none more than the lag ahead of the
 * watermark, get the decisions of a time-ordered replay across leaps.
 */

#include <stdlib.h>

#include "cflow.h"
#include "cflow_test.h"
#include "packets.h"
#include "test.h"

#define DAY (86400 * S)

/* ----------------------------------------------------------- frames */

enum frame_kind {
	FRAME_UDP,      /* IPv4 UDP 10.0.0.src:sport -> 10.0.1.1:53 */
	FRAME_TCP,      /* IPv4 TCP, flags */
	FRAME_ARP,      /* non-IP */
	FRAME_BAD_IP,   /* IPv4 ethertype, version 5: malformed */
};

struct frame {
	enum frame_kind kind;
	uint16_t flow;  /* source address and port */
	uint8_t flags;  /* TCP */
};

/* The frame's bytes into @p b (64 bytes at least, zeroed); its
 * length. */
static uint32_t
frame_build(uint8_t *b, const struct frame *f)
{
	const struct pkt_spec s = {
		.family = 4,
		.src = UINT32_C(0x0a000000) | f->flow,
		.dst = UINT32_C(0x0a000101),
		.sport = (uint16_t)(1024 + f->flow),
		.dport = f->kind == FRAME_TCP ? 80 : 53,
		.proto = f->kind == FRAME_TCP ? 6 : 17,
		.flags = f->flags,
	};
	uint32_t len;

	memset(b, 0, 64);
	if (f->kind == FRAME_ARP)
		return pkt_arp(b);
	len = pkt_frame(b, &s);
	if (f->kind == FRAME_BAD_IP)
		b[14] = 0x55;   /* IP version 5 */
	return len;
}

struct timed {
	uint64_t at;
	struct frame f;
};

/* Track @p n frames in bursts of @p burst; verdicts into @p v. */
static void
feed(struct cflow_tracker *t, const struct timed *p, unsigned int n,
		unsigned int burst, enum cflow_verdict *v)
{
	for (unsigned int k = 0; k < n; k += burst) {
		static uint8_t bufs[CF_BULK_MAX][64];
		struct cflow_input in[CF_BULK_MAX];
		unsigned int m = n - k < burst ? n - k : burst;

		for (unsigned int j = 0; j < m; j++) {
			in[j] = (struct cflow_input){ .data = bufs[j],
				.time_ns = p[k + j].at };
			in[j].len = in[j].wire_len = frame_build(bufs[j],
				&p[k + j].f);
		}
		cflow_track_burst(t, in, m, v + k);
	}
}

static struct cflow_tracker *
clock_tracker(unsigned int value_bits, bool flow_time, uint64_t udp_timeout)
{
	struct cflow_tracker_params p;

	cflow_tracker_params_init(&p, 4096);
	p.fp_bits = 32;
	p.seed = 9;
	p.value_bits = value_bits;
	p.flow_time = flow_time;
	if (udp_timeout != 0)
		p.timeout_ns[CFLOW_CLASS_UDP] = udp_timeout;
	return cflow_tracker_create(&p);
}

/* ------------------------------------------- unparsed frames' times */

/*
 * UDP flow A at t, then a frame that does not parse at t + 1000 s, then
 * UDP flow B at t + 10 s, which counts as t + 1000 s (time never goes
 * back): at the end, as of t + 1000 s, A has been idle 1000 s (expired)
 * and B none (active), however the three are cut into bursts. The
 * tracker moved its clock by an unparsed frame only at the end of its
 * burst: in one burst B was stamped t + 10 s and expired at the end.
 */
static int
test_clock_unparsed_frames_count(void)
{
	static const enum frame_kind kinds[] = { FRAME_ARP, FRAME_BAD_IP };
	const uint64_t t0 = 1700000000 * S;

	for (unsigned int k = 0; k < 2; k++)
		for (unsigned int burst = 1; burst <= 3; burst++)
			for (int ft = 0; ft < 2; ft++) {
		const struct timed p[] = {
			{ t0, { FRAME_UDP, 1, 0 } },
			{ t0 + 1000 * S, { kinds[k], 0, 0 } },
			{ t0 + 10 * S, { FRAME_UDP, 2, 0 } },
		};
		struct cflow_tracker *t = clock_tracker(32, ft, 0);
		enum cflow_verdict v[3];
		struct cflow_counters c;

		TEST_ASSERT(t != NULL, "create");
		feed(t, p, 3, burst, v);
		/* The end of the run: its latest time, the unparsed
		 * frame's. */
		cflow_sweep_all(t, t0 + 1000 * S);
		cflow_counters_get(t, &c);
		/* With flow_time the caller gives each packet its stream's
		 * latest time (cflow_track.h): here B's own, 990 s idle at the
		 * end. */
		if (ft)
			TEST_ASSERT(c.flows_new == 2 && c.flows_expired == 2 &&
				c.active == 0, "flow_time");
		else
			TEST_ASSERT(c.flows_new == 2 && c.flows_expired == 1 &&
				c.active == 1, "%s, bursts of %u: expired %lu "
				"active %lu (want 1, 1)", k == 0 ? "non-IP" :
				"malformed", burst,
				(unsigned long)c.flows_expired,
				(unsigned long)c.active);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

/* ------------------------------------------------- leaps, flow_time */

/*
 * Stream A carries UDP flow F (20-day timeout) at t0 and t0 + 15 days;
 * stream B flow G at t0 + 27 days, more than a quarter of the 32-bit tick
 * range (26 days) after F's first packet. A tracker at t0 takes G before
 * F's second packet, G no more than the lag (13 days) ahead of the
 * watermark (A's next packet, 15 days): the leap of its clock must not
 * expire F, live until t0 + 20 days, as a time-ordered replay finds it
 * at 15 days. The same scaled to 16-bit values (400 s timeout, a 550 s
 * quarter range, a 275 s lag).
 */
static int
test_clock_leap_keeps_lagging_stream(void)
{
	for (int bits = 0; bits < 2; bits++) {
		/* one unit: a day with 32-bit values, 20 s with 16-bit ones */
		const uint64_t u = bits == 0 ? DAY : 20 * S;
		const uint64_t t0 = 1700000000 * S;
		const struct timed arrival[] = {
			{ t0, { FRAME_UDP, 1, 0 } },
			{ t0 + 27 * u + u / 2, { FRAME_UDP, 2, 0 } },
			{ t0 + 15 * u, { FRAME_UDP, 1, 0 } },
		};
		const struct timed ordered[] = {
			arrival[0], arrival[2], arrival[1],
		};
		const unsigned int value_bits = bits == 0 ? 32 : 16;
		struct cflow_tracker *t = clock_tracker(value_bits, true,
			20 * u);
		struct cflow_tracker *o = clock_tracker(value_bits, false,
			20 * u);
		enum cflow_verdict v[3], w[3];
		struct cflow_counters c, want;
		uint64_t lag;

		TEST_ASSERT(t != NULL && o != NULL, "create");
		lag = cflow_tracker_lag_ns(t);
		/* G is within the lag of the watermark, and the leap's gap
		 * over a quarter range (twice the lag). */
		TEST_ASSERT(arrival[1].at - lag <= arrival[2].at &&
			arrival[1].at - arrival[0].at > 2 * lag,
			"%u-bit values: lag %lu ns", value_bits,
			(unsigned long)lag);
		feed(t, arrival, 1, 1, v);
		cflow_sweep_at(t, t0, t0);
		feed(t, arrival + 1, 1, 1, v + 1);
		cflow_sweep_at(t, arrival[1].at, arrival[2].at);
		feed(t, arrival + 2, 1, 1, v + 2);
		cflow_sweep_all(t, arrival[1].at);
		/* The time-ordered replay, on a tracker of its own. */
		feed(o, ordered, 3, 1, w);
		cflow_sweep_all(o, arrival[1].at);
		TEST_ASSERT(w[0] == CFLOW_NEW && w[1] == CFLOW_SEEN &&
			w[2] == CFLOW_NEW, "ordered replay");
		TEST_ASSERT_EQ(v[2], CFLOW_SEEN, "%u-bit values: F 15 units "
			"on, after G's leap: verdict %d", value_bits, v[2]);
		TEST_ASSERT(v[0] == w[0] && v[1] == w[2], "verdicts");
		cflow_counters_get(t, &c);
		cflow_counters_get(o, &want);
		TEST_ASSERT(c.flows_new == want.flows_new &&
			c.flows_seen == want.flows_seen &&
			c.flows_expired == want.flows_expired &&
			c.active == want.active, "%u-bit values: new %lu "
			"expired %lu active %lu, ordered %lu %lu %lu",
			value_bits, (unsigned long)c.flows_new,
			(unsigned long)c.flows_expired,
			(unsigned long)c.active,
			(unsigned long)want.flows_new,
			(unsigned long)want.flows_expired,
			(unsigned long)want.active);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
		cflow_tracker_free(o);
	}
	return 0;
}

/*
 * Randomised: flows over two streams (by flow) in epochs of packets
 * close together, between which no packet comes for 130 to 150 units
 * (1/1000 of the tick range: longer than the lag, 125, shorter than the
 * timeouts, 150 to 200), one stream often starting an epoch 100 to 124
 * units after the other. Merged so that no packet is tracked more than
 * the lag ahead of the watermark (the least over the streams of their
 * next packet's time), the stream ahead first three times in four: the
 * late stream's first packet moves the clock by up to 274 units, more
 * than a quarter range, over flows of the other stream that the epoch's
 * packets find alive. A flow_time tracker sweeping as of the watermark
 * must give every verdict and counter of the time-ordered replay, with
 * 32- and 16-bit values.
 */
enum { LM_FLOWS = 40, LM_EPOCH = 40, LM_PACKETS = 6000, LM_BURST = 8 };

struct lm_pkt {
	uint64_t at;
	struct frame f;
	uint8_t stream;
};

static struct cflow_tracker *
lm_tracker(unsigned int value_bits, bool flow_time, uint64_t u)
{
	struct cflow_tracker_params p;

	cflow_tracker_params_init(&p, 4 * LM_FLOWS);
	p.fp_bits = 32;
	p.seed = 11;
	p.value_bits = value_bits;
	p.flow_time = flow_time;
	/* u is 1/1000 of the tick range: timeouts of 0.15 to 0.2 of it,
	 * under its quarter, past the lag (1/8). */
	p.timeout_ns[CFLOW_CLASS_TCP] = 200 * u;
	p.timeout_ns[CFLOW_CLASS_UDP] = 180 * u;
	p.timeout_ns[CFLOW_CLASS_ICMP] = 150 * u;
	p.timeout_ns[CFLOW_CLASS_OTHER] = 190 * u;
	p.close_linger_ns = 100 * u;
	return cflow_tracker_create(&p);
}

/* Feed packets @p idx in bursts; with @p merged, sweep as of the
 * watermark (the next packet's time of each stream with packets left). */
static int
lm_feed(const struct lm_pkt *pk, const uint32_t *idx, unsigned int bits,
		uint64_t u, bool merged, enum cflow_verdict *v,
		struct cflow_counters *c, uint64_t *lag_out)
{
	struct cflow_tracker *t = lm_tracker(bits, merged, u);
	uint64_t latest = 0;
	uint32_t next[2] = { 0, 0 };

	TEST_ASSERT(t != NULL, "create");
	*lag_out = cflow_tracker_lag_ns(t);
	for (uint32_t n = 0; n < LM_PACKETS; n += LM_BURST) {
		static uint8_t bufs[LM_BURST][64];
		struct cflow_input in[LM_BURST];
		enum cflow_verdict vb[LM_BURST];
		uint64_t mark = UINT64_MAX;

		for (int k = 0; k < LM_BURST; k++) {
			const struct lm_pkt *p = &pk[idx[n + k]];

			in[k] = (struct cflow_input){ .data = bufs[k],
				.time_ns = p->at };
			in[k].len = in[k].wire_len = frame_build(bufs[k],
				&p->f);
			if (p->at > latest)
				latest = p->at;
		}
		cflow_track_burst(t, in, LM_BURST, vb);
		for (int k = 0; k < LM_BURST; k++)
			v[idx[n + k]] = vb[k];
		for (int s = 0; s < 2; s++) {
			while (next[s] < LM_PACKETS &&
					(pk[next[s]].stream != s ||
					 v[next[s]] != CFLOW_VERDICT_MAX))
				next[s]++;
			if (next[s] < LM_PACKETS && pk[next[s]].at < mark)
				mark = pk[next[s]].at;
		}
		if (merged)
			cflow_sweep_at(t, latest, mark == UINT64_MAX ?
				latest : mark);
		else
			cflow_sweep(t, latest);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	}
	cflow_sweep_all(t, latest);
	cflow_counters_get(t, c);
	cflow_tracker_free(t);
	return 0;
}

static int
test_clock_leap_merged_streams(void)
{
	static const uint8_t flags[] = { 0x02, 0x12, 0x10, 0x10, 0x10, 0x11,
		0x04 };
	struct lm_pkt *pk = malloc(LM_PACKETS * sizeof(*pk));
	uint32_t *seq = malloc(LM_PACKETS * sizeof(*seq));
	uint32_t *order = malloc(LM_PACKETS * sizeof(*order));
	enum cflow_verdict *want = malloc(LM_PACKETS * sizeof(*want));
	enum cflow_verdict *got = malloc(LM_PACKETS * sizeof(*got));

	TEST_ASSERT(pk && seq && order && want && got, "alloc");
	for (uint64_t run = 0; run < 4; run++) {
		const unsigned int bits = run < 2 ? 32 : 16;
		/* 1/1000 of the range: 2^53 ns with 32-bit values and their
		 * 2^24 ns ticks; 2^41 ns with 16-bit ones, whose timeouts
		 * here take 2^28 ns ticks. */
		const uint64_t u = (UINT64_C(1) << (bits == 32 ? 53 : 41)) /
			1000;
		uint64_t rng = 77 + run, at = 1700000000 * S, lag, ahead = 0;
		uint32_t pos[2] = { 0, 0 }, n = 0, leaps = 0;
		struct cflow_counters cw, cg;

		for (uint32_t k = 0; k < LM_PACKETS; k += 2 * LM_EPOCH) {
			uint64_t start = at + (k != 0 ? (130 +
				cfu_splitmix64(&rng) % 21) * u : 0);
			unsigned int late = cfu_splitmix64(&rng) & 1;
			uint64_t delay = cfu_splitmix64(&rng) % 4 == 0 ? 0 :
				(100 + cfu_splitmix64(&rng) % 25) * u;
			uint64_t ts[2];
			uint32_t made[2] = { 0, 0 };

			ts[late] = start + delay;
			ts[!late] = start;
			/* Each stream's epoch in its order, merged by time. */
			for (uint32_t j = k; j < k + 2 * LM_EPOCH; j++) {
				int s = made[0] == LM_EPOCH ? 1 :
					made[1] == LM_EPOCH ? 0 :
					ts[1] < ts[0];
				uint32_t f;

				do
					f = (uint32_t)(cfu_splitmix64(&rng) %
						LM_FLOWS);
				while ((cfu_mix64(f + run) & 1) != (unsigned)s);
				pk[j] = (struct lm_pkt){ .at = ts[s],
					.f = { f % 3 ? FRAME_UDP : FRAME_TCP,
						(uint16_t)f, flags[
						cfu_splitmix64(&rng) % 7] },
					.stream = (uint8_t)s };
				at = ts[s] > at ? ts[s] : at;
				ts[s] += cfu_splitmix64(&rng) % (2 * u);
				made[s]++;
				seq[j] = j;
				want[j] = got[j] = CFLOW_VERDICT_MAX;
			}
		}
		TEST_ASSERT_EQ(lm_feed(pk, seq, bits, u, false, want, &cw,
			&lag), 0, "ordered");
		/* Merge: each stream in its order, the next packet taken
		 * from a stream whose next is within the lag of the
		 * watermark, the one ahead three times in four. */
		while (n < LM_PACKETS) {
			uint64_t t[2], mark;
			int s;

			for (int i = 0; i < 2; i++) {
				while (pos[i] < LM_PACKETS &&
						pk[pos[i]].stream != i)
					pos[i]++;
				t[i] = pos[i] < LM_PACKETS ? pk[pos[i]].at :
					UINT64_MAX;
			}
			mark = t[0] < t[1] ? t[0] : t[1];
			s = t[0] < t[1] ? 0 : 1;
			if (t[!s] != UINT64_MAX && t[!s] - mark <= lag &&
					cfu_splitmix64(&rng) % 4 != 0)
				s = !s;
			if (pk[pos[s]].at - mark > ahead)
				ahead = pk[pos[s]].at - mark;
			order[n++] = pos[s]++;
		}
		TEST_ASSERT_EQ(lm_feed(pk, order, bits, u, true, got, &cg,
			&lag), 0, "merged");
		/* How often the merged clock moved by over a quarter range
		 * at once: the leaps the merge makes. */
		for (uint32_t k = 0, front = 0; k < LM_PACKETS; k++) {
			uint64_t x = pk[order[k]].at;

			if (k != 0 && x > pk[front].at + 2 * lag)
				leaps++;
			if (k == 0 || x > pk[front].at)
				front = order[k];
		}
		printf("# %u-bit values: %u leaps, up to %.3f of the lag "
			"ahead; new %lu expired %lu closed %lu active %lu\n",
			bits, leaps, (double)ahead / (double)lag,
			(unsigned long)cw.flows_new,
			(unsigned long)cw.flows_expired,
			(unsigned long)cw.flows_closed,
			(unsigned long)cw.active);
		TEST_ASSERT(leaps > 0 && cw.flows_expired > 0 &&
			cw.flows_closed > 0, "the run did not leap or expire");
		for (uint32_t k = 0; k < LM_PACKETS; k++)
			TEST_ASSERT_EQ(got[k], want[k], "%u-bit values, packet "
				"%u: %d, %d in time order", bits, k, got[k],
				want[k]);
		TEST_ASSERT(cg.flows_new == cw.flows_new &&
			cg.flows_seen == cw.flows_seen &&
			cg.flows_closed == cw.flows_closed &&
			cg.flows_expired == cw.flows_expired &&
			cg.orphan_close == cw.orphan_close &&
			cg.active == cw.active, "%u-bit values: counters",
			bits);
	}
	free(pk);
	free(seq);
	free(order);
	free(want);
	free(got);
	return 0;
}

/* ------------------------------------- steps just under a quarter */

/*
 * A sparse capture with 16-bit values and the default timeouts (268 ms
 * ticks, an 8192-tick range of 36.6 minutes, a quarter of 549 s): UDP
 * flow A at t0, then one packet each of flows B1..B5 a fifth of the
 * range plus 1 s (440 s) apart, then A again 1 s after B5: the range
 * plus 6 s after its first packet. No move of the clock is a leap (each
 * under a quarter), but together they go round the range: read modulo
 * the range, A's age is 6 s, under the 60 s UDP timeout. The model
 * (a flow whose previous packet is over its timeout ago is new) says A's
 * second packet is NEW, as is every B's; at the end B5 (1 s idle) and A
 * are active. In bursts of 1 to 7 packets, with or without a paced sweep
 * after each burst (the application's; also bounded to 8 buckets a
 * call, so a pass takes many calls), with and without flow_time, and
 * with 2 count bits (--mirror-first: 1.07 s ticks, a quarter of 549 s).
 */
static int
test_clock_steps_under_quarter(void)
{
	static const char *const sweep_name[] = {
		"no sweep", "sweep", "sweep of 8 buckets",
	};
	unsigned int bad = 0;

	for (unsigned int cb = 0; cb <= 2; cb += 2)
	for (unsigned int burst = 1; burst <= 7; burst++)
	for (int sweep = 0; sweep < 3; sweep++)
	for (int ft = 0; ft < 2; ft++) {
		/* 2^28 ns ticks, 2^30 with 2 count bits (design.md) */
		const uint64_t tick = UINT64_C(1) << (28 + cb);
		const uint64_t range = (UINT64_C(8192) >> cb) * tick;
		const uint64_t step = range / 5 + S;
		const uint64_t t0 = (UINT64_C(1700000000) * S / tick) * tick;
		struct timed p[7];
		enum cflow_verdict v[7];
		struct cflow_tracker_params pp;
		struct cflow_tracker *t;
		struct cflow_counters c;

		p[0] = (struct timed){ t0, { FRAME_UDP, 1, 0 } };
		for (unsigned int k = 1; k <= 5; k++)
			p[k] = (struct timed){ t0 + k * step,
				{ FRAME_UDP, (uint16_t)(1 + k), 0 } };
		p[6] = (struct timed){ t0 + 5 * step + S,
			{ FRAME_UDP, 1, 0 } };
		/* the case: over the range, under it plus the timeout */
		TEST_ASSERT(p[6].at - t0 > range &&
			p[6].at - t0 < range + 30 * S &&
			step < range / 4, "case");
		cflow_tracker_params_init(&pp, 4096);
		pp.fp_bits = 32;
		pp.seed = 9;
		pp.value_bits = 16;
		pp.count_bits = cb;
		pp.flow_time = ft;
		if (sweep == 2)
			pp.sweep_max_buckets = 8;
		t = cflow_tracker_create(&pp);
		TEST_ASSERT(t != NULL, "create");
		for (unsigned int k = 0; k < 7; k += burst) {
			unsigned int m = 7 - k < burst ? 7 - k : burst;

			feed(t, p + k, m, m, v + k);
			if (sweep != 0)
				cflow_sweep(t, p[k + m - 1].at);
		}
		cflow_sweep_all(t, p[6].at);
		cflow_counters_get(t, &c);
		/* every case is reported, then the test fails */
		for (unsigned int k = 0; k < 7; k++)
			if (v[k] != CFLOW_NEW) {
				printf("# %u count bits, bursts of %u, %s, "
					"flow_time %d: packet %u (%s) verdict "
					"%d, want NEW (%lu s idle)\n", cb,
					burst, sweep_name[sweep], ft, k,
					k == 6 ? "A again" : "a new flow",
					v[k], (unsigned long)(k == 6 ?
					(p[6].at - t0) / S : 0));
				bad++;
			}
		if (c.flows_new != 7 || c.active != 2 ||
				c.flows_expired != 5) {
			printf("# %u count bits, bursts of %u, %s, flow_time "
				"%d: new %lu expired %lu active %lu (want 7 5 "
				"2)\n", cb, burst, sweep_name[sweep], ft,
				(unsigned long)c.flows_new,
				(unsigned long)c.flows_expired,
				(unsigned long)c.active);
			bad++;
		}
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	TEST_ASSERT_EQ(bad, 0u, "misread ages");
	return 0;
}

/*
 * Randomised, against a model of the contract: 64 UDP flows, 3000
 * packets whose times move by 0-2 s (70%), 10-100 s (20%) or 300-540 s
 * (10%: under a quarter of the 549 s, no leap), in bursts of 1 to 8,
 * swept after a burst one time in two, with 16-bit values (0 and 2 count
 * bits), flow_time off and on, the sweep bounded to 8 or 64 buckets a
 * call, 4 seeds. A packet whose flow's previous one is no more than the
 * 60 s timeout ago is SEEN, more than the timeout and 5 ticks ago NEW
 * (the tracker's truncated ticks decide in between). The old tracker
 * read ages modulo the range once the clock went round it between whole
 * sweep passes.
 */
static int
test_clock_sparse_model(void)
{
	enum { FLOWS = 64, PACKETS = 3000 };
	unsigned int bad = 0, checked = 0;

	for (unsigned int cb = 0; cb <= 2; cb += 2)
	for (int ft = 0; ft < 2; ft++)
	for (unsigned int maxb = 8; maxb <= 64; maxb *= 8)
	for (uint64_t seed = 1; seed <= 4; seed++) {
		const uint64_t tick = UINT64_C(1) << (28 + cb);
		const uint64_t timeout = 60 * S;
		static struct timed p[PACKETS];
		static enum cflow_verdict v[PACKETS];
		uint64_t last[FLOWS] = { 0 };
		uint64_t rng = seed * 1000 + cb * 10 + (uint64_t)ft + maxb;
		uint64_t at = 1700000000 * S;
		struct cflow_tracker_params pp;
		struct cflow_tracker *t;

		for (unsigned int k = 0; k < PACKETS; k++) {
			uint64_t r = cfu_splitmix64(&rng) % 10;

			at += r < 7 ? cfu_splitmix64(&rng) % (2 * S) :
				r < 9 ? 10 * S + cfu_splitmix64(&rng) %
				(90 * S) : 300 * S + cfu_splitmix64(&rng) %
				(240 * S);
			p[k] = (struct timed){ at, { FRAME_UDP,
				(uint16_t)(1 + cfu_splitmix64(&rng) % FLOWS),
				0 } };
		}
		cflow_tracker_params_init(&pp, 4096);
		pp.fp_bits = 32;
		pp.seed = seed;
		pp.value_bits = 16;
		pp.count_bits = cb;
		pp.flow_time = ft;
		pp.sweep_max_buckets = maxb;
		t = cflow_tracker_create(&pp);
		TEST_ASSERT(t != NULL, "create");
		for (unsigned int k = 0; k < PACKETS;) {
			unsigned int m = 1 + (unsigned int)(cfu_splitmix64(&rng)
				% 8);

			if (m > PACKETS - k)
				m = PACKETS - k;
			feed(t, p + k, m, m, v + k);
			k += m;
			if (cfu_splitmix64(&rng) & 1)
				cflow_sweep(t, p[k - 1].at);
		}
		for (unsigned int k = 0; k < PACKETS; k++) {
			unsigned int f = p[k].f.flow - 1;
			uint64_t gap = p[k].at - last[f];
			enum cflow_verdict want = last[f] == 0 ||
				gap > timeout + 5 * tick ? CFLOW_NEW :
				gap <= timeout ? CFLOW_SEEN : CFLOW_VERDICT_MAX;

			last[f] = p[k].at;
			if (want == CFLOW_VERDICT_MAX)
				continue;
			checked++;
			if (v[k] != want && bad++ < 8)
				printf("# %u count bits, flow_time %d, sweep of "
					"%u buckets, seed %lu: packet %u, "
					"%.1f s idle: verdict %d, want %d\n",
					cb, ft, maxb, (unsigned long)seed, k,
					(double)gap / S, v[k], want);
		}
		cflow_sweep_all(t, p[PACKETS - 1].at);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	printf("# %u verdicts checked, %u wrong\n", checked, bad);
	TEST_ASSERT_EQ(bad, 0u, "misread ages");
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_clock_unparsed_frames_count),
	TEST_CASE(test_clock_leap_keeps_lagging_stream),
	TEST_CASE(test_clock_leap_merged_streams),
	TEST_CASE(test_clock_steps_under_quarter),
	TEST_CASE(test_clock_sparse_model),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
