/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * IPFIX exporter of flow records (RFC 7011). Each template is a list of
 * Information Elements; the same list writes the Template Record and
 * every Data Record of that template, so the two cannot disagree.
 *
 * The message being built is kept as one staging buffer of records per
 * template and its size; it is assembled (header, Template Set if it
 * carries one, a Data Set per template with records) only when emitted.
 * Records of one template share a set whatever their order: no set
 * header for every switch between IPv4 and IPv6.
 *
 * tcpControlBits (unsigned16 since RFC 7125) goes in one byte, the
 * reduced-size encoding of RFC 7011 6.2: the flags of a record are 8
 * bits, and decoders that take the field for NetFlow v9's one-byte
 * TCP_FLAGS whatever the template says (scapy 2.5's) read the record
 * right.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cflow_ipfix.h"
#include "cfutil.h"

#define IPFIX_VERSION 10
#define SET_TEMPLATE 2
#define SET_HDR_LEN 4
#define TMPL_HDR_LEN 4
#define NS_PER_MS UINT64_C(1000000)

/* IANA IPFIX Information Element IDs. */
enum ie_id {
	IE_OCTET_DELTA_COUNT = 1,
	IE_PACKET_DELTA_COUNT = 2,
	IE_PROTOCOL_IDENTIFIER = 4,
	IE_TCP_CONTROL_BITS = 6,
	IE_SOURCE_TRANSPORT_PORT = 7,
	IE_SOURCE_IPV4_ADDRESS = 8,
	IE_INGRESS_INTERFACE = 10,
	IE_DESTINATION_TRANSPORT_PORT = 11,
	IE_DESTINATION_IPV4_ADDRESS = 12,
	IE_SOURCE_IPV6_ADDRESS = 27,
	IE_DESTINATION_IPV6_ADDRESS = 28,
	IE_ICMP_TYPE_CODE_IPV4 = 32,
	IE_FLOW_END_REASON = 136,
	IE_ICMP_TYPE_CODE_IPV6 = 139,
	IE_FLOW_ID = 148,
	IE_FLOW_START_MILLISECONDS = 152,
	IE_FLOW_END_MILLISECONDS = 153,
};

struct ie {
	uint16_t id;
	uint16_t len;
};

#define MAX_IES 14

struct tmpl {
	unsigned int n;
	struct ie ie[MAX_IES];
};

#define ADDR_LEN4 4
#define ADDR_LEN6 16
#define IES_ADDR(v) \
	{ IE_SOURCE_IPV##v##_ADDRESS, ADDR_LEN##v }, \
	{ IE_DESTINATION_IPV##v##_ADDRESS, ADDR_LEN##v }
#define IES_REST(icmp) \
	{ IE_SOURCE_TRANSPORT_PORT, 2 }, \
	{ IE_DESTINATION_TRANSPORT_PORT, 2 }, \
	{ IE_PROTOCOL_IDENTIFIER, 1 }, \
	{ IE_TCP_CONTROL_BITS, 1 }, \
	{ icmp, 2 }, \
	{ IE_INGRESS_INTERFACE, 4 }, \
	{ IE_FLOW_START_MILLISECONDS, 8 }, \
	{ IE_FLOW_END_MILLISECONDS, 8 }, \
	{ IE_OCTET_DELTA_COUNT, 8 }, \
	{ IE_PACKET_DELTA_COUNT, 8 }, \
	{ IE_FLOW_END_REASON, 1 }, \
	{ IE_FLOW_ID, 8 }

/* By template ID less CFLOW_IPFIX_TMPL_V4 (enum cflow_ipfix_template). */
static const struct tmpl templates[CFLOW_IPFIX_TEMPLATES] = {
	{ 14, { IES_ADDR(4), IES_REST(IE_ICMP_TYPE_CODE_IPV4) } },
	{ 14, { IES_ADDR(6), IES_REST(IE_ICMP_TYPE_CODE_IPV6) } },
};

struct cflow_ipfix {
	struct cflow_ipfix_params p;    /* resolved */
	uint8_t *msg;                   /* assembly: p.mtu bytes */
	uint8_t *set[CFLOW_IPFIX_TEMPLATES]; /* records: p.mtu bytes each */
	uint32_t set_len[CFLOW_IPFIX_TEMPLATES];
	uint32_t set_records[CFLOW_IPFIX_TEMPLATES];
	uint16_t rec_len[CFLOW_IPFIX_TEMPLATES];
	uint8_t tmpl_set[CFLOW_IPFIX_TEMPLATE_SET_LEN];
	bool open;              /* a message is being built */
	bool with_templates;    /* and carries the Template Set */
	uint32_t len;           /* its size so far, header included */
	uint32_t records;       /* its Data Records */
	bool templates_sent;    /* ever */
	uint64_t templates_s;   /* when they last went */
	uint32_t msgs_without;  /* messages emitted since */
	uint32_t sequence;
	struct cflow_ipfix_stats stats;
};

static uint8_t *
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static uint8_t *
put32(uint8_t *p, uint32_t v)
{
	p = put16(p, (uint16_t)(v >> 16));
	return put16(p, (uint16_t)v);
}

static uint8_t *
put64(uint8_t *p, uint64_t v)
{
	p = put32(p, (uint32_t)(v >> 32));
	return put32(p, (uint32_t)v);
}

/* The Template Set: one Template Record per template. */
static uint32_t
write_template_set(uint8_t *b)
{
	uint8_t *p = b + SET_HDR_LEN;

	for (unsigned int t = 0; t < CFLOW_IPFIX_TEMPLATES; t++) {
		p = put16(p, (uint16_t)(CFLOW_IPFIX_TMPL_V4 + t));
		p = put16(p, (uint16_t)templates[t].n);
		for (unsigned int i = 0; i < templates[t].n; i++) {
			p = put16(p, templates[t].ie[i].id);
			p = put16(p, templates[t].ie[i].len);
		}
	}
	put16(b, SET_TEMPLATE);
	put16(b + 2, (uint16_t)(p - b));
	return (uint32_t)(p - b);
}

static uint32_t
record_len(const struct tmpl *t)
{
	uint32_t len = 0;

	for (unsigned int i = 0; i < t->n; i++)
		len += t->ie[i].len;
	return len;
}

/* @p e's Data Record of template @p t at @p p; returns its end. */
static uint8_t *
write_record(uint8_t *p, const struct tmpl *t,
		const struct cflow_flow_record *e)
{
	for (unsigned int i = 0; i < t->n; i++) {
		const struct ie *ie = &t->ie[i];

		switch (ie->id) {
		case IE_SOURCE_IPV4_ADDRESS:
		case IE_SOURCE_IPV6_ADDRESS:
			memcpy(p, e->src, ie->len);
			p += ie->len;
			break;
		case IE_DESTINATION_IPV4_ADDRESS:
		case IE_DESTINATION_IPV6_ADDRESS:
			memcpy(p, e->dst, ie->len);
			p += ie->len;
			break;
		case IE_SOURCE_TRANSPORT_PORT:
			p = put16(p, e->sport);
			break;
		case IE_DESTINATION_TRANSPORT_PORT:
			p = put16(p, e->dport);
			break;
		case IE_PROTOCOL_IDENTIFIER:
			*p++ = e->proto;
			break;
		case IE_TCP_CONTROL_BITS:
			*p++ = e->tcp_flags;
			break;
		case IE_ICMP_TYPE_CODE_IPV4:
		case IE_ICMP_TYPE_CODE_IPV6:
			p = put16(p, e->proto_class == CFLOW_CLASS_ICMP ?
				(uint16_t)(e->icmp_type << 8 | e->icmp_code) : 0);
			break;
		case IE_INGRESS_INTERFACE:
			/* the DPDK port number + 1: 0 means none */
			p = put32(p, (uint32_t)e->port + 1);
			break;
		case IE_FLOW_START_MILLISECONDS:
			p = put64(p, e->first_ns / NS_PER_MS);
			break;
		case IE_FLOW_END_MILLISECONDS:
			p = put64(p, e->last_ns / NS_PER_MS);
			break;
		case IE_OCTET_DELTA_COUNT:
			p = put64(p, e->bytes);
			break;
		case IE_PACKET_DELTA_COUNT:
			p = put64(p, e->packets);
			break;
		case IE_FLOW_END_REASON:
			*p++ = e->reason;
			break;
		case IE_FLOW_ID:
			p = put64(p, e->flow_id);
			break;
		default:
			CFU_ASSERT(0);
		}
	}
	return p;
}

struct cflow_ipfix *
cflow_ipfix_create(const struct cflow_ipfix_params *params)
{
	struct cflow_ipfix_params p = *params;
	struct cflow_ipfix *x;
	uint32_t len;

	if (p.observation_domain == 0)
		p.observation_domain = 1;
	if (p.template_refresh_s == 0)
		p.template_refresh_s = CFLOW_IPFIX_REFRESH_S;
	if (p.mtu == 0)
		p.mtu = CFLOW_IPFIX_MTU_DEFAULT;
	if (p.emit == NULL || p.mtu < CFLOW_IPFIX_MTU_MIN) {
		errno = EINVAL;
		return NULL;
	}
	/* The struct, the assembly buffer and a staging buffer each. */
	x = calloc(1, sizeof(*x) + (size_t)p.mtu * (1 + CFLOW_IPFIX_TEMPLATES));
	if (x == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	x->p = p;
	x->msg = (uint8_t *)(x + 1);
	for (unsigned int t = 0; t < CFLOW_IPFIX_TEMPLATES; t++) {
		x->set[t] = x->msg + (size_t)p.mtu * (1 + t);
		x->rec_len[t] = (uint16_t)record_len(&templates[t]);
	}
	len = write_template_set(x->tmpl_set);
	CFU_ASSERT(len == CFLOW_IPFIX_TEMPLATE_SET_LEN);
	(void)len;
	return x;
}

void
cflow_ipfix_free(struct cflow_ipfix *x)
{
	free(x);
}

static bool
templates_due(const struct cflow_ipfix *x, uint64_t now_s)
{
	if (!x->templates_sent || now_s < x->templates_s ||
			now_s - x->templates_s >= x->p.template_refresh_s)
		return true;
	return x->p.template_refresh_msgs != 0 &&
		x->msgs_without >= x->p.template_refresh_msgs;
}

static void
open_message(struct cflow_ipfix *x, uint64_t now_s)
{
	x->open = true;
	x->with_templates = templates_due(x, now_s);
	x->len = CFLOW_IPFIX_HDR_LEN +
		(x->with_templates ? CFLOW_IPFIX_TEMPLATE_SET_LEN : 0);
	x->records = 0;
}

/* Assemble the open message, hand it to emit and close it. */
static int
emit_message(struct cflow_ipfix *x, uint64_t now_s)
{
	uint8_t *p = x->msg + CFLOW_IPFIX_HDR_LEN;
	int ret;

	CFU_ASSERT(x->open);
	if (x->with_templates) {
		memcpy(p, x->tmpl_set, CFLOW_IPFIX_TEMPLATE_SET_LEN);
		p += CFLOW_IPFIX_TEMPLATE_SET_LEN;
	}
	for (unsigned int t = 0; t < CFLOW_IPFIX_TEMPLATES; t++) {
		if (x->set_records[t] == 0)
			continue;
		p = put16(p, (uint16_t)(CFLOW_IPFIX_TMPL_V4 + t));
		p = put16(p, (uint16_t)(SET_HDR_LEN + x->set_len[t]));
		memcpy(p, x->set[t], x->set_len[t]);
		p += x->set_len[t];
		x->set_len[t] = 0;
		x->set_records[t] = 0;
	}
	CFU_ASSERT((uint32_t)(p - x->msg) == x->len && x->len <= x->p.mtu);
	put16(x->msg, IPFIX_VERSION);
	put16(x->msg + 2, (uint16_t)x->len);
	put32(x->msg + 4, (uint32_t)now_s);
	put32(x->msg + 8, x->sequence);
	put32(x->msg + 12, x->p.observation_domain);

	ret = x->p.emit(x->msg, x->len, x->p.emit_arg);
	/* Records count in the sequence even if lost: the collector sees
	 * the gap. */
	x->sequence += x->records;
	x->stats.pending = 0;
	x->open = false;
	if (ret < 0) {
		x->stats.failed++;
		x->stats.records_lost += x->records;
		return ret;
	}
	x->stats.messages++;
	x->stats.records += x->records;
	x->stats.bytes += x->len;
	if (x->with_templates) {
		x->stats.template_msgs++;
		x->templates_sent = true;
		x->templates_s = now_s;
		x->msgs_without = 0;
	} else {
		x->msgs_without++;
	}
	return 0;
}

int
cflow_ipfix_add(struct cflow_ipfix *x, const struct cflow_flow_record *e,
		uint64_t now_s)
{
	unsigned int t;
	uint32_t need;
	int ret = 0;

	if ((e->family != 4 && e->family != 6) ||
			e->reason < CFLOW_RECORD_IDLE ||
			e->reason > CFLOW_RECORD_RESOURCES) {
		errno = EINVAL;
		return -EINVAL;
	}
	t = e->family == 6;
	need = x->rec_len[t] + (x->set_records[t] == 0 ? SET_HDR_LEN : 0);
	if (x->open && x->len + need > x->p.mtu) {
		ret = emit_message(x, now_s);
		need = x->rec_len[t] + SET_HDR_LEN;
	}
	if (!x->open)
		open_message(x, now_s);
	/* The templates and the largest record with its set header fit in
	 * CFLOW_IPFIX_MTU_MIN. */
	CFU_ASSERT(x->len + need <= x->p.mtu);
	write_record(x->set[t] + x->set_len[t], &templates[t], e);
	x->set_len[t] += x->rec_len[t];
	x->set_records[t]++;
	x->len += need;
	x->records++;
	x->stats.pending = x->records;
	if (ret < 0)
		errno = -ret;
	return ret;
}

int
cflow_ipfix_flush(struct cflow_ipfix *x, uint64_t now_s)
{
	int ret;

	if (!x->open || x->records == 0) {
		if (!templates_due(x, now_s))
			return 0;
		open_message(x, now_s);
	}
	ret = emit_message(x, now_s);
	if (ret < 0) {
		errno = -ret;
		return ret;
	}
	return 1;
}

void
cflow_ipfix_stats_get(const struct cflow_ipfix *x,
		struct cflow_ipfix_stats *s)
{
	*s = x->stats;
	s->sequence = x->sequence;
}
