/* SPDX-License-Identifier: BSD-3-Clause */

/* The counter tables: one per struct of counters (app/counters.h). */

#include <rte_common.h>
#include <rte_ethdev.h>

#include "counters.h"

#define TRACKER(f, k, h) { #f, offsetof(struct cflow_counters, f), k, h, NULL }

static const struct app_counter tracker[] = {
	TRACKER(packets, APP_COUNTER, "packets given to the tracker, each "
		"in exactly one class"),
	TRACKER(bytes, APP_COUNTER, "bytes of the packets tracked "
		"(pkt_len, no FCS)"),
	TRACKER(flows_new, APP_COUNTER, "flows opened: first packets"),
	TRACKER(flows_seen, APP_COUNTER, "packets of open or closing flows"),
	TRACKER(flows_closed, APP_COUNTER, "flows closed by a FIN or RST, "
		"once each"),
	TRACKER(flows_expired, APP_COUNTER, "flows removed idle past their "
		"timeout"),
	TRACKER(flows_evicted, APP_COUNTER, "open flows evicted for a new "
		"one (full table, --full-policy evict)"),
	TRACKER(active, APP_GAUGE, "open flows in the table now"),
	TRACKER(insert_failed, APP_COUNTER, "new flows not stored: the "
		"table full"),
	TRACKER(orphan_close, APP_COUNTER, "FIN or RST packets of no flow"),
	TRACKER(reused, APP_COUNTER, "SYN on a closing flow: opened again "
		"(also in flows_new)"),
	TRACKER(non_ip, APP_COUNTER, "packets not IP"),
	TRACKER(fragments, APP_COUNTER, "non-first IP fragments not placed "
		"in a tracked flow"),
	TRACKER(hash_fallback, APP_COUNTER, "--hash rss: packets without "
		"an RSS hash, hashed with XXH3"),
	TRACKER(unsolicited, APP_COUNTER, "packets of no flow that may not "
		"open one (firewall's outside)"),
	TRACKER(not_syn, APP_COUNTER, "--tcp-strict: TCP packets of no "
		"flow, not a SYN without ACK"),
	TRACKER(new_flow_limited, APP_COUNTER, "new flows refused past "
		"--new-flow-rate"),
	TRACKER(emergency_enter, APP_COUNTER, "times emergency mode began"),
	TRACKER(emergency_exit, APP_COUNTER, "times emergency mode ended"),
	TRACKER(emergency, APP_GAUGE, "1 while the table is in emergency "
		"mode"),
	TRACKER(flows_restored, APP_COUNTER, "open flows taken over from "
		"--state-file at start"),
	TRACKER(flows_flushed, APP_COUNTER, "open flows removed by "
		"/cuckooflow/flush"),
	TRACKER(wrong_direction, APP_COUNTER, "outside packets travelling "
		"away from their flow's inside"),
	TRACKER(lingering, APP_GAUGE, "closed flows lingering in the table "
		"now"),
	TRACKER(lingering_restored, APP_COUNTER, "closed flows taken over "
		"lingering from --state-file at start"),
	TRACKER(records_idle, APP_COUNTER, "flow records: ended idle "
		"(IPFIX flowEndReason 1)"),
	TRACKER(records_active, APP_COUNTER, "flow records cut by the "
		"active timeout, the flow going on (reason 2)"),
	TRACKER(records_end, APP_COUNTER, "flow records: a FIN/RST flow, its "
		"linger over (reason 3)"),
	TRACKER(records_forced, APP_COUNTER, "flow records: flushed "
		"(/cuckooflow/flush, reason 4)"),
	TRACKER(records_resources, APP_COUNTER, "flow records: evicted for "
		"a new flow (reason 5)"),
	TRACKER(records_shutdown, APP_COUNTER, "flow records of the flows "
		"left at exit (reason 4, or 3 if closed)"),
	TRACKER(related, APP_COUNTER, "ICMP errors about a packet of a "
		"tracked flow, going back to its source"),
	TRACKER(unrelated, APP_COUNTER, "ICMP errors about no tracked flow"),
	TRACKER(fragments_seen, APP_COUNTER, "non-first fragments of a "
		"tracked flow's datagram"),
};

#define WORKER_FIELD(f, h) \
	{ #f, offsetof(struct app_worker_counters, f), APP_COUNTER, h, NULL },
#define WORKER_ELEMENT(f, array, index, h) \
	{ #f, offsetof(struct app_worker_counters, array[index]), \
		APP_COUNTER, h, #array },

static const struct app_counter worker[] = {
	APP_WORKER_COUNTERS(WORKER_FIELD, WORKER_ELEMENT)
};

#define FRAG(f, h) \
	{ "frag_" #f, offsetof(struct cflow_frag_counters, f), APP_COUNTER, h, \
		NULL }

static const struct app_counter frag[] = {
	FRAG(datagrams, "fragmented datagrams followed: first fragments"),
	FRAG(followed, "later fragments given their first fragment's flow"),
	FRAG(held, "firewall mode: later fragments held, they came before "
		"their first"),
	FRAG(released, "held fragments passed on behind their first"),
	FRAG(expired, "held fragments dropped as fragment: no first "
		"fragment in time"),
	FRAG(overlaps, "fragments over their first's transport header, or "
		"a first fragment of another flow: not followed"),
	FRAG(evicted, "datagrams forgotten early: the follower's slots "
		"full"),
	FRAG(hold_full, "later fragments not held: the hold full"),
};

#define PORT(name, f, h) \
	{ name, offsetof(struct rte_eth_stats, f), APP_COUNTER, h, NULL }

static const struct app_counter port[] = {
	PORT("rx_nombuf", rx_nombuf, "packets not received for want of an "
		"mbuf, all ports"),
	PORT("rx_missed", imissed, "packets the devices dropped, their rx "
		"queues full (net_af_packet: the kernel's rings), all ports"),
	PORT("rx_errors", ierrors, "packets received in error, not "
		"delivered, all ports"),
};

#define TABLE(f, h) \
	{ #f, offsetof(struct app_table_figures, f), APP_GAUGE, h, NULL }

static const struct app_counter table[] = {
	TABLE(capacity, "flows the table was sized for (--flows)"),
	TABLE(slots, "the table's slots"),
	TABLE(items, "flows stored, the stash's included"),
	TABLE(load_ppm, "items / slots, parts per million"),
	TABLE(bytes, "the table's memory, bytes"),
	TABLE(bits_per_flow_milli, "bytes * 8000 / capacity: memory per flow "
		"of capacity, thousandths of a bit"),
	TABLE(expected_fpr_ppb, "false positive rate at this load, parts "
		"per billion"),
	TABLE(stash, "items in the stash"),
};

const struct app_counter_table app_counters_tracker = {
	"tracker", tracker, RTE_DIM(tracker)
};
const struct app_counter_table app_counters_worker = {
	"worker", worker, RTE_DIM(worker)
};
const struct app_counter_table app_counters_frag = {
	"frag", frag, RTE_DIM(frag)
};
const struct app_counter_table app_counters_port = {
	"port", port, RTE_DIM(port)
};
const struct app_counter_table app_counters_table = {
	"table", table, RTE_DIM(table)
};
