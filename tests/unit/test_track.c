/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The tracker of lib/cflow: scripted timelines (TCP lifecycle, linger,
 * reuse, timeouts, the sweep's bounds, full tables), its parameters,
 * the state machine (cflow_state.h), hashes and bursts, flow time over
 * several streams, a flood against a full table, warm restart, lookups,
 * flushes and events.
 */

#include <errno.h>
#include <stdlib.h>

#include "cflow.h"
#include "cflow_state.h"
#include "cflow_test.h"
#include "packets.h"
#include "test.h"
#include "test_memory.h"

/* ------------------------------------------------------------ tracker */

/* CFLOW_IN_NO_CREATE: a firewall's outside finds flows, opens none. */
static int
test_track_no_create(void)
{
	struct cflow_tracker_params p = { .capacity = 1000,
		.close_linger_ns = 10 * S };
	struct cflow_tracker *t = tracker_with(&p);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec synack = tcp(CFLOW_TCP_SYN | CFLOW_TCP_ACK, true);
	struct spec ackr = tcp(CFLOW_TCP_ACK, true);
	struct spec rstr = tcp(CFLOW_TCP_RST, true);
	struct spec synr = tcp(CFLOW_TCP_SYN, true);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	struct spec udp_out = { .family = 4, .src = 9, .dst = 3, .sport = 53,
		.dport = 5000, .proto = 17 };
	struct spec udp_in = { .family = 4, .src = 3, .dst = 9, .sport = 5000,
		.dport = 53, .proto = 17 };
	const uint8_t NC = CFLOW_IN_NO_CREATE;
	struct cflow_counters c;

	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send_in(t, &synr, S, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "outside SYN, no flow");
	TEST_ASSERT_EQ(send_in(t, &rstr, S, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "outside RST, no flow");
	TEST_ASSERT_EQ(send_in(t, &udp_out, S, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "outside UDP, no flow");
	TEST_ASSERT_EQ(send_in(t, &udp_out, S + 1, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "still none: nothing was opened");
	TEST_ASSERT_EQ(send_in(t, &udp_in, 2 * S, 0, NULL), CFLOW_NEW,
		"inside opens");
	TEST_ASSERT_EQ(send_in(t, &udp_out, 2 * S + 1, NC, NULL), CFLOW_SEEN,
		"the reply passes");
	TEST_ASSERT_EQ(send_in(t, &syn, 3 * S, 0, NULL), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send_in(t, &synack, 3 * S, NC, NULL), CFLOW_SEEN,
		"SYN/ACK");
	TEST_ASSERT_EQ(send_in(t, &fin, 4 * S, 0, NULL), CFLOW_CLOSING, "FIN");
	/* A SYN from outside on the lingering tuple reopens nothing: a
	 * packet of the closed flow, whose linger it restarts. */
	TEST_ASSERT_EQ(send_in(t, &synr, 5 * S, NC, NULL), CFLOW_SEEN,
		"outside SYN while lingering");
	TEST_ASSERT_EQ(send_in(t, &ackr, 14 * S, NC, NULL), CFLOW_SEEN,
		"linger restarted by it");
	/* Past the linger the outside is unsolicited again. */
	TEST_ASSERT_EQ(send_in(t, &ackr, 30 * S, NC, NULL),
		CFLOW_UNTRACKED_UNSOLICITED, "after the linger");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.unsolicited == 5 && c.flows_new == 2 &&
		c.reused == 0 && c.orphan_close == 0 && c.flows_closed == 1,
		"unsolicited %lu new %lu reused %lu", (unsigned long)c.unsolicited,
		(unsigned long)c.flows_new, (unsigned long)c.reused);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* tcp_strict: a TCP flow opens on a SYN without ACK only. */
static int
test_track_tcp_strict(void)
{
	struct cflow_tracker_params p = { .capacity = 1000, .tcp_strict = true };
	struct cflow_tracker *t = tracker_with(&p);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct spec synack = tcp(CFLOW_TCP_SYN | CFLOW_TCP_ACK, true);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec udp = { .family = 4, .src = 3, .dst = 9, .sport = 5000,
		.dport = 53, .proto = 17 };
	struct cflow_counters c;

	TEST_ASSERT_EQ(send_in(t, &ack, S, 0, NULL), CFLOW_UNTRACKED_NOT_SYN,
		"ACK");
	TEST_ASSERT_EQ(send_in(t, &synack, S, 0, NULL),
		CFLOW_UNTRACKED_NOT_SYN, "SYN/ACK");
	TEST_ASSERT_EQ(send_in(t, &fin, S, 0, NULL), CFLOW_UNTRACKED_ORPHAN,
		"a FIN of no flow stays an orphan");
	TEST_ASSERT_EQ(send_in(t, &udp, S, 0, NULL), CFLOW_NEW, "UDP as ever");
	TEST_ASSERT_EQ(send_in(t, &syn, 2 * S, 0, NULL), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send_in(t, &synack, 2 * S, 0, NULL), CFLOW_SEEN,
		"SYN/ACK of the flow");
	TEST_ASSERT_EQ(send_in(t, &ack, 2 * S, 0, NULL), CFLOW_SEEN, "ACK");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.not_syn == 2 && c.flows_new == 2 && c.orphan_close == 1,
		"counters");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	/* Without it, any packet but a FIN/RST opens (loose pickup). */
	p = (struct cflow_tracker_params){ .capacity = 1000 };
	t = tracker_with(&p);
	TEST_ASSERT_EQ(send_in(t, &ack, S, 0, NULL), CFLOW_NEW, "loose");
	cflow_tracker_free(t);
	return 0;
}

/* Admission control: a token bucket of new flows, by the packets' time. */
static int
test_track_admission(void)
{
	struct cflow_tracker_params p = { .capacity = 1000,
		.new_flow_rate = 10, .new_flow_burst = 3,
		.close_linger_ns = 10 * S };
	struct cflow_tracker *t = tracker_with(&p);
	struct spec u = { .family = 4, .src = 3, .dst = 9, .sport = 5000,
		.dport = 53, .proto = 17 };
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cflow_counters c;
	unsigned int admitted = 0;

	for (unsigned int k = 0; k < 5; k++) {
		u.sport = (uint16_t)(6000 + k);
		admitted += send_in(t, &u, S, 0, NULL) == CFLOW_NEW;
	}
	TEST_ASSERT_EQ(admitted, 3, "the burst");
	u.sport = 6003;
	TEST_ASSERT_EQ(send_in(t, &u, S + S / 20, 0, NULL),
		CFLOW_UNTRACKED_LIMITED, "half a token after 50 ms");
	TEST_ASSERT_EQ(send_in(t, &u, S + S / 10, 0, NULL), CFLOW_NEW,
		"one token after 100 ms");
	u.sport = 6000;
	TEST_ASSERT_EQ(send_in(t, &u, S + S / 10, 0, NULL), CFLOW_SEEN,
		"an admitted flow needs no token");
	/* Refilled, never beyond the burst. */
	admitted = 0;
	for (unsigned int k = 0; k < 6; k++) {
		u.sport = (uint16_t)(7000 + k);
		admitted += send_in(t, &u, 100 * S, 0, NULL) == CFLOW_NEW;
	}
	TEST_ASSERT_EQ(admitted, 3, "a full bucket holds the burst");
	/* A limited SYN on a lingering flow leaves its entry. */
	TEST_ASSERT_EQ(send_in(t, &syn, 200 * S, 0, NULL), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send_in(t, &fin, 200 * S, 0, NULL), CFLOW_CLOSING,
		"FIN");
	for (unsigned int k = 0; k < 3; k++) {
		u.sport = (uint16_t)(8000 + k);
		send_in(t, &u, 200 * S, 0, NULL);
	}
	TEST_ASSERT_EQ(send_in(t, &syn, 200 * S, 0, NULL),
		CFLOW_UNTRACKED_LIMITED, "SYN on the lingering tuple, no token");
	TEST_ASSERT_EQ(send_in(t, &ack, 200 * S, 0, NULL), CFLOW_SEEN,
		"the closed flow is still there");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.new_flow_limited == 8 && c.reused == 0,
		"limited %lu reused %lu", (unsigned long)c.new_flow_limited,
		(unsigned long)c.reused);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* The token bucket against its definition, over random gaps: tokens
 * (in 10^-9) = min(burst, tokens + gap * rate), a new flow admitted
 * while a whole one is left; rates up to the largest allowed, gaps
 * around the time to fill (the precomputed bound of token_take()). */
static int
test_track_admission_model(void)
{
	static const uint64_t rates[][2] = { { 1, 1 }, { 7, 3 },
		{ 1000, 50 }, { 1000000000, 1000000000 }, { 3, 1000 } };
	uint64_t rng = 0x29;

	for (unsigned int r = 0; r < sizeof(rates) / sizeof(rates[0]);
			r++) {
		struct cflow_tracker_params p = { .capacity = 4096,
			.new_flow_rate = rates[r][0],
			.new_flow_burst = rates[r][1] };
		struct cflow_tracker *t = tracker_with(&p);
		struct spec u = { .family = 4, .dst = 9, .dport = 53,
			.proto = 17 };
		uint64_t max = rates[r][1] * S, tokens = max, now = S;
		uint64_t fill = max / rates[r][0];

		for (unsigned int k = 0; k < 3000; k++) {
			uint64_t gap;
			bool model;

			rng += 0x9e3779b97f4a7c15;
			gap = (rng >> 11) % (3 * fill + 3);
			if (k % 7 == 0)
				gap = fill + (rng & 3) - 1; /* at the bound */
			now += gap;
			tokens += gap * rates[r][0];
			if (tokens > max)
				tokens = max;
			model = tokens >= S;
			if (model)
				tokens -= S;
			u.src = (uint8_t)(k >> 12);
			u.sport = (uint16_t)(1 + (k & 0xfff));
			TEST_ASSERT_EQ(send_in(t, &u, now, 0, NULL) == CFLOW_NEW,
				model, "rate %lu burst %lu packet %u",
				(unsigned long)rates[r][0],
				(unsigned long)rates[r][1], k);
		}
		cflow_tracker_free(t);
	}
	return 0;
}

/* Emergency mode: shorter timeouts while the table is loaded. */
static int
test_track_emergency(void)
{
	struct cflow_tracker_params p = { .capacity = 100,
		.emergency_load_ppm = 500000, .emergency_low_ppm = 300000,
		.emergency_timeout_ns = 2 * S };
	struct cflow_tracker *t = tracker_with(&p);
	struct spec u = { .family = 4, .src = 3, .dst = 9, .sport = 5000,
		.dport = 53, .proto = 17 };
	struct cflow_counters c;

	for (unsigned int k = 0; k < 49; k++) {
		u.sport = (uint16_t)(1000 + k);
		send_in(t, &u, S, 0, NULL);
	}
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.emergency == 0 && c.emergency_enter == 0, "49%% load: "
		"active %lu emergency %lu entered %lu", (unsigned long)c.active,
		(unsigned long)c.emergency, (unsigned long)c.emergency_enter);
	u.sport = 2000;
	send_in(t, &u, S, 0, NULL);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.emergency == 1 && c.emergency_enter == 1, "50%% load");
	/* Idle 4 s: past the emergency timeout, far from UDP's 60 s. */
	cflow_sweep_all(t, 5 * S);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 50 && c.emergency == 0 &&
		c.emergency_exit == 1, "expired %lu emergency %lu",
		(unsigned long)c.flows_expired, (unsigned long)c.emergency);
	/* Left: the normal timeouts again. */
	send_in(t, &u, 6 * S, 0, NULL);
	cflow_sweep_all(t, 16 * S);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 50 && c.active == 1,
		"normal timeout restored: expired %lu",
		(unsigned long)c.flows_expired);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	/* A low mark at or above the load is refused. */
	p = (struct cflow_tracker_params){ .emergency_load_ppm = 500000,
		.emergency_low_ppm = 500000 };
	errno = 0;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"low >= load");
	return 0;
}

