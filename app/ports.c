/* SPDX-License-Identifier: BSD-3-Clause */

/* Ports, queues, the rx queue -> lcore map, affinity and pools. */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include <pcap/pcap.h>

#include "afpacket.h"
#include "cfutil.h"
#include "eal_help.h"
#include "events.h"
#include "log.h"
#include "ports.h"
#include "worker.h"

#define MBUF_CACHE 256
/* Link states are polled this often where no interrupt says them. */
#define LINK_POLL_NS UINT64_C(1000000000)

/* The ports' link states, for app_topology_links_watch(): the last
 * said, and whether an interrupt said one changed. */
static struct {
	const struct app_topology *topo;
	uint8_t up[RTE_MAX_ETHPORTS];
	bool event;             /* set by the interrupt thread */
	uint64_t polled_ns;
} links;

/*
 * The kernel's drops at the net_af_packet ports' rings, which the
 * driver does not read into imissed (afpacket.h): each port's sockets,
 * found once when it starts, and their drops so far. Reading them
 * resets the kernel's counts, so one reader at a time (the main lcore,
 * the telemetry thread) takes the lock (all zero: unlocked) and adds
 * them up; frozen once the workers have stopped (the driver closes the
 * sockets with the port).
 */
#define RING_SOCKS_MAX 64
static struct ring_drops {
	rte_spinlock_t lock;
	int fds[RING_SOCKS_MAX];
	unsigned int nb_fds;    /* 0: none (not af_packet, or frozen) */
	uint64_t drops;
} rings[RTE_MAX_ETHPORTS];

#define RSS_TYPES (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP)

/*
 * A Toeplitz key of 0x6d5a repeated is symmetric: both directions of a
 * flow get one hash (Woo and Park, 2012), so on every port configured
 * with it, the same hash types and the same redirection table, they
 * reach the same queue index.
 */
static void
symmetric_key(uint8_t *key, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		key[i] = i % 2 ? 0x5a : 0x6d;
}

static const char *
driver_args(const struct app_port *p)
{
	const struct rte_devargs *da = rte_dev_devargs(p->info.device);

	return da != NULL && da->args != NULL ? da->args : "";
}

/*
 * Every rx_pcap is read to its end with libpcap before the run, or the
 * run is refused: net_pcap takes a read error for the end of the file
 * (an unreadable pcapng block, a record cut short or with a corrupt
 * length), which would make a partial replay look whole. The records
 * counted here are checked against what the port delivered at the end
 * (app_topology_check_replay()). net_pcap hands over a capture's bytes
 * whatever its link type: the port's parser takes it (lib/cflow reads
 * Ethernet, Linux cooked v1 and v2, raw IP, NULL and LOOP), and one port's
 * captures must share one.
 */
static int
check_pcap_inputs(struct app_port *p, char *err, size_t err_len)
{
	const char *args = driver_args(p);
	size_t len = strlen(args);
	char *copy, *save = NULL;
	int ret = 0;

	if (!p->pcap)
		return 0;
	copy = malloc(len + 1);
	if (copy == NULL)
		return cfu_fail(ENOMEM, err, err_len, "out of memory");
	memcpy(copy, args, len + 1);
	for (char *kv = strtok_r(copy, ",", &save); kv != NULL && ret == 0;
			kv = strtok_r(NULL, ",", &save)) {
		char why[PCAP_ERRBUF_SIZE];
		struct pcap_pkthdr *h;
		const u_char *data;
		uint64_t n = 0, big = 0, big_record = 0;
		uint32_t big_len = 0;
		pcap_t *pc;
		int link, got;

		if (strncmp(kv, "rx_pcap=", 8) != 0)
			continue;
		pc = pcap_open_offline(kv + 8, why);
		if (pc == NULL)
			continue; /* the driver has already reported it */
		link = cflow_link_type_from_dlt(pcap_datalink(pc));
		if (link < 0) {
			int dlt = pcap_datalink(pc);
			const char *name = pcap_datalink_val_to_name(dlt);

			/* libpcap has no name for many: the number always */
			ret = cfu_fail(ENOTSUP, err, err_len, "port %u: %s: link "
				"type %d%s%s%s; cuckooflow parses EN10MB, "
				"LINUX_SLL, LINUX_SLL2, RAW, IPV4, IPV6, NULL and "
				"LOOP", p->id, kv + 8, dlt, name != NULL ? " (" : "",
				name != NULL ? name : "",
				name != NULL ? ")" : "");
		} else if (p->nb_inputs != 0 && (enum cflow_link_type)link !=
				p->link_type) {
			ret = cfu_fail(EINVAL, err, err_len, "port %u: %s: link "
				"type %s, the port's first capture %s: one link "
				"type a port", p->id, kv + 8,
				cflow_link_type_name(link),
				cflow_link_type_name(p->link_type));
		}
		if (ret < 0) {
			pcap_close(pc);
			break;
		}
		p->link_type = (enum cflow_link_type)link;
		while ((got = pcap_next_ex(pc, &h, &data)) == 1) {
			uint64_t ns = (uint64_t)h->ts.tv_sec * 1000000000u +
				(uint64_t)h->ts.tv_usec * 1000u;

			if (p->first_ns == 0 || ns < p->first_ns)
				p->first_ns = ns;
			if (ns > p->last_ns)
				p->last_ns = ns;
			n++;
			if (h->caplen > UINT16_MAX && big++ == 0) {
				big_record = n;
				big_len = h->caplen;
			}
		}
		if (got != PCAP_ERROR_BREAK)
			ret = cfu_fail(EIO, err, err_len, "port %u: %s: cannot "
				"read record %" PRIu64 ": %s; refusing a partial "
				"replay", p->id, kv + 8, n + 1, pcap_geterr(pc));
		else if (big != 0)
			fprintf(stderr, "cuckooflow: warning: port %u: %s: "
				"record %" PRIu64 " is %u bytes (%" PRIu64
				" record%s over 65535): net_pcap may cut such "
				"a frame (it takes its length as 16-bit); a "
				"frame cut is dropped unread, counted in "
				"rx_len_mismatch\n", p->id, kv + 8, big_record,
				big_len, big, big == 1 ? "" : "s");
		pcap_close(pc);
		if (ret == 0 && p->nb_inputs < RTE_DIM(p->records))
			p->records[p->nb_inputs++] = n;
	}
	free(copy);
	return ret;
}

