/* SPDX-License-Identifier: BSD-3-Clause */

/* What the run lost: one list, watched, logged and reported (losses.h). */

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "cfutil.h"
#include "counters.h"
#include "events.h"
#include "log.h"
#include "losses.h"
#include "stats.h"
#include "telemetry.h"
#include "worker.h"

/* How often the main lcore looks, and how often at most it says again
 * that a loss goes on. */
#define WATCH_NS UINT64_C(1000000000)
#define REPEAT_NS UINT64_C(60000000000)

enum loss_from {
	FROM_PORT,      /* struct rte_eth_stats, summed over the ports */
	FROM_WORKER,    /* struct app_worker_counters, over the workers */
	FROM_EVENTS,    /* struct app_events_lost */
	FROM_STATS,     /* --stats-json-period's lines */
};

static const struct loss {
	const char *name;       /* the counter's own name */
	enum app_loss_kind kind;
	enum loss_from from;
	size_t offset;          /* of its uint64_t in the struct */
	const char *why;        /* the cause, and what to do */
} losses[] = {
	{ "rx_missed", APP_LOSS_PACKETS, FROM_PORT,
		offsetof(struct rte_eth_stats, imissed), "the ports dropped "
		"them, their rx queues full: the workers did not keep up "
		"(more workers, each on a CPU of its own; --rxd; net_af_packet: "
		"the kernel's rings, larger with framecnt=)" },
	{ "rx_nombuf", APP_LOSS_PACKETS, FROM_PORT,
		offsetof(struct rte_eth_stats, rx_nombuf), "no mbuf to "
		"receive them into (raise --mbufs)" },
	{ "rx_errors", APP_LOSS_PACKETS, FROM_PORT,
		offsetof(struct rte_eth_stats, ierrors), "received in error "
		"(net_pcap: a frame longer than the mbufs hold; --max-pkt-len)" },
	{ "rx_len_mismatch", APP_LOSS_PACKETS, FROM_WORKER,
		offsetof(struct app_worker_counters, rx_len_mismatch),
		"frames dropped unread, their mbuf chain shorter than their "
		"length (net_pcap cuts records over 65535 bytes)" },
	{ "handoff_drops", APP_LOSS_PACKETS, FROM_WORKER,
		offsetof(struct app_worker_counters, handoff_drops), "a "
		"flow's owner's handoff ring stayed full (--handoff-full wait, "
		"a larger --handoff-ring, or a CPU of its own for each worker)" },
	{ "tx_dropped", APP_LOSS_PACKETS, FROM_WORKER,
		offsetof(struct app_worker_counters, tx_dropped), "the tx "
		"queue did not take packets to forward (the peer or link is "
		"slower; --txd)" },
	{ "mirror_dropped", APP_LOSS_PACKETS, FROM_WORKER,
		offsetof(struct app_worker_counters, mirror_dropped), "the "
		"mirror port's tx queue did not take copies" },
	{ "events_dropped", APP_LOSS_EVENTS, FROM_WORKER,
		offsetof(struct app_worker_counters, events_dropped), "the "
		"event ring was full: the outputs fell behind (--event-ring)" },
	{ "pcapng_skipped", APP_LOSS_EVENTS, FROM_EVENTS,
		offsetof(struct app_events_lost, pcapng_skipped), "new flows' "
		"first packets not captured: too many waited to be written "
		"(--new-flow-pcap's disk is slow)" },
	{ "records_dropped", APP_LOSS_RECORDS, FROM_WORKER,
		offsetof(struct app_worker_counters, records_dropped), "flow "
		"records dropped, the event ring full: the main lcore fell "
		"behind (--event-ring; fewer outputs)" },
	{ "records_unnamed", APP_LOSS_RECORDS, FROM_EVENTS,
		offsetof(struct app_events_lost, records_unnamed), "flow "
		"records not written: their flow's key not kept (its new-flow "
		"event dropped, or the key store full: --records-max)" },
	{ "ipfix_records_lost", APP_LOSS_RECORDS, FROM_EVENTS,
		offsetof(struct app_events_lost, ipfix_records), "IPFIX "
		"messages the socket did not take (is the collector up?)" },
	{ "json_lines_lost", APP_LOSS_RECORDS, FROM_EVENTS,
		offsetof(struct app_events_lost, json_lines), "--events lines "
		"not written (write errors, or a FIFO's reader behind)" },
	{ "pcapng_lost", APP_LOSS_RECORDS, FROM_EVENTS,
		offsetof(struct app_events_lost, pcapng), "--new-flow-pcap "
		"packets not written (write errors, or a FIFO's reader behind)" },
	{ "stats_lines_lost", APP_LOSS_RECORDS, FROM_STATS, 0,
		"--stats-json-period lines not written (write errors, or a "
		"FIFO's reader behind)" },
};
#define NB_LOSSES RTE_DIM(losses)

static const char *const kind_names[APP_LOSS_KINDS] = {
	[APP_LOSS_PACKETS] = "packets",
	[APP_LOSS_EVENTS] = "events",
	[APP_LOSS_RECORDS] = "records",
};

static struct {
	struct app_worker *workers;
	unsigned int nb_workers;
	const struct app_topology *topo;
	uint64_t checked_ns;
	uint64_t said[NB_LOSSES];       /* the value last logged */
	uint64_t said_ns[NB_LOSSES];    /* when; 0: never */
} lw;

