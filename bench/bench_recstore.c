/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_recstore: the flow records' key store (lib/cflow/cflow_records.h),
 * the cost of a pass for orphans (cflow_recstore_expire()) by capacity:
 * a full store of flows added in order, their index slots at random, the
 * pass finding nothing to remove (a full store of live flows, the case
 * the application meets most: every new flow then finds it full) and
 * removing 1 in 100; then the same pass in steps of --step entries (the
 * application's STORE_EXPIRE_STEP): the median step, the 99th
 * percentile and the longest (which, on a shared machine, is mostly the
 * scheduler's: a step preempted).
 *
 * usage: bench_recstore [--max-log2 N] [--step N] [--quick]
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cflow_records.h"
#include "cfutil.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A full store of @p cap flows; flow k's record started at 1000 + k,
 * but every 100th at 1 (removed by a pass with a limit of 2 when @p old). */
static struct cflow_recstore *
full_store(uint64_t cap, bool old)
{
	struct cflow_recstore *s = cflow_recstore_create(cap);
	struct cflow_event e;

	if (s == NULL) {
		perror("cflow_recstore_create");
		exit(1);
	}
	memset(&e, 0, sizeof(e));
	e.family = 4;
	for (uint64_t k = 0; k < cap; k++) {
		e.time_ns = old && k % 100 == 0 ? 1 : 1000 + k;
		if (cflow_recstore_add(s, (uint16_t)(k & 1), cfu_mix64(k + 1),
				&e) == 0) {
			fprintf(stderr, "add %" PRIu64 " failed\n", k);
			exit(1);
		}
	}
	return s;
}

int
main(int argc, char **argv)
{
	unsigned int max_log2 = 24;
	uint64_t step = 4096;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			max_log2 = 18;
		else if (strcmp(argv[i], "--max-log2") == 0 && i + 1 < argc)
			max_log2 = (unsigned int)atoi(argv[++i]);
		else if (strcmp(argv[i], "--step") == 0 && i + 1 < argc)
			step = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: bench_recstore [--max-log2 N] "
				"[--step N] [--quick]\n");
			return 2;
		}
	}
	if (step == 0 || max_log2 < 10 || max_log2 > 31) {
		fprintf(stderr, "bench_recstore: --step 1.., --max-log2 "
			"10..31\n");
		return 2;
	}
	printf("%-10s %8s %10s %10s %10s %12s %12s %12s\n", "entries", "MiB",
		"pass ms", "ns/entry", "1% old ms", "step med us",
		"step p99 us", "step max us");
	for (unsigned int lg = 16; lg <= max_log2; lg += 2) {
		uint64_t cap = UINT64_C(1) << lg, steps = 0, removed;
		struct cflow_recstore *s = full_store(cap, false);
		double t0, pass, pass_old, *st;
		bool done = false;

		t0 = now();
		removed = cflow_recstore_expire(s, 2, 0, NULL);
		pass = now() - t0;
		if (removed != 0)
			return 1;
		st = malloc(sizeof(*st) * (cap / step + 1));
		while (!done) {
			t0 = now();
			(void)cflow_recstore_expire(s, 2, step, &done);
			st[steps++] = now() - t0;
		}
		qsort(st, steps, sizeof(*st), cmp_double);
		cflow_recstore_free(s);
		s = full_store(cap, true);
		t0 = now();
		removed = cflow_recstore_expire(s, 2, 0, NULL);
		pass_old = now() - t0;
		if (removed != (cap + 99) / 100) {
			fprintf(stderr, "removed %" PRIu64 "\n", removed);
			return 1;
		}
		cflow_recstore_free(s);
		printf("2^%-8u %8.0f %10.2f %10.2f %10.2f %12.1f %12.1f %12.1f"
			"\n", lg, cflow_recstore_bytes(cap) / 1048576.0,
			pass * 1e3, pass * 1e9 / cap, pass_old * 1e3,
			st[steps / 2] * 1e6, st[steps * 99 / 100] * 1e6,
			st[steps - 1] * 1e6);
		free(st);
	}
	return 0;
}
