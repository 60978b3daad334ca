/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_TELEMETRY_H_
#define _APP_TELEMETRY_H_

/*
 * The application's telemetry commands, made safe at shutdown. DPDK
 * 22.11 cannot unregister a command, and its handlers run on the
 * telemetry threads whenever a client asks: every command goes through
 * one dispatcher that holds a read lock while the handler runs, and
 * app_telemetry_stop() takes the write lock, so that once it returns no
 * handler runs or will run, and what they read may be freed.
 */

#include <stddef.h>

#include <rte_telemetry.h>

/* Register @p cmd. 0, or a negative errno with the reason in @p err. */
int app_telemetry_register(const char *cmd, telemetry_cb fn,
		const char *help, char *err, size_t err_len);

/* A command, for app_telemetry_register_all(). */
struct app_telemetry_cmd {
	const char *cmd;
	telemetry_cb fn;
	const char *help;
};

/* Register @p n commands, up to the first failure. */
int app_telemetry_register_all(const struct app_telemetry_cmd *cmds,
		unsigned int n, char *err, size_t err_len);

/* @p n containers for a reply (rte_tel_data_alloc()), all or none: 0,
 * or -ENOMEM. */
int app_telemetry_alloc(struct rte_tel_data **d, unsigned int n);

/*
 * Add string @p s under @p name, as printable ASCII: every other byte
 * (a path's or a request's non-ASCII or control bytes) as \xNN. DPDK
 * 22.11's JSON writer indexes a table by each char, signed: a byte of
 * 0x80 or more read before the table, and the reply was no longer JSON
 * (a reload with such a path broke every later /cuckooflow/blocklist).
 * A string longer than a telemetry string (RTE_TEL_MAX_STRING_LEN - 1)
 * keeps its end, where a path's file name and a reason are, after
 * "...", rather than being cut silently.
 */
void app_telemetry_add_string(struct rte_tel_data *d, const char *name,
		const char *s);

/* Wait for running handlers; later requests get -ENODEV. */
void app_telemetry_stop(void);

#endif /* _APP_TELEMETRY_H_ */
