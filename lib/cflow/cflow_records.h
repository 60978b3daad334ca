/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_RECORDS_H_
#define _CFLOW_RECORDS_H_

/**
 * @file
 * lib/cflow's key store: the keys of the flows a tracker with records
 * keeps (struct cflow_tracker_params' records), off the datapath, so that
 * each of its records (struct cflow_record, named by the flow's table
 * entry) can be exported with its key (struct cflow_flow_record).
 *
 * An entry is filled from a flow's CFLOW_RECORD_NEW (with the flow's
 * first packet as a struct cflow_event) and named by the tracker (a
 * worker index, for several trackers) and the flow's name; each record
 * of that name is then named with it, and the record that ends the flow
 * frees the entry. Its capacity bounds it: a new flow that finds the
 * store full is not kept (counted), nor named later (counted too). One
 * allocation at creation; nothing is allocated after. Not thread safe:
 * one thread (the application's main lcore) takes every worker's
 * records, in each worker's order.
 *
 * Part of nothing: include it on its own (it includes cflow_event.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cflow_event.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Counters of a key store, since its creation. */
struct cflow_recstore_stats {
	uint64_t entries;       /**< flows kept now (a gauge) */
	uint64_t capacity;      /**< the most it keeps */
	uint64_t bytes;         /**< its memory */
	uint64_t added;         /**< new flows kept */
	/** New flows not kept: the store was full. */
	uint64_t full;
	/**
	 * New flows whose name an entry held: the flow that had it ended
	 * without its record reaching the store (a record lost on the way,
	 * a full ring); the old entry is replaced, counted here.
	 */
	uint64_t replaced;
	/** Records named and handed out (struct cflow_flow_record). */
	uint64_t named;
	/** Records of a name no entry holds: their flow's new event never
	 *  reached the store (full, lost on the way, a restored table). */
	uint64_t unnamed;
	/**
	 * Entries removed by cflow_recstore_expire(): no record came for
	 * them for longer than any record of a live flow lasts (their
	 * flow's end lost on the way, counted there).
	 */
	uint64_t expired;
};

struct cflow_recstore;

/**
 * A key store of @p capacity entries (1..2^31), about 96 bytes each
 * (cflow_recstore_bytes()).
 *
 * @param capacity
 *   Entries: flows named at once.
 * @return
 *   The store, or NULL with errno set: EINVAL, ENOMEM.
 */
struct cflow_recstore *cflow_recstore_create(uint64_t capacity);

/**
 * The bytes a store takes.
 *
 * @param capacity
 *   Its entries.
 * @return
 *   The bytes a store of @p capacity entries takes; 0 if refused.
 */
uint64_t cflow_recstore_bytes(uint64_t capacity);

/**
 * Free a store.
 *
 * @param s
 *   The store, or NULL.
 */
void cflow_recstore_free(struct cflow_recstore *s);

/**
 * A new flow of tracker @p worker, named @p name (its record's), whose
 * first packet is @p e (struct cflow_event of its CFLOW_NEW verdict,
 * with its time since the epoch, port and worker). An entry that held
 * the name is replaced (counted replaced).
 *
 * @param s
 *   The store.
 * @param worker
 *   The tracker's worker.
 * @param name
 *   The flow's name (struct cflow_record's, CFLOW_RECORD_NEW).
 * @param e
 *   Its first packet's event.
 * @return
 *   The flow's id (from 1, in the order flows are added), or 0 if the
 *   store is full (counted full): the flow's records will be unnamed.
 */
uint64_t cflow_recstore_add(struct cflow_recstore *s, uint16_t worker,
		uint64_t name, const struct cflow_event *e);

/**
 * Name a record of tracker @p worker: its flow's key and the record's
 * counts and times into @p out, its times moved by @p offset_ns (to the
 * epoch, as the new-flow events' are). A record that ends the flow (not
 * CFLOW_RECORD_ACTIVE) frees its entry; an active timeout's makes the
 * next record start at its next_ns.
 *
 * @param s
 *   The store.
 * @param worker
 *   The tracker's worker.
 * @param r
 *   The record.
 * @param offset_ns
 *   Added to its times.
 * @param out
 *   Receives the named record.
 * @return
 *   0, or -ENOENT (no errno) if no entry holds the name (counted
 *   unnamed), or -EINVAL for a CFLOW_RECORD_NEW.
 */