/* count_bits: each packet's ordinal in its flow, saturating. */
static int
test_track_counts(void)
{
	for (unsigned int vb = 16; vb <= 32; vb += 16) {
		struct cflow_tracker_params p = { .capacity = 1000,
			.value_bits = vb, .count_bits = 3,
			.close_linger_ns = 10 * S };
		struct cflow_tracker *t = tracker_with(&p);
		struct spec syn = tcp(CFLOW_TCP_SYN, false);
		struct spec ackr = tcp(CFLOW_TCP_ACK, true);
		struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
		struct spec udp = { .family = 4, .src = 3, .dst = 9,
			.sport = 5000, .dport = 53, .proto = 17 };
		uint8_t n;

		TEST_ASSERT(t != NULL, "create, %u-bit values", vb);
		for (unsigned int k = 1; k <= 10; k++) {
			send_in(t, k & 1 ? &syn : &ackr, k * S / 100, 0, &n);
			TEST_ASSERT_EQ(n, k < 7 ? k : 7, "%u-bit: packet %u",
				vb, k);
		}
		send_in(t, &fin, S, 0, &n);
		TEST_ASSERT_EQ(n, 7, "the FIN, saturated");
		send_in(t, &syn, 2 * S, 0, &n);
		TEST_ASSERT_EQ(n, 1, "reused: a new flow counts from 1");
		send_in(t, &udp, 2 * S, CFLOW_IN_NO_CREATE, &n);
		TEST_ASSERT_EQ(n, 0, "untracked: 0");
		/* The time field kept its meaning: expiry as ever. */
		send_in(t, &udp, 3 * S, 0, &n);
		TEST_ASSERT_EQ(n, 1, "UDP opens");
		cflow_sweep_all(t, 3 * S + 59 * S);
		TEST_ASSERT_EQ(send_in(t, &udp, 3 * S + 59 * S, 0, &n),
			CFLOW_SEEN, "%u-bit: alive before its timeout", vb);
		TEST_ASSERT_EQ(n, 2, "second packet");
		cflow_sweep_all(t, 3 * S + 59 * S + 70 * S);
		TEST_ASSERT_EQ(send_in(t, &udp, 3 * S + 59 * S + 70 * S, 0,
			&n), CFLOW_NEW, "%u-bit: expired after it", vb);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	/* Without count bits, every ordinal is 0. */
	{
		struct cflow_tracker_params p = { .capacity = 1000 };
		struct cflow_tracker *t = tracker_with(&p);
		struct spec udp = { .family = 4, .src = 3, .dst = 9,
			.sport = 5000, .dport = 53, .proto = 17 };
		uint8_t n = 9;

		send_in(t, &udp, S, 0, &n);
		TEST_ASSERT_EQ(n, 0, "no count");
		cflow_tracker_free(t);
	}
	{
		struct cflow_tracker_params p = { .count_bits = 9 };

		TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
			"count_bits 9 refused");
	}
	return 0;
}

static int
test_track_tcp_lifecycle(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 10, CFLOW_FULL_EVICT);
	struct cflow_counters c;
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec synack = tcp(CFLOW_TCP_SYN | CFLOW_TCP_ACK, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	struct spec finr = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);

	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send(t, &syn, 1 * S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &synack, 1 * S + 1000), CFLOW_SEEN, "SYN/ACK");
	TEST_ASSERT_EQ(send(t, &ack, 1 * S + 2000), CFLOW_SEEN, "ACK");
	for (int k = 0; k < 5; k++)
		TEST_ASSERT_EQ(send(t, &ack, 2 * S + k), CFLOW_SEEN, "data");
	TEST_ASSERT_EQ(send(t, &fin, 3 * S), CFLOW_CLOSING, "FIN");
	TEST_ASSERT_EQ(send(t, &finr, 3 * S + 10), CFLOW_SEEN, "FIN back");
	TEST_ASSERT_EQ(send(t, &ack, 3 * S + 20), CFLOW_SEEN, "last ACK");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 1 && c.flows_closed == 1 &&
		c.flows_seen == 9 && c.active == 0, "counters");
	/* The closed entry goes after the linger, uncounted. */
	cflow_sweep_all(t, 5 * S);
	cflow_sweep_all(t, 14 * S);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 0 && c.flows_closed == 1, "linger");
	{
		struct cf_stats st;

		cf_stats(cflow_tracker_filter(t), &st);
		TEST_ASSERT_EQ(st.items, 0u, "entry left after linger");
	}
	/* A packet after the linger starts a new flow. */
	TEST_ASSERT_EQ(send(t, &ack, 15 * S), CFLOW_NEW, "after linger");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

static int
test_track_rst_no_linger_and_orphans(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 0, CFLOW_FULL_EVICT);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec rst = tcp(CFLOW_TCP_RST, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cflow_counters c;

	TEST_ASSERT_EQ(send(t, &syn, S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &rst, S + 5), CFLOW_CLOSING, "RST");
	/* Linger 0: gone at once; a second RST is an orphan. */
	TEST_ASSERT_EQ(send(t, &rst, S + 6), CFLOW_UNTRACKED_ORPHAN, "RST 2");
	TEST_ASSERT_EQ(send(t, &ack, S + 7), CFLOW_NEW, "ACK after RST");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 2 && c.flows_closed == 1 &&
		c.orphan_close == 1 && c.active == 1, "counters");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

static int
test_track_reuse(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 10, CFLOW_FULL_EVICT);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct cflow_counters c;

	send(t, &syn, S);
	TEST_ASSERT_EQ(send(t, &fin, 2 * S), CFLOW_CLOSING, "FIN");
	TEST_ASSERT_EQ(send(t, &syn, 3 * S), CFLOW_NEW, "SYN while closing");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.reused == 1 && c.flows_new == 2 && c.active == 1,
		"reuse counted");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

static int
test_track_udp_idle_on_access(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 10, CFLOW_FULL_EVICT);
	struct spec u = { .family = 6, .src = 1, .dst = 2, .sport = 5353,
		.dport = 53, .proto = 17 };
	struct cflow_counters c;

	TEST_ASSERT_EQ(send(t, &u, 0), CFLOW_NEW, "first");
	TEST_ASSERT_EQ(send(t, &u, 59 * S), CFLOW_SEEN, "59 s later");
	/* 61 s idle > 60 s UDP timeout: expired, then new. */
	TEST_ASSERT_EQ(send(t, &u, 120 * S), CFLOW_NEW, "after timeout");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 1 && c.flows_new == 2, "expired");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* The incremental sweep expires a flow no earlier than its timeout and
 * no later than timeout + max(1 s, timeout / 8), per protocol. */
