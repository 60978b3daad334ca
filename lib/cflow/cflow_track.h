/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_TRACK_H_
#define _CFLOW_TRACK_H_

/**
 * @file
 * lib/cflow's tracker: struct cflow_tracker, a flow table on lib/cuckoo
 * that classifies each packet's flow as new, seen or closing (enum
 * cflow_verdict), closes TCP flows on FIN/RST (a closed flow lingers
 * close_linger_ns after its last packet), expires idle flows with a
 * bounded incremental sweep and counts what it saw (struct
 * cflow_counters); its parameters, warm restart and lookups.
 *
 * A tracker is not thread safe: one per lcore.
 *
 * Part of cflow.h, which includes it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cflow_parse.h"
#include "cuckoo_filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What happened to one packet. */
enum cflow_verdict {
	CFLOW_NEW,                /**< first packet of a flow: inserted */
	CFLOW_SEEN,               /**< packet of a tracked or lingering flow */
	CFLOW_CLOSING,            /**< the TCP FIN/RST that closed a flow */
	CFLOW_UNTRACKED_NON_IP,   /**< not IP */
	CFLOW_UNTRACKED_MALFORMED, /**< see the parse status counters */
	CFLOW_UNTRACKED_FRAGMENT, /**< non-first fragment */
	CFLOW_UNTRACKED_ORPHAN,   /**< FIN/RST of an untracked flow */
	CFLOW_UNTRACKED_FULL,     /**< table full, policy "untracked" */
	/** Not tracked, and the packet may not open a flow
	 * (CFLOW_IN_NO_CREATE: a firewall's outside); a FIN/RST too. */
	CFLOW_UNTRACKED_UNSOLICITED,
	/** Not tracked, TCP but not a SYN without ACK (tcp_strict). */
	CFLOW_UNTRACKED_NOT_SYN,
	/** A new flow beyond the admission rate (new_flow_rate). */
	CFLOW_UNTRACKED_LIMITED,
	/**
	 * A packet from the outside (CFLOW_IN_OUTSIDE) whose flow is tracked
	 * but which travels away from the flow's inside endpoint: its source
	 * claims to be the inside host (sided trackers). Not a packet of the
	 * flow: the flow is left as it was.
	 */
	CFLOW_UNTRACKED_WRONG_DIR,
	/**
	 * An ICMP error about a packet of a tracked flow, going back to that
	 * packet's source (CFLOW_KIND_ICMP_ERROR): conntrack's RELATED. From
	 * the outside (sided trackers), only toward the flow's inside
	 * endpoint. The flow is left as it was.
	 */
	CFLOW_RELATED,
	/**
	 * An ICMP error about no tracked flow (its flow untracked, idle past
	 * its timeout, or, from the outside, the error going away from the
	 * flow's inside endpoint), or one that cannot be about a flow
	 * (CFLOW_KIND_ICMP_UNRELATED). Never opens a flow.
	 */
	CFLOW_UNTRACKED_UNRELATED,
	/**
	 * A non-first fragment of a datagram whose first fragment was of a
	 * tracked flow (CFLOW_KIND_FRAGMENT), in the direction that flow's
	 * packets may take: it goes with its flow, which is left as it was
	 * (the datagram counted once, by its first fragment). One whose flow
	 * is not tracked is CFLOW_UNTRACKED_FRAGMENT.
	 */
	CFLOW_FRAGMENT_SEEN,
	CFLOW_VERDICT_MAX,
};

/** What to do when a new flow finds the table full. */
enum cflow_full_policy {
	/** Evict a closing entry of the flow's two buckets, else the one
	 * idle longest (counted flows_evicted). */
	CFLOW_FULL_EVICT = 0,
	/** Leave the new flow untracked (counted insert_failed). */
	CFLOW_FULL_UNTRACKED,
};

/** Hash source. */
enum cflow_hash_mode {
	CFLOW_HASH_XXH3 = 0,  /**< seeded XXH3-64 of the canonical key */
	/**
	 * The NIC's 32-bit RSS hash, mixed to 64 bits with the seed. Only
	 * 32 bits of entropy (index and fingerprint share them); with the
	 * symmetric Toeplitz key 0x6d5a the two 16-bit halves are equal, so
	 * about 16 bits: far too few for a large table. Packets without an
	 * RSS hash fall back to XXH3 (counted hash_fallback).
	 */
	CFLOW_HASH_RSS,
};

/** Default idle timeouts in seconds, by class. */
#define CFLOW_TIMEOUT_TCP_S 300
/** UDP and UDP-Lite */
#define CFLOW_TIMEOUT_UDP_S 60
/** ICMP and ICMPv6 */
#define CFLOW_TIMEOUT_ICMP_S 30
/** SCTP and every other protocol */
#define CFLOW_TIMEOUT_OTHER_S 60
/** Default time a closed TCP flow lingers after its last packet, seconds. */
#define CFLOW_CLOSE_LINGER_S 10
/** close_linger_ns for no linger: a FIN or RST removes its flow. */
#define CFLOW_LINGER_NONE UINT64_MAX
/** Default bound on buckets one cflow_sweep() call visits. */
#define CFLOW_SWEEP_MAX_BUCKETS 64
/** Default capacity, flows: 2^20 (the application's default too). */
#define CFLOW_CAPACITY_DEFAULT (UINT64_C(1) << 20)
/** Default bits of state per flow. */
#define CFLOW_VALUE_BITS_DEFAULT 32

