/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: parse and track. The input is a byte for the
 * tracker's settings, then records of [time step: 1 byte, in 100 ms]
 * [length: 1 byte] [frame: length bytes], fed in bursts to a small
 * tracker whose table fills. After every burst the counters must keep
 * their two invariants (see struct cflow_counters); any violation aborts.
 * The settings' top bit turns on the inline filter's: strict TCP,
 * admission control, emergency mode, packet counts, the flows' inside
 * endpoints (sided), and outside frames, allowed or not.
 * An input of odd length runs on the interleaved table layout (every
 * settings bit is taken; the layout changes no decision); with length
 * 2 or 3 modulo 4 and 32-bit values, with flow records: each record
 * must name a flow that is new and has not ended (every end exactly
 * once), and the end of the run must end every flow left.
 * Each frame is copied into a buffer of exactly its length, so ASan
 * catches any read past it.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cflow.h"
#include "fuzz_cflow.h"


/* Records: the names of the flows that are new and have not ended. */
static struct {
	uint64_t name[256];
	unsigned int n;
} live;

static int
live_find(uint64_t name)
{
	for (unsigned int k = 0; k < live.n; k++)
		if (live.name[k] == name)
			return (int)k;
	return -1;
}

static void
on_record(const struct cflow_record *r, void *arg)
{
	int k = live_find(r->name);

	(void)arg;
	if (r->reason == CFLOW_RECORD_NEW) {
		/* a name has one entry: new again only once ended */
		if (k >= 0 || live.n == 256 || r->packets != 1 ||
				r->pkt == NULL)
			abort();
		live.name[live.n++] = r->name;
		return;
	}
	if (k < 0 || r->packets == 0 || r->reason > CFLOW_RECORD_RESOURCES ||
			(r->reason == CFLOW_RECORD_ACTIVE) != (r->next_ns != 0))
		abort();
	if (r->reason != CFLOW_RECORD_ACTIVE)
		live.name[k] = live.name[--live.n];
}

/* Records on: every flow ends in exactly one record (cflow_track.h). */
static void
records_check(const struct cflow_tracker *t)
{
	struct cflow_counters c;

	cflow_counters_get(t, &c);
	if (c.flows_new + c.flows_restored + c.lingering_restored !=
			c.active + c.lingering + c.records_idle + c.records_end +
			c.records_forced + c.records_resources ||
			c.active + c.lingering != live.n)
		abort();
}

/* A warm restart: a tracker made with @p t's resolved parameters takes
 * its table over, every open flow and entry. */
static void
restart(const struct cflow_tracker *t)
{
	struct cflow_tracker_params q;
	struct cflow_counters a, b;
	struct cf_stats sa, sb;
	struct cflow_tracker *t2;
	size_t len = cflow_tracker_save_size(t);
	void *buf = malloc(len);

	cflow_tracker_params_get(t, &q);
	t2 = cflow_tracker_create(&q);
	if (buf == NULL || t2 == NULL ||
			cflow_tracker_save(t, buf, len) != (int64_t)len ||
			cflow_tracker_restore(t2, buf, len, NULL, NULL, 0) != 0)
		abort();
	cflow_counters_get(t, &a);
	cflow_counters_get(t2, &b);
	cf_stats(cflow_tracker_filter(t), &sa);
	cf_stats(cflow_tracker_filter(t2), &sb);
	if (b.active != a.active || b.flows_restored != a.active ||
			sb.items != sa.items)
		abort();
	fuzz_cflow_check(t2);
	cflow_tracker_free(t2);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;
	struct cflow_input in[CF_BULK_MAX];
	uint8_t *frames[CF_BULK_MAX];
	uint64_t now = 1000 * MS * 1000, step;
	unsigned int n = 0;
	size_t off = 1;

	if (size < 1)
		return 0;
	cflow_tracker_params_init(&p, 24);
	p.fp_bits = (data[0] & 1) ? 32 : 8;
	p.close_linger_ns = (data[0] & 2) ? CFLOW_LINGER_NONE : 1000 * MS;
	p.full_policy = (data[0] & 4) ? CFLOW_FULL_UNTRACKED :
		CFLOW_FULL_EVICT;
	p.parse.vlan_in_key = data[0] & 8;
	p.hash = (data[0] & 16) ? CFLOW_HASH_RSS : CFLOW_HASH_XXH3;
	/* 16-bit values with steps of up to 64 s: clock leaps past the
	 * quarter range (34 s here). */
	p.value_bits = (data[0] & 32) ? 16 : 32;
	step = (data[0] & 64) ? 250 * MS : 100 * MS;
	p.table = (size & 1) ? CF_TABLE_INTERLEAVED : CF_TABLE_PLAIN;
	p.records = (size & 2) && p.value_bits == 32;
	p.record_fn = on_record;
	p.active_timeout_ns = 3000 * MS;
	live.n = 0;
	for (int c = 0; c < CFLOW_CLASS_MAX; c++)
		p.timeout_ns[c] = (uint64_t)(1 + c) * 1000 * MS;
	/* The inline filter's settings: frames of odd length/2 come from
	 * the outside (CFLOW_IN_NO_CREATE), and of odd length/4 from an
	 * allowed outside. */
	if (data[0] & 128) {
		p.tcp_strict = true;
		p.new_flow_rate = 5;
		p.new_flow_burst = 3;
		p.emergency_load_ppm = 500000;
		p.emergency_timeout_ns = 500 * MS;
		p.count_bits = 4;
		p.sided = true;
	}
	t = cflow_tracker_create(&p);
	if (t == NULL)
		abort();
	while (off + 2 <= size) {
		uint32_t len = data[off + 1];

		now += data[off] * step;
		off += 2;
		if (len > size - off)
			len = (uint32_t)(size - off);
		frames[n] = malloc(len ? len : 1);
		memcpy(frames[n], data + off, len);
		in[n] = (struct cflow_input){ .data = frames[n], .len = len,
			.wire_len = len, .time_ns = now, .rss = len * 2654435761u,
			.has_rss = len & 1,
			.flags = !(data[0] & 128) ? 0 : (len & 2) ?
				CFLOW_IN_NO_CREATE | CFLOW_IN_OUTSIDE :
				(len & 4) ? CFLOW_IN_OUTSIDE : 0 };
		off += len;
		if (++n == CF_BULK_MAX || off + 2 > size) {
			cflow_track_burst(t, in, n, NULL);
			for (unsigned int k = 0; k < n; k++)
				free(frames[k]);
			n = 0;
			fuzz_cflow_check(t);
			cflow_sweep(t, now);
			fuzz_cflow_check(t);
			/* a burst ending in a 255-byte frame: a flush */
			if (len == 255) {
				cflow_tracker_flush(t);
				fuzz_cflow_check(t);
			}
			if (p.records)
				records_check(t);
		}
	}
	for (unsigned int k = 0; k < n; k++)
		free(frames[k]);
	cflow_sweep_all(t, now + 10000 * MS);
	fuzz_cflow_check(t);
	if (p.records) {
		records_check(t);
		/* the end of the run ends every flow left, once */
		(void)cflow_tracker_end_records(t);
		if (live.n != 0)
			abort();
	}
	restart(t);
	cflow_tracker_free(t);
	return 0;
}
