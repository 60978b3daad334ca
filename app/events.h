/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_EVENTS_H_
#define _APP_EVENTS_H_

/*
 * Flow events off the datapath: each worker queues its events (a new
 * flow's first packet, the FIN/RST that closed one) into a ring of its
 * own (app_worker.event_ring; a full ring drops them, counted in
 * events_dropped); the main lcore drains the rings into the outputs:
 * JSON lines (--events), IPFIX over UDP (--ipfix) and a pcapng of each
 * new flow's first packet written with rte_pcapng (--new-flow-pcap).
 */

#include <stdbool.h>

#include "config.h"
#include "worker.h"

/* Whether any output is on. */
bool app_events_enabled(const struct app_config *cfg);

/* The rx mbufs that events may hold at once (--new-flow-pcap), for the
 * pool's size. */
uint64_t app_events_mbufs(const struct app_config *cfg,
		unsigned int nb_workers);

/*
 * Open the outputs and give every worker its ring (before the workers
 * start). Exits with a message on failure, as the other setup steps.
 */
void app_events_setup(const struct app_config *cfg, struct app_run *run);

/* Drain every ring into the outputs (main lcore); returns the events
 * handled. At exit, after the workers stopped, it drains all. */
unsigned int app_events_drain(void);

/* Flush and close the outputs, free the rings; 0, or -EIO if an output
 * failed during the run (reported on stderr then). */
int app_events_close(void);

#endif /* _APP_EVENTS_H_ */
