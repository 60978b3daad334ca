/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The application's output writer (app/output.c), no EAL: a regular
 * file cut short by RLIMIT_FSIZE ends on a whole line or pcapng block
 * and counts the rest lost; a FIFO is written without waiting, whole
 * lines only, its reader's lag buffered then dropped whole, counted;
 * pcapng blocks longer than PIPE_BUF taken in parts are counted when
 * whole; a FIFO without a reader and a device are refused at once.
 */

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "test.h"

static char dir[] = "/tmp/test_output.XXXXXX";

static void
path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* A JSON-like line of @len bytes, '\n' included. */
static void
line(char *buf, size_t len, unsigned int n)
{
	memset(buf, 'a' + n % 26, len - 1);
	buf[0] = '{';
	buf[len - 2] = '}';
	buf[len - 1] = '\n';
}

/* A pcapng Enhanced Packet Block of @len bytes (a multiple of 4). */
static void
epb(uint8_t *buf, uint32_t len, uint8_t fill)
{
	uint32_t type = 6;

	memset(buf, fill, len);
	memcpy(buf, &type, 4);
	memcpy(buf + 4, &len, 4);
	memcpy(buf + len - 4, &len, 4);
}

static off_t
file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* Lines past a file size limit: the file ends on the last whole line. */
static int
test_regular_cut_back_to_a_line(void)
{
	struct rlimit old, lim = { .rlim_cur = 1000 };
	struct app_output o;
	char path[256], err[512], buf[70];
	int ret;

	path_of(path, sizeof(path), "lines.jsonl");
	TEST_ASSERT_EQ(app_output_open(&o, path, true, APP_OUTPUT_LINES, err,
		sizeof(err)), 0, "%s", err);
	TEST_ASSERT(!o.fifo, "a regular file");
	for (unsigned int i = 0; i < 30; i++) {
		line(buf, sizeof(buf), i);
		TEST_ASSERT_EQ(app_output_add(&o, buf, sizeof(buf)), 0, "add");
	}
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_FSIZE, &lim);
	ret = app_output_flush(&o);
	setrlimit(RLIMIT_FSIZE, &old);
	/* 1000 bytes taken: 14 lines of 70, and 20 bytes of one, cut */
	TEST_ASSERT_EQ(ret, -EFBIG, "flush: %d", ret);
	TEST_ASSERT(o.written == 14 && o.lost == 16 && o.errors == 1,
		"written %" PRIu64 ", lost %" PRIu64, o.written, o.lost);
	TEST_ASSERT_EQ(file_size(path), 14 * 70, "size %jd",
		(intmax_t)file_size(path));
	/* room again: the next lines follow the whole ones */
	line(buf, sizeof(buf), 99);
	TEST_ASSERT_EQ(app_output_add(&o, buf, sizeof(buf)), 0, "add");
	TEST_ASSERT_EQ(app_output_close(&o), -EFBIG, "close");
	TEST_ASSERT_EQ(file_size(path), 15 * 70, "size");
	unlink(path);
	return 0;
}

/* pcapng blocks past the limit: the file ends on a whole block; only
 * packets (EPBs) are counted. */
static int
test_regular_cut_back_to_a_block(void)
{
	struct rlimit old, lim;
	struct app_output o;
	char path[256], err[512];
	uint8_t blocks[5 * 400];
	int ret;

	path_of(path, sizeof(path), "first.pcapng");
	TEST_ASSERT_EQ(app_output_open(&o, path, false, APP_OUTPUT_PCAPNG,
		err, sizeof(err)), 0, "%s", err);
	for (unsigned int i = 0; i < 5; i++)
		epb(blocks + 400 * i, 400, (uint8_t)i);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = (struct rlimit){ .rlim_cur = 1000, .rlim_max = old.rlim_max };
	setrlimit(RLIMIT_FSIZE, &lim);
	ret = app_output_add(&o, blocks, sizeof(blocks));
	if (ret == 0)
		ret = app_output_flush(&o);
	setrlimit(RLIMIT_FSIZE, &old);
	TEST_ASSERT_EQ(ret, -EFBIG, "%d", ret);
	TEST_ASSERT(o.written == 2 && o.lost == 3, "written %" PRIu64
		", lost %" PRIu64, o.written, o.lost);
	TEST_ASSERT_EQ(file_size(path), 800, "size");
	(void)app_output_close(&o);
	unlink(path);
	return 0;
}

static int
test_refused_at_once(void)
{
	struct app_output o;
	char path[256], err[512];

	path_of(path, sizeof(path), "noreader.fifo");
	TEST_ASSERT_EQ(mkfifo(path, 0600), 0, "mkfifo");
	TEST_ASSERT_EQ(app_output_open(&o, path, true, APP_OUTPUT_LINES, err,
		sizeof(err)), -ENXIO, "FIFO without reader");
	TEST_ASSERT(strstr(err, "is a FIFO with no reader") != NULL, "%s",
		err);
	TEST_ASSERT_EQ(app_output_open(&o, "/dev/null", true,
		APP_OUTPUT_LINES, err, sizeof(err)), -EINVAL, "/dev/null");
	TEST_ASSERT(strstr(err, "is a character device, not a regular file "
		"or FIFO") != NULL, "%s", err);
	TEST_ASSERT_EQ(app_output_open(&o, dir, true, APP_OUTPUT_LINES, err,
		sizeof(err)), -EISDIR, "a directory");
	unlink(path);
	return 0;
}

