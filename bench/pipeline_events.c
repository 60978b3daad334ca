/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_pipeline's events variants: the application's flow events and
 * top sources (app/events.c, app/top.c) set up for each turn as the
 * application sets them up, the main lcore looping as its own does.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring_elem.h>

#include "events.h"
#include "pipeline.h"
#include "top.h"

/* Events mode: the outputs of variant @p v, set up as the application
 * sets them up (app_events_setup, app_top_setup): fresh files in
 * --ev-dir, the bench's own UDP receiver for IPFIX. */
void
events_setup(enum variant v, bool fill)
{
	char err[512];
	bool json = v == EV_JSON || v == EV_ALL || v == EV_ALL_TOP ||
		v == REC_JSON;
	bool ipfix = v == EV_IPFIX || v == EV_ALL || v == EV_ALL_TOP ||
		v == REC_IPFIX;
	bool pcap = v == EV_PCAPNG || v == EV_ALL || v == EV_ALL_TOP;
	/* records: the ring as ev_ring's while filling (new flows' records,
	 * which the drain drops) and for rec_ring */
	bool bare = (v == EV_RING || v == EV_MREF || v == REC_RING ||
		(IS_RECORDS(v) && fill));

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
	app_cfg.records = IS_RECORDS(v) ? APP_RECORDS_ON : APP_RECORDS_OFF;
	/* the key store: the flows a turn opens, not every slot (1 GiB
	 * at 10 M flows, calloc'd anew each turn); the records of flows
	 * opened before (while filling) are counted unnamed */
	app_cfg.records_max = UINT64_C(1) << 20;
	/* as main.c: events carry epoch times */
	bench_run.epoch_offset_ns = cfu_clock_ns(CLOCK_REALTIME) -
		app_tsc_ns(&bench_run);
	if (app_events_setup(&app_cfg, &bench_run, err, sizeof(err)) < 0 ||
			app_top_setup(&app_cfg, &bench_run, err,
				sizeof(err)) < 0)
		rte_exit(EXIT_FAILURE, "%s: %s\n", variant_names[v], err);
	/* ev_ring: the worker's side alone, into a ring as the app's */
	if (bare && (!fill || IS_RECORDS(v))) {
		bench_run.first_packets = v == EV_MREF && !fill;
		bench_run.records = IS_RECORDS(v);
		/* the app's element: short without first packets */
		bench_run.event_size = bench_run.first_packets ?
			sizeof(struct app_event) : APP_EVENT_SHORT;
		if (bare_ring[bench_run.first_packets] == NULL)
			bare_ring[bench_run.first_packets] =
				rte_ring_create_elem(bench_run.first_packets ?
				"bench_ev_ring" : "bench_ev_ring_short",
				bench_run.event_size,
				(unsigned int)opt.event_ring, (int)rte_socket_id(),
				RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (bare_ring[bench_run.first_packets] == NULL)
			rte_exit(EXIT_FAILURE, "ev_ring: %s\n",
				rte_strerror(rte_errno));
		workers[0].event_ring = bare_ring[bench_run.first_packets];
	}
}

/* ev_ring's drain: take every event, do nothing with it. */
void
bare_drain(void)
{
	static struct app_event e[256];
	struct app_worker *w = &workers[0];
	unsigned int n, freed = 0;
	uint32_t size = bench_run.event_size;

	if (w->event_ring == NULL)
		return;
	while ((n = rte_ring_sc_dequeue_burst_elem(w->event_ring, e, size,
			RTE_DIM(e), NULL)) != 0)
		for (unsigned int k = 0; k < n && bench_run.first_packets;
				k++) {
			struct app_event *x = app_event_at(e, k, size);

			if (x->m != NULL) {     /* ev_mref's */
				freed += x->m->nb_segs;
				rte_pktmbuf_free(x->m);
			}
		}
	/* as app/events.c: the worker may take as many again */
	__atomic_store_n(&w->event_mbufs_freed, w->event_mbufs_freed + freed,
		__ATOMIC_RELEASE);
}

/* Events mode: the application's main lcore loop while the lane runs
 * (main.c): drain the events, the top-sources period, sleep. */
void
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
		if (((current == EV_RING || current == EV_MREF ||
				current == REC_RING) && !filling) ||
				(IS_RECORDS(current) && filling)) {
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
void
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

