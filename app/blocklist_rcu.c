/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The shared blocklist and its live reload under RCU. A reload holds
 * reload_lock while it loads, so it must never wait on I/O it cannot
 * bound: the library opens paths non-blocking, refuses anything but a
 * regular file and checks the size before reading.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_debug.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "blocklist_rcu.h"
#include "cfutil.h"
#include "telemetry.h"

static struct cbl *current;
static struct rte_rcu_qsbr *rcu;
static pthread_mutex_t reload_lock = PTHREAD_MUTEX_INITIALIZER;
static char source[PATH_MAX];
static char last_error[APP_BLOCKLIST_ERR_MAX];
static uint64_t reloads, reload_failures;
/* The last successful reload: microseconds to read and build the list,
 * and to wait until no worker could still hold the old one (the RCU
 * grace period: as long as the slowest worker takes to finish a pass of
 * its loop, longer when its CPU is shared); the longest wait so far. */
static uint64_t last_load_us, last_sync_us, max_sync_us;

int
app_blocklist_init(const char *path, unsigned int nb_workers, char *err,
		size_t err_len)
{
	size_t size = rte_rcu_qsbr_get_memsize(nb_workers);

	rcu = rte_zmalloc("cuckooflow_rcu", size, RTE_CACHE_LINE_SIZE);
	if (rcu == NULL || rte_rcu_qsbr_init(rcu, nb_workers) != 0)
		return cfu_fail(ENOMEM, err, err_len,
			"RCU for %u workers: out of memory", nb_workers);
	if (path[0] == '\0')
		return 0;
	if (strlen(path) >= sizeof(source))
		return cfu_fail(ENAMETOOLONG, err, err_len,
			"--blocklist: a path of %zu bytes: %s (at most %zu)",
			strlen(path), strerror(ENAMETOOLONG),
			sizeof(source) - 1);
	current = cbl_load(path, last_error, sizeof(last_error));
	if (current == NULL)
		return cfu_fail(errno != 0 ? errno : EIO, err, err_len,
			"--blocklist: %s", last_error);
	memcpy(source, path, strlen(path) + 1);
	return 0;
}

struct cbl *
app_blocklist_get(void)
{
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE);
}

struct rte_rcu_qsbr *
app_blocklist_rcu(void)
{
	return rcu;
}

int
app_blocklist_reload(const char *path, char *err, size_t err_len)
{
	struct cbl *fresh, *old;
	char from[sizeof(source)], why[sizeof(last_error)];
	uint64_t t0, t1;
	int ret;

	pthread_mutex_lock(&reload_lock);
	if (path == NULL)
		path = source;
	/* Never load a shortened path: it names another file. */
	if (strlen(path) >= sizeof(from)) {
		snprintf(why, sizeof(why), "a path of %zu bytes: %s (at most "
			"%zu)", strlen(path), strerror(ENAMETOOLONG),
			sizeof(from) - 1);
		ret = -ENAMETOOLONG;
		goto fail;
	}
	memcpy(from, path, strlen(path) + 1);
	if (from[0] == '\0') {
		/* nothing tried: not a failed reload (reload_failures, which
		 * an alert reads) */
		pthread_mutex_unlock(&reload_lock);
		return cfu_fail(ENOENT, err, err_len, "no blocklist to reload");
	}
	t0 = cfu_clock_ns(CLOCK_MONOTONIC);
	fresh = cbl_load(from, why, sizeof(why));
	if (fresh == NULL) {
		ret = errno != 0 ? -errno : -EIO;
		goto fail;
	}
	t1 = cfu_clock_ns(CLOCK_MONOTONIC);
	old = __atomic_exchange_n(&current, fresh, __ATOMIC_ACQ_REL);
	/* No worker can still hold the old table after this. */
	rte_rcu_qsbr_synchronize(rcu, RTE_QSBR_THRID_INVALID);
	last_load_us = (t1 - t0) / 1000;
	last_sync_us = (cfu_clock_ns(CLOCK_MONOTONIC) - t1) / 1000;
	if (last_sync_us > max_sync_us)
		max_sync_us = last_sync_us;
	cbl_free(old);
	memcpy(source, from, strlen(from) + 1);
	last_error[0] = '\0';
	reloads++;
	pthread_mutex_unlock(&reload_lock);
	return 0;
fail:
	memcpy(last_error, why, strlen(why) + 1);
	reload_failures++;
	pthread_mutex_unlock(&reload_lock);
	return cfu_fail(-ret, err, err_len, "%s", why);
}