/* Every device named to the EAL (--vdev, -a) must have become a port:
 * one that failed to probe would leave its traffic unread. */
static int
check_probed(char *err, size_t err_len)
{
	struct rte_devargs *da;

	RTE_EAL_DEVARGS_FOREACH(NULL, da) {
		uint16_t id;
		bool found = false;

		if (da->policy == RTE_DEV_BLOCKED)
			continue;
		RTE_ETH_FOREACH_DEV(id) {
			struct rte_eth_dev_info info;

			if (rte_eth_dev_info_get(id, &info) == 0 &&
					info.device != NULL &&
					strcmp(rte_dev_name(info.device),
						da->name) == 0)
				found = true;
		}
		if (!found) {
			char why[1024];

			if (app_vdev_explain(da->name, da->args, why,
					sizeof(why)) == 0)
				return cfu_fail(ENODEV, err, err_len, "device %s "
					"did not start: %s", da->name, why);
			return cfu_fail(ENODEV, err, err_len, "device %s did "
				"not start (the driver's reason: its message "
				"above, or without --log-level); refusing to run "
				"without it", da->name);
		}
	}
	return 0;
}

static int
find_workers(struct app_topology *t, char *err, size_t err_len)
{
	unsigned int lcore;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (t->nb_workers == APP_MAX_WORKERS)
			return cfu_fail(EINVAL, err, err_len, "more than %d worker lcores",
				APP_MAX_WORKERS);
		t->lcores[t->nb_workers++] = lcore;
	}
	if (t->nb_workers == 0)
		return cfu_fail(EINVAL, err, err_len, "no worker lcore: give the EAL at least "
			"two (-l 0,1)");
	return 0;
}

/*
 * Two workers poll without a pause: on one CPU each gets a share of it,
 * and a replay runs at a fraction of its speed (--lcores 0@0,1@1,2@1
 * puts lcores 1 and 2 on CPU 1). Said once a pair, at start.
 */
static void
warn_shared_cpus(const struct app_topology *t)
{
	for (unsigned int i = 0; i < t->nb_workers; i++)
		for (unsigned int j = i + 1; j < t->nb_workers; j++) {
			rte_cpuset_t a = rte_lcore_cpuset(t->lcores[i]);
			rte_cpuset_t b = rte_lcore_cpuset(t->lcores[j]);
			rte_cpuset_t both;
			int cpu = 0;

			CPU_AND(&both, &a, &b);
			if (CPU_COUNT(&both) == 0)
				continue;
			while (!CPU_ISSET(cpu, &both))
				cpu++;
			app_log(APP_LOG_WARNING, "worker lcores %u and %u share "
				"CPU %d: two busy-polling threads on one CPU "
				"each get a share of it (a replay runs at a "
				"fraction of its speed); give each worker a CPU "
				"of its own (-l, or --lcores LCORE@CPU)",
				t->lcores[i], t->lcores[j], cpu);
		}
}

static int
worker_of_lcore(const struct app_topology *t, unsigned int lcore)
{
	for (unsigned int i = 0; i < t->nb_workers; i++)
		if (t->lcores[i] == lcore)
			return (int)i;
	return -1;
}

/* Firewall roles and the mirror port against the ports found: each
 * named port exists, and in firewall mode every forwarding port has a
 * role. */
static int
check_roles(const struct app_topology *t, const struct app_config *cfg,
		char *err, size_t err_len)
{
	uint64_t found = 0, roles = cfg->inside_mask | cfg->outside_mask;

	for (unsigned int i = 0; i < t->nb_ports; i++)
		if (t->ports[i].id < 64)
			found |= UINT64_C(1) << t->ports[i].id;
	if (roles & ~found)
		return cfu_fail(EINVAL, err, err_len, "--%s: port %d is not in use (ports: "
			"see --portmask and the devices given)",
			(cfg->inside_mask & ~found) ? "inside" : "outside",
			__builtin_ctzll(roles & ~found));
	if (cfg->mirror_port != APP_NO_PORT &&
			!((found >> cfg->mirror_port) & 1))
		return cfu_fail(EINVAL, err, err_len, "--mirror-port %" PRIu64 ": not a port "
			"in use", cfg->mirror_port);
	if (roles == 0)
		return 0;
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		uint16_t id = t->ports[i].id;

		if (id != cfg->mirror_port && !((roles >> id) & 1))
			return cfu_fail(EINVAL, err, err_len, "port %u (%s): no firewall role: "
				"name it in --inside or --outside (or leave it "
				"out of --portmask)", id, t->ports[i].name);
	}
	return 0;
}