static int
test_track_sweep_bounds(void)
{
	static const struct { uint8_t proto; uint64_t timeout_s; } cases[] = {
		{ 17, CFLOW_TIMEOUT_UDP_S },
		{ 6, CFLOW_TIMEOUT_TCP_S },
		{ 1, CFLOW_TIMEOUT_ICMP_S },
		{ 47, CFLOW_TIMEOUT_OTHER_S },
	};

	for (unsigned int i = 0; i < 8; i++) {
		/* A big table, so a pass takes many bounded calls. */
		struct cflow_tracker_params p;
		struct cflow_tracker *t;
		/* A call every 1 ms visits up to 64 buckets: a pass of the
		 * 65536 buckets can be done in 1 s, quicker than any period
		 * these timeouts ask for, so the pace is the tracker's. */
		uint64_t start = 1000 * S, step = S / 1000, at;
		uint64_t late = cases[i % 4].timeout_s / 8 > 1 ?
			cases[i % 4].timeout_s * S / 8 : S;
		struct cflow_counters c;

		cflow_tracker_params_init(&p, 200000);
		p.fp_bits = 12;
		p.seed = 42;
		/* 16-bit values: 268 ms ticks, so a 0.8 s shorter pass. */
		p.value_bits = i < 4 ? 32 : 16;
		t = cflow_tracker_create(&p);
		TEST_ASSERT(t != NULL, "create");

		for (uint8_t f = 0; f < 50; f++) {
			struct spec s = { .family = 4, .src = f, .dst = 200,
				.sport = 1000, .dport = 80,
				.proto = cases[i % 4].proto,
				.flags = CFLOW_TCP_ACK };

			send(t, &s, start);
		}
		for (at = start; at <= start + (cases[i % 4].timeout_s + 60) * S;
				at += step) {
			cflow_sweep(t, at);
			cflow_counters_get(t, &c);
			if (at <= start + cases[i % 4].timeout_s * S)
				TEST_ASSERT_EQ(c.flows_expired, 0u,
					"proto %u expired early at +%.2f s",
					cases[i % 4].proto,
					(double)(at - start) / S);
			if (c.flows_expired == 50)
				break;
		}
		TEST_ASSERT_EQ(c.flows_expired, 50u, "not all expired");
		TEST_ASSERT(at <= start + cases[i % 4].timeout_s * S + late,
			"proto %u: last expiry at +%.2f s, bound %.2f",
			cases[i % 4].proto, (double)(at - start) / S,
			(double)(cases[i % 4].timeout_s * S + late) / S);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

/*
 * A full sweep expires exactly the flows whose age in ticks is over
 * timeout + 1 (the rule in cflow_track.c; 32-bit values: ticks of 2^24
 * ns): with every timeout equal, so that the sweep's skip test
 * (cf_scan_due, shortest timeout) is at its edge for every flow, and
 * with the default timeouts and linger, each protocol's own.
 */
static int
test_track_sweep_all_exact(void)
{
	static const uint8_t protos[] = { 17, 6, 1, 47 };
	static const unsigned int classes[] = { CFLOW_CLASS_UDP,
		CFLOW_CLASS_TCP, CFLOW_CLASS_ICMP, CFLOW_CLASS_OTHER };
	const uint64_t tick = UINT64_C(1) << 24, timeout_ticks = 1000;

	for (unsigned int i = 0; i < 8; i++) {
		struct cflow_tracker_params p;
		struct cflow_tracker *t;
		uint64_t start = 1000 * tick, end, timeout;
		struct cflow_counters c;

		cflow_tracker_params_init(&p, 100000);
		p.fp_bits = 32;
		p.seed = 7;
		if (i < 4) {
			for (unsigned int k = 0; k < CFLOW_CLASS_MAX; k++)
				p.timeout_ns[k] = timeout_ticks * tick;
			p.close_linger_ns = CFLOW_LINGER_NONE;
		}
		t = cflow_tracker_create(&p);
		TEST_ASSERT(t != NULL, "create");
		timeout = i < 4 ? timeout_ticks * tick :
			p.timeout_ns[classes[i % 4]];
		/* Flow k last seen k ticks after start. */
		for (uint8_t k = 0; k < 40; k++) {
			struct spec s = { .family = 4, .src = k, .dst = 9,
				.sport = 1000, .dport = 80,
				.proto = protos[i % 4],
				.flags = CFLOW_TCP_ACK };

			send(t, &s, start + k * tick);
		}
		/* Ages timeout + 11 - k ticks: flows 0..9 are over
		 * timeout + 1. */
		end = start + (timeout / tick + 11) * tick;
		cflow_sweep_all(t, end);
		cflow_counters_get(t, &c);
		TEST_ASSERT_EQ(c.flows_expired, 10u, "case %u proto %u: %lu "
			"expired", i, protos[i % 4],
			(unsigned long)c.flows_expired);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

static int
test_track_time_backwards(void)
{
	struct cflow_tracker *t = tracker(1000, 12, 10, CFLOW_FULL_EVICT);
	struct spec u = { .family = 4, .src = 1, .dst = 2, .sport = 1,
		.dport = 2, .proto = 17 };
	struct cflow_counters c;

	send(t, &u, 100000 * S);
	/* The capture again from its start: not idle, no wrap. */
	TEST_ASSERT_EQ(send(t, &u, 5 * S), CFLOW_SEEN, "earlier time");
	cflow_sweep_all(t, 6 * S);
	TEST_ASSERT_EQ(send(t, &u, 100030 * S), CFLOW_SEEN, "30 s later");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_expired == 0 && c.flows_new == 1, "no expiry");
	cflow_tracker_free(t);
	return 0;
}

static int
test_track_full_table(void)
{
	for (int policy = 0; policy < 2; policy++) {
		struct cflow_tracker *t = tracker(16, 12, 10,
			(enum cflow_full_policy)policy);
		struct cflow_counters c;
		struct cf_stats st;

		for (int f = 0; f < 200; f++) {
			struct spec s = { .family = 4, .src = (uint8_t)f,
				.dst = (uint8_t)(f >> 8), .sport = 9,
				.dport = 9, .proto = 17 };

			send(t, &s, (uint64_t)f * 1000);
		}
		cflow_counters_get(t, &c);
		cf_stats(cflow_tracker_filter(t), &st);
		TEST_ASSERT_EQ(c.active, st.items, "active vs filter items");
		if (policy == CFLOW_FULL_EVICT)
			TEST_ASSERT(c.flows_evicted > 0 && c.insert_failed == 0,
				"evict: %lu evicted", (unsigned long)
				c.flows_evicted);
		else
			TEST_ASSERT(c.insert_failed > 0 &&
				c.flows_evicted == 0, "untracked");
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

/* Refused by cflow_tracker_create() and by the resolution, EINVAL. */
static int
refused(const struct cflow_tracker_params *p)
{
	struct cflow_tracker_params r;

	errno = 0;
	if (cflow_tracker_create(p) != NULL || errno != EINVAL)
		return -1;
	errno = 0;
	return cflow_tracker_params_resolve(p, &r) == -EINVAL &&
		errno == EINVAL ? 0 : -1;
}

static int
test_track_params_rejected(void)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;

	cflow_tracker_params_init(&p, CF_MAX_CAPACITY + 1);
	TEST_ASSERT_EQ(refused(&p), 0, "capacity over CF_MAX_CAPACITY");
	cflow_tracker_params_init(&p, 10);
	p.close_linger_ns = UINT64_C(100) * 86400 * S;
	TEST_ASSERT_EQ(refused(&p), 0, "linger of 100 days");
	cflow_tracker_params_init(&p, 10);
	p.timeout_ns[CFLOW_CLASS_TCP] = UINT64_C(100) * 86400 * S;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"timeout of 100 days");
	cflow_tracker_params_init(&p, 10);
	p.fp_bits = 40;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"fp_bits 40");
	cflow_tracker_params_init(&p, 10);
	p.fp_bits = 3;
	TEST_ASSERT(cflow_tracker_create(&p) == NULL && errno == EINVAL,
		"fp_bits 3");
	cflow_tracker_params_init(&p, 10);
	p.value_bits = 8;
	TEST_ASSERT_EQ(refused(&p), 0, "value_bits 8");
	cflow_tracker_params_init(&p, 10);
	p.value_bits = 16;
	p.timeout_ns[CFLOW_CLASS_TCP] = UINT64_C(26) * 86400 * S;
	TEST_ASSERT_EQ(refused(&p), 0, "16-bit values, timeout of 26 days");
	p.value_bits = 32;
	t = cflow_tracker_create(&p);
	TEST_ASSERT(t != NULL, "32-bit values, timeout of 26 days");
	cflow_tracker_free(t);
	cflow_tracker_params_init(&p, 10);
	p.full_policy = (enum cflow_full_policy)(CFLOW_FULL_UNTRACKED + 1);
	TEST_ASSERT_EQ(refused(&p), 0, "full_policy out of range");
	cflow_tracker_params_init(&p, 10);
	p.hash = (enum cflow_hash_mode)(CFLOW_HASH_RSS + 1);
	TEST_ASSERT_EQ(refused(&p), 0, "hash out of range");
	TEST_ASSERT(cflow_tracker_create(NULL) == NULL && errno == EINVAL,
		"NULL");
	return 0;
}

/*
 * cflow_state_step() against the contract's table (docs/design.md), row
 * by row, and what cflow_count_step() counts for each. A table that
 * keeps the contract on its own store (bench/exact_table.c) gets it from
 * these two.
 */
static int
test_state_step(void)
{
	static const struct {
		enum cflow_state state;
		bool stale, linger;
		unsigned int cls;
		uint8_t flags;
		/* expected */
		enum cflow_verdict verdict;
		enum cflow_state next;
		bool remove, insert, expired, reused;
	} rows[] = {
		/* open, not idle */
		{ CFLOW_STATE_OPEN, false, true, CFLOW_CLASS_TCP, CFLOW_TCP_FIN,
			CFLOW_CLOSING, CFLOW_STATE_CLOSING, 0, 0, 0, 0 },
		{ CFLOW_STATE_OPEN, false, false, CFLOW_CLASS_TCP, CFLOW_TCP_RST,
			CFLOW_CLOSING, CFLOW_STATE_NONE, 1, 0, 0, 0 },
		{ CFLOW_STATE_OPEN, false, true, CFLOW_CLASS_TCP, CFLOW_TCP_ACK,
			CFLOW_SEEN, CFLOW_STATE_OPEN, 0, 0, 0, 0 },
		/* flags count for TCP only */
		{ CFLOW_STATE_OPEN, false, true, CFLOW_CLASS_UDP, CFLOW_TCP_FIN,
			CFLOW_SEEN, CFLOW_STATE_OPEN, 0, 0, 0, 0 },
		/* open, idle: expired, then as untracked */
		{ CFLOW_STATE_OPEN, true, true, CFLOW_CLASS_UDP, 0,
			CFLOW_NEW, CFLOW_STATE_NONE, 1, 1, 1, 0 },
		{ CFLOW_STATE_OPEN, true, true, CFLOW_CLASS_TCP, CFLOW_TCP_FIN,
			CFLOW_UNTRACKED_ORPHAN, CFLOW_STATE_NONE, 1, 0, 1, 0 },
		/* closing, within the linger */
		{ CFLOW_STATE_CLOSING, false, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_SYN, CFLOW_NEW, CFLOW_STATE_NONE, 1, 1, 0, 1 },
		{ CFLOW_STATE_CLOSING, false, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_SYN | CFLOW_TCP_ACK, CFLOW_SEEN,
			CFLOW_STATE_CLOSING, 0, 0, 0, 0 },
		{ CFLOW_STATE_CLOSING, false, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_FIN, CFLOW_SEEN, CFLOW_STATE_CLOSING, 0, 0, 0,
			0 },
		/* closing, linger over: removed uncounted, then untracked */
		{ CFLOW_STATE_CLOSING, true, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_ACK, CFLOW_NEW, CFLOW_STATE_NONE, 1, 1, 0, 0 },
		{ CFLOW_STATE_CLOSING, true, true, CFLOW_CLASS_TCP,
			CFLOW_TCP_RST, CFLOW_UNTRACKED_ORPHAN, CFLOW_STATE_NONE,
			1, 0, 0, 0 },
		/* untracked (stale ignored) */
		{ CFLOW_STATE_NONE, true, true, CFLOW_CLASS_TCP, CFLOW_TCP_FIN,
			CFLOW_UNTRACKED_ORPHAN, CFLOW_STATE_NONE, 0, 0, 0, 0 },
		{ CFLOW_STATE_NONE, false, false, CFLOW_CLASS_ICMP, 0,
			CFLOW_NEW, CFLOW_STATE_NONE, 0, 1, 0, 0 },
	};

	for (unsigned int k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct cflow_step st = cflow_state_step(rows[k].state,
			rows[k].stale, rows[k].cls, rows[k].flags,
			rows[k].linger);
		struct cflow_counters c = { .active = 1 };
		enum cflow_verdict v;

		TEST_ASSERT(st.verdict == rows[k].verdict &&
			st.next == rows[k].next &&
			st.remove == rows[k].remove &&
			st.insert == rows[k].insert &&
			st.expired == rows[k].expired &&
			st.reused == rows[k].reused,
			"row %u: verdict %u next %u remove %d insert %d "
			"expired %d reused %d", k, st.verdict, st.next,
			st.remove, st.insert, st.expired, st.reused);
		v = cflow_count_step(&c, &st, true);
		TEST_ASSERT_EQ(v, rows[k].verdict, "row %u: counted", k);
		TEST_ASSERT(c.flows_expired == rows[k].expired &&
			c.reused == rows[k].reused &&
			c.flows_new == (v == CFLOW_NEW) &&
			c.flows_seen == (v == CFLOW_SEEN) &&
			c.flows_closed == (v == CFLOW_CLOSING) &&
			c.orphan_close == (v == CFLOW_UNTRACKED_ORPHAN) &&
			c.active == (uint64_t)(1 + (v == CFLOW_NEW) -
				rows[k].expired - (v == CFLOW_CLOSING)),
			"row %u: counters", k);
		if (st.insert) {
			memset(&c, 0, sizeof(c));
			TEST_ASSERT_EQ(cflow_count_step(&c, &st, false),
				CFLOW_UNTRACKED_FULL, "row %u: full", k);
			TEST_ASSERT(c.insert_failed == 1 && c.flows_new == 0,
				"row %u: full counted", k);
		}
	}
	/* Packets that do not parse to a key. */
	{
		struct cflow_counters c = { 0 };

		TEST_ASSERT_EQ(cflow_count_untracked(&c, CFLOW_PARSE_NON_IP),
			CFLOW_UNTRACKED_NON_IP, "non-IP");
		TEST_ASSERT_EQ(cflow_count_untracked(&c,
			CFLOW_PARSE_FRAGMENT), CFLOW_UNTRACKED_FRAGMENT,
			"fragment");
		for (int st = CFLOW_PARSE_MALFORMED_FIRST;
				st <= CFLOW_PARSE_MALFORMED_LAST; st++)
			TEST_ASSERT_EQ(cflow_count_untracked(&c,
				(enum cflow_parse_status)st),
				CFLOW_UNTRACKED_MALFORMED, "status %d", st);
		TEST_ASSERT(c.non_ip == 1 && c.fragments == 1 &&
			cflow_malformed_total(&c) ==
			CFLOW_PARSE_MALFORMED_LAST -
			CFLOW_PARSE_MALFORMED_FIRST + 1, "untracked counted");
	}
	return 0;
}

/* @p r holds every documented default (cflow_track.h), the seed aside. */
static int
check_defaults(const struct cflow_tracker_params *r)
{
	TEST_ASSERT_EQ(r->capacity, CFLOW_CAPACITY_DEFAULT, "capacity");
	TEST_ASSERT_EQ(r->capacity, UINT64_C(1) << 20, "capacity 2^20");
	TEST_ASSERT_EQ(r->fp_bits, 12u, "fp_bits");
	TEST_ASSERT_EQ(r->value_bits, 32u, "value_bits");
	TEST_ASSERT(!r->exact_size, "exact_size");
	TEST_ASSERT_EQ(r->hash, CFLOW_HASH_XXH3, "hash");
	TEST_ASSERT_EQ(r->timeout_ns[CFLOW_CLASS_TCP], 300 * S, "tcp");
	TEST_ASSERT_EQ(r->timeout_ns[CFLOW_CLASS_UDP], 60 * S, "udp");
	TEST_ASSERT_EQ(r->timeout_ns[CFLOW_CLASS_ICMP], 30 * S, "icmp");
	TEST_ASSERT_EQ(r->timeout_ns[CFLOW_CLASS_OTHER], 60 * S, "other");
	TEST_ASSERT_EQ(r->close_linger_ns, 10 * S, "linger");
	TEST_ASSERT_EQ(r->full_policy, CFLOW_FULL_EVICT, "full_policy");
	TEST_ASSERT_EQ(r->sweep_max_buckets, 64u, "sweep_max_buckets");
	TEST_ASSERT(r->allocator == NULL && r->socket_id == 0 &&
		!r->flow_time && !r->parse.vlan_in_key &&
		r->parse.link_type == CFLOW_LINK_EN10MB &&
		r->parse.decap == 0, "the rest zero");
	return 0;
}

static int
test_track_params_zero_is_default(void)
{
	struct cflow_tracker_params z, r, r2, q;
	struct cflow_tracker *t, *t2;
	struct spec udp = { .family = 4, .src = 1, .dst = 2, .sport = 5353,
		.dport = 53, .proto = 17 };
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cf_stats st;

	/* A zeroed struct is a tracker with the defaults. */
	memset(&z, 0, sizeof(z));
	t = cflow_tracker_create(&z);
	TEST_ASSERT(t != NULL, "zeroed params: %s", strerror(errno));
	cflow_tracker_params_get(t, &r);
	TEST_ASSERT_EQ(check_defaults(&r), 0, "tracker's defaults");
	TEST_ASSERT(r.seed != 0, "seed drawn");
	cf_stats(cflow_tracker_filter(t), &st);
	TEST_ASSERT(st.slots * 96 / 100 >= CFLOW_CAPACITY_DEFAULT,
		"table of %lu slots for 2^20 flows", (unsigned long)st.slots);
	t2 = cflow_tracker_create(&z);
	TEST_ASSERT(t2 != NULL, "second");
	cflow_tracker_params_get(t2, &r2);
	TEST_ASSERT(r2.seed != r.seed, "each zeroed tracker draws a seed");
	cflow_tracker_free(t2);
	cflow_tracker_free(t);

	/* The resolution: the same values, idempotent. */
	TEST_ASSERT_EQ(cflow_tracker_params_resolve(&z, &r), 0, "resolve");
	TEST_ASSERT_EQ(check_defaults(&r), 0, "resolved defaults");
	r2 = r;
	TEST_ASSERT_EQ(cflow_tracker_params_resolve(&r2, &r2), 0, "again");
	TEST_ASSERT(r2.seed == r.seed && r2.capacity == r.capacity &&
		r2.timeout_ns[CFLOW_CLASS_ICMP] == r.timeout_ns[CFLOW_CLASS_ICMP]
		&& r2.close_linger_ns == r.close_linger_ns, "idempotent");
	/* params_init spells out the same. */
	cflow_tracker_params_init(&q, 0);
	TEST_ASSERT_EQ(check_defaults(&q), 0, "params_init's defaults");
	TEST_ASSERT(q.seed != 0, "params_init's seed");
	/* fixed_seed keeps a seed of 0; CFLOW_LINGER_NONE stays. */
	z.fixed_seed = true;
	z.close_linger_ns = CFLOW_LINGER_NONE;
	TEST_ASSERT_EQ(cflow_tracker_params_resolve(&z, &r), 0, "fixed");
	TEST_ASSERT(r.seed == 0 && r.close_linger_ns == CFLOW_LINGER_NONE,
		"seed 0 kept, no linger");

	/* The defaults at work, on a small table: UDP idles out after
	 * 60 s (late by at most max(1 s, 60 s / 8)), a closed TCP flow
	 * lingers 10 s. */
	memset(&z, 0, sizeof(z));
	z.capacity = 1000;
	t = cflow_tracker_create(&z);
	TEST_ASSERT(t != NULL, "capacity only");
	TEST_ASSERT_EQ(send(t, &udp, 1000 * S), CFLOW_NEW, "udp");
	TEST_ASSERT_EQ(send(t, &udp, 1059 * S), CFLOW_SEEN, "59 s idle");
	TEST_ASSERT_EQ(send(t, &udp, 1118 * S), CFLOW_SEEN, "59 s again");
	TEST_ASSERT_EQ(send(t, &udp, 1187 * S), CFLOW_NEW, "69 s idle");
	TEST_ASSERT_EQ(send(t, &syn, 1200 * S), CFLOW_NEW, "syn");
	TEST_ASSERT_EQ(send(t, &fin, 1201 * S), CFLOW_CLOSING, "fin");
	TEST_ASSERT_EQ(send(t, &ack, 1210 * S), CFLOW_SEEN, "9 s lingering");
	TEST_ASSERT_EQ(send(t, &ack, 1222 * S), CFLOW_NEW, "linger over");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* ------------------------------------------------- the largest tables */

/* One packet of @p s tracked under the given flow hash. */
static enum cflow_verdict
send_hashed(struct cflow_tracker *t, const struct spec *s, uint64_t hash,
		uint64_t at)
{
	uint8_t buf[256];
	struct cflow_input in = { .data = buf, .time_ns = at,
		.has_hash = true, .hash = hash };
	enum cflow_verdict v;

	in.len = in.wire_len = build(buf, s);
	cflow_track_burst(t, &in, 1, &v);
	return v;
}

/*
 * --flows 2061584303 to 2147483648 made tables of 2^32 slots whose
 * 32-bit positions wrap: the worker crashed in cf_lookup_bulk_values on
 * the second packet of a flow. They are refused now; the largest table
 * accepted tracks flows in its last bucket (chosen through the given
 * hash) with the right verdicts.
 */
static int
test_track_largest_table(void)
{
	static const uint64_t caps[] = { UINT64_C(2147483648),
		UINT64_C(2061584303), CF_MAX_CAPACITY };
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec ack = tcp(CFLOW_TCP_ACK, true);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	double rss0 = rss_mib();

	for (unsigned int k = 0; k < 3; k++) {
		struct cflow_tracker_params p;
		struct cflow_tracker *t;
		struct cflow_counters c;
		struct cf_stats st;
		uint64_t top, hash[2];
		uint32_t pos;

		cflow_tracker_params_init(&p, caps[k]);
		p.fp_bits = 4;
		p.value_bits = 16;
		p.seed = 1;
		p.allocator = &lazy;
		errno = 0;
		t = cflow_tracker_create(&p);
		if (t == NULL) {
			TEST_ASSERT(errno == EINVAL &&
				caps[k] > CF_MAX_CAPACITY, "capacity %lu: "
				"errno %d", (unsigned long)caps[k], errno);
			continue;
		}
		cf_stats(cflow_tracker_filter(t), &st);
		top = st.buckets - 1;
		/* Bucket from the high half, fingerprints 1 and 8. */
		hash[0] = top << 32;
		hash[1] = top << 32 | UINT32_C(0x80000000);
		for (int f = 0; f < 2; f++) {
			TEST_ASSERT_EQ(send_hashed(t, &syn, hash[f], S),
				CFLOW_NEW, "capacity %lu: SYN",
				(unsigned long)caps[k]);
			TEST_ASSERT(cf_lookup_with_hash(cflow_tracker_filter(t),
				hash[f], &pos) && pos >= top * 4 &&
				pos < st.slots, "position %u", pos);
			TEST_ASSERT_EQ(send_hashed(t, &ack, hash[f], 2 * S),
				CFLOW_SEEN, "capacity %lu: ACK",
				(unsigned long)caps[k]);
			TEST_ASSERT_EQ(send_hashed(t, &fin, hash[f], 3 * S),
				CFLOW_CLOSING, "FIN");
			TEST_ASSERT_EQ(send_hashed(t, &ack, hash[f], 4 * S),
				CFLOW_SEEN, "ACK while closing");
		}
		cflow_counters_get(t, &c);
		TEST_ASSERT(c.flows_new == 2 && c.flows_closed == 2 &&
			c.flows_seen == 4 && c.active == 0, "counters");
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
		TEST_ASSERT(caps[k] <= CF_MAX_CAPACITY, "capacity %lu above "
			"CF_MAX_CAPACITY accepted", (unsigned long)caps[k]);
	}
	printf("# resident set: %.1f MiB before, %.1f MiB after\n", rss0,
		rss_mib());
	TEST_ASSERT(rss_mib() < rss0 + 64, "resident set grew from %.1f to "
		"%.1f MiB", rss0, rss_mib());
	return 0;
}

/* ------------------------------------------------- hashes and bursts */

static int
test_track_rss_hash_and_fallback(void)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct cflow_counters c;
	struct cflow_tracker_params q;
	struct spec u = { .family = 4, .src = 1, .dst = 2, .sport = 1,
		.dport = 2, .proto = 17 };
	uint8_t buf[256];
	struct cflow_input in[2] = {
		{ .data = buf, .time_ns = S, .rss = 0xabcd1234, .has_rss = true },
		{ .data = buf, .time_ns = S },
	};

	cflow_tracker_params_init(&p, 100);
	cflow_tracker_params_init(&q, 100);
	TEST_ASSERT(p.seed != q.seed, "default seeds are not random");
	p.hash = CFLOW_HASH_RSS;
	t = cflow_tracker_create(&p);
	in[0].len = in[0].wire_len = in[1].len = in[1].wire_len =
		build(buf, &u);
	cflow_track_burst(t, in, 2, NULL);
	cflow_counters_get(t, &c);
	/* The same flow hashed two ways: two entries, one fallback. */
	TEST_ASSERT(c.hash_fallback == 1 && c.flows_new == 2,
		"fallback %lu new %lu", (unsigned long)c.hash_fallback,
		(unsigned long)c.flows_new);
	cflow_track_burst(t, in, 1, NULL);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_seen == 1 && c.hash_fallback == 1, "RSS again");
	cflow_tracker_free(t);
	return 0;
}

/* A caller's hash (the application hashes each key once, to pick the
 * flow's lcore) stands for the tracker's own; a different one is
 * another flow. */
static int
test_track_given_hash(void)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct cflow_counters c;
	struct cflow_packet pkt;
	struct spec u = { .family = 4, .src = 1, .dst = 2, .sport = 1,
		.dport = 2, .proto = 17 };
	uint8_t buf[256];
	struct cflow_input in[3] = {
		{ .data = buf, .time_ns = S },
		{ .data = buf, .time_ns = S, .has_hash = true },
		{ .data = buf, .time_ns = S, .has_hash = true },
	};

	cflow_tracker_params_init(&p, 100);
	t = cflow_tracker_create(&p);
	in[0].len = in[0].wire_len = build(buf, &u);
	in[1].len = in[1].wire_len = in[2].len = in[2].wire_len = in[0].len;
	TEST_ASSERT(cflow_parse(buf, in[0].len, &p.parse, &pkt) ==
		CFLOW_PARSE_OK, "parse");
	in[1].hash = cflow_hash_key(&pkt.key, p.seed);
	in[2].hash = in[1].hash ^ 0x5a5a5a5a5a5a5a5aull;
	cflow_track_burst(t, in, 2, NULL);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 1 && c.flows_seen == 1,
		"own and given hash: new %lu seen %lu",
		(unsigned long)c.flows_new, (unsigned long)c.flows_seen);
	cflow_track_burst(t, in + 2, 1, NULL);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 2, "another hash is another flow");
	cflow_tracker_free(t);
	return 0;
}

