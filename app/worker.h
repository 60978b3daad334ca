/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_WORKER_H_
#define _APP_WORKER_H_

/*
 * A worker lcore: it owns some rx queues and one flow table, and runs
 * rx burst -> parse -> blocklist -> track -> forward or free to
 * completion.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "blocklist.h"
#include "cflow.h"
#include "config.h"

#define APP_MAX_QUEUES_PER_LCORE 16

/*
 * The flow table a worker drives, with cflow_track_parsed() and
 * cflow_sweep()'s contracts. The application uses lib/cflow's tracker
 * (app_cflow_table_ops); bench_pipeline runs the same loop over an exact
 * rte_hash table to compare the two.
 */
struct app_flow_table_ops {
	void (*track)(void *table, const struct cflow_input *in,
			const struct cflow_packet *pkts,
			const enum cflow_parse_status *status, unsigned int n,
			enum cflow_verdict *verdicts);
	uint64_t (*sweep)(void *table, uint64_t now_ns);
};

extern const struct app_flow_table_ops app_cflow_table_ops;

/* lib/cuckoo's tables in the DPDK heap: hugepages, on a given socket. */
extern const struct cf_allocator app_dpdk_allocator;

struct app_rxq {
	uint16_t port;
	uint16_t queue;
	uint16_t tx_port;   /* forward mode: the paired port */
	uint16_t tx_queue;
	bool pcap;          /* net_pcap: a short burst can mean end of file */
	bool eof;           /* rx_pcap exhausted */
};

/* Written by its lcore only; read by the main lcore and telemetry. */
struct app_worker {
	unsigned int lcore;
	unsigned int index;     /* 0..workers-1: the RCU thread id */
	struct cflow_tracker *tracker;  /* the application's flow table */
	void *table;            /* what app_run.table_ops drive */
	struct app_rxq rxq[APP_MAX_QUEUES_PER_LCORE];
	unsigned int nb_rxq;
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t tx_dropped;
	uint64_t no_timestamp;  /* --clock pkt, packet without one */
	uint64_t blocked_packets;
	uint64_t blocked_bytes;
	uint64_t blocked[CFLOW_BL_KINDS]; /* by entry kind */
	uint64_t last_ns;       /* time of the last packet or sweep */
	volatile bool done;     /* every queue at EOF */
	volatile bool swept;    /* final sweep made at app_run.end_ns */
} __rte_cache_aligned;

/* Shared, read-only settings of the run. */
struct app_run {
	const struct app_config *cfg;
	int timestamp_offset;   /* mbuf dynfield, -1 if not registered */
	int verdict_offset;     /* mbuf dynfield for enum cflow_verdict */
	uint64_t timestamp_flag;
	uint64_t tsc_hz;
	struct cflow_parse_params parse;
	const struct app_flow_table_ops *table_ops; /* NULL: lib/cflow's */
	volatile bool *quit;
	/* Set by the main lcore once every worker is done: the last packet
	 * time of all of them, for the final sweep. */
	volatile uint64_t *end_ns;
	volatile bool *end_set;
};

/* The lcore main loop; arg is the struct app_worker. */
int app_worker_main(void *arg);

/* Set once before the workers start. */
void app_worker_setup(const struct app_run *run);

/* One received burst of @n packets, the hot path: time, parse,
 * blocklist, track, verdicts, sweep, then forward or free them all. */
void app_worker_burst(struct app_worker *w, const struct app_rxq *q,
		const struct cflow_blocklist *bl, struct rte_mbuf **pkts,
		uint16_t n);

/* An empty rx burst: move the clock on and sweep. */
void app_worker_idle(struct app_worker *w);

#endif /* _APP_WORKER_H_ */
