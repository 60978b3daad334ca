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

#include <rte_telemetry.h>

/* Register @p cmd; exits with a message on failure. */
void app_telemetry_register(const char *cmd, telemetry_cb fn,
		const char *help);

/* Wait for running handlers; later requests get -ENODEV. */
void app_telemetry_stop(void);

#endif /* _APP_TELEMETRY_H_ */
