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
#include <stddef.h>
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

#include "config.h"
#include "control.h"
#include "cfutil.h"
#include "events.h"
#include "blocklist_rcu.h"
#include "output.h"
#include "ports.h"
#include "state.h"
#include "stats.h"
#include "telemetry.h"
#include "top.h"
#include "worker.h"

/* How long links may take to come up before a warning. */
#define LINK_WAIT_S 3

static struct app_config cfg;
static struct app_topology topo;
static struct app_worker workers[APP_MAX_WORKERS];
static struct app_run run;
static bool reload_requested;
static struct app_state_run state_run;

/* Lock-free atomic stores are async-signal-safe. SIGINT and SIGTERM
 * also stop every wait for a FIFO's reader (app/output.h). */
static void
signal_handler(int signum)
{
	if (signum == SIGHUP) {
		__atomic_store_n(&reload_requested, true, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&run.quit, true, __ATOMIC_RELEASE);
		app_output_interrupt();
	}
}

/* ----------------------------------------------------------- workers */

/* Does a worker read more than one rx queue? */
static bool
worker_reads_queues(const struct app_topology *t)
{
	unsigned int queues[APP_MAX_WORKERS] = { 0 };

	for (unsigned int e = 0; e < t->nb_map; e++)
		if (++queues[t->map[e].lcore] > 1)
			return true;
	return false;
}

/*
 * Replaying captures with a watermark, how far ahead of it a queue's
 * packets may go on to the trackers: their lag, so that none judges a
 * flow of a queue still behind at a time other than its own packets'
 * (app_run.lead_ns). Not on live ports: their queues are not held back.
 */
static uint64_t
lead_ns(void)
{
	if (!run.watermark)
		return 0;
	for (unsigned int i = 0; i < topo.nb_ports; i++)
		if (!topo.ports[i].replay)
			return 0;
	return cflow_tracker_lag_ns(workers[0].tracker);
}

static struct cflow_tracker *
tracker_create(struct app_worker *w)
{
	unsigned int lcore = w->lcore;
	struct cflow_tracker_params p;
	struct cflow_tracker *t;

	app_tracker_params(&run, (int)rte_lcore_to_socket_id(lcore), &p);
	p.record_arg = w;
	t = cflow_tracker_create(&p);
	if (t == NULL && errno == EINVAL && p.value_bits == 16)
		rte_exit(EXIT_FAILURE, "--age-bits 16: the longest timeout or "
			"linger, with --mirror-first's packet count and firewall "
			"roles' side bit, does not fit in 16 bits of state "
			"(about 13 days without them): use --age-bits 32\n");
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

	for (unsigned int i = 0; i < run.nb_workers; i++)
		t = RTE_MAX(t, __atomic_load_n(&workers[i].last_ns,
			__ATOMIC_RELAXED));
	return t;
}

/* --frag-datagrams: a worker's fragment follower (cflow_frag.h), with
 * room for what it gives back at once. It holds later fragments that
 * come before their first (--frag-hold) in firewall mode only, where a
 * fragment's fate is its flow's: elsewhere nothing depends on the flow
 * (a blocklist decides a fragment without its first by its addresses
 * and --blocklist-unparsed), so every frame goes on at once, in the
 * order it came (docs/firewall.md, Fragments). */
static void
frag_create(struct app_worker *w)
{
	uint64_t hold = app_config_firewall(&cfg) ? cfg.frag_hold : 0;
	struct cflow_frag_params p = {
		.datagrams = (uint32_t)cfg.frag_datagrams,
		.hold = (uint32_t)hold,
		.no_hold = hold == 0,
		.timeout_ns = cfg.frag_timeout_s * UINT64_C(1000000000),
	};

	if (cfg.frag_datagrams == 0)
		return;
	w->frag = cflow_frag_create(&p);
	w->frag_ready = calloc(hold + CF_BULK_MAX, sizeof(*w->frag_ready));
	if (w->frag == NULL || w->frag_ready == NULL)
		rte_exit(EXIT_FAILURE, "fragment follower of %" PRIu64
			" datagrams on lcore %u: %s\n", cfg.frag_datagrams,
			w->lcore, strerror(errno != 0 ? errno : ENOMEM));
}

/* One worker per worker lcore, with its table, its rx queues from the
 * map and, with handoff, a ring from every other worker. */
