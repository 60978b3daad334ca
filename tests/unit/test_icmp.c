/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * ICMP and fragments in the tracker (issue 26): echo flows by
 * identifier, ICMP errors related to the flow they quote (CFLOW_RELATED)
 * or not (CFLOW_UNTRACKED_UNRELATED), in the direction the error travels
 * back, never opening, refreshing or closing a flow; later fragments of a
 * tracked flow's datagram (CFLOW_FRAGMENT_SEEN). Frames are written byte
 * by byte (packets.h); what each must come to is this file's.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocklist.h"
#include "cflow.h"
#include "cflow_test.h"
#include "packets.h"
#include "test.h"

#define IN 0
#define OUT (CFLOW_IN_OUTSIDE | CFLOW_IN_NO_CREATE)

/* A sided tracker (a firewall's), 32-bit fingerprints, seed 42. */
static struct cflow_tracker *
fw_tracker(bool sided)
{
	struct cflow_tracker_params p;

	cflow_tracker_params_init(&p, 4096);
	p.fp_bits = 32;
	p.sided = sided;
	return tracker_with(&p);
}

/* Track one frame (@p len bytes) at @p at with input flags @p flags, as
 * the application does (parse, then cflow_track_parsed()); its verdict.
 * @p kind, if not CFLOW_KIND_FLOW, overrides the parse's (a later
 * fragment given its first fragment's parse). */
static enum cflow_verdict
track_frame(struct cflow_tracker *t, const uint8_t *f, uint32_t len,
		uint64_t at, uint8_t flags, uint8_t kind)
{
	struct cflow_input in = { .data = f, .len = len, .wire_len = len,
		.time_ns = at, .flags = flags };
	struct cflow_packet p;
	enum cflow_parse_status st = cflow_parse(f, len, NULL, &p);
	enum cflow_verdict v;
	uint8_t count;

	if (kind != CFLOW_KIND_FLOW) {
		p.kind = kind;
		p.tcp_flags = 0;
	}
	cflow_track_parsed(t, &in, &p, &st, 1, &v, &count);
	return v;
}

/* A UDP or TCP packet from N @p src:@p sport to N @p dst:@p dport, or an
 * echo (identifier @p sport) for ICMP, into @p b with an Ethernet header;
 * its length. */
static uint32_t
plain_frame(uint8_t *b, int family, uint8_t src, uint8_t dst, uint8_t proto,
		uint16_t sport, uint16_t dport, uint8_t tcp_flags)
{
	uint32_t n = pkt_eth(b, family == 4 ? 0x0800 : 0x86dd);

	n += icmp_quotable(b + n, family, src, dst, proto, sport, dport);
	if (proto == 6)
		b[n - 20 + 13] = tcp_flags;
	/* icmp_quotable() claims 100 bytes more of payload: whole frames
	 * here */
	if (family == 4)
		w16(b + 14 + 2, (uint16_t)(n - 14));
	else
		w16(b + 14 + 4, (uint16_t)(n - 14 - 40));
	return n;
}

/* An error of @p type from N @p from to N @p to quoting the packet
 * plain_frame() makes of the other arguments. */
static uint32_t
error_of(uint8_t *b, int family, uint8_t from, uint8_t to, uint8_t type,
		uint8_t code, uint8_t src, uint8_t dst, uint8_t proto,
		uint16_t sport, uint16_t dport)
{
	uint8_t q[128];
	uint32_t ql = icmp_quotable(q, family, src, dst, proto, sport, dport);

	if (proto == 6)
		q[ql - 20 + 13] = CFLOW_TCP_RST; /* never closes anything */
	return icmp_error_frame(b, family, from, to, type, code, q, ql);
}

/*
 * The table, IPv4 and IPv6, on a sided tracker: 10.0.0.1 (inside)
 * pings .200 (id 7) and sends UDP to .201:53. From the outside: the echo
 * reply passes; an echo request from .200, a reply of id 8 do not; port
 * unreachable quoting the UDP flow and frag-needed from a router (.9)
 * quoting it are related; port unreachable quoting an untracked flow is
 * not. Errors quoting a TCP flow and the echo flow too; none opens,
 * refreshes or closes a flow.
 */