/**
 * Why a flow record was made: IPFIX's flowEndReason (RFC 7012, IE 136)
 * for 1 to 5; 0 is a flow's first packet, which starts its records.
 */
enum cflow_record_reason {
	/** A new flow: its name, its first packet (not a record). */
	CFLOW_RECORD_NEW = 0,
	/** Idle past its timeout: swept, or found so by its next packet. */
	CFLOW_RECORD_IDLE = 1,
	/**
	 * Active timeout: the flow goes on, its record is cut (at the first
	 * packet active_timeout_ns or more after the record's first), or a
	 * counter of the record would overflow (65535 packets, 2^32 - 1
	 * bytes). The next record starts with the packet in hand (next_ns).
	 */
	CFLOW_RECORD_ACTIVE = 2,
	/**
	 * End of flow: a TCP flow closed by a FIN or RST, when its linger
	 * ends (swept, a packet after it, a SYN that reopens the tuple,
	 * evicted while lingering; at once without a linger), so that the
	 * packets after the FIN count in it.
	 */
	CFLOW_RECORD_END = 3,
	/** Forced end: cflow_tracker_flush(), cflow_tracker_end_records()
	 *  (the end of a run) of an open flow. */
	CFLOW_RECORD_FORCED = 4,
	/** Lack of resources: evicted by a new flow from a full table. */
	CFLOW_RECORD_RESOURCES = 5,
};

/**
 * A flow record as a tracker makes it (records on): what a flow did
 * since its previous record, named by its table entry, not by its key,
 * which the table does not keep. A flow's name (cf_name_of_hash(): its
 * two buckets and fingerprint) does not change while it is tracked, so
 * that the caller, who saw the key in the flow's CFLOW_RECORD_NEW
 * record, can name each record of it; two flows the filter cannot tell
 * apart (one name) are one entry, one flow, at the filter's false
 * positive rate. Times are the tracker's (struct cflow_input's time_ns).
 */
struct cflow_record {
	uint64_t name;      /**< cf_name_of_hash() of the flow in its table */
	/**
	 * The last packet counted in the record (NEW: the first packet's
	 * time, which starts the first record). Kept to 1/256 of a tick
	 * (65.5 us with 32-bit values): truncated to that.
	 */
	uint64_t last_ns;
	/** CFLOW_RECORD_ACTIVE: the time of the packet that starts the
	 *  next record (its first packet); else 0. */
	uint64_t next_ns;
	/**
	 * IP octets of its packets (struct cflow_packet's ip_len, the wire
	 * length for a packet that has none), both directions; NEW: the
	 * first packet's.
	 */
	uint64_t bytes;
	uint32_t packets;   /**< both directions (NEW: 1) */
	uint8_t reason;     /**< enum cflow_record_reason */
	uint8_t tcp_flags;  /**< OR of its packets' TCP flags */
	/** NEW: the packet's index in the cflow_track_parsed() or
	 *  cflow_track_burst() call; else 0. */
	uint16_t index;
	/** NEW: the packet, valid during the callback only; else NULL. */
	const struct cflow_packet *pkt;
};

/**
 * Called by a tracker with records on, in the order of what happened:
 * every new flow's CFLOW_RECORD_NEW before any record of it, every
 * record of a flow before the NEW of another flow of the same name.
 * From cflow_track_parsed(), cflow_track_burst(), the sweeps,
 * cflow_tracker_flush() and cflow_tracker_end_records(), on the caller's
 * thread. It must not call the tracker.
 */
typedef void (*cflow_record_fn)(const struct cflow_record *r, void *arg);

/**
 * Tracker parameters. Zero in any field selects the documented default,
 * so a zeroed struct is a working tracker and a designated initialiser
 * only names what it changes. cflow_tracker_params_resolve() tells the
 * values a struct stands for.
 */