/* More packets than one bulk lookup takes: every one is counted. */
static int
test_track_long_burst(void)
{
	enum { N = 2 * CF_BULK_MAX + 36 };
	struct cflow_tracker *t = tracker(1000, 32, 10, CFLOW_FULL_EVICT);
	static uint8_t bufs[N][256];
	struct cflow_input in[N];
	enum cflow_verdict v[N];
	struct cflow_counters c;

	for (int k = 0; k < N; k++) {
		struct spec s = { .family = 4, .src = (uint8_t)(k / 2),
			.dst = 200, .sport = 9, .dport = 9, .proto = 17 };

		in[k] = (struct cflow_input){ .data = bufs[k], .time_ns = S };
		in[k].len = in[k].wire_len = build(bufs[k], &s);
	}
	cflow_track_burst(t, in, N, v);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.packets == N && c.flows_new == N / 2 &&
		c.flows_seen == N / 2, "packets %lu new %lu seen %lu",
		(unsigned long)c.packets, (unsigned long)c.flows_new,
		(unsigned long)c.flows_seen);
	TEST_ASSERT(v[N - 2] == CFLOW_NEW && v[N - 1] == CFLOW_SEEN,
		"verdicts past the first chunk");
	cflow_tracker_free(t);
	return 0;
}

/* Packets of one flow in one burst each see what the one before left:
 * the value the bulk lookup read is stale once the first has written. */
static int
test_track_same_flow_in_burst(void)
{
	struct cflow_tracker *t = tracker(1000, 32, 10, CFLOW_FULL_EVICT);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, false);
	const struct spec *burst[] = { &ack, &fin, &fin, &ack };
	/* The first packet refreshes a flow idle for just under its 300 s
	 * timeout; the others come past the timeout of the old time. */
	static const uint64_t at[] = { 300 * S, 302 * S, 303 * S, 304 * S };
	static const enum cflow_verdict want[] = { CFLOW_SEEN, CFLOW_CLOSING,
		CFLOW_SEEN, CFLOW_SEEN };
	uint8_t bufs[4][256];
	struct cflow_input in[4];
	enum cflow_verdict v[4];
	struct cflow_counters c;

	TEST_ASSERT(t != NULL, "create");
	TEST_ASSERT_EQ(send(t, &ack, 1 * S), CFLOW_NEW, "open");
	for (int k = 0; k < 4; k++) {
		in[k] = (struct cflow_input){ .data = bufs[k],
			.time_ns = at[k] };
		in[k].len = in[k].wire_len = build(bufs[k], burst[k]);
	}
	cflow_track_burst(t, in, 4, v);
	for (int k = 0; k < 4; k++)
		TEST_ASSERT_EQ(v[k], want[k], "packet %d: verdict %d", k, v[k]);
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new == 1 && c.flows_closed == 1 &&
		c.flows_expired == 0 && c.active == 0, "new %lu closed %lu "
		"expired %lu active %lu", (unsigned long)c.flows_new,
		(unsigned long)c.flows_closed, (unsigned long)c.flows_expired,
		(unsigned long)c.active);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* Flow f's frame (IPv4 from f's low byte to @p dst, TCP for 3 flows in
 * 4, else UDP) with TCP flags @p flags, built in @p buf, at time @p at. */
static struct cflow_input
churn_frame(uint8_t *buf, uint32_t f, uint8_t dst, uint8_t flags,
		uint64_t at)
{
	struct spec sp = { .family = 4, .src = (uint8_t)f, .dst = dst,
		.sport = 1000, .dport = 80, .proto = f % 4 ? 6 : 17,
		.flags = flags };
	struct cflow_input in = { .data = buf, .time_ns = at };

	in.len = in.wire_len = build(buf, &sp);
	return in;
}

/* One burst into both trackers of a pair, each then swept at
 * @p sweep_at: 0 if they gave the same verdicts and counts. */
static int
pair_track(struct cflow_tracker *t[2], const struct cflow_input *in,
		const struct cflow_packet *pkts,
		const enum cflow_parse_status *st, uint64_t sweep_at)
{
	enum cflow_verdict v[2][CF_BULK_MAX];
	uint8_t cnt[2][CF_BULK_MAX];

	for (int l = 0; l < 2; l++) {
		cflow_track_parsed(t[l], in, pkts, st, CF_BULK_MAX, v[l],
			cnt[l]);
		cflow_sweep(t[l], sweep_at);
	}
	return memcmp(v[0], v[1], sizeof(v[0])) == 0 &&
		memcmp(cnt[0], cnt[1], sizeof(cnt[0])) == 0 ? 0 : -1;
}

/* The end of a pair's history (@p what: which): the same counters, with
 * evictions, expiries and closes among them; then both freed. */
static int
pair_end(struct cflow_tracker *t[2], const char *what)
{
	struct cflow_counters c[2];

	cflow_counters_get(t[0], &c[0]);
	cflow_counters_get(t[1], &c[1]);
	TEST_ASSERT(memcmp(&c[0], &c[1], sizeof(c[0])) == 0,
		"%s: counters differ", what);
	TEST_ASSERT(c[0].flows_evicted > 0 && c[0].flows_expired > 0 &&
		c[0].flows_closed > 0 && c[0].flows_seen > 0,
		"%s: the history missed a case: %lu evicted, %lu expired",
		what, (unsigned long)c[0].flows_evicted,
		(unsigned long)c[0].flows_expired);
	for (int l = 0; l < 2; l++) {
		TEST_ASSERT_EQ(invariants(t[l]), 0, "invariants");
		cflow_tracker_free(t[l]);
	}
	return 0;
}

/*
 * The interleaved layout decides exactly as the plain one: the same
 * stream into both, on a small table kept full (kicks, stash,
 * evictions), with FIN/SYN churn, expiry and per-flow packet counts,
 * at 16/16 and 12/32 bits, gives the same verdicts, counts and
 * counters. In bursts, so that the bulk paths run.
 */
