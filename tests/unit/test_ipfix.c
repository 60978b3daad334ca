/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The IPFIX exporter: messages checked byte by byte against bytes
 * written here from RFC 7011 and IANA's element numbers (not from the
 * library's tables), and a decoder of the test's own for the properties
 * of many messages: sequence numbers, template refresh, message size,
 * records never split.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cflow_ipfix.h"
#include "test.h"

#define MAX_MSGS 4096
#define NOW 1764067200u   /* 2025-11-25 10:40:00 UTC */

/* ------------------------------------------------------------ the sink */

struct sink {
	uint8_t *msg[MAX_MSGS];
	size_t len[MAX_MSGS];
	unsigned int n;
	int fail;           /* emit returns this while non-zero */
	unsigned int calls;
};

static int
sink_emit(const uint8_t *msg, size_t len, void *arg)
{
	struct sink *s = arg;

	s->calls++;
	if (s->fail != 0)
		return s->fail;
	if (s->n == MAX_MSGS)
		return -ENOSPC;
	s->msg[s->n] = malloc(len);
	if (s->msg[s->n] == NULL)
		return -ENOMEM;
	memcpy(s->msg[s->n], msg, len);
	s->len[s->n++] = len;
	return 0;
}

static void
sink_free(struct sink *s)
{
	for (unsigned int i = 0; i < s->n; i++)
		free(s->msg[i]);
	memset(s, 0, sizeof(*s));
}

static struct cflow_ipfix *
make(struct sink *s, uint32_t domain, uint32_t refresh_s,
		uint32_t refresh_msgs, uint16_t mtu)
{
	memset(s, 0, sizeof(*s));
	return cflow_ipfix_create(&(struct cflow_ipfix_params){
		.observation_domain = domain,
		.template_refresh_s = refresh_s,
		.template_refresh_msgs = refresh_msgs,
		.mtu = mtu,
		.emit = sink_emit,
		.emit_arg = s,
	});
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)rd16(p) << 16 | rd16(p + 2);
}

static uint64_t
rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

/* ------------------------------------------- templates, from the RFCs */

struct ie {
	uint16_t id, len;
};

/* IANA: sourceIPv4Address 8, destinationIPv4Address 12,
 * sourceTransportPort 7, destinationTransportPort 11, protocolIdentifier
 * 4, tcpControlBits 6 (unsigned16, RFC 7125: one byte, reduced size),
 * icmpTypeCodeIPv4 32, ingressInterface 10, flowStartMilliseconds 152,
 * flowEndMilliseconds 153, octetDeltaCount 1, packetDeltaCount 2,
 * flowEndReason 136, flowId 148; sourceIPv6Address 27,
 * destinationIPv6Address 28, icmpTypeCodeIPv6 139. */
static const struct ie want_v4[] = {
	{8, 4}, {12, 4}, {7, 2}, {11, 2}, {4, 1}, {6, 1}, {32, 2}, {10, 4},
	{152, 8}, {153, 8}, {1, 8}, {2, 8}, {136, 1}, {148, 8},
};
static const struct ie want_v6[] = {
	{27, 16}, {28, 16}, {7, 2}, {11, 2}, {4, 1}, {6, 1}, {139, 2},
	{10, 4}, {152, 8}, {153, 8}, {1, 8}, {2, 8}, {136, 1}, {148, 8},
};

static const struct {
	uint16_t id;
	const struct ie *ie;
	unsigned int n;
	unsigned int rec_len;
} want_tmpl[2] = {
	{256, want_v4, 14, 61},
	{257, want_v6, 14, 85},
};

/* The Template Set the exporter must send, built from the lists above. */
static size_t
want_template_set(uint8_t *b)
{
	size_t off = 4;

	for (unsigned int t = 0; t < 2; t++) {
		b[off++] = 0x01;
		b[off++] = (uint8_t)want_tmpl[t].id;
		b[off++] = 0;
		b[off++] = (uint8_t)want_tmpl[t].n;
		for (unsigned int i = 0; i < want_tmpl[t].n; i++) {
			b[off++] = (uint8_t)(want_tmpl[t].ie[i].id >> 8);
			b[off++] = (uint8_t)want_tmpl[t].ie[i].id;
			b[off++] = 0;
			b[off++] = (uint8_t)want_tmpl[t].ie[i].len;
		}
	}
	b[0] = 0;
	b[1] = 2;
	b[2] = (uint8_t)(off >> 8);
	b[3] = (uint8_t)off;
	return off;
}

