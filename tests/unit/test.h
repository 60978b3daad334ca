/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _TEST_H_
#define _TEST_H_

/*
 * A table-driven unit test runner: each case returns 0 or -1, the runner
 * prints TAP (meson counts each case) and exits non-zero on any failure.
 * Run one case by naming it: ./test_x case_name.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cfutil.h"

#define TEST_ASSERT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stdout, "# %s:%d: assertion failed: %s: ", \
			__FILE__, __LINE__, #cond); \
		fprintf(stdout, __VA_ARGS__); \
		fprintf(stdout, "\n"); \
		return -1; \
	} \
} while (0)

#define TEST_ASSERT_EQ(a, b, ...) TEST_ASSERT((a) == (b), __VA_ARGS__)

struct test_case {
	const char *name;
	int (*fn)(void);
};

#define TEST_CASE(fn) { #fn, fn }
#define TEST_CASES_END() { NULL, NULL }

static inline int
test_run(const struct test_case *cases, int argc, char **argv)
{
	int n = 0, failed = 0, i;

	for (i = 0; cases[i].name != NULL; i++)
		if (argc < 2 || strcmp(argv[1], cases[i].name) == 0)
			n++;
	printf("1..%d\n", n);
	n = 0;
	for (i = 0; cases[i].name != NULL; i++) {
		int ret;

		if (argc >= 2 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		ret = cases[i].fn();
		printf("%s %d - %s\n", ret == 0 ? "ok" : "not ok", ++n,
			cases[i].name);
		fflush(stdout);
		failed += ret != 0;
	}
	return failed != 0;
}


#endif /* _TEST_H_ */
