/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <netdb.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_debug.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include "cflow_ipfix.h"
#include "cfutil.h"
#include "events.h"
#include "log.h"
#include "output.h"
#include "telemetry.h"
#include "worker.h"

#define DRAIN_BURST 256
/* Units of the active timeout (cflow_tracker_active_unit_ns()) after
 * which a key store entry with no record is an orphan: a record lasts
 * under 220 (the active timeout plus 9/8 of the longest timeout or
 * linger plus 2 s), twice that and more. */
#define STORE_HORIZON_UNITS 512
/* Key store entries an expiry step looks at: some 20 us (bench_recstore) */
#define STORE_EXPIRE_STEP 4096
/* Copies for rte_pcapng in flight: one drain burst's. */
#define PCAPNG_POOL (2 * DRAIN_BURST - 1)
/* An Enhanced Packet Block's timestamp words, after its type, length
 * and interface id (pcapng, section 4.3). */
#define EPB_TIMESTAMP_HI 12
#define EPB_TIMESTAMP_LO 16

static struct {
	const struct app_config *cfg;
	struct app_run *run;
	/* --events: JSON lines (app/output.h), reopened when the path is
	 * moved away */
	struct app_output json;
	bool json_on;
	uint64_t json_errors;   /* failed writes and formats */
	uint64_t json_reopen_errors; /* rotated path refused (kept on) */
	/* --new-flow-pcap: rte_pcapng writes into a memory file, whose
	 * blocks go to the output (app/output.h: never waiting on a FIFO,
	 * never ending a full disk's file in part of a block) */
	rte_pcapng_t *pcapng;
	int pcapng_memfd;
	uint8_t *pcapng_stage;  /* the memory file's blocks, read back */
	size_t pcapng_stage_len;
	struct app_output pcapng_out;
	bool pcapng_on;         /* pcapng_out is open */
	struct rte_mempool *pcapng_pool;
	struct rte_mbuf *pcapng_src; /* an inline first packet, for
				      * rte_pcapng_copy() to copy */
	uint64_t pcapng_packets;
	uint64_t pcapng_errors;
	uint64_t pcapng_skipped;        /* new flows queued without it */
	/* --ipfix: a connected UDP socket */
	int ipfix_fd;
	struct cflow_ipfix *ipfix;
	uint64_t ipfix_send_errors;
	int ipfix_errno;        /* the last send's error */
	struct cflow_ipfix_stats ipfix_final; /* once it is freed */
	uint64_t unnamed_final;               /* the store's, once freed */
	/* --records: the flows' keys, by worker and name */
	struct cflow_recstore *store;
	/* a record of a live flow lasts less: older entries are orphans
	 * (STORE_HORIZON_UNITS; 0: no active timeout, never) */
	uint64_t store_horizon_ns;
	uint64_t store_expire_ns; /* the next pass over a full store, not
				   * before this new flow's time */
	uint64_t store_pass_before_ns; /* the pass under way's limit */
	bool store_pass;        /* a pass is under way */
	uint64_t records_out;   /* records named and written */
	bool failed;            /* an output failed: said once */
} ev;

bool
app_events_enabled(const struct app_config *cfg)
{
	return cfg->events[0] != '\0' || cfg->new_flow_pcap[0] != '\0' ||
		cfg->ipfix[0] != '\0';
}

/* The key store's flows: --records-max, or as many as every table can
 * hold: its slots and its stash (more than --flows: the tables are
 * sized for it at 96% load, or to the next power of two). */
static uint64_t
records_max(const struct app_config *cfg, const struct app_run *run)
{
	uint64_t n = cfg->records_max;

	if (n == 0)
		for (unsigned int i = 0; i < run->nb_workers; i++) {
			struct cf_stats st;

			cf_stats(cflow_tracker_filter(run->workers[i].tracker),
				&st);
			n += st.slots + CF_STASH_SIZE;
		}
	return n < (UINT64_C(1) << 31) ? n : UINT64_C(1) << 31;
}

static void
output_failed(const char *what, const char *path, const char *why)
{
	if (!ev.failed)
		fprintf(stderr, "cuckooflow: %s %s: %s (further errors are "
			"counted in /cuckooflow/events)\n", what, path, why);
	ev.failed = true;
}

/* A failed write of @p o: said once for the run (exit status 1). */
static void
output_error(const char *what, const char *path, const struct app_output *o,
		uint64_t errors_before)
{
	if (o->errors != errors_before)
		output_failed(what, path, strerror(o->err));
}