/* ------------------------------------------------------------ records */

static struct cflow_flow_record
rec4(uint8_t reason, uint8_t last_src, uint16_t sport, uint64_t t_ns)
{
	struct cflow_flow_record r = {
		.flow_id = 1000 + last_src,
		.first_ns = t_ns,
		.last_ns = t_ns + 1234567,
		.packets = 3,
		.bytes = 180,
		.src = {10, 0, 0, last_src},
		.dst = {10, 0, 1, 1},
		.sport = sport,
		.dport = 80,
		.port = 1,
		.family = 4,
		.proto = 6,
		.proto_class = CFLOW_CLASS_TCP,
		.reason = reason,
		.tcp_flags = reason == CFLOW_RECORD_END ? 0x13 : 0x12,
	};
	return r;
}

static struct cflow_flow_record
rec6(uint8_t reason, uint8_t last_src, uint16_t sport, uint64_t t_ns)
{
	struct cflow_flow_record r = rec4(reason, 0, sport, t_ns);

	memset(r.src, 0, 16);
	memset(r.dst, 0, 16);
	r.src[0] = r.dst[0] = 0x20;
	r.src[1] = r.dst[1] = 0x01;
	r.src[15] = last_src;
	r.dst[15] = 0xfe;
	r.family = 6;
	r.flow_id = 2000 + last_src;
	return r;
}

/* ------------------------------------------------------------ decoder */

/* What one message holds, by the test's reading of it. */
struct decoded {
	uint32_t len, export_s, seq, domain;
	bool templates;         /* a Template Set, first */
	unsigned int records;   /* Data Records, all sets */
	unsigned int by_tmpl[2];
	struct cflow_flow_record rec[64]; /* decoded back, in message order */
};

/* Read a message; -1 on anything malformed. */
static int
decode(const uint8_t *m, size_t len, struct decoded *d)
{
	uint8_t set[1024];
	size_t off = 16, set_len = want_template_set(set);
	int last_id = -1;

	memset(d, 0, sizeof(*d));
	TEST_ASSERT(len >= 16, "short message %zu", len);
	TEST_ASSERT_EQ(rd16(m), 10, "version %u", rd16(m));
	d->len = rd16(m + 2);
	TEST_ASSERT_EQ(d->len, len, "length %u, message %zu", d->len, len);
	d->export_s = rd32(m + 4);
	d->seq = rd32(m + 8);
	d->domain = rd32(m + 12);
	while (off < len) {
		uint16_t id, slen;

		TEST_ASSERT(len - off >= 4, "set header cut at %zu", off);
		id = rd16(m + off);
		slen = rd16(m + off + 2);
		TEST_ASSERT(slen >= 4 && slen <= len - off,
			"set %u of length %u at %zu of %zu", id, slen, off, len);
		if (id == 2) {
			TEST_ASSERT_EQ(off, 16, "template set not first");
			TEST_ASSERT(slen == set_len &&
				memcmp(m + off, set, set_len) == 0,
				"template set differs");
			d->templates = true;
		} else {
			unsigned int t = id - 256u, rl;
			const uint8_t *r;

			TEST_ASSERT(id >= 256 && id <= 257, "set id %u", id);
			TEST_ASSERT((int)id > last_id, "set %u after %d", id,
				last_id);
			last_id = id;
			rl = want_tmpl[t].rec_len;
			TEST_ASSERT(slen > 4 && (slen - 4) % rl == 0,
				"set %u: %u bytes for records of %u", id, slen,
				rl);
			for (r = m + off + 4; r < m + off + slen; r += rl) {
				struct cflow_flow_record *e = &d->rec[d->records];
				unsigned int a = t == 1 ? 16 : 4;
				const uint8_t *q = r + 2 * a;

				TEST_ASSERT(d->records < 64, "too many");
				memset(e, 0, sizeof(*e));
				e->family = t == 1 ? 6 : 4;
				memcpy(e->src, r, a);
				memcpy(e->dst, r + a, a);
				e->sport = rd16(q);
				e->dport = rd16(q + 2);
				e->proto = q[4];
				e->tcp_flags = q[5];
				e->icmp_type = q[6];
				e->icmp_code = q[7];
				TEST_ASSERT(rd32(q + 8) != 0, "ingress 0");
				e->port = (uint16_t)(rd32(q + 8) - 1);
				e->first_ns = rd64(q + 12) * 1000000;
				e->last_ns = rd64(q + 20) * 1000000;
				e->bytes = rd64(q + 28);
				e->packets = rd64(q + 36);
				e->reason = q[44];
				e->flow_id = rd64(q + 45);
				d->records++;
				d->by_tmpl[t]++;
			}
		}
		off += slen;
	}
	return 0;
}

