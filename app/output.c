/* SPDX-License-Identifier: BSD-3-Clause */

/* Output files that never block the main lcore (output.h). */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cfutil.h"
#include "output.h"

/* A regular file's buffer: a drain's lines go in one write or a few. */
#define REGULAR_BUF (256u << 10)
/* pcapng (section 3.1): type, total length, ..., total length again */
#define PCAPNG_BLOCK_MIN 12
#define PCAPNG_EPB 6
/* How long a wait for a FIFO's reader sleeps between checks of the
 * interruption. */
#define FIFO_POLL_MS 50
/* How often app_output_follow() looks at the path. */
#define FOLLOW_NS UINT64_C(1000000000)

static bool interrupted;

void
app_output_interrupt(void)
{
	__atomic_store_n(&interrupted, true, __ATOMIC_RELAXED);
}

bool
app_output_interrupted(void)
{
	return __atomic_load_n(&interrupted, __ATOMIC_RELAXED);
}

/*
 * The records that end within @p p[0, len): their count (pcapng: the
 * Enhanced Packet Blocks, the packets; the other blocks are carried but
 * not counted) into *@p n, their bytes returned.
 */
static size_t
whole_records(const struct app_output *o, const uint8_t *p, size_t len,
		uint64_t *n)
{
	size_t off = 0;

	*n = 0;
	if (o->kind == APP_OUTPUT_LINES) {
		const uint8_t *nl;

		while (off < len && (nl = memchr(p + off, '\n', len - off)) !=
				NULL) {
			off = (size_t)(nl - p) + 1;
			(*n)++;
		}
		return off;
	}
	while (len - off >= 8) {
		uint32_t type, blen;

		memcpy(&type, p + off, sizeof(type));
		memcpy(&blen, p + off + 4, sizeof(blen));
		if (blen < PCAPNG_BLOCK_MIN || blen > len - off)
			break;
		off += blen;
		*n += type == PCAPNG_EPB;
	}
	return off;
}

static uint64_t
count_records(const struct app_output *o, const uint8_t *p, size_t len)
{
	uint64_t n;

	(void)whole_records(o, p, len, &n);
	return n;
}

/* The records pending, the one partly written included. */
static uint64_t
pending_records(const struct app_output *o)
{
	uint64_t n = count_records(o, o->buf + o->head_left,
		o->len - o->head_left);

	/* the head's type is gone with its written part: a pcapng head
	 * counts as a packet only if it may be one */
	return n + (o->head_left != 0 && o->head_is_record);
}

static void
write_failed(struct app_output *o, int e)
{
	o->errors++;
	o->err = e;
	if (e == EPIPE)
		o->broken = true;
}

/*
 * A regular file: all of @p p[0, len), whole records, at the disk's
 * pace. A write that fails midway is cut back to the end of the last
 * whole record written, so that the file ends on a record.
 */
