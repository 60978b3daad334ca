/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A text list rewritten between cbl_read()'s two passes (same line
 * count): the first pass sizes the IPv4 length index for the lengths it
 * saw, the second adds what it reads. An IPv4 length the first pass did
 * not see has no cell bit (an IPv6-only first pass: no index at all), so
 * such a list is refused as changed while being read, fail closed,
 * never built from a wrong or absent index.
 *
 * The rewrite happens at the rewind between the passes: this program's
 * own lseek() (the library is linked statically, its call binds here)
 * writes the second text, then seeks. The read as a whole sees the file
 * changed (its size or times) and reads it again, the second text whole;
 * a rewrite the file's times cannot show (same size, same clock tick) is
 * refused by the pass's own check. Either way never fail open.
 *
 * And a list another process holds open for writing (a writer at work,
 * its list half written) is not read at all (EBUSY).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blocklist.h"
#include "cflow.h"
#include "cfutil.h"
#include "test.h"

static char dir[] = "/tmp/cf_blrr_XXXXXX";
static const char *rewrite_path, *rewrite_text;

off_t lseek(int fd, off_t off, int whence);

off_t
lseek(int fd, off_t off, int whence)
{
	if (rewrite_path != NULL && off == 0 && whence == SEEK_SET) {
		int w = open(rewrite_path, O_WRONLY | O_TRUNC);
		size_t len = strlen(rewrite_text);

		if (w < 0 || write(w, rewrite_text, len) != (ssize_t)len)
			abort();
		close(w);
		rewrite_path = NULL;
	}
	return (off_t)syscall(SYS_lseek, fd, off, whence);
}

/*
 * cbl_read() of @p first rewritten to @p second between the passes, in
 * a child (a crash is a failure, not the end of the run). Exit 0: refused
 * as changed; 2: loaded, and @p probe (an IPv4 address of @p second)
 * not matched; 3: loaded and matched; 1: refused otherwise.
 */
static int
read_rewritten(const char *first, const char *second, const char *probe)
{
	char path[256], err[256];
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/l.txt", dir);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct cflow_packet p;
		uint8_t a[16] = { [10] = 0xff, [11] = 0xff }, b[16];
		struct cbl *bl;
		FILE *fp = fopen(path, "w");

		if (fp == NULL || fputs(first, fp) < 0 || fclose(fp) != 0)
			_exit(1);
		rewrite_path = path;
		rewrite_text = second;
		bl = cbl_read(path, 0, err, sizeof(err));
		if (bl == NULL)
			_exit(strstr(err, "changed while being read") != NULL &&
				errno == EAGAIN ? 0 : 1);
		if (inet_pton(AF_INET, probe, a + 12) != 1)
			_exit(1);
		memcpy(b, a, 16);
		b[12] ^= 0x80;
		memset(&p, 0, sizeof(p));
		cflow_key_init(&p.key, 4, a, b, 1, 2, 17);
		p.has_addrs = true;
		_exit(cbl_match(bl, &p) == CBL_NONE ? 2 : 3);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 100 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* IPv6 only in the first pass (no index), IPv4 in the second: the
 * second pass wrote into the absent index (SIGSEGV). */
static int
test_v4_after_v6_only(void)
{
	int r = read_rewritten("2001:db8::1\n", "10.10.10.10\n",
		"10.10.10.10");

	TEST_ASSERT(r == 0 || r == 3, "read_rewritten: %d (0 refused as "
		"changed, 3 read again whole; 1 refused otherwise, 2 loaded "
		"and not matched, 100+ signal)", r);
	return 0;
}

/* An IPv4 length the first pass did not see: its entries took the bit
 * of the first pass's shortest length (/28), looked up at /28, and
 * 1.0.0.1 of 1.0.0.0/30 was not matched (fail open). */
static int
test_unseen_v4_length(void)
{
	int r = read_rewritten("1.0.0.0/28\n", "1.0.0.0/30\n", "1.0.0.1");

	TEST_ASSERT(r == 0 || r == 3, "read_rewritten: %d (0 refused as "
		"changed, 3 read again whole; 1 refused otherwise, 2 loaded "
		"and not matched, 100+ signal)", r);
	return 0;
}

/* The same rewrite with lengths the first pass saw is read (it is a
 * list, whichever version): the check refuses only what the index
 * cannot hold. */
static int
test_seen_lengths_rewrite(void)
{
	int r = read_rewritten("1.0.0.0/28\n9.9.9.9/30\n",
		"1.0.0.0/30\n9.9.9.0/28\n", "1.0.0.1");

	TEST_ASSERT_EQ(r, 3, "read_rewritten: %d (3: loaded and matched)", r);
	return 0;
}

/* A list being written (truncated, half written, its writer pausing
 * with the file open): not read, EBUSY, named; read once closed. A
 * change after the open is seen by cfu_file_unchanged(). */
static int
test_writer_open(void)
{
	char path[256], err[256];
	struct stat sb;
	struct cbl *bl;
	int w, r;

	snprintf(path, sizeof(path), "%s/w.txt", dir);
	w = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	TEST_ASSERT(w >= 0, "open %s", path);
	TEST_ASSERT(write(w, "10.0.0.1\n", 9) == 9, "write");
	errno = 0;
	bl = cbl_read(path, 0, err, sizeof(err));
	TEST_ASSERT(bl == NULL && errno == EBUSY &&
		strstr(err, "being written") != NULL, "read while open for "
		"writing: %p, errno %d, %s", (void *)bl, errno, err);
	bl = cbl_load(path, err, sizeof(err));
	TEST_ASSERT(bl == NULL && errno == EBUSY, "load while open for "
		"writing: %p, errno %d", (void *)bl, errno);
	TEST_ASSERT(write(w, "10.0.0.2\n", 9) == 9, "write");
	close(w);
	bl = cbl_read(path, 0, err, sizeof(err));
	TEST_ASSERT(bl != NULL, "read once written: %s", err);
	cbl_free(bl);
	/* cfu_file_unchanged(): an append after the open */
	r = cfu_file_open(path, &sb, err, sizeof(err));
	TEST_ASSERT(r >= 0, "%s", err);
	TEST_ASSERT_EQ(cfu_file_unchanged(r, path, &sb), 0, "unchanged");
	w = open(path, O_WRONLY | O_APPEND);
	TEST_ASSERT(w >= 0 && write(w, "10.0.0.3\n", 9) == 9, "append");
	close(w);
	TEST_ASSERT_EQ(cfu_file_unchanged(r, path, &sb), -EAGAIN, "appended");
	close(r);
	unlink(path);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_writer_open),
	TEST_CASE(test_v4_after_v6_only),
	TEST_CASE(test_unseen_v4_length),
	TEST_CASE(test_seen_lengths_rewrite),
	TEST_CASES_END(),
};

int
main(int argc, char **argv)
{
	char path[300];
	int ret;

	if (mkdtemp(dir) == NULL)
		return 1;
	/* cfu_file_no_writer() asks only where SIGIO ends nothing */
	signal(SIGIO, SIG_IGN);
	ret = test_run(cases, argc, argv);
	snprintf(path, sizeof(path), "%s/l.txt", dir);
	unlink(path);
	rmdir(dir);
	return ret;
}
