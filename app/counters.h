/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_COUNTERS_H_
#define _APP_COUNTERS_H_

/*
 * The application's counters: one table per struct of counters (name,
 * offset, kind, help), as DPDK's ethdev keeps one for struct
 * rte_eth_stats (eth_dev_stats_strings[]). Everything that shows a
 * counter walks these tables: the printed table, --stats-json and
 * --stats-json-period, telemetry's /cuckooflow/stats, /cuckooflow/lcore
 * and /cuckooflow/table, and /cuckooflow/counters, which lists them for
 * the Prometheus exporter (tools/cuckooflow_exporter.py). docs/counters.md
 * documents each; a test holds the two to one list.
 *
 * Adding a worker counter is one line in APP_WORKER_COUNTERS (the
 * field and its table entry) and one in docs/counters.md.
 */

#include <stddef.h>
#include <stdint.h>

#include "blocklist.h"
#include "run.h"

enum app_counter_kind {
	APP_COUNTER,    /* only grows */
	APP_GAUGE,      /* a level: goes up and down */
};

/* One counter of a struct of uint64_t counters. */
struct app_counter {
	const char *name;
	size_t offset;          /* of its uint64_t in the struct */
	enum app_counter_kind kind;
	const char *help;       /* one line, under 128 bytes (telemetry) */
	/* One of a group of counters by reason, or NULL: the name of its
	 * array ("dropped", "blocked"), its name the group's and its
	 * reason ("dropped_unsolicited"): one Prometheus series a reason
	 * (cuckooflow_dropped_total{reason="unsolicited"}). */
	const char *group;
};

/* Which struct a table describes: the /cuckooflow/counters "source". */
struct app_counter_table {
	const char *source;     /* "tracker", "worker", "frag", "port",
				 * "table" */
	const struct app_counter *counters;
	unsigned int n;
};

/*
 * A worker's own counters, written by its lcore alone: C(name, help) is
 * a field, E(name, array, index, help) an element of one of the arrays
 * below. In this order in every output, after the tracker's.
 */
#define APP_WORKER_COUNTERS(C, E) \
	C(rx_packets, "packets received from the worker's rx queues") \
	C(tx_packets, "packets forwarded: taken by the tx queue") \
	C(tx_dropped, "packets to forward the tx queue did not take") \
	C(no_timestamp, "--clock pkt: packets without a capture time") \
	C(blocked_packets, "packets the blocklist dropped") \
	C(blocked_bytes, "bytes of the packets the blocklist dropped") \
	E(blocked_address, blocked, CBL_ADDRESS, \
		"blocked: an address entry matched") \
	E(blocked_prefix, blocked, CBL_PREFIX, \
		"blocked: a prefix entry matched") \
	E(blocked_flow, blocked, CBL_FLOW, "blocked: a flow entry matched") \
	E(blocked_unparsed, blocked, CBL_KINDS, \
		"blocked: undecidable by the list, --blocklist-unparsed drop") \
	C(blocklist_unparsed, \
		"packets the blocklist could not decide, dropped or passed") \
	C(handoff_out, "packets passed to their flow's owner worker") \
	C(handoff_in, "packets received from other workers") \
	C(handoff_drops, "packets dropped: the owner's ring stayed full") \
	C(handoff_waits, "bursts that waited for an owner's full ring") \
	C(rx_len_mismatch, \
		"frames dropped unread: mbuf chain short of pkt_len") \
	E(dropped_unsolicited, dropped, APP_DROP_UNSOLICITED, \
		"firewall drop: outside packet of no flow, not allowed to open") \
	E(dropped_not_syn, dropped, APP_DROP_NOT_SYN, \
		"firewall drop: --tcp-strict, a TCP flow not opened by a SYN") \
	E(dropped_limited, dropped, APP_DROP_LIMITED, \
		"firewall drop: a new flow past --new-flow-rate") \
	E(dropped_table_full, dropped, APP_DROP_TABLE_FULL, \
		"firewall drop: outside packet whose new flow found no room") \
	E(dropped_malformed, dropped, APP_DROP_MALFORMED, \
		"firewall drop: malformed outside packet") \
	E(dropped_fragment, dropped, APP_DROP_FRAGMENT, \
		"firewall drop: outside non-first fragment, or a held one " \
		"whose first never came") \
	E(dropped_mirror_rx, dropped, APP_DROP_MIRROR_RX, \
		"packets received on the mirror port, dropped") \
	E(dropped_wrong_direction, dropped, APP_DROP_WRONG_DIR, \
		"firewall drop: outside packet away from its flow's inside") \
	E(dropped_unrelated, dropped, APP_DROP_UNRELATED, \
		"firewall drop: outside ICMP error about no tracked flow") \
	E(dropped_vlan_depth, dropped, APP_DROP_VLAN_DEPTH, \
		"firewall drop: outside IP behind 3+ VLAN tags") \
	E(dropped_encapsulated, dropped, APP_DROP_ENCAPSULATED, \
		"firewall drop: outside MPLS, PPPoE, LLC/SNAP or PBB frame") \
	E(dropped_tunnel_non_ip, dropped, APP_DROP_TUNNEL_NON_IP, \
		"firewall drop: outside tunnel whose inner frame is not IP") \
	E(dropped_non_ip, dropped, APP_DROP_NON_IP, \
		"firewall drop: outside non-IP frame, not ARP") \
	C(firewall_unparsed, \
		"outside frames --firewall-unparsed decided, passed or dropped") \
	C(nd_passed, "outside IPv6 neighbour discovery passed without a flow") \
	C(mirrored, "copies of first packets sent out of the mirror port") \
	C(mirror_dropped, "copies the mirror port's tx queue did not take") \
	C(events_queued, "flow events passed to the main lcore") \
	C(events_dropped, "flow events dropped: the event ring was full") \
	C(records_dropped, \
		"flow records dropped: the event ring was full") \
	C(flushes, "flush requests served (/cuckooflow/flush)")

