/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_LOSSES_H_
#define _APP_LOSSES_H_

/*
 * Everything the run can lose, in one list: packets (the ports' rx
 * counters, frames dropped unread, full handoff and tx rings), flow
 * events (a full event ring, first packets not captured) and records of
 * the outputs (IPFIX, JSON lines, pcapng, --stats-json-period). Each is
 * a counter elsewhere (app/counters.h, /cuckooflow/events); this module
 * watches them: a loss is logged when it starts, then at most once a
 * minute while it goes on, said at exit, shown by /cuckooflow/losses
 * (and the Prometheus exporter: cuckooflow_<kind>_lost_total{reason}),
 * and sets a replay's exit status (docs/usage.md, Exit status).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ports.h"

struct app_worker;

/* Exit statuses (docs/usage.md, man page): an error (a bad option, a
 * failed start, an output that failed) is 1; with --exit-on-eof, a run
 * that lost packets is 3, one that lost only events or records 4. */
#define APP_EXIT_ERROR 1
#define APP_EXIT_PACKETS_LOST 3
#define APP_EXIT_EVENTS_LOST 4

enum app_loss_kind {
	APP_LOSS_PACKETS,
	APP_LOSS_EVENTS,
	APP_LOSS_RECORDS,
	APP_LOSS_KINDS,
};

/* What may be lost, for the workers' counters, the ports' and the
 * outputs'; and the telemetry command. 0, or a negative errno with the
 * reason in @p err. */
int app_losses_setup(struct app_worker *workers, unsigned int nb_workers,
		const struct app_topology *topo, char *err, size_t err_len);

/* The main lcore, every loop: once a second, log what began or goes on
 * being lost. */
void app_losses_watch(void);

/* The losses so far, by kind. */
void app_losses_count(uint64_t lost[APP_LOSS_KINDS]);

/* One line for a summary: "none", or each loss ("handoff_drops 1204
 * packets, ipfix_records_lost 12 records"), into @p buf. */
void app_losses_text(char *buf, size_t len);

/*
 * At exit: each loss on stderr with its cause and remedy. Returns the
 * exit status a replay (@p replay: --exit-on-eof) takes from them: 0,
 * APP_EXIT_PACKETS_LOST or APP_EXIT_EVENTS_LOST; 0 for a live run,
 * which reports but does not fail on them.
 */
int app_losses_report(bool replay);

#endif /* _APP_LOSSES_H_ */
