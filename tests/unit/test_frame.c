/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The application's frame reader (app/frame.h) over mbuf chains built in
 * plain memory, no EAL: every segment's buffer is a malloc() of its exact
 * size, so that a read past a chain is a crash here, and an ASan report
 * in the sanitizer build.
 *
 * The chains are made as net_pcap's receive makes them (DPDK 22.11,
 * eth_pcap_rx() and eth_pcap_rx_jumbo(), modelled below): a record's
 * length is taken as 16-bit on the jumbo path, so that a record over
 * 65,535 bytes may arrive as a chain shorter than its pkt_len. Over
 * (record length, mbuf size, segments the pool can give), enumerated
 * around every boundary and drawn at random: a frame is kept exactly when
 * its chain holds its pkt_len, the kept ones read back as the record's
 * bytes (headers and whole), and each dropped one is counted. Chains
 * corrupted on purpose (pkt_len, nb_segs, a cut or looped next, a
 * segment past its buffer) are dropped too.
 */

#include <inttypes.h>
#include <stdlib.h>

#include "frame.h"
#include "test.h"

#define BURST 8
#define MAX_SEGS 512

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A pool of mbufs of @room bytes (headroom included), at most @left. */
struct pool {
	uint16_t room;
	unsigned int left;
};

static struct rte_mbuf *
mbuf_alloc(struct pool *p)
{
	struct rte_mbuf *m;

	if (p->left == 0)
		return NULL;
	m = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN(sizeof(*m),
		RTE_CACHE_LINE_SIZE));
	if (m == NULL)
		abort();
	memset(m, 0, sizeof(*m));
	m->buf_addr = malloc(p->room);
	if (m->buf_addr == NULL)
		abort();
	m->buf_len = p->room;
	m->data_off = RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, p->room);
	m->nb_segs = 1;
	rte_mbuf_refcnt_set(m, 1);
	p->left--;
	return m;
}

static void
chain_free(struct rte_mbuf *m, unsigned int nb_segs)
{
	/* at most nb_segs: a test may have looped the chain */
	for (unsigned int i = 0; m != NULL && i < nb_segs; i++) {
		struct rte_mbuf *next = m->next;

		free(m->buf_addr);
		free(m);
		m = next;
	}
}

static uint16_t
tailroom(const struct rte_mbuf *m)
{
	return (uint16_t)(m->buf_len - m->data_off - m->data_len);
}

/*
 * net_pcap's receive of one record of @len bytes (22.11): NULL where it
 * fails the record (no mbuf for a segment), else the frame. *@held gets
 * the bytes the chain holds, counted here independently of the mbufs'
 * own fields.
 */
static struct rte_mbuf *
pcap_rx(struct pool *p, const uint8_t *rec, uint32_t len, uint64_t *held)
{
	struct rte_mbuf *m = mbuf_alloc(p), *seg;
	uint16_t left, n;

	*held = 0;
	if (m == NULL)
		return NULL;
	if (len <= tailroom(m)) {
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), rec, len);
		m->data_len = (uint16_t)len;
		*held = len;
		m->pkt_len = len;
		return m;
	}
	/* eth_pcap_rx_jumbo(mb_pool, mbuf, data, uint16_t data_len) */
	left = (uint16_t)len;
	n = tailroom(m);
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), rec, n);
	m->data_len = n;
	rec += n;
	*held += n;
	left = (uint16_t)(left - n);
	seg = m;
	while (left > 0) {
		seg->next = mbuf_alloc(p);
		if (seg->next == NULL) {
			chain_free(m, m->nb_segs);
			return NULL;
		}
		seg = seg->next;
		seg->data_off = 0; /* "headroom is not needed" */
		n = RTE_MIN(tailroom(seg), left);
		memcpy(rte_pktmbuf_mtod(seg, uint8_t *), rec, n);
		seg->data_len = n;
		m->nb_segs++;
		rec += n;
		*held += n;
		left = (uint16_t)(left - n);
	}
	m->pkt_len = len; /* the whole length, 32-bit */
	return m;
}

/* A record of @len bytes, each byte from its offset: what was read can
 * be checked against where it came from. */
static uint8_t *
record(uint32_t len, uint8_t salt)
{
	uint8_t *r = malloc(len != 0 ? len : 1);

	if (r == NULL)
		abort();
	for (uint32_t i = 0; i < len; i++)
		r[i] = (uint8_t)(i * 31 + (i >> 8) + salt);
	return r;
}

/* A kept frame reads back as its record: the parser's headers and every
 * byte (rte_pktmbuf_read() across the chain). */
