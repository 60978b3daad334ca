/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_STATS_H_
#define _APP_STATS_H_

/*
 * Counters: per lcore and summed, printed, written as JSON and served
 * over DPDK telemetry (/cuckooflow/...), all from the counter tables of
 * app/counters.h; the periodic snapshots (--stats-period: a line, or
 * the whole table with --stats-all; --stats-json-period: JSON lines),
 * a replay's progress and the summary at exit.
 */

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "output.h"
#include "ports.h"

struct app_worker;

/* Register the telemetry commands; open --stats-json-period. 0, or a
 * negative errno with the reason in @p err. */
int app_stats_setup(const struct app_config *cfg,
		struct app_worker *workers, unsigned int nb_workers,
		const struct app_topology *topo, char *err, size_t err_len);

/*
 * A period's snapshot (main lcore, every --stats-period): one line to
 * @p out, "cuckooflow: stats TIME, over S s: " its rates since the
 * previous one (or the start), open flows, the fullest table's load,
 * what was lost, a replay's progress; with --stats-all, the table too.
 * With --stats-json-period, the same as one JSON line (the --stats-json
 * object with "time", "time_ns", "interval_s" and "rates" first), whole
 * (app/output.h); its path followed when moved (logrotate). A write
 * error is said once (exit status 1: app_stats_close()).
 */
void app_stats_period(FILE *out);

/* A replay's progress (main lcore, every 10 s of a replay without
 * --stats-period): "cuckooflow: replay 43.1%: ...". Nothing if no port
 * replays a capture. */
void app_stats_progress(FILE *out);

/* SIGHUP: --stats-json-period reopened at its path. */
void app_stats_reopen(void);

/* --stats-json-period lines lost so far (app/losses.c). */
uint64_t app_stats_lines_lost(void);

/*
 * At exit: what the run did, in a few lines: its time, a replay's
 * capture span and rates, the flows, each port's packets, every counter
 * that is not 0 and what was lost; with --stats-all, the table.
 * @p elapsed_ns: the run's wall-clock time.
 */
void app_stats_summary(FILE *out, uint64_t elapsed_ns);

/* Close --stats-json-period: 0, or -EIO if a line could not be written
 * during the run (said on stderr). */
int app_stats_close(void);

/* A line for each worker whose table entered or left emergency mode
 * since the last call (main lcore). */
void app_stats_emergency_log(FILE *out);

/* {"total": {...}, "lcores": [{...}], "table": {"lcore_N": {...}}}, one
 * line, into @p path (truncated; a regular file, or a FIFO with a
 * reader: app/output.h). 0, or -errno with the reason in @p err. */
int app_stats_write_json(const char *path, char *err, size_t err_len);

#endif /* _APP_STATS_H_ */