/*
 * --events follows its path (app_output_follow(): logrotate's rename,
 * each second; SIGHUP, @p force). A path that does not do now (a FIFO
 * without a reader) leaves the old file written to, the refusal said
 * once (exit status 1) and counted, the reopen tried again a second
 * later.
 */
static void
json_follow(bool force)
{
	uint64_t errors = ev.json.errors;
	char err[PATH_MAX + 128];
	int ret;

	ret = app_output_follow(&ev.json, ev.cfg->events, force, err,
		sizeof(err));
	if (ret < 0) {
		if (ev.json_reopen_errors++ == 0)
			fprintf(stderr, "cuckooflow: --events: reopening after "
				"rotation: %s; still writing to the file moved "
				"away, trying again each second (counted in "
				"json_reopen_errors)\n", err);
		ev.failed = true;
		return;
	}
	if (ret == 1 && force)
		app_log(APP_LOG_NOTICE, "--events %s: reopened (SIGHUP)",
			ev.cfg->events);
	output_error("--events", ev.cfg->events, &ev.json, errors);
}

void
app_events_reopen(void)
{
	if (ev.run != NULL && ev.json_on)
		json_follow(true);
}

void
app_events_lost(struct app_events_lost *l)
{
	struct cflow_ipfix_stats st = ev.ipfix_final;
	uint64_t unnamed = ev.unnamed_final;

	if (ev.ipfix != NULL)
		cflow_ipfix_stats_get(ev.ipfix, &st);
	if (ev.store != NULL) {
		struct cflow_recstore_stats rs;

		cflow_recstore_stats_get(ev.store, &rs);
		unnamed = rs.unnamed;
	}
	*l = (struct app_events_lost){
		.pcapng_skipped = __atomic_load_n(&ev.pcapng_skipped,
			__ATOMIC_RELAXED),
		.json_lines = __atomic_load_n(&ev.json.lost, __ATOMIC_RELAXED),
		.pcapng = __atomic_load_n(&ev.pcapng_out.lost,
			__ATOMIC_RELAXED),
		.ipfix_records = st.records_lost,
		.records_unnamed = unnamed,
	};
}

static int
tel_events(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t queued = 0, dropped = 0;

	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	uint64_t records_dropped = 0;

	for (unsigned int i = 0; i < ev.run->nb_workers; i++) {
		queued += __atomic_load_n(&ev.run->workers[i].ctr.events_queued,
			__ATOMIC_RELAXED);
		dropped += __atomic_load_n(&ev.run->workers[i].ctr.events_dropped,
			__ATOMIC_RELAXED);
		records_dropped += __atomic_load_n(
			&ev.run->workers[i].ctr.records_dropped,
			__ATOMIC_RELAXED);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "events_queued", queued);
	rte_tel_data_add_dict_u64(d, "events_dropped", dropped);
	if (ev.store != NULL) {
		struct cflow_recstore_stats st;

		cflow_recstore_stats_get(ev.store, &st);
		rte_tel_data_add_dict_u64(d, "records_out", ev.records_out);
		rte_tel_data_add_dict_u64(d, "records_dropped",
			records_dropped);
		rte_tel_data_add_dict_u64(d, "records_unnamed", st.unnamed);
		rte_tel_data_add_dict_u64(d, "records_store_flows",
			st.entries);
		rte_tel_data_add_dict_u64(d, "records_store_full", st.full);
		rte_tel_data_add_dict_u64(d, "records_store_replaced",
			st.replaced);
		rte_tel_data_add_dict_u64(d, "records_store_expired",
			st.expired);
		rte_tel_data_add_dict_u64(d, "records_store_bytes", st.bytes);
	}
	rte_tel_data_add_dict_u64(d, "json_lines", ev.json.written);
	rte_tel_data_add_dict_u64(d, "json_lines_lost", ev.json.lost);
	rte_tel_data_add_dict_u64(d, "json_errors", ev.json_errors +
		ev.json.errors);
	rte_tel_data_add_dict_u64(d, "json_reopen_errors",
		ev.json_reopen_errors);
	rte_tel_data_add_dict_u64(d, "pcapng_packets", ev.pcapng_packets);
	rte_tel_data_add_dict_u64(d, "pcapng_lost", ev.pcapng_out.lost);
	rte_tel_data_add_dict_u64(d, "pcapng_errors", ev.pcapng_errors +
		ev.pcapng_out.errors);
	rte_tel_data_add_dict_u64(d, "pcapng_skipped", ev.pcapng_skipped);
	if (ev.ipfix != NULL) {
		struct cflow_ipfix_stats st;

		cflow_ipfix_stats_get(ev.ipfix, &st);
		rte_tel_data_add_dict_u64(d, "ipfix_messages", st.messages);
		rte_tel_data_add_dict_u64(d, "ipfix_records", st.records);
		rte_tel_data_add_dict_u64(d, "ipfix_failed", st.failed);
		rte_tel_data_add_dict_u64(d, "ipfix_records_lost",
			st.records_lost);
	}
	return 0;
}