/* Every loss now, in the order of losses[]. */
static void
losses_read(uint64_t v[NB_LOSSES])
{
	struct rte_eth_stats port_sum = { 0 };
	struct app_events_lost ev;

	for (unsigned int i = 0; i < lw.topo->nb_ports; i++) {
		struct rte_eth_stats st;

		if (app_port_stats_get(lw.topo->ports[i].id, &st) != 0)
			continue;
		port_sum.imissed += st.imissed;
		port_sum.rx_nombuf += st.rx_nombuf;
		port_sum.ierrors += st.ierrors;
	}
	app_events_lost(&ev);
	for (unsigned int k = 0; k < NB_LOSSES; k++) {
		const struct loss *l = &losses[k];

		v[k] = 0;
		switch (l->from) {
		case FROM_PORT:
			v[k] = *(uint64_t *)((char *)&port_sum + l->offset);
			break;
		case FROM_WORKER:
			for (unsigned int i = 0; i < lw.nb_workers; i++)
				v[k] += __atomic_load_n((uint64_t *)((char *)
					&lw.workers[i].ctr + l->offset),
					__ATOMIC_RELAXED);
			break;
		case FROM_EVENTS:
			v[k] = *(uint64_t *)((char *)&ev + l->offset);
			break;
		case FROM_STATS:
			v[k] = app_stats_lines_lost();
			break;
		}
	}
}

void
app_losses_watch(void)
{
	uint64_t now = cfu_clock_ns(CLOCK_MONOTONIC), v[NB_LOSSES];

	if (lw.topo == NULL || now - lw.checked_ns < WATCH_NS)
		return;
	lw.checked_ns = now;
	losses_read(v);
	for (unsigned int k = 0; k < NB_LOSSES; k++) {
		const struct loss *l = &losses[k];

		if (v[k] <= lw.said[k])
			continue;
		if (lw.said_ns[k] == 0)
			app_log(APP_LOG_WARNING, "losing %s: %s %" PRIu64 " so "
				"far: %s", kind_names[l->kind], l->name, v[k],
				l->why);
		else if (now - lw.said_ns[k] >= REPEAT_NS)
			app_log(APP_LOG_WARNING, "losing %s: %s +%" PRIu64
				" in %.0f s, %" PRIu64 " in all",
				kind_names[l->kind], l->name, v[k] - lw.said[k],
				(double)(now - lw.said_ns[k]) / 1e9, v[k]);
		else
			continue;
		lw.said[k] = v[k];
		lw.said_ns[k] = now;
	}
}

void
app_losses_count(uint64_t lost[APP_LOSS_KINDS])
{
	uint64_t v[NB_LOSSES];

	memset(lost, 0, APP_LOSS_KINDS * sizeof(*lost));
	if (lw.topo == NULL)
		return;
	losses_read(v);
	for (unsigned int k = 0; k < NB_LOSSES; k++)
		lost[losses[k].kind] += v[k];
}

void
app_losses_text(char *buf, size_t len)
{
	uint64_t v[NB_LOSSES];
	size_t used = 0;

	snprintf(buf, len, "none");
	if (lw.topo == NULL)
		return;
	losses_read(v);
	for (unsigned int k = 0; k < NB_LOSSES && used < len; k++)
		if (v[k] != 0)
			used += (size_t)snprintf(buf + used, len - used,
				"%s%s %" PRIu64 " %s", used ? ", " : "",
				losses[k].name, v[k],
				kind_names[losses[k].kind]);
}

int
app_losses_report(bool replay)
{
	uint64_t v[NB_LOSSES];
	int ret = 0;

	if (lw.topo == NULL)
		return 0;
	losses_read(v);
	for (unsigned int k = 0; k < NB_LOSSES; k++) {
		const struct loss *l = &losses[k];

		if (v[k] == 0)
			continue;
		app_log(APP_LOG_WARNING, "lost %" PRIu64 " %s: %s: %s", v[k],
			kind_names[l->kind], l->name, l->why);
		if (l->kind == APP_LOSS_PACKETS)
			ret = APP_EXIT_PACKETS_LOST;
		else if (ret == 0)
			ret = APP_EXIT_EVENTS_LOST;
	}
	return replay ? ret : 0;
}

/* {"packets": {"rx_missed": N, ...}, "events": {...}, "records": {...}},
 * every loss by its kind, and its counter's name. */
static int
tel_losses(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *group[APP_LOSS_KINDS];
	uint64_t v[NB_LOSSES];

	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	if (app_telemetry_alloc(group, APP_LOSS_KINDS) < 0)
		return -ENOMEM;
	losses_read(v);
	for (unsigned int g = 0; g < APP_LOSS_KINDS; g++)
		rte_tel_data_start_dict(group[g]);
	for (unsigned int k = 0; k < NB_LOSSES; k++)
		rte_tel_data_add_dict_u64(group[losses[k].kind], losses[k].name,
			v[k]);
	rte_tel_data_start_dict(d);
	for (unsigned int g = 0; g < APP_LOSS_KINDS; g++)
		rte_tel_data_add_dict_container(d, kind_names[g], group[g], 0);
	return 0;
}

int
app_losses_setup(struct app_worker *workers, unsigned int nb_workers,
		const struct app_topology *topo, char *err, size_t err_len)
{
	lw.workers = workers;
	lw.nb_workers = nb_workers;
	lw.topo = topo;
	lw.checked_ns = cfu_clock_ns(CLOCK_MONOTONIC);
	return app_telemetry_register("/cuckooflow/losses", tel_losses,
		"Packets, events and records lost, by the counter that counts "
		"them. Takes no parameters", err, err_len);
}
