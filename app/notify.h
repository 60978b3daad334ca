/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_NOTIFY_H_
#define _APP_NOTIFY_H_

/*
 * systemd's service protocol (Type=notify, sd_notify(3)): READY=1 once
 * the ports are started and the workers run, a STATUS= line systemctl
 * status shows, RELOADING=1 around a SIGHUP's reload, STOPPING=1 at
 * the end. Through libsystemd (built with it when meson finds Debian's
 * libsystemd-dev: then the unit is Type=notify); without it, or outside
 * systemd ($NOTIFY_SOCKET unset), these do nothing.
 */

/* Whether this build tells systemd (the unit's Type=). */
extern const int app_notify_built;

void app_notify_ready(const char *status);
void app_notify_status(const char *status);
void app_notify_reloading(void);
void app_notify_stopping(void);

#endif /* _APP_NOTIFY_H_ */