static int
test_icmp_table(void)
{
	for (int family = 4; family <= 6; family += 2) {
		struct cflow_tracker *t = fw_tracker(true);
		uint8_t unreach = family == 4 ? 3 : 1, port = family == 4 ? 3 :
			4, big = family == 4 ? 3 : 2, big_code = family == 4 ?
			4 : 0, ttl = family == 4 ? 11 : 3;
		uint8_t echo = icmp_proto(family), b[512];
		uint64_t at = 100 * S;
		struct cflow_counters c;
		struct cflow_flow_info info;
		struct cflow_key k;
		uint32_t n;

		TEST_ASSERT(t != NULL, "tracker");
		n = icmp_echo_frame(b, family, 1, 200, false, 7);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, IN, 0), CFLOW_NEW,
			"IPv%d ping from inside", family);
		n = plain_frame(b, family, 1, 201, 17, 40000, 53, 0);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, IN, 0), CFLOW_NEW,
			"UDP from inside");
		n = plain_frame(b, family, 1, 202, 6, 40001, 443,
			CFLOW_TCP_SYN);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, IN, 0), CFLOW_NEW,
			"TCP SYN from inside");
		at += S;
		n = icmp_echo_frame(b, family, 200, 1, true, 7);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, OUT, 0), CFLOW_SEEN,
			"IPv%d: echo reply id 7", family);
		n = icmp_echo_frame(b, family, 200, 1, false, 7);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, OUT, 0),
			CFLOW_UNTRACKED_UNSOLICITED, "IPv%d: echo request "
			"from outside", family);
		n = icmp_echo_frame(b, family, 200, 1, true, 8);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, OUT, 0),
			CFLOW_UNTRACKED_UNSOLICITED, "IPv%d: echo reply id 8",
			family);
		n = error_of(b, family, 201, 1, unreach, port, 1, 201, 17,
			40000, 53);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, OUT, 0), CFLOW_RELATED,
			"IPv%d: port unreachable, the UDP flow", family);
		n = error_of(b, family, 9, 1, big, big_code, 1, 201, 17, 40000,
			53);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, OUT, 0), CFLOW_RELATED,
			"IPv%d: frag-needed / too big from a router", family);
		n = error_of(b, family, 9, 1, big, big_code, 1, 202, 6, 40001,
			443);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, OUT, 0), CFLOW_RELATED,
			"IPv%d: too big, the TCP flow (quoting an RST)",
			family);
		n = error_of(b, family, 9, 1, ttl, 0, 1, 200, echo, 7, 0);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, OUT, 0), CFLOW_RELATED,
			"IPv%d: time exceeded, the echo flow", family);
		n = error_of(b, family, 201, 1, unreach, port, 1, 201, 17,
			40000, 54);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, OUT, 0),
			CFLOW_UNTRACKED_UNRELATED, "IPv%d: port unreachable, "
			"an untracked flow", family);
		/* The error quoting the outside's packet to the inside (the
		 * reply direction), sent to the outside host .201 but on the
		 * outside port: away from the flow's inside endpoint. */
		n = error_of(b, family, 1, 201, unreach, port, 201, 1, 17, 53,
			40000);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, OUT, 0),
			CFLOW_UNTRACKED_UNRELATED, "IPv%d: an error going "
			"away from the inside endpoint", family);
		/* From the inside, the same error is the inside host's own
		 * (it refuses a reply): related. */
		TEST_ASSERT_EQ(track_frame(t, b, n, at, IN, 0), CFLOW_RELATED,
			"IPv%d: the inside's error about a reply", family);
		/* The TCP flow is open still (the quoted RST closed nothing),
		 * and no error refreshed a flow: idle since 100 s. */
		icmp_want_key(&k, family, 1, 202, 40001, 443, 6);
		TEST_ASSERT(cflow_tracker_lookup(t, &k, &info) == 1 &&
			!info.closing && info.idle_ns > S / 2,
			"IPv%d: TCP flow open, idle %lu ns", family,
			(unsigned long)info.idle_ns);
		cflow_counters_get(t, &c);
		TEST_ASSERT(c.flows_new == 3 && c.related == 5 &&
			c.unrelated == 2 && c.unsolicited == 2 &&
			c.flows_seen == 1 && c.active == 3 &&
			c.flows_closed == 0, "IPv%d: new %lu related %lu "
			"unrelated %lu unsolicited %lu", family,
			(unsigned long)c.flows_new, (unsigned long)c.related,
			(unsigned long)c.unrelated,
			(unsigned long)c.unsolicited);
		/* An error about no flow opens none, from either side. */
		n = error_of(b, family, 1, 203, unreach, port, 203, 1, 17, 5,
			6);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, IN, 0),
			CFLOW_UNTRACKED_UNRELATED, "IPv%d: inside, no flow",
			family);
		TEST_ASSERT_EQ(track_frame(t, b, n, at, IN, 0),
			CFLOW_UNTRACKED_UNRELATED, "IPv%d: again: none opened",
			family);
		/* Idle past the UDP timeout (60 s): no longer related. */
		n = error_of(b, family, 201, 1, unreach, port, 1, 201, 17,
			40000, 53);
		TEST_ASSERT_EQ(track_frame(t, b, n, at + 62 * S, OUT, 0),
			CFLOW_UNTRACKED_UNRELATED, "IPv%d: the UDP flow "
			"expired", family);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
	}
	return 0;
}