struct cflow_tracker_params {
	/**
	 * Flows the table must hold (default CFLOW_CAPACITY_DEFAULT);
	 * at most CF_MAX_CAPACITY.
	 */
	uint64_t capacity;
	/** Fingerprint bits, 4..32 (default CF_DEFAULT_FP_BITS, 12). */
	unsigned int fp_bits;
	/**
	 * Bits of state per flow: 32 (default: time in 16.8 ms ticks,
	 * timeouts up to 26 days) or 16 (the smallest tick from 16.8 ms
	 * up under which the longest timeout spans a quarter of the range:
	 * 268 ms for the default 300 s; 2 bytes less per flow).
	 */
	unsigned int value_bits;
	bool exact_size;        /**< lib/cuckoo's exact_size (default off) */
	/**
	 * The filter's layout: CF_TABLE_PLAIN (default), its flows' state
	 * in an array of its own, or CF_TABLE_INTERLEAVED, each flow's
	 * state in its bucket's cache line (a tracked packet then reads two
	 * lines, not three; no more memory with 16-bit fingerprints and
	 * 16-bit state). CF_TABLE_SEMISORT is refused.
	 */
	enum cf_table_type table;
	/**
	 * Hash seed. 0 (default): a random one, drawn at creation
	 * (cflow_tracker_params_get() tells it), so that flows cannot be
	 * chosen to collide; any other value is used as is, for
	 * reproducible runs or trackers that must agree on hashes.
	 */
	uint64_t seed;
	/** Use @p seed as is even if 0 (default off: 0 draws a seed). */
	bool fixed_seed;
	enum cflow_hash_mode hash; /**< default CFLOW_HASH_XXH3 */
	/**
	 * Idle timeouts by enum cflow_proto_class; 0 selects the class's
	 * default: CFLOW_TIMEOUT_TCP_S, _UDP_S, _ICMP_S, _OTHER_S.
	 */
	uint64_t timeout_ns[CFLOW_CLASS_MAX];
	/**
	 * How long a TCP flow closed by a FIN or RST stays in the table,
	 * counted from its last packet, as an open flow's idle timeout is:
	 * every packet of the closed flow (a retransmitted FIN, data of a
	 * half-closed connection, the last ACK) is counted flows_seen and
	 * restarts the linger. The flow is closed once (flows_closed); a
	 * SYN without ACK on it is a new connection (reused, then new).
	 * Once the linger is over, the entry is removed uncounted and the
	 * flow is untracked. 0: the default, CFLOW_CLOSE_LINGER_S;
	 * CFLOW_LINGER_NONE: removed at the FIN/RST.
	 */
	uint64_t close_linger_ns;
	enum cflow_full_policy full_policy; /**< default CFLOW_FULL_EVICT */
	struct cflow_parse_params parse; /**< zeroed: see its defaults */
	/** Work bound per cflow_sweep() (default CFLOW_SWEEP_MAX_BUCKETS). */
	unsigned int sweep_max_buckets;
	const struct cf_allocator *allocator; /**< NULL: lib/cuckoo's */
	int socket_id;          /**< passed to the allocator (default 0) */
	/**
	 * Decide each packet's flow at the packet's own time, not the latest
	 * time seen (default off): for a tracker fed by several streams, each
	 * in time order, whose flows each come from one stream (a worker's
	 * rx queues and handoff rings, replaying a capture). A flow's age
	 * (expiry, end of the linger, reuse) is then measured from its
	 * stamp to the packet's time, and is 0 if the packet is earlier; the
	 * stamp becomes the later of the two, for an open or a closed flow
	 * alike; a new flow is stamped with its packet's time. The tracker's
	 * clock still is the latest time seen (sweep pacing, leaps). A
	 * packet more than 1/8 of the tick range behind the clock (the lag,
	 * cflow_tracker_lag_ns(): 13 days with 32-bit values, 17 s with
	 * 16-bit values and 16.8 ms ticks, 274 s with the default 268 ms
	 * ones) is decided at the clock less that. So a caller that never
	 * tracks a packet more than the lag ahead of its watermark (see
	 * cflow_sweep_at()) gets every decision of a time-ordered replay,
	 * a leap of the clock included: the leap's sweep removes only the
	 * flows idle as of the new time less the lag.
	 */
	bool flow_time;
	/**
	 * Open a TCP flow only on a SYN without ACK (default off: any
	 * packet of an untracked flow but a FIN or RST opens it, as
	 * conntrack's loose pickup). Another packet of an untracked TCP
	 * flow is CFLOW_UNTRACKED_NOT_SYN.
	 */
	bool tcp_strict;
	/**
	 * Admission control: new flows per second this tracker opens, a
	 * token bucket refilled by the tracker's clock (the packets' time),
	 * holding at most new_flow_burst tokens (0: new_flow_rate) and full
	 * at creation. A flow that finds it empty is not inserted:
	 * CFLOW_UNTRACKED_LIMITED (a SYN on a lingering flow leaves that
	 * entry as it is). 0 (default): no limit.
	 */
	uint64_t new_flow_rate;
	/** Most tokens of the admission bucket: new flows admitted at
	 *  once (0, default: new_flow_rate). */
	uint64_t new_flow_burst;
	/**
	 * Emergency mode, as Suricata's: once the open flows reach
	 * emergency_load_ppm of capacity (parts per million; 0, default:
	 * never), every idle timeout and the linger become at most
	 * emergency_timeout_ns (0: 10 s), until the open flows fall below
	 * emergency_low_ppm (0: emergency_load_ppm less 100000, at least
	 * 0). Entering and leaving are counted. Flows are then expired
	 * within emergency_timeout_ns + max(1 s, shortest normal timeout /
	 * 8): the sweep keeps its normal pace.
	 */
	uint32_t emergency_load_ppm;
	/** Open flows, ppm of capacity, below which emergency mode ends
	 *  (see emergency_load_ppm). */
	uint32_t emergency_low_ppm;
	/** Longest idle timeout and linger in emergency mode, ns (0: 10 s,
	 *  CFLOW_EMERGENCY_TIMEOUT_S). */
	uint64_t emergency_timeout_ns;
	/**
	 * Bits of a saturating per-flow packet counter kept in the value,
	 * 0..8 (default 0: none), for first-N-packets mirroring: the
	 * ordinal of each packet in its flow, both directions together
	 * (cflow_track_parsed()'s @p counts). Taken from the time field:
	 * with 16-bit values, ticks grow coarser.
	 */
	unsigned int count_bits;
	/**
	 * Remember, per flow, which endpoint of its canonical key is the
	 * inside one (default off): a firewall's. The packet that opens a
	 * flow tells it: its source, or its destination if the packet came
	 * from the outside (CFLOW_IN_OUTSIDE: an allowed service). A packet
	 * from the outside then finds its flow only travelling toward that
	 * endpoint; one that claims the inside endpoint as its source is
	 * CFLOW_UNTRACKED_WRONG_DIR and changes nothing. One bit of the
	 * value, taken from the time as count_bits' are: with 16-bit values
	 * ticks are twice as coarse, with 32-bit values timeouts up to 13
	 * days keep 16.8 ms ticks.
	 */
	bool sided;
	/**
	 * Flow records (default off): per flow, the packets, IP octets,
	 * OR of TCP flags and last packet time since its previous record,
	 * in an 8-byte aux word per slot (lib/cuckoo's aux_bits 64) beside
	 * the state, and 8 bits of the state for the active timeout; each
	 * handed to @p record_fn (struct cflow_record) at every end of the
	 * flow and at its active timeouts. Needs 32-bit values (their ticks
	 * keep 16.8 ms for timeouts up to 2.4 hours with no packet count),
	 * the plain or interleaved table and @p record_fn. Off, nothing is
	 * allocated or done for them.
	 */
	bool records;
	/**
	 * Cut a flow's record at its first packet this long or more after
	 * the record's first packet (0: CFLOW_ACTIVE_TIMEOUT_S;
	 * CFLOW_ACTIVE_NONE: never). Judged in units of the smallest power
	 * of two of nanoseconds, from 2^20 up, over 1/220 of the active
	 * timeout plus 9/8 of the longest timeout or linger plus 2 s: a cut
	 * comes up to two of them late (1% of 1800 s + 300 s: 17.2 s
	 * units), never early.
	 */
	uint64_t active_timeout_ns;
	cflow_record_fn record_fn; /**< with records: required */
	void *record_arg;          /**< passed to record_fn */
};