/* The template of a record, less 256. */
static unsigned int
tmpl_of(const struct cflow_flow_record *e)
{
	return e->family == 6;
}

/* The fields a Data Record carries equal the record's. */
static bool
same_record(const struct cflow_flow_record *got,
		const struct cflow_flow_record *e)
{
	unsigned int a = e->family == 6 ? 16 : 4;
	bool icmp = e->proto_class == CFLOW_CLASS_ICMP;

	return got->family == e->family &&
		memcmp(got->src, e->src, a) == 0 &&
		memcmp(got->dst, e->dst, a) == 0 &&
		got->sport == e->sport && got->dport == e->dport &&
		got->proto == e->proto && got->tcp_flags == e->tcp_flags &&
		got->icmp_type == (icmp ? e->icmp_type : 0) &&
		got->icmp_code == (icmp ? e->icmp_code : 0) &&
		got->port == e->port && got->bytes == e->bytes &&
		got->packets == e->packets && got->reason == e->reason &&
		got->flow_id == e->flow_id &&
		got->first_ns == e->first_ns / 1000000 * 1000000 &&
		got->last_ns == e->last_ns / 1000000 * 1000000;
}

/* --------------------------------------------------------------- cases */

static int
test_ipfix_create_params(void)
{
	struct cflow_ipfix_stats st;
	struct cflow_ipfix *x;
	struct sink s;

	errno = 0;
	x = cflow_ipfix_create(&(struct cflow_ipfix_params){ .mtu = 1400 });
	TEST_ASSERT(x == NULL && errno == EINVAL, "no emit: %p %d",
		(void *)x, errno);
	x = make(&s, 0, 0, 0, CFLOW_IPFIX_MTU_MIN - 1);
	TEST_ASSERT(x == NULL && errno == EINVAL, "mtu 511: %p %d",
		(void *)x, errno);
	x = make(&s, 0, 0, 0, CFLOW_IPFIX_MTU_MIN);
	TEST_ASSERT(x != NULL, "mtu 512: %d", errno);
	cflow_ipfix_free(x);
	x = make(&s, 0, 0, 0, 65535);
	TEST_ASSERT(x != NULL, "mtu 65535: %d", errno);
	cflow_ipfix_stats_get(x, &st);
	TEST_ASSERT(st.messages == 0 && st.sequence == 0 && st.pending == 0,
		"fresh counters");
	TEST_ASSERT_EQ(s.calls, 0u, "emitted at creation");
	cflow_ipfix_free(x);
	cflow_ipfix_free(NULL);
	return 0;
}

