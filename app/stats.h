/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_STATS_H_
#define _APP_STATS_H_

/*
 * Counters: per lcore and summed, printed as a table, written as JSON and
 * served over DPDK telemetry (/cuckooflow/...), all from the counter
 * tables of app/counters.h.
 */

#include <stdio.h>

#include "config.h"
#include "output.h"
#include "ports.h"

struct app_worker;

/* Register the telemetry commands. 0, or a negative errno with the
 * reason in @p err. */
int app_stats_setup(const struct app_config *cfg,
		struct app_worker *workers, unsigned int nb_workers,
		const struct app_topology *topo, char *err, size_t err_len);

void app_stats_print(FILE *out);

/*
 * A period's snapshot (main lcore, every --stats-period): its wall-clock
 * time, per-second rates since the previous one (or the start), each
 * table's load, and the counter table, to @p out; with @p json, the
 * same as one JSON line (the --stats-json object with "time",
 * "time_ns", "interval_s" and "rates" first), whole, written at once
 * (app/output.h). 0, or -errno if the line was not written.
 */
int app_stats_period(FILE *out, struct app_output *json);

/* Packets the ports could not deliver: rx_nombuf + rx_missed +
 * rx_errors, summed over the ports. */
uint64_t app_stats_rx_lost(void);

/* Frames received but dropped unread, their mbuf chain short of their
 * length (rx_len_mismatch, summed over the workers). */
uint64_t app_stats_rx_len_mismatch(void);

/* A line for each worker whose table entered or left emergency mode
 * since the last call (main lcore). */
void app_stats_emergency_log(FILE *out);

/* {"total": {...}, "lcores": [{...}], "table": {"lcore_N": {...}}}, one
 * line, into @p path (truncated; a regular file, or a FIFO with a
 * reader: app/output.h). 0, or -errno with the reason in @p err. */
int app_stats_write_json(const char *path, char *err, size_t err_len);

#endif /* _APP_STATS_H_ */
