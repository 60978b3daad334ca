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
 * of that packet in its own direction. A flow's end is in its records
 * (cflow_records.h): a tracker with records names each flow by its
 * entry, and a key store kept from the new-flow events names its
 * records.
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
	uint8_t icmp_type;  /**< ICMP and ICMPv6: the packet's type */
	uint8_t icmp_code;  /**< and code; 0 for other protocols */
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

/**
 * cflow_event_json() of schema 2 (docs/usage.md, "Flow records"): "v":2
 * first, and "flow":@p flow_id after "event", the id that joins a new
 * flow's event to its records (0: none, left out). cflow_event_json() is
 * schema 1: no version key, no id.
 *
 * @param e
 *   The event.
 * @param flow_id
 *   Its flow's id (cflow_recstore_add()), or 0.
 * @param buf
 *   Receives the object, NUL-terminated.
 * @param len
 *   Size of @p buf in bytes.
 * @return
 *   Its length, or -ENOSPC (errno set) if it needs more than @p len - 1
 *   bytes (CFLOW_EVENT_JSON_MAX always suffices).
 */
int cflow_event_json_v2(const struct cflow_event *e, uint64_t flow_id,
		char *buf, size_t len);

/** Bytes of a buffer that holds any event's cflow_event_json(),
 * cflow_event_json_v2() or cflow_flow_record_json(), NUL included. */
#define CFLOW_EVENT_JSON_MAX 640

/**
 * A flow record as a collector gets it (IPFIX, JSON): a tracker's
 * struct cflow_record named back to its flow's key (cflow_records.h's
 * key store does it).
 */
struct cflow_flow_record {
	/** The flow's id, also in its new-flow event (schema 2): its
	 *  records and that event join on it. */
	uint64_t flow_id;
	uint64_t first_ns;  /**< the record's first packet, ns since the
			     *  Unix epoch */
	uint64_t last_ns;   /**< its last packet (to 1/256 of a tick) */
	uint64_t packets;   /**< both directions */
	uint64_t bytes;     /**< IP octets, both directions */
	uint8_t src[16];    /**< the flow's first packet's source (IPv4:
			     *  first 4 bytes) */
	uint8_t dst[16];    /**< and destination */
	uint16_t sport;     /**< host order; 0 for ICMP and others */
	uint16_t dport;     /**< host order; 0 for ICMP and others */
	uint16_t port;      /**< the first packet's ingress port */
	uint16_t worker;    /**< the worker that tracks the flow */
	uint8_t family;     /**< 4 or 6 */
	uint8_t proto;      /**< IP protocol number */
	uint8_t proto_class; /**< enum cflow_proto_class */
	uint8_t reason;     /**< enum cflow_record_reason, 1..5 */
	uint8_t tcp_flags;  /**< OR of the flags of its packets */
	uint8_t icmp_type;  /**< ICMP and ICMPv6: the first packet's */
	uint8_t icmp_code;  /**< and code */
	uint8_t pad;        /**< 0 */
};

/**
 * The name of an end reason.
 *
 * @param reason
 *   enum cflow_record_reason.
 * @return
 *   "idle", "active", "end", "forced", "resources"; "?" for others.
 */
const char *cflow_record_reason_name(unsigned int reason);

/**
 * One JSON object for @p r, without a newline (schema 2, docs/usage.md,
 * "Flow records"): {"v":2, "event":"record", "flow":N,
 * "reason":"idle"|"active"|"end"|"forced"|"resources", "start":"<RFC
 * 3339, ns>", "start_ns":N, "end":"..", "end_ns":N, "worker":N,
 * "port":N, "proto":N, "class":"tcp"|.., "src":"..", "sport":N,
 * "dst":"..", "dport":N, "packets":N, "bytes":N, "tcp_flags":N[,
 * "icmp_type":N, "icmp_code":N]}.
 *
 * @param r
 *   The record.
 * @param buf
 *   Receives the object, NUL-terminated.
 * @param len
 *   Size of @p buf in bytes.
 * @return
 *   Its length, or -ENOSPC (errno set) if it needs more than @p len - 1
 *   bytes (CFLOW_EVENT_JSON_MAX always suffices).
 */
int cflow_flow_record_json(const struct cflow_flow_record *r, char *buf,
		size_t len);

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_EVENT_H_ */
