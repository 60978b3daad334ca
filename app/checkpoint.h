/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_CHECKPOINT_H_
#define _APP_CHECKPOINT_H_

/*
 * --state-interval S: a thread of its own saves the flow tables to
 * --state-file every S seconds while the run goes on, so that a crash
 * (SIGKILL, a power cut) loses at most S seconds of flows, not all of
 * them. Each worker saves its own table between two bursts (a control
 * request, app_control_save(): the table is only ever touched by its
 * worker), which pauses its datapath for as long as the copy takes;
 * the thread then writes the file as the exit does (app/state.h:
 * durably, a temporary file renamed). /cuckooflow/state says how it
 * went.
 */

#include <stddef.h>
#include <stdint.h>

#include "state.h"

struct app_run;

/*
 * Start the thread, if the config asks for one (@p srun: what the file
 * is saved with, its table_max the buffer for each table). 0, or a
 * negative errno with the reason in @p err. The telemetry command is
 * registered whenever --state-file is given.
 */
int app_checkpoint_start(const struct app_run *run,
		const struct app_state_run *srun, char *err, size_t err_len);

/* Stop the thread and wait for it (before the workers stop: it asks
 * them to save). */
void app_checkpoint_stop(void);

/* On the main lcore, each pass of its loop: the flow records' keys a
 * save in progress asks for (app_events_keys_save(): the main lcore
 * owns them), handed over. */
void app_checkpoint_serve(void);

/* The run's clock for a save: TSC time, or the last packet time. */
uint64_t app_checkpoint_clock(const struct app_run *run);

/* On the main lcore: the flow records' keys for a save of now
 * (app_events_keys_save()), their flows' next records starting at it:
 * the last packet time, or the wall clock. */
int64_t app_checkpoint_keys(const struct app_run *run, void **buf);

#endif /* _APP_CHECKPOINT_H_ */
