/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_H_
#define _CFLOW_H_

/**
 * @file
 * cuckooflow's flow-tracking core: packet bytes and timestamps in,
 * a verdict and counters out. No DPDK: the application is a thin shell
 * around it, and tests and fuzzers drive it with byte buffers.
 *
 * - cflow_parse(): a bounds-checked Ethernet/VLAN/IPv4/IPv6/L4 parser that
 *   builds a canonical, bidirectional 5-tuple key;
 * - cflow_hash_key(): seeded XXH3-64 of that key;
 * - struct cflow_tracker: a flow table on lib/cuckoo that classifies each
 *   packet's flow as new, seen or closing, closes TCP flows on FIN/RST,
 *   and expires idle flows with a bounded incremental sweep.
 *
 * A tracker is not thread safe: one per lcore.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cuckoo_filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- parsing */

/** Outcome of parsing one packet. */
enum cflow_parse_status {
	CFLOW_PARSE_OK = 0,        /**< key built; the packet is trackable */
	CFLOW_PARSE_NON_IP,        /**< not IPv4/IPv6 (ARP, LLDP, 3+ tags) */
	CFLOW_PARSE_FRAGMENT,      /**< a non-first IP fragment: no ports */
	CFLOW_PARSE_TRUNC_L2,      /**< Ethernet or VLAN header cut short */
	CFLOW_PARSE_TRUNC_L3,      /**< IP header or extension cut short */
	CFLOW_PARSE_TRUNC_L4,      /**< TCP/UDP/SCTP/ICMP header cut short */
	CFLOW_PARSE_BAD_VERSION,   /**< IP version not matching ethertype */
	CFLOW_PARSE_BAD_IHL,       /**< IPv4 IHL < 5, or TCP offset < 5 */
	CFLOW_PARSE_BAD_LENGTH,    /**< IP length below its header's */
	CFLOW_PARSE_BAD_EXT,       /**< IPv6 extension chain too long */
	CFLOW_PARSE_STATUS_MAX,
};

/** TCP flags, as on the wire. */
#define CFLOW_TCP_FIN 0x01
#define CFLOW_TCP_SYN 0x02
#define CFLOW_TCP_RST 0x04
#define CFLOW_TCP_ACK 0x10

/**
 * Canonical flow key: the lower (address, port) endpoint first, so both
 * directions of a flow have one key. IPv4 addresses are stored
 * IPv4-mapped (::ffff:a.b.c.d). Fixed size and zero padded: hash it as
 * bytes.
 */
struct cflow_key {
	uint8_t addr_lo[16];
	uint8_t addr_hi[16];
	uint16_t port_lo;   /**< host order; 0 for ICMP and other protocols */
	uint16_t port_hi;
	uint8_t proto;      /**< IP protocol number */
	uint8_t family;     /**< 4 or 6 */
	uint16_t pad;       /**< 0 */
	uint32_t vlan;      /**< outer VID << 12 | inner VID, if in the key */
};

/** What the parser tells the tracker about one packet. */
struct cflow_packet {
	struct cflow_key key;
	uint8_t tcp_flags;  /**< 0 unless TCP */
	uint8_t proto_class; /**< enum cflow_proto_class */
};

/** Parser options. */
struct cflow_parse_params {
	bool vlan_in_key;   /**< key flows by VLAN ids too (default off) */
};

/**
 * Parse an Ethernet frame of @p len captured bytes. Never reads past
 * buf + len.
 *
 * @return
 *   CFLOW_PARSE_OK with @p pkt filled, or why the packet is not tracked.
 */
enum cflow_parse_status cflow_parse(const uint8_t *buf, uint32_t len,
		const struct cflow_parse_params *params,
		struct cflow_packet *pkt);

/** Name of a parse status, for counters and logs ("trunc_l3", ...). */
const char *cflow_parse_status_name(enum cflow_parse_status st);

/** Seeded XXH3-64 of a canonical key. */
uint64_t cflow_hash_key(const struct cflow_key *key, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_H_ */
