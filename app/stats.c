/* SPDX-License-Identifier: BSD-3-Clause */

/* Counter output: table, JSON file and telemetry, from one description
 * (counters_visit, table_visit). */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_debug.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "stats.h"
#include "telemetry.h"

static const struct app_config *config;
static struct app_worker *workers;
static unsigned int nb_workers;
static const struct app_topology *topo;

/* An lcore's counters: the tracker's, then the worker's own; in the
 * total, the ports' too. */
struct lcore_counters {
	struct cflow_counters flow;
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t tx_dropped;
	uint64_t no_timestamp;
	uint64_t blocked_packets;
	uint64_t blocked_bytes;
	uint64_t blocked_address;
	uint64_t blocked_prefix;
	uint64_t blocked_flow;
	uint64_t blocked_unparsed;
	uint64_t blocklist_unparsed;
	uint64_t handoff_out;
	uint64_t handoff_in;
	uint64_t handoff_drops;
	uint64_t handoff_waits;
	uint64_t rx_nombuf;     /* mbuf pool exhausted: packets not received */
	uint64_t rx_missed;     /* dropped by the NIC (imissed) */
	uint64_t rx_errors;     /* received in error, not delivered (ierrors) */
	uint64_t rx_len_mismatch; /* received, mbuf chain short of pkt_len:
				   * dropped unread (app/frame.h) */
	/* the action table's drops, by reason (docs/firewall.md) */
	uint64_t dropped_unsolicited;
	uint64_t dropped_not_syn;
	uint64_t dropped_limited;
	uint64_t dropped_table_full;
	uint64_t dropped_malformed;
	uint64_t dropped_fragment;
	uint64_t dropped_mirror_rx;
	uint64_t dropped_wrong_direction;
	uint64_t dropped_vlan_depth;
	uint64_t dropped_encapsulated;
	uint64_t dropped_tunnel_non_ip;
	uint64_t dropped_non_ip;
	uint64_t firewall_unparsed;
	uint64_t nd_passed;
	uint64_t mirrored;
	uint64_t mirror_dropped;
	uint64_t events_queued;
	uint64_t events_dropped;
	uint64_t flushes;
};

#define FLOW(f) { #f, offsetof(struct lcore_counters, flow.f) }
#define OWN(f) { #f, offsetof(struct lcore_counters, f) }

static const struct {
	const char *name;
	size_t offset;
} counters[] = {
	FLOW(packets), FLOW(bytes), FLOW(flows_new), FLOW(flows_seen),
	FLOW(flows_closed), FLOW(flows_expired), FLOW(flows_evicted),
	FLOW(active), FLOW(insert_failed), FLOW(orphan_close), FLOW(reused),
	FLOW(non_ip), FLOW(fragments), FLOW(hash_fallback),
	FLOW(unsolicited), FLOW(not_syn), FLOW(new_flow_limited),
	FLOW(emergency_enter), FLOW(emergency_exit), FLOW(emergency),
	FLOW(flows_restored), FLOW(flows_flushed), FLOW(wrong_direction),
	OWN(rx_packets), OWN(tx_packets), OWN(tx_dropped), OWN(no_timestamp),
	OWN(blocked_packets), OWN(blocked_bytes), OWN(blocked_address),
	OWN(blocked_prefix), OWN(blocked_flow), OWN(blocked_unparsed),
	OWN(blocklist_unparsed), OWN(handoff_out),
	OWN(handoff_in), OWN(handoff_drops), OWN(handoff_waits),
	OWN(rx_nombuf), OWN(rx_missed), OWN(rx_errors), OWN(rx_len_mismatch),
	OWN(dropped_unsolicited), OWN(dropped_not_syn), OWN(dropped_limited),
	OWN(dropped_table_full), OWN(dropped_malformed),
	OWN(dropped_fragment), OWN(dropped_mirror_rx),
	OWN(dropped_wrong_direction), OWN(dropped_vlan_depth),
	OWN(dropped_encapsulated), OWN(dropped_tunnel_non_ip),
	OWN(dropped_non_ip), OWN(firewall_unparsed), OWN(nd_passed),
	OWN(mirrored),
	OWN(mirror_dropped), OWN(events_queued), OWN(events_dropped),
	OWN(flushes),
};
#define NB_COUNTERS RTE_DIM(counters)

