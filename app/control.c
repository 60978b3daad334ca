/* SPDX-License-Identifier: BSD-3-Clause */

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "cfutil.h"
#include "control.h"
#include "telemetry.h"
#include "worker.h"

/* How long a request waits for a worker: a worker serves between
 * bursts, so this is only reached by a stopped or stuck one. */
#define CTL_WAIT_NS UINT64_C(2000000000)

static const struct app_run *run;
/* One request at a time: telemetry serves each client in a thread. */
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;

/* Post the request in @p w->ctl (filled by the caller, under ctl_lock)
 * and wait for the worker to serve it: 0, or -ETIMEDOUT (withdrawn:
 * never served), or -EINPROGRESS (taken by the worker, which has not
 * finished in twice the wait: it will be served). */
static int
ctl_call(struct app_worker *w)
{
	uint32_t req = w->ctl.req + 1, claim;
	uint64_t until = cfu_clock_ns(CLOCK_MONOTONIC) + CTL_WAIT_NS;
	bool withdrawing = false;

	__atomic_store_n(&w->ctl.req, req, __ATOMIC_RELEASE);
	while (__atomic_load_n(&w->ctl.done, __ATOMIC_ACQUIRE) != req) {
		if (cfu_clock_ns(CLOCK_MONOTONIC) > until) {
			if (withdrawing)
				return -EINPROGRESS;
			/* Withdraw it, unless the worker has taken it: then
			 * it is being served, and answered shortly. */
			claim = __atomic_load_n(&w->ctl.claim,
				__ATOMIC_ACQUIRE);
			if (claim != req && __atomic_compare_exchange_n(
					&w->ctl.claim, &claim, req, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return -ETIMEDOUT;
			withdrawing = true;
			until += CTL_WAIT_NS;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
	}
	return 0;
}

static const struct {
	const char *name;
	uint8_t proto;
} proto_names[] = {
	{ "tcp", 6 }, { "udp", 17 }, { "icmp", 1 }, { "icmpv6", 58 },
	{ "sctp", 132 }, { "udplite", 136 }, { "gre", 47 },
};

static bool
has_ports(uint8_t proto)
{
	return proto == 6 || proto == 17 || proto == 132 || proto == 136;
}

static int
parse_proto(const char *s, uint8_t *proto)
{
	char *end;
	unsigned long v;

	for (unsigned int i = 0; i < RTE_DIM(proto_names); i++)
		if (strcmp(s, proto_names[i].name) == 0) {
			*proto = proto_names[i].proto;
			return 0;
		}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v > 255)
		return -EINVAL;
	*proto = (uint8_t)v;
	return 0;
}

static int
parse_port(const char *s, uint16_t *port)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v > 65535 || s[0] == '-')
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* A VLAN field of the key: "VID" (one tag) or "OUTER.INNER" (QinQ), each
 * 0..4095; 0: untagged. */
static int
parse_vlan(const char *s, uint32_t *vlan)
{
	unsigned long outer = 0, inner;
	char *end;

	/* As the parser builds it: each tag shifts the ones before up. */
	errno = 0;
	inner = strtoul(s, &end, 10);
	if (*end == '.') {
		outer = inner;
		inner = strtoul(end + 1, &end, 10);
	}
	if (errno != 0 || *end != '\0' || s[0] < '0' || s[0] > '9' ||
			outer > 4095 || inner > 4095)
		return -EINVAL;
	*vlan = (uint32_t)(outer << 12 | inner);
	return 0;
}

#define FLOW_FIELDS "<proto>,<src>,<sport>,<dst>,<dport>"
#define FLOW_VLAN_FIELDS "[,<vlan>[,<tunnel>]]"

/* FLOW_FIELDS (and with --vlan-in-key FLOW_VLAN_FIELDS) into a canonical
 * key; the packet's own direction does not matter. */
static int
parse_flow(const char *params, bool vlan_in_key, struct cflow_key *key,
		char *err, size_t err_len)
{
	uint8_t src[16] = { 0 }, dst[16] = { 0 }, proto;
	char buf[256], *f[8], *rest = buf, *t;
	unsigned int n = 0, most = vlan_in_key ? 7 : 5;
	uint32_t vlan = 0, tunnel = 0;
	uint16_t sport, dport;
	int family;

	if (params == NULL || strlen(params) >= sizeof(buf))
		return cfu_fail(EINVAL, err, err_len, "want %s%s",
			FLOW_FIELDS, vlan_in_key ? FLOW_VLAN_FIELDS : "");
	strcpy(buf, params);
	/* Every field, empty ones too: strtok_r() would skip those, and
	 * take "tcp,,a,1,b,2" for a well-formed request. */
	while (n < RTE_DIM(f) && (t = strsep(&rest, ",")) != NULL)
		f[n++] = t;
	if (n > 5 && !vlan_in_key)
		return cfu_fail(EINVAL, err, err_len, "want 5 fields %s, got "
			"%s%u (VLAN and tunnel ids are not in the key without "
			"--vlan-in-key)", FLOW_FIELDS, n == RTE_DIM(f) ?
			"more than " : "", n == RTE_DIM(f) ? n - 1 : n);
	if (n < 5 || n > most)
		return cfu_fail(EINVAL, err, err_len, "want %s fields %s%s, "
			"got %s%u", vlan_in_key ? "5 to 7" : "5", FLOW_FIELDS,
			vlan_in_key ? FLOW_VLAN_FIELDS : "", n == RTE_DIM(f) ?
			"more than " : "", n == RTE_DIM(f) ? n - 1 : n);
	for (unsigned int i = 0; i < n; i++)
		if (f[i][0] == '\0')
			return cfu_fail(EINVAL, err, err_len, "field %u of "
				"%s%s is empty", i + 1, FLOW_FIELDS,
				vlan_in_key ? FLOW_VLAN_FIELDS : "");
	if (parse_proto(f[0], &proto) < 0)
		return cfu_fail(EINVAL, err, err_len, "protocol %s: want tcp, "
			"udp, icmp, icmpv6, sctp, udplite, gre or 0..255", f[0]);
	/* IPv4 as the key holds it: mapped (::ffff:a.b.c.d) */
	family = strchr(f[1], ':') != NULL ? 6 : 4;
	if (inet_pton(family == 6 ? AF_INET6 : AF_INET, f[1],
			family == 6 ? src : src + 12) != 1 ||
			inet_pton(family == 6 ? AF_INET6 : AF_INET, f[3],
			family == 6 ? dst : dst + 12) != 1)
		return cfu_fail(EINVAL, err, err_len, "addresses %s and %s: "
			"want two IPv4 or two IPv6 addresses", f[1], f[3]);
	if (family == 4)
		src[10] = src[11] = dst[10] = dst[11] = 0xff;
	if (parse_port(f[2], &sport) < 0 || parse_port(f[4], &dport) < 0)
		return cfu_fail(EINVAL, err, err_len, "ports %s and %s: want "
			"0..65535", f[2], f[4]);
	if (n > 5 && parse_vlan(f[5], &vlan) < 0)
		return cfu_fail(EINVAL, err, err_len, "vlan %s: want VID or "
			"OUTER.INNER, 0..4095 each (0: untagged)", f[5]);
	if (n > 6) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(f[6], &end, 10);
		if (errno != 0 || *end != '\0' || f[6][0] < '0' ||
				f[6][0] > '9' || v > UINT32_MAX)
			return cfu_fail(EINVAL, err, err_len, "tunnel %s: want "
				"the VNI, GRE key or TEID, 0..4294967295",
				f[6]);
		tunnel = (uint32_t)v;
	}
	if (!has_ports(proto))
		sport = dport = 0; /* keyed without ports */
	cflow_key_init(key, (uint8_t)family, src, dst, sport, dport, proto);
	key->vlan = vlan;
	key->tunnel = tunnel;
	return 0;
}