/* A flush with nothing to send still sends the templates, once. */
static int
test_ipfix_templates_only(void)
{
	uint8_t set[1024];
	size_t set_len = want_template_set(set);
	struct cflow_ipfix *x;
	struct sink s;
	const uint8_t *m;

	x = make(&s, 0, 0, 0, 0);
	TEST_ASSERT(x != NULL, "create");
	TEST_ASSERT_EQ(set_len, (size_t)CFLOW_IPFIX_TEMPLATE_SET_LEN,
		"template set of %zu bytes", set_len);
	TEST_ASSERT_EQ(cflow_ipfix_flush(x, NOW), 1, "flush");
	TEST_ASSERT_EQ(s.n, 1u, "%u messages", s.n);
	m = s.msg[0];
	TEST_ASSERT_EQ(s.len[0], 16 + set_len, "length %zu", s.len[0]);
	/* version 10, length, export time, sequence 0, domain 1 */
	TEST_ASSERT(m[0] == 0 && m[1] == 10, "version");
	TEST_ASSERT_EQ(rd16(m + 2), 16 + set_len, "length field");
	TEST_ASSERT_EQ(rd32(m + 4), NOW, "export time %u", rd32(m + 4));
	TEST_ASSERT_EQ(rd32(m + 8), 0u, "sequence");
	TEST_ASSERT_EQ(rd32(m + 12), 1u, "default domain");
	TEST_ASSERT(memcmp(m + 16, set, set_len) == 0, "template set");
	/* Not due again within the refresh: nothing to send. */
	TEST_ASSERT_EQ(cflow_ipfix_flush(x, NOW + 59), 0, "second flush");
	TEST_ASSERT_EQ(s.n, 1u, "%u messages", s.n);
	TEST_ASSERT_EQ(cflow_ipfix_flush(x, NOW + 60), 1, "refresh flush");
	TEST_ASSERT_EQ(s.n, 2u, "%u messages", s.n);
	TEST_ASSERT(s.len[1] == s.len[0] &&
		memcmp(s.msg[1] + 8, s.msg[0] + 8, s.len[0] - 8) == 0 &&
		rd32(s.msg[1] + 4) == NOW + 60, "the refresh differs");
	cflow_ipfix_free(x);
	sink_free(&s);
	return 0;
}

static const uint8_t rec_v4[61] = {
	0xc0, 0x00, 0x02, 0x01,                         /* 192.0.2.1 */
	0xc6, 0x33, 0x64, 0x07,                         /* 198.51.100.7 */
	0x9c, 0x40, 0x01, 0xbb,                         /* 40000, 443 */
	0x06,                                           /* TCP */
	0x1b,                                           /* FIN SYN PSH ACK */
	0x00, 0x00,                                     /* no ICMP */
	0x00, 0x00, 0x00, 0x04,                         /* port 3, + 1 */
	0x00, 0x00, 0x01, 0x9a, 0xba, 0x99, 0x4c, 0x7b, /* 1764067200123 */
	0x00, 0x00, 0x01, 0x9a, 0xba, 0x99, 0x50, 0x62, /* 1764067201122 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0xb6, /* 1974 bytes */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, /* 8 packets */
	0x03,                                           /* end of Flow */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, /* flow 42 */
};

static const uint8_t rec_v6[85] = {
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, /* 2001:db8::1 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, /* 2001:db8::2:3 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x03,
	0x00, 0x00, 0x00, 0x00,                         /* no ports */
	0x3a,                                           /* ICMPv6 */
	0x00,                                           /* no flags */
	0x80, 0x00,                                     /* echo request */
	0x00, 0x00, 0xff, 0xff,                         /* port 65534, + 1 */
	0x00, 0x00, 0x01, 0x9a, 0xba, 0x99, 0x57, 0xb8, /* 1764067203000 */
	0x00, 0x00, 0x01, 0x9a, 0xba, 0x9a, 0x45, 0xff, /* 1764067263999 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x38, /* 312 bytes */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, /* 3 packets */
	0x01,                                           /* idle timeout */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* flow id */
};