static void
workers_setup(void)
{
	unsigned int n = topo.nb_workers;
	int ret;

	for (unsigned int i = 0; i < n; i++) {
		struct app_worker *w = &workers[i];

		w->run = &run;
		w->lcore = topo.lcores[i];
		w->index = i;
		w->tracker = tracker_create(w);
		frag_create(w);
	}
	for (unsigned int e = 0; e < topo.nb_map; e++) {
		struct app_worker *w = &workers[topo.map[e].lcore];
		const struct app_port *p = NULL;

		for (unsigned int i = 0; i < topo.nb_ports; i++)
			if (topo.ports[i].id == topo.map[e].port)
				p = &topo.ports[i];
		if (w->nb_rxq == APP_MAX_QUEUES_PER_LCORE)
			rte_exit(EXIT_FAILURE, "more than %d rx queues on lcore "
				"%u\n", APP_MAX_QUEUES_PER_LCORE, w->lcore);
		w->rxq[w->nb_rxq++] = (struct app_rxq){
			.port = topo.map[e].port, .queue = topo.map[e].queue,
			.pcap = p->pcap, .parse = run.parse,
		};
		w->rxq[w->nb_rxq - 1].parse.link_type = p->link_type;
	}
	ret = run.handoff ? app_handoff_rings_create(workers, n,
			(unsigned int)cfg.handoff_ring) : 0;
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "handoff rings of %" PRIu64 " packets: "
			"%s\n", cfg.handoff_ring, rte_strerror(-ret));
}

static void
workers_free(void)
{
	for (unsigned int i = 0; i < run.nb_workers; i++) {
		cflow_tracker_free(workers[i].tracker);
		cflow_frag_free(workers[i].frag);
		free(workers[i].frag_ready);
	}
	app_handoff_rings_free(workers, run.nb_workers);
}

/*
 * --state-file at start: read it before the trackers are made (a saved
 * state brings its hash seed). Refused files are reported and ignored:
 * the run starts with empty tables and replaces the file at exit.
 */
static struct app_state *
state_read(void)
{
	struct cflow_tracker_params p;
	struct app_state *s;
	char err[512];

	if (cfg.state_file[0] == '\0')
		return NULL;
	state_run = (struct app_state_run){
		.nb_workers = run.nb_workers, .handoff = run.handoff,
		.clock = cfg.clock, .seed_set = cfg.hash_seed_set,
		.seed = cfg.hash_seed,
		/* the firewall the tables were made under */
		.inside_mask = cfg.inside_mask,
		.outside_mask = cfg.outside_mask,
		.mirror_port = cfg.mirror_port,
		.allow = run.allow != NULL ? cbl_allow_digest(run.allow) : 0,
		/* Only where it chooses among several workers. */
		.queue_map = run.nb_workers > 1 && !run.handoff ?
			app_state_queue_map(topo.map, topo.nb_map) : 0,
	};
	if (run.allow != NULL && state_run.allow == 0)
		rte_exit(EXIT_FAILURE, "--allow: %s\n", strerror(errno));
	/* The file is read whole: no larger than this run's tables can
	 * save (every worker's alike: the lcore only places it). */
	app_tracker_params(&run, (int)rte_lcore_to_socket_id(topo.lcores[0]),
		&p);
	state_run.table_max = cflow_tracker_save_bound(&p);
	if (app_state_read(cfg.state_file, &state_run, &s, err,
			sizeof(err)) < 0) {
		fprintf(stderr, "cuckooflow: --state-file %s: ignored, starting "
			"with empty flow tables\n", err);
		return NULL;
	}
	if (s == NULL)
		printf("state: %s: none yet, starting with empty flow "
			"tables\n", cfg.state_file);
	return s;
}

/* Each worker takes its saved table over, or none does; the clock goes
 * on from the saved one. */
