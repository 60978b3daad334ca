/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_CONTROL_H_
#define _APP_CONTROL_H_

/*
 * Telemetry commands that reach into the workers' tables, served by the
 * workers themselves between bursts:
 * /cuckooflow/flow,<proto>,<src>,<sport>,<dst>,<dport> looks one flow up,
 * /cuckooflow/flush empties every table.
 *
 * The protocol (struct app_ctl, one per worker): the requester (a
 * telemetry thread, one request at a time) fills the request, then
 * publishes req (release); the worker takes it (claim = req,
 * compare-and-swap), copies it, serves it and publishes done = req
 * (release). A requester that gives up waiting withdraws it by taking it
 * first (the same compare-and-swap): the worker then skips it, so that a
 * flush reported as not done is never done later. So claim is written
 * by both sides, and the whole struct sits on cache lines of its own.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cflow.h"

struct app_run;

enum app_ctl_op {
	APP_CTL_LOOKUP = 1,
	APP_CTL_FLUSH,
	APP_CTL_SAVE,           /* --state-interval's checkpoint */
};

struct app_ctl {
	uint32_t req;
	uint32_t done;
	uint32_t claim;         /* the last request taken, by either side */
	uint32_t op;            /* enum app_ctl_op */
	int ret;
	struct cflow_key key;   /* lookup */
	struct cflow_flow_info info;
	uint64_t flushed;       /* flush: open flows removed */
	void *buf;              /* save: into this, */
	uint64_t cap;           /* this many bytes at most; */
	int64_t saved;          /* so many saved */
};

/* Register the commands. 0, or a negative errno with the reason in
 * @p err. */
int app_control_setup(const struct app_run *run, char *err, size_t err_len);

struct app_worker;

/*
 * Worker @p w saves its table (cflow_tracker_save()) into @p buf, of
 * @p cap bytes, between two bursts: the bytes saved, or a negative
 * errno (-ETIMEDOUT: the worker did not take it within 2 s, withdrawn;
 * the save's own). Any thread but a worker's; one that took the request
 * is waited for however long it takes, since it writes into @p buf.
 */
int64_t app_control_save(struct app_worker *w, void *buf, uint64_t cap);

/* Whether a request waits in @p c (the worker's check, every loop). */
static inline bool
app_control_pending(const struct app_ctl *c)
{
	return __atomic_load_n(&c->req, __ATOMIC_ACQUIRE) != c->done;
}

/*
 * The worker: serve the request waiting in @p c on its tracker @p t,
 * unless its requester withdrew it. Returns true if it was a flush
 * that was served (the worker counts them).
 */
bool app_control_serve(struct app_ctl *c, struct cflow_tracker *t);

#endif /* _APP_CONTROL_H_ */