/* One IPv4 TCP record and one IPv6 ICMPv6 record, byte for byte. */
static int
test_ipfix_records(void)
{
	struct cflow_flow_record a = {
		.flow_id = 42,
		.first_ns = UINT64_C(1764067200123456789),
		.last_ns = UINT64_C(1764067201122999999),
		.packets = 8, .bytes = 1974,
		.src = {192, 0, 2, 1},
		.dst = {198, 51, 100, 7},
		.sport = 40000, .dport = 443, .port = 3, .worker = 7,
		.family = 4, .proto = 6, .proto_class = CFLOW_CLASS_TCP,
		.reason = CFLOW_RECORD_END, .tcp_flags = 0x1b,
	};
	struct cflow_flow_record b = {
		.flow_id = UINT64_C(0x0102030405060708),
		.first_ns = UINT64_C(1764067203000000000),
		.last_ns = UINT64_C(1764067263999999999),
		.packets = 3, .bytes = 312, .port = 65534, .worker = 1,
		.family = 6, .proto = 58, .proto_class = CFLOW_CLASS_ICMP,
		.reason = CFLOW_RECORD_IDLE, .icmp_type = 128,
	};
	uint8_t set[1024];
	size_t set_len = want_template_set(set), off;
	struct cflow_ipfix_stats st;
	struct cflow_ipfix *x;
	struct sink s;
	const uint8_t *m;

	inet_pton(AF_INET6, "2001:db8::1", b.src);
	inet_pton(AF_INET6, "2001:db8::2:3", b.dst);
	x = make(&s, 0xdeadbeef, 0, 0, 0);
	TEST_ASSERT(x != NULL, "create");
	TEST_ASSERT_EQ(cflow_ipfix_add(x, &b, NOW), 0, "add b");
	TEST_ASSERT_EQ(cflow_ipfix_add(x, &a, NOW), 0, "add a");
	TEST_ASSERT_EQ(s.n, 0u, "emitted before the flush");
	cflow_ipfix_stats_get(x, &st);
	TEST_ASSERT_EQ(st.pending, 2u, "pending %llu",
		(unsigned long long)st.pending);
	TEST_ASSERT_EQ(cflow_ipfix_flush(x, NOW + 1), 1, "flush");
	TEST_ASSERT_EQ(s.n, 1u, "%u messages", s.n);
	m = s.msg[0];
	TEST_ASSERT_EQ(s.len[0], 16 + set_len + 4 + 61 + 4 + 85,
		"length %zu", s.len[0]);
	TEST_ASSERT_EQ(rd16(m + 2), s.len[0], "length field");
	TEST_ASSERT_EQ(rd32(m + 4), NOW + 1, "export time: the flush's");
	TEST_ASSERT_EQ(rd32(m + 8), 0u, "sequence");
	TEST_ASSERT_EQ(rd32(m + 12), 0xdeadbeefu, "domain");
	TEST_ASSERT(memcmp(m + 16, set, set_len) == 0, "template set");
	off = 16 + set_len;
	TEST_ASSERT(rd16(m + off) == 256 && rd16(m + off + 2) == 4 + 61,
		"set 256 header: %u %u", rd16(m + off), rd16(m + off + 2));
	TEST_ASSERT(memcmp(m + off + 4, rec_v4, 61) == 0, "IPv4 record");
	off += 4 + 61;
	TEST_ASSERT(rd16(m + off) == 257 && rd16(m + off + 2) == 4 + 85,
		"set 257 header: %u %u", rd16(m + off), rd16(m + off + 2));
	TEST_ASSERT(memcmp(m + off + 4, rec_v6, 85) == 0, "IPv6 record");
	cflow_ipfix_stats_get(x, &st);
	TEST_ASSERT(st.messages == 1 && st.records == 2 &&
		st.template_msgs == 1 && st.bytes == s.len[0] &&
		st.pending == 0 && st.sequence == 2, "counters");
	/* Nothing left: no message. */
	TEST_ASSERT_EQ(cflow_ipfix_flush(x, NOW + 2), 0, "empty flush");
	cflow_ipfix_free(x);
	sink_free(&s);
	return 0;
}