static int
read_back(const struct rte_mbuf *m, const uint8_t *rec, uint32_t len)
{
	static uint8_t whole[262144 + 1];
	uint8_t scratch[CFLOW_PARSE_MAX_HDR];
	const uint8_t *hdr, *all;
	uint32_t hlen;

	hdr = app_frame_headers(m, scratch, &hlen);
	TEST_ASSERT(hdr != NULL, "headers of a whole %u-byte frame", len);
	TEST_ASSERT(hlen >= RTE_MIN(len, (uint32_t)CFLOW_PARSE_MAX_HDR) &&
		hlen <= len, "%u header bytes of %u", hlen, len);
	TEST_ASSERT(memcmp(hdr, rec, hlen) == 0, "headers of %u bytes", len);
	TEST_ASSERT(len <= sizeof(whole), "record of %u", len);
	all = rte_pktmbuf_read(m, 0, len, whole);
	TEST_ASSERT(all != NULL && memcmp(all, rec, len) == 0,
		"the %u bytes of a whole frame", len);
	return 0;
}

/*
 * One case: a record of @len through a pool of @room-byte mbufs with
 * @segs of them, in a burst of BURST frames among short good ones at
 * random places. Returns 0 or -1; *@cut counts the cases cut.
 */
static int
one_case(uint32_t len, uint16_t room, unsigned int segs, unsigned int *cut)
{
	struct pool pool = { .room = room, .left = segs };
	struct pool small = { .room = 2176, .left = BURST };
	struct rte_mbuf *pkts[BURST], *orig[BURST], *bad[BURST], *m;
	unsigned int at = (unsigned int)(rng() % BURST);
	uint8_t *rec = record(len, (uint8_t)len), *shorts[BURST] = { NULL };
	uint16_t kept, nb_bad;
	uint64_t held;
	bool whole;

	m = pcap_rx(&pool, rec, len, &held);
	if (m == NULL) {
		/* net_pcap fails the record (ierrors): never delivered */
		TEST_ASSERT(segs < MAX_SEGS, "%u bytes, room %u: not received",
			len, room);
		free(rec);
		return 0;
	}
	whole = held == len;
	*cut += !whole;
	/* the chain holds what net_pcap copied, no more than the record */
	TEST_ASSERT(held <= len, "%u bytes, room %u: %" PRIu64 " held", len,
		room, held);
	TEST_ASSERT_EQ(app_frame_whole(m), whole, "%u bytes, room %u, %u "
		"segments: %" PRIu64 " held, pkt_len %u", len, room,
		m->nb_segs, held, m->pkt_len);
	for (unsigned int k = 0; k < BURST; k++) {
		uint64_t h;

		if (k == at) {
			pkts[k] = m;
			continue;
		}
		shorts[k] = record(60 + k, (uint8_t)k);
		pkts[k] = pcap_rx(&small, shorts[k], 60 + k, &h);
	}
	memcpy(orig, pkts, sizeof(orig));
	kept = app_frames_whole(pkts, BURST, bad, &nb_bad);
	TEST_ASSERT_EQ(nb_bad, whole ? 0 : 1, "%u bytes: %u dropped", len,
		nb_bad);
	TEST_ASSERT_EQ(kept + nb_bad, BURST, "%u kept, %u dropped", kept,
		nb_bad);
	TEST_ASSERT(whole || bad[0] == m, "%u bytes: not the cut one dropped",
		len);
	/* the others kept, in order, and read back whole */
	for (unsigned int k = 0, j = 0; k < BURST; k++) {
		if (k == at && !whole)
			continue;
		TEST_ASSERT(j < kept && pkts[j] == orig[k], "order: frame %u",
			k);
		if (read_back(pkts[j], k == at ? rec : shorts[k],
				k == at ? len : 60 + k) != 0)
			return -1;
		j++;
	}
	for (unsigned int k = 0; k < BURST; k++) {
		chain_free(orig[k], orig[k]->nb_segs);
		free(shorts[k]);
	}
	free(rec);
	return 0;
}

/* Lengths around every boundary: the mbuf's room, 16-bit wrap, the
 * tailroom past it, libpcap's 262,144. */
static const uint32_t lengths[] = {
	1, 14, 60, 64, 127, 128, 1514, 1518, 2047, 2048, 2049, 4096, 9000,
	9018, 9216, 65534, 65535, 65536, 65537, 65600, 67583, 67584, 67585,
	70000, 80054, 80156, 131071, 131072, 131073, 131100, 196608, 200000,
	262143, 262144,
};

/* mbuf sizes, headroom included: 256, the default, jumbo, the largest */
static const uint16_t rooms[] = { 256, 2176, 9344, 16512, 65535 };

/* segments the pool can give: few (net_pcap fails the record), or
 * enough for any record */
