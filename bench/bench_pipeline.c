/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_pipeline: the application's worker loop (app_worker_burst) on a
 * synthetic in-memory source, in packets per second per core, for 1 K to
 * 100 M flows. In the same run, three variants share the source, the
 * receive path and the packet sequence:
 *
 *   ceiling   rx burst, then free: what the source and DPDK cost;
 *   cuckoo    the worker loop over lib/cflow's tracker, configured as
 *             the application's (app_tracker_params(): --table-layout
 *             auto, the seed, the timeouts);
 *   rte_hash  the same loop over an exact rte_hash flow table;
 *   cuckoo_il the cuckoo variant with lib/cuckoo's interleaved layout
 *             (CF_TABLE_INTERLEAVED: each flow's state in its bucket's
 *             cache line), when its sizes allow it;
 *   probe     the 2-line probe ceiling: rx burst, each packet's 5-tuple
 *             hashed (XXH3) to two random 64-byte lines of a buffer as
 *             large as the cuckoo table, all prefetched, then read, then
 *             free: what the memory system allows a table that reads two
 *             lines a packet, with no parse or tracking.
 *
 * Each lcore has a net_ring port over its own ring. Before every rx
 * burst it allocates 32 mbufs, as a driver refills its ring, writes the
 * next flow of its sequence into their pre-built 64-byte TCP or UDP
 * frames (source address and port, protocol, TCP flags) and enqueues
 * them. With two lcores the flows are split between them, as RSS would,
 * each with its own table of half the flows.
 *
 * All the variants' tables are built and filled first; then the variants
 * take turns (--rounds slices each, default 4), so that the drift of a shared machine
 * falls on all of them alike.
 *
 * The sequence draws flows uniformly or by a Zipf law. A share of TCP
 * packets (--churn) is a FIN; the next packet of a closed flow is a SYN
 * that opens it again. Tables are filled with every flow first, so the
 * measured part is the steady state.
 *
 * Forward mode (--variants forward,firewall,fw_mirror, or --firewall):
 * the application in forward mode over lib/cflow's tracker, a table
 * each. Each lane has two more ports, and its bursts alternate between
 * them: inside packets of the next flows of the sequence on port 0,
 * the outside replies (addresses and ports swapped) of the next ones on
 * port 1; the worker sends each to the other port, whose tx ring the
 * lane empties and frees, as a NIC's tx completion. forward: no roles;
 * firewall: port 0 inside, port 1 outside (no allow list: every
 * outside packet is CFLOW_IN_NO_CREATE); fw_mirror: the firewall with
 * --mirror-port (a shared port, a tx ring per lane) and --mirror-first.
 * The tables are filled from inside.
 *
 * Flow events and top sources (variants top, ev_json, ev_ipfix,
 * ev_pcapng, ev_all, ev_all_top; one lane, -l 0,1): the cuckoo variant's
 * loop and table, with the application's own app/events.c and app/top.c
 * set up for each turn as the app sets them up for --events FILE (in
 * --ev-dir), --ipfix 127.0.0.1:PORT (a UDP socket of this process bound
 * there, never read: the kernel drops what its buffer does not hold),
 * --new-flow-pcap FILE, all three, and --top-sources N (top: the sketch
 * alone; ev_all_top: everything). The lane then runs on lcore 1 for
 * every variant and the main lcore loops as the app's does: drain the
 * rings (app_events_drain), app_top_period, sleep 1 ms (10 ms with no
 * event output). The variants share one table, so that a flow closed in
 * one turn is opened again by its SYN in the next. --new-share S sets
 * the FIN share for S new flows a packet (see sequence_build()); the
 * new flows a packet reported are the tracker's counters over the
 * measured parts. Also: main_spin (no events, the main lcore spinning
 * instead of sleeping), ev_ring (events into a ring as the app's, which
 * the main lcore empties without writing them) and ev_mref (the same
 * with the first packets as --new-flow-pcap passes them). Each turn's
 * rate is also divided by cuckoo's turn of the same round: the median
 * and quartiles of these ratios, by wall time and by the lane's CPU
 * time.
 *
 * --handoff measures the application's software flow affinity instead:
 * two lanes, lib/cflow's tracker, app_worker_burst() then
 * app_worker_drain() each iteration, and each lane's flows drawn so that
 * a given share of them is owned by the other worker (see "handoff"
 * below and docs/bench_handoff.md).
 *
 * usage: bench_pipeline [EAL options] -- [options]; see usage().
 */

#include <sys/resource.h>
#include <unistd.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <xxhash.h>

#include "bench_util.h"
#include "cflow_frag.h"
#include "cflow_records.h"
#include "events.h"
#include "pipeline.h"
#include "top.h"

/* The variants take turns, opt.rounds times (--rounds), so that a slow
 * spell of this shared machine hits them all alike. */

struct lane lanes[MAX_LCORES];
/* The exact variant's tables, by lane (exact_worker_table.h). */
struct exact_table *exact_worker_tables[MAX_LCORES];
/* the lanes' workers, in one array as app_run.workers wants them */
struct app_worker workers[MAX_LCORES];
unsigned int nb_lanes;
enum variant current;
unsigned int slot;       /* where the lanes count: the variant, or
				 * the --handoff case */
bool filling;            /* the lanes fill their tables */
volatile unsigned int ready, go, quiet;
double slice_s;          /* measured time of one launch */
struct app_config app_cfg;
struct app_run bench_run;   /* the workers' shared settings */
/* fw_mirror's mirror port, shared: tx queue i (lane i) into ring i */
uint16_t mirror_port;
struct rte_ring *mirror_tx[MAX_LCORES];
/* Events mode: the lane runs on lcore 1, the main lcore drains; the
 * main lcore's CPU time and wall time per variant */
