/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_WORKER_H_
#define _APP_WORKER_H_

/*
 * A worker lcore: it polls some rx queues, owns one flow tracker, and
 * runs rx burst -> parse -> blocklist -> track -> forward or free to
 * completion, handing the packets of flows another worker owns to it
 * (app/run.h, flow affinity).
 *
 * struct app_worker is laid out by writer, one block of cache lines
 * each, so that no line is written by two threads but struct app_ctl's:
 * - what the worker's setup fills and the worker only reads;
 * - what the worker alone writes: its counters (app/counters.h), the
 *   state others read (clock, watermark, end-of-run flags, top_ack),
 *   its own working state;
 * - what the main lcore writes: top_cur, event_mbufs_freed;
 * - the control request (app/control.h), written by both sides.
 * Flags and times others read are written with release and read with
 * acquire (__atomic builtins).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "blocklist.h"
#include "cflow.h"
#include "cflow_topk.h"
#include "control.h"
#include "counters.h"
#include "run.h"

#define APP_MAX_QUEUES_PER_LCORE 32

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

/* Forward mode: a worker's packets for one egress port, waiting for a
 * tx burst (app_worker_tx_flush()). */
#define APP_TXBUF_PORTS 4       /* egress ports buffered a worker */
#define APP_TXBUF_SIZE 32       /* a full one is sent at once */
/* The drain timer: buffered packets wait at most this (l3fwd's
 * BURST_TX_DRAIN_US). */
#define APP_TX_DRAIN_US 100

struct app_txbuf {
	uint16_t port;
	uint16_t n;
	struct rte_mbuf *pkts[APP_TXBUF_SIZE];
};

struct app_worker {
	/* Set up before the worker starts; read only then. */
	const struct app_run *run;
	unsigned int lcore;
	unsigned int index;     /* 0..workers-1: RCU thread id, tx queue */
	struct cflow_tracker *tracker;  /* the flow table */
	struct app_rxq rxq[APP_MAX_QUEUES_PER_LCORE];
	unsigned int nb_rxq;
	/* handoff rings: to[j] carries packets to worker j, from[j] those
	 * of worker j (NULL for itself, or without handoff) */
	struct rte_ring *to[APP_MAX_WORKERS];
	struct rte_ring *from[APP_MAX_WORKERS];
	struct rte_ring *event_ring; /* to the main lcore, or NULL */
	/* Fragments (cflow_frag.h): the follower of this worker's queues,
	 * or NULL (--frag-datagrams off); fragments it gave back, waiting
	 * to follow their first one (room for its hold and a burst). */
	struct cflow_frag *frag;
	void **frag_ready;
	/* Top sources of new flows (app/top.c): the worker adds to
	 * top[top_idx]; the main lcore sets top_cur each period, and reads
	 * the other sketch once the worker has published top_ack. */
	struct cflow_topk *top[2];

	/* Written by the worker alone. Its counters: read by the main
	 * lcore and telemetry, 64-bit loads, each counter whole. */
	struct app_worker_counters ctr __rte_cache_aligned;
	/* Published to the other lcores. */
	uint64_t last_ns;       /* time of the last packet or sweep (atomic) */
	/* With app_run.lead_ns: the replay watermark this worker has caught
	 * up with: it has tracked every packet earlier than it that it
	 * will ever track (atomic, release). */
	uint64_t caught_ns;
	bool rx_done;           /* every queue at EOF, all handed off */
	bool done;              /* and every packet handed to it tracked */
	bool swept;             /* final sweep made at app_run.end_ns */
	uint32_t top_ack;       /* the sketch it switched to (release) */
	/* Its own. */
	unsigned int top_idx;   /* the sketch it adds to */
	/* Sweeps judge idleness at this time: last_ns, but when replaying
	 * several streams (app_run.watermark), a watermark no packet still
	 * to come to this worker is earlier than (see advance_as_of()). */
	uint64_t as_of_ns;
	/* mbufs (segments) of first packets passed by reference to the
	 * main lcore so far (see event_mbufs_freed) */
	uint64_t event_mbufs_taken;
	/* The burst being tracked, for the tracker's new-flow records
	 * (app_events_record()): a record's index is into these. */
	struct rte_mbuf **burst_pkts;
	const struct cflow_input *burst_in;
	unsigned int nb_frag_ready;
	/* Firewall mode: the held fragments being given back unfollowed
	 * (frag_expire()) are dropped once tracked, as nf_defrag drops a
	 * datagram it never completed. */
	bool frag_dropping;
	const struct cbl *bl_seen; /* bl_has_flows is of it */
	bool bl_has_flows;
	uint8_t scratch[CFLOW_PARSE_MAX_HDR]; /* headers across segments */
	struct app_pending pending;
	/* forward mode: the first nb_txbuf egress ports' packets, in order,
	 * sent when a buffer fills or the drain timer expires */
	struct app_txbuf txbuf[APP_TXBUF_PORTS];
	unsigned int nb_txbuf;
	uint64_t tx_flush_tsc;  /* TSC of the last flush */

	/* Written by the main lcore alone (release). */
	uint32_t top_cur __rte_cache_aligned; /* the sketch to add to */
	/* Of event_mbufs_taken, those the main lcore has freed. */
	uint64_t event_mbufs_freed;
	/* The worker has stopped: its tracker's records go straight to the
	 * outputs (app_events_workers_stopped()), from the main lcore. */
	bool records_direct;

	/* Written by a control thread and the worker (app/control.h). */
	struct app_ctl ctl __rte_cache_aligned;
} __rte_cache_aligned;

/* One single-producer, single-consumer ring of @p size packets from
 * each worker to each other one, on the consumer's socket. 0, or a
 * negative errno (errno set; none left behind). */
int app_handoff_rings_create(struct app_worker *workers, unsigned int n,
		unsigned int size);

void app_handoff_rings_free(struct app_worker *workers, unsigned int n);

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

/*
 * A turn without packets: move the clock on (the TSC's; with packet
 * times it stays) and sweep a paced share of the table. The loop calls
 * it after an empty turn, and, once a replay has ended, many times a
 * millisecond to keep the sweep's period.
 */
void app_worker_tick(struct app_worker *w);

/* Forward mode: send what the tx buffers hold (counted tx_packets, and
 * tx_dropped for what a port refuses, freed). The loop calls it when
 * the drain timer expires and before it stops. */
void app_worker_tx_flush(struct app_worker *w);

#endif /* _APP_WORKER_H_ */