/* Without sides (monitor mode, forward mode without roles): errors are
 * related in either direction, and counted the same; an error that can
 * be about no flow (CFLOW_KIND_ICMP_UNRELATED) is never looked up. */
static int
test_icmp_monitor(void)
{
	struct cflow_tracker *t = fw_tracker(false);
	struct cflow_counters c;
	uint8_t b[512], q[128];
	uint32_t n, ql;

	TEST_ASSERT(t != NULL, "tracker");
	n = plain_frame(b, 4, 1, 201, 17, 40000, 53, 0);
	TEST_ASSERT_EQ(track_frame(t, b, n, S, 0, 0), CFLOW_NEW, "UDP");
	n = error_of(b, 4, 201, 1, 3, 3, 1, 201, 17, 40000, 53);
	TEST_ASSERT_EQ(track_frame(t, b, n, S, 0, 0), CFLOW_RELATED, "back");
	n = error_of(b, 4, 1, 201, 3, 3, 201, 1, 17, 53, 40000);
	TEST_ASSERT_EQ(track_frame(t, b, n, S, 0, 0), CFLOW_RELATED,
		"the other way");
	/* to another host than the quoted source: unrelated, even though
	 * its quoted flow is tracked */
	ql = icmp_quotable(q, 4, 1, 201, 17, 40000, 53);
	n = icmp_error_frame(b, 4, 201, 2, 3, 3, q, ql);
	TEST_ASSERT_EQ(track_frame(t, b, n, S, 0, 0),
		CFLOW_UNTRACKED_UNRELATED, "to another host");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.related == 2 && c.unrelated == 1 && c.flows_new == 1 &&
		c.flows_seen == 0, "related %lu unrelated %lu",
		(unsigned long)c.related, (unsigned long)c.unrelated);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/*
 * Later fragments (CFLOW_KIND_FRAGMENT, as struct cflow_frag gives them
 * their first fragment's parse): with their flow tracked, in a direction
 * its packets may take, CFLOW_FRAGMENT_SEEN (counted fragments_seen, the
 * flow untouched); else CFLOW_UNTRACKED_FRAGMENT (fragments).
 */
