/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_RUN_H_
#define _APP_RUN_H_

/*
 * The run: the settings every worker shares, read-only once they start
 * (but for the end-of-run handshake), what happens to a packet by its
 * port's role and its verdict (the action table), which worker owns a
 * flow, and each worker's flow tracker's parameters, from the config.
 *
 * Flow affinity: every packet of a flow, both directions, from any port
 * and queue, is tracked by one worker, the flow's owner. With hardware
 * affinity (symmetric RSS, queue q of every port on one worker) a packet
 * is tracked where it arrives. With software handoff, the worker that
 * receives a packet hashes its canonical key, looks the owner up in a
 * redirection table (app_run.reta) and, if it is another worker, passes
 * the mbuf to it through a single-producer, single-consumer ring: one
 * ring per (receiver, owner) pair keeps each flow's packets from one
 * queue in their order (app/worker.h).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_config.h>
#include <rte_cycles.h>

#include "blocklist.h"
#include "cflow.h"
#include "cfutil.h"
#include "config.h"

#define APP_MAX_WORKERS 64
#define APP_RETA_BITS 9
#define APP_RETA_SIZE (1u << APP_RETA_BITS)

/* lib/cuckoo's tables in the DPDK heap: hugepages, on a given socket. */
extern const struct cf_allocator app_dpdk_allocator;

/* A port's role in firewall mode (docs/firewall.md). */
enum app_role {
	APP_ROLE_NONE,    /* not firewall mode: every packet may open a flow */
	APP_ROLE_INSIDE,  /* its packets may open flows */
	APP_ROLE_OUTSIDE, /* its packets pass on tracked flows only */
	APP_ROLE_MIRROR,  /* --mirror-port: sends copies, drops what it gets */
	APP_ROLE_MAX,
};

/*
 * What happens to a packet the blocklist let through, by its port's role
 * and its verdict (app_actions[][]): forwarded, or dropped for a reason,
 * counted in dropped_<reason> (app/counters.h).
 */
enum app_drop {
	APP_FORWARD = 0,
	/* outside: no flow, and not allowed to open one. Two verdicts
	 * come to it: CFLOW_UNTRACKED_UNSOLICITED, and
	 * CFLOW_UNTRACKED_ORPHAN (a FIN or RST of no flow, which would not
	 * have opened one either): both are dropped_unsolicited. */
	APP_DROP_UNSOLICITED,
	APP_DROP_NOT_SYN,     /* --tcp-strict: a TCP flow not opened by SYN */
	APP_DROP_LIMITED,     /* firewall: a new flow past --new-flow-rate */
	APP_DROP_TABLE_FULL,  /* outside: its new flow found no room */
	APP_DROP_MALFORMED,   /* outside: not decidable */
	APP_DROP_FRAGMENT,    /* outside: a non-first fragment */
	APP_DROP_MIRROR_RX,   /* received on the mirror port */
	/* outside: travels away from its flow's inside endpoint */
	APP_DROP_WRONG_DIR,
	/* outside: an ICMP error about no flow opened from the inside */
	APP_DROP_UNRELATED,
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

/* The action table, one row a role: documented in docs/design.md. */
extern const uint8_t app_actions[APP_ROLE_MAX][CFLOW_VERDICT_MAX];

/* Each packet's enum cflow_verdict, one byte, for later stages of a
 * pipeline: rte_mbuf_dynfield_lookup(APP_VERDICT_DYNFIELD, NULL). */
#define APP_VERDICT_DYNFIELD "cuckooflow_dynfield_verdict"

/* Register it; its offset, or a negative errno (errno set). */
int app_verdict_dynfield_register(void);

struct app_worker;

/*
 * --new-flow-pcap: the first packets longer than APP_EVENT_PKT_INLINE
 * (shorter ones travel in the event) a worker passes by reference hold at
 * most this many mbufs, their segments counted, until the main lcore has
 * freed them (app_run.event_mbufs_max: fewer with a smaller
 * --event-ring); the events beyond go without theirs, counted
 * pcapng_skipped: a main lcore that falls behind (a slow disk) must not
 * take the rx pool's mbufs, which the pool is sized for
 * (app_events_mbufs()).
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
	/* app_tsc_ns(): ns = tsc * tsc_mult >> tsc_shift, no division
	 * (app_run_clock_init()) */
	uint64_t tsc_mult;
	unsigned int tsc_shift;
	uint64_t tx_drain_tsc;  /* APP_TX_DRAIN_US in TSC ticks */
	uint64_t clock_offset_ns; /* added to TSC time: a warm restart's
				   * clock goes on from the saved one */
	uint64_t epoch_offset_ns; /* run clock + this = ns since the epoch
				   * (0 with packet times) */
	bool first_packets;     /* --new-flow-pcap: events hold the mbuf */
	bool records;           /* flow records (--records): new flows'
				 * events come from the trackers */
	bool close_events;      /* with records: the FIN/RST events too
				 * (--events) */
	uint32_t event_size;    /* bytes of an event ring's elements:
				 * APP_EVENT_SHORT, or with first packets
				 * sizeof(struct app_event) */
	/* and the mbufs a worker holds so at once, at most
	 * (APP_EVENT_PACKETS_MAX) */
	uint32_t event_mbufs_max;
	struct cflow_parse_params parse;
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
	/* Ports polled and sent to only while their link is up
	 * (app_port.link_gated) */
	bool link_gated[RTE_MAX_ETHPORTS];
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

/* Set @p run's TSC frequency and app_tsc_ns()'s multiplier for it. */
void app_run_clock_init(struct app_run *run, uint64_t tsc_hz);

/* TSC ticks to ns: a 128-bit multiply and a shift (app_run_clock_init()),
 * not a division a burst. */
static inline uint64_t
app_tsc_to_ns(const struct app_run *run, uint64_t tsc)
{
	__extension__ typedef unsigned __int128 u128;

	return (uint64_t)(((u128)tsc * run->tsc_mult) >> run->tsc_shift);
}

/* The run's TSC clock, ns. */
static inline uint64_t
app_tsc_ns(const struct app_run *run)
{
	return app_tsc_to_ns(run, rte_rdtsc()) + run->clock_offset_ns;
}

/* The latest packet time (last_ns) of @p n workers: with --clock pkt, a
 * capture's time; the run's clock at its end. Any lcore. */
uint64_t app_run_latest_ns(const struct app_worker *workers, unsigned int n);

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

/*
 * The run's parse parameters, but the link type (each port's own): in
 * firewall mode, a decapsulated flow is bound to its tunnel's outer
 * endpoints by a digest keyed with a seed drawn from @p hash_seed.
 */
struct cflow_parse_params app_run_parse_params(const struct app_config *cfg,
		uint64_t hash_seed);

/*
 * A worker's tracker parameters from the run's config (table size and
 * layout, --table-layout auto resolved: lib/cuckoo's interleaved layout
 * where it takes no more memory), its seed (@p run->hash_seed), parse
 * parameters (@p run->parse), flow time (@p run->watermark), on socket
 * @p socket_id in the DPDK heap. What the application's workers run
 * with, and bench_pipeline's tables.
 */
void app_tracker_params(const struct app_run *run, int socket_id,
		struct cflow_tracker_params *p);

#endif /* _APP_RUN_H_ */
