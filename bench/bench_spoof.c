/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_spoof: how often a firewall's cuckoo filter lets a spoofed
 * outside packet through (docs/firewall.md, "Security: false positives,
 * measured").
 *
 * For each fingerprint width (--fp, default 12, 16 and 32 bits), a
 * lib/cflow tracker of --capacity flows (default the application's,
 * 2^20) is filled with --flows real flows (default 1 M) by inside
 * packets: 64-byte TCP SYN (3 in 4) and UDP frames through
 * cflow_track_burst(), each a distinct 5-tuple from 10.0.0.0/8. Then
 * --packets random outside packets (default 10 M) are tracked with
 * CFLOW_IN_NO_CREATE: TCP, random IPv4 addresses and ports, an ACK, or
 * with probability --rst-share (default 0.25) an RST. None is a packet
 * of a real flow, so every one whose verdict is not
 * CFLOW_UNTRACKED_UNSOLICITED (SEEN, or CLOSING for an RST that closed
 * the real flow it collided with) is a false positive of the filter.
 *
 * Table 1: the table's load, the expected false positive rate (cf_stats'
 * expected_fpr) and passes, the passes measured by verdict, the measured
 * rate, packets per pass, the flows the spoofed packets created (must
 * be 0), the spoofed packets' rate through the tracker, and "shared":
 * real flows whose first packet collided with a flow inserted before
 * (SEEN, not NEW: they ride on that flow's entry, a false positive of
 * the filling).
 *
 * Table 2: what the tuples that passed ("found") are worth to an
 * attacker:
 *   again      sent once more, as ACKs: a pass is a property of the
 *              tuple, not luck of the packet;
 *   other seed the same, to a tracker with the same real flows and
 *              another seed (a restart draws a new random seed);
 *   kept alive the found tuples sent as ACKs every 5 s for 420 s of
 *              tracker time, with no real packet at all, the table swept
 *              (cflow_sweep_all) before each round: found tuples that
 *              still pass at the end, when every real flow is past its
 *              idle timeout (TCP 300 s, UDP 60 s);
 *   entries    the table's entries then (the real flows the found tuples
 *              collide with, kept alive by them alone);
 *   replies    an inside packet of each found tuple, reversed (the
 *              inside host's reply), at the end: SEEN, as its canonical
 *              key is the found tuple's, riding on the same entry.
 *
 * The seed is random (cflow_random_seed(), as the application's) unless
 * --seed is given; the other seed of table 2 is always drawn.
 *
 * usage: bench_spoof [--flows N] [--packets N] [--capacity N]
 *                    [--exact-size] [--fp LIST] [--rst-share P]
 *                    [--seed S]
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cflow.h"
#include "cfutil.h"

#define BURST 32
#define FRAME_LEN 60            /* 64 bytes on the wire with the FCS */
#define STEP_NS 1000            /* tracker time per burst */
#define START_NS UINT64_C(1000000000)
#define KEEP_STEP_NS (UINT64_C(5) * 1000000000)
#define KEEP_ROUNDS 84          /* 420 s */
#define MAX_WIDTHS 8

static struct {
	uint64_t flows;
	uint64_t packets;
	uint64_t capacity;
	bool exact_size;
	unsigned int fp[MAX_WIDTHS];
	unsigned int nb_fp;
	double rst_share;
	uint64_t seed;          /* 0: random */
} opt = {
	.flows = 1000000,
	.packets = 10000000,
	.capacity = CFLOW_CAPACITY_DEFAULT,
	.fp = { 12, 16, 32 },
	.nb_fp = 3,
	.rst_share = 0.25,
};

/* A packet's IPv4 5-tuple, addresses and ports in host order. */
struct tuple {
	uint32_t src, dst;
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t flags;          /* TCP */
};

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* Ethernet, IPv4 and TCP or UDP headers of @p tu, zero padded. */
static void
frame_write(uint8_t *p, const struct tuple *tu)
{
	bool tcp = tu->proto == 6;

	memset(p, 0, FRAME_LEN);
	p[0] = 0x02;
	p[5] = 2;
	p[6] = 0x02;
	p[11] = 1;
	put16(p + 12, 0x0800);
	p[14] = 0x45;
	put16(p + 16, tcp ? 40 : 28);
	p[22] = 64;
	p[23] = tu->proto;
	put32(p + 26, tu->src);
	put32(p + 30, tu->dst);
	put16(p + 34, tu->sport);
	put16(p + 36, tu->dport);
	if (tcp) {
		p[46] = 0x50;
		p[47] = tu->flags;
		put16(p + 48, 0xffff);
	} else {
		put16(p + 38, 8);
	}
}

/* Real flow @p i: a distinct 5-tuple from an inside host, its first
 * packet (a TCP SYN, or UDP for one flow in 4). */
static void
real_flow(uint64_t i, struct tuple *tu)
{
	uint64_t x = i;
	uint64_t r = cfu_splitmix64(&x);

	tu->src = UINT32_C(0x0a000000) + (uint32_t)(i >> 4);
	tu->sport = (uint16_t)(20000 + (i & 15));
	tu->dst = (uint32_t)(r >> 32);
	if ((r & 3) == 0) {
		tu->proto = 17;
		tu->dport = 53;
		tu->flags = 0;
	} else {
		tu->proto = 6;
		tu->dport = 443;
		tu->flags = CFLOW_TCP_SYN;
	}
}

/* A random outside packet: TCP, an ACK or an RST. */
static void
spoof_tuple(uint64_t *rng, struct tuple *tu)
{
	uint64_t a = cfu_splitmix64(rng), b = cfu_splitmix64(rng);

	tu->src = (uint32_t)a;
	tu->dst = (uint32_t)(a >> 32);
	tu->sport = (uint16_t)b;
	tu->dport = (uint16_t)(b >> 16);
	tu->proto = 6;
	tu->flags = (double)(b >> 11) * 0x1p-53 < opt.rst_share ?
		CFLOW_TCP_RST | CFLOW_TCP_ACK : CFLOW_TCP_ACK;
}

/* ------------------------------------------------------------ tracking */

struct run {
	struct cflow_tracker *t;
	uint64_t now_ns;
	uint64_t verdicts[CFLOW_VERDICT_MAX];
	uint64_t shared;        /* real flows that found another's entry */
};

/* Track @p n tuples (n <= BURST), @p flags CFLOW_IN_*; verdicts out. */
static void
burst(struct run *r, const struct tuple *tu, unsigned int n, uint8_t flags,
		enum cflow_verdict *v)
{
	uint8_t frames[BURST * FRAME_LEN];
	struct cflow_input in[BURST] = { 0 };

	for (unsigned int k = 0; k < n; k++) {
		frame_write(frames + k * FRAME_LEN, &tu[k]);
		in[k] = (struct cflow_input){
			.data = frames + k * FRAME_LEN, .len = FRAME_LEN,
			.wire_len = FRAME_LEN + 4, .time_ns = r->now_ns,
			.flags = flags,
		};
	}
	cflow_track_burst(r->t, in, n, v);
	for (unsigned int k = 0; k < n; k++)
		r->verdicts[v[k]]++;
	r->now_ns += STEP_NS;
}

static struct cflow_tracker *
tracker_make(unsigned int fp, uint64_t seed)
{
	struct cflow_tracker_params p = {
		.capacity = opt.capacity,
		.exact_size = opt.exact_size,
		.fp_bits = fp,
		.seed = seed,
	};

	return cflow_tracker_create(&p);
}

/* The real flows, from inside: 0, or -1 if one was not inserted. */
static int
fill(struct run *r)
{
	struct tuple tu[BURST];
	enum cflow_verdict v[BURST];

	for (uint64_t i = 0; i < opt.flows; i += BURST) {
		unsigned int n = opt.flows - i < BURST ?
			(unsigned int)(opt.flows - i) : BURST;

		for (unsigned int k = 0; k < n; k++)
			real_flow(i + k, &tu[k]);
		burst(r, tu, n, 0, v);
	}
	/* A real flow whose first packet collides with a flow inserted
	 * before it is SEEN: it shares that flow's entry (a false positive
	 * too). Any other verdict: the table is too small. */
	if (r->verdicts[CFLOW_NEW] + r->verdicts[CFLOW_SEEN] != opt.flows) {
		fprintf(stderr, "bench_spoof: %" PRIu64 " of %" PRIu64
			" real flows inserted: table too small\n",
			r->verdicts[CFLOW_NEW], opt.flows);
		return -1;
	}
	r->shared = r->verdicts[CFLOW_SEEN];
	memset(r->verdicts, 0, sizeof(r->verdicts));
	return 0;
}

/* The found tuples, @p flags set, sent from outside (or reversed, from
 * inside, if @p reply): how many passed (SEEN or CLOSING). */
static uint64_t
resend(struct run *r, const struct tuple *found, uint64_t n, uint8_t flags,
		bool reply)
{
	struct tuple tu[BURST];
	enum cflow_verdict v[BURST];
	uint64_t pass = 0;

	for (uint64_t i = 0; i < n; i += BURST) {
		unsigned int m = n - i < BURST ? (unsigned int)(n - i) : BURST;

		for (unsigned int k = 0; k < m; k++) {
			tu[k] = found[i + k];
			tu[k].flags = flags;
			if (reply) {
				tu[k].src = found[i + k].dst;
				tu[k].dst = found[i + k].src;
				tu[k].sport = found[i + k].dport;
				tu[k].dport = found[i + k].sport;
			}
		}
		burst(r, tu, m, reply ? 0 : CFLOW_IN_NO_CREATE, v);
		for (unsigned int k = 0; k < m; k++)
			pass += v[k] == CFLOW_SEEN || v[k] == CFLOW_CLOSING;
	}
	return pass;
}

static double
secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct result {
	unsigned int fp;
	uint64_t seed;
	double load, expected_fpr;
	uint64_t shared;
	uint64_t seen, closing, created;
	double mpps;
	uint64_t found, again, other_seed, kept, entries, replies;
};

static int
width(unsigned int fp, struct result *res)
{
	struct run a = { .now_ns = START_NS }, b = { .now_ns = START_NS };
	struct cflow_tracker_params p;
	struct cflow_counters c0, c1;
	struct cf_stats st;
	struct tuple tu[BURST], *found = NULL;
	enum cflow_verdict v[BURST];
	uint64_t rng = opt.seed ^ fp, nfound = 0, cap = 0;
	double t0, t1;

	memset(res, 0, sizeof(*res));
	res->fp = fp;
	a.t = tracker_make(fp, opt.seed);
	if (a.t == NULL) {
		perror("bench_spoof: cflow_tracker_create");
		return -1;
	}
	cflow_tracker_params_get(a.t, &p);
	res->seed = p.seed;
	if (opt.seed == 0)
		rng = cflow_random_seed();
	if (fill(&a) != 0)
		return -1;
	cf_stats(cflow_tracker_filter(a.t), &st);
	res->shared = a.shared;
	res->load = st.load_factor;
	res->expected_fpr = st.expected_fpr;
	cflow_counters_get(a.t, &c0);

	/* The spoofed packets. */
	t0 = secs();
	for (uint64_t i = 0; i < opt.packets; i += BURST) {
		unsigned int n = opt.packets - i < BURST ?
			(unsigned int)(opt.packets - i) : BURST;

		for (unsigned int k = 0; k < n; k++)
			spoof_tuple(&rng, &tu[k]);
		burst(&a, tu, n, CFLOW_IN_NO_CREATE, v);
		for (unsigned int k = 0; k < n; k++) {
			if (v[k] != CFLOW_SEEN && v[k] != CFLOW_CLOSING)
				continue;
			if (nfound == cap) {
				cap = cap != 0 ? 2 * cap : 1024;
				found = realloc(found, cap * sizeof(*found));
				if (found == NULL) {
					fprintf(stderr, "bench_spoof: out of "
						"memory\n");
					return -1;
				}
			}
			found[nfound++] = tu[k];
		}
	}
	t1 = secs();
	cflow_counters_get(a.t, &c1);
	res->seen = a.verdicts[CFLOW_SEEN];
	res->closing = a.verdicts[CFLOW_CLOSING];
	res->created = c1.flows_new - c0.flows_new;
	res->mpps = opt.packets / (t1 - t0) / 1e6;
	res->found = nfound;
	if (a.verdicts[CFLOW_UNTRACKED_UNSOLICITED] + res->seen +
			res->closing != opt.packets) {
		fprintf(stderr, "bench_spoof: verdicts other than unsolicited, "
			"seen and closing\n");
		return -1;
	}

	/* Found tuples: again, on another seed, kept alive, replies. */
	res->again = resend(&a, found, nfound, CFLOW_TCP_ACK, false);
	b.t = tracker_make(fp, 0);
	if (b.t == NULL) {
		perror("bench_spoof: cflow_tracker_create");
		return -1;
	}
	if (fill(&b) != 0)
		return -1;
	res->other_seed = resend(&b, found, nfound, CFLOW_TCP_ACK, false);
	cflow_tracker_free(b.t);
	for (unsigned int k = 0; k < KEEP_ROUNDS; k++) {
		a.now_ns += KEEP_STEP_NS;
		cflow_sweep_all(a.t, a.now_ns);
		res->kept = resend(&a, found, nfound, CFLOW_TCP_ACK, false);
	}
	cflow_sweep_all(a.t, a.now_ns);
	cf_stats(cflow_tracker_filter(a.t), &st);
	res->entries = st.items;
	res->replies = resend(&a, found, nfound, CFLOW_TCP_ACK, true);
	free(found);
	cflow_tracker_free(a.t);
	return 0;
}

/* ------------------------------------------------------------ options */

static void
usage(const char *prog)
{
	printf("usage: %s [options]\n"
		"  --flows N       real flows, from inside (default 1000000)\n"
		"  --packets N     random outside packets (default 10000000)\n"
		"  --capacity N    tracker capacity (default %" PRIu64 ", "
		"the application's)\n"
		"  --exact-size    table sized to the capacity, not a power "
		"of two\n"
		"  --fp LIST       fingerprint widths, e.g. 12,16,32 (the "
		"default)\n"
		"  --rst-share P   share of spoofed RSTs, the rest ACKs "
		"(default 0.25)\n"
		"  --seed S        hash seed and packet stream (default: "
		"random)\n"
		"See the header comment for the tables.\n",
		prog, (uint64_t)CFLOW_CAPACITY_DEFAULT);
}

static int
parse_widths(const char *arg)
{
	const char *s = arg;

	opt.nb_fp = 0;
	while (*s != '\0') {
		char *end;
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || v < 4 || v > 32 || opt.nb_fp == MAX_WIDTHS ||
				(*end != ',' && *end != '\0'))
			return -1;
		opt.fp[opt.nb_fp++] = (unsigned int)v;
		s = *end == ',' ? end + 1 : end;
	}
	return opt.nb_fp != 0 ? 0 : -1;
}

/* A count of at least 1, in any base strtoull() takes. */
static int
count_parse(const char *arg, uint64_t *out)
{
	char *end;

	*out = strtoull(arg, &end, 0);
	return end != arg && *end == '\0' && *out >= 1 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "flows", required_argument, NULL, 'f' },
		{ "packets", required_argument, NULL, 'p' },
		{ "capacity", required_argument, NULL, 'c' },
		{ "exact-size", no_argument, NULL, 'e' },
		{ "fp", required_argument, NULL, 'b' },
		{ "rst-share", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct result res[MAX_WIDTHS];
	int o, li = 0;

	while ((o = getopt_long(argc, argv, "h", longs, &li)) != -1) {
		char *end = NULL;

		switch (o) {
		case 'f':
			if (count_parse(optarg, &opt.flows) != 0)
				goto bad;
			break;
		case 'p':
			if (count_parse(optarg, &opt.packets) != 0)
				goto bad;
			break;
		case 'c':
			if (count_parse(optarg, &opt.capacity) != 0)
				goto bad;
			break;
		case 'e':
			opt.exact_size = true;
			break;
		case 'b':
			if (parse_widths(optarg) != 0)
				goto bad;
			break;
		case 'r':
			opt.rst_share = strtod(optarg, &end);
			if (*end != '\0' || !(opt.rst_share >= 0 &&
					opt.rst_share <= 1))
				goto bad;
			break;
		case 's':
			if (count_parse(optarg, &opt.seed) != 0)
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
		fprintf(stderr, "bench_spoof: --%s %s: not accepted (see "
			"--help)\n", longs[li].name, optarg);
		return 2;
	}
	for (unsigned int i = 0; i < opt.nb_fp; i++)
		if (width(opt.fp[i], &res[i]) != 0)
			return 1;

	printf("# bench_spoof: %" PRIu64 " real flows (capacity %" PRIu64
		"%s), %" PRIu64 " random outside packets (%.0f%% RST), "
		"seed %s\n\n", opt.flows, opt.capacity,
		opt.exact_size ? ", exact size" : "", opt.packets,
		100 * opt.rst_share, opt.seed != 0 ? "fixed" : "random");
	printf("| fp bits | seed | load | expected FPR | expected passes | "
		"passes | seen | closing | measured FPR | packets/pass | "
		"created | Mpps | shared |\n");
	printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---:|---:|\n");
	for (unsigned int i = 0; i < opt.nb_fp; i++) {
		const struct result *r = &res[i];
		uint64_t pass = r->seen + r->closing;

		printf("| %u | %016" PRIx64 " | %.3f | %.3g | %.1f | %" PRIu64
			" | %" PRIu64 " | %" PRIu64 " | %.3g | ", r->fp,
			r->seed, r->load, r->expected_fpr,
			r->expected_fpr * opt.packets, pass, r->seen,
			r->closing, (double)pass / opt.packets);
		if (pass != 0)
			printf("%.3g", (double)opt.packets / pass);
		else
			printf("> %" PRIu64, opt.packets);
		printf(" | %" PRIu64 " | %.2f | %" PRIu64 " |\n", r->created,
			r->mpps, r->shared);
	}
	printf("\n| fp bits | found | again | other seed | kept alive "
		"420 s | entries | replies |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|\n");
	for (unsigned int i = 0; i < opt.nb_fp; i++) {
		const struct result *r = &res[i];

		printf("| %u | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %"
			PRIu64 " | %" PRIu64 " | %" PRIu64 " |\n", r->fp,
			r->found, r->again, r->other_seed, r->kept,
			r->entries, r->replies);
	}
	return 0;
}
