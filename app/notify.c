/* SPDX-License-Identifier: BSD-3-Clause */

/* systemd's readiness and status (notify.h). */

#include <stdio.h>

#include "notify.h"

#ifdef APP_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>

const int app_notify_built = 1;

void
app_notify_ready(const char *status)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void
app_notify_status(const char *status)
{
	sd_notifyf(0, "STATUS=%s", status);
}

void
app_notify_reloading(void)
{
	sd_notify(0, "RELOADING=1");
}

void
app_notify_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}
#else
const int app_notify_built;

void
app_notify_ready(const char *status)
{
	(void)status;
}

void
app_notify_status(const char *status)
{
	(void)status;
}

void
app_notify_reloading(void)
{
}

void
app_notify_stopping(void)
{
}
#endif
