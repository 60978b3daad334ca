/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_blocklist: the per-packet cost of a blocklist check with 1 M
 * entries, lib/blocklist's cuckoo blocklist against exact rte_hash tables of
 * the same entries, in one run, with the memory of each.
 *
 * Four lists: 1 M IPv4 addresses; 1 M IPv4 prefixes spread over 8
 * lengths (/20../32); 1 M prefixes of /21../24 (prefixes24: a list
 * rte_fib with 1-byte next hops can hold, at most 127 /24s with longer
 * routes); and 1 M UDP flows (run_flows(): rte_hash holds their
 * canonical 5-tuples, looked up 32 a bulk call; no rte_fib). rte_hash
 * holds one exact table per prefix length (key: masked address), probed
 * at each length as the cuckoo list is; rte_fib (DIR-24-8, 4-byte next
 * hops, as rte_lpm's; and again with 1-byte next hops, "fib1": a 16 MiB
 * tbl24, where it can hold the list) holds every entry as a route,
 * looked up 64 addresses a bulk call (rte_lpm's tbl8 allocation
 * searches linearly: 1 M /32 routes take hours). The cuckoo list is
 * checked a packet at a time (cbl_match) and a burst of 32 at a time
 * (cbl_match_burst, as the application does). Packets: random IPv4
 * pairs, 10% carrying a listed address.
 *
 * The targets take turns for -r rounds (default 3), each round starting
 * at the next; the median of the rounds is printed, their range in
 * parentheses; below the table, each round's ratio of the burst to
 * rte_fib's two variants in wall time, in the calls the scheduler did
 * not interrupt (BENCH_QUIET_US), and in CPU time (the thread's, read
 * around every BENCH_CPU_CALLS calls: the time other jobs held the core
 * taken out), with each target's CPU time.
 *
 * -t runs only the targets named (default all five: cuckoo, burst,
 * hash, fib, fib1; for a profile of one); -l only the lists named
 * (addresses, prefixes, prefixes24, flows). DPDK's tables (rte_hash,
 * rte_fib) are on 4 KiB pages (--no-huge, DPDK's shared memory: no
 * transparent huge pages), the cuckoo list's on transparent huge pages;
 * -H puts DPDK's on hugetlbfs pages (--in-memory, taken as allocated:
 * about 1.2 GiB for 1 M prefixes), as the application runs.
 *
 * usage: bench_blocklist [-n entries] [-p packets] [-r rounds]
 *        [-t cuckoo,burst,hash,fib,fib1]
 *        [-l addresses,prefixes,prefixes24,flows] [-H]
 */

#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_fib.h>

#include "bench_util.h"
#include "blocklist.h"

static const unsigned int lengths[8] = { 20, 22, 24, 26, 28, 30, 31, 32 };
/* the lengths of the prefixes24 list: none longer than /24, a list
 * rte_fib with 1-byte next hops can hold (at most 127 tbl8 groups) */
static const unsigned int lengths24[4] = { 21, 22, 23, 24 };
static const unsigned int length32[1] = { 32 };

static inline uint32_t
mask(uint32_t a, unsigned int len)
{
	return len == 0 ? 0 : a & ~((UINT32_C(1) << (32 - len)) - 1);
}

struct list {
	const char *name;
	uint32_t *addr;
	unsigned int *len;
	const unsigned int *lengths;    /* those of the entries */
	unsigned int nlen;
};

#define MAX_ROUNDS 16

static unsigned int rounds = 3;

/* The targets run (-t), a bit each in the order of the columns. */
#define NB_TARGETS 5
static const char *const target_names[NB_TARGETS] = { "cuckoo", "burst",
	"hash", "fib", "fib1" };
static unsigned int targets = 0x1f;

static const char *const list_names[4] = { "addresses", "prefixes",
	"prefixes24", "flows" };
static unsigned int lists = 0xf;

