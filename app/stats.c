/* SPDX-License-Identifier: BSD-3-Clause */

/* Counter output: table, JSON file and telemetry, from the counter
 * tables (app/counters.h) walked by counters_visit and table_visit. */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_debug.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>
#include <rte_version.h>

#include "counters.h"
#include "log.h"
#include "losses.h"
#include "stats.h"
#include "telemetry.h"
#include "worker.h"

static const struct app_config *config;
static struct app_worker *workers;
static unsigned int nb_workers;
static const struct app_topology *topo;
/* --stats-json-period */
static struct app_output lines;
static bool lines_on;
static bool lines_failed;       /* a write failed: said once */

/* An lcore's counters, a struct of each kind (app/counters.h): the
 * tracker's, the worker's own, and in the total the ports'. */
struct lcore_counters {
	struct cflow_counters flow;
	struct app_worker_counters own;
	struct cflow_frag_counters frag;
	struct rte_eth_stats port;      /* per lcore: 0 */
};

/* Each counter table with where its struct is in struct lcore_counters,
 * in the order of every output. */
static const struct {
	const struct app_counter_table *table;
	size_t offset;
} sources[] = {
	{ &app_counters_tracker, offsetof(struct lcore_counters, flow) },
	{ &app_counters_worker, offsetof(struct lcore_counters, own) },
	{ &app_counters_frag, offsetof(struct lcore_counters, frag) },
	{ &app_counters_port, offsetof(struct lcore_counters, port) },
};

static const void *
source_base(const struct lcore_counters *c, unsigned int s)
{
	return (const char *)c + sources[s].offset;
}

static void
lcore_read(const struct app_worker *w, struct lcore_counters *c)
{
	memset(c, 0, sizeof(*c));
	cflow_counters_get(w->tracker, &c->flow);
	/* 64-bit loads: each counter whole */
	c->own = w->ctr;
	if (w->frag != NULL)
		cflow_frag_counters_get(w->frag, &c->frag);
}

/* @p sum += @p c, every counter of every table, and the malformed
 * reasons. */
static void
counters_add(struct lcore_counters *sum, const struct lcore_counters *c)
{
	for (unsigned int s = 0; s < RTE_DIM(sources); s++) {
		const struct app_counter_table *t = sources[s].table;

		for (unsigned int k = 0; k < t->n; k++)
			*app_counter_ptr(t, k, (char *)sum + sources[s].offset)
				+= app_counter_get(t, k, source_base(c, s));
	}
	for (int st = 0; st < CFLOW_PARSE_STATUS_MAX; st++)
		sum->flow.malformed[st] += c->flow.malformed[st];
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
		lcore_read(&workers[i], &s->lcore[i]);
		counters_add(sum, &s->lcore[i]);
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

/* The ports' counters of what they could not deliver, into the total:
 * those of app_counters_port. */
static void
ports_add(struct lcore_counters *sum)
{
	const struct app_counter_table *t = &app_counters_port;

	for (unsigned int i = 0; i < topo->nb_ports; i++) {
		struct rte_eth_stats st;

		if (app_port_stats_get(topo->ports[i].id, &st) == 0)
			for (unsigned int k = 0; k < t->n; k++)
				*app_counter_ptr(t, k, &sum->port) +=
					app_counter_get(t, k, &st);
	}
}

/* ------------------------------------------------- the one description */

/*
 * What every output writes, in one order with one set of names and units
 * (integers: telemetry has no floats): an lcore's (or the total's)
 * counters, table by table (app/counters.h), then malformed_total and the
 * "malformed" group of one count per reason; a flow table's figures. The
 * table print, the JSON file and telemetry are sinks of these walks. A
 * group is an object in JSON and a dict in telemetry, under the same key
 * (the schema: docs/usage.md, "Counters: the schema"); indented rows in
 * the print.
 */
struct stats_sink {
	void (*u64)(void *ctx, const char *name, uint64_t value);
	/* Around a group's values: begin, then end. */
	void (*group)(void *ctx, const char *name, bool begin);
	void *ctx;
};

/* The group of malformed packets by reason, and their total. */
#define MALFORMED_GROUP "malformed"
#define MALFORMED_TOTAL "malformed_total"
#define NB_MALFORMED (CFLOW_PARSE_MALFORMED_LAST - \
	CFLOW_PARSE_MALFORMED_FIRST + 1)