#define APP_COUNTER_FIELD(name, help) uint64_t name;
#define APP_COUNTER_ELEMENT(name, array, index, help)

/* A worker's counters (struct app_worker.ctr). */
struct app_worker_counters {
	APP_WORKER_COUNTERS(APP_COUNTER_FIELD, APP_COUNTER_ELEMENT)
	uint64_t blocked[CBL_KINDS + 1]; /* by entry kind; last: unparsed,
					  * dropped */
	uint64_t dropped[APP_DROP_MAX]; /* by reason ([APP_FORWARD]: 0) */
};

#undef APP_COUNTER_FIELD
#undef APP_COUNTER_ELEMENT

/* A flow table's figures (/cuckooflow/table). */
struct app_table_figures {
	uint64_t capacity;
	uint64_t slots;
	uint64_t items;
	uint64_t load_ppm;
	uint64_t bytes;
	uint64_t bits_per_flow_milli;
	uint64_t expected_fpr_ppb;
	uint64_t stash;
};

/*
 * The tables, in the order of every output: lib/cflow's struct
 * cflow_counters (the malformed[] reasons apart: app/stats.c), the
 * worker's struct app_worker_counters, its fragment follower's struct
 * cflow_frag_counters (0 with --frag-datagrams off), the ports' struct
 * rte_eth_stats (summed over the ports; 0 per lcore). Then a flow
 * table's figures.
 */
extern const struct app_counter_table app_counters_tracker;
extern const struct app_counter_table app_counters_worker;
extern const struct app_counter_table app_counters_frag;
extern const struct app_counter_table app_counters_port;
extern const struct app_counter_table app_counters_table;

/* The counter at @p k of @p t in @p base, a struct of its kind. */
static inline uint64_t *
app_counter_ptr(const struct app_counter_table *t, unsigned int k,
		void *base)
{
	return (uint64_t *)(void *)((char *)base + t->counters[k].offset);
}

static inline uint64_t
app_counter_get(const struct app_counter_table *t, unsigned int k,
		const void *base)
{
	return *(const uint64_t *)(const void *)((const char *)base +
		t->counters[k].offset);
}

#endif /* _APP_COUNTERS_H_ */