static int
test_track_interleaved_equals_plain(void)
{
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK, CFLOW_TCP_RST };
	static const unsigned int widths[][2] = { { 16, 16 }, { 12, 32 } };

	for (unsigned int w = 0; w < 2; w++) {
		struct cflow_tracker *t[2];
		uint64_t rng = 5 + w, at = 1000 * S;
		char what[32];

		for (int l = 0; l < 2; l++) {
			struct cflow_tracker_params p;

			cflow_tracker_params_init(&p, 64);
			p.fp_bits = widths[w][0];
			p.value_bits = widths[w][1];
			p.seed = 42;
			p.count_bits = 3;
			p.table = l ? CF_TABLE_INTERLEAVED : CF_TABLE_PLAIN;
			for (int k = 0; k < CFLOW_CLASS_MAX; k++)
				p.timeout_ns[k] = 5 * S;
			t[l] = cflow_tracker_create(&p);
			TEST_ASSERT(t[l] != NULL, "create %d: %s", l,
				strerror(errno));
		}
		for (int n = 0; n < 600; n++) {
			static uint8_t bufs[CF_BULK_MAX][256];
			struct cflow_input in[CF_BULK_MAX];
			struct cflow_packet pkts[CF_BULK_MAX];
			enum cflow_parse_status st[CF_BULK_MAX];

			at += S / 8;
			for (int k = 0; k < CF_BULK_MAX; k++) {
				/* few flows, many (a full table), few
				 * again: the many expire meanwhile */
				uint32_t f = (uint32_t)(cfu_splitmix64(&rng) %
					(n >= 200 && n < 400 ? 5000 : 120));
				in[k] = churn_frame(bufs[k], f, (uint8_t)(f >> 8),
					flag_set[cfu_splitmix64(&rng) % 5],
					at + (uint64_t)k);
				st[k] = cflow_parse(bufs[k], in[k].len, NULL,
					&pkts[k]);
			}
			TEST_ASSERT_EQ(pair_track(t, in, pkts, st, at + S / 16),
				0, "%u/%u bits, burst %d: verdicts differ",
				widths[w][0], widths[w][1], n);
		}
		snprintf(what, sizeof(what), "%u/%u bits", widths[w][0],
			widths[w][1]);
		if (pair_end(t, what) != 0)
			return -1;
	}
	return 0;
}

/* A sided tracker's frame of flow f (churn_frame()), from @p how:
 * 0 the inside, 1 the outside's reply (addresses and ports swapped),
 * 2 the outside in the inside's direction (a wrong direction for a flow
 * opened inside), 3 an allowed outside port (it may open flows). */
static struct cflow_input
sided_frame(uint8_t *buf, uint32_t f, uint8_t flags, uint64_t at,
		unsigned int how)
{
	struct spec sp = { .family = 4, .src = (uint8_t)f,
		.dst = (uint8_t)(f >> 8), .sport = 1000, .dport = 80,
		.proto = f % 4 ? 6 : 17, .flags = flags };
	struct cflow_input in = { .data = buf, .time_ns = at };

	if (how == 1 || (how == 3 && (f & 1))) {
		sp.src = (uint8_t)(f >> 8);
		sp.dst = (uint8_t)f;
		sp.sport = 80;
		sp.dport = 1000;
	}
	in.flags = how == 0 ? 0 : how == 3 ? CFLOW_IN_OUTSIDE :
		CFLOW_IN_OUTSIDE | CFLOW_IN_NO_CREATE;
	in.len = in.wire_len = build(buf, &sp);
	return in;
}

/*
 * The fast path for a seen flow (seen_fast(), no flow_time or records;
 * sided or not) decides as the general one: the same stream, in time
 * order, into a tracker without flow_time and one with it (which judges
 * an in-order packet at the clock as well, but takes track_seen() and
 * track_one()), gives the same verdicts, per-flow counts and counters.
 * Flows seen again about their timeout (ages of every length), a table
 * kept full for a while, FIN/RST/SYN churn, pauses past the timeout
 * between bursts (flows found idle), counts of 0, 3 and 8 bits
 * (saturating), 16- and 32-bit values. Sided (a firewall, 32-bit
 * fingerprints as its default): packets from the inside, the outside's
 * replies, the outside in the inside's direction (wrong direction;
 * unsolicited for a flow not open) and an allowed outside port that
 * opens flows of either side.
 */
static int
test_track_seen_fast_equals_general(void)
{
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK,
		CFLOW_TCP_RST };
	/* fingerprint and value bits, count bits, sides (1: a sided
	 * tracker; 2: the same frames, inside and outside, into a tracker
	 * that is not sided, which ignores the outside flag) */
	static const unsigned int conf[][4] = { { 16, 16, 0, 0 },
		{ 16, 32, 3, 0 }, { 12, 32, 8, 0 }, { 16, 16, 3, 0 },
		{ 32, 32, 3, 1 }, { 16, 16, 0, 1 }, { 12, 32, 8, 1 },
		{ 32, 32, 3, 2 } };

	for (unsigned int w = 0; w < sizeof(conf) / sizeof(conf[0]); w++) {
		struct cflow_tracker *t[2];
		uint64_t rng = 11 + w, at = 1000 * S;
		char what[48];

		snprintf(what, sizeof(what), "%u/%u bits, count %u%s",
			conf[w][0], conf[w][1], conf[w][2],
			conf[w][3] == 1 ? ", sided" : conf[w][3] ?
			", sides, not sided" : "");
		for (int l = 0; l < 2; l++) {
			struct cflow_tracker_params p;

			cflow_tracker_params_init(&p, 512);
			p.fp_bits = conf[w][0];
			p.value_bits = conf[w][1];
			p.count_bits = conf[w][2];
			p.seed = 42;
			p.flow_time = l == 1;
			p.sided = conf[w][3] == 1;
			for (int k = 0; k < CFLOW_CLASS_MAX; k++)
				p.timeout_ns[k] = (uint64_t)(4 + k) * S;
			t[l] = cflow_tracker_create(&p);
			TEST_ASSERT(t[l] != NULL, "%s: create %d: %s", what, l,
				strerror(errno));
		}
		for (int n = 0; n < 800; n++) {
			static uint8_t bufs[CF_BULK_MAX][256];
			struct cflow_input in[CF_BULK_MAX];
			struct cflow_packet pkts[CF_BULK_MAX];
			enum cflow_parse_status st[CF_BULK_MAX];

			/* random steps (ages of every length), now and
			 * then a pause past every timeout */
			at += n % 97 == 96 ? 9 * S : S / 16 +
				cfu_splitmix64(&rng) % (S / 8);
			for (int k = 0; k < CF_BULK_MAX; k++) {
				/* hot flows (many packets each: the counts
				 * saturate) and warm ones (seen again about
				 * their timeout), then many (a full table:
				 * evictions), then the same again */
				uint64_t r = cfu_splitmix64(&rng);
				uint32_t f = n >= 300 && n < 450 ?
					(uint32_t)(r % 5000) : r % 4 == 0 ?
					100 + (uint32_t)(r >> 8) % 300 :
					(uint32_t)(r >> 8) % 40;

				r = cfu_splitmix64(&rng) % 128;
				if (conf[w][3])
					in[k] = sided_frame(bufs[k], f,
						r % 16 < 6 ? flag_set[r % 16] :
						CFLOW_TCP_ACK, at + (uint64_t)k,
						r < 48 ? 0 : r < 96 ? 1 :
						r < 112 ? 2 : 3);
				else
					in[k] = churn_frame(bufs[k], f,
						(uint8_t)(f >> 8), r % 16 < 6 ?
						flag_set[r % 16] :
						CFLOW_TCP_ACK, at + (uint64_t)k);
				st[k] = cflow_parse(bufs[k], in[k].len, NULL,
					&pkts[k]);
			}
			TEST_ASSERT_EQ(pair_track(t, in, pkts, st, at + S / 16),
				0, "%s, burst %d: verdicts differ", what, n);
		}
		if (conf[w][3]) {
			struct cflow_counters c;

			cflow_counters_get(t[0], &c);
			TEST_ASSERT(conf[w][3] == 1 ? c.wrong_direction > 0 &&
				c.unsolicited > 0 : c.wrong_direction == 0,
				"%s: the history missed a case: %lu wrong "
				"direction, %lu unsolicited", what,
				(unsigned long)c.wrong_direction,
				(unsigned long)c.unsolicited);
		}
		if (pair_end(t, what) != 0)
			return -1;
	}
	return 0;
}

/*
 * A burst must do what the same packets do one at a time, whatever the
 * earlier packets of the burst changed: here on a small table kept full
 * (kicks, stash, evictions of other flows), with FIN/SYN churn and
 * repeated flows. Two trackers with one seed see one history.
 */
static int
test_track_burst_equals_single(void)
{
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK };

	for (int policy = 0; policy < 2; policy++) {
		struct cflow_tracker *b = tracker(16, 32, 10,
			(enum cflow_full_policy)policy);
		struct cflow_tracker *o = tracker(16, 32, 10,
			(enum cflow_full_policy)policy);
		struct cflow_counters cb, co;
		uint64_t rng = 77, at = 1000 * S;

		TEST_ASSERT(b != NULL && o != NULL, "create");
		for (int n = 0; n < 400; n++) {
			static uint8_t bufs[CF_BULK_MAX][256];
			struct cflow_input in[CF_BULK_MAX];
			enum cflow_verdict vb[CF_BULK_MAX], vo;

			at += S / 10;
			for (int k = 0; k < CF_BULK_MAX; k++) {
				uint32_t f = (uint32_t)(cfu_splitmix64(&rng) % 60);
				in[k] = churn_frame(bufs[k], f, 200,
					flag_set[cfu_splitmix64(&rng) % 5],
					at + (uint64_t)k);
			}
			cflow_track_burst(b, in, CF_BULK_MAX, vb);
			for (int k = 0; k < CF_BULK_MAX; k++) {
				cflow_track_burst(o, &in[k], 1, &vo);
				TEST_ASSERT_EQ(vb[k], vo, "policy %d, burst %d, "
					"packet %d: %d in a burst, %d alone",
					policy, n, k, vb[k], vo);
			}
		}
		cflow_counters_get(b, &cb);
		cflow_counters_get(o, &co);
		TEST_ASSERT(memcmp(&cb, &co, sizeof(cb)) == 0, "counters");
		TEST_ASSERT(policy == CFLOW_FULL_EVICT ? cb.flows_evicted > 0 :
			cb.insert_failed > 0, "the table never filled");
		TEST_ASSERT_EQ(invariants(b), 0, "invariants");
		cflow_tracker_free(b);
		cflow_tracker_free(o);
	}
	return 0;
}

/* ------------------------------------------- several streams (flow_time) */

struct stamped {
	uint64_t at;
	struct spec s;
};

/* Track one packet; with @p flow_time trackers sweep as of @p watermark,
 * else plainly. Returns its verdict. */
static enum cflow_verdict
send_swept(struct cflow_tracker *t, const struct stamped *p, bool flow_time,
		uint64_t latest, uint64_t watermark)
{
	enum cflow_verdict v = send(t, &p->s, p->at);

	if (flow_time)
		cflow_sweep_at(t, latest, watermark);
	else
		cflow_sweep(t, latest);
	return v;
}

/*
 * Stream A carries flow F (UDP, 60 s timeout) at 10 s and 50 s; stream B
 * carries flow G every 20 s. The tracker has seen B's 80 s when F's 50 s
 * packet arrives: with flow_time F is seen, as in a time-ordered replay;
 * without, it is expired and new again.
 */
static int
test_track_flow_time_two_streams(void)
{
	struct spec f = { .family = 4, .src = 1, .dst = 2, .sport = 1000,
		.dport = 53, .proto = 17 };
	struct spec g = { .family = 4, .src = 3, .dst = 4, .sport = 2000,
		.dport = 53, .proto = 17 };
	/* Arrival order, and the stream each packet comes from. */
	const struct stamped merged[] = {
		{ 0, g }, { 10 * S, f }, { 20 * S, g }, { 40 * S, g },
		{ 60 * S, g }, { 80 * S, g }, { 50 * S, f }, { 100 * S, g },
	};
	static const int stream[] = { 1, 0, 1, 1, 1, 1, 0, 1 };
	/* Time order: F's 50 s packet between G's 40 and 60 s. */
	static const int ordered[] = { 0, 1, 2, 3, 6, 4, 5, 7 };
	enum { N = sizeof(merged) / sizeof(merged[0]) };

	for (int mode = 0; mode < 3; mode++) {
		/* 0: ordered replay, 1: merged with flow_time, 2: merged. */
		struct cflow_tracker_params p;
		struct cflow_tracker *t;
		struct cflow_counters c;
		uint64_t last[2] = { 0, 0 }, latest = 0;
		enum cflow_verdict v_f50 = CFLOW_VERDICT_MAX;

		cflow_tracker_params_init(&p, 64);
		p.seed = 42;
		p.fp_bits = 32;
		p.flow_time = mode == 1;
		t = cflow_tracker_create(&p);
		TEST_ASSERT(t != NULL, "create");
		for (int k = 0; k < N; k++) {
			int i = mode != 0 ? k : ordered[k];
			enum cflow_verdict v;

			if (merged[i].at > latest)
				latest = merged[i].at;
			last[stream[i]] = merged[i].at;
			v = send_swept(t, &merged[i], mode == 1, latest,
				last[0] < last[1] ? last[0] : last[1]);
			if (i == 6)
				v_f50 = v;
		}
		cflow_sweep_all(t, latest);
		cflow_counters_get(t, &c);
		if (mode != 2) {
			TEST_ASSERT_EQ(v_f50, CFLOW_SEEN, "mode %d: F at 50 s",
				mode);
			TEST_ASSERT(c.flows_new == 2 && c.flows_seen == 6 &&
				c.flows_expired == 0 && c.active == 2,
				"mode %d: new %lu seen %lu expired %lu", mode,
				(unsigned long)c.flows_new,
				(unsigned long)c.flows_seen,
				(unsigned long)c.flows_expired);
		} else {
			/* Today's clock: F judged at 80 s, 70 s idle. */
			TEST_ASSERT_EQ(v_f50, CFLOW_NEW, "latest time: F");
			TEST_ASSERT(c.flows_new == 3 && c.flows_expired == 1,
				"latest time: new %lu expired %lu",
				(unsigned long)c.flows_new,
				(unsigned long)c.flows_expired);
		}
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		if (mode == 1) {
			/* The sweep judges as of the watermark (a table of a
			 * few buckets is one call): as of 60 s, F (50 s) is
			 * not idle and G, stamped later (100 s), is age 0. */
			TEST_ASSERT_EQ(cflow_sweep_at(t, 200 * S, 60 * S),
				0u, "as of 60 s");
			TEST_ASSERT_EQ(cflow_sweep_at(t, 300 * S, 115 * S),
				1u, "F as of 115 s");
			/* A watermark past now is now. */
			TEST_ASSERT_EQ(cflow_sweep_at(t, 400 * S, 900 * S),
				1u, "G as of 400 s");
		}
		cflow_tracker_free(t);
	}
	return 0;
}