static int
test_icmp_fragments_seen(void)
{
	struct cflow_tracker *t = fw_tracker(true);
	struct cflow_counters c;
	uint8_t b[512];
	uint32_t n;

	TEST_ASSERT(t != NULL, "tracker");
	n = plain_frame(b, 4, 1, 201, 17, 40000, 53, 0);
	TEST_ASSERT_EQ(track_frame(t, b, n, S, IN, 0), CFLOW_NEW, "UDP");
	TEST_ASSERT_EQ(track_frame(t, b, n, S, IN, CFLOW_KIND_FRAGMENT),
		CFLOW_FRAGMENT_SEEN, "inside's later fragment");
	TEST_ASSERT_EQ(track_frame(t, b, n, S, OUT, CFLOW_KIND_FRAGMENT),
		CFLOW_UNTRACKED_FRAGMENT, "the inside's direction, from "
		"outside");
	n = plain_frame(b, 4, 201, 1, 17, 53, 40000, 0);
	TEST_ASSERT_EQ(track_frame(t, b, n, S, OUT, CFLOW_KIND_FRAGMENT),
		CFLOW_FRAGMENT_SEEN, "the reply's later fragment");
	n = plain_frame(b, 4, 202, 1, 17, 53, 40000, 0);
	TEST_ASSERT_EQ(track_frame(t, b, n, S, OUT, CFLOW_KIND_FRAGMENT),
		CFLOW_UNTRACKED_FRAGMENT, "of no flow");
	n = plain_frame(b, 4, 1, 202, 6, 40000, 80, CFLOW_TCP_FIN);
	TEST_ASSERT_EQ(track_frame(t, b, n, S, IN, CFLOW_KIND_FRAGMENT),
		CFLOW_UNTRACKED_FRAGMENT, "of no flow, inside: opens none");
	cflow_counters_get(t, &c);
	TEST_ASSERT(c.fragments_seen == 2 && c.fragments == 3 &&
		c.flows_new == 1 && c.flows_seen == 0 && c.active == 1,
		"fragments_seen %lu fragments %lu new %lu",
		(unsigned long)c.fragments_seen, (unsigned long)c.fragments,
		(unsigned long)c.flows_new);
	TEST_ASSERT_EQ(invariants(t), 0, "invariants");
	cflow_tracker_free(t);
	return 0;
}

/* ------------------------------------------------ the fragment follower */

/* A UDP datagram's fragment, IPv4 (identification @p id) or IPv6 (a
 * fragment header, @p id), from N @p src:40000 to N @p dst:53, at
 * @p offset (8-byte units), with more to come if @p more; the first one
 * carries the UDP header. Into @p b; its length. */
static uint32_t
frag_frame(uint8_t *b, int family, uint8_t src, uint8_t dst, uint32_t id,
		uint16_t offset, bool more)
{
	uint32_t n = pkt_eth(b, family == 4 ? 0x0800 : 0x86dd), ip = n;
	uint32_t plen = 64;

	if (family == 4) {
		n += icmp_ip_hdr(b + n, 4, src, dst, 17, plen,
			(uint16_t)((more ? 0x2000 : 0) | offset));
		w16(b + ip + 4, (uint16_t)id);
	} else {
		n += icmp_ip_hdr(b + n, 6, src, dst, 44, plen + 8, 0);
		memset(b + n, 0, 8);
		b[n] = 17;
		w16(b + n + 2, (uint16_t)(offset << 3 | (more ? 1 : 0)));
		w32(b + n + 4, id);
		n += 8;
	}
	memset(b + n, 0xab, plen);
	if (offset == 0) {
		w16(b + n, 40000);
		w16(b + n + 2, 53);
		w16(b + n + 4, 8 + 64);
	}
	return n + plen;
}

/* frag_frame()'s fragment made TCP's (its protocol; a first fragment's
 * header is for the caller to write). */
static void
frag_tcp(uint8_t *b, int family)
{
	b[14 + (family == 4 ? 9 : 40)] = 6;
}

/* One fragment through a follower as the application takes it; the
 * action, the parse in *p and *st. */
