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

static const char *const class_names[CFLOW_CLASS_MAX] = {
	[CFLOW_CLASS_TCP] = "tcp",
	[CFLOW_CLASS_UDP] = "udp",
	[CFLOW_CLASS_ICMP] = "icmp",
	[CFLOW_CLASS_OTHER] = "other",
};

int
cflow_event_json(const struct cflow_event *e, char *buf, size_t len)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], when[40];
	int af = e->family == 6 ? AF_INET6 : AF_INET;
	time_t sec = (time_t)(e->time_ns / 1000000000u);
	struct tm tm;
	int n;

	if (inet_ntop(af, e->src, src, sizeof(src)) == NULL ||
			inet_ntop(af, e->dst, dst, sizeof(dst)) == NULL)
		src[0] = dst[0] = '\0';
	gmtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(buf, len, "{\"event\":\"%s\",\"time\":\"%s.%09" PRIu64
		"Z\",\"time_ns\":%" PRIu64 ",\"worker\":%u,\"port\":%u,"
		"\"proto\":%u,\"class\":\"%s\",\"src\":\"%s\",\"sport\":%u,"
		"\"dst\":\"%s\",\"dport\":%u,\"len\":%" PRIu32 ","
		"\"tcp_flags\":%u%s}",
		e->type == CFLOW_EVENT_NEW ? "new" : "close", when,
		e->time_ns % 1000000000u, e->time_ns, e->worker, e->port,
		e->proto, e->proto_class < CFLOW_CLASS_MAX ?
		class_names[e->proto_class] : "other", src, e->sport, dst,
		e->dport, e->wire_len, e->tcp_flags,
		e->type != CFLOW_EVENT_CLOSE ? "" :
		e->reason == CFLOW_CLOSE_RST ? ",\"reason\":\"rst\"" :
		",\"reason\":\"fin\"");
	if (n < 0 || (size_t)n >= len)
		return cfu_fail(ENOSPC, NULL, 0, "event JSON");
	return n;
}
