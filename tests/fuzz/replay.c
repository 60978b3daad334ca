/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Replays a fuzz corpus without libFuzzer: each argument is a file or a
 * directory of files, each fed once to LLVMFuzzerTestOneInput(). A
 * failing input aborts, so the test fails naming the last file printed.
 */

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
replay_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 ||
			(len = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0) {
		perror(path);
		return -1;
	}
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (buf == NULL || fread(buf, 1, (size_t)len, fp) != (size_t)len) {
		perror(path);
		return -1;
	}
	fclose(fp);
	printf("# %s\n", path);
	fflush(stdout);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int files = 0;

	for (int i = 1; i < argc; i++) {
		struct stat sb;
		struct dirent **names;
		int n;

		if (stat(argv[i], &sb) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			if (replay_file(argv[i]) != 0)
				return 1;
			files++;
			continue;
		}
		n = scandir(argv[i], &names, NULL, alphasort);
		for (int k = 0; k < n; k++) {
			char path[4096];

			if (names[k]->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", argv[i],
					names[k]->d_name);
				if (replay_file(path) != 0)
					return 1;
				files++;
			}
			free(names[k]);
		}
		free(names);
	}
	printf("replayed %d inputs\n", files);
	return files == 0;
}