static int
find_ports(struct app_topology *t, const struct app_config *cfg, char *err,
		size_t err_len)
{
	unsigned int fwd[RTE_MAX_ETHPORTS], nf = 0;
	uint16_t id;
	int ret;

	RTE_ETH_FOREACH_DEV(id) {
		struct app_port *p;

		if (cfg->portmask != 0 &&
				(id >= 64 || !((cfg->portmask >> id) & 1)))
			continue;
		p = &t->ports[t->nb_ports++];
		p->id = id;
		if (rte_eth_dev_info_get(id, &p->info) != 0)
			return cfu_fail(ENODEV, err, err_len, "port %u: no device info", id);
		rte_eth_dev_get_name_by_port(id, p->name);
		p->pcap = strcmp(p->info.driver_name, "net_pcap") == 0;
		p->link_gated = strcmp(p->info.driver_name, "net_memif") == 0;
		p->replay = p->pcap && strstr(driver_args(p), "rx_iface") ==
			NULL;
		p->rss_capable = (p->info.flow_type_rss_offloads &
			RTE_ETH_RSS_IP) != 0 &&
			(p->info.flow_type_rss_offloads & RTE_ETH_RSS_TCP) &&
			(p->info.flow_type_rss_offloads & RTE_ETH_RSS_UDP);
		p->socket = rte_eth_dev_socket_id(id);
		ret = check_pcap_inputs(p, err, err_len);
		if (ret < 0)
			return ret;
	}
	if (t->nb_ports == 0 || (cfg->portmask >> RTE_MIN(
			rte_eth_dev_count_avail(), 63u)) != 0)
		return cfu_fail(EINVAL, err, err_len, "--portmask %s%" PRIx64 ": %u ports "
			"are available (give a NIC with -a, or --vdev "
			"net_pcap0,rx_pcap=FILE)", cfg->portmask ? "0x" :
			"all, ", cfg->portmask, rte_eth_dev_count_avail());
	ret = check_roles(t, cfg, err, err_len);
	if (ret < 0)
		return ret;
	/* paired topology: 0<->1, 2<->3, the odd one out to itself, over
	 * the ports that forward (not the mirror port) */
	for (unsigned int i = 0; i < t->nb_ports; i++)
		if (t->ports[i].id != cfg->mirror_port)
			fwd[nf++] = i;
		else
			t->tx_port[t->ports[i].id] = t->ports[i].id;
	for (unsigned int j = 0; j < nf; j++)
		t->tx_port[t->ports[fwd[j]].id] =
			t->ports[fwd[(j ^ 1) < nf ? j ^ 1 : j]].id;
	return 0;
}

static struct app_port *
port_by_id(struct app_topology *t, uint16_t id)
{
	for (unsigned int i = 0; i < t->nb_ports; i++)
		if (t->ports[i].id == id)
			return &t->ports[i];
	return NULL;
}

