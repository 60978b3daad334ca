/* SPDX-License-Identifier: BSD-3-Clause */

/* Counter output: table, JSON file and telemetry, from one list. */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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
	OWN(rx_packets), OWN(tx_packets), OWN(tx_dropped), OWN(no_timestamp),
	OWN(blocked_packets), OWN(blocked_bytes), OWN(blocked_address),
	OWN(blocked_prefix), OWN(blocked_flow), OWN(blocked_unparsed),
	OWN(blocklist_unparsed), OWN(handoff_out),
	OWN(handoff_in), OWN(handoff_drops), OWN(handoff_waits),
	OWN(rx_nombuf), OWN(rx_missed), OWN(rx_errors),
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
	c->tx_packets = w->tx_packets;
	c->tx_dropped = w->tx_dropped;
	c->no_timestamp = w->no_timestamp;
	c->blocked_packets = w->blocked_packets;
	c->blocked_bytes = w->blocked_bytes;
	c->blocked_address = w->blocked[CFLOW_BL_ADDRESS];
	c->blocked_prefix = w->blocked[CFLOW_BL_PREFIX];
	c->blocked_flow = w->blocked[CFLOW_BL_FLOW];
	c->blocked_unparsed = w->blocked[CFLOW_BL_KINDS];
	c->blocklist_unparsed = w->blocklist_unparsed;
	c->handoff_out = w->handoff_out;
	c->handoff_in = w->handoff_in;
	c->handoff_drops = w->handoff_drops;
	c->handoff_waits = w->handoff_waits;
}

static void
total_read(struct lcore_counters *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned int i = 0; i < nb_workers; i++) {
		struct lcore_counters c;

		lcore_read(&workers[i], &c);
		for (unsigned int k = 0; k < NB_COUNTERS; k++)
			*(uint64_t *)(void *)((char *)sum + counters[k].offset)
				+= counter(&c, k);
		for (int st = 0; st < CFLOW_PARSE_STATUS_MAX; st++)
			sum->flow.malformed[st] += c.flow.malformed[st];
	}
	for (unsigned int i = 0; i < topo->nb_ports; i++) {
		struct rte_eth_stats st;

		if (rte_eth_stats_get(topo->ports[i].id, &st) == 0) {
			sum->rx_nombuf += st.rx_nombuf;
			sum->rx_missed += st.imissed;
			sum->rx_errors += st.ierrors;
		}
	}
}

/* ------------------------------------------------------------- table */

void
app_stats_print(FILE *out)
{
	struct lcore_counters total, c[RTE_MAX_LCORE];

	total_read(&total);
	for (unsigned int i = 0; i < nb_workers; i++)
		lcore_read(&workers[i], &c[i]);
	fprintf(out, "\n%-20s %16s", "counter", "total");
	for (unsigned int i = 0; i < nb_workers; i++)
		fprintf(out, " %11s%-3u", "lcore ", workers[i].lcore);
	fprintf(out, "\n");
	for (unsigned int k = 0; k < NB_COUNTERS; k++) {
		fprintf(out, "%-20s %16" PRIu64, counters[k].name,
			counter(&total, k));
		for (unsigned int i = 0; i < nb_workers; i++)
			fprintf(out, " %14" PRIu64, counter(&c[i], k));
		fprintf(out, "\n");
	}
	fprintf(out, "%-20s %16" PRIu64, "malformed",
		cflow_malformed_total(&total.flow));
	for (unsigned int i = 0; i < nb_workers; i++)
		fprintf(out, " %14" PRIu64, cflow_malformed_total(&c[i].flow));
	fprintf(out, "\n");
	for (int st = CFLOW_PARSE_MALFORMED_FIRST;
			st <= CFLOW_PARSE_MALFORMED_LAST; st++)
		if (total.flow.malformed[st] != 0)
			fprintf(out, "  %-18s %16" PRIu64 "\n",
				cflow_parse_status_name(st),
				total.flow.malformed[st]);
	fflush(out);
}

/* -------------------------------------------------------------- JSON */

