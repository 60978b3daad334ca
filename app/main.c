/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * cuckooflow: tracks the flows of every packet received on the chosen
 * ports with a cuckoo filter per worker lcore, and counts them.
 *
 * main: EAL -> settings -> mempool and ports -> one flow tracker per
 * worker lcore -> run until a signal or the end of the captures ->
 * final sweep, counters, cleanup.
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <pcap/pcap.h>

#include "config.h"
#include "filter.h"
#include "stats.h"
#include "worker.h"

#define RX_RING_SIZE 1024
#define TX_RING_SIZE 1024
#define MBUF_CACHE 256

/* Each packet's enum cflow_verdict, for later stages of a pipeline. */
static const struct rte_mbuf_dynfield verdict_field = {
	.name = "cuckooflow_dynfield_verdict",
	.size = sizeof(uint8_t),
	.align = __alignof__(uint8_t),
};

static volatile bool force_quit;
static volatile uint64_t end_ns;
static volatile bool end_set;
static struct app_config cfg;
static struct app_worker workers[RTE_MAX_LCORE];
static unsigned int nb_workers;

static volatile bool reload_requested;

static void
signal_handler(int signum)
{
	if (signum == SIGHUP)
		reload_requested = true;
	else
		force_quit = true;
}

/* ------------------------------------------------------------- ports */

/*
 * Symmetric Toeplitz key (0x6d5a repeated): both directions of a flow
 * reach the same queue, hence the same lcore and flow table.
 */
static uint8_t rss_key[40] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

/*
 * net_pcap hands over a capture's bytes whatever its link type, and the
 * parser expects Ethernet: refuse other captures rather than misparse
 * them. The file names are in the device's arguments (rx_pcap=FILE).
 */
static void
check_pcap_link_types(uint16_t port, const struct rte_eth_dev_info *info)
{
	const struct rte_devargs *da;
	char args[1024], *save = NULL;

	if (strcmp(info->driver_name, "net_pcap") != 0 ||
			(da = rte_dev_devargs(info->device)) == NULL ||
			da->args == NULL)
		return;
	snprintf(args, sizeof(args), "%s", da->args);
	for (char *kv = strtok_r(args, ",", &save); kv != NULL;
			kv = strtok_r(NULL, ",", &save)) {
		char err[PCAP_ERRBUF_SIZE];
		pcap_t *pc;
		int link;

		if (strncmp(kv, "rx_pcap=", 8) != 0)
			continue;
		pc = pcap_open_offline(kv + 8, err);
		if (pc == NULL)
			continue; /* the driver has already reported it */
		link = pcap_datalink(pc);
		pcap_close(pc);
		if (link != DLT_EN10MB)
			rte_exit(EXIT_FAILURE, "port %u: %s: link type %s; "
				"cuckooflow parses Ethernet (EN10MB) only\n",
				port, kv + 8, pcap_datalink_val_to_name(link));
	}
}