bool drain_mode;
unsigned int lanes_finished;
unsigned int turn;       /* the round being measured */
double main_cpu_s[SLOTS], main_wall_s[SLOTS];
uint16_t ipfix_port;     /* the bench's own receiver's */
struct rte_ring *bare_ring[2]; /* ev_ring's, rec_ring's */


/* ------------------------------------------------------------ lcores */

/* With handoff, a lane that waits still tracks what is handed to it:
 * the other lane may be waiting on a full ring to this one. */
static void
barrier(struct lane *l, unsigned int *count, unsigned int n)
{
	__atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < n)
		if (!bench_run.handoff || app_worker_drain(l->w) == 0)
			rte_pause();
}

/* End of a launch with handoff: once no lane hands off any more, track
 * what the rings still hold, so that the next launch (another case,
 * other tables) starts with them empty. */
static void
handoff_quiesce(struct lane *l)
{
	if (!bench_run.handoff)
		return;
	barrier(l, (unsigned int *)&quiet, nb_lanes);
	while (app_worker_drain(l->w) != 0)
		;
}

/* Free what the worker sent into @p ring, as a NIC's tx completion. */
static inline void
tx_drain(struct rte_ring *ring)
{
	void *m[2 * BURST];
	unsigned int n;

	while ((n = rte_ring_dequeue_burst(ring, m, 2 * BURST, NULL)) != 0)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)m, n);
}

/*
 * Forward mode (variants forward, firewall, fw_mirror): bursts
 * alternate between the lane's two ports, inside packets of the next
 * flows of the sequence on port 0 and the outside replies of the next
 * ones on port 1 (warming up: every flow once, from inside). The worker
 * forwards each to the other port (and copies the first packets of
 * each flow to the mirror port): what it sent is freed here.
 */
static inline void
fwd_step(struct lane *l, bool warm)
{
	struct rte_mbuf *pkts[BURST];
	unsigned int side = warm ? 0 : l->fwd_turn++ & 1;
	uint16_t n;

	source_fill(l, l->fwd_rx[side], warm, (int)side);
	n = rte_eth_rx_burst(l->fwd_port[side], 0, pkts, BURST);
	if (n != 0)
		app_worker_burst(l->w, &l->w->rxq[1 + side], NULL, pkts, n);
	/* the application loop's drain timer */
	if (rte_rdtsc() - l->w->tx_flush_tsc >= l->w->run->tx_drain_tsc)
		app_worker_tx_flush(l->w);
	tx_drain(l->fwd_tx[0]);
	tx_drain(l->fwd_tx[1]);
	if (current == FW_MIRROR)
		tx_drain(mirror_tx[l->lane]);
	l->packets[slot] += n;
}

/* PROBE: two random lines a packet, from its 5-tuple's hash (addresses,
 * ports and protocol at their offsets in these frames), all of the burst
 * prefetched before any is read, as a bulk lookup does. */
static inline void
probe_burst(struct lane *l, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t off[2 * BURST], sink = 0;

	for (uint16_t k = 0; k < n; k++) {
		const uint8_t *p = rte_pktmbuf_mtod(pkts[k], const uint8_t *);
		uint64_t key[2], h;

		memcpy(key, p + 26, 12);
		memcpy((uint8_t *)key + 12, p + 23, 1);
		memset((uint8_t *)key + 13, 0, 3);
		h = XXH3_64bits_withSeed(key, 13, 0x5eed);
		off[2 * k] = ((h & 0xffffffff) * l->probe_lines >> 32) * 64;
		off[2 * k + 1] = ((h >> 32) * l->probe_lines >> 32) * 64;
		rte_prefetch0(l->probe + off[2 * k]);
		rte_prefetch0(l->probe + off[2 * k + 1]);
	}
	for (uint16_t k = 0; k < 2 * n; k++)
		sink += l->probe[off[k]];
	l->probe_sink += sink;
}

static inline void
lane_step(struct lane *l, bool warm)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n;

	if (current >= FORWARD) {
		fwd_step(l, warm);
		return;
	}
	source_fill(l, l->ring, warm, -1);
	n = rte_eth_rx_burst(l->port, 0, pkts, BURST);
	if (current == PROBE)
		probe_burst(l, pkts, n);
	if (current == CEILING || current == PROBE)
		rte_pktmbuf_free_bulk(pkts, n);
	else if (current == RTE_HASH && n != 0)
		/* the same loop over the exact table (exact_table.h) */
		exact_worker_burst(l->w, &l->w->rxq[0], NULL, pkts, n);
	else if (n != 0)
		app_worker_burst(l->w, &l->w->rxq[0], NULL, pkts, n);
	/* the application's loop: then what other workers handed over */
	if (bench_run.handoff)
		app_worker_drain(l->w);
	l->packets[slot] += n;
}

/* This thread's CPU time and involuntary context switches so far. */
static void
thread_usage(double *cpu_s, uint64_t *nivcsw)
{
	struct timespec ts;
	struct rusage ru;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	*cpu_s = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	*nivcsw = getrusage(RUSAGE_THREAD, &ru) == 0 ?
		(uint64_t)ru.ru_nivcsw : 0;
}

/* Fill the current table with every flow once, or run one slice of
 * the measure: a tenth of it to warm up, then the counted part. */
