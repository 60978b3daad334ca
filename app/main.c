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
#include <pthread.h>
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
#include <rte_pdump.h>

#include "config.h"
#include "checkpoint.h"
#include "control.h"
#include "cfutil.h"
#include "eal_help.h"
#include "events.h"
#include "blocklist_rcu.h"
#include "log.h"
#include "losses.h"
#include "notify.h"
#include "output.h"
#include "ports.h"
#include "state.h"
#include "stats.h"
#include "telemetry.h"
#include "top.h"
#include "worker.h"

/* How long links may take to come up before a warning. */
#define LINK_WAIT_S 3
/* A replay's progress without --stats-period: this often. */
#define PROGRESS_S 10

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
	return app_run_latest_ns(workers, run.nb_workers);
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
	/* the flow records' keys: an entry a flow the tables hold (also
	 * without records: a file saved with them is refused for that, not
	 * for its size) */
	state_run.keys_max = cflow_recstore_save_bound(RTE_MIN(
		app_config_records(&cfg) && cfg.records_max != 0 ?
		cfg.records_max : run.nb_workers *
		cflow_tracker_flows_bound(&p), UINT64_C(1) << 31));
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
 * on from the saved one. True if they did. */
static bool
state_restore(struct app_state *s)
{
	uint64_t flows = 0, down_ns;
	char err[512];
	unsigned int i;

	if (s == NULL)
		return false;
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
		return false;
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
	return true;
}

/* The flow records' keys of the tables taken over: their flows' next
 * records are named (once the records' store exists). */
static void
state_keys_restore(const struct app_state *s)
{
	size_t len;
	const void *keys = app_state_keys(s, &len);
	int64_t n = app_events_keys_restore(keys, len);

	if (n < 0)
		fprintf(stderr, "cuckooflow: --state-file %s: the flow records' "
			"keys: %s: the flows taken over end in unnamed records "
			"(records_unnamed)\n", cfg.state_file, strerror((int)-n));
	else if (len != 0)
		printf("state: %s: took over the keys of %" PRId64 " flows' "
			"records\n", cfg.state_file, n);
}

/* --state-file at exit, once the workers have stopped. */
static int
state_write(void)
{
	uint64_t flows, clock_ns;
	char err[512];
	void *keys;
	int64_t keys_len;
	int ret;

	if (cfg.state_file[0] == '\0')
		return 0;
	clock_ns = app_checkpoint_clock(&run);
	/* The flows' keys, so that their records after a restart are
	 * named: they start at this save (the forced records at this exit
	 * count the packets before). */
	keys_len = app_checkpoint_keys(&run, &keys);
	if (keys_len < 0) {
		fprintf(stderr, "cuckooflow: --state-file: the flow records' "
			"keys: %s\n", strerror((int)-keys_len));
		return -1;
	}
	ret = app_state_write(cfg.state_file, &state_run, workers, NULL, NULL,
		clock_ns, keys, (uint64_t)keys_len, &flows, err, sizeof(err));
	free(keys);
	if (ret < 0) {
		fprintf(stderr, "cuckooflow: --state-file: %s\n", err);
		return -1;
	}
	printf("state: %s: saved %" PRIu64 " open flows of %u workers\n",
		cfg.state_file, flows, run.nb_workers);
	return 0;
}

/* Under the packet clock, the capture time a replay covered: from its
 * first record to the last packet; else 0. */