/*
 * A time-ordered sequence of packets over many flows, each flow assigned
 * to one of two streams, merged with each stream lagging by up to twice
 * the longest timeout: a flow_time tracker that sweeps as of the
 * watermark must end with the counters of a time-ordered replay. Ticks
 * are the tracker's in both, so the decisions match exactly; with
 * 16-bit values the run spans the tick range several times.
 */
enum { MS_FLOWS = 2000, MS_PACKETS = 40000, MS_BURST = 8 };

struct ms_run {
	struct stamped *pkt;       /* time order */
	uint8_t *stream;           /* of each packet: its flow's */
	uint32_t *order;           /* merged arrival order */
};

static struct cflow_tracker *
ms_tracker(unsigned int value_bits, bool flow_time)
{
	struct cflow_tracker_params p;

	cflow_tracker_params_init(&p, 2 * MS_FLOWS);
	p.fp_bits = 32;
	p.value_bits = value_bits;
	p.seed = 5;
	/* Up to 8 s: twice that is under 17 s, 1/8 of the 16-bit range. */
	p.timeout_ns[CFLOW_CLASS_TCP] = 5 * S;
	p.timeout_ns[CFLOW_CLASS_UDP] = 3 * S;
	p.timeout_ns[CFLOW_CLASS_ICMP] = 4 * S;
	p.timeout_ns[CFLOW_CLASS_OTHER] = 8 * S;
	p.close_linger_ns = 2 * S;
	p.flow_time = flow_time;
	return cflow_tracker_create(&p);
}

/* Feed the packets in the order of idx, MS_BURST at a time; v[i] gets
 * packet i's verdict. mode 0: plain sweeps; 1: flow_time and sweeps as of
 * the watermark. */
static int
ms_feed(const struct ms_run *r, const uint32_t *idx, unsigned int value_bits,
		int mode, struct cflow_counters *c, enum cflow_verdict *v)
{
	struct cflow_tracker *t = ms_tracker(value_bits, mode == 1);
	uint64_t last[2], latest = 0;
	uint32_t left[2] = { 0, 0 };

	TEST_ASSERT(t != NULL, "create");
	for (int s = 0; s < 2; s++)
		last[s] = r->pkt[0].at;
	for (uint32_t k = 0; k < MS_PACKETS; k++)
		left[r->stream[k]]++;
	for (uint32_t n = 0; n < MS_PACKETS; n += MS_BURST) {
		static uint8_t bufs[MS_BURST][256];
		struct cflow_input in[MS_BURST];
		enum cflow_verdict vb[MS_BURST];
		uint64_t mark = UINT64_MAX;

		for (int k = 0; k < MS_BURST; k++) {
			uint32_t i = idx[n + k];

			in[k] = (struct cflow_input){ .data = bufs[k],
				.time_ns = r->pkt[i].at };
			in[k].len = in[k].wire_len = build(bufs[k],
				&r->pkt[i].s);
			if (r->pkt[i].at > latest)
				latest = r->pkt[i].at;
			last[r->stream[i]] = r->pkt[i].at;
			left[r->stream[i]]--;
		}
		cflow_track_burst(t, in, MS_BURST, vb);
		for (int k = 0; k < MS_BURST; k++)
			v[idx[n + k]] = vb[k];
		/* Streams exhausted don't hold the watermark back. */
		for (int s = 0; s < 2; s++)
			if (left[s] != 0 && last[s] < mark)
				mark = last[s];
		if (mode == 1)
			cflow_sweep_at(t, latest, mark == UINT64_MAX ?
				latest : mark);
		else
			cflow_sweep(t, latest);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	}
	cflow_sweep_all(t, latest + S);
	cflow_counters_get(t, c);
	cflow_tracker_free(t);
	return 0;
}

static bool
ms_same(const struct cflow_counters *a, const struct cflow_counters *b)
{
	return a->flows_new == b->flows_new &&
		a->flows_seen == b->flows_seen &&
		a->flows_closed == b->flows_closed &&
		a->flows_expired == b->flows_expired &&
		a->orphan_close == b->orphan_close &&
		a->reused == b->reused && a->active == b->active &&
		a->flows_evicted == b->flows_evicted &&
		a->insert_failed == b->insert_failed;
}

static int
test_track_flow_time_merged_streams(void)
{
	static const uint8_t flag_set[] = { CFLOW_TCP_SYN,
		CFLOW_TCP_SYN | CFLOW_TCP_ACK, CFLOW_TCP_ACK, CFLOW_TCP_ACK,
		CFLOW_TCP_ACK, CFLOW_TCP_FIN | CFLOW_TCP_ACK, CFLOW_TCP_RST };
	static const uint8_t protos[] = { 6, 6, 17, 1, 47 };
	const uint64_t max_lag = 16 * S; /* twice the longest timeout */
	struct ms_run r;
	uint32_t *seq = malloc(MS_PACKETS * sizeof(*seq));
	uint64_t *arrival = malloc(MS_PACKETS * sizeof(*arrival));
	enum cflow_verdict *v_want = malloc(MS_PACKETS * sizeof(*v_want));
	enum cflow_verdict *v_got = malloc(2 * MS_PACKETS * sizeof(*v_got));

	r.pkt = malloc(MS_PACKETS * sizeof(*r.pkt));
	r.stream = malloc(MS_PACKETS);
	r.order = malloc(MS_PACKETS * sizeof(*r.order));
	TEST_ASSERT(seq && arrival && v_want && v_got && r.pkt && r.stream &&
		r.order, "alloc");
	for (uint64_t run = 0; run < 4; run++) {
		unsigned int value_bits = run < 2 ? 32 : 16;
		uint64_t rng = 100 + run, at = 1000 * S, lag[2] = { 0, 0 };
		uint64_t prev[2] = { 0, 0 }, lag_seen = 0;
		struct cflow_counters want, got, plain;
		uint32_t n = 0, ia[2] = { 0, 0 };

		/* Time order: about 10 s between a flow's packets. */
		for (uint32_t k = 0; k < MS_PACKETS; k++) {
			uint32_t f = (uint32_t)(cfu_splitmix64(&rng) % MS_FLOWS);
			struct spec s = { .family = 4, .src = (uint8_t)f,
				.dst = (uint8_t)(f >> 8),
				.sport = (uint16_t)(1024 + f), .dport = 80,
				.proto = protos[f % 5],
				.flags = flag_set[cfu_splitmix64(&rng) % 7] };
			struct cflow_packet pk;
			uint8_t buf[256];

			at += cfu_splitmix64(&rng) % (10 * S / 1000);
			r.pkt[k] = (struct stamped){ at, s };
			/* By the canonical key's hash, as the application
			 * picks a flow's worker (ICMP flows f and f' can be
			 * one flow: no ports, and the addresses swapped). */
			if (cflow_parse(buf, build(buf, &s), NULL, &pk) !=
					CFLOW_PARSE_OK)
				TEST_ASSERT(false, "parse");
			r.stream[k] = (uint8_t)(cflow_hash_key(&pk.key, run) &
				1);
			seq[k] = k;
			/* Each stream's arrival: its time plus a lag that
			 * jumps now and then, mostly near 0 or max_lag,
			 * never before its last. */
			if (cfu_splitmix64(&rng) % 200 == 0)
				lag[r.stream[k]] = cfu_splitmix64(&rng) & 1 ?
					max_lag - cfu_splitmix64(&rng) % S :
					cfu_splitmix64(&rng) % S;
			arrival[k] = at + lag[r.stream[k]];
			if (arrival[k] < prev[r.stream[k]])
				arrival[k] = prev[r.stream[k]];
			prev[r.stream[k]] = arrival[k];
		}
		/* Merge the streams by arrival, each in its order. */
		while (n < MS_PACKETS) {
			while (ia[0] < MS_PACKETS && r.stream[ia[0]] != 0)
				ia[0]++;
			while (ia[1] < MS_PACKETS && r.stream[ia[1]] != 1)
				ia[1]++;
			if (ia[1] == MS_PACKETS || (ia[0] < MS_PACKETS &&
					arrival[ia[0]] <= arrival[ia[1]]))
				r.order[n++] = ia[0]++;
			else
				r.order[n++] = ia[1]++;
		}
		TEST_ASSERT_EQ(ms_feed(&r, seq, value_bits, 0, &want, v_want),
			0, "ordered");
		TEST_ASSERT_EQ(ms_feed(&r, r.order, value_bits, 1, &got, v_got),
			0, "merged, flow_time");
		TEST_ASSERT_EQ(ms_feed(&r, r.order, value_bits, 0, &plain,
			v_got + MS_PACKETS), 0, "merged, latest time");
		/* How far behind the latest time seen packets came. */
		for (uint32_t k = 0, front = 0; k < MS_PACKETS; k++) {
			uint64_t x = r.pkt[r.order[k]].at;

			if (x > r.pkt[front].at)
				front = r.order[k];
			if (r.pkt[front].at - x > lag_seen)
				lag_seen = r.pkt[front].at - x;
		}
		printf("# %u-bit values, lag up to %.1f s: new %lu seen %lu "
			"closed %lu expired %lu orphan %lu reused %lu active "
			"%lu; at the latest time: new %lu expired %lu\n",
			value_bits, (double)lag_seen / S,
			(unsigned long)want.flows_new,
			(unsigned long)want.flows_seen,
			(unsigned long)want.flows_closed,
			(unsigned long)want.flows_expired,
			(unsigned long)want.orphan_close,
			(unsigned long)want.reused, (unsigned long)want.active,
			(unsigned long)plain.flows_new,
			(unsigned long)plain.flows_expired);
		TEST_ASSERT(want.flows_expired > 0 && want.flows_closed > 0 &&
			want.reused > 0 && want.orphan_close > 0 &&
			want.flows_evicted == 0 && want.insert_failed == 0,
			"the run did not exercise every transition");
		TEST_ASSERT(ms_same(&got, &want), "%u-bit values, flow_time: "
			"new %lu seen %lu closed %lu expired %lu orphan %lu "
			"reused %lu active %lu", value_bits,
			(unsigned long)got.flows_new,
			(unsigned long)got.flows_seen,
			(unsigned long)got.flows_closed,
			(unsigned long)got.flows_expired,
			(unsigned long)got.orphan_close,
			(unsigned long)got.reused, (unsigned long)got.active);
		for (uint32_t k = 0; k < MS_PACKETS; k++)
			TEST_ASSERT_EQ(v_got[k], v_want[k], "packet %u: %d, "
				"%d in time order", k, v_got[k], v_want[k]);
		/* The merge matters: judged at the latest time, it differs. */
		TEST_ASSERT(!ms_same(&plain, &want), "merge had no effect");
	}
	free(seq);
	free(arrival);
	free(v_want);
	free(v_got);
	free(r.pkt);
	free(r.stream);
	free(r.order);
	return 0;
}

/* The sweep's pacing: work owed in proportion to time, capped. */
static int
test_pace(void)
{
	struct cflow_pace p = { 0 };

	TEST_ASSERT_EQ(cflow_pace_take(&p, 5 * S, 100, S, 1000), 0u,
		"the first call starts the clock");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 5 * S + S / 2, 100, S, 1000), 50u,
		"half a period, half the units");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 6 * S, 100, S, 20), 20u,
		"at most max a call");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 6 * S, 100, S, 1000), 30u,
		"the rest stays owed");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 100 * S, 100, S, 1000), 100u,
		"never more than total owed");
	TEST_ASSERT_EQ(cflow_pace_take(&p, 100 * S, 100, S, 1000), 0u,
		"nothing owed without time");
	return 0;
}

/* ------------------------------------------------------ a full table */

/* Flow f of a flood: a TCP SYN from 10.x.y.z, port 1024 + (f >> 16). */
static struct spec
flood_flow(uint32_t f)
{
	struct spec s = { .family = 4, .src = (uint8_t)f,
		.dst = (uint8_t)(f >> 8), .sport = (uint16_t)(1024 + (f >> 16)),
		.dport = 80, .proto = 6, .flags = CFLOW_TCP_SYN };

	return s;
}

static uint64_t
flow_hash(uint32_t f, uint64_t seed)
{
	struct spec s = flood_flow(f);
	struct cflow_packet pkt;
	uint8_t buf[256];

	cflow_parse(buf, build(buf, &s), NULL, &pkt);
	return cflow_hash_key(&pkt.key, seed);
}