static enum cflow_frag_action
follow(struct cflow_frag *f, const uint8_t *b, uint32_t n, void *item,
		uint64_t at, struct cflow_packet *p, enum cflow_parse_status *st,
		void **rel, unsigned int *nrel)
{
	struct cflow_frag_id fi;

	*st = cflow_parse_frag(b, n, NULL, p, &fi);
	if (fi.family == 0)
		return (enum cflow_frag_action)-1;
	return cflow_frag_packet(f, &fi, p, st, item, at, rel, nrel);
}

/*
 * In order, a datagram's later fragments take its first fragment's parse
 * (and a tracker places them in its flow); out of order, they are held
 * and given back behind their first fragment, in the order they came; a
 * later fragment over the first's transport header is not followed; a
 * datagram is followed timeout_ns; a held fragment whose first never
 * comes is given back unfollowed then; the hold's bound; datagrams
 * evicted when their window is full. IPv4 and IPv6.
 */
static int
test_frag_follow(void)
{
	for (int family = 4; family <= 6; family += 2) {
		struct cflow_frag_params fp = { .datagrams = 8, .hold = 4,
			.timeout_ns = 30 * S, .seed = 7 };
		struct cflow_frag *f = cflow_frag_create(&fp);
		struct cflow_tracker *t = fw_tracker(true);
		struct cflow_packet p, first;
		enum cflow_parse_status st;
		struct cflow_frag_counters c;
		void *rel[4];
		unsigned int nrel;
		uint8_t b[256];
		int items[8];
		uint32_t n;

		TEST_ASSERT(f != NULL && t != NULL, "create");
		/* in order */
		n = frag_frame(b, family, 1, 200, 77, 0, true);
		TEST_ASSERT_EQ(follow(f, b, n, &items[0], S, &first, &st, rel,
			&nrel), CFLOW_FRAG_PASS, "IPv%d first", family);
		TEST_ASSERT(st == CFLOW_PARSE_OK && first.frag_first &&
			nrel == 0, "first: its own parse");
		TEST_ASSERT_EQ(track_frame(t, b, n, S, IN, 0), CFLOW_NEW,
			"the first fragment opens the flow");
		n = frag_frame(b, family, 1, 200, 77, 8, true);
		TEST_ASSERT_EQ(follow(f, b, n, &items[1], S, &p, &st, rel,
			&nrel), CFLOW_FRAG_FOLLOWED, "IPv%d middle", family);
		TEST_ASSERT(st == CFLOW_PARSE_OK && p.kind ==
			CFLOW_KIND_FRAGMENT && memcmp(&p.key, &first.key,
			sizeof(p.key)) == 0 && p.reversed == first.reversed,
			"middle: the first's key");
		{
			struct cflow_input in = { .data = b, .len = n,
				.wire_len = n, .time_ns = S, .flags = IN };
			enum cflow_verdict v;

			cflow_track_parsed(t, &in, &p, &st, 1, &v, NULL);
			TEST_ASSERT_EQ(v, CFLOW_FRAGMENT_SEEN, "tracked: seen");
		}
		/* the same datagram from another source: another one */
		n = frag_frame(b, family, 2, 200, 77, 8, false);
		TEST_ASSERT_EQ(follow(f, b, n, &items[2], S, &p, &st, rel,
			&nrel), CFLOW_FRAG_HELD, "IPv%d: another source is "
			"another datagram: held", family);
		/* an overlap of the UDP header (offset 0 < 8 bytes: offset 0
		 * is a first; an IPv4 offset of 0 is impossible for a later
		 * one, so a first fragment's duplicate of another flow) */
		n = frag_frame(b, family, 1, 200, 77, 0, true);
		w16(b + n - 64 + 2, 54);        /* another port */
		TEST_ASSERT_EQ(follow(f, b, n, &items[3], S, &p, &st, rel,
			&nrel), CFLOW_FRAG_PASS, "IPv%d: a first fragment "
			"again, another port", family);
		cflow_frag_counters_get(f, &c);
		TEST_ASSERT(c.overlaps == 1 && c.datagrams == 1, "counted "
			"an overlap, not remembered");
		/* out of order: two later fragments before their first */
		n = frag_frame(b, family, 1, 200, 78, 16, false);
		TEST_ASSERT_EQ(follow(f, b, n, &items[4], S, &p, &st, rel,
			&nrel), CFLOW_FRAG_HELD, "IPv%d: last first", family);
		n = frag_frame(b, family, 1, 200, 78, 8, true);
		TEST_ASSERT_EQ(follow(f, b, n, &items[5], S, &p, &st, rel,
			&nrel), CFLOW_FRAG_HELD, "then the middle");
		TEST_ASSERT_EQ(cflow_frag_held(f), 3u, "3 held");
		n = frag_frame(b, family, 1, 200, 78, 0, true);
		TEST_ASSERT_EQ(follow(f, b, n, &items[6], 2 * S, &p, &st, rel,
			&nrel), CFLOW_FRAG_PASS, "IPv%d: its first", family);
		TEST_ASSERT(nrel == 2 && rel[0] == &items[4] &&
			rel[1] == &items[5], "given back in their order: %u",
			nrel);
		n = frag_frame(b, family, 1, 200, 78, 16, false);
		TEST_ASSERT_EQ(follow(f, b, n, rel[0], 2 * S, &p, &st, rel,
			&nrel), CFLOW_FRAG_FOLLOWED, "parsed again: followed");
		/* the transport header overlapped: a 4-byte offset cannot be
		 * written (8-byte units): IPv6's UDP needs 8, a later
		 * fragment at 0 is a first; TCP needs 20: offset 1 and 2
		 * overlap (RFC 1858's tiny fragments) */
		n = frag_frame(b, family, 3, 200, 79, 0, true);
		frag_tcp(b, family);
		/* a TCP header at the start: 20 bytes */
		memset(b + n - 64, 0, 20);
		w16(b + n - 64, 40000);
		w16(b + n - 64 + 2, 80);
		b[n - 64 + 12] = 5 << 4;
		b[n - 64 + 13] = CFLOW_TCP_ACK;
		TEST_ASSERT_EQ(follow(f, b, n, &items[7], 3 * S, &p, &st, rel,
			&nrel), CFLOW_FRAG_PASS, "TCP first");
		TEST_ASSERT(st == CFLOW_PARSE_OK && p.key.proto == 6, "TCP");
		n = frag_frame(b, family, 3, 200, 79, 2, true);
		frag_tcp(b, family);
		TEST_ASSERT_EQ(follow(f, b, n, &items[7], 3 * S, &p, &st, rel,
			&nrel), CFLOW_FRAG_PASS, "IPv%d: offset 16 bytes into "
			"TCP's 20: not followed", family);
		TEST_ASSERT_EQ(st, CFLOW_PARSE_FRAGMENT, "left a fragment");
		n = frag_frame(b, family, 3, 200, 79, 3, true);
		frag_tcp(b, family);
		TEST_ASSERT_EQ(follow(f, b, n, &items[7], 3 * S, &p, &st, rel,
			&nrel), CFLOW_FRAG_FOLLOWED, "offset 24: followed");
		/* a datagram past its timeout: not followed (held: its
		 * first, for all the follower knows, is still to come) */
		n = frag_frame(b, family, 1, 200, 77, 16, false);
		TEST_ASSERT_EQ(follow(f, b, n, &items[7], 32 * S, &p, &st, rel,
			&nrel), CFLOW_FRAG_HELD, "IPv%d: 31 s after its "
			"first", family);
		/* expiry: the fragment of source 2 (held at 1 s) is due at
		 * 31 s + */
		TEST_ASSERT_EQ(cflow_frag_expire(f, 30 * S, false, rel, 4), 0u,
			"nothing due at 30 s");
		TEST_ASSERT_EQ(cflow_frag_expire(f, 32 * S, false, rel, 4), 1u,
			"one due at 32 s");
		TEST_ASSERT(rel[0] == &items[2], "the oldest");
		/* the hold's bound: 4 entries, 1 held now */
		for (uint32_t k = 0; k < 4; k++) {
			n = frag_frame(b, family, 9, 200, 100 + k, 8, true);
			TEST_ASSERT_EQ(follow(f, b, n, &items[k], 33 * S, &p,
				&st, rel, &nrel), k < 3 ? CFLOW_FRAG_HELD :
				CFLOW_FRAG_PASS, "IPv%d hold %u", family, k);
		}
		TEST_ASSERT_EQ(cflow_frag_expire(f, 33 * S, true, rel, 4), 4u,
			"all, at the end");
		TEST_ASSERT_EQ(cflow_frag_held(f), 0u, "none held");
		/* 9 datagrams in a table of 8 slots: one evicted */
		for (uint32_t k = 0; k < 9; k++) {
			n = frag_frame(b, family, 10 + (uint8_t)k, 200, 200 + k,
				0, true);
			TEST_ASSERT_EQ(follow(f, b, n, NULL, 40 * S, &p, &st,
				rel, &nrel), CFLOW_FRAG_PASS, "first %u", k);
		}
		cflow_frag_counters_get(f, &c);
		TEST_ASSERT(c.datagrams == 12 && c.followed == 3 &&
			c.held == 7 && c.released == 2 && c.expired == 5 &&
			c.overlaps == 2 && c.hold_full == 1 &&
			c.evicted == 1, "IPv%d: datagrams %lu followed %lu "
			"held %lu released %lu expired %lu overlaps %lu "
			"hold_full %lu evicted %lu", family,
			(unsigned long)c.datagrams, (unsigned long)c.followed,
			(unsigned long)c.held, (unsigned long)c.released,
			(unsigned long)c.expired, (unsigned long)c.overlaps,
			(unsigned long)c.hold_full, (unsigned long)c.evicted);
		TEST_ASSERT(cflow_frag_memory(&fp) > 8 * sizeof(struct
			cflow_packet), "memory");
		cflow_frag_free(f);
		cflow_tracker_free(t);
	}
	return 0;
}