static void
counters_visit(const struct lcore_counters *c, const struct stats_sink *s)
{
	for (unsigned int src = 0; src < RTE_DIM(sources); src++) {
		const struct app_counter_table *t = sources[src].table;

		for (unsigned int k = 0; k < t->n; k++)
			s->u64(s->ctx, t->counters[k].name,
				app_counter_get(t, k, source_base(c, src)));
	}
	s->u64(s->ctx, MALFORMED_TOTAL, cflow_malformed_total(&c->flow));
	s->group(s->ctx, MALFORMED_GROUP, true);
	for (int st = CFLOW_PARSE_MALFORMED_FIRST;
			st <= CFLOW_PARSE_MALFORMED_LAST; st++)
		s->u64(s->ctx, cflow_parse_status_name(st),
			c->flow.malformed[st]);
	s->group(s->ctx, MALFORMED_GROUP, false);
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
	const struct app_counter_table *t = &app_counters_table;
	struct app_table_figures f;
	struct cf_stats st;

	cf_stats(cflow_tracker_filter(w->tracker), &st);
	f = (struct app_table_figures){
		.capacity = config->flows,
		.slots = st.slots,
		.items = st.items,
		.load_ppm = (uint64_t)(st.load_factor * 1e6),
		.bytes = st.bytes,
		.bits_per_flow_milli = st.bytes * 8000 / config->flows,
		.expected_fpr_ppb = (uint64_t)(st.expected_fpr * 1e9),
		.stash = st.stash_used,
	};
	for (unsigned int k = 0; k < t->n; k++)
		s->u64(s->ctx, t->counters[k].name, app_counter_get(t, k, &f));
}

/* ------------------------------------------------------------- table */

#define PRINT_ROWS 128

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

	if (col->n == PRINT_ROWS)
		return; /* checked when the stats are set up */
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
	r->pps = per_s(a->own.rx_packets, b->own.rx_packets, t);
	r->bps = 8 * per_s(a->flow.bytes + a->own.blocked_bytes,
		b->flow.bytes + b->own.blocked_bytes, t);
	r->new_per_s = per_s(a->flow.flows_new, b->flow.flows_new, t);
	r->closed_per_s = per_s(a->flow.flows_closed, b->flow.flows_closed,
		t);
	r->expired_per_s = per_s(a->flow.flows_expired,
		b->flow.flows_expired, t);
	r->blocked_per_s = per_s(a->own.blocked_packets,
		b->own.blocked_packets, t);
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

/* A replay's progress, "replay 43.1%, 431000 of 1000000 packets; capture
 * time ..., 12.0 of its 60.0 s", into @p buf; false if none replays. */
static bool
progress_text(char *buf, size_t len)
{
	uint64_t done, total, first, last;
	uint64_t now = app_run_latest_ns(workers, nb_workers);
	char when[96];
	int n;

	if (!app_topology_replay_progress(topo, workers, &done, &total,
			&first, &last))
		return false;
	n = snprintf(buf, len, "replay %.1f%%, %" PRIu64 " of %" PRIu64
		" packets", total != 0 ? 100.0 * (double)done / (double)total :
		100.0, done, total);
	/* by the capture's own clock, which the workers follow */
	if (config->clock == APP_CLOCK_PKT && now >= first && first != 0 &&
			n > 0 && (size_t)n < len) {
		time_text(now, when, sizeof(when));
		snprintf(buf + n, len - (size_t)n, "; capture time %s, %.1f of "
			"its %.1f s", when, (double)(now - first) / 1e9,
			(double)(last - first) / 1e9);
	}
	return true;
}