/*
 * A SYN flood against a full table, per policy: the table reaches its
 * load limit while filling; from then on new flows make no kick walk
 * (kick steps and relocations stay put but for stash moves), evict gives
 * every one a slot by evicting in its own buckets, untracked turns away
 * those whose buckets are full; the counters keep their invariants
 * after every burst, and every flow not evicted is still found. Expiry
 * then empties the table and new flows walk again.
 */
static int
test_track_flood_full_table(void)
{
	enum { FLOOD_BURSTS = 200, MAX_FLOWS = 40000 };
	static uint8_t bufs[CF_BULK_MAX][256];
	static bool stored[MAX_FLOWS];

	for (int policy = 0; policy < 2; policy++) {
		/* 32-bit fingerprints: no false positive to blur the
		 * accounting. */
		struct cflow_tracker *t = tracker(4000, 32, 10,
			(enum cflow_full_policy)policy);
		const struct cf_filter *f = cflow_tracker_filter(t);
		uint64_t at = 10 * S, steps, reloc, lost = 0, kept = 0;
		uint64_t evicted0, failed0;
		uint32_t next = 0;
		unsigned int verdicts[CFLOW_VERDICT_MAX] = { 0 };
		struct cflow_counters c;
		struct cf_stats st;

		TEST_ASSERT(t != NULL, "create");
		memset(stored, 0, sizeof(stored));
		/* Fill to the load limit with a full stash. */
		do {
			struct cflow_input in[CF_BULK_MAX];
			enum cflow_verdict v[CF_BULK_MAX];

			for (int k = 0; k < CF_BULK_MAX; k++, next++) {
				struct spec sp = flood_flow(next);

				in[k] = (struct cflow_input){ .data = bufs[k],
					.time_ns = at };
				in[k].len = in[k].wire_len = build(bufs[k],
					&sp);
			}
			cflow_track_burst(t, in, CF_BULK_MAX, v);
			for (int k = 0; k < CF_BULK_MAX; k++)
				stored[next - CF_BULK_MAX + k] =
					v[k] == CFLOW_NEW;
			at += S / 1000;
			cf_stats(f, &st);
			TEST_ASSERT(next < 4 * st.slots, "policy %d: never at "
				"the limit", policy);
		} while (!st.saturated || st.stash_used != CF_STASH_SIZE);
		cflow_counters_get(t, &c);
		evicted0 = c.flows_evicted;
		failed0 = c.insert_failed;
		steps = st.kicks_total + st.kicks_failed;
		reloc = cf_relocations(f);

		/* The flood. */
		for (int b = 0; b < FLOOD_BURSTS; b++) {
			struct cflow_input in[CF_BULK_MAX];
			enum cflow_verdict v[CF_BULK_MAX];

			for (int k = 0; k < CF_BULK_MAX; k++, next++) {
				struct spec sp = flood_flow(next);

				in[k] = (struct cflow_input){ .data = bufs[k],
					.time_ns = at };
				in[k].len = in[k].wire_len = build(bufs[k],
					&sp);
			}
			cflow_track_burst(t, in, CF_BULK_MAX, v);
			for (int k = 0; k < CF_BULK_MAX; k++) {
				verdicts[v[k]]++;
				stored[next - CF_BULK_MAX + k] =
					v[k] == CFLOW_NEW;
			}
			at += S / 1000;
			TEST_ASSERT_EQ(invariants(t), 0, "policy %d, burst %d",
				policy, b);
		}
		cflow_counters_get(t, &c);
		cf_stats(f, &st);
		printf("# %s: load %.4f, flood of %d: %u new, %u turned away, "
			"%lu evicted, %lu kick steps, %lu relocations, %lu "
			"walks skipped\n", policy ? "untracked" : "evict",
			st.load_factor, FLOOD_BURSTS * CF_BULK_MAX,
			verdicts[CFLOW_NEW], verdicts[CFLOW_UNTRACKED_FULL],
			(unsigned long)(c.flows_evicted - evicted0),
			(unsigned long)(st.kicks_total + st.kicks_failed -
			steps), (unsigned long)(cf_relocations(f) - reloc),
			(unsigned long)st.walks_skipped);
		TEST_ASSERT_EQ(verdicts[CFLOW_NEW] +
			verdicts[CFLOW_UNTRACKED_FULL],
			(unsigned int)(FLOOD_BURSTS * CF_BULK_MAX), "verdicts");
		if (policy == CFLOW_FULL_EVICT)
			TEST_ASSERT(verdicts[CFLOW_UNTRACKED_FULL] == 0 &&
				c.insert_failed == 0 &&
				c.flows_evicted - evicted0 >
				FLOOD_BURSTS * CF_BULK_MAX / 2, "evict: %u "
				"untracked, %lu evicted",
				verdicts[CFLOW_UNTRACKED_FULL],
				(unsigned long)(c.flows_evicted - evicted0));
		else
			TEST_ASSERT(c.flows_evicted == 0 &&
				c.insert_failed - failed0 ==
				verdicts[CFLOW_UNTRACKED_FULL] &&
				verdicts[CFLOW_UNTRACKED_FULL] >
				FLOOD_BURSTS * CF_BULK_MAX / 2, "untracked: "
				"%u turned away",
				verdicts[CFLOW_UNTRACKED_FULL]);
		/* Bounded work: no walk; stash items moving into evicted
		 * slots are the only relocations. */
		TEST_ASSERT(st.kicks_total + st.kicks_failed == steps,
			"policy %d: %lu kick steps in the flood", policy,
			(unsigned long)(st.kicks_total + st.kicks_failed -
			steps));
		TEST_ASSERT(cf_relocations(f) - reloc <= 64, "policy %d: %lu "
			"relocations in the flood", policy,
			(unsigned long)(cf_relocations(f) - reloc));
		TEST_ASSERT(st.walks_skipped >= FLOOD_BURSTS * CF_BULK_MAX / 2,
			"policy %d: %lu walks skipped", policy,
			(unsigned long)st.walks_skipped);
		TEST_ASSERT_EQ(c.active, st.items, "active vs items");
		/* No false negatives: a stored flow is gone only if evicted. */
		for (uint32_t k = 0; k < next; k++) {
			if (!stored[k])
				continue;
			if (cf_lookup_with_hash(f, flow_hash(k, 42), NULL))
				kept++;
			else
				lost++;
		}
		TEST_ASSERT(lost == c.flows_evicted &&
			kept + lost == c.flows_new && kept == c.active,
			"policy %d: %lu stored flows lost, %lu evicted", policy,
			(unsigned long)lost, (unsigned long)c.flows_evicted);

		/* Everything expires: below the limit, new flows walk. */
		at += 400 * S;
		cflow_sweep_all(t, at);
		cf_stats(f, &st);
		TEST_ASSERT(st.items == 0 && !st.saturated, "after expiry: "
			"%lu items, saturated %d", (unsigned long)st.items,
			st.saturated);
		steps = st.kicks_total;
		while (st.stash_used == 0) {
			struct spec sp = flood_flow(next++);

			TEST_ASSERT_EQ(send(t, &sp, at), CFLOW_NEW, "refill");
			cf_stats(f, &st);
		}
		printf("# %s: refilled to %.4f with %lu kicks before a walk "
			"failed\n", policy ? "untracked" : "evict",
			st.load_factor,
			(unsigned long)(st.kicks_total - steps));
		TEST_ASSERT(st.kicks_total > steps && st.load_factor >= 0.93,
			"refill: load %.4f", st.load_factor);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

/* ------------------------------------------------------- warm restart */

/* 40 UDP flows and one TCP flow at 1 s, the TCP flow closed (lingering)
 * at 2 s: a table to save. */
static struct cflow_tracker *
restart_first_run(void)
{
	struct cflow_tracker *t = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);

	if (t == NULL)
		return NULL;
	for (uint16_t k = 0; k < 40; k++) {
		struct spec u = { .family = 4, .src = 1, .dst = 2,
			.sport = (uint16_t)(1000 + k), .dport = 53,
			.proto = 17 };

		if (send(t, &u, S) != CFLOW_NEW)
			goto fail;
	}
	if (send(t, &syn, S) != CFLOW_NEW ||
			send(t, &fin, 2 * S) != CFLOW_CLOSING)
		goto fail;
	return t;
fail:
	cflow_tracker_free(t);
	return NULL;
}

static void *
restart_save(const struct cflow_tracker *t, size_t *len)
{
	void *buf;

	*len = cflow_tracker_save_size(t);
	buf = malloc(*len);
	if (buf != NULL && cflow_tracker_save(t, buf, *len) != (int64_t)*len) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * cflow_tracker_save_bound() bounds what a tracker of the same parameters
 * saves, empty or with flows, across table shapes; refused parameters give
 * 0 with EINVAL.
 */
static int
test_track_save_bound(void)
{
	static const struct {
		uint64_t capacity;
		unsigned int fp_bits, value_bits;
		bool exact_size;
		enum cf_table_type table;
	} shapes[] = {
		{ 1000, 12, 32, false, CF_TABLE_PLAIN },
		{ 1000, 16, 16, false, CF_TABLE_INTERLEAVED },
		{ 100000, 12, 32, true, CF_TABLE_PLAIN },
		{ 5000, 32, 32, false, CF_TABLE_INTERLEAVED },
		{ 5000, 8, 16, true, CF_TABLE_PLAIN },
	};

	for (unsigned int i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct cflow_tracker_params p = {
			.capacity = shapes[i].capacity,
			.fp_bits = shapes[i].fp_bits,
			.value_bits = shapes[i].value_bits,
			.exact_size = shapes[i].exact_size,
			.table = shapes[i].table,
			.seed = 5, .fixed_seed = true,
		};
		uint64_t bound = cflow_tracker_save_bound(&p);
		struct cflow_tracker *t = cflow_tracker_create(&p);

		TEST_ASSERT(t != NULL && bound != 0, "shape %u", i);
		for (uint16_t k = 0; k < 500; k++) {
			struct spec u = { .family = 4, .src = 2, .dst = 1,
				.sport = 53, .dport = (uint16_t)(1000 + k),
				.proto = 17 };

			(void)send(t, &u, S);
		}
		TEST_ASSERT(cflow_tracker_save_size(t) <= bound &&
			bound - cflow_tracker_save_size(t) <= 64 *
			CF_STASH_SIZE, "shape %u: saves %zu, bound %lu", i,
			cflow_tracker_save_size(t), (unsigned long)bound);
		cflow_tracker_free(t);
	}
	errno = 0;
	TEST_ASSERT_EQ(cflow_tracker_save_bound(&(struct cflow_tracker_params){
		.capacity = 1000, .value_bits = 24 }), 0, "value_bits 24");
	TEST_ASSERT_EQ(errno, EINVAL, "errno %d", errno);
	return 0;
}

/*
 * A tracker takes over a saved table: flows alive across the restart are
 * found, not counted new; the saved clock goes on, so that the time
 * spent down ages them; the closed flow still lingers.
 */
static int
test_track_restore(void)
{
	struct cflow_tracker *a = restart_first_run(), *b, *c;
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec ack = tcp(CFLOW_TCP_ACK, false);
	struct cflow_counters cb, cc;
	uint64_t saved_ns = 0;
	char err[128];
	size_t len;
	void *buf;

	TEST_ASSERT(a != NULL, "first run");
	buf = restart_save(a, &len);
	TEST_ASSERT(buf != NULL, "save");
	TEST_ASSERT_EQ(cflow_tracker_save(a, buf, len - 1), -ENOSPC, "short");

	/* 10 s later: every UDP flow found; the TCP flow lingers (a late
	 * ACK is seen, a SYN reuses it). */
	b = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	TEST_ASSERT(b != NULL, "second tracker");
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, &saved_ns, err,
		sizeof(err)), 0, "restore: %s", err);
	TEST_ASSERT_EQ(saved_ns, 2 * S, "saved clock");
	cflow_counters_get(b, &cb);
	TEST_ASSERT(cb.active == 40 && cb.flows_restored == 40 &&
		cb.flows_new == 0, "restored: active %lu restored %lu",
		(unsigned long)cb.active, (unsigned long)cb.flows_restored);
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, NULL, NULL, 0),
		-EBUSY, "restored twice");
	for (uint16_t k = 0; k < 40; k++) {
		struct spec u = { .family = 4, .src = 2, .dst = 1, .sport = 53,
			.dport = (uint16_t)(1000 + k), .proto = 17 };

		TEST_ASSERT_EQ(send(b, &u, 10 * S), CFLOW_SEEN, "flow %u", k);
	}
	TEST_ASSERT_EQ(send(b, &ack, 10 * S), CFLOW_SEEN, "ACK while closing");
	TEST_ASSERT_EQ(send(b, &syn, 11 * S), CFLOW_NEW, "SYN reuses it");
	cflow_counters_get(b, &cb);
	TEST_ASSERT(cb.flows_new == 1 && cb.reused == 1 && cb.active == 41 &&
		cb.flows_seen == 41, "new %lu reused %lu active %lu seen %lu",
		(unsigned long)cb.flows_new, (unsigned long)cb.reused,
		(unsigned long)cb.active, (unsigned long)cb.flows_seen);
	TEST_ASSERT_EQ(invariants(b), 0, "invariants after restore");

	/* Down for 100 s, over the UDP timeout: every flow expires, none is
	 * found again. */
	c = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	TEST_ASSERT(c != NULL, "third tracker");
	TEST_ASSERT_EQ(cflow_tracker_restore(c, buf, len, NULL, NULL, 0), 0,
		"restore");
	cflow_sweep_all(c, 102 * S);
	cflow_counters_get(c, &cc);
	TEST_ASSERT(cc.flows_expired == 40 && cc.active == 0, "expired %lu "
		"active %lu", (unsigned long)cc.flows_expired,
		(unsigned long)cc.active);
	TEST_ASSERT_EQ(invariants(c), 0, "invariants after expiry");
	cflow_tracker_free(a);
	cflow_tracker_free(b);
	cflow_tracker_free(c);
	free(buf);
	return 0;
}