static uint64_t
counter(const struct lcore_counters *c, unsigned int k)
{
	return *(const uint64_t *)(const void *)((const char *)c +
			counters[k].offset);
}

static void
lcore_read(const struct app_worker *w, struct lcore_counters *c)
{
	memset(c, 0, sizeof(*c));
	w->run->table_ops->counters(w->table, &c->flow);
	c->rx_packets = w->rx_packets;
	c->rx_len_mismatch = w->rx_len_mismatch;
	c->tx_packets = w->tx_packets;
	c->tx_dropped = w->tx_dropped;
	c->no_timestamp = w->no_timestamp;
	c->blocked_packets = w->blocked_packets;
	c->blocked_bytes = w->blocked_bytes;
	c->blocked_address = w->blocked[CBL_ADDRESS];
	c->blocked_prefix = w->blocked[CBL_PREFIX];
	c->blocked_flow = w->blocked[CBL_FLOW];
	c->blocked_unparsed = w->blocked[CBL_KINDS];
	c->blocklist_unparsed = w->blocklist_unparsed;
	c->handoff_out = w->handoff_out;
	c->handoff_in = w->handoff_in;
	c->handoff_drops = w->handoff_drops;
	c->handoff_waits = w->handoff_waits;
	c->dropped_unsolicited = w->dropped[APP_DROP_UNSOLICITED];
	c->dropped_not_syn = w->dropped[APP_DROP_NOT_SYN];
	c->dropped_limited = w->dropped[APP_DROP_LIMITED];
	c->dropped_table_full = w->dropped[APP_DROP_TABLE_FULL];
	c->dropped_malformed = w->dropped[APP_DROP_MALFORMED];
	c->dropped_fragment = w->dropped[APP_DROP_FRAGMENT];
	c->dropped_mirror_rx = w->dropped[APP_DROP_MIRROR_RX];
	c->dropped_wrong_direction = w->dropped[APP_DROP_WRONG_DIR];
	c->dropped_vlan_depth = w->dropped[APP_DROP_VLAN_DEPTH];
	c->dropped_encapsulated = w->dropped[APP_DROP_ENCAPSULATED];
	c->dropped_tunnel_non_ip = w->dropped[APP_DROP_TUNNEL_NON_IP];
	c->dropped_non_ip = w->dropped[APP_DROP_NON_IP];
	c->firewall_unparsed = w->firewall_unparsed;
	c->nd_passed = w->nd_passed;
	c->mirrored = w->mirrored;
	c->mirror_dropped = w->mirror_dropped;
	c->events_queued = w->events_queued;
	c->events_dropped = w->events_dropped;
	c->flushes = w->flushes;
}

/*
 * One reading of every lcore, and the total as their sum (plus the
 * ports' own counters): the total and the lcores of one print or one
 * JSON object always agree, though the workers count on meanwhile.
 */
struct snapshot {
	uint64_t time_ns;       /* wall clock (CLOCK_REALTIME) */
	uint64_t mono_ns;       /* CLOCK_MONOTONIC, for the rates */
	struct lcore_counters total;
	struct lcore_counters lcore[APP_MAX_WORKERS];
};

static void ports_add(struct lcore_counters *sum);

static void
snapshot_read(struct snapshot *s)
{
	struct lcore_counters *sum = &s->total;

	s->time_ns = cfu_clock_ns(CLOCK_REALTIME);
	s->mono_ns = cfu_clock_ns(CLOCK_MONOTONIC);
	memset(sum, 0, sizeof(*sum));
	for (unsigned int i = 0; i < nb_workers; i++) {
		const struct lcore_counters *c = &s->lcore[i];

		lcore_read(&workers[i], &s->lcore[i]);
		for (unsigned int k = 0; k < NB_COUNTERS; k++)
			*(uint64_t *)(void *)((char *)sum + counters[k].offset)
				+= counter(c, k);
		for (int st = 0; st < CFLOW_PARSE_STATUS_MAX; st++)
			sum->flow.malformed[st] += c->flow.malformed[st];
	}
	ports_add(sum);
}

