/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_IPFIX_H_
#define _CFLOW_IPFIX_H_

/**
 * @file
 * An IPFIX (RFC 7011) exporter of flow records (struct
 * cflow_flow_record): each record becomes one Data Record, records are
 * packed into messages of at most a given size, and each complete
 * message is handed to the caller's emit function, which sends it (over
 * UDP, typically). No sockets, no threads, no DPDK; not thread safe: one
 * encoder per sending thread.
 *
 * Templates (IANA Information Elements, no enterprise ones), one per
 * family (enum cflow_ipfix_template), 14 elements:
 *
 *   sourceIPv4Address (8) or sourceIPv6Address (27)             4 / 16
 *   destinationIPv4Address (12) or destinationIPv6Address (28)  4 / 16
 *   sourceTransportPort (7), destinationTransportPort (11)      2, 2
 *   protocolIdentifier (4)                                      1
 *   tcpControlBits (6): OR of the flow's (reduced size)         1
 *   icmpTypeCodeIPv4 (32) or icmpTypeCodeIPv6 (139): type * 256
 *     + code of the flow's first packet; 0 for other protocols  2
 *   ingressInterface (10): the first packet's port + 1          4
 *   flowStartMilliseconds (152), flowEndMilliseconds (153):
 *     the record's first and last packets                       8, 8
 *   octetDeltaCount (1): IP octets, both directions             8
 *   packetDeltaCount (2): packets, both directions              8
 *   flowEndReason (136): enum cflow_record_reason, 1..5         1
 *   flowId (148): the flow's id, as in its new-flow event       8
 *
 * A record covers both directions of its flow (a biflow counted as one),
 * its addresses and ports those of the flow's first packet: the side that
 * opened it is the source. Each flow's records are consecutive: a record
 * cut by an active timeout (flowEndReason 2) counts since the previous
 * one (delta counts), and the flow's last record carries how it ended.
 *
 * Messages: the header (version 10, length, export time in seconds,
 * sequence number, observation domain), then the Template Set if due,
 * then one Data Set per template with records, in template order. The
 * sequence number is the count, modulo 2^32, of Data Records in the
 * messages emitted before (RFC 7011 3.1), Template Records not counted.
 * A record is never split across messages.
 *
 * Templates go in the first message, then again in the first message
 * opened template_refresh_s seconds or more after they last went (and
 * after template_refresh_msgs messages without them, if set): over UDP a
 * collector that started late, or lost them, learns them again.
 */

#include <stddef.h>
#include <stdint.h>

#include "cflow_event.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Template IDs, in the order of their Data Sets within a message. */
enum cflow_ipfix_template {
	CFLOW_IPFIX_TMPL_V4 = 256,   /**< IPv4 flow: 14 IEs, 61 bytes */
	CFLOW_IPFIX_TMPL_V6 = 257,   /**< IPv6 flow: 14 IEs, 85 bytes */
};

/** Templates: CFLOW_IPFIX_TMPL_V4 .. + CFLOW_IPFIX_TEMPLATES - 1. */
#define CFLOW_IPFIX_TEMPLATES 2
/** Bytes of the Template Set with both templates. */
#define CFLOW_IPFIX_TEMPLATE_SET_LEN 124
/** IPFIX message header bytes. */
#define CFLOW_IPFIX_HDR_LEN 16
/** Default largest message, bytes (a UDP payload that fits a 1500-byte
 *  path MTU with IPv6 and room to spare). */
#define CFLOW_IPFIX_MTU_DEFAULT 1400
/** Smallest accepted message size (RFC 7011 10.3.3: 512 bytes when the
 *  path MTU is unknown); the templates and a record fit in far less. */
#define CFLOW_IPFIX_MTU_MIN 512
/**
 * Default template refresh, seconds. RFC 7011 leaves it to the
 * configuration (the IPFIX YANG model's default is 600 s); one minute
 * means a collector started after the exporter, or one that lost the
 * templates to UDP, decodes records within a minute.
 */
#define CFLOW_IPFIX_REFRESH_S 60

