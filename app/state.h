/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_STATE_H_
#define _APP_STATE_H_

/*
 * Warm restart (--state-file FILE): at shutdown every worker's flow
 * table and the run's clock go to one file, written durably (a temporary
 * file, fsync, rename); at start the file is read back, and if it was
 * saved by a run like this one (workers, affinity, clock source, seed,
 * then each table's parameters) each worker takes over its table.
 * Flows alive across the restart are then found, not counted new again,
 * and the time spent down ages them: with the TSC clock the run's clock
 * goes on from the saved one plus the wall-clock time spent down; with
 * packet times the packets tell.
 *
 * The file: a header (magic "CFLWSTAT", version, byte order, workers,
 * affinity, queue map digest, clock source, seed, wall-clock and
 * run-clock times of the save, whether the seed was given, the firewall
 * roles and allow list), each worker's cflow_tracker_save() output after
 * its length, and an XXH64 of everything before it (docs/design.md).
 *
 * The file holds the hash seed, a secret unless given (--hash-seed): it
 * is written 0600, and one that another user owns or that others may
 * read or write is refused whole.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct app_worker;
struct cflow_tracker;

struct app_state;

/* What a run must match to take a saved state over. */
struct app_state_run {
	unsigned int nb_workers;
	bool handoff;           /* software affinity */
	enum app_clock clock;
	/* --hash-seed given: the file must match. Saved with the file: a
	 * run without one does not take over a seed that was given (not
	 * secret). */
	bool seed_set;
	uint64_t seed;
	/* Firewall roles (config: inside, outside, mirror port) and the
	 * allow list's cbl_allow_digest() (0: none): a table is taken over
	 * only under the roles and the allow list it was made under. */
	uint64_t inside_mask;
	uint64_t outside_mask;
	uint64_t mirror_port;
	uint64_t allow;
	/* With hardware affinity (!handoff) and several workers, the NIC's
	 * RSS and the queue map choose each flow's worker: a digest of the
	 * map (port, queue, worker), app_state_queue_map(); else 0. */
	uint64_t queue_map;
	/* The most bytes a worker's saved table may take in this run
	 * (cflow_tracker_save_bound()): a larger file is refused unread. */
	uint64_t table_max;
	/* The most bytes the flow records' keys may take (with --records:
	 * cflow_recstore_save_bound(); 0 without). */
	uint64_t keys_max;
};

/* The digest of a queue map for app_state_run.queue_map: @p n entries of
 * port, queue and worker index (app_topology.map), in any order. */
uint64_t app_state_queue_map(const struct app_queue_map *map,
		unsigned int n);

/*
 * Read and check @p path. 0 with *state set; 0 with *state NULL if there
 * is no such file (a first start); else a negative errno with the reason
 * in @p err: a file that cannot be read, is another user's or others may
 * read or write it (EACCES), is corrupt or of another version, or was
 * saved by a run unlike @p run (other workers, affinity, queue map with
 * hardware affinity, clock source, seed, a given seed into a run without
 * one, firewall roles or allow list).
 */
int app_state_read(const char *path, const struct app_state_run *run,
		struct app_state **state, char *err, size_t err_len);

/* The hash seed the state was saved with: the run's, if it restores. */
uint64_t app_state_seed(const struct app_state *s);

/*
 * With the TSC clock, what to add to this run's TSC time so that its
 * clock goes on from the saved one plus the wall-clock time spent down
 * (@p now_ns: this run's TSC time now, unadjusted); 0 with packet times.
 * @p down_ns receives the time spent down.
 */
uint64_t app_state_clock_offset(const struct app_state *s, uint64_t now_ns,
		uint64_t *down_ns);

/* Worker @p i takes over its table: cflow_tracker_restore()'s return,
 * with the reason in @p err. */
int app_state_restore(const struct app_state *s, unsigned int i,
		struct cflow_tracker *t, char *err, size_t err_len);

/* The flow records' keys saved with the tables (cflow_recstore_save()):
 * their bytes into *len, NULL if none were. */
const void *app_state_keys(const struct app_state *s, size_t *len);

void app_state_free(struct app_state *s);

/* Worker @p i's table saved into @p buf of @p cap bytes (@p run's
 * table_max): its length, or a negative errno. Where it runs is the
 * caller's choice: on the worker, while traffic flows. */
typedef int64_t (*app_state_save_fn)(unsigned int i, void *buf,
		uint64_t cap, void *arg);

/*
 * Save the trackers of @p workers and @p clock_ns (the run's clock now:
 * TSC time, or the last packet time) to @p path durably: each by
 * @p save (with @p save_arg), or, NULL, by this thread (the workers
 * stopped), and @p keys_len bytes of flow records' keys @p keys
 * (cflow_recstore_save(); 0: none). 0, or a negative errno with the
 * reason in @p err; *flows receives the open flows saved.
 */
int app_state_write(const char *path, const struct app_state_run *run,
		const struct app_worker *workers, app_state_save_fn save,
		void *save_arg, uint64_t clock_ns, const void *keys,
		uint64_t keys_len, uint64_t *flows, char *err, size_t err_len);

#endif /* _APP_STATE_H_ */