static int
write_regular(struct app_output *o, const uint8_t *p, size_t len)
{
	size_t done = 0, whole;
	uint64_t n;
	int e = 0;

	while (done < len) {
		ssize_t w = write(o->fd, p + done, len - done);

		if (w > 0) {
			done += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		e = w < 0 ? errno : ENOSPC;
		break;
	}
	whole = whole_records(o, p, done, &n);
	o->written += n;
	if (done == len)
		return 0;
	if (done > whole) {
		off_t end = lseek(o->fd, 0, SEEK_CUR);

		/* the part of a record written, taken back */
		if (end < 0 || ftruncate(o->fd, end - (off_t)(done - whole))
				!= 0 || lseek(o->fd, end - (off_t)(done -
				whole), SEEK_SET) < 0)
			e = errno; /* the file may end in part of one */
	}
	o->lost += count_records(o, p + whole, len - whole);
	write_failed(o, e);
	return -e;
}

/* Forget the first @p w pending bytes, written; count the records they
 * complete, and what is left of one they end within. */
static void
consume(struct app_output *o, size_t w)
{
	size_t from = 0, whole;
	uint64_t n;

	if (o->head_left != 0) {
		if (w < o->head_left) {
			o->head_left -= w;
			goto out;
		}
		o->written += o->head_is_record;
		from = o->head_left;
		o->head_left = 0;
	}
	whole = from + whole_records(o, o->buf + from, w - from, &n);
	o->written += n;
	if (whole < w) {
		/* a record begun, whole in the buffer: what is left of it */
		uint32_t type = 0, blen;
		const uint8_t *nl;

		if (o->kind == APP_OUTPUT_LINES) {
			nl = memchr(o->buf + w, '\n', o->len - w);
			blen = (uint32_t)((size_t)(nl - o->buf) + 1 - whole);
		} else {
			memcpy(&type, o->buf + whole, sizeof(type));
			memcpy(&blen, o->buf + whole + 4, sizeof(blen));
		}
		o->head_left = blen - (w - whole);
		o->head_is_record = o->kind == APP_OUTPUT_LINES ||
			type == PCAPNG_EPB;
	}
out:
	memmove(o->buf, o->buf + w, o->len - w);
	o->len -= w;
}

/*
 * The bytes of the next write to a FIFO. Lines: whole lines of at most
 * PIPE_BUF bytes, which a pipe takes whole or not at all; a line longer
 * than that (a --stats-json-period line of many lcores) alone, which it
 * may take in part. pcapng: all.
 */
static size_t
fifo_chunk(const struct app_output *o)
{
	const uint8_t *nl;

	if (o->kind != APP_OUTPUT_LINES || o->len <= PIPE_BUF)
		return o->len;
	if (o->head_left != 0)
		return o->head_left;
	nl = memrchr(o->buf, '\n', PIPE_BUF);
	if (nl == NULL)
		nl = memchr(o->buf, '\n', o->len);
	return nl != NULL ? (size_t)(nl - o->buf) + 1 : o->len;
}

/* A FIFO: what its reader takes now, without waiting. */
static int
write_fifo(struct app_output *o)
{
	while (o->len != 0) {
		ssize_t w = write(o->fd, o->buf, fifo_chunk(o));

		if (w > 0) {
			o->broken = false;
			consume(o, (size_t)w);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		/* EPIPE: no reader any more (SIGPIPE is ignored); what is
		 * pending cannot reach one */
		o->lost += pending_records(o);
		o->len = 0;
		o->head_left = 0;
		write_failed(o, w < 0 ? errno : EIO);
		return -o->err;
	}
	return 0;
}

int
app_output_flush(struct app_output *o)
{
	int ret;

	if (o->fd < 0 || o->len == 0)
		return 0;
	if (o->fifo)
		return write_fifo(o);
	ret = write_regular(o, o->buf, o->len);
	o->len = 0;
	return ret;
}

int
app_output_add(struct app_output *o, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t whole;
	uint64_t n;

	if (o->fd < 0)
		return -EBADF;
	/* a failed write is counted: the records after it may find room */
	if (o->len + len > o->cap)
		(void)app_output_flush(o);
	if (o->len + len <= o->cap) {
		memcpy(o->buf + o->len, p, len);
		o->len += len;
		return 0;
	}
	if (!o->fifo) /* larger than the buffer, which is empty now */
		return write_regular(o, p, len);
	/* a FIFO's reader behind: the records that fit, whole; the others
	 * dropped */
	whole = whole_records(o, p, o->cap - o->len, &n);
	memcpy(o->buf + o->len, p, whole);
	o->len += whole;
	o->lost += count_records(o, p + whole, len - whole);
	return -ENOBUFS;
}

static int
not_regular_or_fifo(const char *path, mode_t mode, char *err, size_t len)
{
	return cfu_fail(S_ISDIR(mode) ? EISDIR : EINVAL, err, len, "%s: is %s, "
		"not a regular file or FIFO", path, cfu_file_kind(mode));
}

int
app_output_open(struct app_output *o, const char *path, bool append,
		enum app_output_records kind, char *err, size_t err_len)
{
	struct stat sb;
	int fd, e;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->kind = kind;
	/* a device is not even opened */
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) &&
			!S_ISFIFO(sb.st_mode))
		return not_regular_or_fifo(path, sb.st_mode, err, err_len);
	fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY |
		O_CLOEXEC | (append ? O_APPEND : 0), 0644);
	if (fd < 0) {
		e = errno;
		/* ENXIO: a FIFO without a reader (or a socket) */
		if (e == ENXIO && stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode))
			return cfu_fail(e, err, err_len, "%s: is a FIFO with no "
				"reader (start its reader first)", path);
		if (e == ENXIO && stat(path, &sb) == 0)
			return not_regular_or_fifo(path, sb.st_mode, err,
				err_len);
		return cfu_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	if (fstat(fd, &sb) != 0) {
		e = errno;
		close(fd);
		return cfu_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode)) {
		close(fd);
		return not_regular_or_fifo(path, sb.st_mode, err, err_len);
	}
	if (S_ISREG(sb.st_mode) && !append && ftruncate(fd, 0) != 0) {
		e = errno;
		close(fd);
		return cfu_fail(e, err, err_len, "%s: %s", path, strerror(e));
	}
	o->fifo = S_ISFIFO(sb.st_mode);
	o->cap = o->fifo ? APP_OUTPUT_FIFO_MAX : REGULAR_BUF;
	o->buf = malloc(o->cap);
	if (o->buf == NULL) {
		close(fd);
		return cfu_fail(ENOMEM, err, err_len, "%s: %s", path,
			strerror(ENOMEM));
	}
	o->fd = fd;
	return 0;
}

