/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What lib/cflow's fuzz targets (fuzz_track, fuzz_restore) and the seed
 * generator of fuzz_restore share.
 */

#ifndef _FUZZ_CFLOW_H_
#define _FUZZ_CFLOW_H_

#include <stdint.h>
#include <stdlib.h>

#include "cflow.h"

#define MS UINT64_C(1000000)

/* The counters' invariants: every flow accounted once, every packet
 * classified once, the emergency state consistent; abort() if not. */
static inline void
fuzz_cflow_check(const struct cflow_tracker *t)
{
	struct cflow_counters c;

	cflow_counters_get(t, &c);
	if (c.flows_new + c.flows_restored != cflow_flows_accounted(&c) ||
			c.packets != cflow_packets_classified(&c))
		abort();
	if (c.emergency > 1 || c.emergency_enter - c.emergency_exit !=
			c.emergency)
		abort();
}

/* fuzz_restore's tracker, shaped by the bits of @p settings (its seeds
 * were saved from trackers made by the same function). */
static inline void
fuzz_restore_params(uint8_t settings, struct cflow_tracker_params *p)
{
	cflow_tracker_params_init(p, 24);
	p->fp_bits = (settings & 1) ? 32 : 8;
	p->value_bits = (settings & 2) ? 16 : 32;
	p->table = (settings & 4) ? CF_TABLE_INTERLEAVED : CF_TABLE_PLAIN;
	p->count_bits = (settings & 8) ? 4 : 0;
	p->close_linger_ns = (settings & 16) ? CFLOW_LINGER_NONE : 1000 * MS;
	p->sided = settings & 32;
	for (int k = 0; k < CFLOW_CLASS_MAX; k++)
		p->timeout_ns[k] = (uint64_t)(1 + k) * 1000 * MS;
	p->seed = 7;
	p->fixed_seed = true;
}

#endif /* _FUZZ_CFLOW_H_ */