/** Default emergency timeout, seconds. */
#define CFLOW_EMERGENCY_TIMEOUT_S 10
/** Default active timeout of flow records, seconds (softflowd's and
 *  nProbe's maximum flow life: 30 minutes). */
#define CFLOW_ACTIVE_TIMEOUT_S 1800
/** active_timeout_ns for none: a flow's one record comes at its end. */
#define CFLOW_ACTIVE_NONE UINT64_MAX

/** Flags of struct cflow_input. */
/** The packet may find its flow but never open one: an untracked flow
 * stays untracked (CFLOW_UNTRACKED_UNSOLICITED). A firewall's outside. */
#define CFLOW_IN_NO_CREATE 0x01
/** The packet comes from a firewall's outside: with a sided tracker it
 * finds its flow only travelling toward the flow's inside endpoint (else
 * CFLOW_UNTRACKED_WRONG_DIR), and a flow it opens has its destination
 * inside. Ignored by trackers that are not sided. */
#define CFLOW_IN_OUTSIDE 0x02

/**
 * Counters, all 64-bit. Every packet is counted once in packets and in
 * exactly one of: non_ip, malformed[], fragments, orphan_close,
 * insert_failed, unsolicited, not_syn, new_flow_limited,
 * wrong_direction, flows_new, flows_seen, flows_closed (the closing
 * packet), related, unrelated, fragments_seen:
 *
 *   packets == cflow_packets_classified()
 *
 * Every flow counted new or restored ends in exactly one of: still open
 * (active), closed, expired, evicted or flushed:
 *
 *   flows_new + flows_restored == cflow_flows_accounted()
 */
