/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_pipeline: the application's worker loop (app_worker_burst) on a
 * synthetic in-memory source, in packets per second per core, for 1 K to
 * 100 M flows. In the same run, three variants share the source, the
 * receive path and the packet sequence:
 *
 *   ceiling   rx burst, then free: what the source and DPDK cost;
 *   cuckoo    the worker loop over lib/cflow's tracker;
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
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <getopt.h>
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
#include "cflow.h"
#include "events.h"
#include "exact_table.h"
#include "top.h"
#include "worker.h"

#define BURST 32
#define MAX_LCORES 2
#define POOL_MBUFS 4096
#define FRAME_LEN 60            /* 64 bytes on the wire with the FCS */
#define SEQ_BITS 24             /* flows drawn per lcore, then cycled */
#define FLOW_SYN (UINT32_C(1) << 30)
#define FLOW_FIN (UINT32_C(1) << 31)
#define FLOW_MASK (FLOW_SYN - 1)
#define SLOTS 16                /* variants, or --handoff cases */
#define HANDOFF_RING 1024       /* the application's default */
#define MAX_TURNS 64u           /* --rounds, events mode */
#define HANDOFF_SEED UINT64_C(0x5eed) /* every tracker's, with --handoff */

/* FORWARD and later: the application in forward mode, lib/cflow's
 * tracker, each lane's packets alternately on its two ports (see "forward
 * mode" below). */
/* TOP to EV_ALL_TOP: the cuckoo variant's table and loop, with the
 * top-sources sketch and the event outputs of the application (the main
 * lcore drains: see "Flow events" above). */
enum variant { CEILING, CUCKOO, RTE_HASH, CUCKOO_IL, PROBE, MAIN_SPIN, TOP,
	EV_RING, EV_MREF, EV_JSON, EV_IPFIX, EV_PCAPNG, EV_ALL, EV_ALL_TOP, FORWARD,
	FIREWALL, FW_MIRROR, VARIANTS };
static const char *const variant_names[] = { "ceiling", "cuckoo",
	"rte_hash", "cuckoo_il", "probe", "main_spin", "top", "ev_ring",
	"ev_mref", "ev_json", "ev_ipfix", "ev_pcapng", "ev_all", "ev_all_top", "forward",
	"firewall", "fw_mirror" };
#define IS_EVENTS(v) ((v) >= MAIN_SPIN && (v) <= EV_ALL_TOP)
#define FWD_VARIANTS (VARIANTS - FORWARD)

static struct {
	uint64_t flows[8];
	unsigned int nb_flows;
	bool zipf[2];           /* uniform, zipf */
	double zipf_s;
	double churn;
	double seconds;
	unsigned int fp_bits;
	unsigned int age_bits;
	bool exact_size;
	unsigned int sweep_buckets;
	unsigned int lcores[2]; /* 1 and/or 2 */
	unsigned int nb_lcore_counts;
	bool variant[VARIANTS];
	const char *csv;
	bool handoff;
	double shares[SLOTS - 1];
	unsigned int nb_shares;
	double slice_ms;
	unsigned int mirror_first;
	unsigned int rounds;
	double new_share[4];    /* --new-share: a configuration each */
	unsigned int nb_new_shares;
	uint64_t event_ring;
	uint64_t top_sources;
	const char *ev_dir;
} opt = {
	.flows = { 1000, 100000, 1000000, 10000000, 100000000 },
	.nb_flows = 5,
	.zipf = { true, false },
	.zipf_s = 0.99,
	.churn = 0.01,
	.seconds = 2,
	.fp_bits = 16,
	.age_bits = 16,
	.sweep_buckets = CFLOW_SWEEP_MAX_BUCKETS,
	.variant = { true, true, true, true, true, false, false, false },
	.shares = { 0, 0.5, 1 },
	.nb_shares = 3,
	.slice_ms = 10,
	.mirror_first = 4,
	.rounds = 4,
	.event_ring = 16384,    /* the application's defaults */
	.top_sources = 1024,
	.ev_dir = "/dev/shm",
};

/* One lcore's source, port and table. */
struct lane {
	struct rte_mempool *pool;
	struct rte_ring *ring;
	uint16_t port;
	uint32_t *seq;          /* flow ids with FLOW_SYN/FLOW_FIN */
	uint32_t *ids;          /* --handoff: flow index -> global flow id;
				 * the sequence then holds global ids */
	uint64_t seq_pos;
	uint64_t flows;         /* this lane's share */
	unsigned int lane, nb_lanes;
	struct app_worker *w;   /* workers[lane] */
	struct cflow_tracker *tracker;
	struct cflow_tracker *tracker_il;   /* CUCKOO_IL */
	struct exact_table *exact;
	/* PROBE: a buffer of the cuckoo table's size, its 64-byte lines */
	uint8_t *probe;
	uint64_t probe_lines;
	uint64_t probe_sink;
	/* forward mode: ports 0 inside, 1 outside (their rx rings, and
	 * the tx ring the worker's tx queue sends into), a table per
	 * variant, the burst's side */
	uint16_t fwd_port[2];
	struct rte_ring *fwd_rx[2], *fwd_tx[2];
	struct cflow_tracker *fwd_tracker[FWD_VARIANTS];
	unsigned int fwd_turn;
	/* per slot (variant, or --handoff case), summed over the rounds */
	uint64_t packets[SLOTS], cycles[SLOTS];
	uint64_t mirrored[SLOTS]; /* mirror copies sent, measured part */
	uint64_t sent[SLOTS];   /* forwarded (forward mode), measured part */
	/* the lcore's thread: CPU time and involuntary context switches
	 * in the measured parts (a shared machine: was it all ours?) */
	double cpu_s[SLOTS], wall_s[SLOTS];
	uint64_t preempted[SLOTS];
	/* measured parts, lib/cflow's tracker: its packets, new flows and
	 * closes; the worker's events queued and dropped */
	uint64_t tpackets[SLOTS], tnew[SLOTS], tclosed[SLOTS];
	uint64_t ev_queued[SLOTS], ev_dropped[SLOTS];
	/* events mode: each turn's rate, packets a wall second and a CPU
	 * second of the lane's thread */
	double turn_wall[SLOTS][MAX_TURNS], turn_cpu[SLOTS][MAX_TURNS];
	/* the last slice alone, for --handoff's clean slices */
	uint64_t last_packets, last_cycles, last_preempted;
	double last_cpu_share;
} __rte_cache_aligned;

/* The variants take turns, opt.rounds times (--rounds), so that a slow
 * spell of this shared machine hits them all alike. */

static struct lane lanes[MAX_LCORES];
/* The exact variant's tables, by lane (exact_worker_table.h). */
struct exact_table *exact_worker_tables[MAX_LCORES];
/* the lanes' workers, in one array as app_run.workers wants them */
static struct app_worker workers[MAX_LCORES];
static unsigned int nb_lanes;
static enum variant current;
static unsigned int slot;       /* where the lanes count: the variant, or
				 * the --handoff case */
static bool filling;            /* the lanes fill their tables */
static volatile unsigned int ready, go, quiet;
static double slice_s;          /* measured time of one launch */
static struct app_config app_cfg;
static struct app_run bench_run;   /* the workers' shared settings */
/* fw_mirror's mirror port, shared: tx queue i (lane i) into ring i */
static uint16_t mirror_port;
static struct rte_ring *mirror_tx[MAX_LCORES];
/* Events mode: the lane runs on lcore 1, the main lcore drains; the
 * main lcore's CPU time and wall time per variant */