static void
state_restore(struct app_state *s)
{
	uint64_t flows = 0, down_ns;
	char err[512];
	unsigned int i;

	if (s == NULL)
		return;
	for (i = 0; i < run.nb_workers; i++)
		if (app_state_restore(s, i, workers[i].tracker, err,
				sizeof(err)) < 0)
			break;
	if (i < run.nb_workers) {
		fprintf(stderr, "cuckooflow: --state-file %s: %s: ignored, "
			"starting with empty flow tables\n", cfg.state_file, err);
		for (unsigned int k = 0; k <= i; k++) {
			cflow_tracker_free(workers[k].tracker);
			workers[k].tracker = tracker_create(&workers[k]);
		}
		return;
	}
	for (i = 0; i < run.nb_workers; i++) {
		struct cflow_counters c;

		cflow_counters_get(workers[i].tracker, &c);
		flows += c.flows_restored;
	}
	run.clock_offset_ns = app_state_clock_offset(s, app_tsc_ns(&run),
		&down_ns);
	printf("state: %s: took over %" PRIu64 " open flows of %u workers, "
		"saved %.1f s ago\n", cfg.state_file, flows, run.nb_workers,
		(double)down_ns / 1e9);
}

/* --state-file at exit, once the workers have stopped. */
static int
state_write(void)
{
	uint64_t flows, clock_ns;
	char err[512];

	if (cfg.state_file[0] == '\0')
		return 0;
	state_run.seed = run.hash_seed;
	clock_ns = cfg.clock == APP_CLOCK_PKT ? last_packet_time() :
		app_tsc_ns(&run);
	if (app_state_write(cfg.state_file, &state_run, workers, clock_ns,
			&flows, err, sizeof(err)) < 0) {
		fprintf(stderr, "cuckooflow: --state-file: %s\n", err);
		return -1;
	}
	printf("state: %s: saved %" PRIu64 " open flows of %u workers\n",
		cfg.state_file, flows, run.nb_workers);
	return 0;
}

/* Every worker (acquire) has @p flag set. */
static bool
all_workers(size_t flag_offset)
{
	for (unsigned int i = 0; i < run.nb_workers; i++)
		if (!__atomic_load_n((bool *)((char *)&workers[i] +
				flag_offset), __ATOMIC_ACQUIRE))
			return false;
	return true;
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
			strncmp(argv[i], "--huge-unlink", 13) == 0 ||
			/* which the EAL refuses with --huge-unlink */
			strcmp(argv[i], "--single-file-segments") == 0;
	out[n++] = argv[0];
	if (!chosen)
		out[n++] = unlink_opt;
	for (int i = 1; i < argc; i++)
		out[n++] = argv[i];
	*eal_argc = n;
	return out;
}

/* Firewall roles, the allow list and the mirror port into the run. */
static void
roles_setup(void)
{
	char err[512];

	for (unsigned int i = 0; i < topo.nb_ports; i++) {
		uint16_t id = topo.ports[i].id;

		run.role[id] = (cfg.inside_mask >> id) & 1 ? APP_ROLE_INSIDE :
			(cfg.outside_mask >> id) & 1 ? APP_ROLE_OUTSIDE :
			APP_ROLE_NONE;
	}
	if (cfg.mirror_port != APP_NO_PORT) {
		run.mirror = true;
		run.mirror_port = (uint16_t)cfg.mirror_port;
		run.mirror_first = (uint8_t)cfg.mirror_first;
		run.role[run.mirror_port] = APP_ROLE_MIRROR;
	}
	if (cfg.allow[0] != '\0') {
		run.allow = cbl_allow_read(cfg.allow, err, sizeof(err));
		if (run.allow == NULL)
			rte_exit(EXIT_FAILURE, "--allow: %s\n", err);
	}
}