int cflow_recstore_name(struct cflow_recstore *s, uint16_t worker,
		const struct cflow_record *r, uint64_t offset_ns,
		struct cflow_flow_record *out);

/**
 * The most bytes cflow_recstore_save() writes for a store of
 * @p capacity entries (0 for a capacity cflow_recstore_create()
 * refuses).
 *
 * @param capacity
 *   Entries.
 * @return
 *   Bytes.
 */
uint64_t cflow_recstore_save_bound(uint64_t capacity);

/**
 * Write the keys the store holds now into @p buf (a warm restart's
 * state, read by cflow_recstore_restore() in a run of the same build):
 * each entry's next record then starts at @p resume_ns (the save's
 * time, since the epoch), as the record that ends the flow in the
 * saved run (a forced end) covers its packets until then.
 *
 * @param s
 *   The store.
 * @param resume_ns
 *   The time the restored flows' next records start at.
 * @param buf
 *   Receives the keys.
 * @param cap
 *   Its size: cflow_recstore_save_bound() of the store's capacity is
 *   enough.
 * @return
 *   The bytes written, or -ENOSPC (no errno) if @p cap is too small.
 */
int64_t cflow_recstore_save(const struct cflow_recstore *s,
		uint64_t resume_ns, void *buf, uint64_t cap);

/**
 * Add the keys cflow_recstore_save() wrote (their flows taken over by
 * the trackers from the same state), with their flow ids; the next new
 * flow's id follows the largest. An entry of a name the store holds
 * replaces it; past the store's capacity the rest are not added
 * (counted full).
 *
 * @param s
 *   The store.
 * @param buf
 *   The saved keys.
 * @param len
 *   Their bytes.
 * @return
 *   The entries added, or -EBADMSG (no errno) if @p len is not that of
 *   saved keys: nothing added.
 */
int64_t cflow_recstore_restore(struct cflow_recstore *s, const void *buf,
		uint64_t len);

/**
 * Free the entry of a flow of tracker @p worker that ended in a record
 * with nothing to write (no packet since its flow was taken over at a
 * warm restart: its packets are in the records before), counting
 * nothing.
 *
 * @param s
 *   The store.
 * @param worker
 *   The tracker's worker.
 * @param name
 *   The flow's name.
 * @return
 *   0, or -ENOENT (no errno) if no entry holds the name.
 */
int cflow_recstore_forget(struct cflow_recstore *s, uint16_t worker,
		uint64_t name);

/**
 * Remove the entries whose current record started before @p before_ns
 * (since the epoch: its flow's first packet, or the packet that started
 * it after an active timeout, or a warm restart's save): with
 * @p before_ns the time now less more than any record of a live flow
 * lasts (the active timeout and the longest timeout or linger), these
 * are flows whose end record was lost before it reached the store (a
 * full ring): without this they would hold their entries for good and
 * fill the store. Counted expired.
 *
 * A pass looks at every entry once, in their order (a sequential read:
 * about 10 ns an entry out of cache), in one call or in steps of
 * @p max_entries: each call goes on where the last one stopped, so a
 * caller with a latency bound (the application's main lcore) spreads a
 * large store's pass over many calls.
 *
 * @param s
 *   The store.
 * @param before_ns
 *   Entries whose record started before are removed.
 * @param max_entries
 *   The most entries this call looks at; 0: the rest of the pass.
 * @param done
 *   If not NULL, set to whether the pass ended with this call (the next
 *   call starts a new one, at the first entry).
 * @return
 *   The entries removed.
 */
uint64_t cflow_recstore_expire(struct cflow_recstore *s, uint64_t before_ns,
		uint64_t max_entries, bool *done);

/**
 * Copy the counters.
 *
 * @param s
 *   The store.
 * @param st
 *   Receives them.
 */
void cflow_recstore_stats_get(const struct cflow_recstore *s,
		struct cflow_recstore_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_RECORDS_H_ */