static bool drain_mode;
static unsigned int lanes_finished;
static unsigned int turn;       /* the round being measured */
static double main_cpu_s[SLOTS], main_wall_s[SLOTS];
static uint16_t ipfix_port;     /* the bench's own receiver's */
static struct rte_ring *bare_ring; /* ev_ring's */

/* ------------------------------------------------------------ source */

/* Ethernet, IPv4 (46 bytes), then TCP (ACK) or UDP: the bytes that do
 * not change from packet to packet. */
static const uint8_t frame_head[] = {
	0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,
	0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 6, 0, 0,
	10, 0, 0, 0, 192, 168, 1, 1,
	0x04, 0x00, 0x00, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10,
	0xff, 0xff, 0, 0, 0, 0,
};

static void
frame_init(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct rte_mbuf *m = obj;
	uint8_t *p = (uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM;

	(void)mp;
	(void)arg;
	(void)idx;
	memset(p, 0, FRAME_LEN);
	memcpy(p, frame_head, sizeof(frame_head));
}

/* Global flow f (e's low bits): 10.a.b.c from its low 24 bits, source
 * port 1024 + the rest; even flows TCP, odd flows UDP. */
static inline void
frame_bytes(uint8_t *p, uint32_t e)
{
	uint32_t f = e & FLOW_MASK;
	bool udp = f & 1;

	p[23] = udp ? 17 : 6;
	p[27] = (uint8_t)(f >> 16);
	p[28] = (uint8_t)(f >> 8);
	p[29] = (uint8_t)f;
	p[34] = (uint8_t)((1024 + (f >> 24)) >> 8);
	p[35] = (uint8_t)(1024 + (f >> 24));
	p[47] = e & FLOW_SYN ? 0x02 : e & FLOW_FIN ? 0x11 : 0x10;
}

/* Entry e of lane's sequence (a flow index and flags) as the global
 * flow: the lanes' flows interleave, as RSS would split them, unless
 * the lane draws its own flow ids (--handoff: the sequence holds them). */
static inline uint32_t
flow_global(const struct lane *l, uint32_t e)
{
	if (l->ids != NULL)
		return e;
	return (e & ~FLOW_MASK) | ((e & FLOW_MASK) * l->nb_lanes + l->lane);
}

/* Forward mode: flow e's packet from the inside host (@p reply false)
 * or the server's reply to it, from the outside. Every field that
 * differs between the two is written: an mbuf carries either. */
static inline void
frame_bytes_side(uint8_t *p, uint32_t e, bool reply)
{
	uint32_t f = e & FLOW_MASK;
	const uint8_t host[4] = { 10, (uint8_t)(f >> 16), (uint8_t)(f >> 8),
		(uint8_t)f };
	const uint8_t server[4] = { 192, 168, 1, 1 };
	uint16_t port = (uint16_t)(1024 + (f >> 24));
	uint8_t *h = p + (reply ? 30 : 26), *s = p + (reply ? 26 : 30);
	uint8_t *hp = p + (reply ? 36 : 34), *sp = p + (reply ? 34 : 36);

	p[23] = f & 1 ? 17 : 6;
	memcpy(h, host, 4);
	memcpy(s, server, 4);
	hp[0] = (uint8_t)(port >> 8);
	hp[1] = (uint8_t)port;
	sp[0] = 0;
	sp[1] = 80;
	p[47] = e & FLOW_SYN ? 0x02 : e & FLOW_FIN ? 0x11 : 0x10;
}

/* Flow e's frame into @p m: as frame_bytes(), or with @p side 0 or 1
 * frame_bytes_side()'s inside packet or outside reply. */
static inline void
frame_write(struct rte_mbuf *m, uint32_t e, int side)
{
	if (side < 0)
		frame_bytes(rte_pktmbuf_mtod(m, uint8_t *), e);
	else
		frame_bytes_side(rte_pktmbuf_mtod(m, uint8_t *), e, side == 1);
	m->data_len = FRAME_LEN;
	m->pkt_len = FRAME_LEN;
}

/* The next burst into @p ring: the next flows of the sequence, or while
 * warming up every flow in turn; frames as frame_write()'s @p side. */
static inline void
source_fill(struct lane *l, struct rte_ring *ring, bool warm, int side)
{
	struct rte_mbuf *m[BURST];
	unsigned int sent;

	if (rte_pktmbuf_alloc_bulk(l->pool, m, BURST) != 0)
		return;
	for (unsigned int k = 0; k < BURST; k++) {
		uint32_t e;

		if (!warm)
			e = l->seq[l->seq_pos++ & ((1u << SEQ_BITS) - 1)];
		else if (l->ids != NULL)
			e = l->ids[l->seq_pos++ % l->flows];
		else
			e = (uint32_t)(l->seq_pos++ % l->flows);
		frame_write(m[k], flow_global(l, e), side);
	}
	sent = rte_ring_enqueue_burst(ring, (void **)m, BURST, NULL);
	if (sent < BURST)
		rte_pktmbuf_free_bulk(m + sent, BURST - sent);
}

/* ------------------------------------------------------- the sequence */

/*
 * Zipf ranks 1..n by rejection-inversion (Hormann and Derflinger, 1996):
 * O(1) a draw for any n, no table.
 */
struct zipf {
	double s, n, h_x1, h_n, cut;
};

static double
zipf_h(const struct zipf *z, double x)
{
	return exp(-z->s * log(x));
}

static double
zipf_hint(const struct zipf *z, double x)   /* integral of h */
{
	double l = log(x), t = (1 - z->s) * l;

	return (fabs(t) > 1e-8 ? expm1(t) / t : 1 + t / 2) * l;
}

static double
zipf_hint_inv(const struct zipf *z, double x)
{
	double t = x * (1 - z->s);

	if (t < -1)
		t = -1;
	return exp((fabs(t) > 1e-8 ? log1p(t) / t : 1 - t / 2) * x);
}

static void
zipf_init(struct zipf *z, double s, uint64_t n)
{
	z->s = s;
	z->n = (double)n;
	z->h_x1 = zipf_hint(z, 1.5) - 1;
	z->h_n = zipf_hint(z, z->n + 0.5);
	z->cut = 2 - zipf_hint_inv(z, zipf_hint(z, 2.5) - zipf_h(z, 2));
}

static uint64_t
zipf_draw(const struct zipf *z, uint64_t *rng)
{
	for (;;) {
		double u = z->h_n + (double)(cfu_splitmix64(rng) >> 11) * 0x1p-53 *
			(z->h_x1 - z->h_n);
		double x = zipf_hint_inv(z, u);
		double k = floor(x + 0.5);

		if (k < 1)
			k = 1;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->cut || u >= zipf_hint(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k - 1;
	}
}

/* 2^SEQ_BITS draws over the lane's flows, with FIN/SYN churn on the TCP
 * ones (even global ids). With l->ids, the entries are global ids. */
static int
sequence_build(struct lane *l, bool zipf, uint64_t seed)
{
	uint64_t n = l->flows, rng = seed;
	uint8_t *closed = calloc((n + 7) / 8, 1);
	uint64_t fin_below = (uint64_t)(opt.churn * 0x1p64);
	struct zipf z;

	if (closed == NULL)
		return -1;
	zipf_init(&z, opt.zipf_s, n);
	for (uint64_t i = 0; i < (UINT64_C(1) << SEQ_BITS); i++) {
		uint64_t f = zipf ? zipf_draw(&z, &rng) :
			(uint64_t)(((__uint128_t)cfu_splitmix64(&rng) * n) >> 64);
		uint32_t e = l->ids != NULL ? l->ids[f] : (uint32_t)f;

		if ((flow_global(l, e) & 1) == 0) {
			if (closed[f / 8] & (1u << (f % 8))) {
				closed[f / 8] &= (uint8_t)~(1u << (f % 8));
				e |= FLOW_SYN;
			} else if (cfu_splitmix64(&rng) < fin_below) {
				closed[f / 8] |= (uint8_t)(1u << (f % 8));
				e |= FLOW_FIN;
			}
		}
		l->seq[i] = e;
	}
	free(closed);
	return 0;
}

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
static int
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
	d0 = l->w->ctr.events_dropped;
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
	l->ev_dropped[slot] += l->w->ctr.events_dropped - d0;
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
	fwd_setup(l);
}

/* ------------------------------------------------------------- a run */

struct result {
	double mpps;            /* per lcore */
	double cycles_per_pkt;
	double bytes_per_flow;  /* table memory / flows */
	uint64_t tracked;       /* open flows in the tables at the end */
	double new_share;       /* flows_new / packets, warm-up included */
	double unsolicited_share; /* of packets: the firewall's drops */
	double mirrored_share;  /* copies / packets (fw_mirror) */
	double sent_share;      /* forwarded / packets (forward mode) */
	/* measured parts: the tracker's new flows and closes a packet,
	 * events queued and dropped, the main lcore's CPU share */
	double new_per_pkt, close_per_pkt;
	uint64_t ev_queued, ev_dropped;
	double main_cpu;
	/* the lane's thread: CPU time / wall time, and packets per CPU
	 * second (what it did while it ran: a shared machine's other jobs
	 * take turns on its core) */
	double lane_cpu, mpps_cpu;
	/* events mode: the turns' ratios to cuckoo's turn of the same
	 * round, median and quartiles; by wall and by CPU time */
	double turn_ratio[3], turn_ratio_cpu[3];
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median and quartiles of @p n values (sorted in place). */
static void
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
	return opt.variant[v] && (v == CUCKOO || IS_EVENTS(v));
}

/*
 * A lane's table of @p flows: the application's tracker parameters
 * (app_tracker_params(): its layout, seed, timeouts) from the bench's
 * config, then the bench's own extras, explicitly.
 */
static void
tracker_params(struct cflow_tracker_params *p, uint64_t flows)
{
	app_cfg.flows = flows;
	app_tracker_params(&bench_run, (int)rte_socket_id(), p);
	p->sweep_max_buckets = opt.sweep_buckets;
}

/* The workers' shared settings, without handoff; every tracker's seed
 * (with --handoff the owner tracks with the hash the receiver
 * computed). */
static void
run_init(struct app_run *run)
{
	*run = (struct app_run){
		.cfg = &app_cfg,
		.timestamp_offset = -1,
		.verdict_offset = rte_mbuf_dynfield_lookup(
			APP_VERDICT_DYNFIELD, NULL),
		.tsc_hz = rte_get_tsc_hz(),
		.workers = workers,
		.nb_workers = nb_lanes,
		.hash_seed = HANDOFF_SEED,
	};
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

/* Events mode: the outputs of variant @p v, set up as the application
 * sets them up (app_events_setup, app_top_setup): fresh files in
 * --ev-dir, the bench's own UDP receiver for IPFIX. */
static void
events_setup(enum variant v, bool fill)
{
	char err[512];
	bool json = v == EV_JSON || v == EV_ALL || v == EV_ALL_TOP;
	bool ipfix = v == EV_IPFIX || v == EV_ALL || v == EV_ALL_TOP;
	bool pcap = v == EV_PCAPNG || v == EV_ALL || v == EV_ALL_TOP;

	if (fill)
		json = ipfix = pcap = false;
	app_cfg.events[0] = app_cfg.ipfix[0] = app_cfg.new_flow_pcap[0] = '\0';
	if (json) {
		snprintf(app_cfg.events, sizeof(app_cfg.events),
			"%s/bench_pipeline_events.jsonl", opt.ev_dir);
		unlink(app_cfg.events);    /* the app appends */
	}
	if (ipfix)
		snprintf(app_cfg.ipfix, sizeof(app_cfg.ipfix),
			"127.0.0.1:%u", ipfix_port);
	if (pcap)
		snprintf(app_cfg.new_flow_pcap, sizeof(app_cfg.new_flow_pcap),
			"%s/bench_pipeline_first.pcapng", opt.ev_dir);
	app_cfg.top_sources = !fill && (v == TOP || v == EV_ALL_TOP) ?
		opt.top_sources : 0;
	/* as main.c: events carry epoch times */
	bench_run.epoch_offset_ns = cfu_clock_ns(CLOCK_REALTIME) -
		app_tsc_ns(&bench_run);
	if (app_events_setup(&app_cfg, &bench_run, err, sizeof(err)) < 0 ||
			app_top_setup(&app_cfg, &bench_run, err,
				sizeof(err)) < 0)
		rte_exit(EXIT_FAILURE, "%s: %s\n", variant_names[v], err);
	/* ev_ring: the worker's side alone, into a ring as the app's */
	if ((v == EV_RING || v == EV_MREF) && !fill) {
		bench_run.first_packets = v == EV_MREF;
		if (bare_ring == NULL)
			bare_ring = rte_ring_create_elem("bench_ev_ring",
				sizeof(struct app_event),
				(unsigned int)opt.event_ring, (int)rte_socket_id(),
				RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (bare_ring == NULL)
			rte_exit(EXIT_FAILURE, "ev_ring: %s\n",
				rte_strerror(rte_errno));
		workers[0].event_ring = bare_ring;
	}
}

/* ev_ring's drain: take every event, do nothing with it. */
static void
bare_drain(void)
{
	struct app_event e[256];
	struct app_worker *w = &workers[0];
	unsigned int n, freed = 0;

	while ((n = rte_ring_sc_dequeue_burst_elem(bare_ring, e, sizeof(e[0]),
			RTE_DIM(e), NULL)) != 0)
		for (unsigned int k = 0; k < n; k++)
			if (e[k].m != NULL) {   /* ev_mref's */
				freed += e[k].m->nb_segs;
				rte_pktmbuf_free(e[k].m);
			}
	/* as app/events.c: the worker may take as many again */
	__atomic_store_n(&w->event_mbufs_freed, w->event_mbufs_freed + freed,
		__ATOMIC_RELEASE);
}

/* Events mode: the application's main lcore loop while the lane runs
 * (main.c): drain the events, the top-sources period, sleep. */
static void
main_loop(void)
{
	bool events = app_events_enabled(&app_cfg);
	struct timespec c0, c1, w0, w1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	while (__atomic_load_n(&lanes_finished, __ATOMIC_ACQUIRE) < nb_lanes) {
		if (events)
			app_events_drain();
		app_top_period();
		if ((current == EV_RING || current == EV_MREF) && !filling) {
			bare_drain();
			rte_delay_us_sleep(1000);
		} else if (current == MAIN_SPIN && !filling) {
			/* the main lcore busy, no memory: does that slow
			 * the lane's core? (SMT siblings on the host) */
			rte_delay_us_block(1000);
		} else {
			rte_delay_us_sleep(events ? 1000 : 10000);
		}
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	if (filling)
		return;
	main_cpu_s[slot] += (double)(c1.tv_sec - c0.tv_sec) +
		(double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
	main_wall_s[slot] += (double)(w1.tv_sec - w0.tv_sec) +
		(double)(w1.tv_nsec - w0.tv_nsec) * 1e-9;
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
			lanes[i].tracker;
	}
	if (!drain_mode) {
		rte_eal_mp_remote_launch(lane_entry, NULL, CALL_MAIN);
		rte_eal_mp_wait_lcore();
		return;
	}
	events_setup(v, fill);
	rte_eal_mp_remote_launch(lane_entry, NULL, SKIP_MAIN);
	main_loop();
	rte_eal_mp_wait_lcore();
	if ((v == EV_RING || v == EV_MREF) && !fill) {
		bare_drain();
		workers[0].event_ring = NULL;
	}
	if (app_events_close() != 0)
		rte_exit(EXIT_FAILURE, "%s: an event output failed\n",
			variant_names[v]);
	app_top_fini();
}

/* One configuration: every enabled variant's tables built and filled,
 * then the variants measured in turns. */
static void
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
		l->fwd_turn = 0;
		l->w->last_ns = 0;
		memset(l->cycles, 0, sizeof(l->cycles));
		flows += l->flows;
	}
	/* cuckoo and the events variants share one table: filled once */
	if (tracker)
		launch(CUCKOO, true);
	for (int v = CUCKOO; v < VARIANTS; v++)
		if (opt.variant[v] && v != PROBE && !uses_tracker(v))
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
			if (v == CUCKOO || IS_EVENTS(v))
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
		rte_free(lanes[i].probe);
		lanes[i].probe = NULL;
		exact_table_free(lanes[i].exact);
		for (int v = 0; v < FWD_VARIANTS; v++)
			cflow_tracker_free(lanes[i].fwd_tracker[v]);
	}
}

/* ---------------------------------------------------------- handoff */

/*
 * --handoff: two workers with the application's software flow affinity
 * (app_run.handoff), over lib/cflow's tracker. In case c, a share of each
 * lane's flows is owned by the other worker: the lane's worker hashes
 * them, hands them off through its ring, and tracks in turn what the
 * other hands to it. Each lane still has half the flows, and each
 * worker's table holds half of them whatever the share: a lane's own
 * flows and the other lane's foreign ones. Case 0 runs the flows of
 * share 0 without handoff (run.handoff false): the plain 2-lcore loop.
 */
struct hcase {
	double share;           /* of each lane's flows: the other's */
	bool handoff;
	uint32_t *seq[MAX_LCORES], *ids[MAX_LCORES];
	uint64_t seq_pos[MAX_LCORES];
	struct cflow_tracker *tracker[MAX_LCORES];
	/* measured slices and their warm-ups, from the workers' counters */
	uint64_t rx[MAX_LCORES], out[MAX_LCORES];
	uint64_t waits[MAX_LCORES], drops[MAX_LCORES];
	/* the slices in which neither lane was descheduled */
	uint64_t clean_packets[MAX_LCORES], clean_cycles[MAX_LCORES];
	unsigned int slices, clean_slices;
};

static struct hcase hcases[SLOTS];
static unsigned int nb_hcases;

struct hresult {
	double mpps[MAX_LCORES]; /* received by each worker */
	double mpps_avg;        /* per worker */
	double cycles_per_pkt;  /* lane cycles per received packet */
	double handed_off;      /* measured share of packets handed off */
	double waits_per_mpkt;  /* bursts that waited for a full ring */
	uint64_t drops;
	double cpu_share;       /* the lanes' least CPU time / wall time */
	double preempted_per_s; /* involuntary context switches, lanes */
	double mpps_all;        /* per worker, every slice */
	double clean;           /* share of the slices that were clean */
	unsigned int clean_slices, slices;
};

/* The rings between the two lanes, as the application makes them. */
static void
handoff_setup(void)
{
	if (app_handoff_rings_create(workers, MAX_LCORES, HANDOFF_RING) != 0)
		rte_exit(EXIT_FAILURE, "handoff rings: %s\n",
			rte_strerror(rte_errno));
}

/* The worker that owns global flow g, as split_by_owner() finds it:
 * parse its frame, hash the key with the trackers' seed. */
static unsigned int
flow_owner(const struct app_run *run, uint8_t *frame, uint32_t g)
{
	struct cflow_packet pkt;

	frame_bytes(frame, g);
	if (cflow_parse(frame, FRAME_LEN, &run->parse, &pkt) !=
			CFLOW_PARSE_OK)
		rte_exit(EXIT_FAILURE, "flow %" PRIu32 ": no parse\n", g);
	return app_flow_owner(run, cflow_hash_key(&pkt.key, run->hash_seed));
}

/*
 * The lane's flow ids: flow index k is foreign (owned by the other
 * worker) when floor((k + 1) s) > floor(k s), so that every prefix of
 * the indexes (the popular ranks of a Zipf law too) has share s of
 * foreign flows. Candidates alternate TCP and UDP and never collide
 * with the other lane's: g = 2 (2 (j / 2) + lane) + j % 2, j = 0, 1, ...
 * An own and a foreign cursor each take the next candidate of their
 * kind.
 */
static void
ids_build(struct lane *l, double share, const struct app_run *run)
{
	uint8_t frame[FRAME_LEN] = { 0 };
	uint64_t cand[2] = { 0, 0 };

	memcpy(frame, frame_head, sizeof(frame_head));
	for (uint64_t k = 0; k < l->flows; k++) {
		bool foreign = (uint64_t)((double)(k + 1) * share) !=
			(uint64_t)((double)k * share);
		uint64_t *j = &cand[foreign];
		uint64_t g;

		for (;; (*j)++) {
			g = (((*j >> 1) * l->nb_lanes + l->lane) << 1) |
				(*j & 1);
			if (g > FLOW_MASK)
				rte_exit(EXIT_FAILURE, "--handoff: too many "
					"flows\n");
			if ((flow_owner(run, frame, (uint32_t)g) != l->lane) ==
					foreign)
				break;
		}
		l->ids[k] = (uint32_t)g;
		(*j)++;
	}
}

/* Set the lanes to case ci, run one launch, and keep its counters. */
static void
launch_case(unsigned int ci, bool fill)
{
	struct hcase *c = &hcases[ci];
	uint64_t rx[MAX_LCORES], out[MAX_LCORES];
	uint64_t waits[MAX_LCORES], drops[MAX_LCORES];

	current = CUCKOO;
	slot = ci;
	filling = fill;
	ready = go = quiet = 0;
	run_init(&bench_run);
	bench_run.handoff = c->handoff;
	bench_run.handoff_wait = true;  /* nothing lost: all tracked */
	for (unsigned int i = 0; i < nb_lanes; i++) {
		struct lane *l = &lanes[i];

		l->seq = c->seq[i];
		l->ids = c->ids[i];
		l->seq_pos = c->seq_pos[i];
		l->w->tracker = c->tracker[i];
		rx[i] = l->w->ctr.rx_packets;
		out[i] = l->w->ctr.handoff_out;
		waits[i] = l->w->ctr.handoff_waits;
		drops[i] = l->w->ctr.handoff_drops;
	}
	rte_eal_mp_remote_launch(lane_main, NULL, CALL_MAIN);
	rte_eal_mp_wait_lcore();
	if (!fill) {
		bool clean = true;

		for (unsigned int i = 0; i < nb_lanes; i++)
			if (lanes[i].last_preempted != 0 ||
					lanes[i].last_cpu_share < 0.97)
				clean = false;
		c->slices++;
		c->clean_slices += clean;
		for (unsigned int i = 0; clean && i < nb_lanes; i++) {
			c->clean_packets[i] += lanes[i].last_packets;
			c->clean_cycles[i] += lanes[i].last_cycles;
		}
	}
	for (unsigned int i = 0; i < nb_lanes; i++) {
		struct lane *l = &lanes[i];

		c->seq_pos[i] = l->seq_pos;
		if (fill)
			continue;
		c->rx[i] += l->w->ctr.rx_packets - rx[i];
		c->out[i] += l->w->ctr.handoff_out - out[i];
		c->waits[i] += l->w->ctr.handoff_waits - waits[i];
		c->drops[i] += l->w->ctr.handoff_drops - drops[i];
	}
}

/* One flow count and distribution: every case's flows drawn and tables
 * filled, then the cases measured in turns (each round starting one
 * case further, so that no case always follows the same one). */
static void
run_handoff(uint64_t flows, bool zipf, struct hresult *res)
{
	unsigned int rounds;

	nb_lanes = MAX_LCORES;
	for (unsigned int i = 0; i < nb_lanes; i++) {
		lanes[i].nb_lanes = nb_lanes;
		lanes[i].flows = (flows + i) / nb_lanes;
		lanes[i].w->last_ns = 0;
		memset(lanes[i].cycles, 0, sizeof(lanes[i].cycles));
		memset(lanes[i].cpu_s, 0, sizeof(lanes[i].cpu_s));
		memset(lanes[i].wall_s, 0, sizeof(lanes[i].wall_s));
		memset(lanes[i].preempted, 0, sizeof(lanes[i].preempted));
	}
	for (unsigned int ci = 0; ci < nb_hcases; ci++) {
		struct hcase *c = &hcases[ci];

		memset(c->seq_pos, 0, sizeof(c->seq_pos));
		memset(c->rx, 0, sizeof(c->rx));
		memset(c->out, 0, sizeof(c->out));
		memset(c->waits, 0, sizeof(c->waits));
		memset(c->drops, 0, sizeof(c->drops));
		memset(c->clean_packets, 0, sizeof(c->clean_packets));
		memset(c->clean_cycles, 0, sizeof(c->clean_cycles));
		c->slices = c->clean_slices = 0;
		run_init(&bench_run);
		for (unsigned int i = 0; i < nb_lanes; i++) {
			struct lane *l = &lanes[i];
			struct cflow_tracker_params p;

			if (c->seq[i] == NULL)
				c->seq[i] = malloc(sizeof(uint32_t) <<
					SEQ_BITS);
			c->ids[i] = malloc(sizeof(uint32_t) * l->flows);
			tracker_params(&p, l->flows);
			c->tracker[i] = cflow_tracker_create(&p);
			if (c->seq[i] == NULL || c->ids[i] == NULL ||
					c->tracker[i] == NULL)
				rte_exit(EXIT_FAILURE, "--handoff, %" PRIu64
					" flows: out of memory\n", flows);
			l->seq = c->seq[i];
			l->ids = c->ids[i];
			ids_build(l, c->share, &bench_run);
			if (sequence_build(l, zipf, 99 + i) != 0)
				rte_exit(EXIT_FAILURE, "out of memory\n");
		}
	}
	for (unsigned int ci = 0; ci < nb_hcases; ci++)
		launch_case(ci, true);
	/* Only the measured slices count. */
	for (unsigned int i = 0; i < nb_lanes; i++)
		memset(lanes[i].packets, 0, sizeof(lanes[i].packets));
	/* Short slices: most fit between two preemptions of a lane */
	slice_s = RTE_MIN(opt.seconds / opt.rounds, opt.slice_ms * 1e-3);
	rounds = (unsigned int)(opt.seconds / slice_s + 0.5);
	for (unsigned int round = 0; round < rounds; round++)
		for (unsigned int k = 0; k < nb_hcases; k++)
			launch_case((round + k) % nb_hcases, false);
	for (unsigned int ci = 0; ci < nb_hcases; ci++) {
		struct hcase *c = &hcases[ci];
		struct hresult *r = &res[ci];
		uint64_t packets = 0, cycles = 0, rx = 0, out = 0, waits = 0;
		uint64_t preempted = 0, cpackets = 0, ccycles = 0;
		double hz = (double)rte_get_tsc_hz(), wall = 0;
		bool clean = c->clean_slices != 0;

		memset(r, 0, sizeof(*r));
		r->cpu_share = 1;
		for (unsigned int i = 0; i < nb_lanes; i++) {
			struct lane *l = &lanes[i];

			r->mpps[i] = clean ? (double)c->clean_packets[i] /
				((double)c->clean_cycles[i] / hz) / 1e6 :
				(double)l->packets[ci] /
				((double)l->cycles[ci] / hz) / 1e6;
			packets += l->packets[ci];
			cycles += l->cycles[ci];
			cpackets += c->clean_packets[i];
			ccycles += c->clean_cycles[i];
			rx += c->rx[i];
			out += c->out[i];
			waits += c->waits[i];
			r->drops += c->drops[i];
			r->cpu_share = RTE_MIN(r->cpu_share, l->cpu_s[ci] /
				l->wall_s[ci]);
			preempted += l->preempted[ci];
			wall += l->wall_s[ci];
			cflow_tracker_free(c->tracker[i]);
			free(c->ids[i]);
			c->tracker[i] = NULL;
			c->ids[i] = NULL;
			l->ids = NULL;
		}
		r->mpps_all = (double)packets / ((double)cycles / hz) / 1e6;
		r->clean = (double)c->clean_slices / (double)c->slices;
		r->clean_slices = c->clean_slices;
		r->slices = c->slices;
		if (!clean) {
			cpackets = packets;
			ccycles = cycles;
		}
		r->mpps_avg = (double)cpackets / ((double)ccycles / hz) / 1e6;
		r->cycles_per_pkt = (double)ccycles / (double)cpackets;
		r->handed_off = rx ? (double)out / (double)rx : 0;
		r->waits_per_mpkt = rx ? (double)waits / (double)rx * 1e6 : 0;
		r->preempted_per_s = (double)preempted / (wall / nb_lanes);
	}
}

/* The table of --handoff: per flow count and distribution, the case
 * without handoff, then each share. */
static void
handoff_main(FILE *csv)
{
	printf("# bench_pipeline --handoff: 2 workers, software flow "
		"affinity through %u-slot SPSC rings (a full ring waits); "
		"64-byte TCP/UDP frames, %.0f%% TCP churn, cuckoo with %u-bit "
		"fingerprints and %u-bit state%s, sweep <= %u buckets a burst, "
		"%.1f s a row in %.0f ms turns; TSC %.2f GHz\n"
		"# rates and cycles: the turns in which neither lane was "
		"descheduled (clean; every turn if none was); all: every "
		"turn\n\n", HANDOFF_RING,
		opt.churn * 100, opt.fp_bits, opt.age_bits,
		opt.exact_size ? ", exact size" : "", opt.sweep_buckets,
		opt.seconds, RTE_MIN(opt.seconds / opt.rounds, opt.slice_ms * 1e-3) *
		1e3, rte_get_tsc_hz() / 1e9);
	printf("| flows | dist | foreign | handed off | Mpps w0 | Mpps w1 | "
		"Mpps/worker | cycles/pkt | of 0%% | of no handoff | "
		"cycles/handoff | waits/Mpkt | clean | all: Mpps/worker | "
		"all: CPU | preempted/s |\n");
	printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---:|---:|---:|---:|---:|\n");
	if (csv != NULL)
		fprintf(csv, "flows,dist,share,handoff,handed_off,mpps_w0,"
			"mpps_w1,mpps_per_worker,cycles_per_pkt,of_share0,"
			"of_no_handoff,cycles_per_handoff,waits_per_mpkt,"
			"drops,cpu_share,preempted_per_s,clean_share,"
			"mpps_all\n");
	for (unsigned int fi = 0; fi < opt.nb_flows; fi++)
		for (int d = 0; d < 2; d++) {
			struct hresult res[SLOTS];
			const struct hresult *zero = NULL;

			if (!opt.zipf[d])
				continue;
			run_handoff(opt.flows[fi], d == 1, res);
			for (unsigned int ci = 0; ci < nb_hcases; ci++)
				if (hcases[ci].handoff &&
						hcases[ci].share == 0)
					zero = &res[ci];
			for (unsigned int ci = 0; ci < nb_hcases; ci++) {
				const struct hcase *c = &hcases[ci];
				const struct hresult *r = &res[ci];
				char share[16] = "none", of0[16] = "",
					per[16] = "";
				double r0 = zero ? r->mpps_avg /
					zero->mpps_avg : 0;
				double rn = r->mpps_avg / res[0].mpps_avg;
				double cyc = 0;

				if (c->handoff)
					snprintf(share, sizeof(share), "%.0f%%",
						c->share * 100);
				if (zero != NULL)
					snprintf(of0, sizeof(of0), "%.0f%%",
						100 * r0);
				if (zero != NULL && c->handoff &&
						c->share > 0) {
					cyc = (r->cycles_per_pkt -
						zero->cycles_per_pkt) /
						c->share;
					snprintf(per, sizeof(per), "%.0f", cyc);
				}
				printf("| %" PRIu64 " | %s | %s | %.1f%% | "
					"%.2f | %.2f | %.2f | %.0f | %s | "
					"%.0f%% | %s | %.0f | %u/%u | %.2f | "
					"%.0f%% | %.0f |\n",
					opt.flows[fi], d ? "zipf" : "uniform",
					share, 100 * r->handed_off, r->mpps[0],
					r->mpps[1], r->mpps_avg,
					r->cycles_per_pkt, of0, 100 * rn, per,
					r->waits_per_mpkt, r->clean_slices,
					r->slices,
					r->mpps_all, 100 * r->cpu_share,
					r->preempted_per_s);
				fflush(stdout);
				if (csv != NULL)
					fprintf(csv, "%" PRIu64 ",%s,%.3f,%d,"
						"%.4f,%.3f,%.3f,%.3f,%.1f,"
						"%.4f,%.4f,%.1f,%.1f,%" PRIu64
						",%.4f,%.1f,%.4f,%.3f\n",
						opt.flows[fi],
						d ? "zipf" : "uniform",
						c->share, c->handoff,
						r->handed_off, r->mpps[0],
						r->mpps[1], r->mpps_avg,
						r->cycles_per_pkt, r0, rn, cyc,
						r->waits_per_mpkt, r->drops,
						r->cpu_share,
						r->preempted_per_s, r->clean,
						r->mpps_all);
			}
		}
}

/* ----------------------------------------------------------- events */

/* A UDP socket on 127.0.0.1, never read, for --ipfix to send to: the
 * kernel drops what its buffer does not hold. Its port. */
static uint16_t
ipfix_receiver(void)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
			getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		rte_exit(EXIT_FAILURE, "IPFIX receiver: %s\n", strerror(errno));
	return ntohs(a.sin_port);
}