/*
 * A blocklist and an ICMP error: the key is the quoted flow's, which the
 * sender chooses, so the error's own source is matched as an address too
 * (err_src). Router N 9 is listed: its error about the unlisted flow
 * N 1 -> N 200 matches CBL_ADDRESS in cbl_match(), cbl_match_addrs()
 * and cbl_match_burst(); the same error from N 8 matches nothing; an
 * error from N 8 about a flow to the listed N 9 still does (the key).
 * Before err_src, an address-listed host passed every error it sent.
 */
static int
test_icmp_error_sender_blocked(void)
{
	char path[] = "/tmp/test_icmp_bl_XXXXXX", err[256];
	const char list[] = "10.0.0.9\n2001:db8::9\n";
	int fd = mkstemp(path);
	struct cbl *bl;

	TEST_ASSERT(fd >= 0 && write(fd, list, sizeof(list) - 1) ==
		(ssize_t)(sizeof(list) - 1), "list file");
	close(fd);
	bl = cbl_read(path, 0, err, sizeof(err));
	unlink(path);
	TEST_ASSERT(bl != NULL, "cbl_read: %s", err);
	for (int family = 4; family <= 6; family += 2) {
		uint8_t unreach = family == 4 ? 3 : 1, b[3][512];
		struct cflow_packet p[3];
		enum cbl_kind kinds[3];
		uint32_t n;

		/* from the listed router, about an unlisted flow */
		n = error_of(b[0], family, 9, 1, unreach, 0, 1, 200, 17,
			4000, 53);
		TEST_ASSERT_EQ(cflow_parse(b[0], n, NULL, &p[0]),
			CFLOW_PARSE_OK, "parse");
		TEST_ASSERT_EQ(p[0].kind, CFLOW_KIND_ICMP_ERROR, "kind");
		/* the same from an unlisted router */
		n = error_of(b[1], family, 8, 1, unreach, 0, 1, 200, 17,
			4000, 53);
		TEST_ASSERT_EQ(cflow_parse(b[1], n, NULL, &p[1]),
			CFLOW_PARSE_OK, "parse");
		/* from an unlisted router, about a flow to the listed host */
		n = error_of(b[2], family, 8, 1, unreach, 0, 1, 9, 17,
			4000, 53);
		TEST_ASSERT_EQ(cflow_parse(b[2], n, NULL, &p[2]),
			CFLOW_PARSE_OK, "parse");
		TEST_ASSERT_EQ(cbl_match(bl, &p[0]), CBL_ADDRESS, "v%d sender",
			family);
		TEST_ASSERT_EQ(cbl_match_addrs(bl, &p[0]), CBL_ADDRESS,
			"v%d sender, addresses", family);
		TEST_ASSERT_EQ(cbl_match(bl, &p[1]), CBL_NONE, "v%d unlisted",
			family);
		TEST_ASSERT_EQ(cbl_match_addrs(bl, &p[1]), CBL_NONE,
			"v%d unlisted, addresses", family);
		TEST_ASSERT_EQ(cbl_match(bl, &p[2]), CBL_ADDRESS,
			"v%d quoted", family);
		cbl_match_burst(bl, p, 3, 7, kinds);
		TEST_ASSERT(kinds[0] == CBL_ADDRESS && kinds[1] == CBL_NONE &&
			kinds[2] == CBL_ADDRESS, "v%d burst: %d %d %d", family,
			kinds[0], kinds[1], kinds[2]);
	}
	cbl_free(bl);
	return 0;
}

