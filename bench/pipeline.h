/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _BENCH_PIPELINE_H_
#define _BENCH_PIPELINE_H_

/*
 * bench_pipeline's parts (see bench_pipeline.c for what it measures):
 *   bench_pipeline.c     the lanes, a configuration's run, the variants'
 *                        table, main
 *   pipeline_source.c    the frames and the flow sequences (the hot
 *                        source functions here, inline)
 *   pipeline_options.c   the options
 *   pipeline_handoff.c   --handoff: the software flow affinity's cases
 *   pipeline_events.c    the events variants: the outputs set up as the
 *                        application's, its main lcore's loop
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "cflow.h"
#include "config.h"
#include "exact_table.h"
#include "run.h"
#include "worker.h"

#define BURST 32
#define MAX_LCORES 2
#define POOL_MBUFS 4096
#define FRAME_LEN 60            /* 64 bytes on the wire with the FCS */
#define SEQ_BITS 24             /* flows drawn per lcore, then cycled */
#define FLOW_SYN (UINT32_C(1) << 30)
#define FLOW_FIN (UINT32_C(1) << 31)
#define FLOW_MASK (FLOW_SYN - 1)
#define SLOTS 24                /* variants, or --handoff cases */
#define HANDOFF_RING 1024       /* the application's default */
#define MAX_TURNS 64u           /* --rounds, events mode */
#define HANDOFF_SEED UINT64_C(0x5eed) /* every tracker's, with --handoff */

/* FORWARD and later: the application in forward mode, lib/cflow's
 * tracker, each lane's packets alternately on its two ports (see "forward
 * mode" below). */
/* TOP to EV_ALL_TOP: the cuckoo variant's table and loop, with the
 * top-sources sketch and the event outputs of the application (the main
 * lcore drains: see "Flow events" above). REC_RING to REC_IPFIX: the same
 * with flow records (--records), on a table of their own. */
enum variant { CEILING, CUCKOO, RTE_HASH, CUCKOO_IL, PROBE, MAIN_SPIN, TOP,
	EV_RING, EV_MREF, EV_JSON, EV_IPFIX, EV_PCAPNG, EV_ALL, EV_ALL_TOP,
	REC_RING, REC_JSON, REC_IPFIX, FORWARD, FIREWALL, FW_MIRROR, VARIANTS };
extern const char *const variant_names[VARIANTS];
#define IS_EVENTS(v) ((v) >= MAIN_SPIN && (v) <= REC_IPFIX)
#define IS_RECORDS(v) ((v) >= REC_RING && (v) <= REC_IPFIX)
#define FWD_VARIANTS (VARIANTS - FORWARD)

#define FRAME_HEAD_LEN 54       /* frame_head[]'s bytes */
#define FRAME6_LEN 74           /* --ipv6: Ethernet, IPv6, 20 bytes */

/* The options (pipeline_options.c). */
struct pipeline_opt {
	uint64_t flows[8];
	unsigned int nb_flows;
	bool zipf[2];           /* uniform, zipf */
	double zipf_s;
	double churn;
	double seconds;
	unsigned int fp_bits;
	unsigned int age_bits;
	bool exact_size;
	enum app_table_layout table_layout; /* the app's --table-layout */
	unsigned int sweep_buckets;
	unsigned int lcores[2]; /* 1 and/or 2 */
	unsigned int nb_lcore_counts;
	bool variant[VARIANTS];
	const char *csv;
	bool handoff;
	bool sizes;             /* --sizes: print the tables' bytes, no run */
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
	bool ipv6;              /* --ipv6: IPv6 frames (frame6_head) */
	/* forward mode: --icmp-errors and --frags, as shares of 2^64 */
	uint64_t icmp_err_below;
	uint64_t frag_below;
	double icmp_errors, frags;
};

extern struct pipeline_opt opt;