/* Queues per port, and the map from rx queues to workers. */
static int
plan_queues(struct app_topology *t, const struct app_config *cfg, char *err,
		size_t err_len)
{
	bool fwd = cfg->mode == APP_MODE_FORWARD;

	/* --config: each port has the queues the map names. */
	for (unsigned int e = 0; e < cfg->nb_queue_map; e++) {
		const struct app_queue_map *m = &cfg->queue_map[e];
		struct app_port *p = port_by_id(t, m->port);
		int w = worker_of_lcore(t, m->lcore);

		if (p == NULL)
			return cfu_fail(EINVAL, err, err_len, "--config (%u,%u,%u): port %u "
				"is not in use (no such port, or not in "
				"--portmask)", m->port, m->queue, m->lcore,
				m->port);
		if (w < 0)
			return cfu_fail(EINVAL, err, err_len, "--config (%u,%u,%u): lcore %u "
				"is not a worker lcore (%s)", m->port,
				m->queue, m->lcore, m->lcore,
				m->lcore == rte_get_main_lcore() ?
				"it is the main lcore" :
				"not enabled in the EAL's -l/--lcores");
		for (unsigned int f = 0; f < e; f++)
			if (cfg->queue_map[f].port == m->port &&
					cfg->queue_map[f].queue == m->queue)
				return cfu_fail(EINVAL, err, err_len, "--config: port %u queue "
					"%u is mapped twice", m->port,
					m->queue);
		if (m->queue >= p->nb_rxq)
			p->nb_rxq = (uint16_t)(m->queue + 1);
		t->map[t->nb_map++] = (struct app_queue_map){ m->port,
			m->queue, (uint16_t)w };
	}
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		struct app_port *p = &t->ports[i];
		uint16_t inputs = p->info.max_rx_queues;

		if (cfg->nb_queue_map != 0) {
			if (p->nb_rxq == 0)
				return cfu_fail(EINVAL, err, err_len, "--config: port %u has "
					"no queue in the map", p->id);
			for (uint16_t q = 0; q < p->nb_rxq; q++) {
				bool mapped = false;

				for (unsigned int e = 0; e < t->nb_map; e++)
					mapped |= t->map[e].port == p->id &&
						t->map[e].queue == q;
				if (!mapped)
					return cfu_fail(EINVAL, err, err_len, "--config: port "
						"%u queue %u has no lcore",
						p->id, q);
			}
			if (cfg->rxq != 0 && cfg->rxq != p->nb_rxq)
				return cfu_fail(EINVAL, err, err_len, "--rxq %" PRIu64 ": "
					"--config gives port %u %u rx "
					"queues", cfg->rxq, p->id, p->nb_rxq);
		} else if (cfg->rxq != 0) {
			p->nb_rxq = (uint16_t)cfg->rxq;
		} else {
			/* net_pcap: a queue per input; others: a queue
			 * per worker */
			p->nb_rxq = p->pcap ? inputs : (uint16_t)RTE_MIN(
				t->nb_workers, inputs);
		}
		if (p->nb_rxq > inputs)
			return cfu_fail(EINVAL, err, err_len, "port %u (%s): %u rx queues "
				"asked, the device has %u%s", p->id,
				p->info.driver_name, p->nb_rxq, inputs,
				p->pcap ? " (one per rx_pcap or rx_iface)" :
				"");
		if (p->pcap && p->nb_rxq < inputs)
			fprintf(stderr, "cuckooflow: warning: port %u "
				"(net_pcap) has %u inputs; --rxq %u reads only "
				"the first %u\n", p->id, inputs, p->nb_rxq,
				p->nb_rxq);
		if (cfg->nb_queue_map == 0)
			for (uint16_t q = 0; q < p->nb_rxq; q++)
				t->map[t->nb_map++] = (struct app_queue_map){
					p->id, q,
					(uint16_t)(q % t->nb_workers) };
		/* tx: in forward mode one queue per worker, never shared */
		p->nb_txq = cfg->txq != 0 ? (uint16_t)cfg->txq :
			fwd ? (uint16_t)t->nb_workers : 1;
		if (fwd && p->nb_txq < t->nb_workers)
			return cfu_fail(EINVAL, err, err_len, "--txq %u: forward mode with %u "
				"workers needs %u tx queues per port, one per "
				"worker (a shared queue would be written by "
				"two lcores at once)", p->nb_txq,
				t->nb_workers, t->nb_workers);
		if (p->nb_txq > p->info.max_tx_queues)
			return cfu_fail(EINVAL, err, err_len, "port %u (%s): %u tx queues "
				"needed, the device has %u%s", p->id,
				p->info.driver_name, p->nb_txq,
				p->info.max_tx_queues, p->pcap ?
				" (give tx_pcap=FILE once per worker)" : "");
		if (cfg->max_pkt_len > p->info.max_rx_pktlen)
			return cfu_fail(EINVAL, err, err_len, "--max-pkt-len %" PRIu64 ": port "
				"%u (%s) receives frames of at most %u bytes",
				cfg->max_pkt_len, p->id, p->info.driver_name,
				p->info.max_rx_pktlen);
	}
	for (unsigned int e = 0; e < t->nb_map; e++) {
		const struct app_port *p = port_by_id(t, t->map[e].port);
		unsigned int lcore = t->lcores[t->map[e].lcore];
		int s = (int)rte_lcore_to_socket_id(lcore);

		if (p->socket >= 0 && p->socket != s)
			fprintf(stderr, "cuckooflow: warning: port %u queue %u "
				"is on socket %d, its lcore %u on socket %d: "
				"every packet crosses the interconnect\n",
				p->id, t->map[e].queue, p->socket, lcore, s);
	}
	return 0;
}

/*
 * RSS affinity holds when every port hashes with the same symmetric
 * key, hash types and redirection table over the same number of queues,
 * and queue q of every port is polled by one worker. Otherwise flows
 * are handed off in software. Returns NULL, or why RSS cannot hold.
 */
static const char *
rss_affinity_fails(const struct app_topology *t, char *why, size_t len)
{
	const struct app_port *p0 = &t->ports[0];

	for (unsigned int i = 0; i < t->nb_ports; i++) {
		const struct app_port *p = &t->ports[i];

		if (!p->rss_capable) {
			snprintf(why, len, "port %u (%s) has no RSS over IP, "
				"TCP and UDP", p->id, p->info.driver_name);
			return why;
		}
		if (p->nb_rxq != p0->nb_rxq) {
			snprintf(why, len, "ports %u and %u have %u and %u rx "
				"queues", p0->id, p->id, p0->nb_rxq, p->nb_rxq);
			return why;
		}
	}
	for (unsigned int e = 0; e < t->nb_map; e++)
		for (unsigned int f = 0; f < e; f++)
			if (t->map[e].queue == t->map[f].queue &&
					t->map[e].lcore != t->map[f].lcore) {
				snprintf(why, len, "queue %u of ports %u and %u "
					"is on two workers", t->map[e].queue,
					t->map[f].port, t->map[e].port);
				return why;
			}
	return NULL;
}

