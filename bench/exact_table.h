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

#include "cflow.h"
#include "worker.h"

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

/** The worker loop's hooks: table is a struct exact_table. */
extern const struct app_flow_table_ops exact_table_ops;

#endif /* _EXACT_TABLE_H_ */
