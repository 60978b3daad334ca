/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_TEST_H_
#define _CFLOW_TEST_H_

/*
 * Trackers for the unit tests of lib/cflow (test_parse, test_track,
 * test_track_model; test_clock's invariants): a tracker of a fixed seed,
 * one packet of struct spec (packets.h) sent through it, and the
 * invariants of its counters, checked after every scenario. Static and
 * marked unused, as packets.h's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cflow.h"
#include "packets.h"
#include "test.h"

#define S (UINT64_C(1000000000))

/* A tracker of @p capacity flows and seed 42; a linger of @p linger_s
 * seconds (0: none, CFLOW_LINGER_NONE). */
static __attribute__((unused)) struct cflow_tracker *
tracker(uint64_t capacity, unsigned int fp_bits, uint64_t linger_s,
		enum cflow_full_policy policy)
{
	struct cflow_tracker_params p;

	cflow_tracker_params_init(&p, capacity);
	p.fp_bits = fp_bits;
	p.seed = 42;
	p.close_linger_ns = linger_s == 0 ? CFLOW_LINGER_NONE : linger_s * S;
	p.full_policy = policy;
	return cflow_tracker_create(&p);
}

/* Send one packet at time t (ns); returns its verdict. */
static __attribute__((unused)) enum cflow_verdict
send(struct cflow_tracker *t, const struct spec *s, uint64_t at)
{
	uint8_t buf[256];
	struct cflow_input in = { .data = buf, .time_ns = at };
	enum cflow_verdict v;

	in.len = build(buf, s);
	in.wire_len = in.len;
	cflow_track_burst(t, &in, 1, &v);
	return v;
}

/* The counters' invariants (cflow_track.h): every flow accounted for,
 * every packet classified once. */
static __attribute__((unused)) int
invariants(const struct cflow_tracker *t)
{
	struct cflow_counters c;

	cflow_counters_get(t, &c);
	TEST_ASSERT_EQ(c.flows_new + c.flows_restored,
		cflow_flows_accounted(&c), "flows_new %lu + restored %lu "
		"!= active %lu + closed %lu + expired %lu + evicted %lu",
		(unsigned long)c.flows_new, (unsigned long)c.flows_restored,
		(unsigned long)c.active,
		(unsigned long)c.flows_closed, (unsigned long)c.flows_expired,
		(unsigned long)c.flows_evicted);
	TEST_ASSERT_EQ(c.packets, cflow_packets_classified(&c), "packets %lu, "
		"classified %lu", (unsigned long)c.packets,
		(unsigned long)cflow_packets_classified(&c));
	return 0;
}

/* A packet of the TCP flow 10.0.0.1:40000 <-> 10.0.0.2:443, from the
 * client or (@p reply) the server. */
static __attribute__((unused)) struct spec
tcp(uint8_t flags, bool reply)
{
	struct spec s = { .family = 4, .src = 1, .dst = 2, .sport = 40000,
		.dport = 443, .proto = 6, .flags = flags };

	if (reply) {
		s.src = 2;
		s.dst = 1;
		s.sport = 443;
		s.dport = 40000;
	}
	return s;
}

/* One packet through cflow_track_parsed() with input flags; its verdict,
 * and its ordinal in *count if count is not NULL. */
static __attribute__((unused)) enum cflow_verdict
send_in(struct cflow_tracker *t, const struct spec *s, uint64_t at,
		uint8_t flags, uint8_t *count)
{
	uint8_t buf[256], n;
	struct cflow_input in = { .data = buf, .time_ns = at, .flags = flags };
	struct cflow_packet pkt;
	enum cflow_parse_status st;
	enum cflow_verdict v;

	in.len = build(buf, s);
	in.wire_len = in.len;
	st = cflow_parse(buf, in.len, NULL, &pkt);
	cflow_track_parsed(t, &in, &pkt, &st, 1, &v, &n);
	if (count != NULL)
		*count = n;
	return v;
}

/*
 * Linear probing for the tests' exact models: @p size slots of @p elem
 * bytes, each starting with a bool (in use). The slot holding what
 * @p match finds equal to @p key, from the key's hash @p h, or the free
 * slot it would take.
 */
static __attribute__((unused)) void *
lp_find(void *slots, size_t elem, uint32_t size, uint64_t h,
		bool (*match)(const void *slot, const void *key), const void *key)
{
	uint32_t i = (uint32_t)(h % size);
	char *e;

	for (;; i = (i + 1) % size) {
		e = (char *)slots + (size_t)i * elem;
		if (!*(bool *)e || match(e, key))
			return e;
	}
}

/* Free slot @p e and re-place the rest of its cluster (no tombstones),
 * each in the first free slot from its key's hash (@p hash of a slot). */
static __attribute__((unused)) void
lp_remove(void *slots, size_t elem, uint32_t size, void *e,
		uint64_t (*hash)(const void *slot))
{
	uint32_t i = (uint32_t)(((char *)e - (char *)slots) / elem);
	char moved[512];

	*(bool *)e = false;
	for (i = (i + 1) % size; elem <= sizeof(moved); i = (i + 1) % size) {
		char *x = (char *)slots + (size_t)i * elem;
		uint32_t j;

		if (!*(bool *)x)
			return;
		memcpy(moved, x, elem);
		*(bool *)x = false;
		for (j = (uint32_t)(hash(moved) % size);
				*(bool *)((char *)slots + (size_t)j * elem);
				j = (j + 1) % size)
			;
		memcpy((char *)slots + (size_t)j * elem, moved, elem);
	}
}

/*
 * The tracker models' flows (test_track_model.c, test_records.c) begin
 * as this head does: lp_find()'s in-use flag, then the flow's key. Their
 * lookup and removal by key, in @p size slots of @p elem bytes.
 */
struct model_flow_head {
	bool used;
	bool closing;
	struct cflow_key key;
};

static __attribute__((unused)) bool
model_key_match(const void *slot, const void *key)
{
	return memcmp(&((const struct model_flow_head *)slot)->key, key,
		sizeof(struct cflow_key)) == 0;
}

static __attribute__((unused)) uint64_t
model_key_hash(const void *slot)
{
	return cflow_hash_key(&((const struct model_flow_head *)slot)->key,
		1);
}

static __attribute__((unused)) void *
model_key_find(void *slots, size_t elem, uint32_t size,
		const struct cflow_key *k)
{
	return lp_find(slots, elem, size, cflow_hash_key(k, 1),
		model_key_match, k);
}

static __attribute__((unused)) void
model_key_remove(void *slots, size_t elem, uint32_t size, void *e)
{
	lp_remove(slots, elem, size, e, model_key_hash);
}

/* A tracker of @p p, with seed 42. */
static __attribute__((unused)) struct cflow_tracker *
tracker_with(struct cflow_tracker_params *p)
{
	p->seed = 42;
	return cflow_tracker_create(p);
}

#endif /* _CFLOW_TEST_H_ */