static int
choose_affinity(struct app_topology *t, const struct app_config *cfg,
		char *err, size_t err_len)
{
	char why[128];
	const char *fails = rss_affinity_fails(t, why, sizeof(why));
	bool replay = true;

	if (t->nb_workers == 1) {
		snprintf(t->affinity_why, sizeof(t->affinity_why),
			"none needed (one worker)");
	} else if (cfg->affinity == APP_AFFINITY_HANDOFF) {
		t->handoff = true;
		snprintf(t->affinity_why, sizeof(t->affinity_why),
			"handoff (--affinity handoff)");
	} else if (fails == NULL) {
		snprintf(t->affinity_why, sizeof(t->affinity_why),
			"rss (symmetric key on every port)");
		/* a NIC hashes an ICMP error by its own addresses and a
		 * fragment by its addresses alone: the worker it reaches may
		 * not be its flow's (docs/firewall.md, Workers) */
		if (app_config_firewall(cfg))
			fprintf(stderr, "cuckooflow: warning: --affinity rss in "
				"firewall mode: ICMP errors from routers and "
				"fragments may reach another worker than their "
				"flow's (dropped as unrelated, fragment); "
				"--affinity handoff relates them all\n");
	} else if (cfg->affinity == APP_AFFINITY_RSS) {
		return cfu_fail(EINVAL, err, err_len, "--affinity rss: %s; use --affinity "
			"handoff (or auto)", fails);
	} else {
		t->handoff = true;
		snprintf(t->affinity_why, sizeof(t->affinity_why),
			"handoff (auto: %s)", fails);
	}
	for (unsigned int i = 0; i < t->nb_ports; i++)
		replay &= t->ports[i].replay;
	t->handoff_wait = cfg->handoff_full == APP_HANDOFF_FULL_WAIT ||
		(cfg->handoff_full == APP_HANDOFF_FULL_AUTO && replay);
	if (cfg->hash == CFLOW_HASH_RSS)
		for (unsigned int i = 0; i < t->nb_ports; i++)
			if (!t->ports[i].rss_capable)
				fprintf(stderr, "cuckooflow: warning: --hash rss: "
					"port %u (%s) gives no RSS hash; its "
					"packets are hashed with XXH3 (counted "
					"hash_fallback)\n", t->ports[i].id,
					t->ports[i].info.driver_name);
	return 0;
}

static int
create_pools(struct app_topology *t, const struct app_config *cfg, char *err,
		size_t err_len)
{
	uint64_t nb = 0;
	unsigned int room = (unsigned int)RTE_MAX(
		(uint64_t)RTE_MBUF_DEFAULT_BUF_SIZE,
		cfg->max_pkt_len + RTE_PKTMBUF_HEADROOM);

	/* Rings of every port and queue, every lcore's burst and cache,
	 * the handoff rings. */
	for (unsigned int i = 0; i < t->nb_ports; i++)
		nb += (uint64_t)t->ports[i].nb_rxq * cfg->rxd +
			(uint64_t)t->ports[i].nb_txq * cfg->txd;
	nb += rte_lcore_count() * (MBUF_CACHE + cfg->burst) + 1024;
	if (t->handoff)
		nb += (uint64_t)t->nb_workers * (t->nb_workers - 1) *
			cfg->handoff_ring;
	/* --new-flow-pcap: long first packets wait in the event rings
	 * by their mbufs, a bounded number (app_events_mbufs()), so that a
	 * drain falling behind drops them rather than starve the rx rings */
	nb += app_events_mbufs(cfg, t->nb_workers);
	/* fragments each worker holds for their first one (firewall mode
	 * only: main.c's frag_create()) */
	if (cfg->frag_datagrams != 0 && app_config_firewall(cfg))
		nb += (uint64_t)t->nb_workers * cfg->frag_hold;
	if (cfg->mbufs != 0)
		nb = cfg->mbufs;
	for (unsigned int i = 0; i < t->nb_workers; i++) {
		unsigned int s = rte_lcore_to_socket_id(t->lcores[i]);
		char name[32];

		if (t->pools[s] != NULL)
			continue;
		snprintf(name, sizeof(name), "cuckooflow_mbufs_%u", s);
		/* A per-lcore cache needs a pool at least 1.5 times its
		 * size. */
		t->pools[s] = rte_pktmbuf_pool_create(name, (unsigned int)nb,
			nb >= MBUF_CACHE * 2 ? MBUF_CACHE : 0,
			RTE_ALIGN(sizeof(struct app_handoff_meta),
				RTE_MBUF_PRIV_ALIGN), (uint16_t)room, (int)s);
		if (t->pools[s] == NULL)
			return cfu_fail(rte_errno, err, err_len, "mbuf pool of %" PRIu64 " mbufs "
				"on socket %u: %s (with --no-huge, raise -m)",
				nb, s, rte_strerror(rte_errno));
	}
	return 0;
}

static unsigned int
queue_lcore(const struct app_topology *t, uint16_t port, uint16_t queue)
{
	for (unsigned int e = 0; e < t->nb_map; e++)
		if (t->map[e].port == port && t->map[e].queue == queue)
			return t->lcores[t->map[e].lcore];
	return rte_get_main_lcore();
}

/* The interrupt thread: a port's link changed; the main lcore says it. */
static int
link_event(uint16_t port, enum rte_eth_event_type type, void *arg,
		void *ret)
{
	(void)port;
	(void)type;
	(void)arg;
	(void)ret;
	__atomic_store_n(&links.event, true, __ATOMIC_RELEASE);
	return 0;
}

