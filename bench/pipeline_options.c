/* SPDX-License-Identifier: BSD-3-Clause */

/* bench_pipeline's options. */

#include <getopt.h>
#include <stdlib.h>

#include <rte_lcore.h>

#include "pipeline.h"

const char *const variant_names[VARIANTS] = { "ceiling", "cuckoo",
	"rte_hash", "cuckoo_il", "probe", "main_spin", "top", "ev_ring",
	"ev_mref", "ev_json", "ev_ipfix", "ev_pcapng", "ev_all", "ev_all_top",
	"rec_ring", "rec_json", "rec_ipfix", "forward", "firewall",
	"fw_mirror" };

struct pipeline_opt opt = {
	.flows = { 1000, 100000, 1000000, 10000000, 100000000 },
	.nb_flows = 5,
	.zipf = { true, false },
	.zipf_s = 0.99,
	.churn = 0.01,
	.seconds = 2,
	.fp_bits = 16,
	.age_bits = 16,
	.sweep_buckets = CFLOW_SWEEP_MAX_BUCKETS,
	.variant = { true, true, true, true, true, false, false, false },
	.shares = { 0, 0.5, 1 },
	.nb_shares = 3,
	.slice_ms = 10,
	.mirror_first = 4,
	.rounds = 4,
	.event_ring = 16384,    /* the application's defaults */
	.top_sources = 1024,
	.ev_dir = "/dev/shm",
};

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [options]\n"
		"  --flows LIST     flow counts (default "
		"1000,100000,1000000,10000000,100000000)\n"
		"  --dist D         uniform, zipf or both (default uniform)\n"
		"  --zipf-s S       Zipf exponent (default 0.99)\n"
		"  --churn F        share of TCP packets that are a FIN; the "
		"flow's next is a SYN (default 0.01)\n"
		"  --seconds S      measured time per row (default 2)\n"
		"  --fp-bits N      cuckoo fingerprint bits (default 16)\n"
		"  --age-bits N     cuckoo state bits, 16 or 32 (default 16)\n"
		"  --exact-size     cuckoo tables sized exactly, not to a power "
		"of two\n"
		"  --table-layout L the cuckoo tables' layout, as the app's "
		"option: auto, plain\n"
		"                   or interleaved (default auto; cuckoo_il: "
		"interleaved)\n"
		"  --sweep-buckets N  sweep work bound per burst, in buckets of "
		"4 slots (default 64; 1 shows what the sweep costs)\n"
		"  --lcores L       1, 2 or both (default: both if the EAL has "
		"2 lcores)\n"
		"  --ipv6           IPv6 frames (78 bytes on the wire), not "
		"IPv4 (64): monitor\n"
		"                   variants only\n"
		"  --variants LIST  of ceiling,cuckoo,rte_hash,cuckoo_il,probe "
		"(default these\n"
		"                   five; probe: 2 random lines a packet in a "
		"buffer of the\n"
		"                   cuckoo table's size, the memory's "
		"ceiling;\n"
		"                   cuckoo_il: the interleaved layout, which "
		"needs a bucket of\n"
		"                   at most 64 bytes),\n"
		"                   forward, firewall, fw_mirror: the app in "
		"forward mode, lib/cflow's\n"
		"                   tracker, bursts alternately on two ports "
		"(inside packets,\n"
		"                   outside replies of the same flows): "
		"without roles; as\n"
		"                   --inside/--outside; and with --mirror-port "
		"--mirror-first N\n"
		"  --firewall       --variants forward,firewall,fw_mirror\n"
		"  --mirror-first N fw_mirror's copies of each flow's first N "
		"packets (default 4)\n"
		"                   main_spin: cuckoo, the main lcore busy "
		"(a spin, no memory);\n"
		"                   ev_ring: cuckoo, events queued to a ring "
		"the main lcore\n"
		"                   empties without writing them; ev_mref: "
		"the same with first\n"
		"                   packets passed as for --new-flow-pcap "
		"(mbufs freed there);\n"
		"                   top, ev_json, ev_ipfix, ev_pcapng, ev_all, "
		"ev_all_top: the cuckoo\n"
		"                   loop and table with the app's top-sources "
		"sketch, flow\n"
		"                   events as JSON lines, IPFIX, first-packet "
		"pcapng, all three,\n"
		"                   all and the sketch; the main lcore drains "
		"them (needs -l 0,1;\n"
		"                   one lane, on lcore 1, for every variant);\n"
		"                   rec_ring, rec_json, rec_ipfix: flow records "
		"(--records, needs\n"
		"                   --age-bits 32) on a table of their own: into "
		"the ring the main\n"
		"                   lcore empties, named and written as JSON "
		"lines, as IPFIX\n"
		"  --new-share LIST events mode: new flows a packet, a "
		"configuration each (sets\n"
		"                   --churn to 2S / (1 - 2S): half the packets "
		"are TCP)\n"
		"  --top-sources N  the top and ev_all_top sketch's counters "
		"(default 1024)\n"
		"  --event-ring N   events a worker's ring holds (default "
		"16384)\n"
		"  --ev-dir DIR     where the event files go (default /dev/shm)\n"
		"  --rounds N       turns of each variant (default 4)\n"
		"  --icmp-errors S  forward mode: a share S (0 to 0.5) of the "
		"packets are ICMP\n"
		"                   errors quoting random tuples (never "
		"tracked): an error flood\n"
		"  --frags S        forward mode: a share S (0 to 0.5) of the "
		"packets come as\n"
		"                   two IPv4 fragments (the first carries the "
		"L4 header)\n"
		"  --csv FILE       also write the rows as CSV\n"
		"  --quick          1 K and 100 K flows, 0.3 s: a smoke run\n"
		"  --sizes          the bytes a flow of the tables (records off "
		"and on) and of the\n"
		"                   records' key store for each --flows, "
		"power-of-two and exact\n"
		"                   sizes, from the app's parameters; no run\n"
		"  --handoff        instead of the variants: 2 lcores, cuckoo, "
		"software flow\n"
		"                   affinity (the app's handoff rings); each "
		"lane's flows have\n"
		"                   a share owned by the other worker; rows: "
		"no handoff, then\n"
		"                   each share (needs -l with 2 lcores)\n"
		"  --shares LIST    --handoff's foreign shares, 0 to 1 "
		"(default 0,0.5,1)\n"
		"  --slice-ms MS    --handoff's turns, in ms (default 10); "
		"the rates are\n"
		"                   those of the turns in which no lane was "
		"descheduled\n",
		prog);
}