/* What rte_pcapng wrote into the memory file since the last call, to
 * the output: whole blocks. */
static void
pcapng_pump(void)
{
	off_t end = lseek(ev.pcapng_memfd, 0, SEEK_CUR);
	uint64_t errors = ev.pcapng_out.errors;
	ssize_t got;

	if (end <= 0)
		return;
	if ((size_t)end > ev.pcapng_stage_len) {
		uint8_t *b = realloc(ev.pcapng_stage, (size_t)end);

		if (b == NULL) {
			ev.pcapng_errors++;
			goto reset;
		}
		ev.pcapng_stage = b;
		ev.pcapng_stage_len = (size_t)end;
	}
	got = pread(ev.pcapng_memfd, ev.pcapng_stage, (size_t)end, 0);
	if (got == end)
		(void)app_output_add(&ev.pcapng_out, ev.pcapng_stage,
			(size_t)end);
	else
		ev.pcapng_errors++;
	output_error("--new-flow-pcap", ev.cfg->new_flow_pcap, &ev.pcapng_out,
		errors);
reset:
	if (ftruncate(ev.pcapng_memfd, 0) != 0 ||
			lseek(ev.pcapng_memfd, 0, SEEK_SET) != 0)
		ev.pcapng_errors++;
}

static int
pcapng_open(const char *path, char *err, size_t err_len)
{
	uint32_t room = rte_pcapng_mbuf_size((uint32_t)ev.cfg->max_pkt_len);
	char why[PATH_MAX + 128];

	if (app_output_open(&ev.pcapng_out, path, false, APP_OUTPUT_PCAPNG,
			why, sizeof(why)) < 0)
		return cfu_fail(errno, err, err_len, "--new-flow-pcap %s", why);
	ev.pcapng_on = true;
	ev.pcapng_memfd = memfd_create("cuckooflow-pcapng", MFD_CLOEXEC);
	if (ev.pcapng_memfd < 0)
		return cfu_fail(errno, err, err_len, "--new-flow-pcap: "
			"memfd_create: %s", strerror(errno));
	ev.pcapng = rte_pcapng_fdopen(ev.pcapng_memfd, NULL, NULL,
		"cuckooflow", "the first packet of each new flow");
	if (ev.pcapng == NULL)
		return cfu_fail(rte_errno, err, err_len, "--new-flow-pcap %s: %s",
			path, rte_strerror(rte_errno));
	pcapng_pump(); /* the section header and interfaces */
	if (room > UINT16_MAX)
		room = UINT16_MAX;
	ev.pcapng_pool = rte_pktmbuf_pool_create("cf_pcapng", PCAPNG_POOL, 0,
		0, (uint16_t)room, (int)rte_socket_id());
	if (ev.pcapng_pool == NULL)
		return cfu_fail(rte_errno, err, err_len, "--new-flow-pcap: a "
			"pool of %u mbufs: %s", PCAPNG_POOL,
			rte_strerror(rte_errno));
	ev.pcapng_src = rte_pktmbuf_alloc(ev.pcapng_pool);
	if (ev.pcapng_src == NULL)
		return cfu_fail(ENOBUFS, err, err_len, "--new-flow-pcap: no "
			"mbuf");
	return 0;
}

/* A message to the collector; never waits (a full socket buffer loses
 * it, counted by the encoder, whose sequence numbers show the gap). */
static int
ipfix_emit(const uint8_t *msg, size_t len, void *arg)
{
	(void)arg;
	if (send(ev.ipfix_fd, msg, len, MSG_DONTWAIT) == (ssize_t)len)
		return 0;
	ev.ipfix_errno = errno != 0 ? errno : EIO;
	/* said once, as an --events error is; the exit says how many */
	if (ev.ipfix_send_errors++ == 0)
		fprintf(stderr, "cuckooflow: --ipfix %s: %s (messages the "
			"socket does not take are lost, counted in "
			"/cuckooflow/events and said at exit)\n", ev.cfg->ipfix,
			strerror(ev.ipfix_errno));
	return -ev.ipfix_errno;
}

