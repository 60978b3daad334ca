/* SPDX-License-Identifier: BSD-3-Clause */

/* --state-interval: the tables saved while the run goes on. */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "cfutil.h"
#include "checkpoint.h"
#include "control.h"
#include "events.h"
#include "log.h"
#include "run.h"
#include "telemetry.h"
#include "worker.h"

static struct {
	const struct app_run *run;
	const struct app_state_run *srun;
	pthread_t thread;
	bool started;
	bool quit;
	/* the flow records' keys: asked by the save, made by the main
	 * lcore (app_checkpoint_serve()), ready: keys and keys_len set */
	bool keys_asked;
	bool keys_ready;
	void *keys;
	int64_t keys_len;
	pthread_mutex_t lock;   /* the figures below, for telemetry */
	uint64_t saves, failures, last_flows, last_ms, last_ns;
	char last_error[512];
} cp = { .lock = PTHREAD_MUTEX_INITIALIZER };

uint64_t
app_checkpoint_clock(const struct app_run *run)
{
	return run->cfg->clock == APP_CLOCK_PKT ?
		app_run_latest_ns(run->workers, run->nb_workers) :
		app_tsc_ns(run);
}

int64_t
app_checkpoint_keys(const struct app_run *run, void **buf)
{
	return app_events_keys_save(run->cfg->clock == APP_CLOCK_PKT ?
		app_checkpoint_clock(run) : cfu_clock_ns(CLOCK_REALTIME), buf);
}

/* Worker @p i saves its own table (app_state_save_fn). */
static int64_t
worker_save(unsigned int i, void *buf, uint64_t cap, void *arg)
{
	const struct app_run *run = arg;

	return app_control_save(&run->workers[i], buf, cap);
}

void
app_checkpoint_serve(void)
{
	if (!__atomic_load_n(&cp.keys_asked, __ATOMIC_ACQUIRE) ||
			__atomic_load_n(&cp.keys_ready, __ATOMIC_RELAXED))
		return;
	cp.keys_len = app_checkpoint_keys(cp.run, &cp.keys);
	__atomic_store_n(&cp.keys_ready, true, __ATOMIC_RELEASE);
}

/* The keys from the main lcore, before the tables (a flow new between
 * the two has no key: its records after a crash are unnamed); false if
 * the run stops first, or none could be made. */
static bool
keys_asked(void)
{
	__atomic_store_n(&cp.keys_ready, false, __ATOMIC_RELAXED);
	__atomic_store_n(&cp.keys_asked, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&cp.keys_ready, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&cp.quit, __ATOMIC_ACQUIRE))
			return false;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	__atomic_store_n(&cp.keys_asked, false, __ATOMIC_RELAXED);
	return cp.keys_len >= 0;
}

static void
checkpoint(void)
{
	uint64_t t0 = cfu_clock_ns(CLOCK_MONOTONIC), flows = 0;
	bool keys = app_config_records(cp.run->cfg) && keys_asked();
	char err[512];
	int ret;

	ret = app_state_write(cp.run->cfg->state_file, cp.srun,
		cp.run->workers, worker_save, (void *)(uintptr_t)cp.run,
		app_checkpoint_clock(cp.run), keys ? cp.keys : NULL,
		keys ? (uint64_t)cp.keys_len : 0, &flows, err, sizeof(err));
	if (keys) {
		free(cp.keys);
		cp.keys = NULL;
	}
	/* Left off by the stop (the workers serve no more requests): no
	 * failure, the exit saves the tables. */
	if (ret != 0 && __atomic_load_n(&cp.run->quit, __ATOMIC_ACQUIRE)) {
		app_log(APP_LOG_NOTICE, "--state-interval: the save under way "
			"left off: the run stops (the tables are saved at "
			"exit)");
		return;
	}
	pthread_mutex_lock(&cp.lock);
	if (ret == 0) {
		/* the first, and the first after failures, said */
		if (cp.saves == 0 || cp.last_error[0] != '\0')
			app_log(APP_LOG_NOTICE, "state: %s: saved %" PRIu64
				" open flows (every %" PRIu64 " s from now on, "
				"and at exit)", cp.run->cfg->state_file, flows,
				cp.run->cfg->state_interval_s);
		cp.saves++;
		cp.last_flows = flows;
		cp.last_ms = (cfu_clock_ns(CLOCK_MONOTONIC) - t0) / 1000000;
		cp.last_ns = cfu_clock_ns(CLOCK_REALTIME);
		cp.last_error[0] = '\0';
	} else {
		if (cp.last_error[0] == '\0')
			app_log(APP_LOG_ERR, "--state-interval: %s (the file "
				"saved before stays; tried again each interval)",
				err);
		cp.failures++;
		snprintf(cp.last_error, sizeof(cp.last_error), "%s", err);
	}
	pthread_mutex_unlock(&cp.lock);
}

static void *
checkpoint_main(void *arg)
{
	uint64_t period = cp.run->cfg->state_interval_s * 1000000000u;
	uint64_t next = cfu_clock_ns(CLOCK_MONOTONIC) + period;

	(void)arg;
	while (!__atomic_load_n(&cp.quit, __ATOMIC_ACQUIRE)) {
		if (cfu_clock_ns(CLOCK_MONOTONIC) < next) {
			nanosleep(&(struct timespec){ .tv_nsec = 50000000 },
				NULL);
			continue;
		}
		checkpoint();
		next += period;
		if (next < cfu_clock_ns(CLOCK_MONOTONIC))
			next = cfu_clock_ns(CLOCK_MONOTONIC) + period;
	}
	return NULL;
}

static int
tel_state(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&cp.lock);
	app_telemetry_add_string(d, "file", cp.run->cfg->state_file);
	rte_tel_data_add_dict_u64(d, "interval_s",
		cp.run->cfg->state_interval_s);
	rte_tel_data_add_dict_u64(d, "saves", cp.saves);
	rte_tel_data_add_dict_u64(d, "save_failures", cp.failures);
	rte_tel_data_add_dict_u64(d, "last_flows", cp.last_flows);
	rte_tel_data_add_dict_u64(d, "last_save_ms", cp.last_ms);
	rte_tel_data_add_dict_u64(d, "last_save_ns", cp.last_ns);
	app_telemetry_add_string(d, "last_error", cp.last_error);
	pthread_mutex_unlock(&cp.lock);
	return 0;
}

int
app_checkpoint_start(const struct app_run *run,
		const struct app_state_run *srun, char *err, size_t err_len)
{
	int ret;

	cp.run = run;
	cp.srun = srun;
	if (run->cfg->state_file[0] == '\0')
		return 0;
	ret = app_telemetry_register("/cuckooflow/state", tel_state,
		"--state-file's saves while running (--state-interval): saves, "
		"failures, the last one's flows and time. Takes no parameters",
		err, err_len);
	if (ret < 0 || run->cfg->state_interval_s == 0)
		return ret;
	ret = pthread_create(&cp.thread, NULL, checkpoint_main, NULL);
	if (ret != 0)
		return cfu_fail(ret, err, err_len, "--state-interval: a thread: "
			"%s", strerror(ret));
	cp.started = true;
	return 0;
}

void
app_checkpoint_stop(void)
{
	if (!cp.started)
		return;
	__atomic_store_n(&cp.quit, true, __ATOMIC_RELEASE);
	pthread_join(cp.thread, NULL);
	cp.started = false;
}
