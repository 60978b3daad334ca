/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_WORKER_H_
#define _APP_WORKER_H_

/*
 * A worker lcore: it polls some rx queues, owns one flow table, and runs
 * rx burst -> parse -> blocklist -> track -> forward or free to
 * completion.
 *
 * Flow affinity: every packet of a flow, both directions, from any port
 * and queue, is tracked by one worker, the flow's owner. With hardware
 * affinity (symmetric RSS, queue q of every port on one worker) a packet
 * is tracked where it arrives. With software handoff, the worker that
 * receives a packet hashes its canonical key, looks the owner up in a
 * redirection table (app_run.reta) and, if it is another worker, passes
 * the mbuf to it through a single-producer, single-consumer ring: one
 * ring per (receiver, owner) pair keeps each flow's packets from one
 * queue in their order.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "blocklist.h"
#include "cflow.h"
#include "cflow_topk.h"
#include "cfutil.h"
#include "config.h"

#define APP_MAX_QUEUES_PER_LCORE 32
#define APP_MAX_WORKERS 64
#define APP_RETA_BITS 9
#define APP_RETA_SIZE (1u << APP_RETA_BITS)

/*
 * The flow table a worker drives, over its whole life: track packets
 * (cflow_track_parsed()'s contract), sweep a paced share of the table
 * (cflow_sweep_at()), sweep it all at the end of a run (cflow_sweep_all())
 * and read its counters. The application uses lib/cflow's tracker
 * (app_cflow_table_ops); bench_pipeline runs the same loop over an exact
 * rte_hash table to compare the two.
 */
struct app_flow_table_ops {
	void (*track)(void *table, const struct cflow_input *in,
			const struct cflow_packet *pkts,
			const enum cflow_parse_status *status, unsigned int n,
			enum cflow_verdict *verdicts, uint8_t *counts);
	/* @as_of_ns <= @now_ns: judge idleness at that time (the replay
	 * watermark; see app_worker.as_of_ns) */
	uint64_t (*sweep)(void *table, uint64_t now_ns, uint64_t as_of_ns);
	uint64_t (*sweep_all)(void *table, uint64_t now_ns);
	void (*counters)(const void *table, struct cflow_counters *c);
};

extern const struct app_flow_table_ops app_cflow_table_ops;

/* lib/cuckoo's tables in the DPDK heap: hugepages, on a given socket. */
extern const struct cf_allocator app_dpdk_allocator;

/*
 * What a receiving worker hands to the flow's owner with the mbuf, in
 * the mbuf's private area (the pool's priv_size): the parse, the key's
 * hash and the arrival time, so that the owner neither parses nor
 * hashes again.
 */
struct app_handoff_meta {
	struct cflow_packet pkt;
	uint64_t hash;
	uint64_t time_ns;
};

struct app_rxq {
	uint16_t port;
	uint16_t queue;
	bool pcap;          /* net_pcap: a short burst can mean end of file */
	struct cflow_parse_params parse; /* the run's, with the port's
					  * link type */
	bool eof;           /* rx_pcap exhausted */
	/* Replay watermark (app_run.watermark): no packet still to come
	 * from this queue is earlier: the time of the latest packet passed
	 * on (tracked or in its owner's ring), or of the first one held,
	 * published (release) once every packet before it is passed on;
	 * UINT64_MAX at end of file, nothing held. */
	uint64_t read_ns;
	/* --clock pkt: the latest capture time read from this queue. A
	 * packet's time is the later of its own and this: time never goes
	 * back on a queue, and a frame that is not tracked (non-IP,
	 * malformed, blocked) moves it all the same (docs/usage.md). */
	uint64_t time_ns;
	uint64_t rx_packets;    /* received from this queue */
	/* The end of a burst held back, in order (app_run.lead_ns): read
	 * again before the next rx burst. */
	uint16_t nb_held;
	struct rte_mbuf *held[CF_BULK_MAX];
};

struct app_run;

/* A port's role in firewall mode (docs/firewall.md). */
enum app_role {
	APP_ROLE_NONE,    /* not firewall mode: every packet may open a flow */
	APP_ROLE_INSIDE,  /* its packets may open flows */
	APP_ROLE_OUTSIDE, /* its packets pass on tracked flows only */
	APP_ROLE_MIRROR,  /* --mirror-port: sends copies, drops what it gets */
	APP_ROLE_MAX,
};

/* What happens to a packet the blocklist let through, by its port's role
 * and its verdict (app_actions[][]): forwarded, or dropped for a reason. */