/* HOST:PORT, [IPV6]:PORT or IPV6 literal with the port after its last
 * colon; a name is resolved once, here. */
static int
ipfix_open(const char *target, char *err, size_t err_len)
{
	char host[256], *port;
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM,
		.ai_flags = AI_NUMERICSERV,
	}, *ai;
	int ret;

	snprintf(host, sizeof(host), "%s", target);
	port = strrchr(host, ':');
	if (port == NULL || port[1] == '\0')
		return cfu_fail(EINVAL, err, err_len, "--ipfix %s: want "
			"HOST:PORT (IPv6: [ADDR]:PORT)", target);
	*port++ = '\0';
	/* digits only, 1 to 65535: getaddrinfo() takes 70000 for 4464 */
	if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 ||
			atoi(port) < 1 || atoi(port) > 65535)
		return cfu_fail(EINVAL, err, err_len, "--ipfix %s: port %s: "
			"want a number from 1 to 65535", target, port);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret != 0)
		return cfu_fail(EINVAL, err, err_len, "--ipfix %s: %s", target,
			gai_strerror(ret));
	ev.ipfix_fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ev.ipfix_fd < 0 || connect(ev.ipfix_fd, ai->ai_addr,
			ai->ai_addrlen) != 0) {
		ret = cfu_fail(errno, err, err_len, "--ipfix %s: %s", target,
			strerror(errno));
		freeaddrinfo(ai);
		return ret;
	}
	freeaddrinfo(ai);
	ev.ipfix = cflow_ipfix_create(&(struct cflow_ipfix_params){
		.observation_domain = (uint32_t)ev.cfg->ipfix_domain,
		.emit = ipfix_emit,
	});
	if (ev.ipfix == NULL)
		return cfu_fail(errno, err, err_len, "--ipfix %s: %s", target,
			strerror(errno));
	return 0;
}

/* The mbufs a worker's first packets may hold until the main lcore has
 * freed them (in its ring or in a drain's hands), segments counted. */
static uint32_t
event_mbufs_max(const struct app_config *cfg)
{
	return (uint32_t)RTE_MIN(cfg->event_ring,
		(uint64_t)APP_EVENT_PACKETS_MAX);
}

uint64_t
app_events_mbufs(const struct app_config *cfg, unsigned int nb_workers)
{
	if (cfg->new_flow_pcap[0] == '\0')
		return 0;
	return (uint64_t)nb_workers * event_mbufs_max(cfg);
}

int
app_events_setup(const struct app_config *cfg, struct app_run *run,
		char *err, size_t err_len)
{
	int ret;

	ev.cfg = cfg;
	ev.run = run;
	ev.ipfix_fd = -1;
	ev.pcapng_memfd = -1;
	run->event_mbufs_max = event_mbufs_max(cfg);
	if (!app_events_enabled(cfg))
		return 0;
	if (cfg->events[0] != '\0') {
		char why[PATH_MAX + 128];

		/* appended to: log shippers follow the file */
		if (app_output_open(&ev.json, cfg->events, true,
				APP_OUTPUT_LINES, why, sizeof(why)) < 0)
			return cfu_fail(errno, err, err_len, "--events %s", why);
		ev.json_on = true;
		ev.json.checked_ns = cfu_clock_ns(CLOCK_MONOTONIC);
	}
	if (cfg->ipfix[0] != '\0') {
		ret = ipfix_open(cfg->ipfix, err, err_len);
		if (ret < 0)
			return ret;
	}
	if (cfg->new_flow_pcap[0] != '\0') {
		ret = pcapng_open(cfg->new_flow_pcap, err, err_len);
		if (ret < 0)
			return ret;
		run->first_packets = true;
	}
	run->records = app_config_records(cfg);
	run->close_events = cfg->events[0] != '\0';
	run->event_size = run->first_packets ? sizeof(struct app_event) :
		APP_EVENT_SHORT;
	if (run->records) {
		uint64_t n = records_max(cfg, run);

		ev.store = cflow_recstore_create(n);
		if (ev.store == NULL)
			return cfu_fail(errno, err, err_len, "--records: a key "
				"store of %" PRIu64 " flows (%" PRIu64 " MiB; "
				"--records-max): %s", n,
				cflow_recstore_bytes(n) >> 20, strerror(errno));
		ev.store_horizon_ns = STORE_HORIZON_UNITS *
			cflow_tracker_active_unit_ns(run->workers[0].tracker);
	}
	for (unsigned int i = 0; i < run->nb_workers; i++) {
		struct app_worker *w = &run->workers[i];
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "cf_events%u", i);
		w->event_ring = rte_ring_create_elem(name,
			run->event_size, (unsigned int)cfg->event_ring,
			(int)rte_lcore_to_socket_id(w->lcore),
			RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (w->event_ring == NULL)
			return cfu_fail(rte_errno, err, err_len, "--event-ring %"
				PRIu64 ": a ring for worker %u: %s",
				cfg->event_ring, i, rte_strerror(rte_errno));
	}
	return app_telemetry_register("/cuckooflow/events", tel_events,
		"Flow events queued, dropped, written (JSON lines, pcapng), "
		"errors. Takes no parameters", err, err_len);
}