/*
 * Events mode: one lane on lcore 1, uniform or Zipf flows, a
 * configuration per --new-share; per variant its rate, its ratio to
 * cuckoo (no events, no sketch), the tracker's new flows and closes a
 * packet, events queued and dropped (a full ring), the main lcore's CPU
 * share.
 */
static void
events_main(FILE *csv)
{
	ipfix_port = ipfix_receiver();
	if (csv != NULL)
		fprintf(csv, "flows,dist,new_share_asked,churn,variant,"
			"mpps_per_lcore,cycles_per_pkt,of_cuckoo,new_per_pkt,"
			"close_per_pkt,events_queued,events_dropped,"
			"dropped_share,main_cpu,lane_cpu,mpps_per_cpu_s,"
			"turns_median,turns_q1,turns_q3,turns_cpu_median,"
			"turns_cpu_q1,turns_cpu_q3\n");
	printf("# bench_pipeline, events: 64-byte TCP/UDP frames, one lane "
		"on lcore 1, the main lcore draining; cuckoo with %u-bit "
		"fingerprints and %u-bit state%s, sweep <= %u buckets a "
		"burst, %u turns, %.1f s a row; event ring %" PRIu64 ", "
		"top sources %" PRIu64 "; files in %s; TSC %.2f GHz\n\n",
		opt.fp_bits, opt.age_bits, opt.exact_size ? ", exact size" : "",
		opt.sweep_buckets, opt.rounds, opt.seconds, opt.event_ring,
		opt.top_sources, opt.ev_dir, rte_get_tsc_hz() / 1e9);
	printf("| flows | dist | new share (asked) | variant | Mpps/lcore | "
		"cycles/pkt | of cuckoo | of cuckoo, turns: median (quartiles) "
		"| by lane CPU time: median (quartiles) | lane CPU | new/pkt | "
		"close/pkt | events queued | events dropped | main lcore CPU "
		"|\n");
	printf("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---:|---:|---:|\n");
	nb_lanes = 1;
	lanes[0].nb_lanes = 1;
	for (unsigned int fi = 0; fi < opt.nb_flows; fi++)
		for (int d = 0; d < 2; d++)
			for (unsigned int si = 0; si < opt.nb_new_shares; si++) {
				struct result res[VARIANTS] = { { 0 } };
				double share = opt.new_share[si];
				char asked[16] = "";

				if (!opt.zipf[d])
					continue;
				/* TCP packets are half; of them a share c/(1+c)
				 * are a SYN after a FIN at churn c */
				if (share >= 0) {
					opt.churn = 2 * share / (1 - 2 * share);
					snprintf(asked, sizeof(asked), "%.1f%%",
						100 * share);
				} else {
					snprintf(asked, sizeof(asked),
						"churn %.3f", opt.churn);
				}
				lanes[0].flows = opt.flows[fi];
				if (sequence_build(&lanes[0], d == 1, 99) != 0)
					rte_exit(EXIT_FAILURE, "out of memory\n");
				run_config(res);
				for (int v = 0; v < VARIANTS; v++) {
					const struct result *r = &res[v];
					uint64_t all = r->ev_queued + r->ev_dropped;
					char of[16] = "", ofc[48] = "", oft[48] = "";

					if (!opt.variant[v])
						continue;
					if (res[CUCKOO].mpps > 0)
						snprintf(of, sizeof(of), "%.3f",
							r->mpps / res[CUCKOO].mpps);
					if (opt.variant[CUCKOO]) {
						snprintf(oft, sizeof(oft),
							"%.3f (%.3f-%.3f)",
							r->turn_ratio[1],
							r->turn_ratio[0],
							r->turn_ratio[2]);
						snprintf(ofc, sizeof(ofc),
							"%.3f (%.3f-%.3f)",
							r->turn_ratio_cpu[1],
							r->turn_ratio_cpu[0],
							r->turn_ratio_cpu[2]);
					}
					printf("| %" PRIu64 " | %s | %s | %s | %.2f "
						"| %.0f | %s | %s | %s | %.1f%% | "
						"%.4f | %.4f | %" PRIu64
						" | %" PRIu64 " (%.1f%%) | %.1f%% |\n",
						opt.flows[fi], d ? "zipf" : "uniform",
						asked, variant_names[v], r->mpps,
						r->cycles_per_pkt, of, oft,
						ofc, 100 * r->lane_cpu,
						r->new_per_pkt,
						r->close_per_pkt, r->ev_queued,
						r->ev_dropped, all ? 100.0 *
						(double)r->ev_dropped / (double)all :
						0, 100 * r->main_cpu);
					fflush(stdout);
					if (csv != NULL)
						fprintf(csv, "%" PRIu64 ",%s,%.4f,"
							"%.4f,%s,%.3f,%.1f,%.4f,%.5f,"
							"%.5f,%" PRIu64 ",%" PRIu64
							",%.5f,%.4f,%.4f,%.3f,%.4f,%.4f,"
							"%.4f,%.4f,%.4f,%.4f\n",
							opt.flows[fi],
							d ? "zipf" : "uniform", share,
							opt.churn, variant_names[v],
							r->mpps, r->cycles_per_pkt,
							res[CUCKOO].mpps > 0 ? r->mpps /
							res[CUCKOO].mpps : 0,
							r->new_per_pkt,
							r->close_per_pkt, r->ev_queued,
							r->ev_dropped, all ?
							(double)r->ev_dropped /
							(double)all : 0, r->main_cpu,
							r->lane_cpu, r->mpps_cpu,
							r->turn_ratio[1],
							r->turn_ratio[0],
							r->turn_ratio[2],
							r->turn_ratio_cpu[1],
							r->turn_ratio_cpu[0],
							r->turn_ratio_cpu[2]);
				}
			}
}