struct cflow_counters {
	/** every packet tracked or not */
	uint64_t packets;
	uint64_t bytes;          /**< wire bytes of all packets */
	/** CFLOW_UNTRACKED_NON_IP packets */
	uint64_t non_ip;
	uint64_t malformed[CFLOW_PARSE_STATUS_MAX]; /**< by parse status */
	/** non-first fragments not placed in a tracked flow */
	uint64_t fragments;
	/** flows opened (CFLOW_NEW packets) */
	uint64_t flows_new;
	uint64_t flows_seen;     /**< packets of tracked flows */
	uint64_t flows_closed;   /**< by a FIN/RST, once per flow */
	/** open flows idle past their timeout: swept, or found so by
	 *  their next packet (which then opens the flow anew) */
	uint64_t flows_expired;
	uint64_t flows_evicted;  /**< open flows evicted for a new one */
	/** CFLOW_UNTRACKED_FULL packets: new flows the table had no room
	 *  for */
	uint64_t insert_failed;
	/** CFLOW_UNTRACKED_ORPHAN packets */
	uint64_t orphan_close;
	uint64_t reused;         /**< SYN on a closing flow: also counted new */
	uint64_t hash_fallback;  /**< hash mode rss, packet without a hash */
	uint64_t active;         /**< open flows in the table now */
	uint64_t unsolicited;    /**< CFLOW_UNTRACKED_UNSOLICITED packets */
	uint64_t not_syn;        /**< CFLOW_UNTRACKED_NOT_SYN packets */
	uint64_t new_flow_limited; /**< CFLOW_UNTRACKED_LIMITED packets */
	uint64_t emergency_enter; /**< times emergency mode began */
	uint64_t emergency_exit;  /**< and ended */
	uint64_t emergency;      /**< 1 while in emergency mode */
	/** open flows taken over from a saved table, cflow_tracker_restore():
	 *  not counted new */
	uint64_t flows_restored;
	/** open flows removed by cflow_tracker_flush() */
	uint64_t flows_flushed;
	/** CFLOW_UNTRACKED_WRONG_DIR packets */
	uint64_t wrong_direction;
	/** closed flows lingering in the table now (a gauge) */
	uint64_t lingering;
	/** closed flows taken over lingering from a saved table
	 *  (cflow_tracker_restore()): in lingering, never in flows_closed */
	uint64_t lingering_restored;
	/**
	 * Records made (records on), by reason (enum cflow_record_reason):
	 * idle, active (the flow goes on), end of flow (a closed flow's
	 * linger over), forced (flushed), lack of resources (evicted). A
	 * flow's end is one record: with records on,
	 *
	 *   flows_new + flows_restored + lingering_restored == active +
	 *     lingering + records_idle + records_end + records_forced +
	 *     records_resources
	 *
	 * until cflow_tracker_end_records(), whose records (counted in
	 * records_shutdown) end the flows still in the table.
	 */
	uint64_t records_idle;
	uint64_t records_active;     /**< active timeouts (reason 2) */
	uint64_t records_end;        /**< end of flow (reason 3) */
	uint64_t records_forced;     /**< flushed (reason 4) */
	uint64_t records_resources;  /**< evicted (reason 5) */
	/** records of cflow_tracker_end_records() */
	uint64_t records_shutdown;
	/** CFLOW_RELATED packets: ICMP errors of tracked flows */
	uint64_t related;
	/** CFLOW_UNTRACKED_UNRELATED packets: ICMP errors of no flow */
	uint64_t unrelated;
	/** CFLOW_FRAGMENT_SEEN packets: non-first fragments of tracked
	 *  flows' datagrams (a non-first fragment of no flow is in
	 *  fragments) */
	uint64_t fragments_seen;
};

/** One packet handed to the tracker. */
struct cflow_input {
	const uint8_t *data;  /**< frame, from its link header (link_type) */
	uint32_t len;         /**< captured bytes at data */
	uint32_t wire_len;    /**< length on the wire (>= len) */
	uint64_t time_ns;     /**< monotonic time of the packet */
	uint32_t rss;         /**< NIC hash, if has_rss */
	/** rss holds the NIC's hash */
	bool has_rss;
	/**
	 * The flow's cflow_hash_key() with the tracker's seed, if has_hash:
	 * a caller that hashed the key already (to pick the flow's lcore)
	 * saves the tracker hashing it again. Used in CFLOW_HASH_XXH3 mode
	 * only; a wrong value tracks the packet under another flow.
	 */
	bool has_hash;
	/** the flow's hash, if has_hash */
	uint64_t hash;
	uint8_t flags;        /**< CFLOW_IN_* */
};

struct cflow_tracker;

/**
 * The parameters @p p stands for, every default spelled out, into
 * @p out (which may be @p p): each zero field replaced by its default,
 * a seed of 0 by a random non-zero one (unless fixed_seed), and checked
 * as cflow_tracker_create() checks them but for what only lib/cuckoo
 * checks (fp_bits, the memory). A table that keeps the tracker's
 * contract on another store (bench_pipeline's exact table) takes its
 * timeouts from here.
 *
 * @param p
 *   The parameters as given.
 * @param out
 *   Receives them resolved; may be @p p.
 * @return
 *   0, or -EINVAL with errno set (then @p out is unspecified): a
 *   capacity over CF_MAX_CAPACITY, value_bits not 16 or 32, a
 *   full_policy or hash out of range, a timeout or linger too long for
 *   the value bits (26 days with 32-bit values and no packet count,
 *   half as long for each bit of count_bits and for sided).
 */
int cflow_tracker_params_resolve(const struct cflow_tracker_params *p,
		struct cflow_tracker_params *out);

/**
 * Optional: fill @p p with the defaults spelled out for a table of
 * @p capacity flows, a random seed drawn now. A zeroed struct with only
 * capacity set makes the same tracker but for the seed.
 *
 * @param p
 *   Receives the parameters.
 * @param capacity
 *   Flows the table must hold; 0 for CFLOW_CAPACITY_DEFAULT.
 */
