/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_OUTPUT_H_
#define _APP_OUTPUT_H_

/*
 * The files the main lcore writes during and at the end of a run:
 * --events, --new-flow-pcap, --stats-json, --stats-json-period
 * (docs/usage.md, "Output files"). None of them may block it: not at
 * start, not at exit after SIGINT, not when a rotated path comes back
 * as something else.
 *
 * A path is opened with O_NONBLOCK and must then be a regular file, or
 * a FIFO that a reader has open (opening one without would wait for a
 * reader: refused, as is any other kind of file).
 *
 * Records (JSON lines, pcapng blocks) are added whole to a buffer of
 * the output's own and written at each flush:
 * - a regular file takes all of it (at the disk's pace); a write that
 *   fails midway (a full disk, a file size limit) is cut back to the
 *   last whole record (ftruncate()), so that the file never ends in part
 *   of one; the records not written are counted lost;
 * - a FIFO is written without waiting: what its reader does not take
 *   stays buffered, up to APP_OUTPUT_FIFO_MAX bytes; records that find
 *   no room are dropped whole, counted. Lines go in writes of whole lines
 *   of at most PIPE_BUF bytes, which a pipe takes whole or not at all:
 *   the reader never sees part of a line.
 * At close, what a FIFO's reader has not taken yet is waited for (its
 * writes polled), unless the run was interrupted (app_output_interrupt(),
 * from the SIGINT and SIGTERM handler) before or during the wait: then
 * it is dropped at once, counted.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a FIFO's reader may leave unread before records are dropped. */
#define APP_OUTPUT_FIFO_MAX (1u << 20)

enum app_output_records {
	APP_OUTPUT_LINES,       /* '\n'-terminated */
	APP_OUTPUT_PCAPNG,      /* pcapng blocks (length at byte 4) */
};

struct app_output {
	int fd;
	bool fifo;
	enum app_output_records kind;
	uint8_t *buf;           /* records not written yet, whole but */
	size_t len;             /* the first: a FIFO may have taken part */
	size_t cap;             /* of it, head_left bytes are left of it */
	size_t head_left;
	bool head_is_record;    /* it counts (pcapng: a packet's block) */
	uint64_t written;       /* records written whole */
	uint64_t lost;          /* dropped, or cut back from the file */
	uint64_t errors;        /* failed writes */
	int err;                /* the last write error (errno), or 0 */
	bool broken;            /* the FIFO's reader is gone (EPIPE) */
	uint64_t checked_ns;    /* app_output_follow()'s last look */
};

/*
 * Open @p path for @p o: @p append (else truncated, a regular file);
 * created if missing. 0, or -errno with the reason (the path, and why)
 * in @p err: "is a FIFO with no reader", "is a character device, not a
 * regular file or FIFO", or the system's.
 */
int app_output_open(struct app_output *o, const char *path, bool append,
		enum app_output_records kind, char *err, size_t err_len);

/*
 * Take @p o over from @p from (its records written or waiting), for a
 * path reopened after rotation: @p from's pending records go to the old
 * file first, without waiting; it is closed. Returns 0, or -errno if
 * they could not all be written (counted lost).
 */
int app_output_switch(struct app_output *o, struct app_output *from);

/*
 * logrotate's way, for an output appended to: once a second, if @p path
 * no longer names the file written to (moved away, removed), or at once
 * if @p force (SIGHUP), open @p path anew and go on there (its pending
 * records first go to the old file, app_output_switch()). What the path
 * names must do as well as at start (app_output_open(): a FIFO without
 * a reader is refused, never waited for). Returns 1 if reopened, 0 if
 * not needed, or -errno with the reason in @p err: the old file is
 * still written to, and the next call tries again.
 */
int app_output_follow(struct app_output *o, const char *path, bool force,
		char *err, size_t err_len);

/* Add whole records, @p len bytes. 0; or -ENOBUFS: a FIFO's reader
 * behind, the records that found no room dropped whole, counted; or
 * -errno of a regular file's failed write (records counted lost). */
int app_output_add(struct app_output *o, const void *data, size_t len);

/* Write what is pending, without waiting on a FIFO. 0, or -errno of a
 * write that failed (then o->err; the records lost counted). */
int app_output_flush(struct app_output *o);

/* Flush, waiting for a FIFO's reader unless interrupted, and close. 0,
 * or -errno of the last failed write (o->errors). Records dropped for a
 * FIFO's reader behind or an interruption are no error: o->lost. */
int app_output_close(struct app_output *o);

/* Stop every wait of app_output_close(), now and later: called from
 * the SIGINT and SIGTERM handler (async-signal-safe). */
void app_output_interrupt(void);

/* Whether app_output_interrupt() was called. */
bool app_output_interrupted(void);

#endif /* _APP_OUTPUT_H_ */
