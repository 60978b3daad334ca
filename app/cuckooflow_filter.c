/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * cuckooflow-filter: compile blocklists into filter files and query them.
 *
 *   cuckooflow-filter build LIST -o FILE [--fp-bits N]
 *   cuckooflow-filter query FILE ENTRY...
 *   cuckooflow-filter info FILE
 *
 * FILE may be a compiled file or a text list. Errors name the file (and
 * line) and exit with status 1; bad usage exits with 2.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocklist.h"

static int
usage(void)
{
	fprintf(stderr,
		"usage: cuckooflow-filter build LIST -o FILE [--fp-bits N]\n"
		"       cuckooflow-filter query FILE ENTRY...\n"
		"       cuckooflow-filter info FILE\n"
		"LIST: one entry a line, '#' comments: an address, a prefix "
		"(a.b.c.d/n, x::/n),\n"
		"or 'proto src sport dst dport'. --fp-bits: 8..32 "
		"(default 32).\n");
	return 2;
}

static void
print_info(const char *path, const struct cflow_blocklist *bl)
{
	struct cflow_bl_info in;

	cflow_bl_info(bl, &in);
	printf("%s: %lu entries (%lu addresses, %lu prefixes, %lu flows)\n"
		"prefix lengths: %u IPv4, %u IPv6\n"
		"fingerprint bits: %u, %.2f bits per entry\n"
		"expected false matches: %.3g per packet\n", path,
		(unsigned long)in.total,
		(unsigned long)in.entries[CFLOW_BL_ADDRESS],
		(unsigned long)in.entries[CFLOW_BL_PREFIX],
		(unsigned long)in.entries[CFLOW_BL_FLOW], in.v4_lengths,
		in.v6_lengths, in.fp_bits, in.bits_per_entry,
		in.expected_false_match);
}

static int
build(int argc, char **argv)
{
	const char *list = NULL, *out = NULL;
	unsigned long fp_bits = 32;
	struct cflow_blocklist *bl;
	char err[512];
	int ret;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(argv[i], "--fp-bits") == 0 && i + 1 < argc) {
			char *end;

			fp_bits = strtoul(argv[++i], &end, 10);
			if (*end != '\0' || fp_bits < 8 || fp_bits > 32) {
				fprintf(stderr, "cuckooflow-filter: --fp-bits "
					"%s: want 8..32\n", argv[i]);
				return 2;
			}
		} else if (list == NULL && argv[i][0] != '-') {
			list = argv[i];
		} else {
			return usage();
		}
	}
	if (list == NULL || out == NULL)
		return usage();
	bl = cflow_bl_read(list, (unsigned int)fp_bits, err, sizeof(err));
	if (bl == NULL) {
		fprintf(stderr, "cuckooflow-filter: %s\n", err);
		return 1;
	}
	ret = cflow_bl_save(bl, out, err, sizeof(err));
	if (ret != 0) {
		fprintf(stderr, "cuckooflow-filter: %s\n", err);
		cflow_bl_free(bl);
		return 1;
	}
	print_info(out, bl);
	cflow_bl_free(bl);
	return 0;
}

int
main(int argc, char **argv)
{
	struct cflow_blocklist *bl;
	char err[512];
	int ret = 0;

	if (argc < 3)
		return usage();
	if (strcmp(argv[1], "build") == 0)
		return build(argc - 2, argv + 2);
	if (strcmp(argv[1], "query") != 0 && strcmp(argv[1], "info") != 0)
		return usage();
	if (strcmp(argv[1], "info") == 0 && argc != 3)
		return usage();
	bl = cflow_bl_load(argv[2], err, sizeof(err));
	if (bl == NULL) {
		fprintf(stderr, "cuckooflow-filter: %s\n", err);
		return 1;
	}
	if (strcmp(argv[1], "info") == 0)
		print_info(argv[2], bl);
	for (int i = 3; i < argc; i++) {
		enum cflow_bl_kind kind;

		if (cflow_bl_match_text(bl, argv[i], &kind, err,
				sizeof(err)) != 0) {
			fprintf(stderr, "cuckooflow-filter: query '%s': %s\n",
				argv[i], err);
			ret = 1;
			continue;
		}
		printf("%s: %s\n", argv[i], kind == CFLOW_BL_NONE ?
			"not listed" : cflow_bl_kind_name(kind));
	}
	cflow_bl_free(bl);
	return ret;
}
