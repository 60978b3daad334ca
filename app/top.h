/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_TOP_H_
#define _APP_TOP_H_

/*
 * Top sources of new flows (--top-sources, --top-period): each worker
 * feeds a Space-Saving sketch (lib/cflow's cflow_topk) with the source
 * of every new flow; each period the main lcore switches the workers to
 * their other sketch, and once each has switched (app_worker.top_ack)
 * merges the ones they left into the period's answer, served by
 * /cuckooflow/top_new_sources[,N]. No sketch is read while written.
 */

#include <stddef.h>
#include <stdio.h>

#include "config.h"

struct app_run;

/* The workers' sketches and the command (before the workers start). 0,
 * or a negative errno with the reason in @p err (app_top_fini() frees
 * what was made). */
int app_top_setup(const struct app_config *cfg, struct app_run *run,
		char *err, size_t err_len);

/* The main lcore, every loop: rotate when a period is over. */
void app_top_period(void);

/* After the workers stopped: the top sources since the last period's
 * end (the whole run if none ended), to @p out. Periods are wall-clock
 * time; a replay under the packet clock that ended none says the
 * capture time it covered instead (@p capture_ns, 0 if not known). */
void app_top_print_final(FILE *out, uint64_t capture_ns);

/* After the workers stopped. */
void app_top_fini(void);

#endif /* _APP_TOP_H_ */