int
parse_options(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "flows", 1, NULL, 'f' }, { "dist", 1, NULL, 'd' },
		{ "zipf-s", 1, NULL, 'z' }, { "churn", 1, NULL, 'c' },
		{ "seconds", 1, NULL, 's' }, { "fp-bits", 1, NULL, 'b' },
		{ "age-bits", 1, NULL, 'a' }, { "lcores", 1, NULL, 'l' },
		{ "exact-size", 0, NULL, 'e' }, { "sweep-buckets", 1, NULL, 'w' },
		{ "variants", 1, NULL, 'v' }, { "csv", 1, NULL, 'o' },
		{ "quick", 0, NULL, 'q' }, { "help", 0, NULL, 'h' },
		{ "handoff", 0, NULL, 'H' }, { "shares", 1, NULL, 'S' },
		{ "slice-ms", 1, NULL, 'm' }, { "firewall", 0, NULL, 'F' },
		{ "mirror-first", 1, NULL, 'M' },
		{ "new-share", 1, NULL, 'N' }, { "top-sources", 1, NULL, 'T' },
		{ "event-ring", 1, NULL, 'R' }, { "ev-dir", 1, NULL, 'D' },
		{ "rounds", 1, NULL, 'r' }, { "table-layout", 1, NULL, 'L' },
		{ "ipv6", 0, NULL, '6' },
		{ "icmp-errors", 1, NULL, 'I' }, { "frags", 1, NULL, 'G' },
		{ "sizes", 0, NULL, 'Z' },
		{ NULL, 0, NULL, 0 },
	};
	int c, li = 0;

	opt.lcores[0] = 1;
	opt.lcores[1] = 2;
	opt.nb_lcore_counts = rte_lcore_count() >= 2 ? 2 : 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longs, &li)) != -1) {
		char *end = NULL, *tok, *save = NULL;

		switch (c) {
		case 'f':
			opt.nb_flows = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL &&
					opt.nb_flows < 8;
					tok = strtok_r(NULL, ",", &save)) {
				opt.flows[opt.nb_flows] = strtoull(tok, &end, 0);
				if (*end != '\0' || opt.flows[opt.nb_flows] <
						2 || opt.flows[opt.nb_flows] >
						(UINT64_C(1) << 29))
					goto bad;
				opt.nb_flows++;
			}
			if (opt.nb_flows == 0)
				goto bad;
			break;
		case 'd':
			opt.zipf[0] = strcmp(optarg, "zipf") != 0;
			opt.zipf[1] = strcmp(optarg, "uniform") != 0;
			if (strcmp(optarg, "zipf") && strcmp(optarg, "uniform") &&
					strcmp(optarg, "both"))
				goto bad;
			break;
		case 'z':
			opt.zipf_s = strtod(optarg, &end);
			if (*end != '\0' || !(opt.zipf_s > 0 && opt.zipf_s < 4))
				goto bad;
			break;
		case 'I':
		case 'G': {
			double v = strtod(optarg, &end);

			if (*end != '\0' || !(v >= 0 && v <= 0.5))
				goto bad;
			if (c == 'I') {
				opt.icmp_errors = v;
				opt.icmp_err_below = (uint64_t)(v * 0x1p64);
			} else {
				opt.frags = v;
				opt.frag_below = (uint64_t)(v * 0x1p64);
			}
			break;
		}
		case 'c':
			opt.churn = strtod(optarg, &end);
			if (*end != '\0' || !(opt.churn >= 0 && opt.churn <= 0.5))
				goto bad;
			break;
		case 's':
			opt.seconds = strtod(optarg, &end);
			if (*end != '\0' || !(opt.seconds >= 0.05 &&
					opt.seconds <= 600))
				goto bad;
			break;
		case 'b':
			opt.fp_bits = (unsigned int)strtoul(optarg, &end, 0);
			if (*end != '\0' || opt.fp_bits < 4 || opt.fp_bits > 32)
				goto bad;
			break;
		case 'a':
			opt.age_bits = (unsigned int)strtoul(optarg, &end, 0);
			if (*end != '\0' || (opt.age_bits != 16 &&
					opt.age_bits != 32))
				goto bad;
			break;
		case 'e':
			opt.exact_size = true;
			break;
		case '6':
			opt.ipv6 = true;
			break;
		case 'w':
			opt.sweep_buckets = (unsigned int)strtoul(optarg, &end,
				0);
			if (*end != '\0' || opt.sweep_buckets < 1 ||
					opt.sweep_buckets > 65536)
				goto bad;
			break;
		case 'l':
			if (strcmp(optarg, "1") == 0) {
				opt.nb_lcore_counts = 1;
			} else if (strcmp(optarg, "2") == 0) {
				opt.lcores[0] = 2;
				opt.nb_lcore_counts = 1;
			} else if (strcmp(optarg, "both") != 0) {
				goto bad;
			}
			if (rte_lcore_count() < opt.lcores[
					opt.nb_lcore_counts - 1]) {
				fprintf(stderr, "bench_pipeline: --lcores %s "
					"needs the EAL to have 2 (-l 0,1)\n",
					optarg);
				return -1;
			}
			break;
		case 'v':
			memset(opt.variant, 0, sizeof(opt.variant));
			for (tok = strtok_r(optarg, ",", &save); tok != NULL;
					tok = strtok_r(NULL, ",", &save)) {
				int k;

				for (k = 0; k < VARIANTS; k++)
					if (strcmp(tok, variant_names[k]) == 0)
						opt.variant[k] = true;
				for (k = 0; k < VARIANTS; k++)
					if (strcmp(tok, variant_names[k]) == 0)
						break;
				if (k == VARIANTS)
					goto bad;
			}
			break;
		case 'o':
			opt.csv = optarg;
			break;
		case 'q':
			opt.flows[0] = 1000;
			opt.flows[1] = 100000;
			opt.nb_flows = 2;
			opt.seconds = 0.3;
			break;
		case 'H':
			opt.handoff = true;
			break;
		case 'Z':
			opt.sizes = true;
			break;
		case 'F':
			memset(opt.variant, 0, sizeof(opt.variant));
			for (int v = FORWARD; v < VARIANTS; v++)
				opt.variant[v] = true;
			break;
		case 'M':
			opt.mirror_first = (unsigned int)strtoul(optarg, &end,
				0);
			if (*end != '\0' || opt.mirror_first < 1 ||
					opt.mirror_first > 254)
				goto bad;
			break;
		case 'm':
			opt.slice_ms = strtod(optarg, &end);
			if (*end != '\0' || !(opt.slice_ms >= 1 &&
					opt.slice_ms <= 10000))
				goto bad;
			break;
		case 'S':
			opt.nb_shares = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL;
					tok = strtok_r(NULL, ",", &save)) {
				double v = strtod(tok, &end);

				if (*end != '\0' || !(v >= 0 && v <= 1) ||
						opt.nb_shares == SLOTS - 1)
					goto bad;
				opt.shares[opt.nb_shares++] = v;
			}
			if (opt.nb_shares == 0)
				goto bad;
			break;
		case 'N':
			opt.nb_new_shares = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL;
					tok = strtok_r(NULL, ",", &save)) {
				double v = strtod(tok, &end);

				if (*end != '\0' || !(v >= 0 && v <= 0.2) ||
						opt.nb_new_shares ==
						RTE_DIM(opt.new_share))
					goto bad;
				opt.new_share[opt.nb_new_shares++] = v;
			}
			if (opt.nb_new_shares == 0)
				goto bad;
			break;
		case 'T':
			opt.top_sources = strtoull(optarg, &end, 0);
			if (*end != '\0' || opt.top_sources < 1 ||
					opt.top_sources > (1u << 24))
				goto bad;
			break;
		case 'R':
			opt.event_ring = strtoull(optarg, &end, 0);
			if (*end != '\0' || opt.event_ring < 64 ||
					opt.event_ring > (1u << 24))
				goto bad;
			break;
		case 'D':
			opt.ev_dir = optarg;
			break;
		case 'L':
			if (strcmp(optarg, "auto") == 0)
				opt.table_layout = APP_LAYOUT_AUTO;
			else if (strcmp(optarg, "plain") == 0)
				opt.table_layout = APP_LAYOUT_PLAIN;
			else if (strcmp(optarg, "interleaved") == 0)
				opt.table_layout = APP_LAYOUT_INTERLEAVED;
			else
				goto bad;
			break;
		case 'r':
			opt.rounds = (unsigned int)strtoul(optarg, &end, 0);
			if (*end != '\0' || opt.rounds < 1 || opt.rounds > 1000)
				goto bad;
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "bench_pipeline: --%s %s: not accepted (see "
			"--help)\n", longs[li].name, optarg);
		return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "bench_pipeline: stray argument %s\n",
			argv[optind]);
		return -1;
	}
	if (opt.ipv6 && (opt.handoff || opt.variant[FORWARD] ||
			opt.variant[FIREWALL] || opt.variant[FW_MIRROR])) {
		fprintf(stderr, "bench_pipeline: --ipv6 is for the monitor "
			"variants, not --handoff nor forward mode\n");
		return -1;
	}
	if (opt.handoff && rte_lcore_count() < MAX_LCORES) {
		fprintf(stderr, "bench_pipeline: --handoff needs the EAL to "
			"have 2 lcores (-l 0,1)\n");
		return -1;
	}
	for (int v = TOP; v <= REC_IPFIX; v++)
		drain_mode |= opt.variant[v];
	for (int v = REC_RING; v <= REC_IPFIX; v++)
		if (opt.variant[v] && opt.age_bits != 32) {
			fprintf(stderr, "bench_pipeline: %s: flow records need "
				"--age-bits 32\n", variant_names[v]);
			return -1;
		}
	if (drain_mode) {
		if (rte_lcore_count() < 2 || opt.handoff) {
			fprintf(stderr, "bench_pipeline: the events variants "
				"need -l 0,1 (the main lcore drains, one lane "
				"on lcore 1), without --handoff\n");
			return -1;
		}
		opt.lcores[0] = 1;
		opt.nb_lcore_counts = 1;
		if (opt.rounds > MAX_TURNS) {
			fprintf(stderr, "bench_pipeline: events mode: at most "
				"%d rounds\n", MAX_TURNS);
			return -1;
		}
	}
	if (opt.nb_new_shares == 0)
		opt.new_share[opt.nb_new_shares++] = -1;    /* --churn's */
	handoff_cases_add();
	return 0;
}