static int
test_ipfix_bad_record(void)
{
	struct cflow_flow_record e = rec4(CFLOW_RECORD_IDLE, 1, 1000, 0);
	struct cflow_ipfix_stats st;
	struct cflow_ipfix *x;
	struct sink s;

	x = make(&s, 0, 0, 0, 0);
	TEST_ASSERT(x != NULL, "create");
	e.family = 5;
	errno = 0;
	TEST_ASSERT(cflow_ipfix_add(x, &e, NOW) == -EINVAL &&
		errno == EINVAL, "family 5");
	e.family = 4;
	e.reason = 0;
	TEST_ASSERT_EQ(cflow_ipfix_add(x, &e, NOW), -EINVAL, "reason 0");
	e.reason = 6;
	TEST_ASSERT_EQ(cflow_ipfix_add(x, &e, NOW), -EINVAL, "reason 6");
	cflow_ipfix_stats_get(x, &st);
	TEST_ASSERT_EQ(st.pending, 0u, "taken");
	cflow_ipfix_free(x);
	sink_free(&s);
	return 0;
}

/*
 * Many records of both templates, in a mixed order, through the smallest
 * and the default message sizes: every message within the size, none
 * that could have taken the next record, the sequence number the count
 * of records before, every record found back exactly once.
 */
static int
split_run(uint16_t mtu, unsigned int nev)
{
	struct cflow_flow_record *ev = calloc(nev, sizeof(*ev));
	unsigned int next[2] = {0}, total = 0;
	struct decoded d;
	struct cflow_ipfix *x;
	struct sink s;
	uint32_t seq = 0;
	unsigned int i;
	int ret = -1;

	TEST_ASSERT(ev != NULL, "calloc");
	x = make(&s, 9, 0, 0, mtu);
	TEST_ASSERT(x != NULL, "create");
	if (mtu == 0)
		mtu = CFLOW_IPFIX_MTU_DEFAULT;
	for (i = 0; i < nev; i++) {
		uint8_t reason = (uint8_t)(1 + i * 7 % 5);
		uint64_t t = UINT64_C(1764067200000000000) +
			(uint64_t)i * 1234567;

		ev[i] = (i * 5 % 7) < 3 ? rec6(reason, (uint8_t)i,
			(uint16_t)(1024 + i), t) : rec4(reason, (uint8_t)i,
			(uint16_t)(1024 + i), t);
		ev[i].bytes = 40 + i;
		ev[i].packets = 1 + i % 9;
		ev[i].flow_id = i + 1;
		ev[i].port = (uint16_t)(i % 3);
		if (i % 11 == 0) {
			ev[i].proto = ev[i].family == 6 ? 58 : 1;
			ev[i].proto_class = CFLOW_CLASS_ICMP;
			ev[i].sport = ev[i].dport = 0;
			ev[i].tcp_flags = 0;
			ev[i].icmp_type = (uint8_t)(i % 256);
			ev[i].icmp_code = (uint8_t)(i % 7);
		}
		if (cflow_ipfix_add(x, &ev[i], NOW) != 0)
			goto out;
	}
	if (cflow_ipfix_flush(x, NOW) != 1)
		goto out;
	for (unsigned int k = 0; k < s.n; k++) {
		if (decode(s.msg[k], s.len[k], &d) != 0)
			goto out;
		TEST_ASSERT(s.len[k] <= mtu, "message %u: %zu > %u", k,
			s.len[k], mtu);
		TEST_ASSERT_EQ(d.seq, seq, "message %u: sequence %u, want %u",
			k, d.seq, seq);
		TEST_ASSERT_EQ(d.domain, 9u, "domain");
		TEST_ASSERT_EQ(d.templates, k == 0, "message %u: templates %d",
			k, d.templates);
		TEST_ASSERT(d.records > 0, "message %u: no records", k);
		seq += d.records;
		/* Records come back per template, in event order. */
		for (unsigned int r = 0; r < d.records; r++) {
			const struct cflow_flow_record *g = &d.rec[r];
			unsigned int t = tmpl_of(g);

			while (next[t] < nev && tmpl_of(&ev[next[t]]) != t)
				next[t]++;
			TEST_ASSERT(next[t] < nev && same_record(g, &ev[next[t]]),
				"message %u record %u: not record %u", k, r,
				next[t]);
			next[t]++;
		}
		total += d.records;
		/* Full: the next message's first record did not fit. */
		if (k + 1 < s.n) {
			struct decoded d2;
			unsigned int t2, need;

			if (decode(s.msg[k + 1], s.len[k + 1], &d2) != 0)
				goto out;
			/* The record added first into message k + 1 is the
			 * one after the last record of message k. */
			t2 = tmpl_of(&ev[seq]);
			need = want_tmpl[t2].rec_len +
				(d.by_tmpl[t2] == 0 ? 4 : 0);
			TEST_ASSERT(s.len[k] + need > mtu,
				"message %u of %zu bytes had room for %u", k,
				s.len[k], need);
		}
	}
	TEST_ASSERT_EQ(total, nev, "%u records of %u", total, nev);
	ret = 0;
out:
	cflow_ipfix_free(x);
	sink_free(&s);
	free(ev);
	return ret;
}