void cflow_tracker_params_init(struct cflow_tracker_params *p,
		uint64_t capacity);

/**
 * A random hash seed, never 0 (getrandom(), else the time).
 *
 * @return
 *   The seed.
 */
uint64_t cflow_random_seed(void);

/**
 * Create a tracker; @p p is copied (see cflow_tracker_params_resolve()
 * for its defaults). NULL with errno set: EINVAL for bad parameters,
 * ENOMEM.
 *
 * @param p
 *   The parameters.
 * @return
 *   The tracker (free it with cflow_tracker_free()), or NULL with errno
 *   set.
 */
struct cflow_tracker *cflow_tracker_create(
		const struct cflow_tracker_params *p);

/**
 * The parameters @p t runs with, resolved: its seed, its defaults.
 *
 * @param t
 *   The tracker.
 * @param p
 *   Receives the parameters.
 */
void cflow_tracker_params_get(const struct cflow_tracker *t,
		struct cflow_tracker_params *p);

/**
 * Free a tracker; NULL is accepted.
 *
 * @param t
 *   The tracker, or NULL. Its filter (cflow_tracker_filter()) goes with
 *   it.
 */
void cflow_tracker_free(struct cflow_tracker *t);

/**
 * Track @p n packets, in order, CF_BULK_MAX at a time (one bulk lookup
 * each). Time never goes backwards for the tracker: an earlier time_ns
 * counts as the latest seen. Every packet's time_ns counts, in order,
 * whether it parses to a flow or not (non-IP, malformed, a fragment):
 * the latest time seen is the latest of all packets so far, however
 * they are cut into bursts.
 *
 * @param t
 *   The tracker.
 * @param in
 *   The packets, @p n of them.
 * @param n
 *   How many; any number.
 * @param verdicts
 *   If not NULL, receives each packet's verdict.
 */
void cflow_track_burst(struct cflow_tracker *t, const struct cflow_input *in,
		unsigned int n, enum cflow_verdict *verdicts);

/**
 * cflow_track_burst() for packets the caller has parsed already (with
 * the tracker's parse parameters), to look at them before tracking,
 * as the application's blocklist does, without parsing twice.
 *
 * @param t
 *   The tracker.
 * @param in
 *   The packets, @p n of them: their times, lengths, hashes and flags
 *   (data is not parsed again).
 * @param pkts
 *   cflow_parse()'s output for each packet; read only where @p status
 *   is CFLOW_PARSE_OK.
 * @param status
 *   cflow_parse()'s return for each packet.
 * @param n
 *   How many packets; any number.
 * @param verdicts
 *   If not NULL, receives each packet's verdict.
 * @param counts
 *   If not NULL, receives each packet's ordinal in its flow, both
 *   directions together: 1 for the packet that opened it, saturating at
 *   2^count_bits - 1; 0 for a packet left untracked, and for every
 *   packet if count_bits is 0.
 */
void cflow_track_parsed(struct cflow_tracker *t,
		const struct cflow_input *in, const struct cflow_packet *pkts,
		const enum cflow_parse_status *status, unsigned int n,
		enum cflow_verdict *verdicts, uint8_t *counts);

/**
 * Expire idle flows and remove lingering closed ones, visiting at most
 * sweep_max_buckets buckets: as many as the time since the last call
 * asks for, so that a whole pass takes at most P = L - 4 ticks (at
 * least L / 2), where L = max(1 s, shortest timeout / 8), provided calls
 * come at least every
 * sweep_max_buckets * P / buckets (the application calls it every
 * burst, and when idle). Every idle flow is then expired no earlier than
 * its timeout and no later than timeout + max(1 s, timeout / 8).
 *
 * @param t
 *   The tracker.
 * @param now_ns
 *   The current time, ns, on the packets' clock (cflow_input.time_ns).
 * @return
 *   Flows expired by this call.
 */
uint64_t cflow_sweep(struct cflow_tracker *t, uint64_t now_ns);

/**
 * cflow_sweep(), judging idleness as of an earlier time: paced by
 * @p now_ns exactly as cflow_sweep() is (which is
 * cflow_sweep_at(t, now_ns, now_ns)), but a flow is expired, or a closed
 * flow removed, only if idle past its timeout or linger at @p as_of_ns.
 * For flow_time trackers, whose flows are stamped at their packets' own
 * times: cflow_sweep() would expire a flow of a stream lagging behind the
 * clock that a packet still to come refreshes.
 *
 * @param t
 *   The tracker.
 * @param now_ns
 *   The current time, ns, on the packets' clock: paces the sweep.
 * @param as_of_ns
 *   A watermark: no packet still to come for this tracker is earlier
 *   (for streams each in time order, the least over the streams of the
 *   latest time taken from each; a stream that may still deliver counts).
 *   Then no flow is expired that a later packet would have found alive.
 *   From @p now_ns up it is the clock. One more than 1/8 of the tick
 *   range behind the clock (see flow_time) counts as the clock less that.
 * @return
 *   Flows expired by this call.
 */