/* One line, whole, to the output (a FIFO's reader behind: dropped,
 * counted in json_lines_lost): @p e's, or with @p r a record's. With
 * records, schema 2: a new flow's line has its @p flow_id. */
static void
json_write(const struct cflow_event *e, uint64_t flow_id,
		const struct cflow_flow_record *r)
{
	char line[CFLOW_EVENT_JSON_MAX + 1];
	uint64_t errors = ev.json.errors;
	int n = r != NULL ? cflow_flow_record_json(r, line, sizeof(line) - 1) :
		ev.store != NULL ? cflow_event_json_v2(e, flow_id, line,
			sizeof(line) - 1) :
		cflow_event_json(e, line, sizeof(line) - 1);

	if (n < 0) {
		ev.json_errors++;
		output_failed("--events", ev.cfg->events, strerror(-n));
		return;
	}
	line[n] = '\n';
	(void)app_output_add(&ev.json, line, (size_t)n + 1);
	output_error("--events", ev.cfg->events, &ev.json, errors);
}

/*
 * The first packet, copied by rte_pcapng (its interface is the port), at
 * the event's time: rte_pcapng_copy() stamps the time it is called at
 * (from the TSC), so the block's timestamp words are set to the packet's
 * time instead, in the library's nanosecond resolution.
 */
static struct rte_mbuf *
pcapng_copy(const struct app_event *e)
{
	const struct rte_mbuf *md = e->m;
	struct rte_mbuf *c;
	uint32_t hi = (uint32_t)(e->ev.time_ns >> 32);
	uint32_t lo = (uint32_t)e->ev.time_ns;

	if (md == NULL) {
		/* the packet came in the event: into an mbuf, which is
		 * what rte_pcapng copies from (with the NIC's hash) */
		struct rte_mbuf *s = ev.pcapng_src;

		rte_pktmbuf_reset(s);
		if (rte_pktmbuf_append(s, e->pkt_len) == NULL)
			return NULL;
		memcpy(rte_pktmbuf_mtod(s, uint8_t *), e->pkt, e->pkt_len);
		s->port = e->ev.port;
		if (e->has_rss) {
			s->ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
			s->hash.rss = e->rss;
		}
		md = s;
	}
	c = rte_pcapng_copy(e->ev.port, 0, md, ev.pcapng_pool, UINT32_MAX,
		rte_rdtsc(), RTE_PCAPNG_DIRECTION_IN);
	if (c == NULL)
		return NULL;
	memcpy(rte_pktmbuf_mtod_offset(c, uint8_t *, EPB_TIMESTAMP_HI), &hi,
		sizeof(hi));
	memcpy(rte_pktmbuf_mtod_offset(c, uint8_t *, EPB_TIMESTAMP_LO), &lo,
		sizeof(lo));
	return c;
}

/* A record of worker @p worker: named by the key store, to the outputs;
 * unnamed, counted (the store's). */
static void
record_out(uint16_t worker, const struct app_event_record *e,
		uint64_t now_s)
{
	struct cflow_record rec = {
		.name = e->name, .last_ns = e->last_ns, .next_ns = e->next_ns,
		.bytes = e->bytes, .packets = e->packets, .reason = e->reason,
		.tcp_flags = e->tcp_flags,
	};
	struct cflow_flow_record r;

	/* The end of a flow taken over at a warm restart with no packet
	 * since: its packets are in the saved run's records; nothing to
	 * write, nothing lost. */
	if (e->packets == 0 && e->reason != CFLOW_RECORD_ACTIVE) {
		(void)cflow_recstore_forget(ev.store, worker, e->name);
		return;
	}
	if (cflow_recstore_name(ev.store, worker, &rec,
			ev.run->epoch_offset_ns, &r) != 0)
		return;
	ev.records_out++;
	if (ev.json_on)
		json_write(NULL, 0, &r);
	if (ev.ipfix != NULL)
		(void)cflow_ipfix_add(ev.ipfix, &r, now_s);
}