/* A net_af_packet port's sockets, for ring_drops: those of the process
 * bound to its interface in the driver's fanout group. A scan that
 * fails, or finds other than one socket per queue pair, is said: the
 * port's ring drops are then counted from what was found. */
static void
rings_find(const struct app_port *p)
{
	struct ring_drops *r = &rings[p->id];
	int n;

	if (strcmp(p->info.driver_name, "net_af_packet") != 0)
		return;
	n = app_afp_sockets("/proc/self/fd", (int)p->info.if_index,
		app_afp_fanout_id((int)p->info.if_index), r->fds,
		RTE_DIM(r->fds));
	if (n < 0) {
		app_log(APP_LOG_WARNING, "port %u (%s): its rings' drops will "
			"not be counted in rx_missed: /proc/self/fd: %s", p->id,
			p->name, strerror(-n));
		return;
	}
	r->nb_fds = RTE_MIN((unsigned int)n, RTE_DIM(r->fds));
	if ((unsigned int)n != p->info.max_rx_queues)
		app_log(APP_LOG_WARNING, "port %u (%s): %d AF_PACKET sockets "
			"on interface %u, not one per queue pair (%u): rx_missed "
			"counts the drops of %u", p->id, p->name, n,
			p->info.if_index, p->info.max_rx_queues, r->nb_fds);
}

/* Add what the kernel dropped at port @p id's rings since the last
 * read; the caller holds the lock. A socket that cannot be read (closed
 * under us) is said once, and the port's rings no longer read. */
static void
rings_read(uint16_t id)
{
	struct ring_drops *r = &rings[id];

	for (unsigned int i = 0; i < r->nb_fds; i++) {
		int ret = app_afp_drops_add(r->fds[i], &r->drops);

		if (ret < 0) {
			app_log(APP_LOG_WARNING, "port %u: its rings' drops no "
				"longer counted in rx_missed (%" PRIu64 " so "
				"far): socket %d: %s", id, r->drops, r->fds[i],
				strerror(-ret));
			r->nb_fds = 0;
		}
	}
}

int
app_port_stats_get(uint16_t id, struct rte_eth_stats *st)
{
	struct ring_drops *r = &rings[id];
	int ret = rte_eth_stats_get(id, st);

	if (ret != 0)
		return ret;
	rte_spinlock_lock(&r->lock);
	rings_read(id);
	st->imissed += r->drops;
	rte_spinlock_unlock(&r->lock);
	return 0;
}

void
app_topology_rings_final(const struct app_topology *t)
{
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		struct ring_drops *r = &rings[t->ports[i].id];

		rte_spinlock_lock(&r->lock);
		rings_read(t->ports[i].id);
		r->nb_fds = 0;
		rte_spinlock_unlock(&r->lock);
	}
}

static int
port_start(struct app_topology *t, struct app_port *p,
		const struct app_config *cfg, uint64_t rss_hf, char *err,
		size_t err_len)
{
	struct rte_eth_conf conf;
	uint8_t key[256];
	int ret;

	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = (uint32_t)(cfg->max_pkt_len - RTE_ETHER_HDR_LEN -
		RTE_ETHER_CRC_LEN);
	/* link changes by interrupt where the driver has one (memif,
	 * vhost-user, most NICs): app_topology_links_watch() */
	if (p->info.dev_flags != NULL &&
			(*p->info.dev_flags & RTE_ETH_DEV_INTR_LSC)) {
		conf.intr_conf.lsc = 1;
		rte_eth_dev_callback_register(p->id, RTE_ETH_EVENT_INTR_LSC,
			link_event, NULL);
	}
	/* RSS with several queues (or for its hash), only what every
	 * port can hash (vdevs refuse any) */
	if (p->rss_capable && rss_hf != 0 &&
			(p->nb_rxq > 1 || cfg->hash == CFLOW_HASH_RSS)) {
		unsigned int len = p->info.hash_key_size != 0 ?
			p->info.hash_key_size : 40;

		symmetric_key(key, RTE_MIN(len, sizeof(key)));
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = key;
		conf.rx_adv_conf.rss_conf.rss_key_len = (uint8_t)len;
		conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
		if (p->info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH)
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_RSS_HASH;
		p->rss_hf = rss_hf;
	}
	p->rxd = (uint16_t)cfg->rxd;
	p->txd = (uint16_t)cfg->txd;
	ret = rte_eth_dev_configure(p->id, p->nb_rxq, p->nb_txq, &conf);
	if (ret != 0)
		return cfu_fail(-ret, err, err_len, "port %u (%s): configure: %s", p->id,
			p->info.driver_name, rte_strerror(-ret));
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &p->rxd, &p->txd);
	if (ret != 0)
		return cfu_fail(-ret, err, err_len, "port %u: descriptors: %s", p->id,
			rte_strerror(-ret));
	for (uint16_t q = 0; q < p->nb_rxq; q++) {
		unsigned int s = rte_lcore_to_socket_id(
			queue_lcore(t, p->id, q));

		ret = rte_eth_rx_queue_setup(p->id, q, p->rxd, s, NULL,
			t->pools[s] != NULL ? t->pools[s] : t->pools[0]);
		if (ret != 0)
			return cfu_fail(-ret, err, err_len, "port %u rx queue %u: %s",
				p->id, q, rte_strerror(-ret));
	}
	for (uint16_t q = 0; q < p->nb_txq; q++) {
		int s = q < t->nb_workers ?
			(int)rte_lcore_to_socket_id(t->lcores[q]) : p->socket;

		ret = rte_eth_tx_queue_setup(p->id, q, p->txd,
			s < 0 ? SOCKET_ID_ANY : s, NULL);
		if (ret != 0)
			return cfu_fail(-ret, err, err_len, "port %u tx queue %u: %s",
				p->id, q, rte_strerror(-ret));
	}
	ret = rte_eth_dev_start(p->id);
	if (ret != 0)
		return cfu_fail(-ret, err, err_len, "port %u (%s): start: %s", p->id,
			p->info.driver_name, rte_strerror(-ret));
	rte_eth_promiscuous_enable(p->id);
	rings_find(p);
	/* The same redirection table everywhere: hash i -> queue i % n. */
	if (p->rss_hf != 0 && p->info.reta_size != 0) {
		struct rte_eth_rss_reta_entry64 reta[RTE_ETH_RSS_RETA_SIZE_512 /
			RTE_ETH_RETA_GROUP_SIZE];
		uint16_t size = RTE_MIN(p->info.reta_size,
			(uint16_t)RTE_ETH_RSS_RETA_SIZE_512);

		memset(reta, 0, sizeof(reta));
		for (uint16_t i = 0; i < size; i++) {
			reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= UINT64_C(1) <<
				(i % RTE_ETH_RETA_GROUP_SIZE);
			reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[
				i % RTE_ETH_RETA_GROUP_SIZE] =
				(uint16_t)(i % p->nb_rxq);
		}
		ret = rte_eth_dev_rss_reta_update(p->id, reta, size);
		if (ret != 0 && !t->handoff && t->nb_workers > 1)
			return cfu_fail(-ret, err, err_len, "port %u: RSS redirection "
				"table: %s; RSS affinity needs it (use "
				"--affinity handoff)", p->id,
				rte_strerror(-ret));
	}
	return 0;
}

