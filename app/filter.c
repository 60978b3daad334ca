/* SPDX-License-Identifier: BSD-3-Clause */

/* The shared blocklist and its live reload under RCU. */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_debug.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "filter.h"

static struct cflow_blocklist *current;
static struct rte_rcu_qsbr *rcu;
static pthread_mutex_t reload_lock = PTHREAD_MUTEX_INITIALIZER;
static char source[256];
static char last_error[512];
static uint64_t reloads, reload_failures;

void
app_filter_init(const char *path, unsigned int nb_workers)
{
	size_t size = rte_rcu_qsbr_get_memsize(nb_workers);

	rcu = rte_zmalloc("cuckooflow_rcu", size, RTE_CACHE_LINE_SIZE);
	if (rcu == NULL || rte_rcu_qsbr_init(rcu, nb_workers) != 0)
		rte_exit(EXIT_FAILURE, "RCU for %u workers: out of memory\n",
			nb_workers);
	if (path[0] == '\0')
		return;
	current = cflow_bl_load(path, last_error, sizeof(last_error));
	if (current == NULL)
		rte_exit(EXIT_FAILURE, "--blocklist: %s\n", last_error);
	snprintf(source, sizeof(source), "%s", path);
}

struct cflow_blocklist *
app_filter_get(void)
{
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE);
}

struct rte_rcu_qsbr *
app_filter_rcu(void)
{
	return rcu;
}

int
app_filter_reload(const char *path, char *err, size_t err_len)
{
	struct cflow_blocklist *fresh, *old;
	char from[256];

	pthread_mutex_lock(&reload_lock);
	snprintf(from, sizeof(from), "%s", path != NULL ? path : source);
	if (from[0] == '\0') {
		snprintf(err, err_len, "no blocklist to reload");
		goto fail;
	}
	fresh = cflow_bl_load(from, err, err_len);
	if (fresh == NULL)
		goto fail;
	old = __atomic_exchange_n(&current, fresh, __ATOMIC_ACQ_REL);
	/* No worker can still hold the old table after this. */
	rte_rcu_qsbr_synchronize(rcu, RTE_QSBR_THRID_INVALID);
	cflow_bl_free(old);
	snprintf(source, sizeof(source), "%s", from);
	last_error[0] = '\0';
	reloads++;
	pthread_mutex_unlock(&reload_lock);
	return 0;
fail:
	snprintf(last_error, sizeof(last_error), "%s", err);
	reload_failures++;
	pthread_mutex_unlock(&reload_lock);
	return -1;
}

static void
add_info(struct rte_tel_data *d)
{
	struct cflow_blocklist *bl = app_filter_get();
	struct cflow_bl_info in;

	rte_tel_data_add_dict_string(d, "source", source);
	rte_tel_data_add_dict_u64(d, "reloads", reloads);
	rte_tel_data_add_dict_u64(d, "reload_failures", reload_failures);
	rte_tel_data_add_dict_string(d, "last_error", last_error);
	if (bl == NULL)
		return;
	cflow_bl_info(bl, &in);
	rte_tel_data_add_dict_u64(d, "entries", in.total);
	rte_tel_data_add_dict_u64(d, "addresses", in.entries[CFLOW_BL_ADDRESS]);
	rte_tel_data_add_dict_u64(d, "prefixes", in.entries[CFLOW_BL_PREFIX]);
	rte_tel_data_add_dict_u64(d, "flows", in.entries[CFLOW_BL_FLOW]);
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
	char err[512];
	int ret;

	(void)cmd;
	ret = app_filter_reload(params != NULL && params[0] != '\0' ?
			params : NULL, err, sizeof(err));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "result", ret == 0 ? "reloaded" :
		"failed, previous list kept");
	pthread_mutex_lock(&reload_lock);
	add_info(d);
	pthread_mutex_unlock(&reload_lock);
	return 0;
}

void
app_filter_telemetry(void)
{
	int ret = rte_telemetry_register_cmd("/cuckooflow/blocklist",
			tel_blocklist, "Blocklist in force: source, entries, "
			"reloads. Takes no parameters");

	if (ret == 0)
		ret = rte_telemetry_register_cmd("/cuckooflow/blocklist/reload",
			tel_reload, "Replace the blocklist. Parameters: string "
			"path (default: the current source)");
	if (ret != 0)
		rte_exit(EXIT_FAILURE, "telemetry /cuckooflow/blocklist: %s\n",
			strerror(-ret));
}

void
app_filter_fini(void)
{
	cflow_bl_free(current);
	current = NULL;
	rte_free(rcu);
}
