/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_FILTER_H_
#define _APP_FILTER_H_

/*
 * The blocklist in force: one read-only table shared by the workers,
 * replaced while traffic flows. A reload builds the new table off the
 * datapath, swaps the pointer atomically, and frees the old table only
 * after every worker has reported a quiescent state (rte_rcu_qsbr).
 */

#include <stddef.h>

#include <rte_rcu_qsbr.h>

#include "blocklist.h"

/* Load @p path (may be empty: no list) and set up RCU for the workers;
 * exits on error. */
void app_filter_init(const char *path, unsigned int nb_workers);

/* The current table; workers read it once per loop. */
struct cflow_blocklist *app_filter_get(void);

struct rte_rcu_qsbr *app_filter_rcu(void);

/*
 * Replace the list with @p path (NULL: reread the current source). On
 * failure the old list stays in force and @p err says why (also kept
 * for telemetry's last_error). A path of PATH_MAX bytes or more is
 * refused (-ENAMETOOLONG), never shortened. The load holds a lock but
 * never blocks on I/O: FIFOs, directories and devices are refused, and
 * sizes are bounded (see blocklist.h).
 * Returns 0 or a negative errno. Thread safe.
 */
int app_filter_reload(const char *path, char *err, size_t err_len);

/* Register the telemetry commands (exits on failure). */
void app_filter_telemetry(void);

void app_filter_fini(void);

#endif /* _APP_FILTER_H_ */
