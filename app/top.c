/* SPDX-License-Identifier: BSD-3-Clause */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_debug.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "cfutil.h"
#include "telemetry.h"
#include "top.h"
#include "worker.h"

#define TOP_LIST_MAX 100
#define TOP_LIST_DEFAULT 10

static struct {
	const struct app_config *cfg;
	struct app_run *run;
	uint64_t next_ns;       /* CLOCK_MONOTONIC: the period's end */
	bool switching;         /* workers told, not all switched yet */
	/* the last complete period's answer, under lock */
	pthread_mutex_t lock;
	struct cflow_topk *result;
	uint64_t result_end_ns; /* CLOCK_REALTIME */
	uint64_t start_ns;      /* CLOCK_REALTIME */
	uint64_t periods;
} top = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void
addr_text(const struct cflow_topk_entry *e, char *buf, size_t len)
{
	if (inet_ntop(e->family == 6 ? AF_INET6 : AF_INET, e->addr, buf,
			(socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

/*
 * The last period's top N as parallel arrays (DPDK 22.11's telemetry
 * nests arrays only): "sources" (addresses), "counts" (upper bounds),
 * "errors" (count - error is a lower bound), "guaranteed" (1: certainly
 * in the top N).
 */
static int
tel_top(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct cflow_topk_entry list[TOP_LIST_MAX];
	struct rte_tel_data *arr[4];
	unsigned long n = TOP_LIST_DEFAULT;
	char *end;
	int got;

	(void)cmd;
	if (params != NULL && params[0] != '\0') {
		errno = 0;
		n = strtoul(params, &end, 10);
		if (errno != 0 || *end != '\0' || n == 0 ||
				n > TOP_LIST_MAX || params[0] == '-')
			return -EINVAL;
	}
	if (app_telemetry_alloc(arr, RTE_DIM(arr)) < 0)
		return -ENOMEM;
	rte_tel_data_start_dict(d);
	rte_tel_data_start_array(arr[0], RTE_TEL_STRING_VAL);
	for (unsigned int i = 1; i < RTE_DIM(arr); i++)
		rte_tel_data_start_array(arr[i], RTE_TEL_U64_VAL);
	pthread_mutex_lock(&top.lock);
	got = cflow_topk_list(top.result, list, (unsigned int)n);
	rte_tel_data_add_dict_u64(d, "period_s", top.cfg->top_period_s);
	rte_tel_data_add_dict_u64(d, "periods", top.periods);
	rte_tel_data_add_dict_u64(d, "period_end_ns", top.result_end_ns);
	rte_tel_data_add_dict_u64(d, "new_flows",
		cflow_topk_total(top.result));
	/* what an address not listed can have opened at most */
	rte_tel_data_add_dict_u64(d, "unlisted_max",
		cflow_topk_floor(top.result));
	pthread_mutex_unlock(&top.lock);
	for (int k = 0; k < got; k++) {
		char a[INET6_ADDRSTRLEN];

		addr_text(&list[k], a, sizeof(a));
		rte_tel_data_add_array_string(arr[0], a);
		rte_tel_data_add_array_u64(arr[1], list[k].count);
		rte_tel_data_add_array_u64(arr[2], list[k].error);
		rte_tel_data_add_array_u64(arr[3], list[k].guaranteed);
	}
	rte_tel_data_add_dict_container(d, "sources", arr[0], 0);
	rte_tel_data_add_dict_container(d, "counts", arr[1], 0);
	rte_tel_data_add_dict_container(d, "errors", arr[2], 0);
	rte_tel_data_add_dict_container(d, "guaranteed", arr[3], 0);
	return 0;
}

static struct cflow_topk *
sketch(int socket, char *err, size_t err_len)
{
	struct cflow_topk *s = cflow_topk_create(&(struct cflow_topk_params){
		.capacity = (uint32_t)top.cfg->top_sources,
		.allocator = &app_dpdk_allocator,
		.socket_id = socket,
	});

	if (s == NULL)
		cfu_fail(errno, err, err_len, "--top-sources %" PRIu64 ": %s",
			top.cfg->top_sources, strerror(errno));
	return s;
}

int
app_top_setup(const struct app_config *cfg, struct app_run *run, char *err,
		size_t err_len)
{
	top.cfg = cfg;
	top.run = run;
	if (cfg->top_sources == 0)
		return 0;
	for (unsigned int i = 0; i < run->nb_workers; i++) {
		struct app_worker *w = &run->workers[i];
		int socket = (int)rte_lcore_to_socket_id(w->lcore);

		w->top[0] = sketch(socket, err, err_len);
		if (w->top[0] != NULL)
			w->top[1] = sketch(socket, err, err_len);
		if (w->top[0] == NULL || w->top[1] == NULL)
			return -errno;
	}
	top.result = sketch((int)rte_socket_id(), err, err_len);
	if (top.result == NULL)
		return -errno;
	top.start_ns = cfu_clock_ns(CLOCK_REALTIME);
	top.next_ns = cfu_clock_ns(CLOCK_MONOTONIC) +
		cfg->top_period_s * 1000000000u;
	return app_telemetry_register("/cuckooflow/top_new_sources", tel_top,
		"Sources opening the most flows last period, with error "
		"bounds. Parameters: int N (default 10, max 100)", err,
		err_len);
}

void
app_top_period(void)
{
	struct app_run *run = top.run;
	uint64_t now;

	if (run == NULL || top.result == NULL)
		return;
	now = cfu_clock_ns(CLOCK_MONOTONIC);
	if (!top.switching) {
		if (now < top.next_ns)
			return;
		/* The period is over: every worker to its other sketch
		 * (empty: reset when it was merged). */
		for (unsigned int i = 0; i < run->nb_workers; i++) {
			struct app_worker *w = &run->workers[i];

			__atomic_store_n(&w->top_cur, 1 - w->top_cur,
				__ATOMIC_RELEASE);
		}
		top.switching = true;
		top.next_ns += top.cfg->top_period_s * 1000000000u;
		if (top.next_ns < now)
			top.next_ns = now + top.cfg->top_period_s * 1000000000u;
	}
	for (unsigned int i = 0; i < run->nb_workers; i++)
		if (__atomic_load_n(&run->workers[i].top_ack,
				__ATOMIC_ACQUIRE) != run->workers[i].top_cur)
			return; /* not switched yet: the next loop */
	/* What the workers left is no longer written: the answer. */
	pthread_mutex_lock(&top.lock);
	cflow_topk_reset(top.result);
	for (unsigned int i = 0; i < run->nb_workers; i++) {
		struct app_worker *w = &run->workers[i];
		struct cflow_topk *old = w->top[1 - w->top_cur];
		int ret = cflow_topk_merge(top.result, old);

		RTE_VERIFY(ret == 0); /* same capacities */
		cflow_topk_reset(old);
	}
	top.result_end_ns = cfu_clock_ns(CLOCK_REALTIME);
	top.periods++;
	pthread_mutex_unlock(&top.lock);
	top.switching = false;
}

void
app_top_print_final(FILE *out, uint64_t capture_ns)
{
	struct cflow_topk_entry list[TOP_LIST_DEFAULT];
	struct app_run *run = top.run;
	uint64_t since = top.result_end_ns != 0 ? top.result_end_ns :
		top.start_ns;
	int got;

	if (run == NULL || top.result == NULL)
		return;
	/* The workers have stopped: what they hold since the last period
	 * is read whole. */
	pthread_mutex_lock(&top.lock);
	cflow_topk_reset(top.result);
	for (unsigned int i = 0; i < run->nb_workers; i++)
		for (unsigned int j = 0; j < 2; j++)
			RTE_VERIFY(cflow_topk_merge(top.result,
				run->workers[i].top[j]) == 0);
	got = cflow_topk_list(top.result, list, RTE_DIM(list));
	fprintf(out, "top sources of new flows, last %.1f s%s: %" PRIu64
		" new flows, an unlisted source at most %" PRIu64 "\n",
		top.periods == 0 && capture_ns != 0 ? (double)capture_ns / 1e9 :
		(double)(cfu_clock_ns(CLOCK_REALTIME) - since) / 1e9,
		top.periods == 0 && capture_ns != 0 ? " of capture time" : "",
		cflow_topk_total(top.result), cflow_topk_floor(top.result));
	for (int k = 0; k < got; k++) {
		char a[INET6_ADDRSTRLEN];

		addr_text(&list[k], a, sizeof(a));
		fprintf(out, "  %-39s %12" PRIu64 " (error %" PRIu64 "%s)\n",
			a, list[k].count, list[k].error,
			list[k].guaranteed ? ", certainly in the top" : "");
	}
	pthread_mutex_unlock(&top.lock);
}

void
app_top_fini(void)
{
	struct app_run *run = top.run;

	if (run == NULL)
		return;
	for (unsigned int i = 0; i < run->nb_workers; i++) {
		cflow_topk_free(run->workers[i].top[0]);
		cflow_topk_free(run->workers[i].top[1]);
		run->workers[i].top[0] = run->workers[i].top[1] = NULL;
	}
	pthread_mutex_lock(&top.lock);
	cflow_topk_free(top.result);
	top.result = NULL;
	pthread_mutex_unlock(&top.lock);
}