/* Untrusted input and other parameters: refused with the reason, the
 * tracker unchanged. */
static int
test_track_restore_refused(void)
{
	struct cflow_tracker *a = restart_first_run(), *b;
	struct cflow_tracker_params p;
	struct cflow_counters c;
	char err[128];
	uint8_t *bad;
	size_t len;
	void *buf;

	TEST_ASSERT(a != NULL, "first run");
	buf = restart_save(a, &len);
	TEST_ASSERT(buf != NULL, "save");
	bad = malloc(len + 1);
	TEST_ASSERT(bad != NULL, "malloc");
	b = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	TEST_ASSERT(b != NULL, "tracker");

	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, 10, NULL, err,
		sizeof(err)), -ENODATA, "a header cut");
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len - 1, NULL, err,
		sizeof(err)), -ENODATA, "a table cut");
	memcpy(bad, buf, len);
	bad[len] = 0;
	TEST_ASSERT_EQ(cflow_tracker_restore(b, bad, len + 1, NULL, err,
		sizeof(err)), -EBADMSG, "a byte after");
	for (size_t at = 0; at < len; at += len / 97 + 1) {
		int ret;

		memcpy(bad, buf, len);
		bad[at] ^= 0x20;
		ret = cflow_tracker_restore(b, bad, len, NULL, err,
			sizeof(err));
		TEST_ASSERT(ret == -EBADMSG || ret == -ENODATA ||
			ret == -ENOTSUP || ret == -EPROTONOSUPPORT,
			"byte %zu flipped: %d (%s)", at, ret, err);
	}
	cflow_counters_get(b, &c);
	TEST_ASSERT(c.active == 0 && c.flows_restored == 0, "unchanged");
	cflow_tracker_free(b);

	/* Other table parameters: each named. */
	static const struct {
		unsigned int fp_bits, value_bits;
		uint64_t capacity, seed, linger_s;
		const char *name;
	} other[] = {
		{ 12, 0, 1000, 42, 10, "fingerprint bits" },
		{ 16, 0, 2000, 42, 10, "capacity" },
		{ 16, 0, 1000, 43, 10, "seed" },
		{ 16, 16, 1000, 42, 10, "tick" },
	};
	for (unsigned int i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		cflow_tracker_params_init(&p, other[i].capacity);
		p.fp_bits = other[i].fp_bits;
		p.seed = other[i].seed;
		p.close_linger_ns = other[i].linger_s * S;
		p.full_policy = CFLOW_FULL_EVICT;
		if (other[i].value_bits != 0)
			p.value_bits = other[i].value_bits;
		b = cflow_tracker_create(&p);
		TEST_ASSERT(b != NULL, "tracker %u", i);
		err[0] = '\0';
		TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, NULL, err,
			sizeof(err)), -ESTALE, "%s", other[i].name);
		TEST_ASSERT(strstr(err, other[i].name) != NULL, "%s: \"%s\"",
			other[i].name, err);
		cflow_tracker_free(b);
	}
	/* Other timeouts on the same tick: taken over. */
	cflow_tracker_params_init(&p, 1000);
	p.fp_bits = 16;
	p.seed = 42;
	p.close_linger_ns = 10 * S;
	p.timeout_ns[CFLOW_CLASS_UDP] = 5 * S;
	b = cflow_tracker_create(&p);
	TEST_ASSERT(b != NULL, "tracker");
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, NULL, err,
		sizeof(err)), 0, "other timeouts: %s", err);
	cflow_sweep_all(b, 9 * S);
	cflow_counters_get(b, &c);
	TEST_ASSERT_EQ(c.flows_expired, 40, "the new timeout applies");
	cflow_tracker_free(b);
	/* A tracker that has tracked a packet. */
	b = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	TEST_ASSERT(b != NULL, "tracker");
	send(b, &(struct spec){ .family = 4, .src = 9, .dst = 8, .sport = 1,
		.dport = 2, .proto = 17 }, S);
	TEST_ASSERT_EQ(cflow_tracker_restore(b, buf, len, NULL, err,
		sizeof(err)), -EBUSY, "a used tracker");
	cflow_tracker_free(b);
	cflow_tracker_free(a);
	free(bad);
	free(buf);
	return 0;
}


/* ------------------------------------------------ lookup, flush, events */

static struct cflow_packet
parsed(const struct spec *s)
{
	struct cflow_packet p;
	uint8_t buf[256];

	memset(&p, 0, sizeof(p));
	(void)cflow_parse(buf, build(buf, s), NULL, &p);
	return p;
}

/* One flow looked up by its key as the table holds it: open, idle,
 * closing, expired, unknown; a flush empties the table and counts the
 * open flows it removed. */
static int
test_track_lookup_flush(void)
{
	struct cflow_tracker *t = tracker(1000, 16, 10, CFLOW_FULL_EVICT);
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec fin = tcp(CFLOW_TCP_FIN | CFLOW_TCP_ACK, true);
	struct spec u = { .family = 6, .src = 1, .dst = 2, .sport = 5353,
		.dport = 53, .proto = 17 };
	struct spec other = { .family = 4, .src = 7, .dst = 8, .sport = 1,
		.dport = 2, .proto = 17 };
	struct cflow_packet ps = parsed(&syn), pu = parsed(&u);
	struct cflow_tracker_params p;
	struct cflow_flow_info fi;
	struct cflow_counters c;

	TEST_ASSERT(t != NULL, "tracker");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), 0, "unknown");
	TEST_ASSERT(!fi.tracked, "unknown: not tracked");
	TEST_ASSERT_EQ(send(t, &syn, S), CFLOW_NEW, "SYN");
	TEST_ASSERT_EQ(send(t, &u, S), CFLOW_NEW, "UDP");
	TEST_ASSERT_EQ(send(t, &other, 5 * S), CFLOW_NEW, "clock to 5 s");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), 1, "TCP");
	TEST_ASSERT(fi.tracked && !fi.closing && !fi.expired &&
		fi.proto_class == CFLOW_CLASS_TCP, "TCP open");
	TEST_ASSERT(fi.idle_ns > 39 * S / 10 && fi.idle_ns < 41 * S / 10,
		"idle %lu ns", (unsigned long)fi.idle_ns);
	TEST_ASSERT_EQ(send(t, &fin, 6 * S), CFLOW_CLOSING, "FIN");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), 1, "closing");
	TEST_ASSERT(fi.closing && !fi.expired && fi.idle_ns < S / 10,
		"closing, just now");
	/* 64 s: the UDP flow is past its 60 s, the FIN's linger (10 s)
	 * is over; not swept yet. */
	TEST_ASSERT_EQ(send(t, &other, 64 * S), CFLOW_SEEN, "clock to 64 s");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &pu.key, &fi), 1, "UDP");
	TEST_ASSERT(fi.expired && !fi.closing &&
		fi.proto_class == CFLOW_CLASS_UDP, "UDP expired");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), 1, "TCP");
	TEST_ASSERT(fi.expired && fi.closing, "linger over");

	TEST_ASSERT_EQ(cflow_tracker_flush(t), 2, "two open flows flushed");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_flushed == 2 && c.active == 0, "flushed %lu "
		"active %lu", (unsigned long)c.flows_flushed,
		(unsigned long)c.active);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants after a flush");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &pu.key, &fi), 0, "gone");
	TEST_ASSERT_EQ(send(t, &other, 65 * S), CFLOW_NEW, "opened anew");
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);

	cflow_tracker_params_init(&p, 1000);
	p.hash = CFLOW_HASH_RSS;
	t = cflow_tracker_create(&p);
	TEST_ASSERT(t != NULL, "rss tracker");
	TEST_ASSERT_EQ(cflow_tracker_lookup(t, &ps.key, &fi), -ENOTSUP,
		"no key lookup with the NIC's hash");
	cflow_tracker_free(t);
	return 0;
}

/* Events carry the packet's own direction; JSON is one object. */
static int
test_event_json(void)
{
	struct spec syn = tcp(CFLOW_TCP_SYN, false);
	struct spec rst = tcp(CFLOW_TCP_RST | CFLOW_TCP_ACK, true);
	struct spec u6 = { .family = 6, .src = 1, .dst = 2, .sport = 5353,
		.dport = 53, .proto = 17 };
	struct cflow_packet ps = parsed(&syn), pr = parsed(&rst);
	struct cflow_packet pu = parsed(&u6);
	struct cflow_event e, er;
	char buf[CFLOW_EVENT_JSON_MAX], small[40];
	int n;

	TEST_ASSERT_EQ(cflow_event_init(&e, &ps, CFLOW_SEEN, 1, 60), 0,
		"no event for SEEN");
	TEST_ASSERT_EQ(cflow_event_init(&e, &ps, CFLOW_NEW,
		UINT64_C(1700000000123456789), 60), 1, "NEW");
	TEST_ASSERT_EQ(cflow_event_init(&er, &pr, CFLOW_CLOSING, 2, 54), 1,
		"CLOSING");
	/* The reply's source is the SYN's destination. */
	TEST_ASSERT(memcmp(er.src, e.dst, 16) == 0 &&
		memcmp(er.dst, e.src, 16) == 0 && er.sport == 443 &&
		er.dport == 40000 && e.sport == 40000 && e.dport == 443,
		"directions");
	TEST_ASSERT(e.type == CFLOW_EVENT_NEW && e.reason == CFLOW_CLOSE_NONE &&
		er.type == CFLOW_EVENT_CLOSE && er.reason == CFLOW_CLOSE_RST,
		"types");
	e.worker = 3;
	e.port = 1;
	n = cflow_event_json(&e, buf, sizeof(buf));
	TEST_ASSERT(n > 0 && (size_t)n == strlen(buf), "json");
	TEST_ASSERT(strstr(buf, "\"event\":\"new\",\"time\":"
		"\"2023-11-14T22:13:20.123456789Z\",\"time_ns\":"
		"1700000000123456789,\"worker\":3,\"port\":1,\"proto\":6,"
		"\"class\":\"tcp\"") != NULL && strstr(buf, "\"sport\":40000,")
		&& strstr(buf, "\"dport\":443,\"len\":60,\"tcp_flags\":2}"),
		"%s", buf);
	n = cflow_event_json(&er, buf, sizeof(buf));
	TEST_ASSERT(n > 0 && strstr(buf, "\"reason\":\"rst\"}") != NULL, "%s",
		buf);
	TEST_ASSERT_EQ(cflow_event_json(&er, small, sizeof(small)), -ENOSPC,
		"small buffer");
	TEST_ASSERT_EQ(cflow_event_init(&e, &pu, CFLOW_NEW, 0, 80), 1, "v6");
	n = cflow_event_json(&e, buf, sizeof(buf));
	TEST_ASSERT(n > 0 && strstr(buf, "\"class\":\"udp\"") &&
		strstr(buf, "\"src\":\"") && strchr(strstr(buf, "\"src\":\""),
		':') != NULL, "%s", buf);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_track_no_create),
	TEST_CASE(test_track_tcp_strict),
	TEST_CASE(test_track_admission),
	TEST_CASE(test_track_admission_model),
	TEST_CASE(test_track_emergency),
	TEST_CASE(test_track_counts),
	TEST_CASE(test_track_tcp_lifecycle),
	TEST_CASE(test_track_rst_no_linger_and_orphans),
	TEST_CASE(test_track_reuse),
	TEST_CASE(test_track_udp_idle_on_access),
	TEST_CASE(test_track_sweep_bounds),
	TEST_CASE(test_track_sweep_all_exact),
	TEST_CASE(test_track_time_backwards),
	TEST_CASE(test_track_full_table),
	TEST_CASE(test_track_params_rejected),
	TEST_CASE(test_track_params_zero_is_default),
	TEST_CASE(test_state_step),
	TEST_CASE(test_track_largest_table),
	TEST_CASE(test_track_rss_hash_and_fallback),
	TEST_CASE(test_track_long_burst),
	TEST_CASE(test_track_given_hash),
	TEST_CASE(test_track_same_flow_in_burst),
	TEST_CASE(test_track_burst_equals_single),
	TEST_CASE(test_track_interleaved_equals_plain),
	TEST_CASE(test_track_seen_fast_equals_general),
	TEST_CASE(test_track_flow_time_two_streams),
	TEST_CASE(test_track_flow_time_merged_streams),
	TEST_CASE(test_track_flood_full_table),
	TEST_CASE(test_pace),
	TEST_CASE(test_track_save_bound),
	TEST_CASE(test_track_restore),
	TEST_CASE(test_track_restore_refused),
	TEST_CASE(test_track_lookup_flush),
	TEST_CASE(test_event_json),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