static const unsigned int pool_segs[] = { 1, 2, 3, 5, 33, 64, MAX_SEGS };

static int
test_net_pcap_chains_enumerated(void)
{
	unsigned int cases = 0, cut = 0;

	for (unsigned int l = 0; l < RTE_DIM(lengths); l++)
		for (unsigned int r = 0; r < RTE_DIM(rooms); r++)
			for (unsigned int s = 0; s < RTE_DIM(pool_segs); s++) {
				if (one_case(lengths[l], rooms[r], pool_segs[s],
						&cut) != 0)
					return -1;
				cases++;
			}
	printf("# %u cases, %u frames cut and dropped\n", cases, cut);
	/* 70,000 bytes in 2,176-byte mbufs: 4,464 held, cut */
	TEST_ASSERT(cut != 0, "no case cut");
	return 0;
}

static int
test_net_pcap_chains_random(void)
{
	unsigned int cut = 0;

	for (unsigned int i = 0; i < 3000; i++) {
		uint32_t len = 1 + (uint32_t)(rng() % 262144);
		uint16_t room = (uint16_t)(129 + rng() % (65535 - 128));
		unsigned int segs = 1 + (unsigned int)(rng() % MAX_SEGS);

		if (one_case(len, room, segs, &cut) != 0)
			return -1;
	}
	printf("# 3000 random cases, %u cut and dropped\n", cut);
	return 0;
}

/* A whole chain of @len bytes in @room-byte mbufs. */
static struct rte_mbuf *
whole_chain(uint32_t len, uint16_t room, const uint8_t *rec)
{
	struct pool p = { .room = room, .left = MAX_SEGS };
	uint64_t held;
	struct rte_mbuf *m = pcap_rx(&p, rec, len, &held);

	if (m == NULL || held != len || !app_frame_whole(m))
		abort();
	return m;
}

static struct rte_mbuf *
last_seg(struct rte_mbuf *m)
{
	while (m->next != NULL)
		m = m->next;
	return m;
}

/* Chains broken on purpose, whatever made them: each is dropped. */
static int
test_corrupt_chains(void)
{
	static const uint32_t lens[] = { 60, 1514, 9000, 40000 };
	unsigned int n = 0;

	for (unsigned int i = 0; i < RTE_DIM(lens); i++)
		for (int how = 0; how < 8; how++) {
			uint32_t len = lens[i];
			uint8_t *rec = record(len, 7);
			struct rte_mbuf *m = whole_chain(len, 2176, rec);
			struct rte_mbuf *pkts[1] = { m }, *bad[1];
			unsigned int segs = m->nb_segs;
			uint16_t nb_bad;

			switch (how) {
			case 0: /* pkt_len one more than held */
				m->pkt_len++;
				break;
			case 1: /* one less */
				m->pkt_len--;
				break;
			case 2: /* far more: 16-bit wrap's other side */
				m->pkt_len += 65536;
				break;
			case 3: /* a segment more than the chain has */
				m->nb_segs++;
				break;
			case 4: /* one less */
				if (segs == 1)
					m->data_len--;
				else
					m->nb_segs--;
				break;
			case 5: /* the chain cut after its first segment */
				if (segs == 1) {
					m->data_off = (uint16_t)(m->buf_len -
						m->data_len + 1);
					break;
				}
				chain_free(m->next, segs - 1);
				m->next = NULL;
				segs = 1;
				break;
			case 6: /* looped back to its start */
				if (segs == 1) {
					m->nb_segs = 2;
					m->next = m;
					segs = 1;
					break;
				}
				last_seg(m)->next = m;
				break;
			case 7: /* a segment's data past its buffer */
				last_seg(m)->data_off = (uint16_t)(
					last_seg(m)->buf_len -
					last_seg(m)->data_len + 1);
				break;
			}
			TEST_ASSERT(!app_frame_whole(m), "%u bytes, case %d",
				len, how);
			TEST_ASSERT(app_frames_whole(pkts, 1, bad, &nb_bad) ==
				0 && nb_bad == 1 && bad[0] == m,
				"%u bytes, case %d: not dropped", len, how);
			if (how == 6) /* unloop it, to free it */
				for (struct rte_mbuf *s = m; ; s = s->next)
					if (s->next == m) {
						s->next = NULL;
						break;
					}
			chain_free(m, segs);
			free(rec);
			n++;
		}
	printf("# %u corrupt chains dropped\n", n);
	return 0;
}

static const struct test_case cases[] = {
	TEST_CASE(test_net_pcap_chains_enumerated),
	TEST_CASE(test_net_pcap_chains_random),
	TEST_CASE(test_corrupt_chains),
	TEST_CASES_END(),
};

int
main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