static const char *
class_name(uint8_t c)
{
	static const char *const names[CFLOW_CLASS_MAX] = {
		"tcp", "udp", "icmp", "other",
	};

	return c < CFLOW_CLASS_MAX ? names[c] : "other";
}

/*
 * One flow: asked of its owner (the flow's hash with software affinity),
 * else of every worker (with RSS the NIC chose it). The reply says which
 * worker tracks it, its state, idle time and class, and that "tracked"
 * may be a false positive.
 */
static int
tel_flow(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct cflow_flow_info info = { 0 };
	unsigned int first = 0, last = run->nb_workers, found = 0;
	int owner = -1, ret = 0;
	struct cflow_key key;
	char err[200];

	(void)cmd;
	rte_tel_data_start_dict(d);
	if (parse_flow(params, run->cfg->vlan_in_key, &key, err,
			sizeof(err)) < 0) {
		rte_tel_data_add_dict_string(d, "error", err);
		return 0;
	}
	if (run->handoff && run->cfg->hash == CFLOW_HASH_XXH3) {
		first = app_flow_owner(run, cflow_hash_key(&key,
			run->hash_seed));
		last = first + 1;
	}
	pthread_mutex_lock(&ctl_lock);
	for (unsigned int i = first; i < last; i++) {
		struct app_worker *w = &run->workers[i];

		w->ctl.op = APP_CTL_LOOKUP;
		w->ctl.key = key;
		ret = ctl_call(w);
		if (ret < 0)
			break;
		ret = w->ctl.ret;
		if (ret < 0)
			break;
		if (ret == 1 && found++ == 0) {
			owner = (int)i;
			info = w->ctl.info;
		}
	}
	pthread_mutex_unlock(&ctl_lock);
	if (ret < 0) {
		rte_tel_data_add_dict_string(d, "error", ret == -ENOTSUP ?
			"--hash rss: the table is keyed by the NIC's hash, which "
			"a 5-tuple does not give" : ret == -ETIMEDOUT ?
			"a worker did not answer (stopped?)" :
			ret == -EINPROGRESS ? "a worker took the request but "
			"has not answered yet (stuck?)" : strerror(-ret));
		return 0;
	}
	rte_tel_data_add_dict_string(d, "flow", params);
	rte_tel_data_add_dict_int(d, "worker", owner);
	rte_tel_data_add_dict_int(d, "lcore", owner < 0 ? -1 :
		(int)run->workers[owner].lcore);
	rte_tel_data_add_dict_string(d, "state", owner < 0 ? "untracked" :
		info.expired ? "expired" : info.closing ? "closing" : "open");
	if (owner >= 0) {
		rte_tel_data_add_dict_string(d, "class",
			class_name(info.proto_class));
		rte_tel_data_add_dict_u64(d, "idle_ms", info.idle_ns / 1000000);
		if (run->cfg->mirror_first != 0)
			rte_tel_data_add_dict_u64(d, "packets", info.count);
	}
	rte_tel_data_add_dict_string(d, "note", owner < 0 ?
		"not in the table: never seen, or expired and swept (never "
		"wrong)" : "may be a false positive: another flow with the same "
		"fingerprint (rate: /cuckooflow/table expected_fpr_ppb)");
	return 0;
}

