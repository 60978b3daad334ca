/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_CONTROL_H_
#define _APP_CONTROL_H_

/*
 * Telemetry commands that reach into the workers' tables, served by the
 * workers themselves between bursts (struct app_ctl):
 * /cuckooflow/flow,<proto>,<src>,<sport>,<dst>,<dport> looks one flow up,
 * /cuckooflow/flush empties every table.
 */

#include "worker.h"

void app_control_setup(const struct app_run *run);

#endif /* _APP_CONTROL_H_ */