int
lane_main(void *arg)
{
	/* events mode: lane 0 on lcore 1, the main lcore drains */
	unsigned int i = (unsigned int)rte_lcore_index(rte_lcore_id()) -
		(drain_mode ? 1 : 0);
	uint64_t hz = rte_get_tsc_hz(), t0, t1, end, start, csw0, csw1;
	uint64_t mirrored0, sent0, q0, d0;
	struct cflow_counters c0 = { 0 }, c1 = { 0 };
	bool tracked = current == CUCKOO || current == CUCKOO_IL ||
		IS_EVENTS(current);
	double cpu0, cpu1;
	double slice = slice_s;
	struct lane *l = &lanes[i];

	(void)arg;
	if (i >= nb_lanes)
		return 0;
	if (filling) {
		uint64_t pos = l->seq_pos;

		l->seq_pos = 0;
		while (l->seq_pos < l->flows)
			lane_step(l, true);
		l->seq_pos = pos;
		handoff_quiesce(l);
		return 0;
	}
	barrier(l, (unsigned int *)&ready, nb_lanes);
	start = l->packets[slot];
	end = rte_rdtsc() + (uint64_t)(slice * 0.1 * (double)hz);
	while (rte_rdtsc() < end)
		lane_step(l, false);
	barrier(l, (unsigned int *)&go, nb_lanes);
	l->packets[slot] = start; /* the warm-up does not count */
	mirrored0 = l->w->ctr.mirrored;
	sent0 = l->w->ctr.tx_packets;
	q0 = l->w->ctr.events_queued;
	d0 = l->w->ctr.events_dropped + l->w->ctr.records_dropped;
	if (tracked)
		cflow_counters_get(l->w->tracker, &c0);
	thread_usage(&cpu0, &csw0);
	t0 = rte_rdtsc();
	end = t0 + (uint64_t)(slice * (double)hz);
	do {
		for (int k = 0; k < 64; k++)
			lane_step(l, false);
	} while (rte_rdtsc() < end);
	t1 = rte_rdtsc();
	thread_usage(&cpu1, &csw1);
	l->cycles[slot] += t1 - t0;
	l->mirrored[slot] += l->w->ctr.mirrored - mirrored0;
	l->sent[slot] += l->w->ctr.tx_packets - sent0;
	l->cpu_s[slot] += cpu1 - cpu0;
	l->wall_s[slot] += (double)(t1 - t0) / (double)hz;
	l->preempted[slot] += csw1 - csw0;
	if (tracked) {
		cflow_counters_get(l->w->tracker, &c1);
		l->tpackets[slot] += c1.packets - c0.packets;
		l->tnew[slot] += c1.flows_new - c0.flows_new;
		l->tclosed[slot] += c1.flows_closed - c0.flows_closed;
	}
	if (turn < MAX_TURNS) {
		l->turn_wall[slot][turn] = (double)(l->packets[slot] - start) /
			((double)(t1 - t0) / (double)hz);
		l->turn_cpu[slot][turn] = cpu1 > cpu0 ?
			(double)(l->packets[slot] - start) / (cpu1 - cpu0) : 0;
	}
	l->ev_queued[slot] += l->w->ctr.events_queued - q0;
	l->ev_dropped[slot] += l->w->ctr.events_dropped +
		l->w->ctr.records_dropped - d0;
	l->last_packets = l->packets[slot] - start;
	l->last_cycles = t1 - t0;
	l->last_preempted = csw1 - csw0;
	l->last_cpu_share = (cpu1 - cpu0) / ((double)(t1 - t0) /
		(double)hz);
	handoff_quiesce(l);
	return 0;
}

static int
lane_entry(void *arg)
{
	lane_main(arg);
	__atomic_add_fetch(&lanes_finished, 1, __ATOMIC_RELEASE);
	return 0;
}

/* A started net_ring port that receives from @p rx and sends on tx queue
 * q into tx[q], MAX_LCORES queues. */
static uint16_t
ring_port(const char *name, struct rte_ring *rx,
		struct rte_ring *const tx[MAX_LCORES])
{
	int socket = (int)rte_socket_id();
	int ret = rte_eth_from_rings(name, &rx, 1, tx, MAX_LCORES,
			(unsigned int)socket);
	uint16_t port;

	if (ret < 0)
		rte_exit(EXIT_FAILURE, "net_ring %s: %s\n", name,
			rte_strerror(rte_errno));
	port = (uint16_t)ret;
	if (rte_eth_dev_configure(port, 1, MAX_LCORES,
			&(struct rte_eth_conf){ 0 }) != 0 ||
			rte_eth_rx_queue_setup(port, 0, 1024, socket, NULL,
				lanes[0].pool) != 0)
		rte_exit(EXIT_FAILURE, "net_ring port %u setup\n", port);
	for (uint16_t q = 0; q < MAX_LCORES; q++)
		if (rte_eth_tx_queue_setup(port, q, 1024, socket, NULL) != 0)
			rte_exit(EXIT_FAILURE, "net_ring port %u setup\n",
				port);
	if (rte_eth_dev_start(port) != 0)
		rte_exit(EXIT_FAILURE, "net_ring port %u start\n", port);
	return port;
}

