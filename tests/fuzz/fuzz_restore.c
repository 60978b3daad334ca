/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: cflow_tracker_restore() on arbitrary bytes (a warm
 * restart's state file is read from disk: untrusted), then packets
 * through the restored tracker. The input is a byte for the tracker's
 * settings, two bytes (little-endian) for the length of the saved state,
 * the saved state, then records of [time step: 1 byte, in 100 ms]
 * [length: 1 byte] [frame: length bytes] as in fuzz_track (frames of
 * odd length come from the outside: CFLOW_IN_OUTSIDE).
 *
 * The two checksums of the saved state (its header's and the filter
 * file's) are set right before the restore unless the settings' top bit
 * says not to, so that the fuzzer reaches what they guard: a file
 * written by anyone can carry correct ones. A refused state must set
 * errno and leave the tracker as it was; an accepted one must count its
 * open flows restored, keep the counters' invariants through bursts,
 * sweeps and a flush, and save again.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "cflow.h"
#include "fuzz_cflow.h"

/* cflow_tracker_save(): a 56-byte header, its checksum at 48 over the
 * bytes before; then cf_save_mem(): a 96-byte header, its checksum at 88
 * over everything with that field zero. */
#define TRK_HDR 56
#define TRK_SUM 48
#define CF_HDR 96
#define CF_SUM 88

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fix_checksums(uint8_t *b, size_t len)
{
	uint64_t sum, zero = 0;
	XXH64_state_t *st;

	if (len < TRK_HDR)
		return;
	sum = XXH64(b, TRK_SUM, 0);
	memcpy(b + TRK_SUM, &sum, sizeof(sum));
	if (len < TRK_HDR + CF_HDR)
		return;
	b += TRK_HDR;
	len -= TRK_HDR;
	st = XXH64_createState();
	if (st == NULL)
		abort();
	XXH64_reset(st, 0);
	XXH64_update(st, b, CF_SUM);
	XXH64_update(st, &zero, sizeof(zero));
	XXH64_update(st, b + CF_HDR, len - CF_HDR);
	sum = XXH64_digest(st);
	XXH64_freeState(st);
	memcpy(b + CF_SUM, &sum, sizeof(sum));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cflow_tracker_params p;
	struct cflow_input in[CF_BULK_MAX];
	uint8_t *frames[CF_BULK_MAX], *state, *again;
	struct cflow_counters before, c;
	struct cflow_tracker *t;
	uint64_t now = 1000 * MS * 1000, saved_ns = 0;
	unsigned int n = 0;
	size_t off, len, alen;
	int ret;

	if (size < 3)
		return 0;
	len = (size_t)data[1] | (size_t)data[2] << 8;
	if (len > size - 3)
		len = size - 3;
	off = 3 + len;
	/* The tracker the seeds were saved from, or a variant of it. */
	fuzz_restore_params(data[0], &p);
	t = cflow_tracker_create(&p);
	if (t == NULL)
		abort();

	/* An exact-size copy: ASan sees any read past the state. */
	state = malloc(len ? len : 1);
	if (state == NULL)
		abort();
	memcpy(state, data + 3, len);
	if (!(data[0] & 128))
		fix_checksums(state, len);
	cflow_counters_get(t, &before);
	errno = 0;
	ret = cflow_tracker_restore(t, state, len, &saved_ns, NULL, 0);
	free(state);
	cflow_counters_get(t, &c);
	if (ret < 0) {
		if (errno == 0 || ret != -errno ||
				memcmp(&c, &before, sizeof(c)) != 0)
			abort();
	} else {
		if (ret != 0 || c.active != c.flows_restored)
			abort();
		if (saved_ns > now)
			now = saved_ns;
	}
	fuzz_cflow_check(t);

	while (off + 2 <= size) {
		uint32_t flen = data[off + 1];

		now += data[off] * 100 * MS;
		off += 2;
		if (flen > size - off)
			flen = (uint32_t)(size - off);
		frames[n] = malloc(flen ? flen : 1);
		if (frames[n] == NULL)
			abort();
		memcpy(frames[n], data + off, flen);
		in[n] = (struct cflow_input){ .data = frames[n], .len = flen,
			.wire_len = flen, .time_ns = now,
			.flags = (flen & 1) ? CFLOW_IN_OUTSIDE : 0 };
		off += flen;
		if (++n == CF_BULK_MAX || off + 2 > size) {
			cflow_track_burst(t, in, n, NULL);
			for (unsigned int k = 0; k < n; k++)
				free(frames[k]);
			n = 0;
			fuzz_cflow_check(t);
			cflow_sweep(t, now);
			fuzz_cflow_check(t);
		}
	}

	/* It saves again, and a flush empties it. */
	alen = cflow_tracker_save_size(t);
	again = malloc(alen);
	if (again == NULL ||
			cflow_tracker_save(t, again, alen) != (int64_t)alen)
		abort();
	free(again);
	cflow_tracker_flush(t);
	cflow_counters_get(t, &c);
	if (c.active != 0)
		abort();
	fuzz_cflow_check(t);
	cflow_tracker_free(t);
	return 0;
}