/*
 * A full key store, before a new flow of @p time_ns: the entries whose
 * record started more than the horizon before are orphans (their end
 * record dropped on a full ring), removed (records_store_expired). A pass
 * over the store goes in steps of STORE_EXPIRE_STEP entries, one before
 * each new flow that finds it full (a pass over millions of entries in
 * one call would hold the main lcore for a second while the event rings
 * fill); a pass at most once a quarter horizon.
 */
static void
store_room(uint64_t time_ns)
{
	struct cflow_recstore_stats st;
	bool done;

	if (ev.store_horizon_ns == 0 || time_ns < ev.store_horizon_ns)
		return;
	if (!ev.store_pass) {
		if (time_ns < ev.store_expire_ns)
			return;
		cflow_recstore_stats_get(ev.store, &st);
		if (st.entries < st.capacity)
			return;
		ev.store_pass_before_ns = time_ns - ev.store_horizon_ns;
		ev.store_pass = true;
	}
	(void)cflow_recstore_expire(ev.store, ev.store_pass_before_ns,
		STORE_EXPIRE_STEP, &done);
	if (done) {
		ev.store_pass = false;
		ev.store_expire_ns = time_ns + ev.store_horizon_ns / 4;
	}
}

static unsigned int
drain_one(struct app_worker *w, unsigned int max, uint64_t now_s)
{
	static struct app_event batch[DRAIN_BURST];
	struct rte_mbuf *copies[DRAIN_BURST];
	uint32_t size = ev.run->event_size;
	unsigned int n, nc = 0, freed = 0;

	n = rte_ring_sc_dequeue_burst_elem(w->event_ring, batch, size,
		RTE_MIN(max, (unsigned int)DRAIN_BURST), NULL);
	for (unsigned int k = 0; k < n; k++) {
		struct app_event *e = app_event_at(batch, k, size);
		uint64_t flow_id = 0;

		if (e->ev.type == APP_EVENT_RECORD) {
			record_out(e->ev.worker, &e->rec, now_s);
			continue;
		}
		if (ev.store != NULL && e->ev.type == CFLOW_EVENT_NEW) {
			store_room(e->ev.time_ns);
			flow_id = cflow_recstore_add(ev.store, e->ev.worker,
				e->name, &e->ev);
		}
		if (ev.json_on)
			json_write(&e->ev, flow_id, NULL);
		/* a short event has no first packet */
		if (!ev.run->first_packets)
			continue;
		if (e->m == NULL && e->pkt_len == 0) {
			/* too many first packets were waiting */
			if (ev.pcapng != NULL && e->ev.type == CFLOW_EVENT_NEW)
				ev.pcapng_skipped++;
			continue;
		}
		if (ev.pcapng != NULL) {
			copies[nc] = pcapng_copy(e);
			if (copies[nc] != NULL)
				nc++;
			else
				ev.pcapng_errors++;
		}
		if (e->m != NULL) {
			freed += e->m->nb_segs;
			rte_pktmbuf_free(e->m);
		}
	}
	if (freed != 0)
		/* the worker may take as many again */
		__atomic_store_n(&w->event_mbufs_freed,
			w->event_mbufs_freed + freed, __ATOMIC_RELEASE);
	if (nc != 0) {
		if (rte_pcapng_write_packets(ev.pcapng, copies,
				(uint16_t)nc) < 0) {
			ev.pcapng_errors += nc;
			output_failed("--new-flow-pcap", ev.cfg->new_flow_pcap,
				strerror(errno));
		} else {
			ev.pcapng_packets += nc;
		}
		pcapng_pump();
		/* DPDK 22.11's rte_pcapng_write_packets() does not free the
		 * copies, whatever its header says (dpdk-dumpcap frees them
		 * itself): give them back or the pool runs dry after 511. */
		rte_pktmbuf_free_bulk(copies, nc);
	}
	return n;
}