/* Every worker empties its table between two bursts. */
static int
tel_flush(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int done = 0, late = 0;
	uint64_t flushed = 0;
	int ret;

	(void)cmd;
	if (params != NULL && params[0] != '\0')
		return -EINVAL;
	pthread_mutex_lock(&ctl_lock);
	for (unsigned int i = 0; i < run->nb_workers; i++) {
		struct app_worker *w = &run->workers[i];

		w->ctl.op = APP_CTL_FLUSH;
		ret = ctl_call(w);
		if (ret == 0) {
			flushed += w->ctl.flushed;
			done++;
		}
		late += ret == -EINPROGRESS;
	}
	pthread_mutex_unlock(&ctl_lock);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "flushed", flushed);
	rte_tel_data_add_dict_u64(d, "workers", done);
	rte_tel_data_add_dict_u64(d, "in_progress", late);
	/* Withdrawn: never done later. Taken but not answered in time:
	 * done when the worker gets to it, counted then (flushes). */
	if (done + late != run->nb_workers)
		rte_tel_data_add_dict_string(d, "error", late != 0 ?
			"a worker did not answer (stopped?): not flushed there; "
			"others took it but have not answered yet" :
			"a worker did not answer (stopped?): not flushed there");
	else if (late != 0)
		rte_tel_data_add_dict_string(d, "error", "a worker took the "
			"flush but has not answered yet (stuck?): it flushes "
			"when it gets to it, counted in flushes");
	return 0;
}

