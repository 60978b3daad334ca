/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_EVENT_H_
#define _CFLOW_EVENT_H_

/**
 * @file
 * lib/cflow's flow events: struct cflow_event, made from a tracked
 * packet and its verdict by cflow_event_init(), and its JSON form. The
 * IPFIX exporter (cflow_ipfix.h) encodes them.
 *
 * Part of cflow.h, which includes it.
 */

#include <stddef.h>
#include <stdint.h>

#include "cflow_parse.h"
#include "cflow_track.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Flow events: a new flow's first packet, and the TCP FIN or RST that
 * closed a flow (CFLOW_NEW and CFLOW_CLOSING verdicts), with the 5-tuple
 * of that packet in its own direction. Expiries have no event: a cuckoo
 * filter keeps fingerprints, not keys, so an expired flow cannot be
 * named (flows_expired counts them).
 */
enum cflow_event_type {
	CFLOW_EVENT_NEW = 1,
	CFLOW_EVENT_CLOSE = 2,
};

/** Why a flow closed (CFLOW_EVENT_CLOSE). */
enum cflow_close_reason {
	CFLOW_CLOSE_NONE = 0,     /**< a new-flow event */
	CFLOW_CLOSE_FIN = 1,
	CFLOW_CLOSE_RST = 2,
};

/** One flow event, 64 bytes. */
struct cflow_event {
	uint64_t time_ns;   /**< the packet's time, ns since the Unix epoch */
	uint8_t src[16];    /**< the packet's source (IPv4: first 4 bytes) */
	uint8_t dst[16];    /**< and destination */
	uint16_t sport;     /**< host order; 0 for ICMP and others */
	/** host order; 0 for ICMP and others */
	uint16_t dport;
	uint8_t family;     /**< 4 or 6 */
	uint8_t proto;      /**< IP protocol number */
	uint8_t type;       /**< enum cflow_event_type */
	uint8_t proto_class; /**< enum cflow_proto_class */
	uint8_t reason;     /**< enum cflow_close_reason: the closing
			     *  packet's source is the side that closed */
	uint8_t tcp_flags;  /**< the packet's */
	uint16_t port;      /**< ingress port */
	uint16_t worker;    /**< the worker that tracks the flow */
	uint16_t pad;       /**< 0 */
	uint32_t wire_len;  /**< the packet's length on the wire */
};

/**
 * An event of a packet whose verdict is CFLOW_NEW or CFLOW_CLOSING (else
 * 0 is returned and @p e is untouched): @p pkt's 5-tuple in its own
 * direction, @p time_ns and @p wire_len; port and worker are 0.
 *
 * @param e
 *   Receives the event (zeroed first); untouched if it has none.
 * @param pkt
 *   The packet, parsed (status CFLOW_PARSE_OK).
 * @param verdict
 *   The tracker's verdict on @p pkt.
 * @param time_ns
 *   The packet's time, ns since the Unix epoch.
 * @param wire_len
 *   The packet's length on the wire, in bytes.
 * @return
 *   1 if @p e was filled, 0 if the verdict has no event.
 */
int cflow_event_init(struct cflow_event *e, const struct cflow_packet *pkt,
		enum cflow_verdict verdict, uint64_t time_ns,
		uint32_t wire_len);

/**
 * One JSON object for @p e, without a newline (docs/usage.md, "Flow
 * events"): {"event":"new"|"close", "time":"<RFC 3339, ns>",
 * "time_ns":N, "worker":N, "port":N, "proto":N, "class":"tcp"|..,
 * "src":"..", "sport":N, "dst":"..", "dport":N, "len":N,
 * "tcp_flags":N[, "reason":"fin"|"rst"]}.
 *
 * @param e
 *   The event.
 * @param buf
 *   Receives the object, NUL-terminated.
 * @param len
 *   Size of @p buf in bytes.
 * @return
 *   Its length, or -ENOSPC (errno set) if it needs more than @p len - 1
 *   bytes (CFLOW_EVENT_JSON_MAX always suffices).
 */
int cflow_event_json(const struct cflow_event *e, char *buf, size_t len);

/** Bytes of a buffer that holds any event's cflow_event_json(), NUL
 * included. */
#define CFLOW_EVENT_JSON_MAX 384

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_EVENT_H_ */
