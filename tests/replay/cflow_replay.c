/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * cflow_replay: feed a capture through the flow-tracking core on packet
 * time, as the application does with --clock pkt, and print the final
 * counters as JSON (after a full sweep at the last packet's time). The
 * frames are parsed by the capture's link type (cflow_link_type_from_dlt()
 * of libpcap's pcap_datalink()); one the parser does not take is refused.
 *
 * usage: cflow_replay [--fp-bits N] [--seed N] [--capacity N]
 *                     [--decap LIST] [--records] FILE.pcap
 *
 * --decap takes the application's list (vxlan, geneve, gre, gtpu, all,
 * comma-separated); a capture's truth names it in its "args".
 * --records turns the tracker's flow records on, ends the run with a
 * record of every flow left (cflow_tracker_end_records()) and adds
 * "records", "record_packets" and "record_bytes": their count and sums.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "cflow.h"

static int
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
		uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "cflow_replay: %s %s: want %" PRIu64 "..%"
			PRIu64 "\n", opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* --decap LIST: tunnel names, comma-separated, into a cflow_decap mask. */
static int
parse_decap(const char *s, unsigned int *mask)
{
	static const char *const names[] = { "vxlan", "geneve", "gre",
		"gtpu" };
	const char *p = s;

	*mask = 0;
	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		unsigned int k;

		if (n == 3 && strncmp(p, "all", 3) == 0) {
			*mask |= CFLOW_DECAP_ALL;
		} else {
			for (k = 0; k < 4; k++)
				if (strlen(names[k]) == n &&
						strncmp(p, names[k], n) == 0)
					break;
			if (k == 4) {
				fprintf(stderr, "cflow_replay: --decap %s: want "
					"vxlan, geneve, gre, gtpu or all\n", s);
				return -1;
			}
			*mask |= 1u << k;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* --records: what the tracker's records sum to. */
struct record_sums {
	uint64_t records, packets, bytes;
};

static void
on_record(const struct cflow_record *r, void *arg)
{
	struct record_sums *s = arg;

	if (r->reason == CFLOW_RECORD_NEW)
		return;
	s->records++;
	s->packets += r->packets;
	s->bytes += r->bytes;
}

static void
print_counters(const struct cflow_counters *c, const struct record_sums *r)
{
	printf("{\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64
		", \"non_ip\": %" PRIu64 ", \"fragments\": %" PRIu64
		", \"flows_new\": %" PRIu64 ", \"flows_seen\": %" PRIu64
		", \"flows_closed\": %" PRIu64 ", \"flows_expired\": %" PRIu64
		", \"flows_evicted\": %" PRIu64 ", \"insert_failed\": %" PRIu64
		", \"orphan_close\": %" PRIu64 ", \"reused\": %" PRIu64
		", \"hash_fallback\": %" PRIu64 ", \"active\": %" PRIu64
		", \"related\": %" PRIu64 ", \"unrelated\": %" PRIu64
		", \"fragments_seen\": %" PRIu64
		", \"malformed\": {", c->packets, c->bytes, c->non_ip,
		c->fragments, c->flows_new, c->flows_seen, c->flows_closed,
		c->flows_expired, c->flows_evicted, c->insert_failed,
		c->orphan_close, c->reused, c->hash_fallback, c->active,
		c->related, c->unrelated, c->fragments_seen);
	for (int st = CFLOW_PARSE_MALFORMED_FIRST;
			st <= CFLOW_PARSE_MALFORMED_LAST; st++) {
		printf("%s\"%s\": %" PRIu64, st == CFLOW_PARSE_MALFORMED_FIRST ?
			"" : ", ", cflow_parse_status_name(st),
			c->malformed[st]);
	}
	printf("}, \"malformed_total\": %" PRIu64, cflow_malformed_total(c));
	if (r != NULL)
		printf(", \"records\": %" PRIu64 ", \"record_packets\": %"
			PRIu64 ", \"record_bytes\": %" PRIu64, r->records,
			r->packets, r->bytes);
	printf("}\n");
}

/* Parse a frame as the application does: a later fragment takes its
 * first fragment's parse (cflow_frag.h). */
static void
replay_parse(struct cflow_frag *frag, const struct cflow_input *in,
		const struct cflow_parse_params *pp, struct cflow_packet *pkt,
		enum cflow_parse_status *st)
{
	struct cflow_frag_id fi;
	unsigned int nrel;

	*st = cflow_parse(in->data, in->len, pp, pkt);
	if (*st != CFLOW_PARSE_FRAGMENT && !pkt->frag_first)
		return;
	*st = cflow_parse_frag(in->data, in->len, pp, pkt, &fi);
	if (fi.family != 0)
		(void)cflow_frag_packet(frag, &fi, pkt, st, NULL, in->time_ns,
			NULL, &nrel);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fp-bits", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 's' },
		{ "capacity", required_argument, NULL, 'c' },
		{ "decap", required_argument, NULL, 'd' },
		{ "records", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t fp_bits = 12, seed = 1, capacity = 65536, last = 0;
	char err[PCAP_ERRBUF_SIZE];
	struct cflow_tracker_params p;
	struct cflow_input in[CF_BULK_MAX];
	struct cflow_packet pkts[CF_BULK_MAX];
	enum cflow_parse_status status[CF_BULK_MAX];
	uint8_t *copies[CF_BULK_MAX];
	/* later fragments follow their first one, in order (nothing held:
	 * the captures have none before their first) */
	struct cflow_frag_params fp = { .no_hold = true, .seed = 1 };
	struct cflow_frag *frag;
	struct cflow_tracker *t;
	struct cflow_counters c;
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned int n = 0;
	pcap_t *pc;
	int opt, rc, dlt, link;
	unsigned int decap = 0;
	struct record_sums sums = { 0, 0, 0 };
	bool records = false;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (parse_u64("--fp-bits", optarg, 4, 32, &fp_bits))
				return 2;
			break;
		case 's':
			if (parse_u64("--seed", optarg, 0, UINT64_MAX, &seed))
				return 2;
			break;
		case 'c':
			if (parse_u64("--capacity", optarg, 1, UINT64_C(1) << 31,
					&capacity))
				return 2;
			break;
		case 'd':
			if (parse_decap(optarg, &decap))
				return 2;
			break;
		case 'r':
			records = true;
			break;
		default:
			fprintf(stderr, "usage: %s [--fp-bits N] [--seed N] "
				"[--capacity N] [--decap LIST] [--records] "
				"FILE.pcap\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "cflow_replay: one capture file expected\n");
		return 2;
	}
	pc = pcap_open_offline_with_tstamp_precision(argv[optind],
			PCAP_TSTAMP_PRECISION_NANO, err);
	if (pc == NULL) {
		fprintf(stderr, "cflow_replay: %s\n", err);
		return 1;
	}
	dlt = pcap_datalink(pc);
	link = cflow_link_type_from_dlt(dlt);
	if (link < 0) {
		const char *name = pcap_datalink_val_to_name(dlt);

		fprintf(stderr, "cflow_replay: %s: link type %s (%d) is not "
			"supported\n", argv[optind], name ? name : "?", dlt);
		pcap_close(pc);
		return 1;
	}
	cflow_tracker_params_init(&p, capacity);
	p.fp_bits = (unsigned int)fp_bits;
	p.seed = seed;
	p.fixed_seed = true; /* --seed 0 too */
	p.parse.link_type = (enum cflow_link_type)link;
	p.parse.decap = decap;
	p.records = records;
	p.record_fn = on_record;
	p.record_arg = &sums;
	t = cflow_tracker_create(&p);
	frag = cflow_frag_create(&fp);
	if (t == NULL || frag == NULL) {
		fprintf(stderr, "cflow_replay: tracker: %s\n", strerror(errno));
		pcap_close(pc);
		return 1;
	}
	for (;;) {
		rc = pcap_next_ex(pc, &h, &data);
		if (rc == 1) {
			/* libpcap reuses its buffer: keep each frame. */
			copies[n] = malloc(h->caplen ? h->caplen : 1);
			if (copies[n] == NULL)
				abort();
			memcpy(copies[n], data, h->caplen);
			last = (uint64_t)h->ts.tv_sec * 1000000000u +
				(uint64_t)h->ts.tv_usec;
			in[n] = (struct cflow_input){ .data = copies[n],
				.len = h->caplen, .wire_len = h->len,
				.time_ns = last };
			replay_parse(frag, &in[n], &p.parse, &pkts[n],
				&status[n]);
			n++;
		}
		if (n == CF_BULK_MAX || (rc != 1 && n > 0)) {
			cflow_track_parsed(t, in, pkts, status, n, NULL, NULL);
			cflow_sweep(t, last);
			for (unsigned int k = 0; k < n; k++)
				free(copies[k]);
			n = 0;
		}
		if (rc != 1)
			break;
	}
	if (rc == -1) {
		fprintf(stderr, "cflow_replay: %s\n", pcap_geterr(pc));
		pcap_close(pc);
		cflow_tracker_free(t);
		return 1;
	}
	cflow_sweep_all(t, last);
	cflow_counters_get(t, &c);
	(void)cflow_tracker_end_records(t);
	print_counters(&c, records ? &sums : NULL);
	pcap_close(pc);
	cflow_tracker_free(t);
	cflow_frag_free(frag);
	return 0;
}