static void
total_read(struct lcore_counters *sum)
{
	struct snapshot *s = malloc(sizeof(*s));

	if (s == NULL) {
		memset(sum, 0, sizeof(*sum));
		return;
	}
	snapshot_read(s);
	*sum = s->total;
	free(s);
}

/* The ports' counters of what they could not deliver, into the total. */
static void
ports_add(struct lcore_counters *sum)
{
	for (unsigned int i = 0; i < topo->nb_ports; i++) {
		struct rte_eth_stats st;

		if (rte_eth_stats_get(topo->ports[i].id, &st) == 0) {
			sum->rx_nombuf += st.rx_nombuf;
			sum->rx_missed += st.imissed;
			sum->rx_errors += st.ierrors;
		}
	}
}

/* ------------------------------------------------- the one description */

/*
 * What every output writes, in one order with one set of names and units
 * (integers: telemetry has no floats): an lcore's (or the total's)
 * counters, then malformed_total and the "malformed" group of one count
 * per reason; a flow table's figures. The table print, the JSON file and
 * telemetry are sinks of these walks. A group is an object in JSON and a
 * dict in telemetry, under the same key (the schema: docs/usage.md,
 * "Counters: the schema"); indented rows in the print.
 */
struct stats_sink {
	void (*u64)(void *ctx, const char *name, uint64_t value);
	/* Around a group's values: begin, then end. */
	void (*group)(void *ctx, const char *name, bool begin);
	void *ctx;
};

static void
counters_visit(const struct lcore_counters *c, const struct stats_sink *s)
{
	for (unsigned int k = 0; k < NB_COUNTERS; k++)
		s->u64(s->ctx, counters[k].name, counter(c, k));
	s->u64(s->ctx, "malformed_total", cflow_malformed_total(&c->flow));
	s->group(s->ctx, "malformed", true);
	for (int st = CFLOW_PARSE_MALFORMED_FIRST;
			st <= CFLOW_PARSE_MALFORMED_LAST; st++)
		s->u64(s->ctx, cflow_parse_status_name(st),
			c->flow.malformed[st]);
	s->group(s->ctx, "malformed", false);
}

/*
 * A worker's flow table: load in parts per million, bits per flow in
 * thousandths, the expected false positive rate in parts per billion.
 * Bits per flow are what the table costs per flow of its capacity
 * (--flows): all its bytes, fingerprints, state and the rest, over
 * capacity. Not cf_stats' bits_per_item, fingerprint bits per item
 * stored, which grows without bound as the table empties (25165 bits
 * a flow with a thousand flows in a table for a million).
 */
static void
table_visit(const struct app_worker *w, const struct stats_sink *s)
{
	struct cf_stats st;

	cf_stats(cflow_tracker_filter(w->tracker), &st);
	s->u64(s->ctx, "capacity", config->flows);
	s->u64(s->ctx, "slots", st.slots);
	s->u64(s->ctx, "items", st.items);
	s->u64(s->ctx, "load_ppm", (uint64_t)(st.load_factor * 1e6));
	s->u64(s->ctx, "bytes", st.bytes);
	s->u64(s->ctx, "bits_per_flow_milli",
		st.bytes * 8000 / config->flows);
	s->u64(s->ctx, "expected_fpr_ppb", (uint64_t)(st.expected_fpr * 1e9));
	s->u64(s->ctx, "stash", st.stash_used);
}

/* ------------------------------------------------------------- table */

#define PRINT_ROWS 80
_Static_assert(NB_COUNTERS + 1 + CFLOW_PARSE_MALFORMED_LAST -
	CFLOW_PARSE_MALFORMED_FIRST + 1 <= PRINT_ROWS, "PRINT_ROWS");