bool
app_control_serve(struct app_ctl *c, struct cflow_tracker *t)
{
	uint32_t req = __atomic_load_n(&c->req, __ATOMIC_ACQUIRE), claim, op;
	struct cflow_key key;
	bool flushed = false;

	if (req == c->done)
		return false;
	/* Take it, unless its requester withdrew it (claim == req). */
	claim = __atomic_load_n(&c->claim, __ATOMIC_ACQUIRE);
	if (claim == req || !__atomic_compare_exchange_n(&c->claim, &claim,
			req, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&c->done, req, __ATOMIC_RELEASE);
		return false;
	}
	/* Ours: the next request may rewrite them once done is out. */
	op = c->op;
	key = c->key;
	switch (op) {
	case APP_CTL_SAVE:
		c->saved = cflow_tracker_save(t, c->buf, c->cap);
		c->ret = c->saved < 0 ? (int)c->saved : 0;
		break;
	case APP_CTL_LOOKUP:
		c->ret = cflow_tracker_lookup(t, &key, &c->info);
		break;
	case APP_CTL_FLUSH:
		c->flushed = cflow_tracker_flush(t);
		flushed = true;
		c->ret = 0;
		break;
	default:
		c->ret = -EINVAL;
		break;
	}
	__atomic_store_n(&c->done, req, __ATOMIC_RELEASE);
	return flushed;
}

int64_t
app_control_save(struct app_worker *w, void *buf, uint64_t cap)
{
	int64_t ret;

	pthread_mutex_lock(&ctl_lock);
	w->ctl.op = APP_CTL_SAVE;
	w->ctl.buf = buf;
	w->ctl.cap = cap;
	ret = ctl_call(w);
	/* taken: the worker writes into buf until it says done */
	while (ret == -EINPROGRESS) {
		if (__atomic_load_n(&w->ctl.done, __ATOMIC_ACQUIRE) ==
				w->ctl.req)
			ret = 0;
		else
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 },
				NULL);
	}
	if (ret == 0)
		ret = w->ctl.ret < 0 ? w->ctl.ret : w->ctl.saved;
	pthread_mutex_unlock(&ctl_lock);
	return ret;
}

int
app_control_setup(const struct app_run *r, char *err, size_t err_len)
{
	static const struct app_telemetry_cmd cmds[] = {
		{ "/cuckooflow/flow", tel_flow,
			/* under RTE_TEL_MAX_STRING_LEN (128) */
			"One flow's worker, state, idle time. Parameters: "
			"proto,src,sport,dst,dport[,vlan[,tunnel]] (vlan, "
			"tunnel: --vlan-in-key)" },
		{ "/cuckooflow/flush", tel_flush,
			"Empty every flow table (counted in flows_flushed). "
			"Takes no parameters" },
	};

	run = r;
	return app_telemetry_register_all(cmds, RTE_DIM(cmds), err, err_len);
}
