/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Writes the seed corpus of fuzz_restore: for each settings byte, the
 * state of the tracker fuzz_restore makes from it after some TCP and UDP
 * flows (open, closing, idle), then the same frames again.
 * Usage: gen_restore_seeds DIR
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cflow.h"
#include "fuzz_cflow.h"
#define NB_FRAMES 40
#define FRAME_LEN 54

static const uint8_t settings[] = { 0, 1, 2, 4, 8, 16, 1 | 4 | 8, 2 | 16,
	32, 2 | 8 | 32 };

/* Ethernet, IPv4, TCP (with @p flags) or UDP: 54 bytes. */
static void
frame(uint8_t *f, unsigned int i)
{
	static const uint8_t eth[14] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1,
		0x08, 0x00 };
	bool tcp = i % 3 != 0;

	memset(f, 0, FRAME_LEN);
	memcpy(f, eth, sizeof(eth));
	f[14] = 0x45;
	f[17] = FRAME_LEN - 14;
	f[22] = 64;
	f[23] = tcp ? 6 : 17;
	f[26] = 10;
	f[29] = (uint8_t)(1 + i % 9);
	f[30] = 192;
	f[31] = 0;
	f[32] = 2;
	f[33] = 1;
	f[34] = 0x40;
	f[35] = (uint8_t)i;
	f[37] = 80;
	if (tcp)
		/* SYN, then ACK, and a FIN for some */
		f[47] = i < 20 ? 0x02 : i % 5 == 0 ? 0x11 : 0x10;
	else
		f[39] = 20;
}

int
main(int argc, char **argv)
{
	uint8_t frames[NB_FRAMES][FRAME_LEN];

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 1;
	}
	for (unsigned int i = 0; i < NB_FRAMES; i++)
		frame(frames[i], i % 20 + (i >= 20 ? 20 : 0));
	for (unsigned int s = 0; s < sizeof(settings); s++) {
		struct cflow_input in[NB_FRAMES];
		struct cflow_tracker_params p;
		struct cflow_tracker *t;
		char path[4096];
		uint8_t *buf;
		size_t len;
		FILE *out;

		fuzz_restore_params(settings[s], &p);
		t = cflow_tracker_create(&p);
		if (t == NULL)
			return 1;
		for (unsigned int i = 0; i < NB_FRAMES; i++)
			in[i] = (struct cflow_input){ .data = frames[i],
				.len = FRAME_LEN, .wire_len = FRAME_LEN,
				.time_ns = 1000 * MS * 1000 + i * 50 * MS,
				/* sided: some from the outside */
				.flags = (p.sided && i % 4 == 3) ?
					CFLOW_IN_OUTSIDE : 0 };
		cflow_track_burst(t, in, 32, NULL);
		cflow_track_burst(t, in + 32, NB_FRAMES - 32, NULL);
		len = cflow_tracker_save_size(t);
		buf = malloc(len);
		if (buf == NULL || len > 0xffff ||
				cflow_tracker_save(t, buf, len) != (int64_t)len)
			return 1;
		snprintf(path, sizeof(path), "%s/seed-%u", argv[1], s);
		out = fopen(path, "wb");
		if (out == NULL)
			return 1;
		fputc(settings[s], out);
		fputc((int)(len & 0xff), out);
		fputc((int)(len >> 8), out);
		fwrite(buf, 1, len, out);
		for (unsigned int i = 0; i < NB_FRAMES; i++) {
			fputc(i == 0 ? 10 : 1, out);
			fputc(FRAME_LEN, out);
			fwrite(frames[i], 1, FRAME_LEN, out);
		}
		if (fclose(out) != 0)
			return 1;
		free(buf);
		cflow_tracker_free(t);
	}
	return 0;
}