enum app_drop {
	APP_FORWARD = 0,
	APP_DROP_UNSOLICITED, /* outside: no flow, not allowed to open one */
	APP_DROP_NOT_SYN,     /* --tcp-strict: a TCP flow not opened by SYN */
	APP_DROP_LIMITED,     /* firewall: a new flow past --new-flow-rate */
	APP_DROP_TABLE_FULL,  /* outside: its new flow found no room */
	APP_DROP_MALFORMED,   /* outside: not decidable */
	APP_DROP_FRAGMENT,    /* outside: a non-first fragment */
	APP_DROP_MIRROR_RX,   /* received on the mirror port */
	/* outside: travels away from its flow's inside endpoint */
	APP_DROP_WRONG_DIR,
	/* outside, --firewall-unparsed drop: frames the parser cannot
	 * place (worker.c, unparsed_reason()) */
	APP_DROP_VLAN_DEPTH,  /* IP, or maybe IP, behind 3+ VLAN tags */
	APP_DROP_ENCAPSULATED, /* MPLS, PPPoE, 802.3 LLC/SNAP, PBB */
	APP_DROP_TUNNEL_NON_IP, /* --decap: a tunnel's inner frame not IP */
	APP_DROP_NON_IP,      /* any other frame but ARP */
	APP_DROP_MAX,
	/* Not reasons: what the action table leaves to the packet, decided
	 * by worker.c's outside_decide(). */
	APP_DECIDE_UNPARSED = APP_DROP_MAX, /* --firewall-unparsed; ARP
					     * passes */
	APP_DECIDE_UNSOLICITED, /* unsolicited; IPv6 ND passes */
};

/* "unsolicited", ... for counters; "forward" for APP_FORWARD. */
const char *app_drop_name(enum app_drop d);

/* The action table, one row a role: documented in docs/design.md. */
extern const uint8_t app_actions[APP_ROLE_MAX][CFLOW_VERDICT_MAX];

/* What a worker with handoff tracks in its next bulk lookup: its own
 * packets from the bursts since the last one, then what it drains. */
#define APP_PENDING_MAX CF_BULK_MAX
struct app_pending {
	uint16_t n;
	struct rte_mbuf *pkts[APP_PENDING_MAX];
	struct cflow_input in[APP_PENDING_MAX];
	struct cflow_packet parsed[APP_PENDING_MAX];
	enum cflow_parse_status status[APP_PENDING_MAX];
};

/*
 * Counters are written by the worker's lcore only, and read by the main
 * lcore and telemetry. The flags are the end-of-run handshake, written
 * with release and read with acquire (__atomic builtins).
 */
/*
 * A control thread's request (telemetry: one flow's lookup, a flush),
 * served by the worker between bursts, so that only the worker ever
 * touches its table: the requester fills the request, then publishes
 * req (release); the worker takes it (claim = req, compare-and-swap),
 * copies it, serves it and publishes done = req (release). A requester
 * that gives up waiting withdraws it by taking it first (the same
 * compare-and-swap): the worker then skips it, so that a flush reported
 * as not done is never done later. One request at a time per worker
 * (app/control.c).
 */
enum app_ctl_op {
	APP_CTL_LOOKUP = 1,
	APP_CTL_FLUSH,
};

struct app_ctl {
	uint32_t req;
	uint32_t done;
	uint32_t claim;         /* the last request taken, by either side */
	uint32_t op;            /* enum app_ctl_op */
	int ret;
	struct cflow_key key;   /* lookup */
	struct cflow_flow_info info;
	uint64_t flushed;       /* flush: open flows removed */
};

/* A first packet of at most this many bytes (one segment, no stripped
 * VLAN tag) travels in its event, copied by the worker: passing the mbuf
 * itself costs more, as it then returns to the pool from the main
 * lcore (docs/benchmarks.md, "Flow events and top sources"). */
#define APP_EVENT_PKT_INLINE 128

/* A flow event on its way to the main lcore (app/events.c): when first
 * packets are captured, a new flow's packet, inline (pkt_len != 0) or
 * by a reference to its mbuf (m). */
struct app_event {
	struct cflow_event ev;
	struct rte_mbuf *m;
	uint16_t pkt_len;       /* bytes in pkt */
	uint8_t has_rss;        /* rss: the NIC's hash (rte_pcapng keeps it) */
	uint8_t reserved;
	uint32_t rss;
	uint8_t pkt[APP_EVENT_PKT_INLINE];
};

