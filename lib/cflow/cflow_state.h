/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_STATE_H_
#define _CFLOW_STATE_H_

/**
 * @file
 * The flow state machine of struct cflow_tracker, for flow tables that
 * keep the tracker's contract (verdicts, counters, timeouts, linger) on
 * another store: bench_pipeline's exact table on rte_hash uses it, so
 * that the two cannot drift apart. The tracker's own per-packet code is
 * these functions. Private to this tree, not installed: such a table
 * includes it from lib/cflow.
 *
 * A table calls, for each packet of a burst:
 *
 * - cflow_count_packet(), always;
 * - cflow_count_untracked() for a packet whose parse status is not
 *   CFLOW_PARSE_OK: its verdict;
 * - else, for a packet that follows a flow without being one of its
 *   packets (struct cflow_packet's kind not CFLOW_KIND_FLOW: an ICMP
 *   error, a later fragment), cflow_state_follow() with whether the
 *   table holds its flow live in its direction (nothing is done to it);
 * - else, for a table that keeps each flow's inside endpoint (sided), a
 *   packet from the outside of a flow it finds live whose direction
 *   cflow_side_ok() refuses takes cflow_state_wrong_dir();
 * - else cflow_state_step() with the state of the packet's flow in the
 *   table, then cflow_state_admit() (what the packet may open) and, if
 *   the step would insert and admission control has no token,
 *   cflow_state_limit(); does what the step says (remove, store,
 *   insert) and passes the outcome to cflow_count_step(): the packet's
 *   verdict.
 *
 * How a table stores a flow's state and time, and how it judges a flow
 * idle or its linger over ("stale"), is its own: the tracker counts in
 * coarse ticks, the exact table in nanoseconds.
 *
 * Everything here is inline and pure but for the counters it is given:
 * no allocation, no lock, for the hot path.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cflow_track.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where a flow stands in a table. */
enum cflow_state {
	CFLOW_STATE_NONE = 0,  /**< not in the table */
	CFLOW_STATE_OPEN,      /**< tracked, open */
	/** Closed by a TCP FIN or RST, lingering (see close_linger_ns). */
	CFLOW_STATE_CLOSING,
};

/**
 * What a table must do for one packet of a flow, in this order:
 * remove the flow's entry if @p remove; then either store @p next with
 * the packet's time as the flow's last-seen time (OPEN or CLOSING; the
 * entry stays where it is), or insert the flow as a new open flow if
 * @p insert, or nothing (@p next NONE, @p insert false).
 */
struct cflow_step {
	/**
	 * The packet's enum cflow_verdict; CFLOW_NEW when @p insert, which
	 * becomes CFLOW_UNTRACKED_FULL if the insertion fails.
	 */
	uint8_t verdict;
	/** enum cflow_state to store, or CFLOW_STATE_NONE: nothing. */
	uint8_t next;
	bool remove;   /**< remove the flow's entry first */
	bool insert;   /**< then insert the flow, open */
	/** The entry removed was open and idle past its timeout. */
	bool expired;
	/** The entry removed was closing and a SYN reopens its tuple. */
	bool reused;
};

/**
 * The state machine: one packet of a flow in @p state.
 *
 * - An entry that is @p stale (an open flow idle past its timeout, a
 *   closing one past its linger) is removed first (an open one counted
 *   expired, a closing one uncounted), and the packet is that of an
 *   untracked flow.
 * - An open flow: a TCP FIN or RST closes it (CLOSING; it lingers if
 *   @p linger, else it is removed), any other packet refreshes it (SEEN).
 * - A closing flow: a TCP SYN without ACK is a new connection on the
 *   tuple (removed, reused, inserted: NEW); any other packet refreshes
 *   its linger (SEEN).
 * - An untracked flow: a TCP FIN or RST leaves it untracked
 *   (UNTRACKED_ORPHAN), any other packet inserts it (NEW).
 *
 * @param state
 *   The flow's state in the table: CFLOW_STATE_NONE if not found.
 * @param stale
 *   The entry is past its timeout (open) or its linger (closing);
 *   ignored for CFLOW_STATE_NONE.
 * @param proto_class
 *   The packet's enum cflow_proto_class: flags count for TCP only.
 * @param tcp_flags
 *   The packet's TCP flags (CFLOW_TCP_*).
 * @param linger
 *   Closed flows linger (close_linger_ns is not CFLOW_LINGER_NONE).
 */