/* A message the records fill to the last byte. */
static int
exact_fit(void)
{
	struct cflow_flow_record e = rec4(CFLOW_RECORD_IDLE, 1, 1000, 0);
	const uint16_t mtu = 16 + 124 + 4 + 8 * 61;
	struct cflow_ipfix *x;
	struct sink s;

	x = make(&s, 0, 0, 0, mtu);
	TEST_ASSERT(x != NULL, "create");
	for (unsigned int i = 0; i < 8; i++)
		TEST_ASSERT_EQ(cflow_ipfix_add(x, &e, NOW), 0, "add");
	TEST_ASSERT_EQ(s.n, 0u, "emitted with room left");
	TEST_ASSERT_EQ(cflow_ipfix_add(x, &e, NOW), 0, "add");
	TEST_ASSERT(s.n == 1 && s.len[0] == mtu, "%u messages, %zu bytes",
		s.n, s.len[0]);
	cflow_ipfix_free(x);
	sink_free(&s);
	return 0;
}

static int
test_ipfix_split(void)
{
	if (exact_fit() != 0)
		return -1;
	if (split_run(CFLOW_IPFIX_MTU_MIN, 500) != 0)
		return -1;
	if (split_run(0, 2000) != 0)
		return -1;
	return split_run(1000, 2000);
}

/* Templates again after template_refresh_s, and after N messages. */
static int
test_ipfix_refresh(void)
{
	struct cflow_flow_record e = rec4(CFLOW_RECORD_IDLE, 1, 1000, 0);
	struct decoded d;
	struct cflow_ipfix *x;
	struct sink s;
	/* now_s of each one-record message; templates expected */
	static const struct {
		uint64_t now;
		bool templates;
	} steps[] = {
		{NOW, true}, {NOW + 1, false}, {NOW + 9, false},
		{NOW + 10, true}, {NOW + 19, false}, {NOW + 25, true},
		/* the clock going back: sent again */
		{NOW + 20, true}, {NOW + 21, false},
	};

	x = make(&s, 0, 10, 0, 0);
	TEST_ASSERT(x != NULL, "create");
	for (unsigned int i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		TEST_ASSERT_EQ(cflow_ipfix_add(x, &e, steps[i].now), 0, "add");
		TEST_ASSERT_EQ(cflow_ipfix_flush(x, steps[i].now), 1, "flush");
		TEST_ASSERT_EQ(s.n, i + 1, "messages");
		if (decode(s.msg[i], s.len[i], &d) != 0)
			return -1;
		TEST_ASSERT_EQ(d.templates, steps[i].templates,
			"step %u (now + %llu): templates %d", i,
			(unsigned long long)(steps[i].now - NOW), d.templates);
		TEST_ASSERT_EQ(d.seq, i, "sequence");
	}
	cflow_ipfix_free(x);
	sink_free(&s);

	/* Every 3 messages without them, within the time refresh. */
	x = make(&s, 0, 0, 3, 0);
	TEST_ASSERT(x != NULL, "create");
	for (unsigned int i = 0; i < 9; i++) {
		TEST_ASSERT_EQ(cflow_ipfix_add(x, &e, NOW), 0, "add");
		TEST_ASSERT_EQ(cflow_ipfix_flush(x, NOW), 1, "flush");
		if (decode(s.msg[i], s.len[i], &d) != 0)
			return -1;
		TEST_ASSERT_EQ(d.templates, i % 4 == 0, "message %u", i);
	}
	cflow_ipfix_free(x);
	sink_free(&s);
	return 0;
}