/* One column of the printed table: the walk's rows, in order. */
struct print_column {
	const char *name[PRINT_ROWS];
	bool member[PRINT_ROWS]; /* of a group: indented */
	uint64_t value[PRINT_ROWS];
	unsigned int n;
	bool in_group;
};

static void
print_u64(void *ctx, const char *name, uint64_t value)
{
	struct print_column *col = ctx;

	RTE_VERIFY(col->n < PRINT_ROWS);
	col->name[col->n] = name;
	col->member[col->n] = col->in_group;
	col->value[col->n++] = value;
}

static void
print_group(void *ctx, const char *name, bool begin)
{
	struct print_column *col = ctx;

	(void)name;
	col->in_group = begin;
}

static void
print_column_read(const struct lcore_counters *c, struct print_column *col)
{
	const struct stats_sink sink = { print_u64, print_group, col };

	memset(col, 0, sizeof(*col));
	counters_visit(c, &sink);
}

static void
print_table(FILE *out, const struct snapshot *s)
{
	struct print_column *col = calloc(nb_workers + 1, sizeof(*col));

	if (col == NULL)
		return;
	print_column_read(&s->total, &col[0]);
	for (unsigned int i = 0; i < nb_workers; i++)
		print_column_read(&s->lcore[i], &col[i + 1]);
	fprintf(out, "\n%-20s %16s", "counter", "total");
	for (unsigned int i = 0; i < nb_workers; i++)
		fprintf(out, " %11s%-3u", "lcore ", workers[i].lcore);
	fprintf(out, "\n");
	for (unsigned int r = 0; r < col[0].n; r++) {
		/* A group's rows only where the total is not 0. */
		if (col[0].member[r] && col[0].value[r] == 0)
			continue;
		fprintf(out, "%s%-*s %16" PRIu64, col[0].member[r] ? "  " : "",
			col[0].member[r] ? 18 : 20, col[0].name[r],
			col[0].value[r]);
		for (unsigned int i = 0; i < nb_workers; i++)
			fprintf(out, " %14" PRIu64, col[i + 1].value[r]);
		fprintf(out, "\n");
	}
	fflush(out);
	free(col);
}

void
app_stats_print(FILE *out)
{
	struct snapshot *s = malloc(sizeof(*s));

	if (s == NULL)
		return;
	snapshot_read(s);
	print_table(out, s);
	free(s);
}

/* ------------------------------------------------- periodic snapshots */

/* Per second over the period, from the totals. */
struct rates {
	double seconds;
	double pps, bps, new_per_s, closed_per_s, expired_per_s,
		blocked_per_s;
};

static double
per_s(uint64_t now, uint64_t before, double seconds)
{
	return now >= before ? (double)(now - before) / seconds : 0;
}

static void
rates_of(const struct snapshot *s, const struct snapshot *prev,
		struct rates *r)
{
	const struct lcore_counters *a = &s->total, *b = &prev->total;
	double t = (double)(s->mono_ns - prev->mono_ns) / 1e9;

	if (t <= 0)
		t = 1e-9;
	r->seconds = t;
	r->pps = per_s(a->rx_packets, b->rx_packets, t);
	r->bps = 8 * per_s(a->flow.bytes + a->blocked_bytes,
		b->flow.bytes + b->blocked_bytes, t);
	r->new_per_s = per_s(a->flow.flows_new, b->flow.flows_new, t);
	r->closed_per_s = per_s(a->flow.flows_closed, b->flow.flows_closed,
		t);
	r->expired_per_s = per_s(a->flow.flows_expired,
		b->flow.flows_expired, t);
	r->blocked_per_s = per_s(a->blocked_packets, b->blocked_packets, t);
}

static void
time_text(uint64_t ns, char *buf, size_t len)
{
	time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
		tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		tm.tm_min, tm.tm_sec, (unsigned int)(ns % 1000000000u /
		1000000u));
}

static double
table_load(const struct app_worker *w)
{
	struct cf_stats st;

	cf_stats(cflow_tracker_filter(w->tracker), &st);
	return st.load_factor;
}