int
app_topology_setup(struct app_topology *t, const struct app_config *cfg,
		char *err, size_t err_len)
{
	uint64_t rss_hf = RSS_TYPES;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = find_workers(t, err, err_len);
	if (ret == 0)
		warn_shared_cpus(t);
	if (ret == 0)
		ret = check_probed(err, err_len);
	if (ret == 0)
		ret = find_ports(t, cfg, err, err_len);
	if (ret == 0)
		ret = plan_queues(t, cfg, err, err_len);
	if (ret == 0)
		ret = choose_affinity(t, cfg, err, err_len);
	if (ret == 0)
		ret = create_pools(t, cfg, err, err_len);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < t->nb_ports; i++)
		if (t->ports[i].rss_capable)
			rss_hf &= t->ports[i].info.flow_type_rss_offloads;
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		ret = port_start(t, &t->ports[i], cfg, rss_hf, err, err_len);
		if (ret < 0)
			return ret;
	}
	/* the states at start, which the banner says */
	links.topo = t;
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		struct rte_eth_link link;

		if (rte_eth_link_get_nowait(t->ports[i].id, &link) == 0)
			links.up[t->ports[i].id] = link.link_status;
	}
	links.polled_ns = cfu_clock_ns(CLOCK_MONOTONIC);
	return 0;
}

void
app_topology_links_watch(void)
{
	const struct app_topology *t = links.topo;
	uint64_t now = cfu_clock_ns(CLOCK_MONOTONIC);

	if (t == NULL || (!__atomic_exchange_n(&links.event, false,
			__ATOMIC_ACQ_REL) && now - links.polled_ns <
			LINK_POLL_NS))
		return;
	links.polled_ns = now;
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		const struct app_port *p = &t->ports[i];
		struct rte_eth_link link;
		char text[RTE_ETH_LINK_MAX_STR_LEN];

		if (rte_eth_link_get_nowait(p->id, &link) != 0 ||
				link.link_status == links.up[p->id])
			continue;
		links.up[p->id] = link.link_status;
		rte_eth_link_to_str(text, sizeof(text), &link);
		app_log(link.link_status ? APP_LOG_NOTICE : APP_LOG_WARNING,
			"port %u (%s): %s", p->id, p->name, text);
	}
}

static const char *
link_text(uint16_t port, char *buf, size_t len)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(port, &link) != 0)
		return "unknown";
	rte_eth_link_to_str(buf, len, &link);
	return buf;
}

