/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_FRAG_H_
#define _CFLOW_FRAG_H_

/**
 * @file
 * lib/cflow's fragment follower: struct cflow_frag gives the later
 * fragments of an IP datagram the parse of its first fragment, so that a
 * tracker places them in the first fragment's flow (CFLOW_KIND_FRAGMENT,
 * CFLOW_FRAGMENT_SEEN) and they pass or drop with it. Nothing is
 * reassembled: every frame goes on as it came, and a datagram counts
 * once in its flow, by its first fragment. As conntrack's nf_defrag
 * decides a datagram by its first fragment's header, without
 * reassembly's memory.
 *
 * - A first fragment (cflow_parse()'s frag_first) is remembered by its
 *   datagram (struct cflow_frag_id: addresses, identification, protocol)
 *   for timeout_ns.
 * - A later fragment of a remembered datagram takes its first
 *   fragment's parse (CFLOW_FRAG_FOLLOWED), unless it overlaps the
 *   transport header that first fragment carried (offset below it: the
 *   ports and flags a reassembly could take from it; RFC 1858), counted
 *   overlaps and left as it is.
 * - A later fragment of a datagram not remembered (it came before its
 *   first fragment) is held, if there is room (hold), until its first
 *   fragment comes (then given back, to be parsed and followed after it)
 *   or timeout_ns has passed (given back to go on unfollowed).
 *
 * Bounded: the tables are made at creation (datagrams and hold entries,
 * about 128 and 64 bytes each), nothing is allocated after; a datagram
 * forgotten for a newer one when its slots are full is counted evicted,
 * a fragment that finds the hold full goes on unfollowed (hold_full).
 * Time: the caller's clock, never going back. One per lcore: not thread
 * safe.
 *
 * Part of cflow.h, which includes it.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cflow_parse.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default datagrams remembered at once. */
#define CFLOW_FRAG_DATAGRAMS_DEFAULT 4096
/** Default later fragments held for their first one. */
#define CFLOW_FRAG_HOLD_DEFAULT 256
/** Default time a datagram is followed and a fragment held, seconds:
 *  Linux's ipfrag_time. */
#define CFLOW_FRAG_TIMEOUT_S 30
/** The most of either table. */
#define CFLOW_FRAG_MAX (UINT32_C(1) << 24)

/** Parameters; zero in a field selects its default (hold: see below). */
struct cflow_frag_params {
	/** Datagrams remembered at once, rounded up to a power of two, at
	 *  most CFLOW_FRAG_MAX (default CFLOW_FRAG_DATAGRAMS_DEFAULT). */
	uint32_t datagrams;
	/** Later fragments held for their first one, at most
	 *  CFLOW_FRAG_MAX (default CFLOW_FRAG_HOLD_DEFAULT). */
	uint32_t hold;
	/** Hold nothing: hold is 0 (a later fragment before its first goes
	 *  on unfollowed at once, counted in none of held and hold_full):
	 *  where nothing depends on a fragment's flow, so that nothing is
	 *  reordered. */
	bool no_hold;
	/** How long a datagram is followed from its first fragment, and a
	 *  fragment held (default CFLOW_FRAG_TIMEOUT_S). */
	uint64_t timeout_ns;
	/** Hash seed (0: a random one). */
	uint64_t seed;
};

/** What cflow_frag_packet() did with a fragment. */
enum cflow_frag_action {
	/** Go on with the packet's parse as it is: a first fragment (now
	 *  remembered), or a later one not followed (overlapping, of a
	 *  datagram forgotten, the hold full). */
	CFLOW_FRAG_PASS,
	/** A later fragment of a remembered datagram: its parse is now its
	 *  first fragment's, kind CFLOW_KIND_FRAGMENT, status
	 *  CFLOW_PARSE_OK. */
	CFLOW_FRAG_FOLLOWED,
	/** Held: the follower keeps the caller's item until
	 *  cflow_frag_packet() (its first fragment) or cflow_frag_expire()
	 *  gives it back. */
	CFLOW_FRAG_HELD,
};