/*
 * A message emit refuses: add returns its error, the record is kept for
 * the next message, the lost records still count in the sequence, and
 * templates it carried go again.
 */
static int
test_ipfix_emit_fails(void)
{
	struct cflow_flow_record e = rec4(CFLOW_RECORD_IDLE, 1, 1000, 0);
	struct cflow_ipfix_stats st;
	struct decoded d;
	struct cflow_ipfix *x;
	unsigned int i, lost;
	struct sink s;
	int ret = 0;

	x = make(&s, 0, 0, 0, CFLOW_IPFIX_MTU_MIN);
	TEST_ASSERT(x != NULL, "create");
	s.fail = -ECONNREFUSED;
	for (i = 0; i < 100 && ret == 0; i++)
		ret = cflow_ipfix_add(x, &e, NOW);
	TEST_ASSERT(ret == -ECONNREFUSED && errno == ECONNREFUSED,
		"add: %d", ret);
	lost = i - 1;   /* the last one is in the next message */
	cflow_ipfix_stats_get(x, &st);
	TEST_ASSERT(st.failed == 1 && st.records_lost == lost &&
		st.messages == 0 && st.pending == 1 && st.sequence == lost,
		"counters after the failure");
	s.fail = 0;
	TEST_ASSERT_EQ(cflow_ipfix_flush(x, NOW), 1, "flush");
	TEST_ASSERT_EQ(s.n, 1u, "messages");
	if (decode(s.msg[0], s.len[0], &d) != 0)
		return -1;
	TEST_ASSERT(d.templates && d.records == 1 && d.seq == lost,
		"after the loss: templates %d, %u records, sequence %u",
		d.templates, d.records, d.seq);
	s.fail = -EAGAIN;
	TEST_ASSERT_EQ(cflow_ipfix_add(x, &e, NOW), 0, "add");
	TEST_ASSERT_EQ(cflow_ipfix_flush(x, NOW), -EAGAIN, "flush fails");
	cflow_ipfix_free(x);
	sink_free(&s);
	return 0;
}

/* Export time modulo 2^32, the domain's full 32 bits, the sequence. */
static int
test_ipfix_header_fields(void)
{
	struct cflow_flow_record e = rec6(CFLOW_RECORD_END, 1, 1000, 0);
	struct cflow_ipfix *x;
	struct sink s;
	uint64_t big = (UINT64_C(1) << 32) + 5;

	x = make(&s, 0xffffffff, 0, 0, 0);
	TEST_ASSERT(x != NULL, "create");
	for (unsigned int i = 0; i < 3; i++) {
		TEST_ASSERT_EQ(cflow_ipfix_add(x, &e, big), 0, "add");
		TEST_ASSERT_EQ(cflow_ipfix_add(x, &e, big), 0, "add");
		TEST_ASSERT_EQ(cflow_ipfix_flush(x, big), 1, "flush");
	}
	TEST_ASSERT_EQ(s.n, 3u, "messages");
	for (unsigned int i = 0; i < 3; i++) {
		TEST_ASSERT_EQ(rd32(s.msg[i] + 4), 5u, "export time mod 2^32");
		TEST_ASSERT_EQ(rd32(s.msg[i] + 8), 2 * i, "sequence");
		TEST_ASSERT_EQ(rd32(s.msg[i] + 12), 0xffffffffu, "domain");
	}
	cflow_ipfix_free(x);
	sink_free(&s);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_ipfix_create_params),
	TEST_CASE(test_ipfix_templates_only),
	TEST_CASE(test_ipfix_records),
	TEST_CASE(test_ipfix_bad_record),
	TEST_CASE(test_ipfix_split),
	TEST_CASE(test_ipfix_refresh),
	TEST_CASE(test_ipfix_emit_fails),
	TEST_CASE(test_ipfix_header_fields),
	TEST_CASES_END()
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
