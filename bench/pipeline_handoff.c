/* SPDX-License-Identifier: BSD-3-Clause */

/* bench_pipeline --handoff: the application's software flow affinity. */

#include <inttypes.h>
#include <stdlib.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "pipeline.h"

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
void
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
void
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


void
handoff_cases_add(void)
{
	/* no handoff, then each share */
	hcases[nb_hcases++] = (struct hcase){ .share = 0 };
	for (unsigned int k = 0; k < opt.nb_shares; k++)
		hcases[nb_hcases++] = (struct hcase){
			.share = opt.shares[k], .handoff = true,
		};
}