static struct snapshot *period_prev;

static void json_snapshot(FILE *f, const struct snapshot *s,
		const struct rates *r);

/* @p s (with @p r: a period's line) rendered in memory, whole, then
 * added to @p o (app/output.h: a full disk never leaves part of it). */
static int
json_to_output(struct app_output *o, const struct snapshot *s,
		const struct rates *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int ret;

	if (m == NULL)
		return -errno;
	json_snapshot(m, s, r);
	ret = ferror(m) ? -EIO : 0;
	if (fclose(m) != 0 && ret == 0)
		ret = -errno;
	if (ret == 0)
		ret = app_output_add(o, buf, len);
	free(buf);
	return ret;
}

int
app_stats_period(FILE *out, struct app_output *json)
{
	struct snapshot *s = malloc(sizeof(*s));
	char when[96];
	struct rates r;
	double max = 0;
	int ret = 0;

	if (s == NULL)
		return -ENOMEM;
	snapshot_read(s);
	rates_of(s, period_prev, &r);
	time_text(s->time_ns, when, sizeof(when));
	fprintf(out, "\n== cuckooflow stats %s, over %.2f s ==\n"
		"rates: %.0f pps, %.3f Mbit/s, %.1f new flows/s, %.1f "
		"closed/s, %.1f expired/s, %.1f blocked/s\ntable load:", when,
		r.seconds, r.pps, r.bps / 1e6, r.new_per_s, r.closed_per_s,
		r.expired_per_s, r.blocked_per_s);
	for (unsigned int i = 0; i < nb_workers; i++) {
		double l = table_load(&workers[i]);

		fprintf(out, "%s lcore %u %.3f%%", i ? "," : "",
			workers[i].lcore, 100 * l);
		if (l > max)
			max = l;
	}
	fprintf(out, " (max %.3f%%)\n", 100 * max);
	print_table(out, s);
	if (json != NULL) {
		ret = json_to_output(json, s, &r);
		if (app_output_flush(json) < 0 && ret == 0)
			ret = -json->err;
		if (ret == -ENOBUFS)
			ret = 0; /* a FIFO's reader behind: counted lost */
	}
	free(period_prev);
	period_prev = s;
	return ret;
}

/* -------------------------------------------------------------- JSON */

struct json_out {
	FILE *f;
	bool first; /* no comma before the next key */
};

static void
json_u64(void *ctx, const char *name, uint64_t value)
{
	struct json_out *j = ctx;

	fprintf(j->f, "%s\"%s\": %" PRIu64, j->first ? "" : ", ", name, value);
	j->first = false;
}

static void
json_group(void *ctx, const char *name, bool begin)
{
	struct json_out *j = ctx;

	if (begin)
		fprintf(j->f, "%s\"%s\": {", j->first ? "" : ", ", name);
	else
		fprintf(j->f, "}");
	j->first = begin;
}

void
app_stats_emergency_log(FILE *out)
{
	static uint64_t seen[APP_MAX_WORKERS];

	for (unsigned int i = 0; i < nb_workers; i++) {
		struct cflow_counters c;
		uint64_t changes;

		workers[i].run->table_ops->counters(workers[i].table, &c);
		changes = c.emergency_enter + c.emergency_exit;
		if (changes == seen[i])
			continue;
		seen[i] = changes;
		fprintf(out, "cuckooflow: lcore %u: emergency mode %s (%" PRIu64
			" open flows of %" PRIu64 "; entered %" PRIu64 " times)\n",
			workers[i].lcore, c.emergency ? "entered" : "left",
			c.active, config->flows, c.emergency_enter);
	}
}

uint64_t
app_stats_rx_lost(void)
{
	struct lcore_counters total;

	total_read(&total);
	return total.rx_nombuf + total.rx_missed + total.rx_errors;
}

uint64_t
app_stats_rx_len_mismatch(void)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < nb_workers; i++)
		n += workers[i].rx_len_mismatch;
	return n;
}

/* One object: with @p r, a period's (time, interval, rates first);
 * without, the final counters' (--stats-json). */
