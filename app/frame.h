/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_FRAME_H_
#define _APP_FRAME_H_

/*
 * Reading a received frame, safely: before anything reads a packet (the
 * parser, the blocklist, an event's copy, a transmit), its mbuf chain
 * and its pkt_len must agree. rte_pktmbuf_read() trusts pkt_len and
 * walks the chain's next pointers: a chain that holds fewer bytes than
 * pkt_len says is read past its end.
 *
 * net_pcap makes such chains: its jumbo receive (DPDK 22.11's
 * eth_pcap_rx_jumbo()) takes a record's length as a 16-bit value, so a
 * record over 65,535 bytes (tcpdump's BIG TCP captures: 80 KB frames)
 * arrives as a chain of (length mod 65,536) bytes, sometimes more, with
 * pkt_len the whole length. The worker drops such frames whole before
 * it reads them, counted in rx_len_mismatch (docs/usage.md).
 *
 * Only the mbuf fields are read: no EAL is needed, and a unit test
 * builds chains in plain memory (tests/unit/test_frame.c).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_mbuf.h>

#include "cflow.h"

/*
 * Whether @p m's chain holds exactly pkt_len bytes in nb_segs segments,
 * each within its buffer. At most nb_segs segments are visited (a loop
 * in the chain cannot hold it).
 */
static inline bool
app_frame_whole(const struct rte_mbuf *m)
{
	uint32_t sum = 0;
	uint16_t segs = 0;

	/* one segment: its fields are all on the mbuf's first cache line,
	 * which the worker reads anyway; next, on the second, is not read
	 * (with data_len == pkt_len, no read goes past this segment) */
	if (likely(m->nb_segs == 1))
		return m->data_len == m->pkt_len &&
			(uint32_t)m->data_off + m->data_len <= m->buf_len;
	for (const struct rte_mbuf *s = m; s != NULL; s = s->next) {
		if (segs == m->nb_segs || (uint32_t)s->data_off +
				s->data_len > s->buf_len)
			return false;
		segs++;
		sum += s->data_len;
	}
	return segs == m->nb_segs && sum == m->pkt_len;
}

/*
 * Keep the frames of @p pkts whose chain is whole (app_frame_whole()),
 * in their order, and move the others to @p bad (room for @p n), in
 * theirs. Returns how many are kept; *@p nb_bad gets the others'.
 */
static inline uint16_t
app_frames_whole(struct rte_mbuf **pkts, uint16_t n, struct rte_mbuf **bad,
		uint16_t *nb_bad)
{
	uint16_t keep = 0, nb = 0;

	for (uint16_t k = 0; k < n; k++) {
		if (likely(app_frame_whole(pkts[k])))
			pkts[keep++] = pkts[k];
		else
			bad[nb++] = pkts[k];
	}
	*nb_bad = nb;
	return keep;
}

/*
 * The first min(pkt_len, CFLOW_PARSE_MAX_HDR) bytes of a whole frame
 * (app_frame_whole()), contiguous, for the parser: in place if its first
 * segment holds them (then *@p len is that segment's length), else
 * copied across segments into @p scratch (CFLOW_PARSE_MAX_HDR bytes).
 */
static inline const uint8_t *
app_frame_headers(const struct rte_mbuf *m, uint8_t *scratch, uint32_t *len)
{
	uint32_t want = RTE_MIN(rte_pktmbuf_pkt_len(m),
		(uint32_t)CFLOW_PARSE_MAX_HDR);

	if (rte_pktmbuf_data_len(m) >= want) {
		*len = rte_pktmbuf_data_len(m);
		return rte_pktmbuf_mtod(m, const uint8_t *);
	}
	*len = want;
	return rte_pktmbuf_read(m, 0, want, scratch);
}

#endif /* _APP_FRAME_H_ */
