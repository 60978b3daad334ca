/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_topk: the top-sources sketch (lib/cflow/cflow_topk.h), additions
 * per second and the cost of a merge and a list, by capacity.
 *
 * Streams of --events new-flow sources (default 4 M), host numbers
 * precomputed, each address computed from its number in registers (a
 * few ns of the time per addition): "one host" (every addition finds
 * its counter), "zipf" (Zipf(1.1) over 100 000 hosts, half IPv4 and
 * half IPv6: mostly hits, some evictions), "uniform" (1 M hosts: nearly
 * every addition takes over a counter, the worst case). Then the merge
 * of two full sketches of the uniform stream, and a top-10 list.
 *
 * usage: bench_topk [--events N] [--quick]
 */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cflow_topk.h"
#include "cfutil.h"

#define HOSTS (1u << 20)
#define ZIPF_HOSTS 100000

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Host @p id's address, computed in registers: only the sketch touches
 * memory in the timed loop. Odd ids IPv6, even IPv4. */
static inline uint8_t
host_addr(uint32_t id, uint8_t addr[16])
{
	uint64_t w[2] = { cfu_mix64(id), (uint64_t)id << 32 | 0x20010db8 };

	memcpy(addr, w, 16);
	return id & 1 ? 6 : 4;
}

/* Stream @p kind: 0 one host, 1 zipf, 2 uniform. The Zipf ranks are a
 * continuous power law's, x^-1.1 on [1, ZIPF_HOSTS + 1), by inversion:
 * a Zipf law but for the first few ranks' shares. */
static void
make_stream(uint32_t *ev, uint32_t n, int kind)
{
	const double a = 1 - 1.1, top = pow(ZIPF_HOSTS + 1, a) - 1;
	uint64_t x = 2 + kind;

	for (uint32_t i = 0; i < n; i++) {
		double u = (double)(cfu_splitmix64(&x) >> 11) * 0x1p-53;
		uint32_t rank = (uint32_t)pow(1 + u * top, 1 / a) - 1;

		if (kind == 0)
			ev[i] = 0;
		else if (kind == 2)
			ev[i] = (uint32_t)(cfu_splitmix64(&x) % HOSTS);
		else /* ranks spread over the host numbers */
			ev[i] = (uint32_t)(cfu_mix64(rank) % HOSTS);
	}
}

int
main(int argc, char **argv)
{
	static const uint32_t caps[] = { 256, 1024, 16384, 65536 };
	static const char *const kinds[] = { "one host", "zipf", "uniform" };
	struct cflow_topk_entry top[10];
	uint32_t n = 4u << 20, *ev;
	uint8_t addr[16];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			n = 1u << 18;
		else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
			n = (uint32_t)strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: bench_topk [--events N] "
				"[--quick]\n");
			return 2;
		}
	}
	ev = malloc((size_t)n * sizeof(*ev));
	if (ev == NULL || n == 0) {
		fprintf(stderr, "bench_topk: out of memory\n");
		return 1;
	}
	printf("%-9s %-9s %10s %8s %12s\n", "capacity", "stream",
		"Madds/s", "ns/add", "bytes");
	for (int k = 0; k < 3; k++) {
		make_stream(ev, n, k);
		for (unsigned int c = 0; c < sizeof(caps) / sizeof(caps[0]);
				c++) {
			struct cflow_topk *s = cflow_topk_create(
				&(struct cflow_topk_params){
					.capacity = caps[c] });
			double t;

			if (s == NULL)
				return 1;
			t = now();
			for (uint32_t i = 0; i < n; i++)
				cflow_topk_add(s, host_addr(ev[i], addr),
					addr);
			t = now() - t;
			printf("%-9u %-9s %10.1f %8.1f %12zu\n", caps[c],
				kinds[k], n / t * 1e-6, t * 1e9 / n,
				cflow_topk_memsize(caps[c]));
			cflow_topk_free(s);
		}
	}
	/* the uniform stream is in ev: two full sketches of its halves */
	printf("\n%-9s %12s %12s\n", "capacity", "merge us", "top-10 us");
	for (unsigned int c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		struct cflow_topk_params p = { .capacity = caps[c] };
		struct cflow_topk *a = cflow_topk_create(&p);
		struct cflow_topk *b = cflow_topk_create(&p);
		double tm, tl;

		if (a == NULL || b == NULL)
			return 1;
		for (uint32_t i = 0; i < n; i++)
			cflow_topk_add(i & 1 ? a : b, host_addr(ev[i], addr),
				addr);
		tm = now();
		cflow_topk_merge(a, b);
		tm = now() - tm;
		tl = now();
		cflow_topk_list(a, top, 10);
		tl = now() - tl;
		printf("%-9u %12.1f %12.1f\n", caps[c], tm * 1e6, tl * 1e6);
		cflow_topk_free(a);
		cflow_topk_free(b);
	}
	free(ev);
	return 0;
}