/* "lost: none", or "lost: 497873 packets, 12 records" (app/losses.c). */
static void
lost_text(char *buf, size_t len)
{
	static const char *const kinds[APP_LOSS_KINDS] = {
		"packets", "events", "records",
	};
	uint64_t lost[APP_LOSS_KINDS];
	size_t used = (size_t)snprintf(buf, len, "lost:");

	app_losses_count(lost);
	for (unsigned int k = 0; k < APP_LOSS_KINDS && used < len; k++)
		if (lost[k] != 0)
			used += (size_t)snprintf(buf + used, len - used,
				"%s %" PRIu64 " %s", used > 5 ? "," : "",
				lost[k], kinds[k]);
	if (used == 5)
		snprintf(buf + used, len - used, " none");
}

void
app_stats_period(FILE *out)
{
	struct snapshot *s = malloc(sizeof(*s));
	char when[96], lost[160], replay[256] = "";
	struct rates r;
	double max = 0;

	if (s == NULL)
		return;
	snapshot_read(s);
	rates_of(s, period_prev, &r);
	time_text(s->time_ns, when, sizeof(when));
	for (unsigned int i = 0; i < nb_workers; i++)
		max = RTE_MAX(max, table_load(&workers[i]));
	lost_text(lost, sizeof(lost));
	if (progress_text(replay + 2, sizeof(replay) - 2))
		memcpy(replay, "; ", 2);
	fprintf(out, "%scuckooflow: stats %s, over %.2f s: %.0f pps, %.3f "
		"Mbit/s, %.1f new flows/s, %.1f closed/s, %.1f expired/s, "
		"%.1f blocked/s; %" PRIu64 " open flows, table load max "
		"%.3f%%; %s%s\n", app_log_prefix(out, APP_LOG_NOTICE), when,
		r.seconds, r.pps, r.bps / 1e6, r.new_per_s, r.closed_per_s,
		r.expired_per_s, r.blocked_per_s, s->total.flow.active,
		100 * max, lost, replay);
	if (config->stats_all)
		print_table(out, s);
	if (lines_on) {
		char err[PATH_MAX + 128];
		uint64_t errors = lines.errors;
		int ret = json_to_output(&lines, s, &r);

		(void)app_output_flush(&lines);
		if (app_output_follow(&lines, config->stats_json_period, false,
				err, sizeof(err)) < 0 || (ret < 0 && ret !=
				-ENOBUFS) || lines.errors != errors) {
			/* a FIFO's reader behind (ENOBUFS): counted lost */
			if (!lines_failed)
				app_log(APP_LOG_ERR, "--stats-json-period %s: %s",
					config->stats_json_period,
					lines.errors != errors ?
					strerror(lines.err) : ret < 0 ?
					strerror(-ret) : err);
			lines_failed = true;
		}
	}
	free(period_prev);
	period_prev = s;
}

void
app_stats_progress(FILE *out)
{
	char text[256];

	if (progress_text(text, sizeof(text)))
		fprintf(out, "%scuckooflow: %s\n", app_log_prefix(out,
			APP_LOG_NOTICE), text);
}

void
app_stats_reopen(void)
{
	char err[PATH_MAX + 128];
	int ret;

	if (!lines_on)
		return;
	ret = app_output_follow(&lines, config->stats_json_period, true, err,
		sizeof(err));
	if (ret < 0)
		app_log(APP_LOG_ERR, "--stats-json-period: reopening: %s; "
			"still writing to the file it was", err);
	else
		app_log(APP_LOG_NOTICE, "--stats-json-period %s: reopened "
			"(SIGHUP)", config->stats_json_period);
}

uint64_t
app_stats_lines_lost(void)
{
	return __atomic_load_n(&lines.lost, __ATOMIC_RELAXED);
}

