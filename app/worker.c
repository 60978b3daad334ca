/* SPDX-License-Identifier: BSD-3-Clause */

/* The per-lcore run-to-completion loop. */

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>

#include "filter.h"
#include "worker.h"

static struct app_run run;

static void
cflow_table_track(void *table, const struct cflow_input *in,
		const struct cflow_packet *pkts,
		const enum cflow_parse_status *status, unsigned int n,
		enum cflow_verdict *verdicts)
{
	cflow_track_parsed(table, in, pkts, status, n, verdicts);
}

static uint64_t
cflow_table_sweep(void *table, uint64_t now_ns)
{
	return cflow_sweep(table, now_ns);
}

const struct app_flow_table_ops app_cflow_table_ops = {
	.track = cflow_table_track,
	.sweep = cflow_table_sweep,
};

void
app_worker_setup(const struct app_run *r)
{
	run = *r;
	if (run.table_ops == NULL)
		run.table_ops = &app_cflow_table_ops;
}

static inline uint64_t
tsc_ns(void)
{
	return (uint64_t)((double)rte_rdtsc() * 1e9 / (double)run.tsc_hz);
}

/*
 * net_pcap's capture time: in 22.11 it fills the timestamp dynfield with
 * microseconds since the epoch whether or not the offload is enabled.
 */
static inline bool
packet_time(const struct rte_mbuf *m, uint64_t *ns)
{
	if (run.timestamp_offset < 0 || !(m->ol_flags & run.timestamp_flag))
		return false;
	*ns = *RTE_MBUF_DYNFIELD(m, run.timestamp_offset,
			const rte_mbuf_timestamp_t *) * 1000;
	return true;
}

/* An rx_pcap queue is exhausted when a burst comes back short while the
 * port has not run out of mbufs (the driver reads the file in order). */
static bool
queue_at_eof(const struct app_rxq *q, uint64_t *nombuf)
{
	struct rte_eth_stats st;

	if (rte_eth_stats_get(q->port, &st) != 0)
		return false;
	if (st.rx_nombuf != *nombuf) {
		*nombuf = st.rx_nombuf;
		return false;
	}
	return true;
}

/* Parse the burst; with a blocklist, drop the packets it matches and
 * keep the others, in order, with their inputs and parse results.
 * Returns how many are kept. */
static uint16_t
parse_and_filter(struct app_worker *w, const struct cflow_blocklist *bl,
		struct rte_mbuf **pkts, struct cflow_input *in,
		struct cflow_packet *parsed, enum cflow_parse_status *status,
		uint16_t n)
{
	uint16_t keep = 0;

	for (uint16_t k = 0; k < n; k++) {
		enum cflow_bl_kind kind = CFLOW_BL_NONE;

		status[keep] = cflow_parse(in[k].data, in[k].len, &run.parse,
				&parsed[keep]);
		if (bl != NULL && status[keep] == CFLOW_PARSE_OK)
			kind = cflow_bl_match(bl, &parsed[keep]);
		if (kind != CFLOW_BL_NONE) {
			w->blocked_packets++;
			w->blocked_bytes += in[k].wire_len;
			w->blocked[kind]++;
			rte_pktmbuf_free(pkts[k]);
			continue;
		}
		pkts[keep] = pkts[k];
		in[keep++] = in[k];
	}
	return keep;
}

static void
forward_or_free(struct app_worker *w, const struct app_rxq *q,
		struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = 0;

	if (run.cfg->mode == APP_MODE_FORWARD) {
		sent = rte_eth_tx_burst(q->tx_port, q->tx_queue, pkts, n);
		w->tx_packets += sent;
		w->tx_dropped += n - sent;
	}
	if (sent < n)
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
}

void
app_worker_idle(struct app_worker *w)
{
	if (run.cfg->clock != APP_CLOCK_PKT)
		w->last_ns = tsc_ns();
	run.table_ops->sweep(w->table, w->last_ns);
}