/* Whatever is pending, dropped and counted; the descriptor closed. */
static int
output_release(struct app_output *o)
{
	int ret = 0;

	if (o->len != 0) {
		o->lost += pending_records(o);
		o->len = 0;
		o->head_left = 0;
		ret = -EAGAIN;
	}
	if (o->fd >= 0 && close(o->fd) != 0 && ret == 0) {
		write_failed(o, errno);
		ret = -o->err;
	}
	o->fd = -1;
	free(o->buf);
	o->buf = NULL;
	return ret;
}

int
app_output_switch(struct app_output *o, struct app_output *from)
{
	int ret = app_output_flush(from);
	int rel = output_release(from);

	o->written += from->written;
	o->lost += from->lost;
	o->errors += from->errors;
	if (o->err == 0)
		o->err = from->err;
	return ret < 0 ? ret : rel;
}

int
app_output_close(struct app_output *o)
{
	int ret;

	if (o->fd < 0)
		return o->errors != 0 ? -o->err : 0;
	ret = app_output_flush(o);
	while (ret == 0 && o->fifo && o->len != 0 &&
			!app_output_interrupted()) {
		struct pollfd pfd = { .fd = o->fd, .events = POLLOUT };

		if (poll(&pfd, 1, FIFO_POLL_MS) < 0 && errno != EINTR)
			break;
		ret = app_output_flush(o);
	}
	(void)output_release(o);
	return o->errors != 0 ? -o->err : 0;
}

int
app_output_follow(struct app_output *o, const char *path, bool force,
		char *err, size_t err_len)
{
	uint64_t now = cfu_clock_ns(CLOCK_MONOTONIC);
	struct stat at_path, open_file;
	struct app_output fresh;

	if (o->fd < 0)
		return 0;
	if (!force) {
		if (now - o->checked_ns < FOLLOW_NS)
			return 0;
		o->checked_ns = now;
		if (fstat(o->fd, &open_file) != 0)
			return 0;
		if (stat(path, &at_path) == 0 &&
				at_path.st_ino == open_file.st_ino &&
				at_path.st_dev == open_file.st_dev)
			return 0;
	}
	if (app_output_open(&fresh, path, true, o->kind, err, err_len) < 0)
		return -errno;
	(void)app_output_switch(&fresh, o);
	fresh.checked_ns = now;
	*o = fresh;
	return 1;
}