static void
json_counters(FILE *f, const struct lcore_counters *c)
{
	for (unsigned int k = 0; k < NB_COUNTERS; k++)
		fprintf(f, "\"%s\": %" PRIu64 ", ", counters[k].name,
			counter(c, k));
	fprintf(f, "\"malformed\": {");
	for (int st = CFLOW_PARSE_MALFORMED_FIRST;
			st <= CFLOW_PARSE_MALFORMED_LAST; st++)
		fprintf(f, "%s\"%s\": %" PRIu64, st == CFLOW_PARSE_MALFORMED_FIRST ?
			"" : ", ", cflow_parse_status_name(st),
			c->flow.malformed[st]);
	fprintf(f, "}, \"malformed_total\": %" PRIu64, cflow_malformed_total(&c->flow));
}

static void
json_table(FILE *f, const struct app_worker *w)
{
	struct cf_stats st;

	cf_stats(cflow_tracker_filter(w->tracker), &st);
	fprintf(f, "\"lcore_%u\": {\"capacity\": %" PRIu64 ", \"slots\": %"
		PRIu64 ", \"items\": %" PRIu64 ", \"load\": %.6f, "
		"\"bytes\": %" PRIu64 ", \"bits_per_flow\": %.3f, "
		"\"expected_fpr\": %.9f, \"stash\": %" PRIu64 "}", w->lcore,
		config->flows, st.slots, st.items, st.load_factor, st.bytes,
		st.bits_per_item, st.expected_fpr, st.stash_used);
}

uint64_t
app_stats_rx_lost(void)
{
	struct lcore_counters total;

	total_read(&total);
	return total.rx_nombuf + total.rx_missed + total.rx_errors;
}

int
app_stats_write_json(const char *path)
{
	struct lcore_counters total;
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	total_read(&total);
	fprintf(f, "{\"total\": {");
	json_counters(f, &total);
	fprintf(f, "},\n \"lcores\": [");
	for (unsigned int i = 0; i < nb_workers; i++) {
		struct lcore_counters c;

		lcore_read(&workers[i], &c);
		fprintf(f, "%s{\"lcore\": %u, ", i ? ", " : "",
			workers[i].lcore);
		json_counters(f, &c);
		fprintf(f, "}");
	}
	fprintf(f, "],\n \"table\": {");
	for (unsigned int i = 0; i < nb_workers; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_table(f, &workers[i]);
	}
	fprintf(f, "}}\n");
	return fclose(f) == 0 ? 0 : -1;
}

/* --------------------------------------------------------- telemetry */

static void
tel_counters(struct rte_tel_data *d, const struct lcore_counters *c)
{
	rte_tel_data_start_dict(d);
	for (unsigned int k = 0; k < NB_COUNTERS; k++)
		rte_tel_data_add_dict_u64(d, counters[k].name, counter(c, k));
	rte_tel_data_add_dict_u64(d, "malformed", cflow_malformed_total(&c->flow));
	for (int st = CFLOW_PARSE_MALFORMED_FIRST;
			st <= CFLOW_PARSE_MALFORMED_LAST; st++) {
		char key[40];

		snprintf(key, sizeof(key), "malformed_%s",
			cflow_parse_status_name(st));
		rte_tel_data_add_dict_u64(d, key, c->flow.malformed[st]);
	}
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
		struct cf_stats st;
		char key[16];

		if (l == NULL)
			return -ENOMEM;
		cf_stats(cflow_tracker_filter(workers[i].tracker), &st);
		rte_tel_data_start_dict(l);
		rte_tel_data_add_dict_u64(l, "capacity", config->flows);
		rte_tel_data_add_dict_u64(l, "items", st.items);
		rte_tel_data_add_dict_u64(l, "slots", st.slots);
		rte_tel_data_add_dict_u64(l, "bytes", st.bytes);
		rte_tel_data_add_dict_u64(l, "load_ppm",
			(uint64_t)(st.load_factor * 1e6));
		rte_tel_data_add_dict_u64(l, "bits_per_flow_milli",
			(uint64_t)(st.bits_per_item * 1e3));
		rte_tel_data_add_dict_u64(l, "expected_fpr_ppb",
			(uint64_t)(st.expected_fpr * 1e9));
		rte_tel_data_add_dict_u64(l, "stash", st.stash_used);
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
	};

	config = cfg;
	workers = w;
	nb_workers = n;
	topo = t;
	for (unsigned int i = 0; i < RTE_DIM(cmds); i++)
		app_telemetry_register(cmds[i].cmd, cmds[i].fn, cmds[i].help);
}