static inline struct cflow_step
cflow_state_step(enum cflow_state state, bool stale, unsigned int proto_class,
		uint8_t tcp_flags, bool linger)
{
	bool tcp = proto_class == CFLOW_CLASS_TCP;
	bool close = tcp && (tcp_flags & (CFLOW_TCP_FIN | CFLOW_TCP_RST));
	bool syn = tcp && (tcp_flags & (CFLOW_TCP_SYN | CFLOW_TCP_ACK)) ==
		CFLOW_TCP_SYN;
	struct cflow_step s = {
		.verdict = CFLOW_NEW,
		.next = CFLOW_STATE_NONE,
	};

	if (state != CFLOW_STATE_NONE && stale) {
		s.remove = true;
		s.expired = state == CFLOW_STATE_OPEN;
		state = CFLOW_STATE_NONE;
	}
	switch (state) {
	case CFLOW_STATE_OPEN:
		if (close) {
			s.verdict = CFLOW_CLOSING;
			if (linger)
				s.next = CFLOW_STATE_CLOSING;
			else
				s.remove = true;
		} else {
			s.verdict = CFLOW_SEEN;
			s.next = CFLOW_STATE_OPEN;
		}
		break;
	case CFLOW_STATE_CLOSING:
		if (syn) {
			s.remove = true;
			s.insert = true;
			s.reused = true;
		} else {
			/* A packet of the closed flow (a retransmitted FIN,
			 * data of a half-closed connection): its linger
			 * restarts, as conntrack's and Suricata's timeouts
			 * run from a flow's last packet. */
			s.verdict = CFLOW_SEEN;
			s.next = CFLOW_STATE_CLOSING;
		}
		break;
	default:
		if (close)
			s.verdict = CFLOW_UNTRACKED_ORPHAN;
		else
			s.insert = true;
		break;
	}
	return s;
}

/**
 * Sided tables: which endpoint of its canonical key is the inside one,
 * for a flow that a packet opens. Its source (the key's higher endpoint
 * if @p reversed) unless it comes from the outside (CFLOW_IN_OUTSIDE in
 * @p in_flags: an allowed service), then its destination.
 *
 * @return
 *   true if the key's higher endpoint (addr_hi, port_hi) is inside.
 */
static inline bool
cflow_side_hi_inside(bool reversed, uint8_t in_flags)
{
	return reversed != ((in_flags & CFLOW_IN_OUTSIDE) != 0);
}

/**
 * Sided tables: may a packet (@p reversed, @p in_flags) be one of a flow
 * whose inside endpoint is the key's higher one if @p hi_inside? A
 * packet from the outside must travel toward the inside endpoint; one
 * from elsewhere is not checked (two inside ports may be paired).
 */
static inline bool
cflow_side_ok(bool hi_inside, bool reversed, uint8_t in_flags)
{
	return !(in_flags & CFLOW_IN_OUTSIDE) ||
		hi_inside == cflow_side_hi_inside(reversed, in_flags);
}

/**
 * The step of a packet that cflow_side_ok() refuses, of a flow the table
 * holds and that is not stale: CFLOW_UNTRACKED_WRONG_DIR, and nothing
 * done (no refresh, no close, no removal: a spoofed packet must not
 * touch the flow it claims).
 */
static inline struct cflow_step
cflow_state_wrong_dir(void)
{
	return (struct cflow_step){
		.verdict = CFLOW_UNTRACKED_WRONG_DIR,
		.next = CFLOW_STATE_NONE,
	};
}

/**
 * The step of a packet that follows a flow (struct cflow_packet's kind
 * @p kind, not CFLOW_KIND_FLOW): @p live if the table holds its flow,
 * not stale, and (sided tables) cflow_side_ok() takes the packet's
 * direction; always false for CFLOW_KIND_ICMP_UNRELATED, which needs no
 * lookup. Nothing is done to the flow: CFLOW_RELATED or
 * CFLOW_UNTRACKED_UNRELATED for an ICMP error, CFLOW_FRAGMENT_SEEN or
 * CFLOW_UNTRACKED_FRAGMENT for a later fragment.
 */
static inline struct cflow_step
cflow_state_follow(uint8_t kind, bool live)
{
	struct cflow_step s = { .next = CFLOW_STATE_NONE };

	if (kind == CFLOW_KIND_FRAGMENT)
		s.verdict = live ? CFLOW_FRAGMENT_SEEN :
			CFLOW_UNTRACKED_FRAGMENT;
	else
		s.verdict = live && kind == CFLOW_KIND_ICMP_ERROR ?
			CFLOW_RELATED : CFLOW_UNTRACKED_UNRELATED;
	return s;
}

/**
 * What the packet may do to an untracked flow, applied to its step: with
 * CFLOW_IN_NO_CREATE in @p in_flags a flow is never opened
 * (CFLOW_UNTRACKED_UNSOLICITED, a FIN or RST of no flow too), and a SYN
 * on a lingering flow is a packet of the closed flow (SEEN); with
 * @p tcp_strict a TCP flow opens only on a SYN without ACK
 * (CFLOW_UNTRACKED_NOT_SYN). A stale entry is removed all the same.
 */