uint64_t cflow_sweep_at(struct cflow_tracker *t, uint64_t now_ns,
		uint64_t as_of_ns);

/**
 * The lag of a tracker: 1/8 of its tick range (13 days with 32-bit
 * values, 17 s to 274 s with 16-bit values; see flow_time). A packet or
 * a watermark more than this behind the clock is judged at the clock
 * less the lag. A caller merging streams into a flow_time tracker gets
 * the decisions of a time-ordered replay if it tracks no packet more
 * than this ahead of the watermark it sweeps as of.
 *
 * @param t
 *   The tracker.
 * @return
 *   The lag in nanoseconds.
 */
uint64_t cflow_tracker_lag_ns(const struct cflow_tracker *t);

/**
 * The sweep's pacing, for callers that scan a table of their own at the
 * tracker's pace (bench_pipeline's exact table does): @p total units per
 * @p period_ns, owed in proportion to the time since the last call, at
 * most @p total owed and at most @p max handed out a call. The first call
 * starts the clock. @p now_ns must not go backwards. Zero-initialise.
 */
struct cflow_pace {
	/** time of the last call */
	uint64_t last_ns;
	double credit;          /**< units owed */
	/** the first call was made */
	bool started;
};

/**
 * Units of work due at @p now_ns; see struct cflow_pace.
 *
 * @param p
 *   The pacing state, zero-initialised before the first call.
 * @param now_ns
 *   The current time, ns; never earlier than the last call's.
 * @param total
 *   Units of a whole pass.
 * @param period_ns
 *   Time a whole pass is spread over, ns (not 0).
 * @param max
 *   Most units handed out by this call.
 * @return
 *   Units to do now, 0..@p max; 0 at the first call.
 */
uint64_t cflow_pace_take(struct cflow_pace *p, uint64_t now_ns,
		uint64_t total, uint64_t period_ns, uint64_t max);

/**
 * A full pass at @p now_ns: makes end-of-run counters exact.
 *
 * @param t
 *   The tracker.
 * @param now_ns
 *   The current time, ns, on the packets' clock; the tracker's clock
 *   moves to it if later.
 * @return
 *   Flows expired by this call.
 */
uint64_t cflow_sweep_all(struct cflow_tracker *t, uint64_t now_ns);

/**
 * Packets counted malformed, all reasons together.
 *
 * @param c
 *   The counters (cflow_counters_get()).
 * @return
 *   The sum of c->malformed[].
 */
uint64_t cflow_malformed_total(const struct cflow_counters *c);

/**
 * The packets counted in one class each (struct cflow_counters): equal
 * to packets whenever a burst is done.
 *
 * @param c
 *   The counters (cflow_counters_get()).
 * @return
 *   The sum of the per-class packet counters.
 */
uint64_t cflow_packets_classified(const struct cflow_counters *c);

/**
 * The flows counted new or restored, by their fate so far: active +
 * closed + expired + evicted + flushed, always equal to flows_new +
 * flows_restored.
 *
 * @param c
 *   The counters (cflow_counters_get()).
 * @return
 *   That sum.
 */
uint64_t cflow_flows_accounted(const struct cflow_counters *c);

/**
 * Copy the counters.
 *
 * @param t
 *   The tracker.
 * @param c
 *   Receives the counters.
 */
void cflow_counters_get(const struct cflow_tracker *t,
		struct cflow_counters *c);

/**
 * Warm restart: a tracker's flows and clock, to be taken over by a
 * tracker of a later run (cflow_tracker_restore()), so that flows alive
 * across a restart are not counted new again and the time spent down
 * ages them.
 *
 * The format: a header (magic "CFLOWTRK", version, byte order, the
 * parameters that give stored values their meaning, the clock) with its
 * own XXH64, then the flow table in lib/cuckoo's checksummed format
 * (cf_save_mem()). Counters are not saved: each run counts its own.
 */

/**
 * Bytes cflow_tracker_save() writes.
 *
 * @param t
 *   The tracker.
 * @return
 *   The size of the saved table and clock now.
 */
size_t cflow_tracker_save_size(const struct cflow_tracker *t);

/**
 * The most bytes cflow_tracker_save() writes for a tracker created with
 * @p p, without creating one: what a saved table read back for such a
 * tracker may take, to refuse a larger file before reading it.
 *
 * @param p
 *   Parameters as cflow_tracker_create() takes them.
 * @return
 *   The size, or 0 (errno EINVAL) if cflow_tracker_create() would refuse
 *   @p p's table.
 */
uint64_t cflow_tracker_save_bound(const struct cflow_tracker_params *p);

/**
 * The most flows a tracker created with @p p holds (its table's slots
 * and stash), or more, without creating one: from its saved table's
 * bound and the bits of a slot.
 *
 * @param p
 *   Parameters as cflow_tracker_create() takes them.
 * @return
 *   The bound, or 0 if cflow_tracker_create() would refuse @p p.
 */
uint64_t cflow_tracker_flows_bound(const struct cflow_tracker_params *p);