static struct rte_ring *
ring_make(const char *fmt, unsigned int a, unsigned int b)
{
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;

	snprintf(name, sizeof(name), fmt, a, b);
	r = rte_ring_create(name, 1024, (int)rte_socket_id(),
			RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (r == NULL)
		rte_exit(EXIT_FAILURE, "ring %s: %s\n", name,
			rte_strerror(rte_errno));
	return r;
}

/* Forward mode's ports: the lane's inside and outside ports, and (lane
 * 0) the shared mirror port. Only lane i sends on tx queue i. */
static void
fwd_setup(struct lane *l)
{
	char name[32];

	for (unsigned int side = 0; side < 2; side++) {
		struct rte_ring *tx[MAX_LCORES];

		l->fwd_rx[side] = ring_make("bench_fwd_rx%u_%u", l->lane,
			side);
		l->fwd_tx[side] = ring_make("bench_fwd_tx%u_%u", l->lane,
			side);
		for (unsigned int q = 0; q < MAX_LCORES; q++)
			tx[q] = l->fwd_tx[side];
		snprintf(name, sizeof(name), "bench_fwd%u_%u", l->lane, side);
		l->fwd_port[side] = ring_port(name, l->fwd_rx[side], tx);
		l->w->rxq[1 + side] = (struct app_rxq){
			.port = l->fwd_port[side] };
	}
	if (l->lane == 0) {
		for (unsigned int q = 0; q < MAX_LCORES; q++)
			mirror_tx[q] = ring_make("bench_mirror_tx%u%.0u", q, 0);
		mirror_port = ring_port("bench_mirror",
			ring_make("bench_mirror_rx%u%.0u", 0, 0), mirror_tx);
	}
}

static void
lane_setup(unsigned int i)
{
	struct lane *l = &lanes[i];
	char name[32];
	int socket = (int)rte_socket_id(), ret;
	/* handoff passes the parse and hash in the mbuf's private area */
	uint16_t priv = opt.handoff ? RTE_ALIGN(sizeof(struct app_handoff_meta),
			RTE_MBUF_PRIV_ALIGN) : 0;

	l->w = &workers[i];
	snprintf(name, sizeof(name), "bench_pool%u", i);
	/* events mode: room for the first packets the event ring holds,
	 * as the application's pool has with --new-flow-pcap */
	l->pool = rte_pktmbuf_pool_create(name, POOL_MBUFS + (drain_mode ?
			(unsigned int)opt.event_ring : 0), 256, priv,
			RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	snprintf(name, sizeof(name), "bench_ring%u", i);
	l->ring = rte_ring_create(name, 1024, socket,
			RING_F_SP_ENQ | RING_F_SC_DEQ);
	/* --handoff: each case has its own sequences */
	l->seq = opt.handoff ? NULL : malloc(sizeof(uint32_t) << SEQ_BITS);
	if (l->pool == NULL || l->ring == NULL ||
			(l->seq == NULL && !opt.handoff))
		rte_exit(EXIT_FAILURE, "lane %u: %s\n", i,
			rte_strerror(rte_errno));
	rte_mempool_obj_iter(l->pool, frame_init, NULL);
	ret = rte_eth_from_ring(l->ring);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "net_ring: %s\n",
			rte_strerror(rte_errno));
	l->port = (uint16_t)ret;
	if (rte_eth_dev_configure(l->port, 1, 1,
			&(struct rte_eth_conf){ 0 }) != 0 ||
			rte_eth_rx_queue_setup(l->port, 0, 1024, socket, NULL,
				l->pool) != 0 ||
			rte_eth_tx_queue_setup(l->port, 0, 1024, socket,
				NULL) != 0 ||
			rte_eth_dev_start(l->port) != 0)
		rte_exit(EXIT_FAILURE, "net_ring port %u setup\n", l->port);
	l->lane = i;
	l->w->lcore = drain_mode ? i + 1 : i;
	l->w->nb_rxq = 1;
	l->w->rxq[0] = (struct app_rxq){ .port = l->port };
	l->w->index = i;
	l->w->run = &bench_run;
	/* the application's fragment follower, at its defaults (on
	 * unless --frag-datagrams 0) */
	l->w->frag = cflow_frag_create(&(struct cflow_frag_params){ 0 });
	l->w->frag_ready = calloc(CFLOW_FRAG_HOLD_DEFAULT + CF_BULK_MAX,
		sizeof(*l->w->frag_ready));
	if (l->w->frag == NULL || l->w->frag_ready == NULL)
		rte_exit(EXIT_FAILURE, "lane %u: fragment follower\n", i);
	l->mix_rng = UINT64_C(0x1c3f0000) + i;
	fwd_setup(l);
}

/* ------------------------------------------------------------- a run */


static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median and quartiles of @p n values (sorted in place). */
void
quartiles(double *v, unsigned int n, double q[3])
{
	qsort(v, n, sizeof(*v), cmp_double);
	for (int k = 0; k < 3; k++) {
		double at = (double)(n - 1) * (k + 1) / 4;
		unsigned int i = (unsigned int)at;
		double f = at - i;

		q[k] = i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
	}
}

/* Whether variant @p v runs on lanes[].tracker: cuckoo and the events
 * variants share it. */
static bool
uses_tracker(int v)
{
	return opt.variant[v] && (v == CUCKOO ||
		(IS_EVENTS(v) && !IS_RECORDS(v)));
}

/*
 * A lane's table of @p flows: the application's tracker parameters
 * (app_tracker_params(): its layout, seed, timeouts) from the bench's
 * config, then the bench's own extras, explicitly.
 */
void
tracker_params(struct cflow_tracker_params *p, uint64_t flows)
{
	app_cfg.flows = flows;
	app_tracker_params(&bench_run, (int)rte_socket_id(), p);
	p->sweep_max_buckets = opt.sweep_buckets;
}

/* The workers' shared settings, without handoff; every tracker's seed
 * (with --handoff the owner tracks with the hash the receiver
 * computed). */
void
run_init(struct app_run *run)
{
	*run = (struct app_run){
		.cfg = &app_cfg,
		.timestamp_offset = -1,
		.verdict_offset = rte_mbuf_dynfield_lookup(
			APP_VERDICT_DYNFIELD, NULL),
		.workers = workers,
		.nb_workers = nb_lanes,
		.hash_seed = HANDOFF_SEED,
	};
	app_run_clock_init(run, rte_get_tsc_hz());
	app_run_reta_init(run);
}

/* Forward mode's settings: each lane's ports forward to each other, as
 * inside and outside in firewall mode; fw_mirror mirrors. */
static void
fwd_run_init(struct app_run *run, enum variant v)
{
	app_cfg.mode = v >= FORWARD ? APP_MODE_FORWARD : APP_MODE_MONITOR;
	for (unsigned int i = 0; v >= FORWARD && i < nb_lanes; i++) {
		const struct lane *l = &lanes[i];

		run->tx_port[l->fwd_port[0]] = l->fwd_port[1];
		run->tx_port[l->fwd_port[1]] = l->fwd_port[0];
		if (v == FORWARD)
			continue;
		run->role[l->fwd_port[0]] = APP_ROLE_INSIDE;
		run->role[l->fwd_port[1]] = APP_ROLE_OUTSIDE;
	}
	if (v == FW_MIRROR) {
		run->mirror = true;
		run->mirror_port = mirror_port;
		run->mirror_first = (uint8_t)opt.mirror_first;
		run->role[mirror_port] = APP_ROLE_MIRROR;
	}
}

static void
launch(enum variant v, bool fill)
{
	current = v;
	slot = v;
	filling = fill;
	ready = go = quiet = 0;
	lanes_finished = 0;
	run_init(&bench_run);
	fwd_run_init(&bench_run, v);
	for (unsigned int i = 0; i < nb_lanes; i++) {
		exact_worker_tables[i] = lanes[i].exact;
		lanes[i].w->tracker = v == RTE_HASH ? NULL :
			v >= FORWARD ? lanes[i].fwd_tracker[v - FORWARD] :
			v == CUCKOO_IL ? lanes[i].tracker_il :
			IS_RECORDS(v) ? lanes[i].tracker_rec :
			lanes[i].tracker;
	}
	if (!drain_mode) {
		rte_eal_mp_remote_launch(lane_entry, NULL, CALL_MAIN);
		rte_eal_mp_wait_lcore();
		return;
	}
	events_setup(v, fill);
	for (unsigned int i = 0; i < nb_lanes && IS_RECORDS(v); i++) {
		uint64_t x = lanes[i].seq_pos;

		lanes[i].seq_pos = lanes[i].seq_pos_rec;
		lanes[i].seq_pos_rec = x;
	}
	rte_eal_mp_remote_launch(lane_entry, NULL, SKIP_MAIN);
	main_loop();
	rte_eal_mp_wait_lcore();
	for (unsigned int i = 0; i < nb_lanes && IS_RECORDS(v); i++) {
		uint64_t x = lanes[i].seq_pos;

		lanes[i].seq_pos = lanes[i].seq_pos_rec;
		lanes[i].seq_pos_rec = x;
	}
	if (workers[0].event_ring != NULL &&
			(workers[0].event_ring == bare_ring[0] ||
			 workers[0].event_ring == bare_ring[1])) {
		bare_drain();
		workers[0].event_ring = NULL;
		bench_run.records = false;
	}
	if (app_events_close() != 0)
		rte_exit(EXIT_FAILURE, "%s: an event output failed\n",
			variant_names[v]);
	app_top_fini();
}

/* One configuration: every enabled variant's tables built and filled,
 * then the variants measured in turns. */
void
run_config(struct result *res)
{
	uint64_t flows = 0, bytes[VARIANTS] = { 0 };

	bool tracker = false;

	for (int v = 0; v < VARIANTS; v++)
		tracker |= uses_tracker(v);
	slice_s = opt.seconds / opt.rounds;
	run_init(&bench_run);
	for (unsigned int i = 0; i < nb_lanes; i++) {
		struct lane *l = &lanes[i];
		struct cflow_tracker_params p;
		uint64_t heap0 = heap_bytes();

		tracker_params(&p, l->flows);
		l->tracker = tracker ? cflow_tracker_create(&p) : NULL;
		if (tracker && l->tracker == NULL)
			rte_exit(EXIT_FAILURE, "cuckoo table of %" PRIu64
				" flows: %s (reserve more hugepages)\n",
				l->flows, strerror(errno));
		for (int v = 0; v < VARIANTS; v++)
			if (uses_tracker(v))
				bytes[v] += heap_bytes() - heap0;
		heap0 = heap_bytes();
		l->exact = opt.variant[RTE_HASH] ?
			exact_table_create(&p, p.socket_id) : NULL;
		if (opt.variant[RTE_HASH] && l->exact == NULL)
			rte_exit(EXIT_FAILURE, "rte_hash table of %" PRIu64
				" flows: %s (reserve more hugepages)\n",
				l->flows, strerror(errno));
		bytes[RTE_HASH] += heap_bytes() - heap0;
		heap0 = heap_bytes();
		if (opt.variant[CUCKOO_IL]) {
			struct cflow_tracker_params q = p;

			q.table = CF_TABLE_INTERLEAVED;
			l->tracker_il = cflow_tracker_create(&q);
			if (l->tracker_il == NULL)
				rte_exit(EXIT_FAILURE, "cuckoo_il table of %"
					PRIu64 " flows: %s\n", l->flows,
					strerror(errno));
		}
		bytes[CUCKOO_IL] += heap_bytes() - heap0;
		heap0 = heap_bytes();
		l->tracker_rec = NULL;
		if (opt.variant[REC_RING] || opt.variant[REC_JSON] ||
				opt.variant[REC_IPFIX]) {
			struct cflow_tracker_params q = p;

			/* the application's: records on, into the worker's
			 * ring (app_events_record()) */
			q.records = true;
			q.record_fn = app_events_record;
			q.record_arg = l->w;
			if (q.active_timeout_ns == 0)
				q.active_timeout_ns = CFLOW_ACTIVE_TIMEOUT_S *
					UINT64_C(1000000000);
			l->tracker_rec = cflow_tracker_create(&q);
			if (l->tracker_rec == NULL)
				rte_exit(EXIT_FAILURE, "records table of %"
					PRIu64 " flows: %s\n", l->flows,
					strerror(errno));
		}
		for (int v = REC_RING; v <= REC_IPFIX; v++)
			if (opt.variant[v])
				bytes[v] += heap_bytes() - heap0;
		if (opt.variant[PROBE]) {
			/* the cuckoo table's size: interleaved if measured */
			uint64_t b = opt.variant[CUCKOO_IL] ? bytes[CUCKOO_IL] :
				bytes[CUCKOO];

			b = b / (i + 1);
			if (b < 64 * BURST)
				b = 64 * BURST;
			heap0 = heap_bytes();
			l->probe_lines = b / 64;
			l->probe = rte_malloc_socket("bench_probe", b, 64,
					p.socket_id);
			if (l->probe == NULL)
				rte_exit(EXIT_FAILURE, "probe buffer of %"
					PRIu64 " bytes: %s\n", b,
					rte_strerror(rte_errno));
			memset(l->probe, 1, b);
			bytes[PROBE] += heap_bytes() - heap0;
		}
		for (int v = FORWARD; v < VARIANTS; v++) {
			struct cflow_tracker_params q = p;

			l->fwd_tracker[v - FORWARD] = NULL;
			if (!opt.variant[v])
				continue;
			/* the application's: the fewest bits that hold
			 * mirror_first + 1 */
			if (v == FW_MIRROR)
				q.count_bits = 32 - (unsigned int)
					__builtin_clz(opt.mirror_first + 1);
			/* and, with roles, each flow's inside endpoint */
			q.sided = v != FORWARD;
			heap0 = heap_bytes();
			l->fwd_tracker[v - FORWARD] = cflow_tracker_create(&q);
			if (l->fwd_tracker[v - FORWARD] == NULL)
				rte_exit(EXIT_FAILURE, "%s table of %" PRIu64
					" flows: %s (reserve more hugepages)\n",
					variant_names[v], l->flows,
					strerror(errno));
			bytes[v] += heap_bytes() - heap0;
		}
		l->seq_pos = 0;
		l->seq_pos_rec = 0;
		l->fwd_turn = 0;
		l->w->last_ns = 0;
		memset(l->cycles, 0, sizeof(l->cycles));
		flows += l->flows;
	}
	/* cuckoo and the events variants share one table: filled once;
	 * the records variants theirs */
	if (tracker)
		launch(CUCKOO, true);
	for (int v = REC_RING; v <= REC_IPFIX; v++)
		if (opt.variant[v]) {
			launch((enum variant)v, true);
			break;
		}
	for (int v = CUCKOO; v < VARIANTS; v++)
		if (opt.variant[v] && v != PROBE && !uses_tracker(v) &&
				!IS_RECORDS(v))
			launch((enum variant)v, true);

	/* Only the measured slices count. */
	for (unsigned int i = 0; i < nb_lanes; i++) {
		struct lane *l = &lanes[i];

		memset(l->packets, 0, sizeof(l->packets));
		memset(l->mirrored, 0, sizeof(l->mirrored));
		memset(l->sent, 0, sizeof(l->sent));
		memset(l->tpackets, 0, sizeof(l->tpackets));
		memset(l->tnew, 0, sizeof(l->tnew));
		memset(l->tclosed, 0, sizeof(l->tclosed));
		memset(l->ev_queued, 0, sizeof(l->ev_queued));
		memset(l->ev_dropped, 0, sizeof(l->ev_dropped));
		memset(l->cpu_s, 0, sizeof(l->cpu_s));
		memset(l->wall_s, 0, sizeof(l->wall_s));
	}
	memset(main_cpu_s, 0, sizeof(main_cpu_s));
	memset(main_wall_s, 0, sizeof(main_wall_s));
	/* Events mode: each round starts one variant later, so that no
	 * variant always follows the same one. */
	for (unsigned int round = 0; round < opt.rounds; round++)
		for (int k = 0; k < VARIANTS; k++) {
			turn = round;
			int v = drain_mode ? (int)(k + round) % VARIANTS : k;

			if (opt.variant[v])
				launch((enum variant)v, false);
		}
	for (int v = 0; v < VARIANTS; v++) {
		struct result *r = &res[v];
		uint64_t packets = 0, cycles = 0, mirrored = 0, sent = 0;

		memset(r, 0, sizeof(*r));
		if (!opt.variant[v])
			continue;
		for (unsigned int i = 0; i < nb_lanes; i++) {
			struct lane *l = &lanes[i];
			struct cflow_counters c = { 0 };

			packets += l->packets[v];
			cycles += l->cycles[v];
			if (IS_RECORDS(v))
				cflow_counters_get(l->tracker_rec, &c);
			else if (v == CUCKOO || IS_EVENTS(v))
				cflow_counters_get(l->tracker, &c);
			else if (v == CUCKOO_IL)
				cflow_counters_get(l->tracker_il, &c);
			else if (v == RTE_HASH)
				exact_table_counters(l->exact, &c);
			else if (v >= FORWARD)
				cflow_counters_get(l->fwd_tracker[v - FORWARD],
					&c);
			r->tracked += c.active;
			r->ev_queued += l->ev_queued[v];
			r->ev_dropped += l->ev_dropped[v];
			r->new_per_pkt += l->tpackets[v] ? (double)l->tnew[v] /
				(double)l->tpackets[v] / nb_lanes : 0;
			r->close_per_pkt += l->tpackets[v] ?
				(double)l->tclosed[v] / (double)l->tpackets[v] /
				nb_lanes : 0;
			r->new_share += c.packets ? (double)c.flows_new /
				(double)c.packets / nb_lanes : 0;
			r->unsolicited_share += c.packets ?
				(double)c.unsolicited / (double)c.packets /
				nb_lanes : 0;
			mirrored += l->mirrored[v];
			sent += l->sent[v];
		}
		r->mirrored_share = (double)mirrored / (double)packets;
		r->sent_share = (double)sent / (double)packets;
		/* Per lcore: the lanes ran side by side for equal times. */
		r->mpps = (double)packets / ((double)cycles /
			(double)rte_get_tsc_hz()) / 1e6;
		r->cycles_per_pkt = (double)cycles / (double)packets;
		r->bytes_per_flow = (double)bytes[v] / (double)flows;
		r->main_cpu = main_wall_s[v] > 0 ? main_cpu_s[v] /
			main_wall_s[v] : 0;
		{
			double cpu = 0, wall = 0;

			for (unsigned int i = 0; i < nb_lanes; i++) {
				cpu += lanes[i].cpu_s[v];
				wall += lanes[i].wall_s[v];
			}
			r->lane_cpu = wall > 0 ? cpu / wall : 0;
			r->mpps_cpu = cpu > 0 ? (double)packets / cpu / 1e6 /
				nb_lanes : 0;
			r->cpu_cycles_per_pkt = cpu * (double)rte_get_tsc_hz() /
				(double)packets;
		}
		if (drain_mode && opt.variant[CUCKOO]) {
			double rw[MAX_TURNS], rc[MAX_TURNS];
			unsigned int nt = RTE_MIN(opt.rounds, MAX_TURNS);
			const struct lane *l = &lanes[0];

			for (unsigned int t = 0; t < nt; t++) {
				rw[t] = l->turn_wall[v][t] /
					l->turn_wall[CUCKOO][t];
				rc[t] = l->turn_cpu[CUCKOO][t] > 0 ?
					l->turn_cpu[v][t] /
					l->turn_cpu[CUCKOO][t] : 0;
			}
			quartiles(rw, nt, r->turn_ratio);
			quartiles(rc, nt, r->turn_ratio_cpu);
		}
	}
	for (unsigned int i = 0; i < nb_lanes; i++) {
		cflow_tracker_free(lanes[i].tracker);
		cflow_tracker_free(lanes[i].tracker_il);
		lanes[i].tracker_il = NULL;
		cflow_tracker_free(lanes[i].tracker_rec);
		lanes[i].tracker_rec = NULL;
		rte_free(lanes[i].probe);
		lanes[i].probe = NULL;
		exact_table_free(lanes[i].exact);
		for (int v = 0; v < FWD_VARIANTS; v++)
			cflow_tracker_free(lanes[i].fwd_tracker[v]);
	}
}

/*
 * --sizes: what a table of each --flows costs a flow, records off and
 * on, and the records' key store (its default: the table's slots and
 * stash), with the app's parameters (app_tracker_params()): the bytes
 * cf_params_bytes() gives, which are cf_stats()' of the table made
 * (tests/unit: test_aux_params, test_records_params).
 */
static void
sizes_main(void)
{
	nb_lanes = 1;
	run_init(&bench_run);
	printf("# bench_pipeline --sizes: %u-bit fingerprints, %u-bit state, "
		"table layout as the app's\n\n", opt.fp_bits, opt.age_bits);
	printf("| flows | sizing | slots | table, records off: B/flow | "
		"records on: B/flow | key store: B/flow (B/entry) |\n");
	printf("|---:|---|---:|---:|---:|---:|\n");
	for (unsigned int fi = 0; fi < opt.nb_flows; fi++)
		for (int exact = 0; exact < 2; exact++) {
			struct cflow_tracker_params p;
			struct cf_params fp, fr;
			uint64_t off, on, slots, store;
			double flows = (double)opt.flows[fi];

			app_cfg.exact_size = exact;
			tracker_params(&p, opt.flows[fi]);
			fp = (struct cf_params){ .capacity = p.capacity,
				.fp_bits = p.fp_bits, .value_bits = p.value_bits,
				.exact_size = p.exact_size, .table = p.table };
			fr = fp;
			fr.aux_bits = 64;
			off = cf_params_bytes(&fp);
			on = cf_params_bytes(&fr);
			/* slots: the aux words' 8 bytes each, less the path's */
			slots = (on - off) / 8 - CF_DEFAULT_MAX_KICKS;
			store = cflow_recstore_bytes(slots + CF_STASH_SIZE);
			printf("| %" PRIu64 " | %s | %" PRIu64 " | %.2f | %.2f | "
				"%.1f (%.1f) |\n", opt.flows[fi], exact ?
				"exact" : "power of two", slots,
				(double)off / flows, (double)on / flows,
				(double)store / flows, (double)store /
				(double)(slots + CF_STASH_SIZE));
		}
}

int
main(int argc, char **argv)
{
	int ret = rte_eal_init(argc, argv);
	FILE *csv = NULL;

	if (ret < 0)
		rte_exit(EXIT_FAILURE, "rte_eal_init: %s\n",
			rte_strerror(rte_errno));
	if (parse_options(argc - ret, argv + ret) != 0)
		return 2;
	if (app_verdict_dynfield_register() < 0)
		rte_exit(EXIT_FAILURE, "dynfield: %s\n",
			rte_strerror(rte_errno));
	/* the application's defaults (its tracker parameters, app/events.c
	 * and app/top.c), and the bench's table */
	app_config_defaults(&app_cfg);
	app_cfg.burst = BURST;
	app_cfg.event_ring = opt.event_ring;
	app_cfg.top_sources = 0;
	app_cfg.fp_bits = opt.fp_bits;
	app_cfg.age_bits = opt.age_bits;
	app_cfg.exact_size = opt.exact_size;
	app_cfg.table_layout = opt.table_layout;
	for (unsigned int i = 0; i < RTE_MIN(rte_lcore_count(),
			(unsigned int)MAX_LCORES); i++)
		lane_setup(i);
	if (opt.sizes) {
		sizes_main();
		goto out;
	}
	if (opt.csv != NULL && (csv = fopen(opt.csv, "w")) == NULL)
		rte_exit(EXIT_FAILURE, "--csv %s: cannot write\n", opt.csv);
	if (opt.handoff) {
		handoff_setup();
		handoff_main(csv);
		goto out;
	}
	if (drain_mode) {
		events_main(csv);
		goto out;
	}
	if (csv != NULL)
		fprintf(csv, "flows,dist,lcores,variant,mpps_per_lcore,"
			"cycles_per_pkt,bytes_per_flow,tracked,new_share,"
			"unsolicited_share,mirrored_per_pkt,"
			"cpu_cycles_per_pkt\n");
	printf("# bench_pipeline: 64-byte TCP/UDP frames, %.0f%% TCP churn, "
		"cuckoo with %u-bit fingerprints and %u-bit state%s, sweep "
		"<= %u buckets a burst, %.1f s a row; TSC %.2f GHz\n\n",
		opt.churn * 100, opt.fp_bits, opt.age_bits,
		opt.exact_size ? ", exact size" : "", opt.sweep_buckets,
		opt.seconds, rte_get_tsc_hz() / 1e9);
	if (opt.icmp_err_below != 0 || opt.frag_below != 0)
		printf("# forward mode: %.1f%% of the frames ICMP errors "
			"quoting random tuples, %.1f%% of the packets as two "
			"IPv4 fragments (rates count frames)\n\n",
			opt.icmp_errors * 100, opt.frags * 100);
	printf("| flows | dist | lcores | variant | Mpps/lcore | cycles/pkt "
		"| CPU cycles/pkt | bytes/flow | of ceiling | of probe | cuckoo/rte_hash | "
		"of forward | forwarded | unsolicited | mirrored/pkt |\n");
	printf("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---:|---:|---:|\n");
	for (unsigned int fi = 0; fi < opt.nb_flows; fi++)
		for (int d = 0; d < 2; d++) {
			if (!opt.zipf[d])
				continue;
			for (unsigned int li = 0; li < opt.nb_lcore_counts;
					li++) {
				struct result res[VARIANTS] = { { 0 } };

				nb_lanes = opt.lcores[li];
				for (unsigned int i = 0; i < nb_lanes; i++) {
					lanes[i].nb_lanes = nb_lanes;
					lanes[i].flows = (opt.flows[fi] + i) /
						nb_lanes;
					if (sequence_build(&lanes[i], d == 1,
							99 + i) != 0)
						rte_exit(EXIT_FAILURE,
							"out of memory\n");
				}
				run_config(res);
				for (int v = 0; v < VARIANTS; v++) {
					const struct result *r = &res[v];
					char of_ceiling[16] = "", ratio[16] = "";
					char of_probe[16] = "";
					char of_fwd[16] = "", unsol[16] = "";
					char mirr[16] = "", sent[16] = "";

					if (!opt.variant[v])
						continue;
					if (v != CEILING && res[CEILING].mpps > 0)
						snprintf(of_ceiling,
							sizeof(of_ceiling),
							"%.0f%%", 100 * r->mpps /
							res[CEILING].mpps);
					if ((v == CUCKOO || v == CUCKOO_IL ||
							v == RTE_HASH) &&
							res[PROBE].mpps > 0)
						snprintf(of_probe,
							sizeof(of_probe),
							"%.0f%%", 100 * r->mpps /
							res[PROBE].mpps);
					if (v == RTE_HASH && res[CUCKOO].mpps > 0)
						snprintf(ratio, sizeof(ratio),
							"%.2fx", res[CUCKOO].mpps /
							r->mpps);
					/* its own over rte_hash's */
					if (v == CUCKOO_IL &&
							res[RTE_HASH].mpps > 0)
						snprintf(ratio, sizeof(ratio),
							"%.2fx", r->mpps /
							res[RTE_HASH].mpps);
					if (v > FORWARD && res[FORWARD].mpps > 0)
						snprintf(of_fwd, sizeof(of_fwd),
							"%.1f%%", 100 * r->mpps /
							res[FORWARD].mpps);
					if (v >= FORWARD) {
						snprintf(unsol, sizeof(unsol),
							"%.2f%%", 100 *
							r->unsolicited_share);
						snprintf(mirr, sizeof(mirr),
							"%.3f",
							r->mirrored_share);
						snprintf(sent, sizeof(sent),
							"%.2f%%", 100 *
							r->sent_share);
					}
					printf("| %" PRIu64 " | %s | %u | %s | "
						"%.2f | %.0f | %.0f | %.2f | %s | %s | "
						"%s | %s | %s | %s | %s |\n",
						opt.flows[fi],
						d ? "zipf" : "uniform", nb_lanes,
						variant_names[v], r->mpps,
						r->cycles_per_pkt,
						r->cpu_cycles_per_pkt,
						r->bytes_per_flow, of_ceiling,
						of_probe, ratio, of_fwd, sent, unsol,
						mirr);
					fflush(stdout);
					if (csv != NULL)
						fprintf(csv, "%" PRIu64 ",%s,%u,"
							"%s,%.3f,%.1f,%.3f,%"
							PRIu64 ",%.4f,%.5f,"
							"%.4f,%.1f\n",
							opt.flows[fi], d ?
							"zipf" : "uniform",
							nb_lanes,
							variant_names[v],
							r->mpps,
							r->cycles_per_pkt,
							r->bytes_per_flow,
							r->tracked,
							r->new_share,
							r->unsolicited_share,
							r->mirrored_share,
							r->cpu_cycles_per_pkt);
				}
			}
		}
out:
	if (csv != NULL)
		fclose(csv);
	rte_eal_cleanup();
	return 0;
}

