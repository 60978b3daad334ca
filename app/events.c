/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <netdb.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include "telemetry.h"

#define DRAIN_BURST 256
/* Copies for rte_pcapng in flight: one drain burst's. */
#define PCAPNG_POOL (2 * DRAIN_BURST - 1)
/* An Enhanced Packet Block's timestamp words, after its type, length
 * and interface id (pcapng, section 4.3). */
#define EPB_TIMESTAMP_HI 12
#define EPB_TIMESTAMP_LO 16

static struct {
	const struct app_config *cfg;
	struct app_run *run;
	/* --events: JSON lines, reopened when the path is moved away */
	FILE *json;
	uint64_t json_checked_ns;
	uint64_t json_lines;
	uint64_t json_errors;
	/* --new-flow-pcap */
	rte_pcapng_t *pcapng;
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
	bool failed;            /* an output failed: said once */
} ev;

bool
app_events_enabled(const struct app_config *cfg)
{
	return cfg->events[0] != '\0' || cfg->new_flow_pcap[0] != '\0' ||
		cfg->ipfix[0] != '\0';
}

static void
output_failed(const char *what, const char *path, const char *why)
{
	if (!ev.failed)
		fprintf(stderr, "cuckooflow: %s %s: %s (further errors are "
			"counted in /cuckooflow/events)\n", what, path, why);
	ev.failed = true;
}

/* logrotate's way: once a second, if the path no longer names the file
 * written to, open it anew. */
static void
json_reopen_if_moved(void)
{
	struct stat at_path, open_file;
	uint64_t now = cfu_clock_ns(CLOCK_MONOTONIC);
	FILE *f;

	if (now - ev.json_checked_ns < 1000000000u)
		return;
	ev.json_checked_ns = now;
	if (fstat(fileno(ev.json), &open_file) != 0)
		return;
	if (stat(ev.cfg->events, &at_path) == 0 &&
			at_path.st_ino == open_file.st_ino &&
			at_path.st_dev == open_file.st_dev)
		return;
	f = fopen(ev.cfg->events, "a");
	if (f == NULL) {
		output_failed("--events", ev.cfg->events, strerror(errno));
		return;
	}
	if (fclose(ev.json) != 0)
		ev.json_errors++;
	ev.json = f;
}

static int
tel_events(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t queued = 0, dropped = 0;

	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	for (unsigned int i = 0; i < ev.run->nb_workers; i++) {
		queued += __atomic_load_n(&ev.run->workers[i].events_queued,
			__ATOMIC_RELAXED);
		dropped += __atomic_load_n(&ev.run->workers[i].events_dropped,
			__ATOMIC_RELAXED);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "events_queued", queued);
	rte_tel_data_add_dict_u64(d, "events_dropped", dropped);
	rte_tel_data_add_dict_u64(d, "json_lines", ev.json_lines);
	rte_tel_data_add_dict_u64(d, "json_errors", ev.json_errors);
	rte_tel_data_add_dict_u64(d, "pcapng_packets", ev.pcapng_packets);
	rte_tel_data_add_dict_u64(d, "pcapng_errors", ev.pcapng_errors);
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

static void
pcapng_open(const char *path)
{
	uint32_t room = rte_pcapng_mbuf_size((uint32_t)ev.cfg->max_pkt_len);
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		rte_exit(EXIT_FAILURE, "--new-flow-pcap %s: %s\n", path,
			strerror(errno));
	ev.pcapng = rte_pcapng_fdopen(fd, NULL, NULL, "cuckooflow",
		"the first packet of each new flow");
	if (ev.pcapng == NULL)
		rte_exit(EXIT_FAILURE, "--new-flow-pcap %s: %s\n", path,
			rte_strerror(rte_errno));
	if (room > UINT16_MAX)
		room = UINT16_MAX;
	ev.pcapng_pool = rte_pktmbuf_pool_create("cf_pcapng", PCAPNG_POOL, 0,
		0, (uint16_t)room, (int)rte_socket_id());
	if (ev.pcapng_pool == NULL)
		rte_exit(EXIT_FAILURE, "--new-flow-pcap: a pool of %u mbufs: "
			"%s\n", PCAPNG_POOL, rte_strerror(rte_errno));
	ev.pcapng_src = rte_pktmbuf_alloc(ev.pcapng_pool);
	if (ev.pcapng_src == NULL)
		rte_exit(EXIT_FAILURE, "--new-flow-pcap: no mbuf\n");
}

/* A message to the collector; never waits (a full socket buffer loses
 * it, counted by the encoder, whose sequence numbers show the gap). */
static int
ipfix_emit(const uint8_t *msg, size_t len, void *arg)
{
	(void)arg;
	if (send(ev.ipfix_fd, msg, len, MSG_DONTWAIT) == (ssize_t)len)
		return 0;
	ev.ipfix_send_errors++;
	return errno != 0 ? -errno : -EIO;
}

/* HOST:PORT, [IPV6]:PORT or IPV6 literal with the port after its last
 * colon; a name is resolved once, here. */
static void
ipfix_open(const char *target)
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
		rte_exit(EXIT_FAILURE, "--ipfix %s: want HOST:PORT (IPv6: "
			"[ADDR]:PORT)\n", target);
	*port++ = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret != 0)
		rte_exit(EXIT_FAILURE, "--ipfix %s: %s\n", target,
			gai_strerror(ret));
	ev.ipfix_fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ev.ipfix_fd < 0 || connect(ev.ipfix_fd, ai->ai_addr,
			ai->ai_addrlen) != 0)
		rte_exit(EXIT_FAILURE, "--ipfix %s: %s\n", target,
			strerror(errno));
	freeaddrinfo(ai);
	ev.ipfix = cflow_ipfix_create(&(struct cflow_ipfix_params){
		.observation_domain = (uint32_t)ev.cfg->ipfix_domain,
		.emit = ipfix_emit,
	});
	if (ev.ipfix == NULL)
		rte_exit(EXIT_FAILURE, "--ipfix %s: %s\n", target,
			strerror(errno));
}