static void
port_init(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t rxd = RX_RING_SIZE, txd = TX_RING_SIZE;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		rte_exit(EXIT_FAILURE, "rte_eth_dev_info_get: %s, port %u\n",
			rte_strerror(-ret), port);
	check_pcap_link_types(port, &info);
	if (cfg.rxq > info.max_rx_queues || cfg.txq > info.max_tx_queues)
		rte_exit(EXIT_FAILURE, "port %u (%s): --rxq %" PRIu64 " --txq %"
			PRIu64 ": the device has %u rx and %u tx queues\n",
			port, info.driver_name, cfg.rxq, cfg.txq,
			info.max_rx_queues, info.max_tx_queues);
	/* RSS only with several queues, and only what the device can hash
	 * (net_pcap and other vdevs refuse any). */
	if (cfg.rxq > 1 && info.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = rss_key;
		conf.rx_adv_conf.rss_conf.rss_key_len = sizeof(rss_key);
		conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP |
			RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
		if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH)
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_RSS_HASH;
	}
	ret = rte_eth_dev_configure(port, (uint16_t)cfg.rxq, (uint16_t)cfg.txq,
			&conf);
	if (ret != 0)
		rte_exit(EXIT_FAILURE, "rte_eth_dev_configure: %s, port %u\n",
			rte_strerror(-ret), port);
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
	if (ret != 0)
		rte_exit(EXIT_FAILURE, "rte_eth_dev_adjust_nb_rx_tx_desc: %s, "
			"port %u\n", rte_strerror(-ret), port);
	for (uint16_t q = 0; q < cfg.rxq; q++) {
		ret = rte_eth_rx_queue_setup(port, q, rxd,
				rte_eth_dev_socket_id(port), NULL, pool);
		if (ret != 0)
			rte_exit(EXIT_FAILURE, "rte_eth_rx_queue_setup: %s, "
				"port %u queue %u\n", rte_strerror(-ret), port,
				q);
	}
	for (uint16_t q = 0; q < cfg.txq; q++) {
		ret = rte_eth_tx_queue_setup(port, q, txd,
				rte_eth_dev_socket_id(port), NULL);
		if (ret != 0)
			rte_exit(EXIT_FAILURE, "rte_eth_tx_queue_setup: %s, "
				"port %u queue %u\n", rte_strerror(-ret), port,
				q);
	}
	ret = rte_eth_dev_start(port);
	if (ret != 0)
		rte_exit(EXIT_FAILURE, "rte_eth_dev_start: %s, port %u\n",
			rte_strerror(-ret), port);
	rte_eth_promiscuous_enable(port);
}

/* ----------------------------------------------------------- workers */

static struct cflow_tracker *
tracker_create(unsigned int lcore)
{
	struct cflow_tracker_params p;
	struct cflow_tracker *t;

	cflow_tracker_params_init(&p, cfg.flows);
	p.fp_bits = (unsigned int)cfg.fp_bits;
	p.value_bits = cfg.age_bits == 1 ? 16 : 32;
	p.exact_size = cfg.exact_size;
	if (cfg.hash_seed_set)
		p.seed = cfg.hash_seed;
	p.hash = (enum cflow_hash_mode)cfg.hash;
	for (int c = 0; c < CFLOW_CLASS_MAX; c++)
		p.timeout_ns[c] = cfg.timeout_s[c] * 1000000000ull;
	p.close_linger_ns = cfg.close_linger_s * 1000000000ull;
	p.full_policy = (enum cflow_full_policy)cfg.full_policy;
	p.parse.vlan_in_key = cfg.vlan_in_key;
	p.allocator = &app_dpdk_allocator;
	p.socket_id = (int)rte_lcore_to_socket_id(lcore);
	t = cflow_tracker_create(&p);
	if (t == NULL && errno == EINVAL && p.value_bits == 16)
		rte_exit(EXIT_FAILURE, "--age-bits 16: the longest timeout or "
			"linger must stay under about 13 days\n");
	if (t == NULL)
		rte_exit(EXIT_FAILURE, "flow table of %" PRIu64 " flows on lcore "
			"%u: %s (with --no-huge, give the EAL more memory: "
			"-m)\n", cfg.flows, lcore, strerror(errno));
	return t;
}

static uint64_t
last_packet_time(void)
{
	uint64_t t = 0;

	for (unsigned int i = 0; i < nb_workers; i++)
		t = RTE_MAX(t, workers[i].last_ns);
	return t;
}