/* Read all a FIFO holds now. */
static size_t
drain(int fd, uint8_t *buf, size_t max)
{
	size_t got = 0;
	ssize_t n;

	while (got < max && (n = read(fd, buf + got, max - got)) > 0)
		got += (size_t)n;
	return got;
}

/* A reader that does not read: the pipe, then the buffer fill, then
 * lines are dropped whole; what the reader gets is whole lines. */
static int
test_fifo_whole_lines(void)
{
	static uint8_t got[4 << 20];
	struct app_output o;
	char path[256], err[512], buf[300];
	uint64_t added = 0;
	size_t n, lines = 0;
	int rd;

	path_of(path, sizeof(path), "lines.fifo");
	TEST_ASSERT_EQ(mkfifo(path, 0600), 0, "mkfifo");
	rd = open(path, O_RDONLY | O_NONBLOCK);
	TEST_ASSERT(rd >= 0, "reader");
	TEST_ASSERT_EQ(app_output_open(&o, path, true, APP_OUTPUT_LINES, err,
		sizeof(err)), 0, "%s", err);
	TEST_ASSERT(o.fifo, "a FIFO");
	/* 3 MiB of lines: more than the pipe and the buffer */
	for (unsigned int i = 0; i < 10000; i++) {
		line(buf, sizeof(buf), i);
		(void)app_output_add(&o, buf, sizeof(buf));
		added++;
		TEST_ASSERT_EQ(app_output_flush(&o), 0, "flush");
	}
	TEST_ASSERT(o.lost > 0 && o.len <= APP_OUTPUT_FIFO_MAX, "lost %"
		PRIu64 ", %zu pending", o.lost, o.len);
	n = drain(rd, got, sizeof(got));
	TEST_ASSERT(n > 0 && n % sizeof(buf) == 0, "%zu bytes read", n);
	/* the reader caught up: the rest goes at close, waited for */
	while (o.len != 0) {
		TEST_ASSERT_EQ(app_output_flush(&o), 0, "flush");
		n += drain(rd, got + n, sizeof(got) - n);
	}
	TEST_ASSERT_EQ(app_output_close(&o), 0, "close");
	n += drain(rd, got + n, sizeof(got) - n);
	for (size_t k = 0; k < n; k += sizeof(buf), lines++)
		TEST_ASSERT(got[k] == '{' && got[k + sizeof(buf) - 1] == '\n',
			"line %zu", lines);
	TEST_ASSERT(n % sizeof(buf) == 0 && o.written == lines &&
		o.written + o.lost == added, "%zu bytes, written %" PRIu64
		", lost %" PRIu64, n, o.written, o.lost);
	close(rd);
	unlink(path);
	return 0;
}

/* pcapng blocks of 9 KB (past PIPE_BUF: taken in parts): counted when
 * whole; at an interrupted close, those left are counted lost, the part
 * of one included, and nothing waits. */
static int
test_fifo_blocks_in_parts(void)
{
	static uint8_t got[1 << 20];
	uint8_t blocks[8 * 9000];
	struct app_output o;
	char path[256], err[512];
	size_t n;
	int rd;

	path_of(path, sizeof(path), "blocks.fifo");
	TEST_ASSERT_EQ(mkfifo(path, 0600), 0, "mkfifo");
	rd = open(path, O_RDONLY | O_NONBLOCK);
	TEST_ASSERT(rd >= 0, "reader");
	TEST_ASSERT_EQ(app_output_open(&o, path, false, APP_OUTPUT_PCAPNG,
		err, sizeof(err)), 0, "%s", err);
	for (unsigned int i = 0; i < 8; i++)
		epb(blocks + 9000 * i, 9000, (uint8_t)i);
	/* 72,000 bytes: a 64 KiB pipe takes 7 blocks and part of one */
	TEST_ASSERT_EQ(app_output_add(&o, blocks, sizeof(blocks)), 0, "add");
	TEST_ASSERT_EQ(app_output_flush(&o), 0, "flush");
	TEST_ASSERT(o.len != 0 && o.written == 65536 / 9000, "written %"
		PRIu64 ", %zu pending (pipe of %d)", o.written, o.len,
		fcntl(rd, F_GETPIPE_SZ));
	n = drain(rd, got, 20000);
	TEST_ASSERT_EQ(n, 20000, "read");
	TEST_ASSERT_EQ(app_output_flush(&o), 0, "flush");
	TEST_ASSERT(o.len == 0 && o.written == 8, "written %" PRIu64,
		o.written);
	/* now a reader that stops: the close is interrupted */
	TEST_ASSERT_EQ(app_output_add(&o, blocks, sizeof(blocks)), 0, "add");
	(void)app_output_flush(&o);
	app_output_interrupt();
	TEST_ASSERT(app_output_interrupted(), "interrupted");
	TEST_ASSERT_EQ(app_output_close(&o), 0, "close");
	TEST_ASSERT(o.written + o.lost == 16 && o.lost > 0, "written %" PRIu64
		", lost %" PRIu64, o.written, o.lost);
	close(rd);
	unlink(path);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_regular_cut_back_to_a_line),
	TEST_CASE(test_regular_cut_back_to_a_block),
	TEST_CASE(test_refused_at_once),
	TEST_CASE(test_fifo_whole_lines),
	/* last: it interrupts every later close */
	TEST_CASE(test_fifo_blocks_in_parts),
	TEST_CASES_END(),
};

int
main(int argc, char **argv)
{
	int ret;

	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(dir) == NULL)
		return 1;
	ret = test_run(cases, argc, argv);
	rmdir(dir);
	return ret;
}
