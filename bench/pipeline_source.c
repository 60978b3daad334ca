/* SPDX-License-Identifier: BSD-3-Clause */

/* bench_pipeline's frames and flow sequences (pipeline.h). */

#include <math.h>
#include <stdlib.h>

#include "cfutil.h"
#include "pipeline.h"

/* Ethernet, IPv4 (46 bytes), then TCP (ACK) or UDP: the bytes that do
 * not change from packet to packet. */
const uint8_t frame_head[FRAME_HEAD_LEN] = {
	0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,
	0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 6, 0, 0,
	10, 0, 0, 0, 192, 168, 1, 1,
	0x04, 0x00, 0x00, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10,
	0xff, 0xff, 0, 0, 0, 0,
};

/* --ipv6: Ethernet, IPv6 from 2001:db8:: (the flow in its last 3
 * bytes) to 2001:db8:1::1, payload 20, then TCP (ACK) or UDP and
 * padding: what does not change from packet to packet. */
const uint8_t frame6_head[FRAME6_LEN] = {
	0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x86, 0xdd,
	0x60, 0, 0, 0, 0, 20, 6, 64,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	0x04, 0x00, 0x00, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10,
	0xff, 0xff, 0, 0, 0, 0,
};

void
frame_init(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct rte_mbuf *m = obj;
	uint8_t *p = (uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM;

	(void)mp;
	(void)arg;
	(void)idx;
	memset(p, 0, FRAME6_LEN);
	if (opt.ipv6)
		memcpy(p, frame6_head, sizeof(frame6_head));
	else
		memcpy(p, frame_head, sizeof(frame_head));
}

/*
 * Zipf ranks 1..n by rejection-inversion (Hormann and Derflinger, 1996):
 * O(1) a draw for any n, no table.
 */
struct zipf {
	double s, n, h_x1, h_n, cut;
};

static double
zipf_h(const struct zipf *z, double x)
{
	return exp(-z->s * log(x));
}

static double
zipf_hint(const struct zipf *z, double x)   /* integral of h */
{
	double l = log(x), t = (1 - z->s) * l;

	return (fabs(t) > 1e-8 ? expm1(t) / t : 1 + t / 2) * l;
}

static double
zipf_hint_inv(const struct zipf *z, double x)
{
	double t = x * (1 - z->s);

	if (t < -1)
		t = -1;
	return exp((fabs(t) > 1e-8 ? log1p(t) / t : 1 - t / 2) * x);
}

static void
zipf_init(struct zipf *z, double s, uint64_t n)
{
	z->s = s;
	z->n = (double)n;
	z->h_x1 = zipf_hint(z, 1.5) - 1;
	z->h_n = zipf_hint(z, z->n + 0.5);
	z->cut = 2 - zipf_hint_inv(z, zipf_hint(z, 2.5) - zipf_h(z, 2));
}

static uint64_t
zipf_draw(const struct zipf *z, uint64_t *rng)
{
	for (;;) {
		double u = z->h_n + (double)(cfu_splitmix64(rng) >> 11) * 0x1p-53 *
			(z->h_x1 - z->h_n);
		double x = zipf_hint_inv(z, u);
		double k = floor(x + 0.5);

		if (k < 1)
			k = 1;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->cut || u >= zipf_hint(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k - 1;
	}
}

/* 2^SEQ_BITS draws over the lane's flows, with FIN/SYN churn on the TCP
 * ones (even global ids). With l->ids, the entries are global ids. */
int
sequence_build(struct lane *l, bool zipf, uint64_t seed)
{
	uint64_t n = l->flows, rng = seed;
	uint8_t *closed = calloc((n + 7) / 8, 1);
	uint64_t fin_below = (uint64_t)(opt.churn * 0x1p64);
	struct zipf z;

	if (closed == NULL)
		return -1;
	zipf_init(&z, opt.zipf_s, n);
	for (uint64_t i = 0; i < (UINT64_C(1) << SEQ_BITS); i++) {
		uint64_t f = zipf ? zipf_draw(&z, &rng) :
			(uint64_t)(((__uint128_t)cfu_splitmix64(&rng) * n) >> 64);
		uint32_t e = l->ids != NULL ? l->ids[f] : (uint32_t)f;

		if ((flow_global(l, e) & 1) == 0) {
			if (closed[f / 8] & (1u << (f % 8))) {
				closed[f / 8] &= (uint8_t)~(1u << (f % 8));
				e |= FLOW_SYN;
			} else if (cfu_splitmix64(&rng) < fin_below) {
				closed[f / 8] |= (uint8_t)(1u << (f % 8));
				e |= FLOW_FIN;
			}
		}
		l->seq[i] = e;
	}
	free(closed);
	return 0;
}

