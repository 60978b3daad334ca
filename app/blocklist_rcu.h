/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_BLOCKLIST_RCU_H_
#define _APP_BLOCKLIST_RCU_H_

/*
 * The blocklist in force: one read-only table shared by the workers,
 * replaced while traffic flows. A reload builds the new table off the
 * datapath, swaps the pointer atomically, and frees the old table only
 * after every worker has reported a quiescent state (rte_rcu_qsbr).
 */

#include <limits.h>
#include <stddef.h>

#include <rte_rcu_qsbr.h>

#include "blocklist.h"

/* Room for any message of this module: the longest path and a reason. */
#define APP_BLOCKLIST_ERR_MAX (PATH_MAX + 256)

/*
 * Errors (libbpf's convention, as the libraries): a negative errno, errno
 * set to it, and one line for a user in @p err when not NULL.
 */

/*
 * Set up RCU for @p nb_workers and load @p path (empty: no list).
 * Returns 0, or -ENOMEM (RCU), -ENAMETOOLONG (a path of PATH_MAX bytes
 * or more) or cbl_load()'s error, with the reason in @p err.
 */
int app_blocklist_init(const char *path, unsigned int nb_workers,
		char *err, size_t err_len);

/* The current table; workers read it once per loop. */
struct cbl *app_blocklist_get(void);

struct rte_rcu_qsbr *app_blocklist_rcu(void);

/*
 * Replace the list with @p path (NULL: reread the current source). On
 * failure the old list stays in force and @p err says why (also kept
 * for telemetry's last_error). A path of PATH_MAX bytes or more is
 * refused (-ENAMETOOLONG), never shortened; with no source to reread,
 * -ENOENT. The load holds a lock but never blocks on I/O: FIFOs,
 * directories and devices are refused, and sizes are bounded (see
 * blocklist.h).
 * Returns 0 or a negative errno (errno set). Thread safe.
 */
int app_blocklist_reload(const char *path, char *err, size_t err_len);

/* Register the telemetry commands: 0, or a negative errno with the
 * reason in @p err. */
int app_blocklist_telemetry(char *err, size_t err_len);

/* "FILE, N entries (A addresses, P prefixes, F flows)", or "none": the
 * list in force, for the banner and the reload's message. */
void app_blocklist_describe(char *buf, size_t len);

void app_blocklist_fini(void);

#endif /* _APP_BLOCKLIST_RCU_H_ */