static void
json_snapshot(FILE *f, const struct snapshot *s, const struct rates *r)
{
	struct json_out j = { f, true };
	const struct stats_sink sink = { json_u64, json_group, &j };
	char when[96];

	fprintf(f, "{");
	if (r != NULL) {
		time_text(s->time_ns, when, sizeof(when));
		fprintf(f, "\"time\": \"%s\", \"time_ns\": %" PRIu64 ", "
			"\"interval_s\": %.3f, \"rates\": {\"pps\": %.1f, "
			"\"bps\": %.1f, \"new_per_s\": %.1f, "
			"\"closed_per_s\": %.1f, \"expired_per_s\": %.1f, "
			"\"blocked_per_s\": %.1f}, ", when, s->time_ns,
			r->seconds, r->pps, r->bps, r->new_per_s,
			r->closed_per_s, r->expired_per_s, r->blocked_per_s);
	}
	fprintf(f, "\"total\": {");
	counters_visit(&s->total, &sink);
	fprintf(f, "},%s\"lcores\": [", r != NULL ? " " : "\n ");
	for (unsigned int i = 0; i < nb_workers; i++) {
		fprintf(f, "%s{\"lcore\": %u", i ? ", " : "",
			workers[i].lcore);
		j.first = false;
		counters_visit(&s->lcore[i], &sink);
		fprintf(f, "}");
	}
	fprintf(f, "],%s\"table\": {", r != NULL ? " " : "\n ");
	for (unsigned int i = 0; i < nb_workers; i++) {
		fprintf(f, "%s\"lcore_%u\": {", i ? ", " : "",
			workers[i].lcore);
		j.first = true;
		table_visit(&workers[i], &sink);
		fprintf(f, "}");
	}
	fprintf(f, "}}\n");
}

int
app_stats_write_json(const char *path, char *err, size_t err_len)
{
	struct snapshot *s = malloc(sizeof(*s));
	struct app_output o;
	int ret;

	if (s == NULL)
		return cfu_fail(ENOMEM, err, err_len, "%s: %s", path,
			strerror(ENOMEM));
	ret = app_output_open(&o, path, false, APP_OUTPUT_LINES, err,
		err_len);
	if (ret == 0) {
		snapshot_read(s);
		ret = json_to_output(&o, s, NULL);
		if (app_output_close(&o) < 0 || o.lost != 0)
			ret = cfu_fail(o.err != 0 ? o.err : EAGAIN, err,
				err_len, "%s: %s", path, o.err != 0 ?
				strerror(o.err) : "the FIFO's reader did not "
				"take the counters");
		else if (ret < 0)
			ret = cfu_fail(-ret, err, err_len, "%s: %s", path,
				strerror(-ret));
	}
	free(s);
	return ret;
}

/* --------------------------------------------------------- telemetry */

/* A group is a dict of its own inside the reply's, as in JSON. */
struct tel_out {
	struct rte_tel_data *d;
	struct rte_tel_data *group; /* the group's dict, NULL outside one */
	bool lost;                  /* a group's dict not allocated */
};

static void
tel_u64(void *ctx, const char *name, uint64_t value)
{
	struct tel_out *t = ctx;

	if (t->group != NULL)
		rte_tel_data_add_dict_u64(t->group, name, value);
	else if (!t->lost)
		rte_tel_data_add_dict_u64(t->d, name, value);
}

static void
tel_group(void *ctx, const char *name, bool begin)
{
	struct tel_out *t = ctx;

	if (begin) {
		t->group = rte_tel_data_alloc();
		t->lost = t->group == NULL;
		if (t->group != NULL)
			rte_tel_data_start_dict(t->group);
	} else if (t->group != NULL) {
		if (rte_tel_data_add_dict_container(t->d, name, t->group, 0))
			rte_tel_data_free(t->group);
		t->group = NULL;
	} else {
		t->lost = false;
	}
}