unsigned int
app_events_drain(void)
{
	uint64_t now_s = cfu_clock_ns(CLOCK_REALTIME) / 1000000000u;
	unsigned int total = 0, n;

	if (ev.run == NULL || !app_events_enabled(ev.cfg))
		return 0;
	/* What each ring holds now, no more: a worker that queues events
	 * faster than they are written must not keep the main lcore here
	 * (its other rings, the stats and top periods, reloads wait); what
	 * it adds meanwhile is for the next call, or dropped and counted. */
	for (unsigned int i = 0; i < ev.run->nb_workers; i++) {
		struct app_worker *w = &ev.run->workers[i];
		unsigned int left = rte_ring_count(w->event_ring);

		while (left != 0) {
			n = drain_one(w, left, now_s);
			if (n == 0)
				break;
			total += n;
			left -= n;
		}
	}
	/* What was drained leaves now (and the templates when due). */
	if (ev.ipfix != NULL)
		(void)cflow_ipfix_flush(ev.ipfix, now_s);
	if (ev.json_on) {
		uint64_t errors = ev.json.errors;

		/* also with no new event: a FIFO's reader catching up */
		(void)app_output_flush(&ev.json);
		output_error("--events", ev.cfg->events, &ev.json, errors);
		json_follow(false);
	}
	if (ev.pcapng != NULL) {
		uint64_t errors = ev.pcapng_out.errors;

		(void)app_output_flush(&ev.pcapng_out);
		output_error("--new-flow-pcap", ev.cfg->new_flow_pcap,
			&ev.pcapng_out, errors);
	}
	return total;
}

/* Close @p o (waiting for a FIFO's reader unless interrupted); say
 * its errors (what it lost: app/losses.c). */
static void
output_close(const char *what, const char *path, struct app_output *o)
{
	uint64_t errors = o->errors;

	(void)app_output_close(o);
	output_error(what, path, o, errors);
}

/* --------------------------------------------------- worker side */

void
app_events_record(const struct cflow_record *r, void *arg)
{
	struct app_worker *w = arg;
	const struct app_run *run = w->run;
	struct rte_ring_zc_data zcd;
	struct app_event *e;

	if (r->reason != CFLOW_RECORD_NEW && w->records_direct) {
		/* the workers stopped: straight to the outputs */
		struct app_event_record d = {
			.name = r->name, .last_ns = r->last_ns,
			.next_ns = r->next_ns, .bytes = r->bytes,
			.packets = r->packets, .reason = r->reason,
			.tcp_flags = r->tcp_flags,
		};

		record_out((uint16_t)w->index, &d, cfu_clock_ns(
			CLOCK_REALTIME) / 1000000000u);
		return;
	}
	if (unlikely(w->event_ring == NULL) ||
			rte_ring_enqueue_zc_burst_elem_start(w->event_ring,
			run->event_size, 1, &zcd, NULL) == 0) {
		if (r->reason == CFLOW_RECORD_NEW)
			w->ctr.events_dropped++;
		else
			w->ctr.records_dropped++;
		return;
	}
	e = zcd.ptr1;
	if (r->reason == CFLOW_RECORD_NEW) {
		struct rte_mbuf *m = w->burst_pkts[r->index];
		const struct cflow_input *in = &w->burst_in[r->index];

		(void)cflow_event_init(&e->ev, r->pkt, CFLOW_NEW, in->time_ns +
			run->epoch_offset_ns, in->wire_len);
		e->ev.port = m->port;
		e->name = r->name;
		if (run->first_packets) {
			/* the mbufs taken and not yet freed by the main lcore */
			uint64_t held = w->event_mbufs_taken - __atomic_load_n(
				&w->event_mbufs_freed, __ATOMIC_ACQUIRE);

			e->m = NULL;
			e->pkt_len = 0;
			w->event_mbufs_taken += app_event_packet(e, m,
				held < run->event_mbufs_max ?
				run->event_mbufs_max - (unsigned int)held : 0);
		}
	} else {
		e->rec.name = r->name;
		e->rec.last_ns = r->last_ns;
		e->rec.next_ns = r->next_ns;
		e->rec.bytes = r->bytes;
		e->rec.packets = r->packets;
		e->rec.reason = r->reason;
		e->rec.tcp_flags = r->tcp_flags;
		e->ev.type = APP_EVENT_RECORD;
		if (run->first_packets) {
			e->m = NULL;
			e->pkt_len = 0;
		}
	}
	e->ev.worker = (uint16_t)w->index;
	rte_ring_enqueue_zc_elem_finish(w->event_ring, 1);
	w->ctr.events_queued++;
}

void
app_events_workers_stopped(void)
{
	if (ev.run == NULL || !app_events_enabled(ev.cfg))
		return;
	/* what the rings hold, all of it: nothing adds to them now */
	while (app_events_drain() != 0)
		;
	for (unsigned int i = 0; i < ev.run->nb_workers; i++)
		ev.run->workers[i].records_direct = true;
}