static uint64_t
top_capture_ns(void)
{
	uint64_t done, total, first, last, now = last_packet_time();

	if (cfg.clock != APP_CLOCK_PKT || !app_topology_replay_progress(&topo,
			workers, &done, &total, &first, &last) || first == 0 ||
			now < first)
		return 0;
	return now - first;
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
 * What needs no EAL: --help and --version (before "--" or after), and
 * a missing "--" before the application's options, which the EAL would
 * answer with its whole usage. Returns an exit status, or -1 to go on.
 */
static int
before_eal(int argc, char **argv)
{
	int dashes = argc;
	char msg[65536];

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dashes = i;
			break;
		}
	argv[0] = (char *)"cuckooflow";
	for (int i = 1; i < argc; i++) {
		char *alone[] = { argv[0], argv[i], NULL };

		if (strcmp(argv[i], "-h") != 0 && strcmp(argv[i], "--help") != 0 &&
				strcmp(argv[i], "--version") != 0)
			continue;
		/* after "--", the application's whole line (its errors
		 * first); before, the option alone */
		if (i > dashes) {
			argv[dashes] = argv[0];
			return app_config_parse(&cfg, argc - dashes,
				argv + dashes, msg, sizeof(msg)) ==
				APP_CONFIG_HELP ? EXIT_SUCCESS : (fputs(msg,
				stderr), EXIT_FAILURE);
		}
		return app_config_parse(&cfg, 2, alone, msg, sizeof(msg)) ==
			APP_CONFIG_HELP ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	if (dashes != argc)
		return -1;
	for (int i = 1; i < argc; i++)
		/* --allow is the EAL's too (-a, a PCI device) */
		if (app_config_is_option(argv[i]) &&
				strncmp(argv[i], "--allow", 7) != 0) {
			fprintf(stderr, "cuckooflow: %s is an option of "
				"cuckooflow, not of the EAL: put it after \"--\" "
				"(cuckooflow [EAL options] -- [options])\n",
				argv[i]);
			return EXIT_FAILURE;
		}
	return -1;
}

struct settings_visit {
	char (*def)[2][320];    /* section.key, value of the defaults */
	unsigned int n, k;
	char *buf;
	size_t len, used;
};

static void
settings_default(const char *section, const char *key, const char *value,
		void *arg)
{
	struct settings_visit *v = arg;

	if (v->n == 256)
		return;
	snprintf(v->def[v->n][0], sizeof(v->def[0][0]), "%s.%s", section,
		key);
	snprintf(v->def[v->n++][1], sizeof(v->def[0][1]), "%s", value);
}

/* In the same order as the defaults' visit. */
static void
settings_changed(const char *section, const char *key, const char *value,
		void *arg)
{
	struct settings_visit *v = arg;
	unsigned int k = v->k++;

	if (k < v->n && strcmp(v->def[k][1], value) == 0)
		return;
	if (v->used < v->len)
		v->used += (size_t)snprintf(v->buf + v->used, v->len - v->used,
			"%s%s.%s=%s", v->used ? " " : "", section, key, value);
}

/* The settings not at their defaults, as section.key=value. */
static void
settings_text(char *buf, size_t len)
{
	struct app_config *def = malloc(sizeof(*def));
	char *none[] = { (char *)"cuckooflow", NULL };
	struct settings_visit v = { .buf = buf, .len = len };

	snprintf(buf, len, "all at their defaults");
	v.def = calloc(256, sizeof(*v.def));
	/* the defaults as a run without options resolves them */
	if (def == NULL || v.def == NULL ||
			app_config_parse(def, 1, none, NULL, 0) != 0)
		goto out;
	app_config_visit(def, settings_default, &v);
	app_config_visit(&cfg, settings_changed, &v);
out:
	free(v.def);
	free(def);
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

/* The banner's lines on what runs: version, settings, timeouts,
 * lists, outputs. */
static void
banner(FILE *out)
{
	char text[4096];
	size_t n = 0;

	/* and the clone of lib/cuckoo's hot functions this CPU runs */
	fprintf(out, "%s, code path %s\n", app_config_version(),
		cf_dispatch_isa());
	settings_text(text, sizeof(text));
	fprintf(out, "settings: %s\n", text);
	fprintf(out, "timeouts: tcp %" PRIu64 " s, udp %" PRIu64 " s, icmp %"
		PRIu64 " s, other %" PRIu64 " s, close linger %" PRIu64 " s",
		cfg.timeout_s[CFLOW_CLASS_TCP], cfg.timeout_s[CFLOW_CLASS_UDP],
		cfg.timeout_s[CFLOW_CLASS_ICMP],
		cfg.timeout_s[CFLOW_CLASS_OTHER], cfg.close_linger_s);
	if (cfg.emergency_load != 0)
		fprintf(out, "; %" PRIu64 " s each in an emergency (above %"
			PRIu64 "%% load)", cfg.emergency_timeout_s,
			cfg.emergency_load);
	fprintf(out, "\n");
	app_blocklist_describe(text, sizeof(text));
	fprintf(out, "blocklist: %s\n", text);
	if (app_config_firewall(&cfg))
		fprintf(out, "firewall: inside %s, outside %s; allow %s (%"
			PRIu64 " rules); tcp strict %s; unparsed %s\n",
			cfg.inside_text, cfg.outside_text, cfg.allow[0] ?
			cfg.allow : "none", run.allow != NULL ?
			cbl_allow_rules(run.allow) : 0, cfg.tcp_strict ? "on" :
			"off", cfg.firewall_unparsed == APP_UNPARSED_PASS ?
			"pass" : "drop");
	else
		fprintf(out, "firewall: off (no --inside, --outside)\n");
#define OUT(cond, ...) do { \
		if ((cond) && n < sizeof(text)) \
			n += (size_t)snprintf(text + n, sizeof(text) - n, \
				__VA_ARGS__); \
	} while (0)
	OUT(cfg.events[0], "%sevents %s", n ? ", " : "", cfg.events);
	OUT(cfg.ipfix[0], "%sipfix %s (domain %" PRIu64 ")", n ? ", " : "",
		cfg.ipfix, cfg.ipfix_domain);
	OUT(cfg.new_flow_pcap[0], "%snew-flow-pcap %s", n ? ", " : "",
		cfg.new_flow_pcap);
	OUT(cfg.stats_json[0], "%sstats-json %s", n ? ", " : "",
		cfg.stats_json);
	OUT(cfg.stats_json_period[0], "%sstats-json-period %s", n ? ", " : "",
		cfg.stats_json_period);
	OUT(cfg.stats_period_s, "%sstats every %" PRIu64 " s%s", n ? ", " : "",
		cfg.stats_period_s, cfg.stats_all ? " (all counters)" : "");
	OUT(cfg.state_file[0], "%sstate-file %s (saved at exit%s", n ? ", " :
		"", cfg.state_file, cfg.state_interval_s ? " and every " : ")");
	OUT(cfg.state_file[0] && cfg.state_interval_s, "%" PRIu64 " s)",
		cfg.state_interval_s);
	OUT(cfg.top_sources, "%stop sources every %" PRIu64 " s", n ? ", " :
		"", cfg.top_period_s);
	OUT(n == 0, "none");
#undef OUT
	fprintf(out, "outputs: %s\n", text);
}

/*
 * SIGHUP: the outputs opened anew at their paths (logrotate's create),
 * and the blocklist read again on a thread of its own: a list of a
 * million entries takes a second or more to read and build, and the main
 * lcore drains the event rings every millisecond (a reload on it dropped
 * 155,930 events and 77,964 records with --records, at mixed.pcap's
 * rate). READY=1 once the list is in place; a SIGHUP meanwhile is made
 * after it.
 */
static struct {
	pthread_t thread;
	bool running;
	bool done;
} hup;

static void *
reload_main(void *arg)
{
	char err[APP_BLOCKLIST_ERR_MAX], text[APP_BLOCKLIST_ERR_MAX + 128];
	int ret;

	(void)arg;
	ret = app_blocklist_reload(NULL, err, sizeof(err));
	if (ret == 0) {
		app_blocklist_describe(text, sizeof(text));
		app_log(APP_LOG_NOTICE, "SIGHUP: blocklist reloaded: %s", text);
	} else if (ret != -ENOENT) {
		app_log(APP_LOG_ERR, "SIGHUP reload: %s (previous list kept)",
			err);
	}
	__atomic_store_n(&hup.done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The SIGHUP's reload, once its thread is done (or at once with @p wait:
 * at exit). */
static void
reload_finish(bool wait)
{
	if (!hup.running || (!wait &&
			!__atomic_load_n(&hup.done, __ATOMIC_ACQUIRE)))
		return;
	pthread_join(hup.thread, NULL);
	hup.running = false;
	app_notify_ready("running (reloaded)");
}

static void
reload(void)
{
	int ret;

	app_notify_reloading();
	app_events_reopen();
	app_stats_reopen();
	hup.done = false;
	ret = pthread_create(&hup.thread, NULL, reload_main, NULL);
	if (ret == 0) {
		hup.running = true;
		return;
	}
	/* no thread: here, as before */
	app_log(APP_LOG_WARNING, "SIGHUP: a thread for the reload: %s (made "
		"on the main lcore)", strerror(ret));
	reload_main(NULL);
	app_notify_ready("running (reloaded)");
}

int
main(int argc, char **argv)
{
	uint64_t last_print, last_progress, started, started_ns;
	bool links_checked = false, replay, restored;
	char err[APP_BLOCKLIST_ERR_MAX], msg[8192];
	struct app_state *state;
	int ret, lost;

	/* A SIGHUP from the start on asks for a reload, made once the run
	 * goes (its default action would end the process: `kill -HUP` or
	 * ExecReload during the EAL's start, which takes a while). SIGINT
	 * and SIGTERM keep theirs until the EAL is up: they stop a start
	 * that hangs. */
	signal(SIGHUP, signal_handler);
	/* Lists are read only while no other process writes them, asked
	 * with a file lease taken and given back at once (cfutil.h:
	 * cfu_file_no_writer()); a writer opening the file in between
	 * sends SIGIO, whose default action would end the process. */
	signal(SIGIO, SIG_IGN);
	app_log_init();
	ret = before_eal(argc, argv);
	if (ret >= 0)
		return ret;
	/* Hugepage files are kept while the run goes on (not
	 * --huge-unlink): DPDK's multi-process tools, dpdk-dumpcap and
	 * dpdk-proc-info, attach to them (docs/usage.md). */
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		int e = rte_errno;

		if (app_eal_explain(argc, argv, msg, sizeof(msg)) == 0)
			fprintf(stderr, "cuckooflow: the EAL did not start: %s\n",
				msg);
		else
			fprintf(stderr, "cuckooflow: the EAL did not start%s%s "
				"(its messages above say why; --log-level "
				"may hide them)\n", e != 0 ? ": " : "",
				e != 0 ? rte_strerror(e) : "");
		return EXIT_FAILURE;
	}
	started_ns = cfu_clock_ns(CLOCK_MONOTONIC);
	argc -= ret;
	argv += ret;
	argv[0] = "cuckooflow";
	ret = app_config_parse(&cfg, argc, argv, msg, sizeof(msg));
	fputs(msg, stderr);
	if (ret != 0) {
		rte_eal_cleanup();
		return ret == APP_CONFIG_HELP ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	signal(SIGINT, signal_handler);
	signal(SIGTERM, signal_handler);
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
	for (unsigned int i = 0; i < topo.nb_ports; i++)
		run.link_gated[topo.ports[i].id] = topo.ports[i].link_gated;
	roles_setup();
	app_run_reta_init(&run);
	state = state_read();
	if (cfg.hash_seed_set)
		run.hash_seed = cfg.hash_seed;
	else if (state != NULL)
		run.hash_seed = app_state_seed(state);
	else
		run.hash_seed = cflow_random_seed();
	/* The seed the tables hash with, in every save: the periodic ones
	 * (--state-interval) too, which once wrote --hash-seed's 0 and so
	 * were refused after a crash ("saved with another seed"). */
	state_run.seed = run.hash_seed;
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
	restored = state_restore(state);
	if (app_blocklist_init(cfg.blocklist, run.nb_workers, err,
			sizeof(err)) != 0)
		rte_exit(EXIT_FAILURE, "%s\n", err);
	if (app_blocklist_telemetry(msg, sizeof(msg)) < 0 ||
			app_stats_setup(&cfg, workers, run.nb_workers, &topo, msg,
				sizeof(msg)) < 0 ||
			app_losses_setup(workers, run.nb_workers, &topo, msg,
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
	if (restored)
		state_keys_restore(state);
	app_state_free(state);
	/* dpdk-dumpcap's captures of the ports (rte_pdump) */
	if (rte_pdump_init() != 0)
		app_log(APP_LOG_WARNING, "rte_pdump_init: %s: dpdk-dumpcap "
			"cannot capture this run's ports",
			rte_strerror(rte_errno));
	banner(stdout);
	app_topology_print(&topo, &cfg, workers, stdout);

	for (unsigned int i = 0; i < run.nb_workers; i++)
		rte_eal_remote_launch(app_worker_main, &workers[i],
			workers[i].lcore);
	if (app_checkpoint_start(&run, &state_run, msg, sizeof(msg)) < 0)
		rte_exit(EXIT_FAILURE, "%s\n", msg);
	snprintf(msg, sizeof(msg), "running: %u worker%s, %u port%s",
		run.nb_workers, run.nb_workers == 1 ? "" : "s", topo.nb_ports,
		topo.nb_ports == 1 ? "" : "s");
	app_notify_ready(msg);
	replay = app_topology_replay_progress(&topo, workers,
		&(uint64_t){ 0 }, &(uint64_t){ 0 }, &(uint64_t){ 0 },
		&(uint64_t){ 0 });

	started = last_print = last_progress = rte_get_timer_cycles();
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
		reload_finish(false);
		if (!hup.running && __atomic_exchange_n(&reload_requested,
				false, __ATOMIC_RELAXED))
			reload();
		if (!links_checked && now - started > LINK_WAIT_S *
				rte_get_timer_hz()) {
			app_topology_check_links(&topo);
			links_checked = true;
		}
		if (cfg.stats_period_s != 0 && now - last_print >
				cfg.stats_period_s * rte_get_timer_hz()) {
			app_stats_period(stdout);
			last_print = now;
		} else if (cfg.stats_period_s == 0 && replay && !run.end_set &&
				now - last_progress > PROGRESS_S *
				rte_get_timer_hz()) {
			app_stats_progress(stdout);
			last_progress = now;
		}
		app_losses_watch();
		app_topology_links_watch();
		if (cfg.emergency_load != 0)
			app_stats_emergency_log(stdout);
		/* Sleep, not spin: the main lcore has no datapath work but
		 * the events, drained every millisecond. */
		if (app_events_enabled(&cfg))
			app_events_drain();
		app_top_period();
		app_checkpoint_serve();
		rte_delay_us_sleep(app_events_enabled(&cfg) ? 1000 : 10000);
	}
	app_notify_stopping();
	/* a reload under way ends (the workers, going offline, hold up no
	 * RCU wait) before the list is freed */
	reload_finish(true);
	/* a save under way is left off at once: a SIGINT or SIGTERM has
	 * stopped the workers already (run.quit), and they serve no more
	 * requests; the exit's save follows */
	app_checkpoint_stop();
	__atomic_store_n(&run.quit, true, __ATOMIC_RELEASE);
	rte_eal_mp_wait_lcore();
	/* the ports' counters are final now: the rings' drops too */
	app_topology_rings_final(&topo);
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
	ret = state_write() == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	/* Every flow left in the tables ends with the run: its record. */
	app_events_records_end();
	/* Nothing telemetry reads may go before its handlers stop: the
	 * events' encoder (/cuckooflow/events) goes next. */
	app_telemetry_stop();
	if (app_events_close() != 0)
		ret = EXIT_FAILURE;
	if (cfg.stats_json[0] != '\0' && app_stats_write_json(cfg.stats_json,
			msg, sizeof(msg)) != 0) {
		fprintf(stderr, "cuckooflow: --stats-json %s\n", msg);
		ret = EXIT_FAILURE;
	}
	if (app_stats_close() != 0)
		ret = EXIT_FAILURE;
	/* everything written or lost: the summary, then the losses */
	app_stats_summary(stdout, cfu_clock_ns(CLOCK_MONOTONIC) - started_ns);
	app_top_print_final(stdout, top_capture_ns());
	lost = app_losses_report(cfg.exit_on_eof);
	/* A replay that lost packets must not look complete. */
	if (cfg.exit_on_eof && app_topology_check_replay(&topo, workers, err,
			sizeof(err)) != 0) {
		app_log(APP_LOG_WARNING, "%s", err);
		lost = APP_EXIT_PACKETS_LOST;
	}
	if (ret == EXIT_SUCCESS)
		ret = lost;
	app_top_fini();
	app_topology_close(&topo);
	workers_free();
	app_blocklist_fini();
	cbl_allow_free((struct cbl_allow *)(uintptr_t)run.allow);
	app_hugepage_files_collect();
	rte_eal_cleanup();
	app_hugepage_files_remove();
	return ret;
}
