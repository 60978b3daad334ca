/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * cuckooflow-filter: compile blocklists into filter files and query them.
 *
 *   cuckooflow-filter build LIST -o FILE [--fp-bits N]
 *   cuckooflow-filter query FILE ENTRY...
 *   cuckooflow-filter info FILE
 *
 * FILE may be a compiled file or a text list. Every file must be a
 * regular file (the library refuses FIFOs, directories and devices).
 * Exit status: build and info, 0 or 1 on an error; query, like grep, 0
 * if an entry is listed, 1 if none is, 2 on an error; bad usage, 2.
 * --help prints the usage to stdout and exits 0; --version the version.
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocklist.h"

enum {
	EXIT_LISTED = 0,
	EXIT_NOT_LISTED = 1,
	EXIT_QUERY_ERROR = 2,
	EXIT_USAGE = 2,
};

static void
print_usage(FILE *out)
{
	fprintf(out,
		"usage: cuckooflow-filter build LIST -o FILE [--fp-bits N]\n"
		"       cuckooflow-filter query FILE ENTRY...\n"
		"       cuckooflow-filter info FILE\n"
		"       cuckooflow-filter --help | --version\n"
		"LIST: one entry a line, '#' or ';' comments: an address, a "
		"prefix "
		"(a.b.c.d/n, x::/n),\n"
		"or 'proto src sport dst dport'. --fp-bits: 8..32 "
		"(default 32).\n"
		"FILE: a compiled file (build's output) or a text list. Files "
		"must be regular\n"
		"files: text lists up to %" PRIu64 " MiB, lines up to %d "
		"bytes; compiled files up to %" PRIu64 " MiB.\n"
		"build writes FILE through a temporary file renamed over it.\n"
		"Exit status: build, info: 0 done, 1 error. query: 0 if an "
		"ENTRY is listed,\n"
		"1 if none is, 2 on an error (like grep). Bad usage: 2.\n",
		CBL_TEXT_MAX >> 20, CBL_LINE_MAX,
		CBL_COMPILED_MAX >> 20);
}

static int
usage(void)
{
	print_usage(stderr);
	return EXIT_USAGE;
}

/* What is wrong with the command line, then the usage: exit 2. */
static int
usage_because(const char *fmt, const char *arg)
{
	fprintf(stderr, "cuckooflow-filter: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return usage();
}

/* Output that could not be written (a full disk, a closed pipe) is an
 * error too. */
static int
finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "cuckooflow-filter: standard output: %s\n",
			strerror(errno));
		return status == EXIT_SUCCESS ? EXIT_FAILURE : status;
	}
	return status;
}

static void
print_info(const char *path, const struct cbl *bl)
{
	struct cbl_info in;

	cbl_info(bl, &in);
	printf("%s: %lu entries (%lu addresses, %lu prefixes, %lu flows)\n"
		"prefix lengths: %u IPv4, %u IPv6\n"
		"fingerprint bits: %u, %.2f bits per entry\n"
		"expected false matches: %.3g per packet\n", path,
		(unsigned long)in.total,
		(unsigned long)in.entries[CBL_ADDRESS],
		(unsigned long)in.entries[CBL_PREFIX],
		(unsigned long)in.entries[CBL_FLOW], in.v4_lengths,
		in.v6_lengths, in.fp_bits, in.bits_per_entry,
		in.expected_false_match);
}

static int
build(int argc, char **argv)
{
	const char *list = NULL, *out = NULL;
	unsigned long fp_bits = 32;
	struct cbl *bl;
	char err[512];

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(argv[i], "--fp-bits") == 0 && i + 1 < argc) {
			char *end;

			errno = 0;
			fp_bits = strtoul(argv[++i], &end, 10);
			if (*end != '\0' || end == argv[i] || errno != 0 ||
					fp_bits < 8 || fp_bits > 32) {
				fprintf(stderr, "cuckooflow-filter: --fp-bits "
					"%s: want 8..32\n", argv[i]);
				return EXIT_USAGE;
			}
		} else if (list == NULL && argv[i][0] != '-') {
			list = argv[i];
		} else {
			return usage_because(strcmp(argv[i], "-o") == 0 ||
				strcmp(argv[i], "--fp-bits") == 0 ?
				"build: %s needs a value" :
				"build: %s: unexpected argument", argv[i]);
		}
	}
	if (list == NULL)
		return usage_because("build: %s", "no LIST to compile");
	if (out == NULL)
		return usage_because("build: %s", "-o FILE is missing");
	bl = cbl_read(list, (unsigned int)fp_bits, err, sizeof(err));
	if (bl == NULL) {
		fprintf(stderr, "cuckooflow-filter: %s\n", err);
		return EXIT_FAILURE;
	}
	if (cbl_save(bl, out, err, sizeof(err)) != 0) {
		fprintf(stderr, "cuckooflow-filter: %s\n", err);
		cbl_free(bl);
		return EXIT_FAILURE;
	}
	print_info(out, bl);
	cbl_free(bl);
	return finish(EXIT_SUCCESS);
}

static int
info(const char *path)
{
	struct cbl *bl;
	char err[512];

	bl = cbl_load(path, err, sizeof(err));
	if (bl == NULL) {
		fprintf(stderr, "cuckooflow-filter: %s\n", err);
		return EXIT_FAILURE;
	}
	print_info(path, bl);
	cbl_free(bl);
	return finish(EXIT_SUCCESS);
}

/* Every entry is answered; the status is grep's: listed, none, error. */
static int
query(const char *path, int n, char **entries)
{
	struct cbl *bl;
	bool listed = false, failed = false;
	char err[512];

	bl = cbl_load(path, err, sizeof(err));
	if (bl == NULL) {
		fprintf(stderr, "cuckooflow-filter: %s\n", err);
		return EXIT_QUERY_ERROR;
	}
	for (int i = 0; i < n; i++) {
		enum cbl_kind kind;

		if (cbl_match_text(bl, entries[i], &kind, err,
				sizeof(err)) != 0) {
			fprintf(stderr, "cuckooflow-filter: query '%s': %s\n",
				entries[i], err);
			failed = true;
			continue;
		}
		listed |= kind != CBL_NONE;
		printf("%s: %s\n", entries[i], kind == CBL_NONE ?
			"not listed" : cbl_kind_name(kind));
	}
	cbl_free(bl);
	if (finish(EXIT_SUCCESS) != EXIT_SUCCESS || failed)
		return EXIT_QUERY_ERROR;
	return listed ? EXIT_LISTED : EXIT_NOT_LISTED;
}

int
main(int argc, char **argv)
{
	/* lists are read only while no other process writes them
	 * (cfu_file_no_writer(): a lease, whose break sends SIGIO) */
	signal(SIGIO, SIG_IGN);
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
			strcmp(argv[1], "-h") == 0)) {
		print_usage(stdout);
		return finish(EXIT_SUCCESS);
	}
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("cuckooflow-filter %s\n", CF_VERSION);
		return finish(EXIT_SUCCESS);
	}
	if (argc < 2)
		return usage_because("%s", "no command (build, query or info)");
	if (strcmp(argv[1], "build") == 0)
		return build(argc - 2, argv + 2);
	if (strcmp(argv[1], "info") == 0)
		return argc == 3 ? info(argv[2]) :
			usage_because("info: %s", "want one FILE");
	if (strcmp(argv[1], "query") == 0)
		return argc >= 4 ? query(argv[2], argc - 3, argv + 3) :
			usage_because("query: %s", "want a FILE and at least "
				"one ENTRY");
	return usage_because("%s: unknown command (want build, query or "
		"info)", argv[1]);
}