/*
 * With no_hold (the application's choice where nothing depends on a
 * fragment's flow: no firewall), a later fragment before its first goes
 * on at once, unfollowed, counted neither held nor hold_full (it was
 * counted hold_full, a full hold of size 0); one after its first is
 * followed. IPv4 and IPv6.
 */
static int
test_frag_no_hold(void)
{
	for (int family = 4; family <= 6; family += 2) {
		struct cflow_frag_params fp = { .datagrams = 8, .no_hold = true,
			.timeout_ns = 30 * S, .seed = 7 };
		struct cflow_frag *f = cflow_frag_create(&fp);
		struct cflow_packet p;
		enum cflow_parse_status st;
		struct cflow_frag_counters c;
		void *rel[1];
		unsigned int nrel;
		uint8_t b[256];
		int item;
		uint32_t n;

		TEST_ASSERT(f != NULL && cflow_frag_hold(f) == 0, "create");
		n = frag_frame(b, family, 1, 200, 77, 8, true);
		TEST_ASSERT_EQ(follow(f, b, n, &item, S, &p, &st, rel, &nrel),
			CFLOW_FRAG_PASS, "IPv%d: before its first: on", family);
		TEST_ASSERT_EQ(st, CFLOW_PARSE_FRAGMENT, "unfollowed");
		n = frag_frame(b, family, 1, 200, 77, 0, true);
		TEST_ASSERT_EQ(follow(f, b, n, &item, S, &p, &st, rel, &nrel),
			CFLOW_FRAG_PASS, "its first");
		TEST_ASSERT_EQ(nrel, 0u, "nothing given back");
		n = frag_frame(b, family, 1, 200, 77, 16, false);
		TEST_ASSERT_EQ(follow(f, b, n, &item, S, &p, &st, rel, &nrel),
			CFLOW_FRAG_FOLLOWED, "after its first: followed");
		cflow_frag_counters_get(f, &c);
		TEST_ASSERT(c.held == 0 && c.hold_full == 0 && c.followed == 1 &&
			c.datagrams == 1 && cflow_frag_held(f) == 0,
			"IPv%d: held %lu hold_full %lu followed %lu", family,
			(unsigned long)c.held, (unsigned long)c.hold_full,
			(unsigned long)c.followed);
		cflow_frag_free(f);
	}
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_icmp_table),
	TEST_CASE(test_icmp_monitor),
	TEST_CASE(test_icmp_fragments_seen),
	TEST_CASE(test_frag_follow),
	TEST_CASE(test_icmp_error_sender_blocked),
	TEST_CASE(test_frag_no_hold),
	TEST_CASES_END(),
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
