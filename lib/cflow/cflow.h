/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_H_
#define _CFLOW_H_

/**
 * @file
 * cuckooflow's flow-tracking core: packet bytes and timestamps in,
 * a verdict and counters out. No DPDK: the application is a thin shell
 * around it, and tests and fuzzers drive it with byte buffers.
 *
 * - cflow_parse(): a bounds-checked parser of the link header (Ethernet
 *   and VLAN, Linux cooked, raw IP, BSD loopback: enum cflow_link_type),
 *   IPv4, IPv6 and L4 that builds a canonical, bidirectional 5-tuple key;
 * - cflow_hash_key(): seeded XXH3-64 of that key;
 * - struct cflow_tracker: a flow table on lib/cuckoo that classifies each
 *   packet's flow as new, seen or closing, closes TCP flows on FIN/RST
 *   (a closed flow lingers close_linger_ns after its last packet), and
 *   expires idle flows with a bounded incremental sweep;
 * - struct cflow_frag: later IP fragments given their first fragment's
 *   parse, so that they go with its flow.
 *
 * A tracker is not thread safe: one per lcore.
 *
 * The declarations are in four headers by concern, which this one
 * includes, for users that want all of them:
 *
 * - cflow_parse.h: the parser, the key and the packet types;
 * - cflow_track.h: the tracker, its parameters and counters;
 * - cflow_event.h: flow events;
 * - cflow_frag.h: the fragment follower.
 */

#include "cflow_parse.h"
#include "cflow_track.h"
#include "cflow_event.h"
#include "cflow_frag.h"

#endif /* _CFLOW_H_ */