/* One lcore's source, port and table. */
struct lane {
	struct rte_mempool *pool;
	struct rte_ring *ring;
	uint16_t port;
	uint32_t *seq;          /* flow ids with FLOW_SYN/FLOW_FIN */
	uint32_t *ids;          /* --handoff: flow index -> global flow id;
				 * the sequence then holds global ids */
	uint64_t seq_pos;
	/* the records variants' table's own place in the sequence: each
	 * table sees the same packets, in order, so that its flows close
	 * and reopen as the other's do */
	uint64_t seq_pos_rec;
	uint64_t flows;         /* this lane's share */
	unsigned int lane, nb_lanes;
	struct app_worker *w;   /* workers[lane] */
	struct cflow_tracker *tracker;
	struct cflow_tracker *tracker_il;   /* CUCKOO_IL */
	struct cflow_tracker *tracker_rec;  /* REC_*: records on */
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
	uint64_t mix_rng;       /* --icmp-errors, --frags: draws */
	uint16_t ip_id;         /* --frags: the datagrams' identification */
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

/* The state of a run (bench_pipeline.c), shared by the modes. */
extern struct lane lanes[MAX_LCORES];
/* the lanes' workers, in one array as app_run.workers wants them */
extern struct app_worker workers[MAX_LCORES];
extern unsigned int nb_lanes;
extern enum variant current;
/* where the lanes count: the variant, or the --handoff case */
extern unsigned int slot;
extern bool filling;
extern volatile unsigned int ready, go, quiet;
extern double slice_s;
extern struct app_config app_cfg;
extern struct app_run bench_run;
/* fw_mirror's mirror port, shared: tx queue i (lane i) into ring i */
extern uint16_t mirror_port;
extern struct rte_ring *mirror_tx[MAX_LCORES];
/* Events mode: the lane runs on lcore 1, the main lcore drains; the
 * main lcore's CPU time and wall time per variant */
extern bool drain_mode;
extern unsigned int lanes_finished;
extern unsigned int turn;
extern double main_cpu_s[SLOTS], main_wall_s[SLOTS];
extern uint16_t ipfix_port;
/* ev_ring's, rec_ring's: the short events' [0], with first packets [1] */
extern struct rte_ring *bare_ring[2];

/* One variant's figures over a configuration's run (run_config()). */
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
	/* TSC cycles of the lanes' CPU time a packet: on a shared, loaded
	 * machine the wall time (cycles_per_pkt) also counts the turns
	 * other processes took the core */
	double cpu_cycles_per_pkt;
	/* events mode: the turns' ratios to cuckoo's turn of the same
	 * round, median and quartiles; by wall and by CPU time */
	double turn_ratio[3], turn_ratio_cpu[3];
};

/* ------------------------------------------------ pipeline_source.c */

extern const uint8_t frame_head[FRAME_HEAD_LEN];
extern const uint8_t frame6_head[FRAME6_LEN];

/* A pool object's frame: frame_head, then zeros (rte_mempool_obj_iter). */
void frame_init(struct rte_mempool *mp, void *arg, void *obj,
		unsigned int idx);

/* Fill l->seq: 2^SEQ_BITS draws over the lane's flows, uniform or Zipf,
 * with --churn's FIN/SYN on the TCP ones. 0, or -1 out of memory. */
int sequence_build(struct lane *l, bool zipf, uint64_t seed);

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

/* --ipv6: frame_bytes() for the IPv6 frame: the flow in the source
 * address's last 3 bytes (2001:db8::a.b.c), its port after them. */
static inline void
frame_bytes6(uint8_t *p, uint32_t e)
{
	uint32_t f = e & FLOW_MASK;
	bool udp = f & 1;

	p[20] = udp ? 17 : 6;
	p[35] = (uint8_t)(f >> 16);
	p[36] = (uint8_t)(f >> 8);
	p[37] = (uint8_t)f;
	p[54] = (uint8_t)((1024 + (f >> 24)) >> 8);
	p[55] = (uint8_t)(1024 + (f >> 24));
	p[67] = e & FLOW_SYN ? 0x02 : e & FLOW_FIN ? 0x11 : 0x10;
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
	uint16_t len = FRAME_LEN;

	if (opt.ipv6) {
		frame_bytes6(rte_pktmbuf_mtod(m, uint8_t *), e);
		len = FRAME6_LEN;
	} else if (side < 0) {
		frame_bytes(rte_pktmbuf_mtod(m, uint8_t *), e);
	} else {
		frame_bytes_side(rte_pktmbuf_mtod(m, uint8_t *), e, side == 1);
	}
	m->data_len = len;
	m->pkt_len = len;
}

/* --icmp-errors: in place of flow @p f's packet, an ICMP error about a
 * random tuple of its host 10.f (source port @p port, never a tracked
 * one): from a router on the path to the host (@p side 1, quoting the
 * host's packet to the server) or from the host to the server (side 0,
 * quoting the server's packet); destination unreachable, port for UDP,
 * fragmentation needed (MTU 1400) for TCP. 70 bytes. */