/**
 * Serialise @p t's table and clock into @p buf.
 *
 * @param t
 *   The tracker.
 * @param buf
 *   Output buffer, any alignment.
 * @param len
 *   Its size in bytes; at least cflow_tracker_save_size().
 * @return
 *   Bytes written, or -ENOSPC (errno set) if @p len is below
 *   cflow_tracker_save_size().
 */
int64_t cflow_tracker_save(const struct cflow_tracker *t, void *buf,
		size_t len);

/**
 * Take over the flows of cflow_tracker_save() output into @p t, a
 * tracker that has tracked nothing yet. The input is untrusted. The
 * saved table must have been made with the same table parameters
 * (capacity, exact_size, fp_bits, value_bits, table layout, seed), the
 * same hash mode, count_bits, sided and tick (which the longest timeout
 * or linger picks): timeouts may otherwise differ. On success @p t's clock
 * is the saved clock (time never goes backwards: packets older than it
 * count as at it), its open flows are counted in active and
 * flows_restored, and @p saved_ns (if not NULL) receives the saved
 * clock. On failure @p t is unchanged.
 *
 * @param t
 *   The tracker, new: nothing tracked yet.
 * @param buf
 *   cflow_tracker_save() output; not kept.
 * @param len
 *   Its length in bytes.
 * @param saved_ns
 *   If not NULL, receives the saved clock, ns, on success.
 * @param err
 *   If not NULL, receives why it was refused (@p errlen bytes).
 * @param errlen
 *   Size of @p err in bytes.
 * @return
 *   0, or a negative errno (errno set): -EBUSY if @p t has tracked
 *   packets; -ENODATA if the input is short; -EBADMSG if it is corrupt;
 *   -EPROTONOSUPPORT for another format version; -ENOTSUP if written on
 *   a host of the other byte order; -ESTALE if the parameters differ (@p
 *   err names the first that does); -ENOMEM.
 */
int cflow_tracker_restore(struct cflow_tracker *t, const void *buf,
		size_t len, uint64_t *saved_ns, char *err, size_t errlen);

/** What cflow_tracker_lookup() tells of one flow. */
struct cflow_flow_info {
	/** An entry with the flow's fingerprint is in one of its two
	 *  buckets: the flow, or another with the same fingerprint there
	 *  (a false positive, at the filter's rate). */
	bool tracked;
	bool closing;       /**< closed by a FIN/RST, lingering */
	/** Idle past its timeout (or linger) and not swept yet: its next
	 *  packet opens it anew. */
	bool expired;
	uint8_t proto_class; /**< enum cflow_proto_class, as stored */
	uint64_t idle_ns;   /**< since its last packet, at the tracker's
			     *  clock, in ticks (within one tick) */
	uint32_t count;     /**< packets so far, saturating (count_bits) */
};

/**
 * Look one flow up by its key, as a packet of it would find it, without
 * changing anything. @p key is canonical (cflow_key_init()).
 *
 * @param t
 *   The tracker.
 * @param key
 *   The flow's canonical key.
 * @param info
 *   Receives what is known of the flow; zeroed if not tracked or on
 *   an error.
 * @return
 *   1 if tracked (see cflow_flow_info.tracked), 0 if not (never
 *   wrong), -ENOTSUP (errno set) in CFLOW_HASH_RSS mode, where the
 *   table's hash is the NIC's, which a key does not give.
 */
int cflow_tracker_lookup(const struct cflow_tracker *t,
		const struct cflow_key *key, struct cflow_flow_info *info);

/**
 * Remove every flow. Open ones are counted in flows_flushed (and leave
 * active); lingering closed ones just go. Not concurrently with tracking:
 * the application's workers flush their own tables between bursts.
 *
 * @param t
 *   The tracker.
 * @return
 *   The open flows removed.
 */
uint64_t cflow_tracker_flush(struct cflow_tracker *t);

/**
 * Records on: a record for every flow in the table, as at the end of a
 * run (CFLOW_RECORD_FORCED for an open flow, CFLOW_RECORD_END for a
 * lingering closed one), counted in records_shutdown, without removing
 * them (a state file saved before or after keeps them). Each flow's
 * counts start again from zero. Not concurrently with tracking.
 *
 * @param t
 *   The tracker.
 * @return
 *   The records made (0 with records off).
 */
uint64_t cflow_tracker_end_records(struct cflow_tracker *t);

/**
 * The unit, in nanoseconds, in which a tracker with records judges
 * active timeouts (see active_timeout_ns); 0 without records or
 * active timeout.
 *
 * @param t
 *   The tracker.
 * @return
 *   The unit in ns, or 0.
 */
uint64_t cflow_tracker_active_unit_ns(const struct cflow_tracker *t);

/**
 * The tracker's filter, for its statistics.
 *
 * @param t
 *   The tracker.
 * @return
 *   The filter, owned by the tracker: valid until cflow_tracker_free().
 */
const struct cf_filter *cflow_tracker_filter(const struct cflow_tracker *t);

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_TRACK_H_ */
