/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The run's shared settings: the action table, the flow owners, the
 * verdict dynfield, the handoff rings, and each worker's tracker
 * parameters from the config.
 */

#include <errno.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>

#include "events.h"
#include "run.h"
#include "worker.h"

/*
 * (role, verdict) -> forward or a drop reason. Without roles every
 * packet the blocklist passes is forwarded, tracked or not. Inside, a
 * flow that may not be opened (strict TCP, admission) is dropped;
 * outside, so is every packet that is not of a tracked flow, in the
 * direction toward its inside endpoint: fail closed. Two cells are left
 * to the packet (outside_decide()): a frame the parser cannot place
 * (--firewall-unparsed; ARP passes) and an unsolicited one (IPv6
 * neighbour discovery passes).
 */
const uint8_t app_actions[APP_ROLE_MAX][CFLOW_VERDICT_MAX] = {
	[APP_ROLE_NONE] = { 0 },
	[APP_ROLE_INSIDE] = {
		[CFLOW_UNTRACKED_NOT_SYN] = APP_DROP_NOT_SYN,
		[CFLOW_UNTRACKED_LIMITED] = APP_DROP_LIMITED,
	},
	[APP_ROLE_OUTSIDE] = {
		[CFLOW_UNTRACKED_NON_IP] = APP_DECIDE_UNPARSED,
		[CFLOW_UNTRACKED_MALFORMED] = APP_DROP_MALFORMED,
		[CFLOW_UNTRACKED_FRAGMENT] = APP_DROP_FRAGMENT,
		/* a FIN or RST of no flow: would not have opened one */
		[CFLOW_UNTRACKED_ORPHAN] = APP_DROP_UNSOLICITED,
		[CFLOW_UNTRACKED_FULL] = APP_DROP_TABLE_FULL,
		[CFLOW_UNTRACKED_UNSOLICITED] = APP_DECIDE_UNSOLICITED,
		[CFLOW_UNTRACKED_NOT_SYN] = APP_DROP_NOT_SYN,
		[CFLOW_UNTRACKED_LIMITED] = APP_DROP_LIMITED,
		[CFLOW_UNTRACKED_WRONG_DIR] = APP_DROP_WRONG_DIR,
		[CFLOW_UNTRACKED_UNRELATED] = APP_DROP_UNRELATED,
	},
	/* Not reached: app_worker_burst() drops the mirror port's input
	 * before tracking. Kept so that no path could forward it. */
	[APP_ROLE_MIRROR] = {
		[0 ... CFLOW_VERDICT_MAX - 1] = APP_DROP_MIRROR_RX,
	},
};

int
app_handoff_rings_create(struct app_worker *workers, unsigned int n,
		unsigned int size)
{
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < n; j++) {
			char name[RTE_RING_NAMESIZE];
			struct rte_ring *r;

			if (i == j)
				continue;
			snprintf(name, sizeof(name), "cf_handoff_%02x_%02x",
				i & 0xff, j & 0xff);
			r = rte_ring_create(name, size, (int)rte_lcore_to_socket_id(
				workers[j].lcore), RING_F_SP_ENQ |
				RING_F_SC_DEQ | RING_F_EXACT_SZ);
			if (r == NULL) {
				int e = rte_errno;

				app_handoff_rings_free(workers, n);
				errno = e;
				return -e;
			}
			workers[i].to[j] = workers[j].from[i] = r;
		}
	return 0;
}

void
app_handoff_rings_free(struct app_worker *workers, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < n; j++) {
			rte_ring_free(workers[i].to[j]);
			workers[i].to[j] = workers[j].from[i] = NULL;
		}
}

int
app_verdict_dynfield_register(void)
{
	static const struct rte_mbuf_dynfield verdict_field = {
		.name = APP_VERDICT_DYNFIELD,
		.size = sizeof(uint8_t),
		.align = __alignof__(uint8_t),
	};

	int off = rte_mbuf_dynfield_register(&verdict_field);

	if (off < 0) {
		errno = rte_errno;
		return -rte_errno;
	}
	return off;
}

/*
 * ns = tsc * mult >> shift with mult = 10^9 * 2^shift / hz rounded, the
 * largest shift that keeps mult below 2^63: a relative error below
 * 2^-62, less than a nanosecond in a century of ticks.
 */
void
app_run_clock_init(struct app_run *run, uint64_t tsc_hz)
{
	__extension__ typedef unsigned __int128 u128;
	unsigned int shift = 64;
	u128 mult;

	do {
		shift--;
		mult = (((u128)NS_PER_S << shift) + tsc_hz / 2) / tsc_hz;
	} while (mult >> 63 != 0);
	run->tsc_hz = tsc_hz;
	run->tsc_mult = (uint64_t)mult;
	run->tsc_shift = shift;
	run->tx_drain_tsc = tsc_hz / 1000000 * APP_TX_DRAIN_US;
}