int
main(int argc, char **argv)
{
	uint64_t last_print, started, lost;
	struct app_output lines_out;   /* --stats-json-period */
	struct app_output *stats_lines = NULL;
	bool stats_lines_failed = false;
	bool links_checked = false;
	char **eal_argv, err[APP_BLOCKLIST_ERR_MAX], msg[8192];
	struct app_state *state;
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
	ret = app_config_parse(&cfg, argc, argv, msg, sizeof(msg));
	fputs(msg, stderr);
	if (ret != 0) {
		rte_eal_cleanup();
		free(eal_argv);
		return ret == APP_CONFIG_HELP ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	signal(SIGINT, signal_handler);
	signal(SIGTERM, signal_handler);
	signal(SIGHUP, signal_handler);
	/* A FIFO output's reader gone, a file past RLIMIT_FSIZE: write
	 * errors (EPIPE, EFBIG), reported and counted, not the end */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);

	if (app_topology_setup(&topo, &cfg, msg, sizeof(msg)) < 0)
		rte_exit(EXIT_FAILURE, "%s\n", msg);
	run.cfg = &cfg;
	run.workers = workers;
	run.nb_workers = topo.nb_workers;
	run.handoff = topo.handoff;
	run.handoff_wait = topo.handoff_wait;
	/* Several streams into one tracker: a replay's flows are judged at
	 * their own times, idleness as of a watermark (docs/design.md). */
	run.watermark = cfg.clock == APP_CLOCK_PKT &&
		(run.handoff || worker_reads_queues(&topo));
	memcpy(run.tx_port, topo.tx_port, sizeof(run.tx_port));
	roles_setup();
	app_run_reta_init(&run);
	state = state_read();
	if (cfg.hash_seed_set)
		run.hash_seed = cfg.hash_seed;
	else if (state != NULL)
		run.hash_seed = app_state_seed(state);
	else
		run.hash_seed = cflow_random_seed();
	app_run_clock_init(&run, rte_get_tsc_hz());
	run.timestamp_offset = rte_mbuf_dynfield_lookup(
			RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	ret = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);
	run.timestamp_flag = ret >= 0 ? RTE_BIT64(ret) : 0;
	run.verdict_offset = app_verdict_dynfield_register();
	if (run.verdict_offset < 0)
		rte_exit(EXIT_FAILURE, "mbuf dynfield %s: %s\n",
			APP_VERDICT_DYNFIELD, rte_strerror(-run.verdict_offset));
	if (cfg.clock == APP_CLOCK_PKT && run.timestamp_offset < 0)
		rte_exit(EXIT_FAILURE, "--clock pkt: no port attaches capture "
			"timestamps (net_pcap does)\n");
	run.parse = app_run_parse_params(&cfg, run.hash_seed);
	workers_setup();
	run.lead_ns = lead_ns();
	state_restore(state);
	app_state_free(state);
	if (app_blocklist_init(cfg.blocklist, run.nb_workers, err,
			sizeof(err)) != 0)
		rte_exit(EXIT_FAILURE, "%s\n", err);
	if (app_blocklist_telemetry(msg, sizeof(msg)) < 0 ||
			app_stats_setup(&cfg, workers, run.nb_workers, &topo, msg,
				sizeof(msg)) < 0)
		rte_exit(EXIT_FAILURE, "%s\n", msg);
	/* Events carry epoch times: the TSC clock's offset to the wall
	 * clock, taken once. */
	if (cfg.clock != APP_CLOCK_PKT)
		run.epoch_offset_ns = cfu_clock_ns(CLOCK_REALTIME) -
			app_tsc_ns(&run);
	if (app_events_setup(&cfg, &run, msg, sizeof(msg)) < 0 ||
			app_control_setup(&run, msg, sizeof(msg)) < 0 ||
			app_top_setup(&cfg, &run, msg, sizeof(msg)) < 0)
		rte_exit(EXIT_FAILURE, "%s\n", msg);
	if (cfg.stats_json_period[0] != '\0') {
		/* appended to: log shippers follow the file */
		if (app_output_open(&lines_out, cfg.stats_json_period, true,
				APP_OUTPUT_LINES, msg, sizeof(msg)) < 0)
			rte_exit(EXIT_FAILURE, "cuckooflow: --stats-json-period "
				"%s\n", msg);
		stats_lines = &lines_out;
	}
	app_topology_print(&topo, &cfg, workers, stdout);
	/* the clone of lib/cuckoo's hot functions this CPU runs */
	printf("cuckooflow: code path %s\n", cf_dispatch_isa());

	for (unsigned int i = 0; i < run.nb_workers; i++)
		rte_eal_remote_launch(app_worker_main, &workers[i],
			workers[i].lcore);

	started = last_print = rte_get_timer_cycles();
	while (!__atomic_load_n(&run.quit, __ATOMIC_ACQUIRE)) {
		uint64_t now = rte_get_timer_cycles();

		if (!run.end_set && all_workers(offsetof(struct app_worker,
				done))) {
			run.end_ns = last_packet_time();
			__atomic_store_n(&run.end_set, true, __ATOMIC_RELEASE);
		}
		if (cfg.exit_on_eof && all_workers(offsetof(struct app_worker,
				swept)))
			break;
		if (__atomic_exchange_n(&reload_requested, false,
				__ATOMIC_RELAXED)) {
			if (app_blocklist_reload(NULL, err, sizeof(err)) != 0)
				fprintf(stderr, "cuckooflow: SIGHUP reload: %s "
					"(previous list kept)\n", err);
		}
		if (!links_checked && now - started > LINK_WAIT_S *
				rte_get_timer_hz()) {
			app_topology_check_links(&topo);
			links_checked = true;
		}
		if (cfg.stats_period_s != 0 && now - last_print >
				cfg.stats_period_s * rte_get_timer_hz()) {
			if (app_stats_period(stdout, stats_lines) != 0 &&
					!stats_lines_failed) {
				fprintf(stderr, "cuckooflow: --stats-json-period "
					"%s: write error\n",
					cfg.stats_json_period);
				stats_lines_failed = true;
			}
			last_print = now;
		}
		if (cfg.emergency_load != 0)
			app_stats_emergency_log(stdout);
		/* Sleep, not spin: the main lcore has no datapath work but
		 * the events, drained every millisecond. */
		if (app_events_enabled(&cfg))
			app_events_drain();
		app_top_period();
		rte_delay_us_sleep(app_events_enabled(&cfg) ? 1000 : 10000);
	}
	__atomic_store_n(&run.quit, true, __ATOMIC_RELEASE);
	rte_eal_mp_wait_lcore();
	/* The trackers' records from here on go straight out. */
	app_events_workers_stopped();
	/* The final sweep may have changed it too. */
	if (cfg.emergency_load != 0)
		app_stats_emergency_log(stdout);

	/* Exact end-of-run counters: a full pass at the last packet time of
	 * all lcores (already made if the captures ended). */
	for (unsigned int i = 0; i < run.nb_workers; i++)
		if (!workers[i].swept)
			(void)cflow_sweep_all(workers[i].tracker,
				last_packet_time());
	app_stats_print(stdout);
	app_top_print_final(stdout);
	ret = state_write() == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	/* Every flow left in the tables ends with the run: its record. */
	app_events_records_end();
	/* Nothing telemetry reads may go before its handlers stop: the
	 * events' encoder (/cuckooflow/events) goes next. */
	app_telemetry_stop();
	if (app_events_close() != 0)
		ret = EXIT_FAILURE;
	/* A replay that lost packets must not look complete. */
	if (cfg.exit_on_eof && app_topology_check_replay(&topo, workers, err,
			sizeof(err)) != 0) {
		fprintf(stderr, "cuckooflow: %s\n", err);
		ret = EXIT_FAILURE;
	}
	lost = cfg.exit_on_eof ? app_stats_rx_lost() : 0;
	if (lost != 0) {
		fprintf(stderr, "cuckooflow: %" PRIu64 " packets were not "
			"received (rx_nombuf, rx_missed, rx_errors above): raise "
			"--mbufs, or --max-pkt-len for jumbo frames\n", lost);
		ret = EXIT_FAILURE;
	}
	lost = cfg.exit_on_eof ? app_stats_rx_len_mismatch() : 0;
	if (lost != 0) {
		fprintf(stderr, "cuckooflow: %" PRIu64 " frames were dropped "
			"unread, their mbuf chain shorter than their length "
			"(rx_len_mismatch above: net_pcap cuts records over "
			"65535 bytes)\n", lost);
		ret = EXIT_FAILURE;
	}
	if (cfg.stats_json[0] != '\0' && app_stats_write_json(cfg.stats_json,
			msg, sizeof(msg)) != 0) {
		fprintf(stderr, "cuckooflow: --stats-json %s\n", msg);
		ret = EXIT_FAILURE;
	}
	if (stats_lines != NULL && (app_output_close(stats_lines) != 0 ||
			stats_lines_failed)) {
		fprintf(stderr, "cuckooflow: --stats-json-period %s: write "
			"error\n", cfg.stats_json_period);
		ret = EXIT_FAILURE;
	}
	if (stats_lines != NULL && stats_lines->lost != 0)
		fprintf(stderr, "cuckooflow: --stats-json-period %s: %" PRIu64
			" lines lost (the FIFO's reader did not take them in "
			"time, or write errors)\n", cfg.stats_json_period,
			stats_lines->lost);
	app_top_fini();
	app_topology_close(&topo);
	workers_free();
	app_blocklist_fini();
	cbl_allow_free((struct cbl_allow *)(uintptr_t)run.allow);
	rte_eal_cleanup();
	free(eal_argv);
	return ret;
}