void
app_topology_print(const struct app_topology *t,
		const struct app_config *cfg, const struct app_worker *workers,
		FILE *out)
{
	fprintf(out, "cuckooflow: %u worker%s, mode %s, affinity %s%s\n",
		t->nb_workers, t->nb_workers == 1 ? "" : "s",
		cfg->mode == APP_MODE_FORWARD ? "forward" : "monitor",
		t->affinity_why, t->handoff ? (t->handoff_wait ?
		", a full ring waits" : ", a full ring drops") : "");
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		const struct app_port *p = &t->ports[i];
		struct rte_ether_addr mac;
		char macs[RTE_ETHER_ADDR_FMT_SIZE] = "?", link[128];

		if (rte_eth_macaddr_get(p->id, &mac) == 0)
			rte_ether_format_addr(macs, sizeof(macs), &mac);
		fprintf(out, "port %u: %s (%s), mac %s, socket %d, %s; rxq %u "
			"txq %u, rxd %u txd %u; rss %s", p->id, p->name,
			p->info.driver_name, macs, p->socket,
			link_text(p->id, link, sizeof(link)), p->nb_rxq,
			p->nb_txq, p->rxd, p->txd, p->rss_hf != 0 ?
			"ip tcp udp, symmetric key" : p->rss_capable ?
			"off (one queue)" : "none");
		if (cfg->mirror_port == p->id)
			fprintf(out, "; mirror port (its input dropped)");
		else if (cfg->mode == APP_MODE_FORWARD)
			fprintf(out, "; forwards to port %u",
				t->tx_port[p->id]);
		if (p->id < 64 && (cfg->inside_mask >> p->id & 1))
			fprintf(out, "; inside");
		else if (p->id < 64 && (cfg->outside_mask >> p->id & 1))
			fprintf(out, "; outside");
		fprintf(out, "\n");
	}
	for (unsigned int w = 0; w < t->nb_workers; w++) {
		struct cf_params fp;
		struct cf_stats st;

		fprintf(out, "lcore %u (worker %u, socket %u): rx", t->lcores[w],
			w, rte_lcore_to_socket_id(t->lcores[w]));
		for (unsigned int e = 0; e < t->nb_map; e++)
			if (t->map[e].lcore == w)
				fprintf(out, " %u.%u", t->map[e].port,
					t->map[e].queue);
		if (workers[w].nb_rxq == 0)
			fprintf(out, " none");
		cf_stats(cflow_tracker_filter(workers[w].tracker), &st);
		cf_get_params(cflow_tracker_filter(workers[w].tracker), &fp);
		fprintf(out, "; table %" PRIu64 " flows, %" PRIu64 " slots, "
			"%.1f MiB, %s\n", cfg->flows, st.slots,
			(double)st.bytes / (1 << 20),
			fp.table == CF_TABLE_INTERLEAVED ? "interleaved" :
			"plain");
	}
	fflush(out);
}

/* A replaying port's records (@p want) and those it delivered or lost
 * (@p got); false if the port does not replay to an end. */
static bool
port_replayed(const struct app_topology *t, const struct app_port *p,
		const struct app_worker *workers, uint64_t *want, uint64_t *got)
{
	struct rte_eth_stats st;

	*want = *got = 0;
	if (!p->replay || strstr(driver_args(p), "infinite_rx") != NULL)
		return false;
	for (uint16_t q = 0; q < p->nb_rxq && q < p->nb_inputs; q++)
		*want += p->records[q];
	for (unsigned int w = 0; w < t->nb_workers; w++)
		for (unsigned int k = 0; k < workers[w].nb_rxq; k++)
			if (workers[w].rxq[k].port == p->id)
				*got += __atomic_load_n(
					&workers[w].rxq[k].rx_packets,
					__ATOMIC_RELAXED);
	if (app_port_stats_get(p->id, &st) == 0)
		*got += st.rx_nombuf + st.ierrors;
	return true;
}

bool
app_topology_replay_progress(const struct app_topology *t,
		const struct app_worker *workers, uint64_t *done,
		uint64_t *total, uint64_t *first_ns, uint64_t *last_ns)
{
	bool any = false;

	*done = *total = *first_ns = *last_ns = 0;
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		const struct app_port *p = &t->ports[i];
		uint64_t want, got;

		if (!port_replayed(t, p, workers, &want, &got))
			continue;
		any = true;
		*done += got;
		*total += want;
		if (p->first_ns != 0 && (*first_ns == 0 ||
				p->first_ns < *first_ns))
			*first_ns = p->first_ns;
		if (p->last_ns > *last_ns)
			*last_ns = p->last_ns;
	}
	return any;
}

int
app_topology_check_replay(const struct app_topology *t,
		const struct app_worker *workers, char *err, size_t err_len)
{
	size_t used = 0;
	int ret = 0;

	if (err != NULL && err_len > 0)
		err[0] = '\0';
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		const struct app_port *p = &t->ports[i];
		uint64_t want, got;

		if (!port_replayed(t, p, workers, &want, &got))
			continue;
		if (got != want) {
			if (err != NULL && used < err_len)
				used += (size_t)snprintf(err + used,
					err_len - used, "%sport %u (%s): %"
					PRIu64 " packets received or lost of the "
					"%" PRIu64 " its captures hold",
					used ? "; " : "", p->id, p->name, got,
					want);
			ret = -EIO;
		}
	}
	if (ret < 0)
		errno = -ret;
	return ret;
}

void
app_topology_check_links(const struct app_topology *t)
{
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		struct rte_eth_link link;

		if (rte_eth_link_get_nowait(t->ports[i].id, &link) == 0 &&
				link.link_status == RTE_ETH_LINK_DOWN)
			fprintf(stderr, "cuckooflow: warning: port %u (%s): "
				"link still down\n", t->ports[i].id,
				t->ports[i].name);
	}
}

void
app_topology_close(struct app_topology *t)
{
	app_topology_rings_final(t);
	for (unsigned int i = 0; i < t->nb_ports; i++) {
		rte_eth_dev_stop(t->ports[i].id);
		rte_eth_dev_close(t->ports[i].id);
	}
	for (unsigned int s = 0; s < RTE_MAX_NUMA_NODES; s++)
		rte_mempool_free(t->pools[s]);
}