int
app_stats_close(void)
{
	if (!lines_on)
		return 0;
	if (app_output_close(&lines) != 0 && !lines_failed)
		app_log(APP_LOG_ERR, "--stats-json-period %s: %s",
			config->stats_json_period, strerror(lines.err));
	return lines.errors != 0 || lines_failed ? -EIO : 0;
}

/* ----------------------------------------------------------- summary */

/* The counters that are not 0, "name value", wrapped. */
struct nonzero_out {
	FILE *f;
	size_t col;
	const char *group;      /* a group's name while in one */
};

static void
nonzero_u64(void *ctx, const char *name, uint64_t value)
{
	struct nonzero_out *o = ctx;
	char item[96];
	int n;

	if (value == 0)
		return;
	n = snprintf(item, sizeof(item), "%s%s%s %" PRIu64,
		o->group != NULL ? o->group : "", o->group != NULL ? "_" : "",
		name, value);
	if (o->col != 0 && o->col + (size_t)n + 2 > 76) {
		fprintf(o->f, ",\n ");
		o->col = 0;
	} else if (o->col != 0) {
		fprintf(o->f, ",");
	}
	fprintf(o->f, " %s", item);
	o->col += (size_t)n + 2;
}

static void
nonzero_group(void *ctx, const char *name, bool begin)
{
	struct nonzero_out *o = ctx;

	o->group = begin ? name : NULL;
}

/* Per port: rx, tx, and what it could not receive or send. */
static void
ports_summary(FILE *out)
{
	for (unsigned int i = 0; i < topo->nb_ports; i++) {
		const struct app_port *p = &topo->ports[i];
		struct rte_eth_stats st;

		if (app_port_stats_get(p->id, &st) != 0)
			continue;
		fprintf(out, "%scuckooflow: port %u (%s): rx %" PRIu64 ", tx %"
			PRIu64 "; not received: missed %" PRIu64 ", nombuf %"
			PRIu64 ", errors %" PRIu64 "; not sent: %" PRIu64 "\n",
			app_log_prefix(out, APP_LOG_NOTICE), p->id, p->name,
			st.ipackets, st.opackets, st.imissed, st.rx_nombuf,
			st.ierrors, st.oerrors);
	}
}

void
app_stats_summary(FILE *out, uint64_t elapsed_ns)
{
	struct snapshot *s = malloc(sizeof(*s));
	const char *pre = app_log_prefix(out, APP_LOG_NOTICE);
	double secs = (double)elapsed_ns / 1e9;
	uint64_t done, total, first, last;
	struct nonzero_out nz = { out, 0, NULL };
	const struct stats_sink sink = { nonzero_u64, nonzero_group, &nz };
	char a[96], b[96], lost[160];

	if (s == NULL)
		return;
	snapshot_read(s);
	if (secs <= 0)
		secs = 1e-9;
	fprintf(out, "%scuckooflow: ran %.3f s: %" PRIu64 " packets received, "
		"%.1f kpps, %.3f Mbit/s\n", pre, secs, s->total.own.rx_packets,
		(double)s->total.own.rx_packets / secs / 1e3,
		8 * (double)(s->total.flow.bytes + s->total.own.blocked_bytes) /
		secs / 1e6);
	if (app_topology_replay_progress(topo, workers, &done, &total, &first,
			&last)) {
		fprintf(out, "%scuckooflow: replay %.1f%%: %" PRIu64 " of %"
			PRIu64 " packets", pre, total != 0 ? 100.0 *
			(double)done / (double)total : 100.0, done, total);
		if (first != 0) {
			time_text(first, a, sizeof(a));
			time_text(last, b, sizeof(b));
			fprintf(out, "; capture %s to %s (%.3f s), replayed at "
				"%.2fx its pace", a, b, (double)(last - first) /
				1e9, (double)(last - first) / 1e9 / secs);
		}
		fprintf(out, "\n");
	}
	fprintf(out, "%scuckooflow: flows: %" PRIu64 " new, %" PRIu64 " closed, "
		"%" PRIu64 " expired, %" PRIu64 " open; %" PRIu64 " evicted, %"
		PRIu64 " not stored (table full); packets: %" PRIu64 " tracked, %"
		PRIu64 " blocked, %" PRIu64 " forwarded\n", pre,
		s->total.flow.flows_new, s->total.flow.flows_closed,
		s->total.flow.flows_expired, s->total.flow.active,
		s->total.flow.flows_evicted, s->total.flow.insert_failed,
		s->total.flow.packets, s->total.own.blocked_packets,
		s->total.own.tx_packets);
	ports_summary(out);
	fprintf(out, "%scuckooflow: counters not 0 (all of them, per lcore: "
		"--stats-all, --stats-json):\n ", pre);
	counters_visit(&s->total, &sink);
	fprintf(out, "%s\n", nz.col == 0 ? " none" : "");
	lost_text(lost, sizeof(lost));
	fprintf(out, "%scuckooflow: %s\n", pre, lost);
	if (config->stats_all)
		print_table(out, s);
	fflush(out);
	free(s);
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

		cflow_counters_get(workers[i].tracker, &c);
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
	app_telemetry_add_string(arg, name, value);
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

static uint64_t start_time_ns; /* CLOCK_REALTIME, at setup */

/* What runs: version, DPDK's, code path, start time, for the exporter's
 * cuckooflow_build_info and cuckooflow_start_time_seconds. */
static int
tel_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "version", CF_VERSION);
	rte_tel_data_add_dict_string(d, "dpdk", rte_version());
	rte_tel_data_add_dict_string(d, "code_path", cf_dispatch_isa());
	rte_tel_data_add_dict_u64(d, "start_time_ns", start_time_ns);
	rte_tel_data_add_dict_u64(d, "workers", nb_workers);
	return 0;
}

