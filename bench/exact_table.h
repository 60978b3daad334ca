/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _EXACT_TABLE_H_
#define _EXACT_TABLE_H_

/*
 * What a DPDK user would build instead of lib/cflow's tracker: an exact
 * flow table on rte_hash, keyed by the canonical 5-tuple (struct
 * cflow_key), with each flow's last-seen time and state in an array
 * indexed by the key's rte_hash position, and expiry by a paced scan of
 * those positions. It keeps the tracker's contract (verdicts, counters,
 * timeouts, linger), so that bench_pipeline compares like with like.
 */

#include <stdint.h>

#include "cflow.h"

struct app_rxq;
struct app_worker;
struct cbl;
struct rte_mbuf;

struct exact_table;

/**
 * A table with the tracker's parameters @p p (zero fields are the
 * tracker's defaults: cflow_tracker_params_resolve()). NULL with errno
 * set: EINVAL for parameters the tracker refuses, or too many flows for
 * rte_hash; rte_hash_create()'s reason (ENOMEM, ENOSPC, EEXIST, ...);
 * ENOMEM.
 */
struct exact_table *exact_table_create(const struct cflow_tracker_params *p,
		int socket_id);

void exact_table_free(struct exact_table *t);

void exact_table_counters(const struct exact_table *t,
		struct cflow_counters *c);

/** cflow_track_parsed()'s contract on this table (no packet counts:
 * @p counts, if not NULL, gets 0s). */
void exact_table_track(struct exact_table *t, const struct cflow_input *in,
		const struct cflow_packet *pkts,
		const enum cflow_parse_status *status, unsigned int n,
		enum cflow_verdict *verdicts, uint8_t *counts);

/** cflow_sweep(): a paced share of the table (single stream: idleness
 * judged at @p now_ns, @p as_of_ns ignored). */
uint64_t exact_table_sweep(struct exact_table *t, uint64_t now_ns,
		uint64_t as_of_ns);

/** cflow_sweep_all(). */
uint64_t exact_table_sweep_all(struct exact_table *t, uint64_t now_ns);

/**
 * The application's worker loop over these tables: app/worker.c built a
 * second time (bench/meson.build) with exact_worker_table.h for its
 * table calls, worker w tracking into exact_worker_tables[w->index].
 * app_worker_burst() under another name; the rest as the application's.
 */
extern struct exact_table *exact_worker_tables[];

void exact_worker_burst(struct app_worker *w, struct app_rxq *q,
		const struct cbl *bl, struct rte_mbuf **pkts, uint16_t n);

#endif /* _EXACT_TABLE_H_ */