static inline void
frame_icmp_error(uint8_t *p, uint32_t f, uint16_t port, int side)
{
	const uint8_t host[4] = { 10, (uint8_t)(f >> 16), (uint8_t)(f >> 8),
		(uint8_t)f };
	const uint8_t server[4] = { 192, 168, 1, 1 };
	const uint8_t router[4] = { 198, 51, 100, 1 };
	bool udp = f & 1;
	uint8_t *q = p + 42;    /* the quoted packet */

	p[16] = 0;
	p[17] = 20 + 8 + 28;
	p[20] = 0;
	p[21] = 0;
	p[23] = 1;
	memcpy(p + 26, side == 1 ? router : host, 4);
	memcpy(p + 30, side == 1 ? host : server, 4);
	p[34] = 3;
	p[35] = udp ? 3 : 4;
	memset(p + 36, 0, 4);
	p[40] = udp ? 0 : 1400 >> 8;
	p[41] = udp ? 0 : 1400 & 0xff;
	memcpy(q, frame_head + 14, 20);
	q[9] = udp ? 17 : 6;
	memcpy(q + 12, side == 1 ? host : server, 4);
	memcpy(q + 16, side == 1 ? server : host, 4);
	q[20 + (side == 1 ? 0 : 2)] = (uint8_t)(port >> 8);
	q[21 + (side == 1 ? 0 : 2)] = (uint8_t)port;
	q[20 + (side == 1 ? 2 : 0)] = 0;
	q[21 + (side == 1 ? 2 : 0)] = 80;
	memset(q + 24, 0, 4);
}

/* --frags: flow @p e's packet as two fragments of datagram @p id, the
 * first (the 20-byte TCP or 8-byte UDP header and more: 24 bytes) into
 * @p a, the last (8 bytes at offset 24) into @p b. */
static inline void
frame_frags(uint8_t *a, uint8_t *b, uint32_t e, int side, uint16_t id)
{
	frame_bytes_side(a, e, side == 1);
	a[16] = 0;
	a[17] = 20 + 24;
	a[18] = (uint8_t)(id >> 8);
	a[19] = (uint8_t)id;
	a[20] = 0x20;           /* more fragments */
	a[21] = 0;
	memcpy(b, a, 34);
	b[17] = 20 + 8;
	b[20] = 0;
	b[21] = 3;              /* 3 x 8 bytes */
	memset(b + 34, 0, 8);
}

/* The next burst into @p ring: the next flows of the sequence, or while
 * warming up every flow in turn; frames as frame_write()'s @p side.
 * Forward mode, out of the warm-up: --icmp-errors' and --frags' share
 * of them as an ICMP error or two fragments. */
static inline void
source_fill(struct lane *l, struct rte_ring *ring, bool warm, int side)
{
	struct rte_mbuf *m[BURST];
	unsigned int sent;
	bool mix = !warm && side >= 0 &&
		(opt.icmp_err_below | opt.frag_below) != 0;

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
		e = flow_global(l, e);
		if (mix) {
			uint64_t r = cfu_splitmix64(&l->mix_rng);
			uint8_t *p = rte_pktmbuf_mtod(m[k], uint8_t *);

			/* what an earlier error or fragment left */
			memcpy(p, frame_head, FRAME_HEAD_LEN);
			if (r < opt.icmp_err_below) {
				frame_icmp_error(p, e & FLOW_MASK,
					(uint16_t)(1025 + (r >> 32) % 64511),
					side);
				m[k]->data_len = 70;
				m[k]->pkt_len = 70;
				continue;
			}
			r = cfu_splitmix64(&l->mix_rng);
			if (r < opt.frag_below && k + 1 < BURST) {
				uint8_t *b = rte_pktmbuf_mtod(m[k + 1],
					uint8_t *);

				memcpy(b, frame_head, FRAME_HEAD_LEN);
				frame_frags(p, b, e, side, l->ip_id++);
				m[k]->data_len = m[k]->pkt_len = FRAME_LEN;
				k++;
				m[k]->data_len = m[k]->pkt_len = FRAME_LEN;
				continue;
			}
		}
		frame_write(m[k], e, side);
	}
	sent = rte_ring_enqueue_burst(ring, (void **)m, BURST, NULL);
	if (sent < BURST)
		rte_pktmbuf_free_bulk(m + sent, BURST - sent);
}


/* ----------------------------------------------- pipeline_options.c */

/* Parse the bench's options (after the EAL's): 0, or -1 (said why). */
int parse_options(int argc, char **argv);

/* ----------------------------------------------- pipeline_handoff.c */

/* --handoff's cases: no handoff, then each --shares share. */
void handoff_cases_add(void);
void handoff_setup(void);
void handoff_main(FILE *csv);

/* ------------------------------------------------ pipeline_events.c */

void events_setup(enum variant v, bool fill);
void bare_drain(void);
void main_loop(void);
void events_main(FILE *csv);

/* --------------------------------------------------- bench_pipeline.c */

int lane_main(void *arg);
void tracker_params(struct cflow_tracker_params *p, uint64_t flows);
void run_init(struct app_run *run);
void run_config(struct result *res);
void quartiles(double *v, unsigned int n, double q[3]);

#endif /* _BENCH_PIPELINE_H_ */