/* Spread every (port, rx queue) over the worker lcores, round robin. */
static void
workers_setup(const uint16_t *ports, unsigned int nb_ports)
{
	unsigned int lcore, w = 0;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		workers[nb_workers].lcore = lcore;
		workers[nb_workers].index = nb_workers;
		workers[nb_workers].tracker = tracker_create(lcore);
		workers[nb_workers].table = workers[nb_workers].tracker;
		nb_workers++;
	}
	if (nb_workers == 0)
		rte_exit(EXIT_FAILURE, "no worker lcore: give the EAL at least "
			"two (-l 0,1)\n");
	for (unsigned int i = 0; i < nb_ports; i++)
		for (uint16_t q = 0; q < cfg.rxq; q++) {
			struct app_worker *wk = &workers[w];
			struct rte_eth_dev_info info;

			if (wk->nb_rxq == APP_MAX_QUEUES_PER_LCORE)
				rte_exit(EXIT_FAILURE, "more than %d queues on "
					"lcore %u\n", APP_MAX_QUEUES_PER_LCORE,
					wk->lcore);
			wk->rxq[wk->nb_rxq++] = (struct app_rxq){
				.port = ports[i], .queue = q,
				/* paired topology: 0<->1, 2<->3; odd one out
				 * to itself */
				.tx_port = ports[(i ^ 1) < nb_ports ? i ^ 1 : i],
				.tx_queue = (uint16_t)(w % cfg.txq),
				.pcap = rte_eth_dev_info_get(ports[i],
					&info) == 0 && strcmp(info.driver_name,
					"net_pcap") == 0,
			};
			w = (w + 1) % nb_workers;
		}
}

/*
 * Hugepage files outlive the process unless they are unlinked; this
 * application never has secondary processes, so it asks the EAL to
 * unlink them unless the user chose how memory is handled.
 */
static char **
eal_args(int argc, char **argv, int *eal_argc)
{
	static char unlink_opt[] = "--huge-unlink";
	char **out = calloc((size_t)argc + 2, sizeof(*out));
	bool chosen = false;
	int n = 0;

	if (out == NULL)
		rte_exit(EXIT_FAILURE, "out of memory\n");
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		chosen |= strcmp(argv[i], "--no-huge") == 0 ||
			strcmp(argv[i], "--in-memory") == 0 ||
			strcmp(argv[i], "--huge-unlink") == 0;
	out[n++] = argv[0];
	if (!chosen)
		out[n++] = unlink_opt;
	for (int i = 1; i < argc; i++)
		out[n++] = argv[i];
	*eal_argc = n;
	return out;
}