static const char *const kind_names[] = {
	[APP_COUNTER] = "counter",
	[APP_GAUGE] = "gauge",
};

/* One counter into the parallel arrays of /cuckooflow/counters. */
static void
tel_counter_add(struct rte_tel_data *const arr[5], const char *name,
		const char *source, enum app_counter_kind kind, const char *help,
		const char *group)
{
	rte_tel_data_add_array_string(arr[0], name);
	rte_tel_data_add_array_string(arr[1], source);
	rte_tel_data_add_array_string(arr[2], kind_names[kind]);
	rte_tel_data_add_array_string(arr[3], help);
	rte_tel_data_add_array_string(arr[4], group != NULL ? group : "");
}

/*
 * Every counter the other commands report, as parallel arrays (DPDK
 * 22.11's telemetry nests one level): "name", "source" (tracker,
 * worker, frag, port: of /cuckooflow/stats and /cuckooflow/lcore; table:
 * of /cuckooflow/table), "kind" (counter or gauge), "help" and "group"
 * (of a group of counters by reason: "dropped", "blocked", "malformed";
 * else ""). The "malformed" group's reasons as malformed_<reason>. For
 * the exporter and the documentation's test.
 */
static int
tel_counter_list(const char *cmd, const char *params,
		struct rte_tel_data *d)
{
	static const struct app_counter_table *const tables[] = {
		&app_counters_tracker, &app_counters_worker,
		&app_counters_frag, &app_counters_port, &app_counters_table,
	};
	static const char *const keys[] = { "name", "source", "kind", "help",
		"group" };
	struct rte_tel_data *arr[RTE_DIM(keys)];

	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	if (app_telemetry_alloc(arr, RTE_DIM(arr)) < 0)
		return -ENOMEM;
	for (unsigned int i = 0; i < RTE_DIM(arr); i++)
		rte_tel_data_start_array(arr[i], RTE_TEL_STRING_VAL);
	for (unsigned int i = 0; i < RTE_DIM(tables); i++) {
		const struct app_counter_table *t = tables[i];

		for (unsigned int k = 0; k < t->n; k++)
			tel_counter_add(arr, t->counters[k].name, t->source,
				t->counters[k].kind, t->counters[k].help,
				t->counters[k].group);
		if (t != &app_counters_port)
			continue;
		/* lib/cflow's malformed[] reasons, after the counters */
		tel_counter_add(arr, MALFORMED_TOTAL, "tracker", APP_COUNTER,
			"packets that did not parse: the reasons below summed",
			NULL);
		for (int st = CFLOW_PARSE_MALFORMED_FIRST;
				st <= CFLOW_PARSE_MALFORMED_LAST; st++) {
			char name[64];

			snprintf(name, sizeof(name), "%s_%s", MALFORMED_GROUP,
				cflow_parse_status_name(st));
			tel_counter_add(arr, name, "tracker", APP_COUNTER,
				"packets that did not parse, by reason "
				"(docs/parse.md)", MALFORMED_GROUP);
		}
	}
	rte_tel_data_start_dict(d);
	for (unsigned int i = 0; i < RTE_DIM(arr); i++)
		rte_tel_data_add_dict_container(d, keys[i], arr[i], 0);
	return 0;
}

