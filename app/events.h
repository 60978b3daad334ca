/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_EVENTS_H_
#define _APP_EVENTS_H_

/*
 * Flow events off the datapath: each worker queues its events (a new
 * flow's first packet, the FIN/RST that closed one) into a ring of its
 * own (app_worker.event_ring, of struct app_event; a full ring drops them, counted in
 * events_dropped); the main lcore drains the rings into the outputs:
 * JSON lines (--events), IPFIX over UDP (--ipfix) and a pcapng of each
 * new flow's first packet written with rte_pcapng (--new-flow-pcap).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "cflow.h"
#include "config.h"

struct app_run;

/* A first packet of at most this many bytes (one segment, no stripped
 * VLAN tag) travels in its event, copied by the worker: passing the mbuf
 * itself costs more, as it then returns to the pool from the main
 * lcore (docs/benchmarks.md, "Flow events and top sources"). */
#define APP_EVENT_PKT_INLINE 128

/* A flow event on its way to the main lcore, in a worker's event ring:
 * when first packets are captured, a new flow's packet, inline
 * (pkt_len != 0) or by a reference to its mbuf (m). */
struct app_event {
	struct cflow_event ev;
	struct rte_mbuf *m;
	uint16_t pkt_len;       /* bytes in pkt */
	uint8_t has_rss;        /* rss: the NIC's hash (rte_pcapng keeps it) */
	uint8_t reserved;
	uint32_t rss;
	uint8_t pkt[APP_EVENT_PKT_INLINE];
};

/* Whether any output is on. */
bool app_events_enabled(const struct app_config *cfg);

/* The rx mbufs that events may hold at once (--new-flow-pcap), for the
 * pool's size. */
uint64_t app_events_mbufs(const struct app_config *cfg,
		unsigned int nb_workers);

/*
 * Open the outputs and give every worker its ring (before the workers
 * start). 0, or a negative errno with the message in @p err (what is
 * open then is closed by app_events_close()).
 */
int app_events_setup(const struct app_config *cfg, struct app_run *run,
		char *err, size_t err_len);

/* Drain every ring into the outputs (main lcore); returns the events
 * handled. At exit, after the workers stopped, it drains all. */
unsigned int app_events_drain(void);

/* SIGHUP: --events reopened at its path (logrotate's create, or a
 * rename the once-a-second check has not seen yet). */
void app_events_reopen(void);

/* What the outputs lost so far (the main lcore's counts, read by any
 * thread; kept after app_events_close()): app/losses.c. */
struct app_events_lost {
	uint64_t pcapng_skipped;  /* new flows queued without their packet */
	uint64_t json_lines;      /* --events lines not written */
	uint64_t pcapng;          /* --new-flow-pcap packets not written */
	uint64_t ipfix_records;   /* in IPFIX messages the socket refused */
};
void app_events_lost(struct app_events_lost *l);

/* Flush and close the outputs, free the rings; 0, or -EIO if an output
 * failed during the run (reported on stderr then). */
int app_events_close(void);

#endif /* _APP_EVENTS_H_ */