/* ------------------------------------------------------------- main */

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [options]\n"
		"  --flows LIST     flow counts (default "
		"1000,100000,1000000,10000000,100000000)\n"
		"  --dist D         uniform, zipf or both (default uniform)\n"
		"  --zipf-s S       Zipf exponent (default 0.99)\n"
		"  --churn F        share of TCP packets that are a FIN; the "
		"flow's next is a SYN (default 0.01)\n"
		"  --seconds S      measured time per row (default 2)\n"
		"  --fp-bits N      cuckoo fingerprint bits (default 16)\n"
		"  --age-bits N     cuckoo state bits, 16 or 32 (default 16)\n"
		"  --exact-size     cuckoo tables sized exactly, not to a power "
		"of two\n"
		"  --sweep-buckets N  sweep work bound per burst, in buckets of "
		"4 slots (default 64; 1 shows what the sweep costs)\n"
		"  --lcores L       1, 2 or both (default: both if the EAL has "
		"2 lcores)\n"
		"  --variants LIST  of ceiling,cuckoo,rte_hash,cuckoo_il,probe "
		"(default these\n"
		"                   five; probe: 2 random lines a packet in a "
		"buffer of the\n"
		"                   cuckoo table's size, the memory's "
		"ceiling;\n"
		"                   cuckoo_il: the interleaved layout, which "
		"needs a bucket of\n"
		"                   at most 64 bytes),\n"
		"                   forward, firewall, fw_mirror: the app in "
		"forward mode, lib/cflow's\n"
		"                   tracker, bursts alternately on two ports "
		"(inside packets,\n"
		"                   outside replies of the same flows): "
		"without roles; as\n"
		"                   --inside/--outside; and with --mirror-port "
		"--mirror-first N\n"
		"  --firewall       --variants forward,firewall,fw_mirror\n"
		"  --mirror-first N fw_mirror's copies of each flow's first N "
		"packets (default 4)\n"
		"                   main_spin: cuckoo, the main lcore busy "
		"(a spin, no memory);\n"
		"                   ev_ring: cuckoo, events queued to a ring "
		"the main lcore\n"
		"                   empties without writing them; ev_mref: "
		"the same with first\n"
		"                   packets passed as for --new-flow-pcap "
		"(mbufs freed there);\n"
		"                   top, ev_json, ev_ipfix, ev_pcapng, ev_all, "
		"ev_all_top: the cuckoo\n"
		"                   loop and table with the app's top-sources "
		"sketch, flow\n"
		"                   events as JSON lines, IPFIX, first-packet "
		"pcapng, all three,\n"
		"                   all and the sketch; the main lcore drains "
		"them (needs -l 0,1;\n"
		"                   one lane, on lcore 1, for every variant)\n"
		"  --new-share LIST events mode: new flows a packet, a "
		"configuration each (sets\n"
		"                   --churn to 2S / (1 - 2S): half the packets "
		"are TCP)\n"
		"  --top-sources N  the top and ev_all_top sketch's counters "
		"(default 1024)\n"
		"  --event-ring N   events a worker's ring holds (default "
		"16384)\n"
		"  --ev-dir DIR     where the event files go (default /dev/shm)\n"
		"  --rounds N       turns of each variant (default 4)\n"
		"  --csv FILE       also write the rows as CSV\n"
		"  --quick          1 K and 100 K flows, 0.3 s: a smoke run\n"
		"  --handoff        instead of the variants: 2 lcores, cuckoo, "
		"software flow\n"
		"                   affinity (the app's handoff rings); each "
		"lane's flows have\n"
		"                   a share owned by the other worker; rows: "
		"no handoff, then\n"
		"                   each share (needs -l with 2 lcores)\n"
		"  --shares LIST    --handoff's foreign shares, 0 to 1 "
		"(default 0,0.5,1)\n"
		"  --slice-ms MS    --handoff's turns, in ms (default 10); "
		"the rates are\n"
		"                   those of the turns in which no lane was "
		"descheduled\n",
		prog);
}

