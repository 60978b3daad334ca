/* SPDX-License-Identifier: BSD-3-Clause */

/* Flow events: filled from a parsed packet, written as JSON. */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cflow_event.h"
#include "cfutil.h"

_Static_assert(sizeof(struct cflow_event) == 64, "cflow_event: 64 bytes");

int
cflow_event_init(struct cflow_event *e, const struct cflow_packet *pkt,
		enum cflow_verdict verdict, uint64_t time_ns, uint32_t wire_len)
{
	const struct cflow_key *k = &pkt->key;
	bool rev = pkt->reversed;

	if (verdict != CFLOW_NEW && verdict != CFLOW_CLOSING)
		return 0;
	memset(e, 0, sizeof(*e));
	e->time_ns = time_ns;
	if (k->family == 4) {
		/* the key's are IPv4-mapped */
		memcpy(e->src, (rev ? k->addr_hi : k->addr_lo) + 12, 4);
		memcpy(e->dst, (rev ? k->addr_lo : k->addr_hi) + 12, 4);
	} else {
		memcpy(e->src, rev ? k->addr_hi : k->addr_lo, 16);
		memcpy(e->dst, rev ? k->addr_lo : k->addr_hi, 16);
	}
	e->sport = rev ? k->port_hi : k->port_lo;
	e->dport = rev ? k->port_lo : k->port_hi;
	e->family = k->family;
	e->proto = k->proto;
	e->proto_class = pkt->proto_class;
	e->tcp_flags = pkt->tcp_flags;
	e->icmp_type = pkt->icmp_type;
	e->icmp_code = pkt->icmp_code;
	e->wire_len = wire_len;
	if (verdict == CFLOW_NEW) {
		e->type = CFLOW_EVENT_NEW;
	} else {
		e->type = CFLOW_EVENT_CLOSE;
		e->reason = pkt->tcp_flags & CFLOW_TCP_RST ? CFLOW_CLOSE_RST :
			CFLOW_CLOSE_FIN;
	}
	return 1;
}

static const char *
class_name(unsigned int proto_class)
{
	static const char *const names[CFLOW_CLASS_MAX] = {
		[CFLOW_CLASS_TCP] = "tcp",
		[CFLOW_CLASS_UDP] = "udp",
		[CFLOW_CLASS_ICMP] = "icmp",
		[CFLOW_CLASS_OTHER] = "other",
	};

	return proto_class < CFLOW_CLASS_MAX ? names[proto_class] : "other";
}

static int
json_addrs(uint8_t family, const uint8_t *src, const uint8_t *dst,
		char *s, char *d)
{
	int af = family == 6 ? AF_INET6 : AF_INET;

	if (inet_ntop(af, src, s, INET6_ADDRSTRLEN) == NULL ||
			inet_ntop(af, dst, d, INET6_ADDRSTRLEN) == NULL) {
		s[0] = d[0] = '\0';
		return -1;
	}
	return 0;
}

static void
json_time(uint64_t ns, char *buf, size_t len)
{
	time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;
	size_t n;

	gmtime_r(&sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%09" PRIu64 "Z", ns % 1000000000u);
}

/* Schema 1, or 2 (@p v2) with a flow id unless 0. */
static int
event_json(const struct cflow_event *e, bool v2, uint64_t flow_id, char *buf,
		size_t len)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], when[48];
	char id[40] = "";
	int n;

	(void)json_addrs(e->family, e->src, e->dst, src, dst);
	json_time(e->time_ns, when, sizeof(when));
	if (flow_id != 0)
		snprintf(id, sizeof(id), ",\"flow\":%" PRIu64, flow_id);
	n = snprintf(buf, len, "{%s\"event\":\"%s\"%s,\"time\":\"%s\","
		"\"time_ns\":%" PRIu64 ",\"worker\":%u,\"port\":%u,"
		"\"proto\":%u,\"class\":\"%s\",\"src\":\"%s\",\"sport\":%u,"
		"\"dst\":\"%s\",\"dport\":%u,\"len\":%" PRIu32 ","
		"\"tcp_flags\":%u%s}", v2 ? "\"v\":2," : "",
		e->type == CFLOW_EVENT_NEW ? "new" : "close", id, when,
		e->time_ns, e->worker, e->port, e->proto,
		class_name(e->proto_class), src, e->sport, dst,
		e->dport, e->wire_len, e->tcp_flags,
		e->type != CFLOW_EVENT_CLOSE ? "" :
		e->reason == CFLOW_CLOSE_RST ? ",\"reason\":\"rst\"" :
		",\"reason\":\"fin\"");
	if (n < 0 || (size_t)n >= len)
		return cfu_fail(ENOSPC, NULL, 0, "event JSON");
	return n;
}

int
cflow_event_json(const struct cflow_event *e, char *buf, size_t len)
{
	return event_json(e, false, 0, buf, len);
}

int
cflow_event_json_v2(const struct cflow_event *e, uint64_t flow_id, char *buf,
		size_t len)
{
	return event_json(e, true, flow_id, buf, len);
}

static const char *const reason_names[] = {
	[CFLOW_RECORD_IDLE] = "idle",
	[CFLOW_RECORD_ACTIVE] = "active",
	[CFLOW_RECORD_END] = "end",
	[CFLOW_RECORD_FORCED] = "forced",
	[CFLOW_RECORD_RESOURCES] = "resources",
};

const char *
cflow_record_reason_name(unsigned int reason)
{
	return reason >= CFLOW_RECORD_IDLE &&
		reason <= CFLOW_RECORD_RESOURCES ? reason_names[reason] : "?";
}

int
cflow_flow_record_json(const struct cflow_flow_record *r, char *buf,
		size_t len)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], start[48], end[48];
	char icmp[48] = "";
	int n;

	(void)json_addrs(r->family, r->src, r->dst, src, dst);
	json_time(r->first_ns, start, sizeof(start));
	json_time(r->last_ns, end, sizeof(end));
	if (r->proto_class == CFLOW_CLASS_ICMP)
		snprintf(icmp, sizeof(icmp), ",\"icmp_type\":%u,"
			"\"icmp_code\":%u", r->icmp_type, r->icmp_code);
	n = snprintf(buf, len, "{\"v\":2,\"event\":\"record\",\"flow\":%"
		PRIu64 ",\"reason\":\"%s\",\"start\":\"%s\",\"start_ns\":%"
		PRIu64 ",\"end\":\"%s\",\"end_ns\":%" PRIu64 ","
		"\"worker\":%u,\"port\":%u,\"proto\":%u,\"class\":\"%s\","
		"\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\",\"dport\":%u,"
		"\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ","
		"\"tcp_flags\":%u%s}", r->flow_id,
		cflow_record_reason_name(r->reason), start, r->first_ns, end,
		r->last_ns, r->worker, r->port, r->proto,
		class_name(r->proto_class), src, r->sport, dst, r->dport,
		r->packets, r->bytes, r->tcp_flags, icmp);
	if (n < 0 || (size_t)n >= len)
		return cfu_fail(ENOSPC, NULL, 0, "record JSON");
	return n;
}