void
app_worker_burst(struct app_worker *w, const struct app_rxq *q,
		const struct cflow_blocklist *bl, struct rte_mbuf **pkts,
		uint16_t n)
{
	struct cflow_input in[CF_BULK_MAX];
	struct cflow_packet parsed[CF_BULK_MAX];
	enum cflow_parse_status status[CF_BULK_MAX];
	enum cflow_verdict verdicts[CF_BULK_MAX];
	bool pkt_clock = run.cfg->clock == APP_CLOCK_PKT;

	for (uint16_t k = 0; k < n; k++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[k], void *));
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		uint64_t t;

		if (!pkt_clock) {
			t = k == 0 ? tsc_ns() : in[0].time_ns;
		} else if (!packet_time(m, &t)) {
			w->no_timestamp++;
			t = w->last_ns;
		}
		in[k] = (struct cflow_input){
			.data = rte_pktmbuf_mtod(m, uint8_t *),
			.len = rte_pktmbuf_data_len(m),
			.wire_len = rte_pktmbuf_pkt_len(m),
			.time_ns = t,
			.rss = m->hash.rss,
			.has_rss = m->ol_flags & RTE_MBUF_F_RX_RSS_HASH,
		};
		if (t > w->last_ns)
			w->last_ns = t;
	}
	w->rx_packets += n;
	n = parse_and_filter(w, bl, pkts, in, parsed, status, n);
	if (n != 0)
		run.table_ops->track(w->table, in, parsed, status, n,
				verdicts);
	for (uint16_t k = 0; k < n; k++)
		*RTE_MBUF_DYNFIELD(pkts[k], run.verdict_offset, uint8_t *) =
			(uint8_t)verdicts[k];
	run.table_ops->sweep(w->table, w->last_ns);
	forward_or_free(w, q, pkts, n);
}

int
app_worker_main(void *arg)
{
	struct app_worker *w = arg;
	const unsigned int burst = (unsigned int)run.cfg->burst;
	uint64_t nombuf[RTE_MAX_ETHPORTS] = { 0 };
	bool pkt_clock = run.cfg->clock == APP_CLOCK_PKT;

	struct rte_rcu_qsbr *rcu = app_filter_rcu();

	rte_rcu_qsbr_thread_register(rcu, w->index);
	rte_rcu_qsbr_thread_online(rcu, w->index);
	while (!*run.quit) {
		/* One list for the whole pass; a reload frees it only after
		 * the quiescent report below. */
		const struct cflow_blocklist *bl = app_filter_get();
		unsigned int live = 0;

		for (unsigned int i = 0; i < w->nb_rxq; i++) {
			struct app_rxq *q = &w->rxq[i];
			struct rte_mbuf *pkts[CF_BULK_MAX];
			uint16_t n;

			if (q->eof)
				continue;
			live++;
			n = rte_eth_rx_burst(q->port, q->queue, pkts,
					(uint16_t)burst);
			if (n < burst && q->pcap &&
					queue_at_eof(q, &nombuf[q->port]))
				q->eof = true;
			if (n == 0)
				/* Idle: expire flows all the same. */
				app_worker_idle(w);
			else
				app_worker_burst(w, q, bl, pkts, n);
		}
		rte_rcu_qsbr_quiescent(rcu, w->index);
		if (live == 0)
			break;
	}
	/* Every capture is exhausted. Once the main lcore has the last
	 * packet time of all lcores, make the end-of-run counters exact (so
	 * that telemetry shows them), then wait to be stopped. */
	w->done = true;
	while (!*run.quit) {
		if (*run.end_set && !w->swept) {
			cflow_sweep_all(w->tracker, *run.end_ns);
			w->swept = true;
		} else if (w->swept && !pkt_clock) {
			app_worker_idle(w);
		}
		rte_rcu_qsbr_quiescent(rcu, w->index);
		rte_delay_us_sleep(1000);
	}
	rte_rcu_qsbr_thread_offline(rcu, w->index);
	rte_rcu_qsbr_thread_unregister(rcu, w->index);
	return 0;
}
