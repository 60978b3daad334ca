/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _EXACT_WORKER_TABLE_H_
#define _EXACT_WORKER_TABLE_H_

/*
 * The table calls of app/worker.c when bench_pipeline builds it over its
 * exact rte_hash table (bench/meson.build: APP_WORKER_TABLE): the
 * application's own are direct calls to lib/cflow's tracker. Worker w
 * tracks into exact_worker_tables[w->index].
 */

#include "exact_table.h"

static inline void
table_track(struct app_worker *w, const struct cflow_input *in,
		const struct cflow_packet *pkts,
		const enum cflow_parse_status *status, unsigned int n,
		enum cflow_verdict *verdicts, uint8_t *counts)
{
	exact_table_track(exact_worker_tables[w->index], in, pkts, status, n,
		verdicts, counts);
}

static inline void
table_sweep(struct app_worker *w, uint64_t now_ns, uint64_t as_of_ns)
{
	(void)exact_table_sweep(exact_worker_tables[w->index], now_ns,
		as_of_ns);
}

static inline void
table_sweep_all(struct app_worker *w, uint64_t now_ns)
{
	(void)exact_table_sweep_all(exact_worker_tables[w->index], now_ns);
}

#endif /* _EXACT_WORKER_TABLE_H_ */