uint64_t
app_run_latest_ns(const struct app_worker *workers, unsigned int n)
{
	uint64_t t = 0;

	for (unsigned int i = 0; i < n; i++)
		t = RTE_MAX(t, __atomic_load_n(&workers[i].last_ns,
			__ATOMIC_RELAXED));
	return t;
}

void
app_run_reta_init(struct app_run *run)
{
	for (unsigned int i = 0; i < APP_RETA_SIZE; i++)
		run->reta[i] = (uint16_t)(i % run->nb_workers);
}

struct cflow_parse_params
app_run_parse_params(const struct app_config *cfg, uint64_t hash_seed)
{
	bool fw = app_config_firewall(cfg);

	return (struct cflow_parse_params){
		.vlan_in_key = cfg->vlan_in_key,
		.decap = (unsigned int)cfg->decap,
		.tunnel_bind = fw && cfg->decap != 0,
		.tunnel_seed = fw && cfg->decap != 0 ?
			cfu_mix64(hash_seed ^ UINT64_C(0x74756e6e656c)) : 0,
	};
}

/* --table-layout: auto is interleaved where it takes no more memory. */
static enum cf_table_type
table_layout(const struct app_config *cfg)
{
	struct cf_params p = {
		.capacity = cfg->flows,
		.fp_bits = (unsigned int)cfg->fp_bits,
		.value_bits = cfg->age_bits,
		.exact_size = cfg->exact_size,
	};
	uint64_t plain, interleaved;

	if (cfg->table_layout == APP_LAYOUT_PLAIN)
		return CF_TABLE_PLAIN;
	if (cfg->table_layout == APP_LAYOUT_INTERLEAVED)
		return CF_TABLE_INTERLEAVED;
	plain = cf_params_bytes(&p);
	p.table = CF_TABLE_INTERLEAVED;
	interleaved = cf_params_bytes(&p);
	return interleaved != 0 && interleaved <= plain ?
		CF_TABLE_INTERLEAVED : CF_TABLE_PLAIN;
}

void
app_tracker_params(const struct app_run *run, int socket_id,
		struct cflow_tracker_params *p)
{
	const struct app_config *cfg = run->cfg;

	*p = (struct cflow_tracker_params){
		.capacity = cfg->flows,
		.fp_bits = (unsigned int)cfg->fp_bits,
		.value_bits = cfg->age_bits,
		.exact_size = cfg->exact_size,
		.table = table_layout(cfg),
		/* One seed for all, even 0: a flow's hash picks its worker,
		 * and the worker's table reuses it. */
		.seed = run->hash_seed,
		.fixed_seed = true,
		.hash = cfg->hash,
		/* close_linger 0: a FIN or RST removes its flow. */
		.close_linger_ns = cfg->close_linger_s == 0 ? CFLOW_LINGER_NONE :
			cfg->close_linger_s * 1000000000ull,
		.full_policy = cfg->full_policy,
		.parse = run->parse,
		/* Firewall mode: each flow's inside endpoint (docs/firewall.md,
		 * Direction). */
		.sided = app_config_firewall(cfg),
		/* Replayed captures handed between workers: each flow decided
		 * at its own packets' times (see app_worker.as_of_ns). */
		.flow_time = run->watermark,
		.tcp_strict = cfg->tcp_strict,
		.new_flow_rate = cfg->new_flow_rate,
		.new_flow_burst = cfg->new_flow_burst,
		.emergency_load_ppm = (uint32_t)(cfg->emergency_load * 10000),
		.emergency_low_ppm = (uint32_t)(cfg->emergency_low * 10000),
		.emergency_timeout_ns = cfg->emergency_timeout_s * 1000000000ull,
		/* the fewest bits that hold mirror_first + 1 */
		.count_bits = cfg->mirror_first == 0 ? 0 :
			32 - (unsigned int)__builtin_clz(
				(unsigned int)cfg->mirror_first + 1),
		.allocator = &app_dpdk_allocator,
		.socket_id = socket_id,
		/* Flow records: the caller sets record_arg, the worker. */
		.records = app_config_records(cfg),
		.active_timeout_ns = cfg->active_timeout_s == 0 ?
			CFLOW_ACTIVE_NONE : cfg->active_timeout_s * 1000000000ull,
		.record_fn = app_events_record,
	};
	for (int c = 0; c < CFLOW_CLASS_MAX; c++)
		p->timeout_ns[c] = cfg->timeout_s[c] * 1000000000ull;
}