static inline void
cflow_state_admit(struct cflow_step *s, uint8_t in_flags, bool tcp_strict,
		unsigned int proto_class, uint8_t tcp_flags)
{
	bool syn = proto_class == CFLOW_CLASS_TCP &&
		(tcp_flags & (CFLOW_TCP_SYN | CFLOW_TCP_ACK)) == CFLOW_TCP_SYN;

	if (in_flags & CFLOW_IN_NO_CREATE) {
		if (s->verdict == CFLOW_UNTRACKED_ORPHAN) {
			s->verdict = CFLOW_UNTRACKED_UNSOLICITED;
		} else if (s->insert && s->reused) {
			s->remove = false;
			s->insert = false;
			s->reused = false;
			s->verdict = CFLOW_SEEN;
			s->next = CFLOW_STATE_CLOSING;
		} else if (s->insert) {
			s->insert = false;
			s->verdict = CFLOW_UNTRACKED_UNSOLICITED;
		}
		return;
	}
	if (tcp_strict && s->insert && proto_class == CFLOW_CLASS_TCP &&
			!syn) {
		s->insert = false;
		s->verdict = CFLOW_UNTRACKED_NOT_SYN;
	}
}

/**
 * A step's insertion refused by admission control (no token): the flow
 * stays untracked (CFLOW_UNTRACKED_LIMITED), and a SYN on a lingering
 * flow leaves that entry as it is.
 */
static inline void
cflow_state_limit(struct cflow_step *s)
{
	if (s->reused) {
		s->remove = false;
		s->reused = false;
	}
	s->insert = false;
	s->verdict = CFLOW_UNTRACKED_LIMITED;
}

/**
 * Count what a step did in @p c: @p inserted tells whether its insertion
 * succeeded (ignored unless @p s's insert). An insertion that evicts
 * another flow counts that eviction itself (flows_evicted, active).
 *
 * @return
 *   The packet's verdict: @p s's, or CFLOW_UNTRACKED_FULL for a failed
 *   insertion.
 */
static inline enum cflow_verdict
cflow_count_step(struct cflow_counters *c, const struct cflow_step *s,
		bool inserted)
{
	if (s->expired) {
		c->flows_expired++;
		c->active--;
	}
	if (s->reused)
		c->reused++;
	if (s->insert) {
		if (!inserted) {
			c->insert_failed++;
			return CFLOW_UNTRACKED_FULL;
		}
		c->flows_new++;
		c->active++;
		return CFLOW_NEW;
	}
	switch (s->verdict) {
	case CFLOW_SEEN:
		c->flows_seen++;
		break;
	case CFLOW_CLOSING:
		c->flows_closed++;
		c->active--;
		break;
	case CFLOW_UNTRACKED_UNSOLICITED:
		c->unsolicited++;
		break;
	case CFLOW_UNTRACKED_NOT_SYN:
		c->not_syn++;
		break;
	case CFLOW_UNTRACKED_LIMITED:
		c->new_flow_limited++;
		break;
	case CFLOW_UNTRACKED_WRONG_DIR:
		c->wrong_direction++;
		break;
	case CFLOW_RELATED:
		c->related++;
		break;
	case CFLOW_UNTRACKED_UNRELATED:
		c->unrelated++;
		break;
	case CFLOW_FRAGMENT_SEEN:
		c->fragments_seen++;
		break;
	case CFLOW_UNTRACKED_FRAGMENT:
		c->fragments++;
		break;
	default:
		c->orphan_close++;
		break;
	}
	return (enum cflow_verdict)s->verdict;
}

/**
 * Count a packet that is not tracked, by its parse status (not
 * CFLOW_PARSE_OK), in @p c.
 *
 * @return
 *   Its verdict: CFLOW_UNTRACKED_NON_IP, CFLOW_UNTRACKED_FRAGMENT, or
 *   CFLOW_UNTRACKED_MALFORMED (counted in malformed[] by status).
 */
static inline enum cflow_verdict
cflow_count_untracked(struct cflow_counters *c, enum cflow_parse_status st)
{
	switch (st) {
	case CFLOW_PARSE_NON_IP:
		c->non_ip++;
		return CFLOW_UNTRACKED_NON_IP;
	case CFLOW_PARSE_FRAGMENT:
		c->fragments++;
		return CFLOW_UNTRACKED_FRAGMENT;
	default:
		c->malformed[st]++;
		return CFLOW_UNTRACKED_MALFORMED;
	}
}

/**
 * Count one packet handed to a table in @p c: packets, and bytes (its
 * wire length, or its captured length if a source reports less on the
 * wire than it captured).
 */
static inline void
cflow_count_packet(struct cflow_counters *c, const struct cflow_input *in)
{
	c->packets++;
	c->bytes += in->wire_len > in->len ? in->wire_len : in->len;
}

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_STATE_H_ */
