/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_flood: lib/cflow's tracker under a flood of new flows (a SYN
 * flood), on a full table and, side by side, on the same kind of table
 * half full, where new flows insert normally.
 *
 * For each table configuration (fp 16, 16-bit values, exact size; and the
 * tracker's defaults) and each full policy (evict, untracked), two
 * trackers of --flows flows:
 *
 *   full      filled with distinct flows until its stash is full and
 *             fewer than a quarter of the last 4096 new flows found room
 *             (the others were turned away or evicted a flow);
 *   not full  filled to half its slots.
 *
 * The flood is bursts of 32 pre-built 64-byte TCP SYN frames, every one a
 * flow never seen before, through cflow_track_burst() and cflow_sweep()
 * as the application's worker calls them, at a time that advances 1 us a
 * burst (so nothing expires). The two tables take turns (--rounds turns
 * of --packets packets each), so that the drift of a shared machine falls
 * on both. Each turn of either table has flows of its own, never seen
 * before. After each of its turns the not-full table gets an RST for
 * each flow of the turn (close linger 0: removed at once, not timed), so
 * every turn starts at the same load. The full table floods on: it stays
 * full.
 *
 * Figures: Mpps and ns per packet from the monotonic clock over all the
 * turns, cycles per packet from the TSC, ns per packet of the fastest
 * turn (what a quiet machine does), and the ratio of the full table's
 * rate to the not-full table's, over all turns and of the fastest turns.
 *
 * usage: bench_flood [--flows N] [--packets N] [--rounds N]
 *                    [--config exact16|default|both]
 *                    [--policy evict|untracked|both]
 *                    [--side notfull|full|both]
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "bench_util.h"
#include "cflow.h"

#define BURST 32
#define FRAME_LEN 60            /* 64 bytes on the wire with the FCS */
#define STEP_NS 1000            /* tracker time per burst */
/* Flow id ranges: fill, not-full flood, full flood. */
#define FILL_BASE 0
#define HALF_BASE (UINT32_C(1) << 28)
#define FLOOD_BASE (UINT32_C(1) << 29)

static struct {
	uint64_t flows;
	uint64_t packets;       /* per turn */
	unsigned int rounds;
	bool config[2];         /* exact16, default */
	bool policy[2];         /* evict, untracked */
	bool side[2];           /* not full, full */
} opt = {
	.flows = 1000000,
	.packets = 1 << 16,
	.rounds = 5,
	.config = { true, true },
	.policy = { true, true },
	.side = { true, true },
};

static const char *const config_names[] = { "exact16", "default" };
static const char *const policy_names[] = { "evict", "untracked" };
static const char *const side_names[] = { "notfull", "full" };

/* ------------------------------------------------------------ frames */

/* Ethernet, IPv4, TCP: the bytes that do not change. */
static const uint8_t head[] = {
	0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,
	0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 6, 0, 0,
	10, 0, 0, 0, 192, 168, 1, 1,
	0x04, 0x00, 0x00, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02,
	0xff, 0xff, 0, 0, 0, 0,
};

/* Flow f: source 10.a.b.c from its low 24 bits, source port 1024 + the
 * rest; TCP flags @p flags. */
static void
frame_write(uint8_t *p, uint32_t f, uint8_t flags)
{
	memset(p, 0, FRAME_LEN);
	memcpy(p, head, sizeof(head));
	p[27] = (uint8_t)(f >> 16);
	p[28] = (uint8_t)(f >> 8);
	p[29] = (uint8_t)f;
	p[34] = (uint8_t)((1024 + (f >> 24)) >> 8);
	p[35] = (uint8_t)(1024 + (f >> 24));
	p[47] = flags;
}

struct frames {
	uint8_t *data;          /* n frames of FRAME_LEN bytes */
	uint64_t n;
};

static int
frames_build(struct frames *fr, uint32_t base, uint64_t n, uint8_t flags)
{
	fr->n = n;
	fr->data = malloc(n * FRAME_LEN);
	if (fr->data == NULL)
		return -1;
	for (uint64_t i = 0; i < n; i++)
		frame_write(fr->data + i * FRAME_LEN, base + (uint32_t)i,
			flags);
	return 0;
}

/* ----------------------------------------------------------- trackers */

struct side {
	struct cflow_tracker *t;
	uint64_t now_ns;
	uint64_t packets, ns, cycles;
	double best_ns;         /* per packet, fastest turn */
	uint64_t verdicts[CFLOW_VERDICT_MAX];
};

static struct cflow_tracker *
tracker_make(unsigned int config, unsigned int policy)
{
	struct cflow_tracker_params p = {
		.capacity = opt.flows,
		.seed = 0x5eed,
		.full_policy = (enum cflow_full_policy)policy,
		.close_linger_ns = CFLOW_LINGER_NONE, /* an RST removes it */
	};

	if (config == 0) {
		p.fp_bits = 16;
		p.value_bits = 16;
		p.exact_size = true;
	}
	return cflow_tracker_create(&p);
}

/* One burst of frames from @p first, untimed unless the caller times. */
static inline void
burst(struct side *s, const uint8_t *first, unsigned int n,
		enum cflow_verdict *v)
{
	struct cflow_input in[BURST];

	for (unsigned int k = 0; k < n; k++)
		in[k] = (struct cflow_input){ .data = first + k * FRAME_LEN,
			.len = FRAME_LEN, .wire_len = FRAME_LEN + 4,
			.time_ns = s->now_ns };
	cflow_track_burst(s->t, in, n, v);
	cflow_sweep(s->t, s->now_ns);
	s->now_ns += STEP_NS;
}

/* Attempts per window of the fill's "full" test. */
#define FILL_WINDOW 4096

/*
 * New flows from flow id @p base on, until the table holds @p items, or
 * with @p items 0 until it is full: its stash is full and fewer than a
 * quarter of the last FILL_WINDOW new flows found room (the others were
 * turned away or evicted a flow).
 */
static int
fill(struct side *s, uint32_t base, uint64_t items)
{
	uint8_t frames[BURST * FRAME_LEN];
	enum cflow_verdict v[BURST];
	struct cf_stats st;
	uint64_t mark = 0;

	for (uint64_t f = 0;; f += BURST) {
		for (unsigned int k = 0; k < BURST; k++)
			frame_write(frames + k * FRAME_LEN,
				base + (uint32_t)(f + k), 0x02);
		burst(s, frames, BURST, v);
		cf_stats(cflow_tracker_filter(s->t), &st);
		if (items != 0 && st.items >= items)
			return 0;
		if (items == 0 && (f + BURST) % FILL_WINDOW == 0) {
			if (st.stash_used == CF_STASH_SIZE &&
					st.items - mark < FILL_WINDOW / 4)
				return 0;
			mark = st.items;
		}
		if (f > 4 * st.slots) {
			fprintf(stderr,
				"bench_flood: the table never filled\n");
			return -1;
		}
	}
}

/* One timed turn: fr's frames, BURST at a time. */
static void
turn(struct side *s, const struct frames *fr)
{
	enum cflow_verdict v[BURST];
	uint64_t c0, c1;
	double t0, t1;

	t0 = now();
	c0 = rte_rdtsc();
	for (uint64_t i = 0; i < fr->n; i += BURST) {
		unsigned int n = fr->n - i < BURST ? (unsigned int)(fr->n - i) :
			BURST;

		burst(s, fr->data + i * FRAME_LEN, n, v);
		for (unsigned int k = 0; k < n; k++)
			s->verdicts[v[k]]++;
	}
	c1 = rte_rdtsc();
	t1 = now();
	s->packets += fr->n;
	s->ns += (uint64_t)((t1 - t0) * 1e9);
	s->cycles += c1 - c0;
	if (s->best_ns == 0 || (t1 - t0) * 1e9 / fr->n < s->best_ns)
		s->best_ns = (t1 - t0) * 1e9 / fr->n;
}

/* Remove the flows of a turn again (RSTs, linger 0), untimed. */
static void
unflood(struct side *s, const struct frames *rst)
{
	enum cflow_verdict v[BURST];

	for (uint64_t i = 0; i < rst->n; i += BURST)
		burst(s, rst->data + i * FRAME_LEN, rst->n - i < BURST ?
			(unsigned int)(rst->n - i) : BURST, v);
}

static void
row(unsigned int config, unsigned int policy, const char *state,
		const struct side *s, const struct side *base)
{
	struct cf_stats st;
	struct cflow_counters c;

	cf_stats(cflow_tracker_filter(s->t), &st);
	cflow_counters_get(s->t, &c);
	printf("| %-7s | %-9s | %-8s | %5.1f%% | %7.3f | %8.1f | %8.1f | "
		"%7.1f | %8" PRIu64 " | %9" PRIu64 " | %9" PRIu64 " | ",
		config_names[config], policy_names[policy], state,
		100 * st.load_factor, s->packets * 1e3 / (double)s->ns,
		(double)s->ns / s->packets,
		(double)s->cycles / s->packets, s->best_ns,
		s->verdicts[CFLOW_NEW], s->verdicts[CFLOW_UNTRACKED_FULL],
		c.flows_evicted);
	if (base != NULL)
		printf("%5.1f%% | %5.1f%% |\n", 100 * ((double)base->ns /
			base->packets) / ((double)s->ns / s->packets),
			100 * base->best_ns / s->best_ns);
	else
		printf("       |        |\n");
}

static int
run(unsigned int config, unsigned int policy)
{
	struct side full = { .now_ns = 1000000000 };
	struct side half = { .now_ns = 1000000000 };
	struct frames flood, fresh, rst;
	struct cf_stats st;

	full.t = tracker_make(config, policy);
	half.t = tracker_make(config, policy);
	if (full.t == NULL || half.t == NULL) {
		perror("bench_flood: cflow_tracker_create");
		return -1;
	}
	cf_stats(cflow_tracker_filter(half.t), &st);
	if (fill(&full, FILL_BASE, 0) != 0 ||
			fill(&half, FILL_BASE, st.slots / 2) != 0)
		return -1;
	if (frames_build(&flood, FLOOD_BASE, opt.packets * opt.rounds,
			0x02) != 0 ||
			frames_build(&fresh, HALF_BASE,
				opt.packets * opt.rounds, 0x02) != 0 ||
			frames_build(&rst, HALF_BASE,
				opt.packets * opt.rounds, 0x04) != 0) {
		fprintf(stderr, "bench_flood: out of memory\n");
		return -1;
	}
	for (unsigned int r = 0; r < opt.rounds; r++) {
		uint64_t off = r * opt.packets * FRAME_LEN;
		struct frames part = { flood.data + off, opt.packets };
		struct frames half_part = { fresh.data + off, opt.packets };
		struct frames rst_part = { rst.data + off, opt.packets };

		/* Alternate which goes first. */
		if (r % 2 == 0 && opt.side[1])
			turn(&full, &part);
		if (opt.side[0]) {
			turn(&half, &half_part);
			unflood(&half, &rst_part);
		}
		if (r % 2 == 1 && opt.side[1])
			turn(&full, &part);
	}
	if (opt.side[0])
		row(config, policy, "not full", &half, NULL);
	if (opt.side[1])
		row(config, policy, "full", &full, opt.side[0] ? &half : NULL);
	fflush(stdout);
	free(flood.data);
	free(fresh.data);
	free(rst.data);
	cflow_tracker_free(full.t);
	cflow_tracker_free(half.t);
	return 0;
}

/* ------------------------------------------------------------ options */

static void
usage(const char *prog)
{
	printf("usage: %s [options]\n"
		"  --flows N      tracker capacity (default 1000000)\n"
		"  --packets N    packets per turn (default 65536)\n"
		"  --rounds N     turns per table (default 5)\n"
		"  --config C     exact16 (fp 16, 16-bit values, exact size), "
		"default, or both\n"
		"  --policy P     evict, untracked, or both\n"
		"  --side S       notfull, full, or both (one alone: to "
		"profile it)\n"
		"Every packet is a SYN of a new flow; see the header "
		"comment.\n",
		prog);
}

static int
pick(const char *arg, const char *const names[2], bool out[2])
{
	out[0] = strcmp(arg, names[0]) == 0 || strcmp(arg, "both") == 0;
	out[1] = strcmp(arg, names[1]) == 0 || strcmp(arg, "both") == 0;
	return out[0] || out[1] ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "flows", required_argument, NULL, 'f' },
		{ "packets", required_argument, NULL, 'p' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'P' },
		{ "side", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o, li = 0;

	while ((o = getopt_long(argc, argv, "h", longs, &li)) != -1) {
		char *end = NULL;

		switch (o) {
		case 'f':
			opt.flows = strtoull(optarg, &end, 0);
			if (*end != '\0' || opt.flows < 1000)
				goto bad;
			break;
		case 'p':
			opt.packets = strtoull(optarg, &end, 0);
			if (*end != '\0' || opt.packets < BURST)
				goto bad;
			opt.packets -= opt.packets % BURST;
			break;
		case 'r':
			opt.rounds = (unsigned int)strtoul(optarg, &end, 0);
			if (*end != '\0' || opt.rounds < 1)
				goto bad;
			break;
		case 'c':
			if (pick(optarg, config_names, opt.config) != 0)
				goto bad;
			break;
		case 'P':
			if (pick(optarg, policy_names, opt.policy) != 0)
				goto bad;
			break;
		case 's':
			if (pick(optarg, side_names, opt.side) != 0)
				goto bad;
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			usage(argv[0]);
			return 2;
		}
		continue;
bad:
		fprintf(stderr, "bench_flood: --%s %s: not accepted (see "
			"--help)\n", longs[li].name, optarg);
		return 2;
	}
	printf("# bench_flood: %" PRIu64 " flows, %u turns of %" PRIu64
		" SYNs of new flows per table, bursts of %d\n\n", opt.flows,
		opt.rounds, opt.packets, BURST);
	printf("| config  | policy    | table    | load   | Mpps    | "
		"ns/pkt   | cyc/pkt  | best ns | new      | untracked | "
		"evicted   | full/not full | (best) |\n");
	printf("|---------|-----------|----------|-------:|--------:|"
		"---------:|---------:|--------:|---------:|----------:|"
		"----------:|------:|------:|\n");
	for (unsigned int c = 0; c < 2; c++)
		for (unsigned int p = 0; p < 2; p++)
			if (opt.config[c] && opt.policy[p] && run(c, p) != 0)
				return 1;
	return 0;
}