/** Counters, all 64-bit. */
struct cflow_frag_counters {
	uint64_t datagrams; /**< first fragments remembered */
	uint64_t followed;  /**< later fragments given their first's parse */
	uint64_t held;      /**< later fragments held before their first */
	uint64_t released;  /**< held ones given back behind their first */
	uint64_t expired;   /**< held ones given back unfollowed: time up */
	uint64_t overlaps;  /**< later fragments over the transport header,
			     *  and first fragments of a datagram remembered
			     *  with another flow: not followed */
	uint64_t evicted;   /**< datagrams forgotten early for a newer one */
	uint64_t hold_full; /**< later fragments not held: the hold full
			     *  (never with no_hold) */
};

struct cflow_frag;

/**
 * Create a follower.
 *
 * @param p
 *   Its parameters (0 fields: the defaults).
 * @return
 *   The follower, or NULL with errno set: EINVAL (a table over
 *   CFLOW_FRAG_MAX), ENOMEM.
 */
struct cflow_frag *cflow_frag_create(const struct cflow_frag_params *p);

/**
 * Free a follower; NULL is accepted. Held items are dropped unseen:
 * cflow_frag_expire() them first.
 *
 * @param f
 *   The follower.
 */
void cflow_frag_free(struct cflow_frag *f);

/**
 * A fragment: a packet whose cflow_parse_frag() named its datagram
 * (@p fi->family not 0), with that parse (@p pkt, @p status).
 *
 * @param f
 *   The follower.
 * @param fi
 *   The fragment's datagram, from cflow_parse_frag().
 * @param pkt
 *   Its parse; a later fragment's becomes its first fragment's.
 * @param status
 *   Its parse status; CFLOW_PARSE_OK for a later fragment followed.
 * @param item
 *   The caller's handle of the packet (an mbuf), held if it is a later
 *   fragment that came before its first one and there is room.
 * @param now_ns
 *   The caller's clock.
 * @param released
 *   For a first fragment: receives the items held for its datagram, in
 *   the order they came, to be parsed again and passed on after it (each
 *   is then followed); room for cflow_frag_hold(f) items.
 * @param nb_released
 *   Receives how many (0 but for a first fragment).
 * @return
 *   What was done (enum cflow_frag_action).
 */
enum cflow_frag_action cflow_frag_packet(struct cflow_frag *f,
		const struct cflow_frag_id *fi, struct cflow_packet *pkt,
		enum cflow_parse_status *status, void *item, uint64_t now_ns,
		void **released, unsigned int *nb_released);

/**
 * Give back the held items whose time is up at @p now_ns (all of them if
 * @p all: the end of a run), at most @p max, in no set order: they go on
 * unfollowed (their parse is a non-first fragment's). Cheap when nothing
 * is held or nothing is due.
 *
 * @param f
 *   The follower.
 * @param now_ns
 *   The caller's clock.
 * @param all
 *   Give back every held item.
 * @param out
 *   Receives the items.
 * @param max
 *   Room in @p out.
 * @return
 *   How many were written to @p out.
 */
unsigned int cflow_frag_expire(struct cflow_frag *f, uint64_t now_ns,
		bool all, void **out, unsigned int max);

/**
 * Items held now.
 *
 * @param f
 *   The follower.
 * @return
 *   How many.
 */
unsigned int cflow_frag_held(const struct cflow_frag *f);

/**
 * The hold's size: the most items held, or released at once.
 *
 * @param f
 *   The follower.
 * @return
 *   How many.
 */
unsigned int cflow_frag_hold(const struct cflow_frag *f);

/**
 * Copy the counters.
 *
 * @param f
 *   The follower.
 * @param c
 *   Receives them.
 */
void cflow_frag_counters_get(const struct cflow_frag *f,
		struct cflow_frag_counters *c);

/**
 * Bytes a follower of @p p takes (its tables).
 *
 * @param p
 *   Its parameters.
 * @return
 *   The bytes, or 0 if @p p is refused.
 */
uint64_t cflow_frag_memory(const struct cflow_frag_params *p);

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_FRAG_H_ */