struct app_worker {
	const struct app_run *run;
	unsigned int lcore;
	unsigned int index;     /* 0..workers-1: RCU thread id, tx queue */
	struct cflow_tracker *tracker;  /* the application's flow table */
	void *table;            /* what run->table_ops drive */
	struct app_rxq rxq[APP_MAX_QUEUES_PER_LCORE];
	unsigned int nb_rxq;
	/* handoff rings: to[j] carries packets to worker j, from[j] those
	 * of worker j (NULL for itself, or without handoff) */
	struct rte_ring *to[APP_MAX_WORKERS];
	struct rte_ring *from[APP_MAX_WORKERS];
	uint64_t rx_packets;
	/* of rx_packets, dropped unread: the mbuf chain holds other than
	 * pkt_len bytes (app/frame.h) */
	uint64_t rx_len_mismatch;
	uint64_t tx_packets;
	uint64_t tx_dropped;
	uint64_t no_timestamp;  /* --clock pkt, packet without one */
	uint64_t blocked_packets;
	uint64_t blocked_bytes;
	uint64_t blocked[CBL_KINDS + 1]; /* by entry kind; last:
					  * unparsed, dropped */
	uint64_t blocklist_unparsed; /* not decidable by the list */
	const struct cbl *bl_seen; /* bl_has_flows is of it */
	bool bl_has_flows;
	uint8_t scratch[CFLOW_PARSE_MAX_HDR]; /* headers across segments */
	struct app_pending pending;
	uint64_t handoff_out;   /* packets passed to their owner */
	uint64_t handoff_in;    /* packets received from other workers */
	uint64_t handoff_drops; /* dropped: the owner's ring stayed full */
	uint64_t handoff_waits; /* bursts that waited for a full ring */
	uint64_t dropped[APP_DROP_MAX]; /* by reason ([APP_FORWARD]: 0) */
	uint64_t firewall_unparsed; /* outside frames --firewall-unparsed
				     * decided, passed or dropped */
	uint64_t nd_passed;     /* outside IPv6 neighbour discovery of no
				 * flow, passed */
	uint64_t mirrored;      /* copies sent out of the mirror port */
	uint64_t mirror_dropped; /* copies the mirror port did not take */
	struct rte_ring *event_ring; /* to the main lcore, or NULL */
	uint64_t event_mbufs;   /* mbufs (segments) of first packets passed
				 * by reference (see event_mbufs_freed) */
	uint64_t events_queued; /* flow events passed to the main lcore */
	uint64_t events_dropped; /* not queued: the ring was full */
	uint64_t flushes;       /* flush requests served */
	struct app_ctl ctl;
	/* Top sources of new flows (app/top.c): the worker adds to
	 * top[top_idx]; the main lcore sets top_cur each period, and reads
	 * the other sketch once the worker has published top_ack. */
	struct cflow_topk *top[2];
	unsigned int top_idx;
	uint32_t top_cur;
	uint32_t top_ack;
	uint64_t last_ns;       /* time of the last packet or sweep (atomic) */
	/* Sweeps judge idleness at this time: last_ns, but when replaying
	 * several streams (app_run.watermark), a watermark no packet still
	 * to come to this worker is earlier than (see advance_as_of()). */
	uint64_t as_of_ns;
	/* With app_run.lead_ns: the replay watermark this worker has caught
	 * up with: it has tracked every packet earlier than it that it
	 * will ever track (atomic, release). */
	uint64_t caught_ns;
	bool rx_done;           /* every queue at EOF, all handed off */
	bool done;              /* and every packet handed to it tracked */
	bool swept;             /* final sweep made at app_run.end_ns */
	/* Of event_mbufs, those the main lcore has freed: written by it
	 * alone (release), on a line of its own. */
	uint64_t event_mbufs_freed __rte_cache_aligned;
} __rte_cache_aligned;

/*
 * --new-flow-pcap: the first packets longer than APP_EVENT_PKT_INLINE
 * (shorter ones travel in the event) a worker passes by reference hold at
 * most this many mbufs, their segments counted, until the main lcore has
 * freed them (app_run.event_mbufs: fewer with a smaller --event-ring);
 * the events beyond go without theirs, counted pcapng_skipped: a main
 * lcore that falls behind (a slow disk) must not take the rx pool's
 * mbufs, which the pool is sized for (app_events_mbufs()).
 */
#define APP_EVENT_PACKETS_MAX 2048

/* The run's settings, shared by the workers; read-only once they start,
 * but for the handshake fields. */