int
app_stats_setup(const struct app_config *cfg, struct app_worker *w,
		unsigned int n, const struct app_topology *t, char *err,
		size_t err_len)
{
	static const struct app_telemetry_cmd cmds[] = {
		{ "/cuckooflow/stats", tel_stats,
			"Counters summed over all lcores. Takes no parameters" },
		{ "/cuckooflow/lcore", tel_lcore,
			"Counters of one worker lcore. Parameters: int lcore_id" },
		{ "/cuckooflow/table", tel_table,
			"Flow table per lcore: capacity, load, bytes, bits per "
			"flow, FPR, stash. Takes no parameters" },
		{ "/cuckooflow/counters", tel_counter_list,
			"Every counter of stats, lcore and table: name, source, "
			"kind, help. Takes no parameters" },
		{ "/cuckooflow/config", tel_config,
			"Settings in effect. Takes no parameters" },
		{ "/cuckooflow/run", tel_run,
			"Workers, how many have read all their input "
			"(input_done) and made the end-of-run sweep (end_swept). "
			"Takes no parameters" },
		{ "/cuckooflow/info", tel_info,
			"Version, DPDK's, code path, start time (ns since the "
			"epoch), workers. Takes no parameters" },
	};

	/* every row of the print fits */
	if (app_counters_tracker.n + app_counters_worker.n +
			app_counters_frag.n + app_counters_port.n + 1 +
			NB_MALFORMED > PRINT_ROWS)
		return cfu_fail(EOVERFLOW, err, err_len, "cuckooflow: %u "
			"counters to print, room for %d", app_counters_tracker.n +
			app_counters_worker.n + app_counters_frag.n +
			app_counters_port.n + 1 + NB_MALFORMED, PRINT_ROWS);
	config = cfg;
	workers = w;
	nb_workers = n;
	topo = t;
	start_time_ns = cfu_clock_ns(CLOCK_REALTIME);
	/* the first period's rates count from here */
	period_prev = calloc(1, sizeof(*period_prev));
	if (period_prev == NULL)
		return cfu_fail(ENOMEM, err, err_len, "cuckooflow: out of "
			"memory");
	period_prev->mono_ns = cfu_clock_ns(CLOCK_MONOTONIC);
	if (cfg->stats_json_period[0] != '\0') {
		/* appended to: log shippers follow the file */
		if (app_output_open(&lines, cfg->stats_json_period, true,
				APP_OUTPUT_LINES, err, err_len) < 0) {
			char why[PATH_MAX + 128];

			snprintf(why, sizeof(why), "%s", err);
			return cfu_fail(errno, err, err_len, "cuckooflow: "
				"--stats-json-period %s", why);
		}
		lines.checked_ns = cfu_clock_ns(CLOCK_MONOTONIC);
		lines_on = true;
	}
	return app_telemetry_register_all(cmds, RTE_DIM(cmds), err, err_len);
}