/**
 * Hands one complete message to the caller, who sends it (one UDP
 * datagram). @p msg is the encoder's, valid during the call only.
 *
 * @param msg
 *   The message: header, sets and records, in network byte order.
 * @param len
 *   Its length in bytes, at most the encoder's mtu.
 * @param arg
 *   cflow_ipfix_params.emit_arg.
 * @return
 *   0, or a negative errno: the message is counted lost (its records
 *   still count in the sequence numbers, so that a collector sees the
 *   gap), and templates it carried are sent again in the next message.
 */
typedef int (*cflow_ipfix_emit_t)(const uint8_t *msg, size_t len,
		void *arg);

/**
 * Exporter parameters. Zero in any field but emit selects the default.
 */
struct cflow_ipfix_params {
	/** Observation Domain ID of every message (default 1; RFC 7011
	 *  keeps 0 for messages about no domain in particular). Its
	 *  sequence numbers are this encoder's: two encoders sending to one
	 *  collector need domains of their own. */
	uint32_t observation_domain;
	/** Seconds between template sends (default CFLOW_IPFIX_REFRESH_S). */
	uint32_t template_refresh_s;
	/** Also send the templates after this many messages without them
	 *  (default 0: by time only). */
	uint32_t template_refresh_msgs;
	/** Largest message in bytes, header included: the UDP payload
	 *  (default CFLOW_IPFIX_MTU_DEFAULT; at least CFLOW_IPFIX_MTU_MIN). */
	uint16_t mtu;
	cflow_ipfix_emit_t emit; /**< required */
	void *emit_arg;          /**< passed to emit */
};

/** Counters of an encoder, since its creation. */
struct cflow_ipfix_stats {
	uint64_t messages;     /**< messages emitted (emit returned 0) */
	uint64_t records;      /**< Data Records in them */
	uint64_t bytes;        /**< their bytes */
	uint64_t template_msgs; /**< of them, messages with the templates */
	uint64_t failed;       /**< messages emit refused */
	uint64_t records_lost; /**< Data Records in those */
	uint64_t pending;      /**< records in the message not yet emitted */
	uint32_t sequence;     /**< the next message's sequence number */
};

struct cflow_ipfix;

/**
 * Create an encoder; @p p is copied. Nothing is emitted yet.
 *
 * @param p
 *   The parameters (see struct cflow_ipfix_params).
 * @return
 *   The encoder, or NULL with errno set: EINVAL if emit is NULL or mtu
 *   is below CFLOW_IPFIX_MTU_MIN; ENOMEM.
 */
struct cflow_ipfix *cflow_ipfix_create(const struct cflow_ipfix_params *p);

/**
 * Free an encoder, dropping a message not yet emitted (flush first);
 * NULL is accepted.
 *
 * @param x
 *   The encoder, or NULL.
 */
void cflow_ipfix_free(struct cflow_ipfix *x);

/**
 * Append @p r to the message being built. If it does not fit, that
 * message is emitted first and a new one opened (with the templates if
 * they are due at @p now_s), which takes the record.
 *
 * @param x
 *   The encoder.
 * @param r
 *   The record (cflow_recstore_name()); copied into the message.
 * @param now_s
 *   Seconds since the Unix epoch: the export time of a message emitted
 *   now, and the clock of the template refresh.
 * @return
 *   0; -EINVAL (errno set) for a record of another family than 4 or 6
 *   or a reason out of 1..5, which is dropped; or emit's negative
 *   return if it refused the message it had to emit (the record is
 *   taken nonetheless).
 */
int cflow_ipfix_add(struct cflow_ipfix *x, const struct cflow_flow_record *r,
		uint64_t now_s);

/**
 * Emit the message being built, if it holds records; else, if the
 * templates are due at @p now_s, a message with the templates only (so
 * that a collector learns them before the first record). Call it
 * periodically (every second, say) so that records do not wait for a
 * full message, and before cflow_ipfix_free().
 *
 * @param x
 *   The encoder.
 * @param now_s
 *   Seconds since the Unix epoch, as cflow_ipfix_add() takes them.
 * @return
 *   1 if a message was emitted, 0 if none was due, or emit's negative
 *   return.
 */
int cflow_ipfix_flush(struct cflow_ipfix *x, uint64_t now_s);

/**
 * Copy the counters.
 *
 * @param x
 *   The encoder.
 * @param s
 *   Receives the counters.
 */
void cflow_ipfix_stats_get(const struct cflow_ipfix *x,
		struct cflow_ipfix_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_IPFIX_H_ */
