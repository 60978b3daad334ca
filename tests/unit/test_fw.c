/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What the firewall (docs/firewall.md) needs of lib/cflow beyond
 * test_parse.c's and test_track.c's cases: the parser's tunnel, ICMP
 * type and hop limit fields, decapsulated flows bound to their tunnel's
 * outer endpoints (tunnel_bind), and sided trackers, which keep each
 * flow's inside endpoint and refuse outside packets travelling away from
 * it (CFLOW_UNTRACKED_WRONG_DIR), across a warm restart too; and the
 * allow list's digest a saved table is checked against. Frames from
 * packets.h (struct pkt_spec).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "blocklist.h"
#include "cflow.h"
#include "cflow_state.h"
#include "packets.h"
#include "test.h"

#define S (UINT64_C(1000000000))

/* ------------------------------------------------------------ parser */

/* ICMP type and hop limit of parsed packets; nothing of either for the
 * others; the tunnel a packet came out of, whatever its status. */
static int
test_parse_fw_fields(void)
{
	struct cflow_parse_params decap = { .decap = CFLOW_DECAP_ALL };
	struct pkt_spec echo = { 4, 0x0a000001, 0xc0000201, 0, 0, 1, 8, 61 };
	struct pkt_spec ns = { 6, 1, 2, 0, 0, 58, 135, 255 };
	struct pkt_spec syn = { 4, 0x0a000001, 0xc0000201, 40000, 80, 6, 2,
		0 };
	uint8_t f[512], inner[256], arp[60];
	struct cflow_packet p;
	uint32_t len, ilen;

	len = pkt_frame(f, &echo);
	TEST_ASSERT(parse_exact(f, len, NULL, &p) == CFLOW_PARSE_OK &&
		p.icmp_type == 8 && p.hop_limit == 61 && p.tunnel == 0,
		"echo: type %u hop limit %u", p.icmp_type, p.hop_limit);
	len = pkt_frame(f, &ns);
	TEST_ASSERT(parse_exact(f, len, NULL, &p) == CFLOW_PARSE_OK &&
		p.icmp_type == 135 && p.hop_limit == 255,
		"NS: type %u hop limit %u", p.icmp_type, p.hop_limit);
	len = pkt_frame(f, &syn);
	TEST_ASSERT(parse_exact(f, len, NULL, &p) == CFLOW_PARSE_OK &&
		p.icmp_type == 0 && p.hop_limit == 64, "SYN (fast path)");
	TEST_ASSERT(cflow_parse_general(f, len, NULL, &p) == CFLOW_PARSE_OK &&
		p.icmp_type == 0 && p.hop_limit == 64, "SYN (general path)");
	/* Cut in the L4 header: addresses only. */
	len = pkt_frame(f, &echo);
	TEST_ASSERT(parse_exact(f, len - 5, NULL, &p) == CFLOW_PARSE_TRUNC_L4 &&
		p.has_addrs && p.icmp_type == 0 && p.hop_limit == 0,
		"cut echo: type %u hop limit %u", p.icmp_type, p.hop_limit);
	/* Decapsulated: the inner packet's, and the tunnel. */
	ilen = pkt_ip(inner, &echo);
	len = pkt_tun_frame(f, TUN_GTPU, false, 0x0a0000fe, 0xc00002fe, 7,
		inner, ilen);
	TEST_ASSERT(parse_exact(f, len, &decap, &p) == CFLOW_PARSE_OK &&
		p.tunnel == CFLOW_DECAP_GTPU && p.icmp_type == 8 &&
		p.hop_limit == 61 && p.key.addr_lo[15] == 1,
		"GTP-U echo: tunnel %u type %u hop %u", p.tunnel, p.icmp_type,
		p.hop_limit);
	TEST_ASSERT(parse_exact(f, len, NULL, &p) == CFLOW_PARSE_OK &&
		p.tunnel == 0 && p.key.proto == 17 && p.hop_limit == 64,
		"GTP-U, decap off: the outer UDP flow");
	/* A non-IP inner frame: non_ip, no addresses, the tunnel. */
	memset(arp, 0, sizeof(arp));
	ilen = pkt_eth(arp, 0x0806) + 28;
	for (int k = 0; k < 3; k++) {
		enum pkt_tun kind = k == 0 ? TUN_VXLAN : k == 1 ? TUN_GENEVE :
			TUN_GRE;
		unsigned int bit = k == 0 ? CFLOW_DECAP_VXLAN : k == 1 ?
			CFLOW_DECAP_GENEVE : CFLOW_DECAP_GRE;

		len = pkt_tun_frame(f, kind, true, 0x0a0000fe, 0xc00002fe, 7,
			arp, ilen);
		TEST_ASSERT(parse_exact(f, len, &decap, &p) ==
			CFLOW_PARSE_NON_IP && !p.has_addrs && p.tunnel == bit &&
			p.ethertype == 0x0800, "ARP in tunnel %d: tunnel %u",
			k, p.tunnel);
	}
	/* A tunnel header cut short is not decapsulated. */
	ilen = pkt_ip(inner, &syn);
	len = pkt_tun_frame(f, TUN_GRE, false, 0x0a0000fe, 0xc00002fe, 7,
		inner, ilen);
	TEST_ASSERT(parse_exact(f, 14 + 20 + 6, &decap, &p) ==
		CFLOW_PARSE_TRUNC_L4 && p.tunnel == 0 && p.has_addrs,
		"GRE cut: tunnel %u", p.tunnel);
	return 0;
}