static int
parse_options(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "flows", 1, NULL, 'f' }, { "dist", 1, NULL, 'd' },
		{ "zipf-s", 1, NULL, 'z' }, { "churn", 1, NULL, 'c' },
		{ "seconds", 1, NULL, 's' }, { "fp-bits", 1, NULL, 'b' },
		{ "age-bits", 1, NULL, 'a' }, { "lcores", 1, NULL, 'l' },
		{ "exact-size", 0, NULL, 'e' }, { "sweep-buckets", 1, NULL, 'w' },
		{ "variants", 1, NULL, 'v' }, { "csv", 1, NULL, 'o' },
		{ "quick", 0, NULL, 'q' }, { "help", 0, NULL, 'h' },
		{ "handoff", 0, NULL, 'H' }, { "shares", 1, NULL, 'S' },
		{ "slice-ms", 1, NULL, 'm' }, { "firewall", 0, NULL, 'F' },
		{ "mirror-first", 1, NULL, 'M' },
		{ "new-share", 1, NULL, 'N' }, { "top-sources", 1, NULL, 'T' },
		{ "event-ring", 1, NULL, 'R' }, { "ev-dir", 1, NULL, 'D' },
		{ "rounds", 1, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	int c, li = 0;

	opt.lcores[0] = 1;
	opt.lcores[1] = 2;
	opt.nb_lcore_counts = rte_lcore_count() >= 2 ? 2 : 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longs, &li)) != -1) {
		char *end = NULL, *tok, *save = NULL;

		switch (c) {
		case 'f':
			opt.nb_flows = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL &&
					opt.nb_flows < 8;
					tok = strtok_r(NULL, ",", &save)) {
				opt.flows[opt.nb_flows] = strtoull(tok, &end, 0);
				if (*end != '\0' || opt.flows[opt.nb_flows] <
						2 || opt.flows[opt.nb_flows] >
						(UINT64_C(1) << 29))
					goto bad;
				opt.nb_flows++;
			}
			if (opt.nb_flows == 0)
				goto bad;
			break;
		case 'd':
			opt.zipf[0] = strcmp(optarg, "zipf") != 0;
			opt.zipf[1] = strcmp(optarg, "uniform") != 0;
			if (strcmp(optarg, "zipf") && strcmp(optarg, "uniform") &&
					strcmp(optarg, "both"))
				goto bad;
			break;
		case 'z':
			opt.zipf_s = strtod(optarg, &end);
			if (*end != '\0' || !(opt.zipf_s > 0 && opt.zipf_s < 4))
				goto bad;
			break;
		case 'c':
			opt.churn = strtod(optarg, &end);
			if (*end != '\0' || !(opt.churn >= 0 && opt.churn <= 0.5))
				goto bad;
			break;
		case 's':
			opt.seconds = strtod(optarg, &end);
			if (*end != '\0' || !(opt.seconds >= 0.05 &&
					opt.seconds <= 600))
				goto bad;
			break;
		case 'b':
			opt.fp_bits = (unsigned int)strtoul(optarg, &end, 0);
			if (*end != '\0' || opt.fp_bits < 4 || opt.fp_bits > 32)
				goto bad;
			break;
		case 'a':
			opt.age_bits = (unsigned int)strtoul(optarg, &end, 0);
			if (*end != '\0' || (opt.age_bits != 16 &&
					opt.age_bits != 32))
				goto bad;
			break;
		case 'e':
			opt.exact_size = true;
			break;
		case 'w':
			opt.sweep_buckets = (unsigned int)strtoul(optarg, &end,
				0);
			if (*end != '\0' || opt.sweep_buckets < 1 ||
					opt.sweep_buckets > 65536)
				goto bad;
			break;
		case 'l':
			if (strcmp(optarg, "1") == 0) {
				opt.nb_lcore_counts = 1;
			} else if (strcmp(optarg, "2") == 0) {
				opt.lcores[0] = 2;
				opt.nb_lcore_counts = 1;
			} else if (strcmp(optarg, "both") != 0) {
				goto bad;
			}
			if (rte_lcore_count() < opt.lcores[
					opt.nb_lcore_counts - 1]) {
				fprintf(stderr, "bench_pipeline: --lcores %s "
					"needs the EAL to have 2 (-l 0,1)\n",
					optarg);
				return -1;
			}
			break;
		case 'v':
			memset(opt.variant, 0, sizeof(opt.variant));
			for (tok = strtok_r(optarg, ",", &save); tok != NULL;
					tok = strtok_r(NULL, ",", &save)) {
				int k;

				for (k = 0; k < VARIANTS; k++)
					if (strcmp(tok, variant_names[k]) == 0)
						opt.variant[k] = true;
				for (k = 0; k < VARIANTS; k++)
					if (strcmp(tok, variant_names[k]) == 0)
						break;
				if (k == VARIANTS)
					goto bad;
			}
			break;
		case 'o':
			opt.csv = optarg;
			break;
		case 'q':
			opt.flows[0] = 1000;
			opt.flows[1] = 100000;
			opt.nb_flows = 2;
			opt.seconds = 0.3;
			break;
		case 'H':
			opt.handoff = true;
			break;
		case 'F':
			memset(opt.variant, 0, sizeof(opt.variant));
			for (int v = FORWARD; v < VARIANTS; v++)
				opt.variant[v] = true;
			break;
		case 'M':
			opt.mirror_first = (unsigned int)strtoul(optarg, &end,
				0);
			if (*end != '\0' || opt.mirror_first < 1 ||
					opt.mirror_first > 254)
				goto bad;
			break;
		case 'm':
			opt.slice_ms = strtod(optarg, &end);
			if (*end != '\0' || !(opt.slice_ms >= 1 &&
					opt.slice_ms <= 10000))
				goto bad;
			break;
		case 'S':
			opt.nb_shares = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL;
					tok = strtok_r(NULL, ",", &save)) {
				double v = strtod(tok, &end);

				if (*end != '\0' || !(v >= 0 && v <= 1) ||
						opt.nb_shares == SLOTS - 1)
					goto bad;
				opt.shares[opt.nb_shares++] = v;
			}
			if (opt.nb_shares == 0)
				goto bad;
			break;
		case 'N':
			opt.nb_new_shares = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL;
					tok = strtok_r(NULL, ",", &save)) {
				double v = strtod(tok, &end);

				if (*end != '\0' || !(v >= 0 && v <= 0.2) ||
						opt.nb_new_shares ==
						RTE_DIM(opt.new_share))
					goto bad;
				opt.new_share[opt.nb_new_shares++] = v;
			}
			if (opt.nb_new_shares == 0)
				goto bad;
			break;
		case 'T':
			opt.top_sources = strtoull(optarg, &end, 0);
			if (*end != '\0' || opt.top_sources < 1 ||
					opt.top_sources > (1u << 24))
				goto bad;
			break;
		case 'R':
			opt.event_ring = strtoull(optarg, &end, 0);
			if (*end != '\0' || opt.event_ring < 64 ||
					opt.event_ring > (1u << 24))
				goto bad;
			break;
		case 'D':
			opt.ev_dir = optarg;
			break;
		case 'r':
			opt.rounds = (unsigned int)strtoul(optarg, &end, 0);
			if (*end != '\0' || opt.rounds < 1 || opt.rounds > 1000)
				goto bad;
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "bench_pipeline: --%s %s: not accepted (see "
			"--help)\n", longs[li].name, optarg);
		return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "bench_pipeline: stray argument %s\n",
			argv[optind]);
		return -1;
	}
	if (opt.handoff && rte_lcore_count() < MAX_LCORES) {
		fprintf(stderr, "bench_pipeline: --handoff needs the EAL to "
			"have 2 lcores (-l 0,1)\n");
		return -1;
	}
	for (int v = TOP; v <= EV_ALL_TOP; v++)
		drain_mode |= opt.variant[v];
	if (drain_mode) {
		if (rte_lcore_count() < 2 || opt.handoff) {
			fprintf(stderr, "bench_pipeline: the events variants "
				"need -l 0,1 (the main lcore drains, one lane "
				"on lcore 1), without --handoff\n");
			return -1;
		}
		opt.lcores[0] = 1;
		opt.nb_lcore_counts = 1;
		if (opt.rounds > MAX_TURNS) {
			fprintf(stderr, "bench_pipeline: events mode: at most "
				"%d rounds\n", MAX_TURNS);
			return -1;
		}
	}
	if (opt.nb_new_shares == 0)
		opt.new_share[opt.nb_new_shares++] = -1;    /* --churn's */
	/* --handoff's cases: no handoff, then each share */
	hcases[nb_hcases++] = (struct hcase){ .share = 0 };
	for (unsigned int k = 0; k < opt.nb_shares; k++)
		hcases[nb_hcases++] = (struct hcase){
			.share = opt.shares[k], .handoff = true,
		};
	return 0;
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
	for (unsigned int i = 0; i < RTE_MIN(rte_lcore_count(),
			(unsigned int)MAX_LCORES); i++)
		lane_setup(i);
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
			"unsolicited_share,mirrored_per_pkt\n");
	printf("# bench_pipeline: 64-byte TCP/UDP frames, %.0f%% TCP churn, "
		"cuckoo with %u-bit fingerprints and %u-bit state%s, sweep "
		"<= %u buckets a burst, %.1f s a row; TSC %.2f GHz\n\n",
		opt.churn * 100, opt.fp_bits, opt.age_bits,
		opt.exact_size ? ", exact size" : "", opt.sweep_buckets,
		opt.seconds, rte_get_tsc_hz() / 1e9);
	printf("| flows | dist | lcores | variant | Mpps/lcore | cycles/pkt "
		"| bytes/flow | of ceiling | of probe | cuckoo/rte_hash | "
		"of forward | forwarded | unsolicited | mirrored/pkt |\n");
	printf("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---:|---:|\n");
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
						"%.2f | %.0f | %.2f | %s | %s | "
						"%s | %s | %s | %s | %s |\n",
						opt.flows[fi],
						d ? "zipf" : "uniform", nb_lanes,
						variant_names[v], r->mpps,
						r->cycles_per_pkt,
						r->bytes_per_flow, of_ceiling,
						of_probe, ratio, of_fwd, sent, unsol,
						mirr);
					fflush(stdout);
					if (csv != NULL)
						fprintf(csv, "%" PRIu64 ",%s,%u,"
							"%s,%.3f,%.1f,%.3f,%"
							PRIu64 ",%.4f,%.5f,"
							"%.4f\n",
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
							r->mirrored_share);
				}
			}
		}
out:
	if (csv != NULL)
		fclose(csv);
	rte_eal_cleanup();
	return 0;
}
