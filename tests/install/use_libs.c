/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A program of a user of the installed libraries: built by
 * tests/install/test_install.py against the headers and pkg-config files
 * of an install into a DESTDIR, and nothing of this tree. It prints what
 * the three libraries answer; the test compares it line by line.
 *
 *   use_libs LIST    LIST: a text blocklist that lists 10.0.0.2
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuckooflow/blocklist.h>
#include <cuckooflow/cflow.h>
#include <cuckooflow/cuckoo_filter.h>

#define NB_KEYS 1000

/* lib/cuckoo: add keys, find them, delete half. */
static int
use_cuckoo(void)
{
	struct cf_params p = { .capacity = NB_KEYS, .fp_bits = 16 };
	struct cf_filter *f = cf_create(&p);
	unsigned int added = 0, found = 0, left = 0;
	char key[32];

	if (f == NULL) {
		perror("cf_create");
		return -1;
	}
	for (unsigned int i = 0; i < NB_KEYS; i++) {
		snprintf(key, sizeof(key), "key-%u", i);
		added += cf_add(f, key, strlen(key)) == 0;
	}
	for (unsigned int i = 0; i < NB_KEYS; i++) {
		snprintf(key, sizeof(key), "key-%u", i);
		found += cf_lookup(f, key, strlen(key)) == 1;
	}
	for (unsigned int i = 0; i < NB_KEYS; i += 2) {
		snprintf(key, sizeof(key), "key-%u", i);
		cf_delete(f, key, strlen(key));
	}
	for (unsigned int i = 1; i < NB_KEYS; i += 2) {
		snprintf(key, sizeof(key), "key-%u", i);
		left += cf_lookup(f, key, strlen(key)) == 1;
	}
	printf("cuckoo: added %u, found %u, odd keys left %u\n", added, found,
		left);
	cf_free(f);
	return 0;
}

/* An Ethernet, IPv4, TCP frame from 10.0.0.1:1234 to 10.0.0.2:80. */
static void
tcp_frame(uint8_t *b, uint8_t flags)
{
	static const uint8_t hdr[54] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0,
		10, 0, 0, 1, 10, 0, 0, 2,
		0x04, 0xd2, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0,
		0x50, 0, 0xff, 0xff, 0, 0, 0, 0,
	};

	memcpy(b, hdr, sizeof(hdr));
	b[47] = flags;
}

/* lib/cflow: parse frames, track a TCP flow opened and closed. */
static int
use_cflow(const struct cflow_packet *syn_out)
{
	static const uint8_t flags[] = { 0x02, 0x12, 0x10, 0x11 };
	uint8_t frames[4][54];
	struct cflow_input in[4];
	struct cflow_tracker_params p = { .capacity = 1024 };
	struct cflow_counters c;
	struct cflow_tracker *t;

	for (unsigned int i = 0; i < 4; i++) {
		tcp_frame(frames[i], flags[i]);
		in[i] = (struct cflow_input){ .data = frames[i], .len = 54,
			.wire_len = 60, .time_ns = 1000000000ull * (i + 1) };
	}
	t = cflow_tracker_create(&p);
	if (t == NULL) {
		perror("cflow_tracker_create");
		return -1;
	}
	cflow_track_burst(t, in, 4, NULL);
	cflow_counters_get(t, &c);
	printf("cflow: %s, proto %u, ports %u-%u; packets %llu, new %llu, "
		"closed %llu\n",
		cflow_parse_status_name(CFLOW_PARSE_OK), syn_out->key.proto,
		syn_out->key.port_lo, syn_out->key.port_hi,
		(unsigned long long)c.packets,
		(unsigned long long)c.flows_new,
		(unsigned long long)c.flows_closed);
	cflow_tracker_free(t);
	return 0;
}

/* lib/blocklist: the frame's destination is listed. */
static int
use_blocklist(const char *list, const struct cflow_packet *pkt)
{
	enum cbl_kind other;
	char err[256];
	struct cbl *bl = cbl_read(list, 0, err, sizeof(err));

	if (bl == NULL) {
		fprintf(stderr, "cbl_read: %s\n", err);
		return -1;
	}
	if (cbl_match_text(bl, "203.0.113.9", &other, err, sizeof(err)) != 0) {
		fprintf(stderr, "cbl_match_text: %s\n", err);
		cbl_free(bl);
		return -1;
	}
	printf("blocklist: packet %s, 203.0.113.9 %s\n",
		cbl_kind_name(cbl_match(bl, pkt)),
		other == CBL_NONE ? "not listed" : cbl_kind_name(other));
	cbl_free(bl);
	return 0;
}

int
main(int argc, char **argv)
{
	struct cflow_packet pkt;
	uint8_t syn[54];

	if (argc != 2) {
		fprintf(stderr, "usage: use_libs LIST\n");
		return 2;
	}
	tcp_frame(syn, 0x02);
	if (cflow_parse(syn, sizeof(syn), NULL, &pkt) != CFLOW_PARSE_OK) {
		fprintf(stderr, "cflow_parse: not a TCP packet\n");
		return 1;
	}
	if (use_cuckoo() != 0 || use_cflow(&pkt) != 0 ||
			use_blocklist(argv[1], &pkt) != 0)
		return 1;
	return 0;
}