static void
add_info(struct rte_tel_data *d)
{
	struct cbl *bl = app_blocklist_get();
	struct cbl_info in;

	app_telemetry_add_string(d, "source", source);
	rte_tel_data_add_dict_u64(d, "reloads", reloads);
	rte_tel_data_add_dict_u64(d, "reload_failures", reload_failures);
	rte_tel_data_add_dict_u64(d, "last_load_us", last_load_us);
	rte_tel_data_add_dict_u64(d, "last_sync_us", last_sync_us);
	rte_tel_data_add_dict_u64(d, "max_sync_us", max_sync_us);
	app_telemetry_add_string(d, "last_error", last_error);
	if (bl == NULL)
		return;
	cbl_info(bl, &in);
	rte_tel_data_add_dict_u64(d, "entries", in.total);
	rte_tel_data_add_dict_u64(d, "addresses", in.entries[CBL_ADDRESS]);
	rte_tel_data_add_dict_u64(d, "prefixes", in.entries[CBL_PREFIX]);
	rte_tel_data_add_dict_u64(d, "flows", in.entries[CBL_FLOW]);
	rte_tel_data_add_dict_u64(d, "prefix_lengths_v4", in.v4_lengths);
	rte_tel_data_add_dict_u64(d, "prefix_lengths_v6", in.v6_lengths);
	rte_tel_data_add_dict_u64(d, "bits_per_entry_milli",
		(uint64_t)(in.bits_per_entry * 1e3));
}

static int
tel_blocklist(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	pthread_mutex_lock(&reload_lock);
	rte_tel_data_start_dict(d);
	add_info(d);
	pthread_mutex_unlock(&reload_lock);
	return 0;
}

static int
tel_reload(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char err[sizeof(last_error)];
	int ret;

	(void)cmd;
	ret = app_blocklist_reload(params != NULL && params[0] != '\0' ?
			params : NULL, err, sizeof(err));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "result", ret == 0 ? "reloaded" :
		"failed, previous list kept");
	pthread_mutex_lock(&reload_lock);
	add_info(d);
	pthread_mutex_unlock(&reload_lock);
	return 0;
}

int
app_blocklist_telemetry(char *err, size_t err_len)
{
	static const struct app_telemetry_cmd cmds[] = {
		{ "/cuckooflow/blocklist", tel_blocklist,
			"Blocklist in force: source, entries, reloads. Takes no "
			"parameters" },
		{ "/cuckooflow/blocklist/reload", tel_reload,
			"Replace the blocklist. Parameters: string path "
			"(default: the current source)" },
	};

	return app_telemetry_register_all(cmds, RTE_DIM(cmds), err, err_len);
}

void
app_blocklist_describe(char *buf, size_t len)
{
	struct cbl *bl;
	struct cbl_info in;

	pthread_mutex_lock(&reload_lock);
	bl = app_blocklist_get();
	if (bl == NULL) {
		snprintf(buf, len, "none");
	} else {
		cbl_info(bl, &in);
		snprintf(buf, len, "%s, %" PRIu64 " entries (%" PRIu64
			" addresses, %" PRIu64 " prefixes, %" PRIu64 " flows)",
			source, in.total, in.entries[CBL_ADDRESS],
			in.entries[CBL_PREFIX], in.entries[CBL_FLOW]);
	}
	pthread_mutex_unlock(&reload_lock);
}

void
app_blocklist_fini(void)
{
	cbl_free(current);
	current = NULL;
	rte_free(rcu);
}