static void
tel_counters(struct rte_tel_data *d, const struct lcore_counters *c)
{
	struct tel_out t = { d, NULL, false };
	const struct stats_sink sink = { tel_u64, tel_group, &t };

	rte_tel_data_start_dict(d);
	counters_visit(c, &sink);
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct lcore_counters total;

	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	total_read(&total);
	tel_counters(d, &total);
	return 0;
}

/* How many workers have @flag (a bool of struct app_worker) set. */
static uint64_t
workers_with(size_t flag)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < nb_workers; i++)
		n += __atomic_load_n((const bool *)((const char *)&workers[i] +
				flag), __ATOMIC_ACQUIRE);
	return n;
}

/*
 * Where the run stands, for scripts and tests that wait for a state
 * rather than for a time: how many workers have read all their input
 * (every capture at its end, everything handed over tracked) and how
 * many have made the end-of-run sweep, whose counters are final.
 */
static int
tel_run(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "workers", nb_workers);
	rte_tel_data_add_dict_u64(d, "input_done",
		workers_with(offsetof(struct app_worker, done)));
	rte_tel_data_add_dict_u64(d, "end_swept",
		workers_with(offsetof(struct app_worker, swept)));
	return 0;
}

static const struct app_worker *
worker_of(const char *params)
{
	char *end;
	unsigned long id;

	if (params == NULL || !isdigit((unsigned char)params[0]))
		return NULL;
	id = strtoul(params, &end, 10);
	if (*end != '\0')
		return NULL;
	for (unsigned int i = 0; i < nb_workers; i++)
		if (workers[i].lcore == id)
			return &workers[i];
	return NULL;
}

static int
tel_lcore(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct app_worker *w = worker_of(params);
	struct lcore_counters c;

	(void)cmd;
	if (w == NULL)
		return -EINVAL;
	lcore_read(w, &c);
	tel_counters(d, &c);
	return 0;
}

static int
tel_table(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (unsigned int i = 0; i < nb_workers; i++) {
		struct rte_tel_data *l = rte_tel_data_alloc();
		struct tel_out t = { NULL, NULL, false };
		const struct stats_sink sink = { tel_u64, tel_group, &t };
		char key[16];

		if (l == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(l);
		t.d = l;
		table_visit(&workers[i], &sink);
		snprintf(key, sizeof(key), "lcore_%u", workers[i].lcore);
		rte_tel_data_add_dict_container(d, key, l, 0);
	}
	return 0;
}

static void
tel_config_entry(const char *section, const char *key, const char *value,
		void *arg)
{
	char name[64];

	snprintf(name, sizeof(name), "%s_%s", section, key);
	rte_tel_data_add_dict_string(arg, name, value);
}

static int
tel_config(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	app_config_visit(config, tel_config_entry, d);
	return 0;
}

void
app_stats_setup(const struct app_config *cfg, struct app_worker *w,
		unsigned int n, const struct app_topology *t)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/cuckooflow/stats", tel_stats,
			"Counters summed over all lcores. Takes no parameters" },
		{ "/cuckooflow/lcore", tel_lcore,
			"Counters of one worker lcore. Parameters: int lcore_id" },
		{ "/cuckooflow/table", tel_table,
			"Flow table per lcore: capacity, load, bytes, bits per "
			"flow, FPR, stash. Takes no parameters" },
		{ "/cuckooflow/config", tel_config,
			"Settings in effect. Takes no parameters" },
		{ "/cuckooflow/run", tel_run,
			"Workers, how many have read all their input "
			"(input_done) and made the end-of-run sweep (end_swept). "
			"Takes no parameters" },
	};

	config = cfg;
	workers = w;
	nb_workers = n;
	topo = t;
	/* the first period's rates count from here */
	period_prev = calloc(1, sizeof(*period_prev));
	if (period_prev == NULL)
		rte_exit(EXIT_FAILURE, "cuckooflow: out of memory\n");
	period_prev->mono_ns = cfu_clock_ns(CLOCK_MONOTONIC);
	for (unsigned int i = 0; i < RTE_DIM(cmds); i++)
		app_telemetry_register(cmds[i].cmd, cmds[i].fn, cmds[i].help);
}