/* The mbufs a worker's first packets may hold until the main lcore has
 * freed them (in its ring or in a drain's hands), segments counted. */
static uint32_t
event_mbufs(const struct app_config *cfg)
{
	return (uint32_t)RTE_MIN(cfg->event_ring,
		(uint64_t)APP_EVENT_PACKETS_MAX);
}

uint64_t
app_events_mbufs(const struct app_config *cfg, unsigned int nb_workers)
{
	if (cfg->new_flow_pcap[0] == '\0')
		return 0;
	return (uint64_t)nb_workers * event_mbufs(cfg);
}

void
app_events_setup(const struct app_config *cfg, struct app_run *run)
{
	ev.cfg = cfg;
	ev.run = run;
	run->event_mbufs = event_mbufs(cfg);
	if (!app_events_enabled(cfg))
		return;
	if (cfg->events[0] != '\0') {
		/* appended to: log shippers follow the file */
		ev.json = fopen(cfg->events, "a");
		if (ev.json == NULL)
			rte_exit(EXIT_FAILURE, "--events %s: %s\n", cfg->events,
				strerror(errno));
		ev.json_checked_ns = cfu_clock_ns(CLOCK_MONOTONIC);
	}
	ev.ipfix_fd = -1;
	if (cfg->ipfix[0] != '\0')
		ipfix_open(cfg->ipfix);
	if (cfg->new_flow_pcap[0] != '\0') {
		pcapng_open(cfg->new_flow_pcap);
		run->first_packets = true;
	}
	for (unsigned int i = 0; i < run->nb_workers; i++) {
		struct app_worker *w = &run->workers[i];
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "cf_events%u", i);
		w->event_ring = rte_ring_create_elem(name,
			sizeof(struct app_event), (unsigned int)cfg->event_ring,
			(int)rte_lcore_to_socket_id(w->lcore),
			RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (w->event_ring == NULL)
			rte_exit(EXIT_FAILURE, "--event-ring %" PRIu64 ": a ring "
				"for worker %u: %s\n", cfg->event_ring, i,
				rte_strerror(rte_errno));
	}
	app_telemetry_register("/cuckooflow/events", tel_events,
		"Flow events queued, dropped, written (JSON lines, pcapng), "
		"errors. Takes no parameters");
}

static void
json_write(const struct cflow_event *e)
{
	char line[CFLOW_EVENT_JSON_MAX];
	int n = cflow_event_json(e, line, sizeof(line));

	if (n < 0 || fprintf(ev.json, "%s\n", line) < 0) {
		ev.json_errors++;
		output_failed("--events", ev.cfg->events, strerror(errno));
		return;
	}
	ev.json_lines++;
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

static unsigned int
drain_one(struct app_worker *w, unsigned int max, uint64_t now_s)
{
	struct app_event batch[DRAIN_BURST];
	struct rte_mbuf *copies[DRAIN_BURST];
	unsigned int n, nc = 0, freed = 0;

	n = rte_ring_sc_dequeue_burst_elem(w->event_ring, batch,
		sizeof(batch[0]), RTE_MIN(max, (unsigned int)DRAIN_BURST),
		NULL);
	for (unsigned int k = 0; k < n; k++) {
		if (ev.json != NULL)
			json_write(&batch[k].ev);
		if (ev.ipfix != NULL)
			(void)cflow_ipfix_add(ev.ipfix, &batch[k].ev, now_s);
		if (batch[k].m == NULL && batch[k].pkt_len == 0) {
			/* too many first packets were waiting */
			if (ev.pcapng != NULL &&
					batch[k].ev.type == CFLOW_EVENT_NEW)
				ev.pcapng_skipped++;
			continue;
		}
		if (ev.pcapng != NULL) {
			copies[nc] = pcapng_copy(&batch[k]);
			if (copies[nc] != NULL)
				nc++;
			else
				ev.pcapng_errors++;
		}
		if (batch[k].m != NULL) {
			freed += batch[k].m->nb_segs;
			rte_pktmbuf_free(batch[k].m);
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
	if (ev.json != NULL) {
		if (total != 0 && fflush(ev.json) != 0) {
			ev.json_errors++;
			output_failed("--events", ev.cfg->events,
				strerror(errno));
		}
		json_reopen_if_moved();
	}
	return total;
}

int
app_events_close(void)
{
	if (ev.run == NULL || !app_events_enabled(ev.cfg))
		return 0;
	app_events_drain();
	if (ev.json != NULL && fclose(ev.json) != 0) {
		ev.json_errors++;
		output_failed("--events", ev.cfg->events, strerror(errno));
	}
	ev.json = NULL;
	if (ev.ipfix != NULL) {
		cflow_ipfix_free(ev.ipfix);
		close(ev.ipfix_fd);
		ev.ipfix = NULL;
	}
	if (ev.pcapng != NULL)
		rte_pcapng_close(ev.pcapng);
	ev.pcapng = NULL;
	rte_pktmbuf_free(ev.pcapng_src);
	ev.pcapng_src = NULL;
	rte_mempool_free(ev.pcapng_pool);
	ev.pcapng_pool = NULL;
	for (unsigned int i = 0; i < ev.run->nb_workers; i++) {
		rte_ring_free(ev.run->workers[i].event_ring);
		ev.run->workers[i].event_ring = NULL;
	}
	return ev.failed ? -EIO : 0;
}