int64_t
app_events_keys_save(uint64_t resume_ns, void **buf)
{
	struct cflow_recstore_stats st;
	uint64_t cap;
	int64_t n;

	*buf = NULL;
	if (ev.store == NULL)
		return 0;
	cflow_recstore_stats_get(ev.store, &st);
	cap = cflow_recstore_save_bound(st.entries != 0 ? st.entries : 1);
	*buf = malloc(cap);
	if (*buf == NULL)
		return -ENOMEM;
	n = cflow_recstore_save(ev.store, resume_ns, *buf, cap);
	if (n < 0) {
		free(*buf);
		*buf = NULL;
	}
	return n;
}

int64_t
app_events_keys_restore(const void *keys, size_t len)
{
	if (ev.store == NULL)
		return len != 0 ? -ENOTSUP : 0;
	return cflow_recstore_restore(ev.store, keys, len);
}

void
app_events_records_end(void)
{
	if (ev.store == NULL)
		return;
	for (unsigned int i = 0; i < ev.run->nb_workers; i++)
		(void)cflow_tracker_end_records(ev.run->workers[i].tracker);
}

/* What records did not reach the outputs, said at exit. */
static void
records_losses(void)
{
	struct cflow_recstore_stats st;
	uint64_t dropped = 0;

	if (ev.store == NULL)
		return;
	for (unsigned int i = 0; i < ev.run->nb_workers; i++)
		dropped += ev.run->workers[i].ctr.records_dropped;
	cflow_recstore_stats_get(ev.store, &st);
	if (dropped != 0 || st.unnamed != 0 || st.full != 0)
		fprintf(stderr, "cuckooflow: --records: %" PRIu64 " records "
			"out; %" PRIu64 " dropped (event rings full: "
			"--event-ring), %" PRIu64 " unnamed (their new flow's "
			"event lost, or not kept: %" PRIu64 " new flows found "
			"the key store full, --records-max); records_dropped, "
			"records_unnamed in /cuckooflow/events\n",
			ev.records_out, dropped, st.unnamed, st.full);
}

int
app_events_close(void)
{
	if (ev.run == NULL || !app_events_enabled(ev.cfg))
		return 0;
	app_events_drain();
	records_losses();
	if (ev.json_on)
		output_close("--events", ev.cfg->events, &ev.json);
	ev.json_on = false;
	if (ev.ipfix != NULL) {
		struct cflow_ipfix_stats st;

		(void)cflow_ipfix_flush(ev.ipfix, cfu_clock_ns(
			CLOCK_REALTIME) / 1000000000u);
		cflow_ipfix_stats_get(ev.ipfix, &st);
		ev.ipfix_final = st;
		/* and the records lost in app/losses.c (exit status 4) */
		if (st.failed != 0)
			fprintf(stderr, "cuckooflow: --ipfix %s: %" PRIu64 " of %"
				PRIu64 " records lost in %" PRIu64 " messages "
				"the socket did not take (last error: %s); "
				"ipfix_records_lost in /cuckooflow/events\n",
				ev.cfg->ipfix, st.records_lost, st.records +
				st.records_lost, st.failed,
				strerror(ev.ipfix_errno));
		cflow_ipfix_free(ev.ipfix);
		ev.ipfix = NULL;
	}
	if (ev.ipfix_fd >= 0)
		close(ev.ipfix_fd);
	ev.ipfix_fd = -1;
	if (ev.pcapng != NULL) {
		pcapng_pump();
		/* closes the memory file */
		rte_pcapng_close(ev.pcapng);
		output_close("--new-flow-pcap", ev.cfg->new_flow_pcap,
			&ev.pcapng_out);
		free(ev.pcapng_stage);
		ev.pcapng_stage = NULL;
	} else if (ev.pcapng_on) {
		/* a setup that failed half way */
		(void)app_output_close(&ev.pcapng_out);
		if (ev.pcapng_memfd >= 0)
			close(ev.pcapng_memfd);
	}
	ev.pcapng_on = false;
	ev.pcapng_memfd = -1;
	ev.pcapng = NULL;
	rte_pktmbuf_free(ev.pcapng_src);
	ev.pcapng_src = NULL;
	rte_mempool_free(ev.pcapng_pool);
	ev.pcapng_pool = NULL;
	for (unsigned int i = 0; i < ev.run->nb_workers; i++) {
		rte_ring_free(ev.run->workers[i].event_ring);
		ev.run->workers[i].event_ring = NULL;
	}
	if (ev.store != NULL) {
		struct cflow_recstore_stats rs;

		cflow_recstore_stats_get(ev.store, &rs);
		ev.unnamed_final = rs.unnamed;
	}
	cflow_recstore_free(ev.store);
	ev.store = NULL;
	return ev.failed ? -EIO : 0;
}
