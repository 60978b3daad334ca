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
	bool replay;            /* net_pcap reading files, not an iface */
	enum cflow_link_type link_type; /* net_pcap: its captures'; else
					 * Ethernet */
	uint64_t records[64];   /* replay: packets in each rx_pcap */
	unsigned int nb_inputs;
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

/* The start banner: ports, queue map, affinity, mode, tables. */
void app_topology_print(const struct app_topology *t,
		const struct app_config *cfg, const struct app_worker *workers,
		FILE *out);

/* At the end of a replay: every record of every capture read was
 * received or counted lost. 0, or -EIO (errno set) with the ports that
 * are short in @p err. */
int app_topology_check_replay(const struct app_topology *t,
		const struct app_worker *workers, char *err, size_t err_len);

/* Warn on stderr of every port whose link is down. */
void app_topology_check_links(const struct app_topology *t);

/* Stop and close the ports, free the pools. */
void app_topology_close(struct app_topology *t);

#endif /* _APP_PORTS_H_ */