int
main(int argc, char **argv)
{
	uint16_t ports[RTE_MAX_ETHPORTS], port;
	unsigned int nb_ports = 0;
	struct rte_mempool *pool;
	struct app_run run;
	uint64_t nb_mbufs, last_print;
	char **eal_argv;
	int ret;

	eal_argv = eal_args(argc, argv, &argc);
	argv = eal_argv;
	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "rte_eal_init: %s\n",
			rte_strerror(rte_errno));
	argc -= ret;
	argv += ret;
	argv[0] = "cuckooflow";
	ret = app_config_parse(&cfg, argc, argv);
	if (ret != 0) {
		rte_eal_cleanup();
		free(eal_argv);
		return ret < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	signal(SIGINT, signal_handler);
	signal(SIGTERM, signal_handler);
	signal(SIGHUP, signal_handler);

	RTE_ETH_FOREACH_DEV(port)
		if (cfg.portmask == 0 ||
				(port < 64 && (cfg.portmask >> port) & 1))
			ports[nb_ports++] = port;
	if (nb_ports == 0 || (cfg.portmask >> RTE_MIN(
			rte_eth_dev_count_avail(), 63u)) != 0)
		rte_exit(EXIT_FAILURE, "--portmask 0x%" PRIx64 " (0: all): %u "
			"ports are available (give a NIC with -a, or --vdev "
			"net_pcap0,rx_pcap=FILE)\n", cfg.portmask,
			rte_eth_dev_count_avail());

	/* Rings of every port and queue, plus each lcore's burst and cache. */
	nb_mbufs = nb_ports * (cfg.rxq * RX_RING_SIZE + cfg.txq * TX_RING_SIZE) +
		rte_lcore_count() * (MBUF_CACHE + cfg.burst) + 1024;
	if (cfg.mbufs != 0)
		nb_mbufs = cfg.mbufs;
	/* A per-lcore cache needs a pool at least 1.5 times its size. */
	pool = rte_pktmbuf_pool_create("cuckooflow_mbufs", (unsigned int)nb_mbufs,
			nb_mbufs >= MBUF_CACHE * 2 ? MBUF_CACHE : 0, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (pool == NULL)
		rte_exit(EXIT_FAILURE, "mbuf pool of %" PRIu64 " mbufs: %s "
			"(with --no-huge, raise -m)\n", nb_mbufs,
			rte_strerror(rte_errno));
	for (unsigned int i = 0; i < nb_ports; i++)
		port_init(ports[i], pool);
	workers_setup(ports, nb_ports);

	memset(&run, 0, sizeof(run));
	run.cfg = &cfg;
	run.quit = &force_quit;
	run.end_ns = &end_ns;
	run.end_set = &end_set;
	run.tsc_hz = rte_get_tsc_hz();
	run.timestamp_offset = rte_mbuf_dynfield_lookup(
			RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	ret = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);
	run.timestamp_flag = ret >= 0 ? RTE_BIT64(ret) : 0;
	run.verdict_offset = rte_mbuf_dynfield_register(&verdict_field);
	if (run.verdict_offset < 0)
		rte_exit(EXIT_FAILURE, "mbuf dynfield %s: %s\n",
			verdict_field.name, rte_strerror(rte_errno));
	if (cfg.clock == APP_CLOCK_PKT && run.timestamp_offset < 0)
		rte_exit(EXIT_FAILURE, "--clock pkt: no port attaches capture "
			"timestamps (net_pcap does)\n");
	run.parse.vlan_in_key = cfg.vlan_in_key;
	app_filter_init(cfg.blocklist, nb_workers);
	app_filter_telemetry();
	app_worker_setup(&run);
	app_stats_setup(&cfg, workers, nb_workers, ports, nb_ports);

	for (unsigned int i = 0; i < nb_workers; i++)
		rte_eal_remote_launch(app_worker_main, &workers[i],
			workers[i].lcore);

	last_print = rte_get_timer_cycles();
	while (!force_quit) {
		unsigned int done = 0, swept = 0;

		for (unsigned int i = 0; i < nb_workers; i++) {
			done += workers[i].done;
			swept += workers[i].swept;
		}
		if (done == nb_workers && !end_set) {
			end_ns = last_packet_time();
			end_set = true;
		}
		if (swept == nb_workers && cfg.exit_on_eof)
			break;
		if (reload_requested) {
			char err[512];

			reload_requested = false;
			if (app_filter_reload(NULL, err, sizeof(err)) != 0)
				fprintf(stderr, "cuckooflow: SIGHUP reload: %s "
					"(previous list kept)\n", err);
		}
		if (cfg.stats_period_s != 0 && rte_get_timer_cycles() -
				last_print > cfg.stats_period_s *
				rte_get_timer_hz()) {
			app_stats_print(stdout);
			last_print = rte_get_timer_cycles();
		}
		rte_delay_ms(10);
	}
	force_quit = true;
	rte_eal_mp_wait_lcore();

	/* Exact end-of-run counters: a full pass at the last packet time of
	 * all lcores (already made if the captures ended). */
	for (unsigned int i = 0; i < nb_workers; i++)
		if (!workers[i].swept)
			cflow_sweep_all(workers[i].tracker,
				last_packet_time());
	app_stats_print(stdout);
	ret = EXIT_SUCCESS;
	if (cfg.stats_json[0] != '\0' && app_stats_write_json(cfg.stats_json)
			!= 0) {
		fprintf(stderr, "cuckooflow: --stats-json %s: %s\n",
			cfg.stats_json, strerror(errno));
		ret = EXIT_FAILURE;
	}
	for (unsigned int i = 0; i < nb_ports; i++) {
		rte_eth_dev_stop(ports[i]);
		rte_eth_dev_close(ports[i]);
	}
	for (unsigned int i = 0; i < nb_workers; i++)
		cflow_tracker_free(workers[i].tracker);
	app_filter_fini();
	rte_mempool_free(pool);
	rte_eal_cleanup();
	free(eal_argv);
	return ret;
}