struct app_run {
	const struct app_config *cfg;
	int timestamp_offset;   /* mbuf dynfield, -1 if not registered */
	int verdict_offset;     /* mbuf dynfield for enum cflow_verdict */
	uint64_t timestamp_flag;
	uint64_t tsc_hz;
	uint64_t clock_offset_ns; /* added to TSC time: a warm restart's
				   * clock goes on from the saved one */
	uint64_t epoch_offset_ns; /* run clock + this = ns since the epoch
				   * (0 with packet times) */
	bool first_packets;     /* --new-flow-pcap: events hold the mbuf */
	uint32_t event_mbufs;   /* and a worker's hold at most so many
				 * (APP_EVENT_PACKETS_MAX) */
	struct cflow_parse_params parse;
	const struct app_flow_table_ops *table_ops; /* NULL: lib/cflow's */
	struct app_worker *workers;
	unsigned int nb_workers;
	bool handoff;           /* software affinity through rings */
	bool handoff_wait;      /* a full ring: wait (else drop) */
	bool watermark;         /* replay of several streams (handoff, or a
				 * worker on several queues): flow time,
				 * sweeps at as_of_ns */
	/* With a watermark, replayed captures only: a packet is passed on
	 * no more than this ahead of the least caught_ns of all workers
	 * (the trackers' lag, cflow_tracker_lag_ns()); later ones are held
	 * on their queue. 0: no bound. */
	uint64_t lead_ns;
	uint64_t hash_seed;     /* every tracker's: the handed-off hash */
	uint16_t reta[APP_RETA_SIZE]; /* hash -> owner worker index */
	uint16_t tx_port[RTE_MAX_ETHPORTS]; /* forward: ingress -> egress */
	uint8_t role[RTE_MAX_ETHPORTS]; /* enum app_role */
	const struct cbl_allow *allow;  /* firewall: --allow, or NULL */
	bool mirror;            /* --mirror-port */
	uint16_t mirror_port;
	uint8_t mirror_first;   /* copies of a flow's first N packets */
	/* The handshake: quit is set by the main lcore (or a signal);
	 * end_ns, then end_set, once every worker is done: the last packet
	 * time of all of them, for the final sweep. */
	bool quit;
	bool end_set;
	uint64_t end_ns;
};

/* The run's TSC clock, ns. */
static inline uint64_t
app_tsc_ns(const struct app_run *run)
{
	return (uint64_t)((double)rte_rdtsc() * 1e9 / (double)run->tsc_hz) +
		run->clock_offset_ns;
}

/* One single-producer, single-consumer ring of @p size packets from
 * each worker to each other one, on the consumer's socket. 0, or -1 with
 * rte_errno set (none left behind). */
int app_handoff_rings_create(struct app_worker *workers, unsigned int n,
		unsigned int size);

void app_handoff_rings_free(struct app_worker *workers, unsigned int n);

/* Each packet's enum cflow_verdict, one byte, for later stages of a
 * pipeline: rte_mbuf_dynfield_lookup(APP_VERDICT_DYNFIELD, NULL). */
#define APP_VERDICT_DYNFIELD "cuckooflow_dynfield_verdict"

/* Register it; its offset, or -1 with rte_errno set. */
int app_verdict_dynfield_register(void);

/* Fill @p run->reta: an even spread of hashes over the workers. */
void app_run_reta_init(struct app_run *run);

/* The worker that owns the flow of key hash @p hash. */
static inline unsigned int
app_flow_owner(const struct app_run *run, uint64_t hash)
{
	/* The table's bucket index and fingerprint come from the hash
	 * itself: mix it, so that each worker's share of flows still
	 * spreads over all of its table. */
	return run->reta[cfu_mix64(hash) >> (64 - APP_RETA_BITS)];
}

/* The lcore main loop; arg is its struct app_worker, whose run field
 * holds everything else. */
int app_worker_main(void *arg);

/* One received burst of @n packets from @p q, the hot path: time,
 * parse, blocklist, then track what the worker owns (with handoff: at
 * the next app_worker_drain(), with what others hand it) and hand off
 * the rest, verdicts, sweep, forward or free. */
void app_worker_burst(struct app_worker *w, struct app_rxq *q,
		const struct cbl *bl, struct rte_mbuf **pkts,
		uint16_t n);

/* With handoff: track what other workers handed over, with this
 * worker's own packets of the bursts since the last call (called every
 * loop); returns the packets drained. */
unsigned int app_worker_drain(struct app_worker *w);

/* An empty rx burst: move the clock on and sweep. */
void app_worker_idle(struct app_worker *w);

#endif /* _APP_WORKER_H_ */