/* A flow's key inside a tunnel between outer addresses @p osrc and
 * @p odst; the inner packet @p s. */
static int
tun_key(enum pkt_tun kind, uint32_t osrc, uint32_t odst, uint32_t id,
		const struct pkt_spec *s, const struct cflow_parse_params *pp,
		struct cflow_key *key)
{
	uint8_t f[512], inner[256], e[300];
	struct cflow_packet p;
	uint32_t ilen = pkt_ip(inner, s), len;
	bool teb = kind == TUN_VXLAN;

	if (teb) {
		uint32_t n = pkt_eth(e, s->family == 4 ? 0x0800 : 0x86dd);

		memcpy(e + n, inner, ilen);
		len = pkt_tun_frame(f, kind, true, osrc, odst, id, e, n + ilen);
	} else {
		len = pkt_tun_frame(f, kind, false, osrc, odst, id, inner,
			ilen);
	}
	if (parse_exact(f, len, pp, &p) != CFLOW_PARSE_OK)
		return -1;
	*key = p.key;
	return 0;
}

static bool
same_key(const struct cflow_key *a, const struct cflow_key *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/*
 * tunnel_bind: both directions of a tunnelled flow have one key; another
 * outer source or destination, another tunnel kind, no tunnel or another
 * seed give another; the tunnel's id counts with vlan_in_key only.
 */
static int
test_parse_tunnel_bind(void)
{
	struct cflow_parse_params bind = { .decap = CFLOW_DECAP_ALL,
		.tunnel_bind = true, .tunnel_seed = 0x5eed };
	struct cflow_parse_params other_seed = bind, plain = {
		.decap = CFLOW_DECAP_ALL }, vlan_key = bind;
	const uint32_t in_vtep = 0xc6120101, out_vtep = 0xcb007101;
	const uint32_t spoofer = 0xcb007142, other_in = 0xc6120163;
	const enum pkt_tun kinds[] = { TUN_VXLAN, TUN_GENEVE, TUN_GRE,
		TUN_GTPU };

	other_seed.tunnel_seed = 0x5eee;
	vlan_key.vlan_in_key = true;
	for (int family = 4; family <= 6; family += 2)
	for (unsigned int k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct pkt_spec out = { family, 0xc6120a0a, 0xcb007105, 40000,
			80, 6, 2, 0 };
		struct pkt_spec back = { family, 0xcb007105, 0xc6120a0a, 80,
			40000, 6, 0x12, 0 };
		struct cflow_key a, b, c, plain_key;
		uint8_t f[256];
		struct cflow_packet p;

		TEST_ASSERT(tun_key(kinds[k], in_vtep, out_vtep, 5, &out, &bind,
			&a) == 0 && tun_key(kinds[k], out_vtep, in_vtep, 5,
			&back, &bind, &b) == 0, "%u/%d: parse", k, family);
		TEST_ASSERT(same_key(&a, &b) && a.tunnel != 0,
			"%u/%d: both directions, one key", k, family);
		/* the same inner flow, not tunnelled */
		TEST_ASSERT(parse_exact(f, pkt_frame(f, &back), &bind, &p) ==
			CFLOW_PARSE_OK && p.key.tunnel == 0 &&
			!same_key(&p.key, &a), "%u/%d: not tunnelled", k,
			family);
		plain_key = p.key;
		TEST_ASSERT(tun_key(kinds[k], spoofer, in_vtep, 5, &back, &bind,
			&c) == 0 && !same_key(&c, &a), "%u/%d: spoofed outer "
			"source", k, family);
		TEST_ASSERT(tun_key(kinds[k], out_vtep, other_in, 5, &back,
			&bind, &c) == 0 && !same_key(&c, &a),
			"%u/%d: another outer destination", k, family);
		/* the outer addresses swapped, the inner ones not: another
		 * orientation of the tunnel */
		TEST_ASSERT(tun_key(kinds[k], in_vtep, out_vtep, 5, &back,
			&bind, &c) == 0 && !same_key(&c, &a),
			"%u/%d: outer swapped", k, family);
		TEST_ASSERT(tun_key(kinds[(k + 1) % 4], in_vtep, out_vtep, 5,
			&out, &bind, &c) == 0 && !same_key(&c, &a),
			"%u/%d: another kind", k, family);
		TEST_ASSERT(tun_key(kinds[k], in_vtep, out_vtep, 5, &out,
			&other_seed, &c) == 0 && !same_key(&c, &a),
			"%u/%d: another seed", k, family);
		/* the id: only with vlan_in_key */
		TEST_ASSERT(tun_key(kinds[k], in_vtep, out_vtep, 6, &out, &bind,
			&c) == 0 && same_key(&c, &a), "%u/%d: id ignored", k,
			family);
		TEST_ASSERT(tun_key(kinds[k], in_vtep, out_vtep, 5, &out,
			&vlan_key, &b) == 0 && tun_key(kinds[k], in_vtep,
			out_vtep, 6, &out, &vlan_key, &c) == 0 &&
			!same_key(&b, &c) && b.tunnel != 0,
			"%u/%d: id with vlan_in_key", k, family);
		/* without tunnel_bind, the plain key (as before) */
		TEST_ASSERT(tun_key(kinds[k], spoofer, other_in, 5, &back,
			&plain, &c) == 0 && same_key(&c, &plain_key),
			"%u/%d: unbound", k, family);
	}
	return 0;
}

/* ------------------------------------------------------------ tracker */

static enum cflow_verdict
send(struct cflow_tracker *t, const struct pkt_spec *s, uint64_t at,
		uint8_t flags)
{
	uint8_t f[256];
	struct cflow_input in = { .data = f, .time_ns = at, .flags = flags };
	struct cflow_packet pkt;
	enum cflow_parse_status st;
	enum cflow_verdict v;

	in.len = pkt_frame(f, s);
	in.wire_len = in.len;
	st = cflow_parse(f, in.len, NULL, &pkt);
	cflow_track_parsed(t, &in, &pkt, &st, 1, &v, NULL);
	return v;
}

static int
invariants(const struct cflow_tracker *t)
{
	struct cflow_counters c;

	cflow_counters_get(t, &c);
	TEST_ASSERT(c.flows_new + c.flows_restored ==
		cflow_flows_accounted(&c) &&
		c.packets == cflow_packets_classified(&c), "invariants");
	return 0;
}

#define OUT (CFLOW_IN_OUTSIDE | CFLOW_IN_NO_CREATE)
#define ALLOWED CFLOW_IN_OUTSIDE

/*
 * A sided tracker: outside packets of an inside-opened flow pass in the
 * reply direction only; one that claims the inside host's source changes
 * nothing (a FIN does not close, a stale entry aside); flows opened by
 * an allowed outside packet have their destination inside; inside
 * packets are not checked. Not sided: the direction is not looked at.
 */
static int
test_track_sided(void)
{
	for (int vb = 16; vb <= 32; vb += 16)
	for (unsigned int cb = 0; cb <= 4; cb += 4) {
		struct cflow_tracker_params prm = { .capacity = 1000,
			.value_bits = (unsigned int)vb, .count_bits = cb,
			.sided = true, .seed = 42,
			.close_linger_ns = 10 * S };
		struct cflow_tracker *t = cflow_tracker_create(&prm);
		/* 198.18.1.10:40000 -> 203.0.113.5:80 (inside lower: the key
		 * is not reversed), and an inside host above its peer */
		struct pkt_spec syn = { 4, 0xc6120a0a, 0xcb007105, 40000, 80, 6,
			0x02, 0 };
		struct pkt_spec synack = { 4, 0xcb007105, 0xc6120a0a, 80, 40000,
			6, 0x12, 0 };
		struct pkt_spec ack = syn, fin = syn, rst = syn;
		struct pkt_spec u_in = { 4, 0xe0000001, 0x0a000001, 5353, 53, 17,
			0, 0 };
		struct pkt_spec u_out = { 4, 0x0a000001, 0xe0000001, 53, 5353,
			17, 0, 0 };
		/* an allowed service, 198.18.1.20:22, opened from outside */
		struct pkt_spec s_syn = { 4, 0xcb007107, 0xc6120a14, 9000, 22, 6,
			0x02, 0 };
		struct pkt_spec s_ack = s_syn;
		struct pkt_spec s_reply = { 4, 0xc6120a14, 0xcb007107, 22, 9000,
			6, 0x12, 0 };
		struct cflow_counters c;

		TEST_ASSERT(t != NULL, "create %d/%u", vb, cb);
		ack.flags = 0x10;
		fin.flags = 0x11;
		rst.flags = 0x04;
		s_ack.flags = 0x10;
		TEST_ASSERT_EQ(send(t, &syn, S, 0), CFLOW_NEW, "inside SYN");
		TEST_ASSERT_EQ(send(t, &synack, S + 1, OUT), CFLOW_SEEN,
			"reply");
		TEST_ASSERT_EQ(send(t, &ack, S + 2, OUT),
			CFLOW_UNTRACKED_WRONG_DIR, "the inside's ACK from outside");
		TEST_ASSERT_EQ(send(t, &fin, S + 3, OUT),
			CFLOW_UNTRACKED_WRONG_DIR, "a FIN from outside, spoofed");
		TEST_ASSERT_EQ(send(t, &rst, S + 3, ALLOWED),
			CFLOW_UNTRACKED_WRONG_DIR, "allowed or not");
		TEST_ASSERT_EQ(send(t, &synack, S + 4, OUT), CFLOW_SEEN,
			"the flow is still open");
		TEST_ASSERT_EQ(send(t, &ack, S + 5, 0), CFLOW_SEEN,
			"inside ACK");
		/* hairpin: both directions from inside ports */
		TEST_ASSERT_EQ(send(t, &synack, S + 6, 0), CFLOW_SEEN,
			"the reply direction from inside");
		/* the inside host above its peer: the key reversed */
		TEST_ASSERT_EQ(send(t, &u_in, S + 7, 0), CFLOW_NEW, "UDP in");
		TEST_ASSERT_EQ(send(t, &u_out, S + 8, OUT), CFLOW_SEEN,
			"UDP reply");
		TEST_ASSERT_EQ(send(t, &u_in, S + 9, OUT),
			CFLOW_UNTRACKED_WRONG_DIR, "UDP, inside's direction");
		/* an allowed service: the destination is inside */
		TEST_ASSERT_EQ(send(t, &s_syn, S + 10, ALLOWED), CFLOW_NEW,
			"allowed SYN");
		TEST_ASSERT_EQ(send(t, &s_ack, S + 11, OUT), CFLOW_SEEN,
			"its next packet");
		TEST_ASSERT_EQ(send(t, &s_reply, S + 12, 0), CFLOW_SEEN,
			"the service answers");
		TEST_ASSERT_EQ(send(t, &s_reply, S + 13, OUT),
			CFLOW_UNTRACKED_WRONG_DIR, "the service spoofed");
		/* closed by the right side, lingering: still sided */
		TEST_ASSERT_EQ(send(t, &fin, 2 * S, 0), CFLOW_CLOSING, "FIN");
		TEST_ASSERT_EQ(send(t, &ack, 2 * S + 1, OUT),
			CFLOW_UNTRACKED_WRONG_DIR, "lingering");
		TEST_ASSERT_EQ(send(t, &synack, 2 * S + 2, OUT), CFLOW_SEEN,
			"lingering reply");
		/* past its timeout the entry is stale: removed by the packet,
		 * which is then of no flow */
		TEST_ASSERT_EQ(send(t, &u_in, 200 * S, OUT),
			CFLOW_UNTRACKED_UNSOLICITED, "stale");
		TEST_ASSERT_EQ(send(t, &u_out, 200 * S + 1, OUT),
			CFLOW_UNTRACKED_UNSOLICITED, "gone");
		cflow_counters_get(t, &c);
		TEST_ASSERT(c.wrong_direction == 6 && c.flows_closed == 1 &&
			c.flows_expired == 1, "%d/%u: wrong_direction %lu closed "
			"%lu expired %lu", vb, cb,
			(unsigned long)c.wrong_direction,
			(unsigned long)c.flows_closed,
			(unsigned long)c.flows_expired);
		TEST_ASSERT_EQ(invariants(t), 0, "invariants");
		cflow_tracker_free(t);
		/* Not sided: the flag is not looked at. */
		prm.sided = false;
		t = cflow_tracker_create(&prm);
		TEST_ASSERT_EQ(send(t, &syn, S, 0), CFLOW_NEW, "plain SYN");
		TEST_ASSERT_EQ(send(t, &ack, S + 1, OUT), CFLOW_SEEN,
			"not sided: any direction");
		cflow_tracker_free(t);
	}
	return 0;
}

/* The side takes a bit of the value from the time: long timeouts still
 * resolve (coarser ticks past 13 days with 32-bit values), and 16-bit
 * values still keep a flow to its timeout, sided or not. */
static int
test_track_sided_ticks(void)
{
	struct cflow_tracker_params p = { .capacity = 100, .value_bits = 32,
		.sided = true };
	struct cflow_tracker_params q = p;
	struct cflow_tracker *t;

	for (int c = 0; c < CFLOW_CLASS_MAX; c++)
		p.timeout_ns[c] = 12 * 86400 * S;
	TEST_ASSERT(cflow_tracker_params_resolve(&p, &q) == 0,
		"12 days, sided");
	for (int c = 0; c < CFLOW_CLASS_MAX; c++)
		p.timeout_ns[c] = 25 * 86400 * S;
	TEST_ASSERT(cflow_tracker_params_resolve(&p, &q) == 0,
		"25 days, sided");
	p.sided = false;
	for (int c = 0; c < CFLOW_CLASS_MAX; c++)
		p.timeout_ns[c] = 25 * 86400 * S;
	TEST_ASSERT(cflow_tracker_params_resolve(&p, &q) == 0,
		"25 days, not sided");
	/* The default timeouts with 16-bit values: a flow idle just under
	 * 300 s is alive, sided or not. */
	for (int sided = 0; sided <= 1; sided++) {
		struct cflow_tracker_params r = { .capacity = 100,
			.value_bits = 16, .sided = sided, .seed = 3 };
		struct pkt_spec u = { 4, 0x0a000001, 0x0a000002, 1, 2, 17, 0,
			0 };
		struct pkt_spec back = { 4, 0x0a000002, 0x0a000001, 2, 1, 17, 0,
			0 };

		t = cflow_tracker_create(&r);
		TEST_ASSERT(t != NULL, "16-bit, sided %d", sided);
		TEST_ASSERT_EQ(send(t, &u, S, 0), CFLOW_NEW, "new");
		cflow_sweep(t, 30 * S);
		TEST_ASSERT_EQ(send(t, &back, 59 * S, OUT), CFLOW_SEEN,
			"59 s later, sided %d", sided);
		TEST_ASSERT_EQ(send(t, &back, 150 * S, OUT),
			CFLOW_UNTRACKED_UNSOLICITED, "expired, sided %d", sided);
		cflow_tracker_free(t);
	}
	return 0;
}

/* A sided table restores into a sided tracker only, and keeps its
 * sides; a version 1 table is refused by its version. */
static int
test_track_sided_restore(void)
{
	struct cflow_tracker_params p = { .capacity = 1000, .sided = true,
		.seed = 9 };
	struct cflow_tracker_params q = p;
	struct pkt_spec syn = { 4, 0xc6120a0a, 0xcb007105, 40000, 80, 6, 0x02,
		0 };
	struct pkt_spec synack = { 4, 0xcb007105, 0xc6120a0a, 80, 40000, 6,
		0x12, 0 };
	struct cflow_tracker *t = cflow_tracker_create(&p), *u;
	char err[256];
	uint8_t *buf;
	size_t len;

	TEST_ASSERT_EQ(send(t, &syn, S, 0), CFLOW_NEW, "SYN");
	len = cflow_tracker_save_size(t);
	buf = malloc(len);
	TEST_ASSERT(cflow_tracker_save(t, buf, len) == (int64_t)len, "save");
	q.sided = false;
	u = cflow_tracker_create(&q);
	TEST_ASSERT(cflow_tracker_restore(u, buf, len, NULL, err,
		sizeof(err)) == -ESTALE && strstr(err, "inside endpoints"),
		"into a tracker that is not sided: %s", err);
	cflow_tracker_free(u);
	u = cflow_tracker_create(&p);
	TEST_ASSERT(cflow_tracker_restore(u, buf, len, NULL, err,
		sizeof(err)) == 0, "sided: %s", err);
	TEST_ASSERT_EQ(send(u, &syn, 2 * S, OUT), CFLOW_UNTRACKED_WRONG_DIR,
		"restored: its side kept");
	TEST_ASSERT_EQ(send(u, &synack, 2 * S, OUT), CFLOW_SEEN,
		"restored: the reply");
	cflow_tracker_free(u);
	/* Version 1 (its header checksum made right): by the version. */
	{
		uint64_t sum;

		buf[8] = 1;
		sum = XXH64(buf, 48, 0);
		memcpy(buf + 48, &sum, sizeof(sum));
	}
	u = cflow_tracker_create(&p);
	TEST_ASSERT(cflow_tracker_restore(u, buf, len, NULL, err,
		sizeof(err)) == -EPROTONOSUPPORT && strstr(err, "version 1"),
		"version 1: %s", err);
	cflow_tracker_free(u);
	cflow_tracker_free(t);
	free(buf);
	return 0;
}

/* A text file of @p text in a new temporary file; its path in @p path. */
static int
write_tmp(char *path, const char *text)
{
	int fd = mkstemp(path);
	ssize_t n = (ssize_t)strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static uint64_t
allow_digest(const char *text)
{
	char path[] = "/tmp/test_fw_allow_XXXXXX", err[256];
	struct cbl_allow *al;
	uint64_t d;

	if (write_tmp(path, text) != 0)
		return 0;
	al = cbl_allow_read(path, err, sizeof(err));
	unlink(path);
	if (al == NULL)
		return 0;
	d = cbl_allow_digest(al);
	cbl_allow_free(al);
	return d;
}

/* An allow list's digest: its rules, not their order, spelling,
 * comments or duplicates; never 0. */
static int
test_allow_digest(void)
{
	uint64_t a = allow_digest("tcp 198.18.1.10 22\nudp 198.18.1.0/28 53\n");
	uint64_t b = allow_digest("# the same\nudp 198.18.1.7/28 53 # masked\n"
		"\n6 198.18.1.10 22\ntcp 198.18.1.10 22\n");
	uint64_t c = allow_digest("tcp 198.18.1.10 22\nudp 198.18.1.0/28 54\n");
	uint64_t e = allow_digest("# nothing\n");

	TEST_ASSERT(a != 0 && a == b, "same rules: %#lx %#lx",
		(unsigned long)a, (unsigned long)b);
	TEST_ASSERT(c != 0 && c != a, "another port");
	TEST_ASSERT(e != 0 && e != a, "an empty list: %#lx", (unsigned long)e);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_parse_fw_fields),
	TEST_CASE(test_parse_tunnel_bind),
	TEST_CASE(test_track_sided),
	TEST_CASE(test_track_sided_ticks),
	TEST_CASE(test_track_sided_restore),
	TEST_CASE(test_allow_digest),
	TEST_CASES_END(),
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