/* The bits of the comma-separated @p names among @p n @p known. */
static unsigned int
name_bits(const char *names, const char *const *known, unsigned int n)
{
	char buf[128], *save = NULL;
	unsigned int bits = 0;

	snprintf(buf, sizeof(buf), "%s", names);
	for (char *w = strtok_r(buf, ",", &save); w != NULL;
			w = strtok_r(NULL, ",", &save)) {
		unsigned int t;

		for (t = 0; t < n && strcmp(w, known[t]) != 0; t++)
			;
		if (t == n) {
			fprintf(stderr, "bench_blocklist: unknown '%s'\n", w);
			exit(2);
		}
		bits |= 1u << t;
	}
	return bits;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(const double *v, unsigned int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return s[n / 2];
}

/* The median (range) of each target's rounds, "-" for those of @p run
 * not run. */
static void
print_times(double ns[NB_TARGETS][MAX_ROUNDS], unsigned int run)
{
	for (unsigned int t = 0; t < NB_TARGETS; t++) {
		double lo = ns[t][0], hi = ns[t][0];

		if (!(run & targets & (1u << t))) {
			printf(" - |");
			continue;
		}
		for (unsigned int r = 1; r < rounds; r++) {
			lo = ns[t][r] < lo ? ns[t][r] : lo;
			hi = ns[t][r] > hi ? ns[t][r] : hi;
		}
		printf(" %.1f (%.1f-%.1f) |", median(ns[t], rounds), lo, hi);
	}
}

/*
 * The calls of a pass the scheduler did not interrupt: a call (32
 * packets, 1-5 us) taking over BENCH_QUIET_US was preempted by another
 * job of the loaded machine (its slices are milliseconds) and is left
 * out of quiet_cycles; ns a packet of the others, the same for every
 * target.
 */
#define BENCH_QUIET_US 50
static uint64_t quiet_cycles, quiet_calls, quiet_limit;

static inline uint64_t
call_cycles(uint64_t c0)
{
	uint64_t d = rte_rdtsc() - c0;

	if (d <= quiet_limit) {
		quiet_cycles += d;
		quiet_calls++;
	}
	return d;
}

static inline double
quiet_ns(void)
{
	return quiet_calls == 0 ? 0 : (double)quiet_cycles * 1e9 /
		(double)rte_get_tsc_hz() / (double)(quiet_calls * 32);
}

/*
 * CPU time: each pass's calls are timed in chunks of BENCH_CPU_CALLS
 * calls (their packets built before the chunk, 40 KiB: still in L1/L2),
 * the thread's CPU time read around each chunk (clock_gettime, about
 * 1 us, once in 16 calls, the same for every target); pass_cpu sums
 * them. The time other jobs held the core is not in it.
 */
#define BENCH_CPU_CALLS 16
static double pass_cpu;

/* What print_rounds() says, printed below the table. */
static char notes[4096];
static size_t notes_len;

static void __attribute__((format(printf, 1, 2)))
note(const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(notes + notes_len, sizeof(notes) - notes_len, fmt, ap);
	va_end(ap);
	if (k > 0)
		notes_len += (size_t)k < sizeof(notes) - notes_len ? (size_t)k :
			sizeof(notes) - notes_len - 1;
}

/* For below the table: each round's ratio of the burst's time to
 * rte_hash's and each rte_fib's (the targets ran side by side in that
 * round), and the CPU time medians (ranges) of the targets run. */
static void
print_rounds(const char *name, double ns[NB_TARGETS][MAX_ROUNDS],
		double cpu[NB_TARGETS][MAX_ROUNDS],
		double quiet[NB_TARGETS][MAX_ROUNDS], unsigned int run)
{
	note("- %s:", name);
	for (unsigned int t = 2; t < NB_TARGETS; t++) {
		if (!(run & 2) || !(run & (1u << t)))
			continue;
		note(" burst/%s per round", target_names[t]);
		for (unsigned int r = 0; r < rounds; r++)
			note(" %.2f", ns[1][r] / ns[t][r]);
		note(" (uninterrupted calls");
		for (unsigned int r = 0; r < rounds; r++)
			note(" %.2f", quiet[1][r] / quiet[t][r]);
		note("; CPU time");
		for (unsigned int r = 0; r < rounds; r++)
			note(" %.2f", cpu[1][r] / cpu[t][r]);
		note(");");
	}
	note(" CPU ns/pkt");
	for (unsigned int t = 0; t < NB_TARGETS; t++) {
		double lo = cpu[t][0], hi = cpu[t][0];

		if (!(run & (1u << t)))
			continue;
		for (unsigned int r = 1; r < rounds; r++) {
			lo = cpu[t][r] < lo ? cpu[t][r] : lo;
			hi = cpu[t][r] > hi ? cpu[t][r] : hi;
		}
		note(" %s %.1f (%.1f-%.1f)", target_names[t],
			median(cpu[t], rounds), lo, hi);
	}
	note("\n");
}

/* The cuckoo list on the packets' address pairs, 32 packets at a time,
 * built beforehand (as the application's are parsed; rte_hash and
 * rte_fib get the addresses as they are): a packet a call, or with
 * @p burst 32 a call (cbl_match_burst(), the application's path). Only
 * the calls are timed. Seconds, and the packets matched. */
static double
cuckoo_pass(const struct cbl *bl, const uint32_t *pkt, uint64_t packets,
		bool burst, uint64_t *hits)
{
	static struct cflow_packet ps[BENCH_CPU_CALLS][32];
	enum cbl_kind kinds[BENCH_CPU_CALLS][32];
	uint64_t cycles = 0;

	for (uint64_t i = 0; i + 32 <= packets; ) {
		unsigned int nb = 0;
		double t0;

		for (; nb < BENCH_CPU_CALLS && i + 32 * (nb + 1) <= packets;
				nb++)
			for (unsigned int j = 0; j < 32; j++) {
				uint64_t x = i + 32 * nb + j;
				uint8_t s[16] = { [10] = 0xff, [11] = 0xff };
				uint8_t d[16] = { [10] = 0xff, [11] = 0xff };
				uint32_t a = htonl(pkt[2 * x]);
				uint32_t b = htonl(pkt[2 * x + 1]);

				memcpy(s + 12, &a, 4);
				memcpy(d + 12, &b, 4);
				memset(&ps[nb][j], 0, sizeof(ps[nb][j]));
				cflow_key_init(&ps[nb][j].key, 4, s, d, 1, 2,
					17);
			}
		t0 = cpu_now();
		for (unsigned int c = 0; c < nb; c++) {
			uint64_t c0 = rte_rdtsc();

			if (burst)
				cbl_match_burst(bl, ps[c], 32, UINT32_MAX,
					kinds[c]);
			else
				for (unsigned int j = 0; j < 32; j++)
					kinds[c][j] = cbl_match(bl, &ps[c][j]);
			cycles += call_cycles(c0);
		}
		pass_cpu += cpu_now() - t0;
		for (unsigned int c = 0; c < nb; c++)
			for (unsigned int j = 0; j < 32; j++)
				*hits += kinds[c][j] != CBL_NONE;
		i += 32 * nb;
	}
	return (double)cycles / (double)rte_get_tsc_hz();
}

/* Exact rte_hash tables, one a length, each address probed at each
 * length until a hit. */
static double
hash_pass(struct rte_hash *const *h, const struct list *l,
		const uint32_t *pkt, uint64_t packets, uint64_t *hits)
{
	double t0 = now();

	for (uint64_t i = 0; i < packets / 32 * 32; i++) {
		bool hit = false;

		for (unsigned int side = 0; side < 2 && !hit; side++)
			for (unsigned int k = 0; k < l->nlen && !hit; k++) {
				uint32_t key = mask(pkt[2 * i + side],
					l->lengths[k]);

				hit = rte_hash_lookup(h[k], &key) >= 0;
			}
		*hits += hit;
	}
	return now() - t0;
}

static double
fib_pass(struct rte_fib *fib, const uint32_t *pkt, uint64_t packets,
		uint64_t *hits)
{
	uint64_t cycles = 0;

	for (uint64_t i = 0; i + 32 <= packets; ) {
		uint64_t hops[BENCH_CPU_CALLS][64];
		unsigned int nb = 0;
		double t0 = cpu_now();

		for (; nb < BENCH_CPU_CALLS && i + 32 * (nb + 1) <= packets;
				nb++) {
			uint64_t c0 = rte_rdtsc();

			rte_fib_lookup_bulk(fib, (uint32_t *)(uintptr_t)
				&pkt[2 * (i + 32 * nb)], hops[nb], 64);
			cycles += call_cycles(c0);
		}
		pass_cpu += cpu_now() - t0;
		for (unsigned int c = 0; c < nb; c++)
			for (unsigned int j = 0; j < 32; j++)
				*hits += (hops[c][2 * j] |
					hops[c][2 * j + 1]) != 0;
		i += 32 * nb;
	}
	return (double)cycles / (double)rte_get_tsc_hz();
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The tbl8 groups DIR-24-8 needs for @p l: one for each /24 holding a
 * route longer than /24, and a few spare. */
static uint32_t
tbl8_groups(const struct list *l, uint64_t n)
{
	uint32_t *s = malloc(n * sizeof(*s)), groups = 0;
	uint64_t m = 0;

	for (uint64_t i = 0; i < n; i++)
		if (l->len[i] > 24)
			s[m++] = l->addr[i] >> 8;
	qsort(s, m, sizeof(*s), cmp_u32);
	for (uint64_t i = 0; i < m; i++)
		groups += i == 0 || s[i] != s[i - 1];
	free(s);
	return groups + groups / 64 + 64;
}

/* The list written to @p fp (the temporary file @p path) read as a
 * blocklist (32-bit fingerprints), the file removed; exits on failure. */
static struct cbl *
list_read(FILE *fp, const char *path)
{
	struct cbl *bl;
	char err[256];

	fclose(fp);
	bl = cbl_read(path, 32, err, sizeof(err));
	unlink(path);
	if (bl == NULL) {
		fprintf(stderr, "bench_blocklist: %s\n", err);
		exit(1);
	}
	return bl;
}

/* Write the list as text (for cbl_read) and fill exact tables. */
static void
run(const struct list *l, uint64_t n, uint64_t packets)
{
	char path[] = "/tmp/bench_bl_XXXXXX";
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w");
	struct rte_hash *h[8] = { NULL };
	uint64_t heap0 = heap_bytes(), rng = 99;
	uint32_t *pkt = malloc(2 * packets * sizeof(uint32_t));
	struct cbl *bl;
	struct cbl_info info;
	double ns[NB_TARGETS][MAX_ROUNDS], cpu[NB_TARGETS][MAX_ROUNDS];
	double quiet[NB_TARGETS][MAX_ROUNDS] = { { 0 } };
	unsigned int nlen = l->nlen;
	bool prefixes = l->lengths[0] != 32;
	uint64_t hit[NB_TARGETS] = { 0 }, heap_h, heap_fib[2];
	struct rte_fib *fib[2];
	unsigned int on = targets;

	for (uint64_t i = 0; i < n; i++) {
		struct in_addr a = { htonl(l->addr[i]) };

		fprintf(fp, "%s/%u\n", inet_ntoa(a), l->len[i]);
	}
	bl = list_read(fp, path);
	cbl_info(bl, &info);
	for (unsigned int k = 0; k < nlen; k++) {
		char name[32];
		struct rte_hash_parameters p = {
			.name = name, .entries = (uint32_t)(n / nlen * 1.3 + 64),
			.key_len = sizeof(uint32_t), .hash_func = rte_hash_crc,
			.socket_id = 0,
		};

		snprintf(name, sizeof(name), "bl_%s_%u", l->name, k);
		h[k] = rte_hash_create(&p);
		if (h[k] == NULL) {
			fprintf(stderr, "rte_hash_create: %s\n",
				rte_strerror(rte_errno));
			exit(1);
		}
	}
	for (uint64_t i = 0; i < n; i++) {
		unsigned int k = 0;
		uint32_t key = mask(l->addr[i], l->len[i]);

		while (l->lengths[k] != l->len[i])
			k++;
		rte_hash_add_key(h[k], &key);
	}
	/* Packets: 10% with a listed address somewhere inside an entry. */
	for (uint64_t i = 0; i < 2 * packets; i++) {
		uint64_t r = cfu_splitmix64(&rng);

		pkt[i] = r % 20 == 0 ? l->addr[(r >> 8) % n] ^ (uint32_t)(
			(r >> 40) & (prefixes ? 0xff : 0)) : (uint32_t)(r >> 32);
	}
	heap_h = heap_bytes() - heap0;

	/* rte_fib: every entry a route, looked up 64 addresses a call;
	 * a tbl8 group for each /24 with longer routes, no more (its
	 * memory as the list needs it); 4-byte next hops, then 1-byte */
	for (unsigned int v = 0; v < 2; v++) {
		char lname[32];
		struct rte_fib_conf fc = {
			.type = RTE_FIB_DIR24_8, .default_nh = 0,
			.max_routes = (int)n,
			.dir24_8 = { .nh_sz = v == 0 ? RTE_FIB_DIR24_8_4B :
				RTE_FIB_DIR24_8_1B,
				.num_tbl8 = tbl8_groups(l, n) },
		};

		heap0 = heap_bytes();
		snprintf(lname, sizeof(lname), "bl_fib%u_%s", v, l->name);
		fib[v] = rte_fib_create(lname, 0, &fc);
		heap_fib[v] = 0;
		if (fib[v] == NULL && v == 1) {
			/* 1-byte next hops: at most 127 tbl8 groups */
			note("- %s: rte_fib 1B not built: %u tbl8 groups "
				"wanted, at most 127 (%s)\n", l->name,
				fc.dir24_8.num_tbl8, rte_strerror(rte_errno));
			on &= ~(1u << 4);
			continue;
		}
		if (fib[v] == NULL) {
			fprintf(stderr, "rte_fib_create: %s\n",
				rte_strerror(rte_errno));
			exit(1);
		}
		for (uint64_t i = 0; i < n; i++)
			if (rte_fib_add(fib[v], mask(l->addr[i], l->len[i]),
					(uint8_t)l->len[i], 1) != 0) {
				fprintf(stderr, "rte_fib_add: entry %" PRIu64
					" refused\n", i);
				exit(1);
			}
		heap_fib[v] = heap_bytes() - heap0;
	}

	/* The targets in turns, each round starting at the next one; ns a
	 * packet of each round, the median and the range printed. */
	for (unsigned int r = 0; r < rounds; r++)
		for (unsigned int j = 0; j < NB_TARGETS; j++) {
			unsigned int t = (r + j) % NB_TARGETS;
			uint64_t hits = 0;
			double secs = 0, c0 = cpu_now();

			if (!(on & (1u << t)))
				continue;
			quiet_cycles = quiet_calls = 0;
			pass_cpu = 0;
			if (t == 0 || t == 1)
				secs = cuckoo_pass(bl, pkt, packets, t == 1,
					&hits);
			else if (t == 2)
				secs = hash_pass(h, l, pkt, packets, &hits);
			else
				secs = fib_pass(fib[t - 3], pkt, packets,
					&hits);
			ns[t][r] = secs / (double)(packets / 32 * 32) * 1e9;
			/* rte_hash: its whole pass's (a call a key) */
			cpu[t][r] = (t == 2 ? cpu_now() - c0 : pass_cpu) /
				(double)(packets / 32 * 32) * 1e9;
			/* rte_hash a key a call: its pass's wall time */
			quiet[t][r] = t == 2 ? ns[t][r] : quiet_ns();
			hit[t] = hits;
		}
	printf("| %-9s | %9" PRIu64 " | %5u |", l->name, info.total,
		info.v4_lengths);
	print_times(ns, on);
	printf(" %9.1f | %9.1f | %9.1f | %9.1f | %7.4f%% | %" PRIu64 "/%"
		PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 " |\n",
		cbl_bytes(bl) * 8.0 / n, heap_h * 8.0 / n,
		heap_fib[0] * 8.0 / n, heap_fib[1] * 8.0 / n,
		100.0 * hit[__builtin_ctz(targets)] /
		(double)(packets / 32 * 32), hit[0], hit[1],
		hit[2], hit[3], hit[4]);
	print_rounds(l->name, ns, cpu, quiet, on);
	for (unsigned int v = 0; v < 2; v++)
		if (fib[v] != NULL)
			rte_fib_free(fib[v]);
	for (unsigned int k = 0; k < nlen; k++)
		rte_hash_free(h[k]);
	cbl_free(bl);
	free(pkt);
}

/* A flow as rte_hash keys it: the canonical 5-tuple (lower address
 * first), 16 bytes. */
struct flow5 {
	uint32_t lo, hi;
	uint16_t port_lo, port_hi;
	uint8_t proto;
	uint8_t pad[3];
};

static struct flow5
flow5(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp)
{
	struct flow5 f = { .proto = 17 };
	bool swap = s > d || (s == d && sp > dp);

	f.lo = swap ? d : s;
	f.hi = swap ? s : d;
	f.port_lo = swap ? dp : sp;
	f.port_hi = swap ? sp : dp;
	return f;
}

/*
 * A list of @p n flow entries (UDP 5-tuples, either direction): the
 * cuckoo list a packet a call and in bursts of 32, against an exact
 * rte_hash table of the canonical 5-tuples looked up 32 keys a call
 * (rte_hash_lookup_bulk: bulk against bulk). Packets: 10% a listed
 * flow (half of them in its reverse direction), the rest random.
 */
static void
run_flows(uint64_t n, uint64_t packets)
{
	char path[] = "/tmp/bench_bl_XXXXXX";
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w");
	struct flow5 *entry = malloc(n * sizeof(*entry));
	struct flow5 *pkt = malloc(packets * sizeof(*pkt));
	uint32_t (*raw)[4] = malloc(packets * sizeof(*raw));
	uint64_t heap0, heap_h, rng = 1234, hit[4] = { 0 };
	double ns[NB_TARGETS][MAX_ROUNDS], cpu[NB_TARGETS][MAX_ROUNDS];
	double quiet[NB_TARGETS][MAX_ROUNDS] = { { 0 } };
	struct rte_hash *h;
	struct cbl *bl;
	struct cbl_info info;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = cfu_splitmix64(&rng), q = cfu_splitmix64(&rng);
		struct in_addr a = { htonl((uint32_t)r) };
		struct in_addr b = { htonl((uint32_t)(r >> 32)) };
		char at[32];

		snprintf(at, sizeof(at), "%s", inet_ntoa(a));
		fprintf(fp, "udp %s %u %s %u\n", at, (unsigned int)(uint16_t)q,
			inet_ntoa(b), (unsigned int)(uint16_t)(q >> 16));
		entry[i] = flow5((uint32_t)r, (uint32_t)(r >> 32), (uint16_t)q,
			(uint16_t)(q >> 16));
	}
	bl = list_read(fp, path);
	cbl_info(bl, &info);
	heap0 = heap_bytes();
	h = rte_hash_create(&(struct rte_hash_parameters){
		.name = "bl_flows", .entries = (uint32_t)(n * 1.3 + 64),
		.key_len = sizeof(struct flow5), .hash_func = rte_hash_crc,
		.socket_id = 0,
	});
	if (h == NULL) {
		fprintf(stderr, "rte_hash_create: %s\n",
			rte_strerror(rte_errno));
		exit(1);
	}
	for (uint64_t i = 0; i < n; i++)
		rte_hash_add_key(h, &entry[i]);
	heap_h = heap_bytes() - heap0;
	for (uint64_t i = 0; i < packets; i++) {
		uint64_t r = cfu_splitmix64(&rng), q = cfu_splitmix64(&rng);

		if (r % 10 == 0) {
			const struct flow5 *f = &entry[(r >> 8) % n];
			bool rev = (r >> 4) & 1;

			raw[i][0] = rev ? f->hi : f->lo;
			raw[i][1] = rev ? f->lo : f->hi;
			raw[i][2] = rev ? f->port_hi : f->port_lo;
			raw[i][3] = rev ? f->port_lo : f->port_hi;
		} else {
			raw[i][0] = (uint32_t)q;
			raw[i][1] = (uint32_t)(q >> 32);
			raw[i][2] = (uint16_t)r;
			raw[i][3] = (uint16_t)(r >> 16);
		}
		pkt[i] = flow5(raw[i][0], raw[i][1], (uint16_t)raw[i][2],
			(uint16_t)raw[i][3]);
	}
	for (unsigned int r = 0; r < rounds; r++)
		for (unsigned int j = 0; j < 3; j++) {
			unsigned int t = (r + j) % 3;
			uint64_t cycles = 0, hits = 0;

			if (!(targets & (1u << t)))
				continue;
			quiet_cycles = quiet_calls = 0;
			pass_cpu = 0;
			for (uint64_t i = 0; i + 32 <= packets; ) {
				static struct cflow_packet ps[BENCH_CPU_CALLS][32];
				enum cbl_kind kinds[BENCH_CPU_CALLS][32];
				const void *keys[BENCH_CPU_CALLS][32];
				void *data[32];
				uint64_t found[BENCH_CPU_CALLS] = { 0 };
				unsigned int nb = 0;
				double t0;

				for (; nb < BENCH_CPU_CALLS &&
						i + 32 * (nb + 1) <= packets; nb++)
					for (unsigned int k = 0; k < 32; k++) {
						uint64_t x = i + 32 * nb + k;
						uint8_t s[16] = { [10] = 0xff,
							[11] = 0xff };
						uint8_t d[16] = { [10] = 0xff,
							[11] = 0xff };
						uint32_t a = htonl(raw[x][0]);
						uint32_t b = htonl(raw[x][1]);

						memcpy(s + 12, &a, 4);
						memcpy(d + 12, &b, 4);
						memset(&ps[nb][k], 0,
							sizeof(ps[nb][k]));
						cflow_key_init(&ps[nb][k].key, 4,
							s, d, (uint16_t)raw[x][2],
							(uint16_t)raw[x][3], 17);
						keys[nb][k] = &pkt[x];
					}
				t0 = cpu_now();
				for (unsigned int c = 0; c < nb; c++) {
					uint64_t c0 = rte_rdtsc();

					if (t == 0)
						for (unsigned int k = 0; k < 32;
								k++)
							kinds[c][k] = cbl_match(
								bl, &ps[c][k]);
					else if (t == 1)
						cbl_match_burst(bl, ps[c], 32,
							UINT32_MAX, kinds[c]);
					else
						rte_hash_lookup_bulk_data(h,
							keys[c], 32, &found[c],
							data);
					cycles += call_cycles(c0);
				}
				pass_cpu += cpu_now() - t0;
				for (unsigned int c = 0; c < nb; c++)
					for (unsigned int k = 0; k < 32; k++)
						hits += t == 2 ?
							(found[c] >> k) & 1 :
							kinds[c][k] != CBL_NONE;
				i += 32 * nb;
			}
			ns[t][r] = (double)cycles / (double)rte_get_tsc_hz() /
				(double)(packets / 32 * 32) * 1e9;
			cpu[t][r] = pass_cpu / (double)(packets / 32 * 32) *
				1e9;
			quiet[t][r] = quiet_ns();
			hit[t] = hits;
		}
	printf("| %-9s | %9" PRIu64 " | %5u |", "flows", info.total, 0u);
	print_times(ns, 0x7);
	printf(" %9.1f | %9.1f | - | - | %7.4f%% | %" PRIu64 "/%" PRIu64 "/%"
		PRIu64 "/-/- |\n", cbl_bytes(bl) * 8.0 / n, heap_h * 8.0 / n,
		100.0 * hit[__builtin_ctz(targets)] /
		(double)(packets / 32 * 32), hit[0], hit[1], hit[2]);
	print_rounds("flows", ns, cpu, quiet, targets & 0x7);
	rte_hash_free(h);
	cbl_free(bl);
	free(entry);
	free(pkt);
	free(raw);
}

int
main(int argc, char **argv)
{
	char prefix[64];
	char *eal[] = { argv[0], "--no-huge", "-m", "4096", "--no-pci",
		"--no-telemetry", "--log-level=lib.*:error", prefix, NULL };
	char *eal_huge[] = { argv[0], "--in-memory", "--no-pci",
		"--no-telemetry", "--log-level=lib.*:error", prefix, NULL };
	bool huge = false;
	uint64_t n = 1000000, packets = 2000000, rng = 7;
	struct list addrs = { "addresses", NULL, NULL, length32, 1 };
	struct list nets = { "prefixes", NULL, NULL, lengths, 8 };
	struct list nets24 = { "prefixes24", NULL, NULL, lengths24, 4 };
	int opt;

	while ((opt = getopt(argc, argv, "n:p:r:t:l:Hh")) != -1) {
		if (opt == 'H') {
			huge = true;
		} else if (opt == 't') {
			targets = name_bits(optarg, target_names, NB_TARGETS);
		} else if (opt == 'l') {
			lists = name_bits(optarg, list_names, 4);
		} else if (opt == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (opt == 'r')
			rounds = (unsigned int)strtoul(optarg, NULL, 10);
		else if (opt == 'p')
			packets = strtoull(optarg, NULL, 10);
		else {
			printf("usage: %s [-n entries] [-p packets] "
				"[-r rounds] [-t cuckoo,burst,hash,fib,fib1] "
				"[-l addresses,prefixes,prefixes24,flows] "
				"[-H]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n < 100 || packets < 1000 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "bench_blocklist: want -n >= 100, -p >= 1000, "
			"-r 1..%d\n", MAX_ROUNDS);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=cfbl%d", (int)getpid());
	if (huge ? rte_eal_init(6, eal_huge) < 0 : rte_eal_init(8, eal) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	quiet_limit = rte_get_tsc_hz() / 1000000 * BENCH_QUIET_US;
	addrs.addr = malloc(n * sizeof(uint32_t));
	addrs.len = malloc(n * sizeof(unsigned int));
	nets.addr = malloc(n * sizeof(uint32_t));
	nets.len = malloc(n * sizeof(unsigned int));
	nets24.addr = malloc(n * sizeof(uint32_t));
	nets24.len = malloc(n * sizeof(unsigned int));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = cfu_splitmix64(&rng);

		addrs.addr[i] = (uint32_t)r;
		addrs.len[i] = 32;
		nets.len[i] = lengths[(r >> 32) % 8];
		nets.addr[i] = mask((uint32_t)(r >> 35) * 8 + (uint32_t)r,
			nets.len[i]);
	}
	for (uint64_t i = 0, r24 = 24; i < n; i++) {
		uint64_t r = cfu_splitmix64(&r24);

		nets24.len[i] = lengths24[(r >> 32) % 4];
		nets24.addr[i] = mask((uint32_t)r, nets24.len[i]);
	}
	printf("# bench_blocklist: %" PRIu64 " entries, %" PRIu64 " packets "
		"(2 addresses each), ns per packet: median (range) of %u "
		"rounds\n\n", n, packets, rounds);
	printf("| list      | entries   | lens  | cuckoo ns/pkt | cuckoo "
		"burst ns/pkt | rte_hash ns/pkt | rte_fib ns/pkt | rte_fib 1B "
		"ns/pkt | cuckoo bits/entry | rte_hash bits/entry | rte_fib "
		"bits/entry | rte_fib 1B bits/entry | matched | hits "
		"cuckoo/burst/rte_hash/rte_fib/rte_fib 1B |\n");
	/* (ns/pkt: the median of the rounds, their range in parentheses;
	 * cuckoo bits/entry: cbl_bytes(), the filter and its index) */
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---:|---|\n");
	if (lists & 1)
		run(&addrs, n, packets);
	if (lists & 2)
		run(&nets, n, packets);
	if (lists & 4)
		run(&nets24, n, packets);
	if ((lists & 8) && (targets & 0x7))
		run_flows(n, packets);
	printf("\n%s", notes);
	rte_eal_cleanup();
	return 0;
}
