/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _BENCH_UTIL_H_
#define _BENCH_UTIL_H_

/* Helpers shared by the benchmark programs: a clock, a seeded key
 * stream, and the bytes held by the DPDK heap. */

#include <stdint.h>
#include <time.h>

#include <rte_malloc.h>

#include "cfutil.h"

static inline double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* This thread's CPU time in seconds: the time it ran, without the time
 * the jobs of a loaded machine held its core (their cache traffic is
 * still in it). For short compute-bound loops compared side by side. */
static inline double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}


/* Bytes allocated from the DPDK heap: how DPDK tables are sized. */
static inline uint64_t
heap_bytes(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t total = 0;

	for (unsigned int s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (rte_malloc_get_socket_stats((int)s, &st) == 0)
			total += st.heap_allocsz_bytes;
	return total;
}

#endif /* _BENCH_UTIL_H_ */
