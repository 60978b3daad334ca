/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_PORTS_H_
#define _APP_PORTS_H_

/*
 * The run's topology: the ports and their queues, which worker lcore
 * polls which rx queue, how each flow reaches its one worker (symmetric
 * RSS or software handoff), the mbuf pools, one per socket. Built once
 * at start, checked, printed, then read by the workers' setup.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "config.h"
#include "run.h"

struct app_worker;

struct app_port {
	uint16_t id;
	struct rte_eth_dev_info info;
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t nb_rxq, nb_txq;
	uint16_t rxd, txd;
	uint64_t rss_hf;        /* hash types configured; 0: no RSS */
	bool rss_capable;       /* IP, TCP and UDP hash types offered */
	bool pcap;              /* net_pcap */
	/* net_memif: polled and sent to only while its link is up
	 * (app_run.link_gated, worker.c link_usable()) */
	bool link_gated;
	bool replay;            /* net_pcap reading files, not an iface */
	enum cflow_link_type link_type; /* net_pcap: its captures'; else
					 * Ethernet */
	uint64_t records[64];   /* replay: packets in each rx_pcap */
	unsigned int nb_inputs;
	/* replay: the earliest and latest record times of its captures,
	 * ns since the epoch (0: none) */
	uint64_t first_ns, last_ns;
	int socket;
};

struct app_topology {
	struct app_port ports[RTE_MAX_ETHPORTS];
	unsigned int nb_ports;
	unsigned int lcores[APP_MAX_WORKERS]; /* worker index -> lcore */
	unsigned int nb_workers;
	/* rx queue -> worker index (the lcore field holds the index) */
	struct app_queue_map map[APP_MAX_QUEUE_MAP];
	unsigned int nb_map;
	bool handoff;           /* software affinity */
	char affinity_why[160]; /* how the affinity was chosen */
	bool handoff_wait;
	struct rte_mempool *pools[RTE_MAX_NUMA_NODES];
	uint16_t tx_port[RTE_MAX_ETHPORTS]; /* forward: port -> paired */
};

/*
 * Find the worker lcores and the ports, size and check the queues and
 * the map, choose the affinity, create the pools, then configure and
 * start every port. 0, or a negative errno with a message naming the
 * problem in @p err; warns once (stderr) of inputs that would be
 * ignored.
 */
int app_topology_setup(struct app_topology *t, const struct app_config *cfg,
		char *err, size_t err_len);

/**
 * Port @p id's counters (rte_eth_stats_get()), the kernel's drops at
 * its rings in imissed if it is a net_af_packet port (the driver does
 * not count them; app/afpacket.h): every reader of the ports' counters
 * goes through here, as the drops are read (and reset) in the kernel.
 *
 * @return
 *   0, or rte_eth_stats_get()'s negative errno.
 */
int app_port_stats_get(uint16_t id, struct rte_eth_stats *st);

/**
 * Once the workers have stopped: read the af_packet rings' drops one
 * last time and keep them, as the other counters are final then (and
 * the driver closes its sockets with the ports).
 */
void app_topology_rings_final(const struct app_topology *t);

/* The start banner: ports, queue map, affinity, mode, tables. */
void app_topology_print(const struct app_topology *t,
		const struct app_config *cfg, const struct app_worker *workers,
		FILE *out);

/* At the end of a replay: every record of every capture read was
 * received or counted lost. 0, or -EIO (errno set) with the ports that
 * are short in @p err. */
int app_topology_check_replay(const struct app_topology *t,
		const struct app_worker *workers, char *err, size_t err_len);

/*
 * Where a replay stands: of the records the replayed captures hold
 * (net_pcap rx_pcap, not infinite_rx), how many the ports delivered or
 * lost (@p done, @p total), and the captures' time span (@p first_ns,
 * @p last_ns, ns since the epoch). Returns false if no port replays.
 * Any lcore: the workers' queue counts read as they go.
 */
bool app_topology_replay_progress(const struct app_topology *t,
		const struct app_worker *workers, uint64_t *done,
		uint64_t *total, uint64_t *first_ns, uint64_t *last_ns);

/*
 * The main lcore, every loop: say each change of a port's link state
 * (app_log: "port 1 (net_memif1): link down"), seen by the driver's
 * link state interrupt where it has one (RTE_ETH_DEV_INTR_LSC: memif,
 * vhost-user, most NICs), else by a poll each second.
 */
void app_topology_links_watch(void);

/* Warn on stderr of every port whose link is down. */
void app_topology_check_links(const struct app_topology *t);

/* Stop and close the ports, free the pools. */
void app_topology_close(struct app_topology *t);

#endif /* _APP_PORTS_H_ */
