/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_EVENTS_H_
#define _APP_EVENTS_H_

/*
 * Flow events off the datapath: each worker queues its events (a new
 * flow's first packet, the FIN/RST that closed one) and, with records
 * (--records), its flow records into a ring of its own
 * (app_worker.event_ring, of struct app_event; a full ring drops them,
 * counted in events_dropped, records_dropped); the main lcore drains the
 * rings into the outputs: JSON lines (--events), IPFIX over UDP (--ipfix)
 * and a pcapng of each new flow's first packet written with rte_pcapng
 * (--new-flow-pcap). With records it keeps the keys of the flows
 * (lib/cflow's key store, filled from the new-flow events), and names
 * each record with its flow's before it goes out.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "cflow.h"
#include "cflow_records.h"
#include "config.h"

struct app_run;

/* A first packet of at most this many bytes (one segment, no stripped
 * VLAN tag) travels in its event, copied by the worker: passing the mbuf
 * itself costs more, as it then returns to the pool from the main
 * lcore (docs/benchmarks.md, "Flow events and top sources"). */
#define APP_EVENT_PKT_INLINE 128

/* ev.type of an app_event that carries a flow record (rec). */
#define APP_EVENT_RECORD 3

/* A flow record in a ring: struct cflow_record's counts, in the bytes of
 * struct cflow_event before its type (which says APP_EVENT_RECORD) and
 * worker. */
struct app_event_record {
	uint64_t name;
	uint64_t last_ns;
	uint64_t next_ns;
	uint64_t bytes;
	uint32_t packets;
	uint8_t reason;
	uint8_t tcp_flags;
};

/*
 * A flow event on its way to the main lcore, in a worker's event ring:
 * a new flow's first packet or a close (ev), or with records a record
 * (rec, ev.type APP_EVENT_RECORD; ev.worker); with records, a new flow's
 * name. The ring's elements are APP_EVENT_SHORT bytes (72: little for
 * the cores to pass), or with --new-flow-pcap the whole struct, with the
 * first packet inline (pkt_len != 0) or by a reference to its mbuf (m):
 * app_run.event_size.
 */
struct app_event {
	union {
		struct cflow_event ev;
		struct app_event_record rec;
	};
	uint64_t name;          /* records: a new flow's (cflow_record) */
	/* --new-flow-pcap only */
	struct rte_mbuf *m;
	uint16_t pkt_len;       /* bytes in pkt */
	uint8_t has_rss;        /* rss: the NIC's hash (rte_pcapng keeps it) */
	uint8_t reserved;
	uint32_t rss;
	uint8_t pkt[APP_EVENT_PKT_INLINE];
};

/* Bytes of an event without a first packet. */
#define APP_EVENT_SHORT offsetof(struct app_event, m)

_Static_assert(sizeof(struct app_event_record) <=
	offsetof(struct cflow_event, type), "a record before ev.type");

/* Event @p k of a ring's elements of @p size bytes at @p base. */
static inline struct app_event *
app_event_at(void *base, unsigned int k, uint32_t size)
{
	return (struct app_event *)(void *)((uint8_t *)base +
		(size_t)k * size);
}

/* Whether any output is on. */
bool app_events_enabled(const struct app_config *cfg);

/*
 * A new flow's first packet into its event: a short one copied, else its
 * mbuf referenced (the reference counts of its segments raised) if
 * @p room mbufs allow as many as it has segments (app_events_mbufs()
 * sized the pool for so many). The mbufs it took.
 */
static inline unsigned int
app_event_packet(struct app_event *e, struct rte_mbuf *m, unsigned int room)
{
	if (m->nb_segs == 1 && m->data_len <= APP_EVENT_PKT_INLINE &&
			!(m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED)) {
		memcpy(e->pkt, rte_pktmbuf_mtod(m, const uint8_t *),
			m->data_len);
		e->pkt_len = m->data_len;
		e->has_rss = !!(m->ol_flags & RTE_MBUF_F_RX_RSS_HASH);
		e->rss = m->hash.rss;
		return 0;
	}
	if (m->nb_segs > room)
		return 0; /* too many waiting: without it, pcapng_skipped */
	rte_pktmbuf_refcnt_update(m, 1);
	e->m = m;
	return m->nb_segs;
}

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
	uint64_t records_unnamed; /* --records: records the store could not
				   * name, not written */
};
void app_events_lost(struct app_events_lost *l);

/*
 * The workers have stopped (main lcore): drain their rings, then take
 * what their trackers hand over from now on (the final sweeps, the end
 * of the run) straight into the outputs, in order, with no ring.
 */
void app_events_workers_stopped(void);

/* Records on: the keys the flow records' store holds now, as
 * cflow_recstore_save() writes them (their next records starting at
 * @p resume_ns, since the epoch), into *buf (free() it): their bytes,
 * 0 with records off, or a negative errno. For the state file, before
 * app_events_records_end() frees them. */
int64_t app_events_keys_save(uint64_t resume_ns, void **buf);

/* The keys a state file's tables were saved with, into the records'
 * store (the trackers took those tables over): entries added, or a
 * negative errno. */
int64_t app_events_keys_restore(const void *keys, size_t len);

/* Records on: a record of every flow left in the tables, the end of the
 * run (cflow_tracker_end_records()), after app_events_workers_stopped()
 * and after the state file is written. */
void app_events_records_end(void);

/* The worker's tracker callback (struct cflow_tracker_params' record_fn,
 * its arg the struct app_worker): a new flow's event, or a record, into
 * its ring, or once the workers stopped, straight to the outputs. */
void app_events_record(const struct cflow_record *r, void *arg);

/* Flush and close the outputs, free the rings; 0, or -EIO if an output
 * failed during the run (reported on stderr then). */
int app_events_close(void);

#endif /* _APP_EVENTS_H_ */
