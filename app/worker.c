/* SPDX-License-Identifier: BSD-3-Clause */

/* The per-lcore run-to-completion loop, with flow handoff. */

#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#include "blocklist_rcu.h"
#include "events.h"
#include "frame.h"
#include "worker.h"

/*
 * The flow table, called directly: lib/cflow's tracker. bench_pipeline
 * builds this file a second time over its exact rte_hash table, to run
 * this very loop over it: APP_WORKER_TABLE then names a header of its
 * own that defines these three over that table, and bench/meson.build
 * renames the loop's entry points (app_worker_*).
 */
#ifdef APP_WORKER_TABLE
#include APP_WORKER_TABLE
#else
static inline void
table_track(struct app_worker *w, const struct cflow_input *in,
		const struct cflow_packet *pkts,
		const enum cflow_parse_status *status, unsigned int n,
		enum cflow_verdict *verdicts, uint8_t *counts)
{
	cflow_track_parsed(w->tracker, in, pkts, status, n, verdicts, counts);
}

/* @p as_of_ns <= @p now_ns: judge idleness at that time (the replay
 * watermark; see app_worker.as_of_ns). */
static inline void
table_sweep(struct app_worker *w, uint64_t now_ns, uint64_t as_of_ns)
{
	(void)cflow_sweep_at(w->tracker, now_ns, as_of_ns);
}

static inline void
table_sweep_all(struct app_worker *w, uint64_t now_ns)
{
	(void)cflow_sweep_all(w->tracker, now_ns);
}
#endif

static inline bool
quitting(const struct app_run *run)
{
	return __atomic_load_n(&run->quit, __ATOMIC_ACQUIRE);
}

static inline void
last_ns_set(struct app_worker *w, uint64_t t)
{
	__atomic_store_n(&w->last_ns, t, __ATOMIC_RELAXED);
}

/*
 * net_pcap's capture time: in 22.11 it fills the timestamp dynfield with
 * microseconds since the epoch whether or not the offload is enabled.
 */
static inline bool
packet_time(const struct app_run *run, const struct rte_mbuf *m,
		uint64_t *ns)
{
	if (run->timestamp_offset < 0 ||
			!(m->ol_flags & run->timestamp_flag))
		return false;
	*ns = *RTE_MBUF_DYNFIELD(m, run->timestamp_offset,
			const rte_mbuf_timestamp_t *) * 1000;
	return true;
}

/*
 * --clock pkt: the time of the next frame @p m of a queue whose latest
 * capture time so far is @p latest: its own, or @p latest if that is
 * later or it has none. Time never goes back on a queue.
 */
static inline uint64_t
queue_time(const struct app_run *run, const struct rte_mbuf *m,
		uint64_t latest, bool *none)
{
	uint64_t t;

	*none = !packet_time(run, m, &t);
	return *none || t < latest ? latest : t;
}

/*
 * An rx_pcap queue is exhausted when a burst comes back short while the
 * port has neither run out of mbufs nor failed a packet (net_pcap counts
 * a jumbo frame it has no segments for in ierrors, and ends the burst
 * there): the driver reads the file in order.
 */
static bool
queue_at_eof(const struct app_rxq *q, uint64_t *losses)
{
	struct rte_eth_stats st;

	if (rte_eth_stats_get(q->port, &st) != 0)
		return false;
	if (st.rx_nombuf + st.ierrors != *losses) {
		*losses = st.rx_nombuf + st.ierrors;
		return false;
	}
	return true;
}

/* The input the tracker needs of an mbuf, into @p in. Field by field:
 * a compound literal was built on the stack with narrow stores and
 * copied in 16-byte loads, which stalled on store forwarding (gcc 12,
 * 10 cycles a packet at -march=x86-64-v2, docs/benchmarks.md). */
static inline void
mbuf_input(struct cflow_input *in, const struct rte_mbuf *m, uint64_t t)
{
	in->data = rte_pktmbuf_mtod(m, const uint8_t *);
	in->len = rte_pktmbuf_data_len(m);
	in->wire_len = rte_pktmbuf_pkt_len(m);
	in->time_ns = t;
	in->rss = m->hash.rss;
	in->has_rss = (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) != 0;
	in->has_hash = false;
	in->hash = 0;
	in->flags = 0;
}

/*
 * Free a burst of @p n mbufs. Those as a NIC's rx gives them (direct,
 * one segment, one reference, all from one pool) go back to the pool in
 * one put, as a driver's tx fast free does; any other burst through
 * rte_pktmbuf_free_bulk(), which looks at each mbuf on its own (8
 * cycles a packet of bench_pipeline's 126 at 1 K flows, where the
 * monitor frees every packet).
 */
static inline void
free_burst(struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mempool *mp;
	bool plain = true;

	if (n == 0)
		return;
	mp = pkts[0]->pool;
	for (uint16_t k = 0; k < n; k++) {
		const struct rte_mbuf *m = pkts[k];

		plain &= (m->pool == mp) & (m->nb_segs == 1) &
			(m->next == NULL) & RTE_MBUF_DIRECT(m) &
			(rte_mbuf_refcnt_read(m) == 1);
	}
	if (likely(plain)) {
		for (uint16_t k = 0; k < n; k++)
			__rte_mbuf_sanity_check(pkts[k], 1);
		rte_mempool_put_bulk(mp, (void **)pkts, n);
	} else {
		rte_pktmbuf_free_bulk(pkts, n);
	}
}

/*
 * Whether a burst may touch @p port: always, but for a port polled only
 * while its link is up (app_run.link_gated: net_memif). DPDK 22.11's
 * memif rx and tx bursts take their ring's address from the shared
 * memory region before they check the link's "connected" flag; the
 * control thread records the region when the peer announces it, maps it
 * and sets the flag at the connection. A burst that began before the
 * mapping and checks the flag after it reads through the address it
 * took, NULL plus the ring's offset: SIGSEGV (seen in the e2e tests, a
 * worker preempted there while the peer connected). The link status,
 * set after the mapping and read first, orders it (docs/design.md).
 */
static inline bool
link_usable(const struct app_run *run, uint16_t port)
{
	struct rte_eth_link link;

	if (likely(!run->link_gated[port]))
		return true;
	return rte_eth_link_get_nowait(port, &link) == 0 &&
		link.link_status == RTE_ETH_LINK_UP;
}

/* Send @p n packets on @p port, this worker's own tx queue; what it
 * refuses (or a port not usable now: link_usable()) is freed, counted. */
static void
tx_send(struct app_worker *w, uint16_t port, struct rte_mbuf **pkts,
		uint16_t n)
{
	uint16_t sent = link_usable(w->run, port) ?
		rte_eth_tx_burst(port, (uint16_t)w->index, pkts, n) : 0;

	w->ctr.tx_packets += sent;
	w->ctr.tx_dropped += n - sent;
	if (sent < n)
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
}

void
app_worker_tx_flush(struct app_worker *w)
{
	for (unsigned int b = 0; b < w->nb_txbuf; b++) {
		struct app_txbuf *t = &w->txbuf[b];

		if (t->n != 0)
			tx_send(w, t->port, t->pkts, t->n);
		t->n = 0;
	}
	w->tx_flush_tsc = rte_rdtsc();
}

/* The tx buffer of egress port @p port, or NULL once APP_TXBUF_PORTS
 * ports have one (the others' packets are sent at once). */
static inline struct app_txbuf *
txbuf_of(struct app_worker *w, uint16_t port)
{
	for (unsigned int b = 0; b < w->nb_txbuf; b++)
		if (w->txbuf[b].port == port)
			return &w->txbuf[b];
	if (w->nb_txbuf == APP_TXBUF_PORTS)
		return NULL;
	w->txbuf[w->nb_txbuf] = (struct app_txbuf){ .port = port };
	return &w->txbuf[w->nb_txbuf++];
}

/* Send each packet to the port paired with its ingress port, on this
 * worker's own tx queue, through the port's tx buffer (in order: sent
 * when it holds a full burst, or at the drain timer); free what is not
 * sent. */
static void
forward_or_free(struct app_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	const struct app_run *run = w->run;

	if (run->cfg->mode != APP_MODE_FORWARD) {
		free_burst(pkts, n);
		return;
	}
	for (uint16_t k = 0; k < n; k++) {
		uint16_t port = run->tx_port[pkts[k]->port];
		struct app_txbuf *t = txbuf_of(w, port);

		if (unlikely(t == NULL)) {
			tx_send(w, port, &pkts[k], 1);
			continue;
		}
		t->pkts[t->n++] = pkts[k];
		if (t->n == APP_TXBUF_SIZE) {
			tx_send(w, port, t->pkts, t->n);
			t->n = 0;
		}
	}
}

static void
sweep(struct app_worker *w)
{
	table_sweep(w, w->last_ns, w->run->watermark ? w->as_of_ns :
		w->last_ns);
}

/* Sweep calls a millisecond once a replay has ended (with the TSC clock):
 * 256 of at most 64 buckets each, up to 16 M buckets a second, so that a
 * pass keeps its period (docs/design.md, Sweep) up to 100 M flows (33.5 M
 * buckets in 2.1 s, against 3.7 s with the default timeouts). */
#define IDLE_SWEEPS_PER_MS 256

void
app_worker_tick(struct app_worker *w)
{
	if (w->run->cfg->clock != APP_CLOCK_PKT)
		last_ns_set(w, app_tsc_ns(w->run));
	sweep(w);
}

/* Copies of each flow's first packets out of the mirror port: the same
 * mbuf, the reference count of each of its segments raised (nothing on
 * the way writes to it). rte_pktmbuf_free() frees a segment when its own
 * count falls to zero, so a chained frame needs every segment counted. */
static void
mirror_send(struct app_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent;

	if (n == 0)
		return;
	for (uint16_t k = 0; k < n; k++)
		rte_pktmbuf_refcnt_update(pkts[k], 1);
	sent = link_usable(w->run, w->run->mirror_port) ?
		rte_eth_tx_burst(w->run->mirror_port, (uint16_t)w->index,
			pkts, n) : 0;
	w->ctr.mirrored += sent;
	w->ctr.mirror_dropped += n - sent;
	for (uint16_t k = sent; k < n; k++)
		rte_pktmbuf_free(pkts[k]);
}

/* Firewall mode: an outside packet finds its flow only in the
 * direction toward the flow's inside endpoint (CFLOW_IN_OUTSIDE), and
 * may open one only to an allowed service, not through a tunnel. */
static void
set_input_flags(const struct app_run *run, struct rte_mbuf **pkts,
		struct cflow_input *in, const struct cflow_packet *parsed,
		const enum cflow_parse_status *status, uint16_t n)
{
	for (uint16_t k = 0; k < n; k++) {
		if (run->role[pkts[k]->port] != APP_ROLE_OUTSIDE) {
			in[k].flags = 0;
			continue;
		}
		in[k].flags = CFLOW_IN_OUTSIDE;
		/* an ICMP error or a later fragment opens nothing anyway */
		if (run->allow == NULL || status[k] != CFLOW_PARSE_OK ||
				parsed[k].tunnel != 0 ||
				parsed[k].kind != CFLOW_KIND_FLOW ||
				!cbl_allow_match(run->allow, &parsed[k]))
			in[k].flags |= CFLOW_IN_NO_CREATE;
	}
}

#define ETHER_TYPE_IPV4 0x0800
#define ETHER_TYPE_IPV6 0x86dd
#define ETHER_TYPE_ARP 0x0806
#define ETHER_TYPE_MIN 0x0600   /* below: an 802.3 length (LLC, SNAP) */
#define ICMPV6_RS 133           /* router solicitation .. redirect */
#define ICMPV6_REDIRECT 137
#define ND_HOP_LIMIT 255        /* RFC 4861: never forwarded by a router */

/*
 * Why the parser could not place a frame it calls non-IP (not ARP):
 * IP or maybe IP behind more tags than it tracks (an IP type, or none
 * reachable: beyond 8 tags, a tag cut short; on BSD loopback links a
 * family that is not IP), an encapsulation that carries IP it does not
 * open, a tunnel's inner frame, or another protocol.
 */
static enum app_drop
unparsed_reason(const struct cflow_packet *p)
{
	if (p->tunnel != 0)
		return APP_DROP_TUNNEL_NON_IP;
	switch (p->ethertype) {
	case 0:
	case ETHER_TYPE_IPV4:
	case ETHER_TYPE_IPV6:
		return APP_DROP_VLAN_DEPTH;
	case 0x8847:    /* MPLS unicast */
	case 0x8848:    /* MPLS multicast */
	case 0x8863:    /* PPPoE discovery */
	case 0x8864:    /* PPPoE session */
	case 0x88e7:    /* 802.1ah provider backbone bridging */
		return APP_DROP_ENCAPSULATED;
	default:
		return p->ethertype < ETHER_TYPE_MIN ? APP_DROP_ENCAPSULATED :
			APP_DROP_NON_IP;
	}
}

/* IPv6 neighbour discovery on the link (RFC 4861: hop limit 255), not
 * tunnelled: what the link needs, passed without a flow unless
 * --firewall-nd drop (docs/firewall.md). */
static inline bool
is_nd(const struct cflow_packet *p)
{
	return p->tunnel == 0 && p->key.family == 6 && p->key.proto == 58 &&
		p->hop_limit == ND_HOP_LIMIT && p->icmp_type >= ICMPV6_RS &&
		p->icmp_type <= ICMPV6_REDIRECT;
}

/* What the action table left to an outside packet (APP_DECIDE_*): the
 * forward or drop it comes to, counted. */
static uint8_t
outside_decide(struct app_worker *w, uint8_t act,
		const struct cflow_packet *p)
{
	if (act == APP_DECIDE_UNSOLICITED) {
		if (!is_nd(p) || w->run->cfg->firewall_nd != APP_UNPARSED_PASS)
			return APP_DROP_UNSOLICITED;
		w->ctr.nd_passed++;
		return APP_FORWARD;
	}
	if (p->tunnel == 0 && p->ethertype == ETHER_TYPE_ARP)
		return APP_FORWARD;
	w->ctr.firewall_unparsed++;
	return w->run->cfg->firewall_unparsed == APP_UNPARSED_PASS ?
		APP_FORWARD : (uint8_t)unparsed_reason(p);
}

/* The packets of a tracked burst that make an event (a new flow's first
 * packet, the FIN/RST that closed one), their indexes into @p idx; most
 * bursts have none. */
static inline unsigned int
event_packets(const enum cflow_verdict *verdicts, uint16_t n, uint16_t *idx)
{
	unsigned int ne = 0;

	for (uint16_t k = 0; k < n; k++) {
		idx[ne] = k;
		ne += verdicts[k] == CFLOW_NEW || verdicts[k] == CFLOW_CLOSING;
	}
	return ne;
}

/* Pass the @p ne flow events of a tracked burst (packets @p idx) to the
 * main lcore (app/events.c), with a reference to the first packet if
 * they are captured: built in the ring's own slots (zero-copy enqueue).
 * A full ring drops them, counted: the datapath never waits. */
static void
events_queue(struct app_worker *w, struct rte_mbuf **pkts,
		const struct cflow_input *in, const struct cflow_packet *parsed,
		const enum cflow_verdict *verdicts, const uint16_t *idx,
		unsigned int ne)
{
	const struct app_run *run = w->run;
	struct rte_ring_zc_data zcd;
	unsigned int done, room = 0, taken = 0;
	uint16_t close_idx[CF_BULK_MAX];

	if (run->records) {
		/* New flows come from the tracker, in order with the
		 * records (app_events_record()); the closes only for the
		 * JSON lines. */
		unsigned int nc = 0;

		if (!run->close_events)
			return;
		for (unsigned int j = 0; j < ne; j++)
			if (verdicts[idx[j]] == CFLOW_CLOSING)
				close_idx[nc++] = idx[j];
		if (nc == 0)
			return;
		idx = close_idx;
		ne = nc;
	}
	if (run->first_packets) {
		/* The mbufs taken and not yet freed by the main lcore, in
		 * the ring or in its hands: segments count, each is one of
		 * the pool's. */
		uint64_t held = w->event_mbufs_taken - __atomic_load_n(
			&w->event_mbufs_freed, __ATOMIC_ACQUIRE);

		room = held < run->event_mbufs_max ?
			run->event_mbufs_max - (unsigned int)held : 0;
	}

	done = rte_ring_enqueue_zc_burst_elem_start(w->event_ring,
		run->event_size, ne, &zcd, NULL);
	for (unsigned int j = 0; j < done; j++) {
		struct app_event *e = j < zcd.n1 ?
			app_event_at(zcd.ptr1, j, run->event_size) :
			app_event_at(zcd.ptr2, j - zcd.n1, run->event_size);
		uint16_t k = idx[j];

		(void)cflow_event_init(&e->ev, &parsed[k], verdicts[k],
			in[k].time_ns + run->epoch_offset_ns, in[k].wire_len);
		e->ev.port = pkts[k]->port;
		e->ev.worker = (uint16_t)w->index;
		if (!run->first_packets)
			continue;   /* the short event ends here */
		e->m = NULL;
		e->pkt_len = 0;
		if (verdicts[k] == CFLOW_NEW)
			taken += app_event_packet(e, pkts[k], room - taken);
	}
	rte_ring_enqueue_zc_elem_finish(w->event_ring, done);
	w->event_mbufs_taken += taken;
	w->ctr.events_queued += done;
	w->ctr.events_dropped += ne - done;
}

/* The sources of the new flows among a tracked burst's @p ne event
 * packets @p idx, into this period's sketch. */
static void
top_add(struct app_worker *w, const struct cflow_packet *parsed,
		const enum cflow_verdict *verdicts, const uint16_t *idx,
		unsigned int ne)
{
	struct cflow_topk *top = w->top[w->top_idx];

	for (unsigned int j = 0; j < ne; j++) {
		uint16_t k = idx[j];
		const struct cflow_key *key = &parsed[k].key;
		const uint8_t *src;

		if (verdicts[k] != CFLOW_NEW)
			continue;
		src = parsed[k].reversed ? key->addr_hi : key->addr_lo;
		/* IPv4: the key's are mapped, the sketch takes 4 bytes */
		(void)cflow_topk_add(top, key->family, key->family == 4 ?
			src + 12 : src);
	}
}

/* Switch to the sketch the main lcore chose, and say so. */
static inline void
top_sync(struct app_worker *w)
{
	uint32_t cur = __atomic_load_n(&w->top_cur, __ATOMIC_ACQUIRE);

	if (cur != w->top_idx) {
		w->top_idx = cur;
		__atomic_store_n(&w->top_ack, cur, __ATOMIC_RELEASE);
	}
}

/* Serve a control request (app/control.h), if one waits. */
static inline void
ctl_serve(struct app_worker *w)
{
	if (unlikely(app_control_pending(&w->ctl)) &&
			app_control_serve(&w->ctl, w->tracker))
		w->ctr.flushes++;
}

/* Track @p n packets this worker owns, then act on each verdict
 * (app_actions): forward, or drop counted by reason; mirror the first
 * packets of each flow. */
static void
track_and_send(struct app_worker *w, struct rte_mbuf **pkts,
		struct cflow_input *in, const struct cflow_packet *parsed,
		const enum cflow_parse_status *status, uint16_t n)
{
	const struct app_run *run = w->run;
	enum cflow_verdict verdicts[CF_BULK_MAX];
	struct rte_mbuf *copies[CF_BULK_MAX], *drops[CF_BULK_MAX];
	uint8_t counts[CF_BULK_MAX];
	uint16_t keep = 0, nc = 0, nd = 0;

	if (n == 0) {
		sweep(w);
		return;
	}
	set_input_flags(run, pkts, in, parsed, status, n);
	/* the burst a new flow's record (app_events_record()) is of */
	w->burst_pkts = pkts;
	w->burst_in = in;
	table_track(w, in, parsed, status, n, verdicts,
		run->mirror ? counts : NULL);
	if (w->event_ring != NULL || w->top[0] != NULL) {
		uint16_t idx[CF_BULK_MAX];
		unsigned int ne = event_packets(verdicts, n, idx);

		if (ne != 0 && w->event_ring != NULL)
			events_queue(w, pkts, in, parsed, verdicts, idx, ne);
		if (ne != 0 && w->top[0] != NULL)
			top_add(w, parsed, verdicts, idx, ne);
	}
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		uint8_t act = app_actions[run->role[m->port]][verdicts[k]];

		if (unlikely(act >= APP_DROP_MAX))
			act = outside_decide(w, act, &parsed[k]);
		if (unlikely(w->frag_dropping) &&
				verdicts[k] == CFLOW_UNTRACKED_FRAGMENT)
			act = APP_DROP_FRAGMENT;
		*RTE_MBUF_DYNFIELD(m, run->verdict_offset, uint8_t *) =
			(uint8_t)verdicts[k];
		if (act != APP_FORWARD) {
			w->ctr.dropped[act]++;
			drops[nd++] = m;
			continue;
		}
		if (run->mirror && counts[k] != 0 &&
				counts[k] <= run->mirror_first)
			copies[nc++] = m;
		pkts[keep++] = m;
	}
	free_burst(drops, nd);
	sweep(w);
	if (run->cfg->mode == APP_MODE_FORWARD)
		mirror_send(w, copies, nc);
	forward_or_free(w, pkts, keep);
}

/* Track what the worker has gathered (its own packets of the bursts
 * since, and what it drained): one bulk lookup for all of them. */
static void
pending_flush(struct app_worker *w)
{
	struct app_pending *p = &w->pending;

	if (p->n == 0)
		return;
	track_and_send(w, p->pkts, p->in, p->parsed, p->status, p->n);
	p->n = 0;
}

/* Packets ahead that drain_ring() prefetches. */
#define DRAIN_PREFETCH 4u

/* Take at most @p max packets from the ring from worker @p j into the
 * pending burst, tracking it whenever it fills. Returns how many. */
static unsigned int
drain_ring(struct app_worker *w, unsigned int j, unsigned int max)
{
	const struct app_run *run = w->run;
	struct app_pending *p = &w->pending;
	unsigned int total = 0;

	while (total < max) {
		struct rte_mbuf **pkts;
		unsigned int n;

		if (p->n == APP_PENDING_MAX)
			pending_flush(w);
		pkts = p->pkts + p->n;
		n = rte_ring_sc_dequeue_burst(w->from[j], (void **)pkts,
				RTE_MIN((unsigned int)APP_PENDING_MAX - p->n,
					max - total),
				NULL);
		if (n == 0)
			break;
		/* Each mbuf and its metadata a few packets ahead of their
		 * use (l3fwd's PREFETCH_OFFSET): prefetched all at once, the
		 * first were used before they came. */
		for (unsigned int k = 0; k < RTE_MIN(n, DRAIN_PREFETCH); k++) {
			rte_prefetch0(pkts[k]);
			rte_prefetch0(rte_mbuf_to_priv(pkts[k]));
		}
		for (unsigned int k = 0; k < n; k++) {
			const struct app_handoff_meta *meta =
				rte_mbuf_to_priv(pkts[k]);
			struct cflow_input *in = &p->in[p->n + k];
			uint64_t t = meta->time_ns;

			if (k + DRAIN_PREFETCH < n) {
				rte_prefetch0(pkts[k + DRAIN_PREFETCH]);
				rte_prefetch0(rte_mbuf_to_priv(
					pkts[k + DRAIN_PREFETCH]));
			}
			if (run->cfg->clock != APP_CLOCK_PKT)
				t = k == 0 ? app_tsc_ns(run) : p->in[p->n].time_ns;
			mbuf_input(in, pkts[k], t);
			in->has_hash = true;
			in->hash = meta->hash;
			p->parsed[p->n + k] = meta->pkt;
			p->status[p->n + k] = CFLOW_PARSE_OK;
			if (t > w->last_ns)
				last_ns_set(w, t);
		}
		p->n = (uint16_t)(p->n + n);
		w->ctr.handoff_in += n;
		total += n;
	}
	return total;
}

unsigned int
app_worker_drain(struct app_worker *w)
{
	unsigned int total = 0;

	if (!w->run->handoff)
		return 0;
	for (unsigned int j = 0; j < w->run->nb_workers; j++)
		if (w->from[j] != NULL)
			total += drain_ring(w, j, APP_PENDING_MAX);
	pending_flush(w);
	return total;
}

/*
 * Pass @p n packets to worker @p owner. A full ring either drops the
 * rest (counted) or, when waiting is the policy (replayed captures:
 * nothing may be lost), makes this worker track what is handed to it
 * while it waits, so that two workers waiting on each other both make
 * progress.
 */
static void
hand_off(struct app_worker *w, unsigned int owner, struct rte_mbuf **pkts,
		unsigned int n)
{
	const struct app_run *run = w->run;
	unsigned int done = rte_ring_sp_enqueue_burst(w->to[owner],
			(void **)pkts, n, NULL);

	if (done < n && run->handoff_wait) {
		w->ctr.handoff_waits++;
		while (done < n && !quitting(run)) {
			if (app_worker_drain(w) == 0)
				rte_pause();
			done += rte_ring_sp_enqueue_burst(w->to[owner],
					(void **)pkts + done, n - done, NULL);
		}
	}
	w->ctr.handoff_out += done;
	if (done < n) {
		w->ctr.handoff_drops += n - done;
		rte_pktmbuf_free_bulk(pkts + done, n - done);
	}
}

/*
 * Does the list decide a packet that did not parse to a 5-tuple? By its
 * addresses where they could be read; a packet that may be IP but whose
 * addresses (or, with flow entries in the list, ports) cannot be read
 * is "unparsed": --blocklist-unparsed drops it (fail closed) or passes
 * it, counted either way. Not IP at all (ARP, LLDP): passes.
 */
static enum cbl_kind
blocklist_unparsed(struct app_worker *w, const struct cbl *bl,
		const struct cflow_packet *pkt)
{
	enum cbl_kind kind;

	if (pkt->has_addrs) {
		kind = cbl_match_addrs(bl, pkt);
		if (kind != CBL_NONE)
			return kind;
		if (bl != w->bl_seen) {
			struct cbl_info info;

			cbl_info(bl, &info);
			w->bl_seen = bl;
			w->bl_has_flows = info.entries[CBL_FLOW] != 0;
		}
		if (!w->bl_has_flows)
			return CBL_NONE;
	} else if (pkt->ethertype != 0 && pkt->ethertype != ETHER_TYPE_IPV4 &&
			pkt->ethertype != ETHER_TYPE_IPV6) {
		return CBL_NONE;
	}
	w->ctr.blocklist_unparsed++;
	return w->run->cfg->blocklist_unparsed == APP_UNPARSED_DROP ?
		CBL_KINDS : CBL_NONE;
}

/*
 * A fragment of the burst (cflow_frag.h), parsed again to name its
 * datagram: a later one takes its first fragment's parse; one held for
 * its first fragment leaves the burst (false); those a first fragment
 * gives back wait in frag_ready for frag_flush(), to follow it.
 */
static bool
frag_follow(struct app_worker *w, const struct app_rxq *q, const uint8_t *hdr,
		uint32_t len, struct rte_mbuf *m, uint64_t now_ns,
		struct cflow_packet *pkt, enum cflow_parse_status *st)
{
	struct cflow_frag_id fi;
	unsigned int nrel;

	*st = cflow_parse_frag(hdr, len, &q->parse, pkt, &fi);
	if (fi.family == 0)
		return true;
	if (cflow_frag_packet(w->frag, &fi, pkt, st, m, now_ns,
			w->frag_ready + w->nb_frag_ready, &nrel) ==
			CFLOW_FRAG_HELD)
		return false;
	w->nb_frag_ready += nrel;
	return true;
}

/* Parse the burst; follow its fragments if @p follow (and fragments are
 * followed); with a blocklist, drop the packets it matches; keep the
 * others, in order, with their inputs and parse results. Returns how
 * many are kept. */
static uint16_t
parse_and_block(struct app_worker *w, const struct app_rxq *q,
		const struct cbl *bl, struct rte_mbuf **pkts, struct cflow_input *in,
		struct cflow_packet *parsed, enum cflow_parse_status *status,
		uint16_t n, bool follow)
{
	enum cbl_kind kinds[CF_BULK_MAX];
	struct rte_mbuf *drops[CF_BULK_MAX];
	uint64_t parsed_ok = 0, held = 0;
	uint16_t keep = 0, nd = 0;

	follow = follow && w->frag != NULL;
	/* one call for the burst; a frame of segments again, from its
	 * headers gathered */
	cflow_parse_burst(in, n, &q->parse, parsed, status);
	for (uint16_t k = 0; k < n; k++) {
		const uint8_t *hdr = in[k].data;
		uint32_t len = in[k].len;

		if (unlikely(pkts[k]->nb_segs > 1)) {
			hdr = app_frame_headers(pkts[k], w->scratch, &len);
			status[k] = cflow_parse(hdr, len, &q->parse,
				&parsed[k]);
		}
		if (unlikely(follow && (status[k] == CFLOW_PARSE_FRAGMENT ||
				parsed[k].frag_first)) &&
				!frag_follow(w, q, hdr, len, pkts[k],
					in[k].time_ns, &parsed[k], &status[k])) {
			held |= UINT64_C(1) << k;
			continue;
		}
		parsed_ok |= (uint64_t)(status[k] == CFLOW_PARSE_OK) << k;
	}
	if ((bl == NULL && held == 0) || n == 0)
		return n;
	/* the parsed packets' lookups a few packets a bulk call */
	if (bl != NULL)
		cbl_match_burst(bl, parsed, n, parsed_ok, kinds);
	for (uint16_t k = 0; k < n; k++) {
		enum cbl_kind kind;

		/* the follower has it: decided (and counted) when it gives
		 * it back */
		if ((held >> k) & 1)
			continue;
		kind = bl == NULL ? CBL_NONE : (parsed_ok >> k) & 1 ?
			kinds[k] : blocklist_unparsed(w, bl, &parsed[k]);
		if (kind != CBL_NONE) {
			w->ctr.blocked_packets++;
			w->ctr.blocked_bytes += in[k].wire_len;
			w->ctr.blocked[kind]++;
			drops[nd++] = pkts[k];
			continue;
		}
		if (keep != k) {
			pkts[keep] = pkts[k];
			in[keep] = in[k];
			parsed[keep] = parsed[k];
			status[keep] = status[k];
		}
		keep++;
	}
	if (nd != 0)
		rte_pktmbuf_free_bulk(drops, nd);
	return keep;
}

/*
 * Gather the packets this worker owns for its next bulk lookup, and hand
 * each other one to its owner, in order: one burst per owner. Packets
 * that do not parse carry no flow: tracked (counted) where they arrive.
 */
static void
split_by_owner(struct app_worker *w, struct rte_mbuf **pkts,
		struct cflow_input *in, const struct cflow_packet *parsed,
		const enum cflow_parse_status *status, uint16_t n)
{
	const struct app_run *run = w->run;
	struct app_pending *p = &w->pending;
	struct rte_mbuf *out[CF_BULK_MAX];
	uint8_t owner[CF_BULK_MAX];
	uint64_t foreign = 0;

	for (uint16_t k = 0; k < n; k++) {
		owner[k] = (uint8_t)w->index;
		if (status[k] != CFLOW_PARSE_OK)
			continue;
		in[k].hash = cflow_hash_key(&parsed[k].key, run->hash_seed);
		in[k].has_hash = true;
		owner[k] = (uint8_t)app_flow_owner(run, in[k].hash);
		if (owner[k] != w->index)
			foreign |= UINT64_C(1) << k;
	}
	for (uint16_t k = 0; k < n; k++) {
		if ((foreign >> k) & 1) {
			struct app_handoff_meta *meta =
				rte_mbuf_to_priv(pkts[k]);

			meta->pkt = parsed[k];
			meta->hash = in[k].hash;
			meta->time_ns = in[k].time_ns;
			continue;
		}
		if (p->n == APP_PENDING_MAX)
			pending_flush(w);
		p->pkts[p->n] = pkts[k];
		p->in[p->n] = in[k];
		p->parsed[p->n] = parsed[k];
		p->status[p->n++] = status[k];
	}
	while (foreign != 0) {
		unsigned int first = (unsigned int)__builtin_ctzll(foreign);
		unsigned int to = owner[first], m = 0;

		for (uint64_t f = foreign; f != 0; f &= f - 1) {
			unsigned int k = (unsigned int)__builtin_ctzll(f);

			if (owner[k] == to) {
				out[m++] = pkts[k];
				foreign &= ~(UINT64_C(1) << k);
			}
		}
		hand_off(w, to, out, m);
	}
}

/* Drop, counted, the frames whose mbuf chain does not hold what their
 * pkt_len says (app/frame.h: net_pcap's records over 65,535 bytes),
 * before anything reads them; returns how many are kept, in order. */
static inline uint16_t
drop_broken_frames(struct app_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *bad[CF_BULK_MAX];
	uint16_t nb;

	n = app_frames_whole(pkts, n, bad, &nb);
	if (unlikely(nb != 0)) {
		w->ctr.rx_len_mismatch += nb;
		rte_pktmbuf_free_bulk(bad, nb);
	}
	return n;
}

static void frag_flush(struct app_worker *w, const struct cbl *bl);

/* Parse, follow fragments (if @p follow), block, then track what the
 * worker owns or hand it off: the burst from the inputs on. */
static void
burst_process(struct app_worker *w, const struct app_rxq *q,
		const struct cbl *bl, struct rte_mbuf **pkts,
		struct cflow_input *in, uint16_t n, bool follow)
{
	struct cflow_packet parsed[CF_BULK_MAX];
	enum cflow_parse_status status[CF_BULK_MAX];

	n = parse_and_block(w, q, bl, pkts, in, parsed, status, n, follow);
	if (w->run->handoff)
		/* tracked with what the rings bring, by app_worker_drain() */
		split_by_owner(w, pkts, in, parsed, status, n);
	else
		track_and_send(w, pkts, in, parsed, status, n);
	if (unlikely(w->nb_frag_ready != 0))
		frag_flush(w, bl);
}

/* The rx queue of this worker that polls @p port: a fragment it held
 * came from one. */
static const struct app_rxq *
port_rxq(const struct app_worker *w, uint16_t port)
{
	for (unsigned int i = 0; i < w->nb_rxq; i++)
		if (w->rxq[i].port == port)
			return &w->rxq[i];
	return &w->rxq[0];
}

/* Fragments the follower gave back (@p items, @p n), after what came
 * before them: followed (@p follow: their first fragment came), or not
 * (their time is up), at the worker's time, each by the queue of its
 * port. */
static void
frag_process(struct app_worker *w, const struct cbl *bl, void **items,
		unsigned int n, bool follow)
{
	unsigned int k = 0;

	while (k < n) {
		struct rte_mbuf *pkts[CF_BULK_MAX];
		struct cflow_input in[CF_BULK_MAX];
		uint16_t port = ((struct rte_mbuf *)items[k])->port, m = 0;

		while (k < n && m < CF_BULK_MAX &&
				((struct rte_mbuf *)items[k])->port == port) {
			pkts[m] = items[k++];
			mbuf_input(&in[m], pkts[m], w->last_ns);
			m++;
		}
		burst_process(w, port_rxq(w, port), bl, pkts, in, m, follow);
	}
}

/* The fragments a first fragment of the burst gave back: parsed again,
 * they follow it, in the order they came. They are later fragments, so
 * they give back none in turn. */
static void
frag_flush(struct app_worker *w, const struct cbl *bl)
{
	unsigned int n = w->nb_frag_ready;
	void *items[CF_BULK_MAX];

	w->nb_frag_ready = 0;
	for (unsigned int k = 0; k < n; k += CF_BULK_MAX) {
		unsigned int m = RTE_MIN(n - k, (unsigned int)CF_BULK_MAX);

		memcpy(items, w->frag_ready + k, m * sizeof(*items));
		frag_process(w, bl, items, m, true);
		RTE_ASSERT(w->nb_frag_ready == 0);
	}
}

/* Held fragments whose time is up (every one if @p all: the input is
 * over): their first fragment never came. Only firewall mode holds
 * (main.c's frag_create()), and there they are dropped as nf_defrag
 * drops a datagram it never completed, whatever the side: through the
 * blocklist and the tracker (counted `fragments`, verdict
 * CFLOW_UNTRACKED_FRAGMENT), then dropped as `fragment`. With handoff,
 * an unfollowed fragment is tracked where it arrives: the pending set,
 * flushed before and after, then holds only them. */
static void
frag_expire(struct app_worker *w, const struct cbl *bl, bool all)
{
	void *items[CF_BULK_MAX];
	unsigned int n;

	if (w->frag == NULL || cflow_frag_held(w->frag) == 0)
		return;
	pending_flush(w);
	w->frag_dropping = app_config_firewall(w->run->cfg);
	do {
		n = cflow_frag_expire(w->frag, w->last_ns, all, items,
			CF_BULK_MAX);
		frag_process(w, bl, items, n, false);
	} while (n == CF_BULK_MAX);
	pending_flush(w);
	w->frag_dropping = false;
}

void
app_worker_burst(struct app_worker *w, struct app_rxq *q,
		const struct cbl *bl, struct rte_mbuf **pkts,
		uint16_t n)
{
	const struct app_run *run = w->run;
	struct cflow_input in[CF_BULK_MAX];
	bool pkt_clock = run->cfg->clock == APP_CLOCK_PKT;
	/* The latest time read from this queue: the worker's clock may be
	 * ahead of it, moved by other queues or by what the rings brought.
	 * With the TSC, the burst's time. */
	uint64_t q_latest = q->time_ns;

	w->ctr.rx_packets += n;
	n = drop_broken_frames(w, pkts, n);
	/* one pass over the mbufs: the frames' headers prefetched for the
	 * parser, which reads them once the burst's inputs are taken */
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		bool none = false;

		rte_prefetch0(rte_pktmbuf_mtod(m, void *));
		if (!pkt_clock)
			q_latest = k == 0 ? app_tsc_ns(run) : q_latest;
		else
			q_latest = queue_time(run, m, q_latest, &none);
		w->ctr.no_timestamp += none;
		/* forward mode sends it to the port paired with this one */
		m->port = q->port;
		mbuf_input(&in[k], m, q_latest);
	}
	q->time_ns = q_latest;
	/* Every frame's time, tracked or not: the one notion of the latest
	 * time seen, which the end of the run sweeps at. */
	if (n != 0 && q_latest > w->last_ns)
		last_ns_set(w, q_latest);
	if (unlikely(run->role[q->port] == APP_ROLE_MIRROR)) {
		/* The mirror port only sends: what it receives is dropped
		 * untracked, so that it can neither open, refresh nor close
		 * a flow of the firewall. */
		w->ctr.dropped[APP_DROP_MIRROR_RX] += n;
		rte_pktmbuf_free_bulk(pkts, n);
		n = 0;
	}
	burst_process(w, q, bl, pkts, in, n, true);
	if (run->watermark)
		__atomic_store_n(&q->read_ns, q_latest, __ATOMIC_RELEASE);
}

/*
 * Replay watermark: the earliest of the latest times read from every
 * queue not at its end. Each queue is in time order, so no packet still
 * to be read is earlier; those read before it was published are tracked
 * or in a ring, and the caller drains what its rings held before
 * sweeping as of it.
 */
static uint64_t
watermark(const struct app_run *run)
{
	uint64_t wm = UINT64_MAX;

	for (unsigned int i = 0; i < run->nb_workers; i++)
		for (unsigned int k = 0; k < run->workers[i].nb_rxq; k++) {
			uint64_t t = __atomic_load_n(
				&run->workers[i].rxq[k].read_ns,
				__ATOMIC_ACQUIRE);

			if (t < wm)
				wm = t;
		}
	return wm;
}

/* Move the sweep's time on to the watermark: first track every packet
 * handed over before it was read. */
static void
advance_as_of(struct app_worker *w)
{
	const struct app_run *run = w->run;
	uint64_t wm = watermark(run);

	/* Each ring by what it held: packets that came after the
	 * watermark was read may stand in for none of those. */
	if (run->handoff) {
		for (unsigned int j = 0; j < run->nb_workers; j++)
			if (w->from[j] != NULL)
				drain_ring(w, j, rte_ring_count(w->from[j]));
		pending_flush(w);
	}
	if (run->lead_ns != 0)
		__atomic_store_n(&w->caught_ns, wm, __ATOMIC_RELEASE);
	if (wm > w->last_ns)
		wm = w->last_ns;
	if (wm > w->as_of_ns)
		w->as_of_ns = wm;
}

static bool
all_rx_done(const struct app_run *run)
{
	for (unsigned int i = 0; i < run->nb_workers; i++)
		if (!__atomic_load_n(&run->workers[i].rx_done,
				__ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* The least watermark the workers have all caught up with. */
static uint64_t
caught_least(const struct app_run *run)
{
	uint64_t least = UINT64_MAX;

	for (unsigned int i = 0; i < run->nb_workers; i++) {
		uint64_t c = __atomic_load_n(&run->workers[i].caught_ns,
				__ATOMIC_ACQUIRE);

		if (c < least)
			least = c;
	}
	return least;
}

/*
 * Replayed captures with a watermark (app_run.lead_ns): of the burst
 * @p pkts read from @p q, pass on only the frames no more than lead_ns
 * ahead of the least watermark every worker has caught up with; hold the
 * rest on the queue, in order, until the watermark has caught up. So no
 * tracker's clock runs more than its lag ahead of the time as of which no
 * packet is still to come to it: a flow of a queue that lags behind is
 * judged at its own packets' times, and a leap of the clock (a gap in the
 * capture) sweeps nothing such a packet would find alive (docs/design.md,
 * Replay time with handoff). The queue whose next packet is the
 * watermark's can always go on, so every queue does in turn. Returns how
 * many frames go on now.
 */
static uint16_t
hold_ahead(const struct app_run *run, struct app_rxq *q,
		struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t limit = caught_least(run), latest = q->time_ns;
	uint16_t k;

	limit = limit > UINT64_MAX - run->lead_ns ? UINT64_MAX :
		limit + run->lead_ns;
	for (k = 0; k < n; k++) {
		bool none;

		latest = queue_time(run, pkts[k], latest, &none);
		if (latest > limit)
			break;
	}
	q->nb_held = (uint16_t)(n - k);
	memcpy(q->held, pkts + k, q->nb_held * sizeof(*pkts));
	return k;
}

/* Poll every queue not at its end once (first what it holds back);
 * returns how many are live. */
static unsigned int
poll_queues(struct app_worker *w, const struct cbl *bl,
		uint64_t *losses, unsigned int *received)
{
	const struct app_run *run = w->run;
	const unsigned int burst = (unsigned int)run->cfg->burst;
	unsigned int live = 0;

	for (unsigned int i = 0; i < w->nb_rxq; i++) {
		struct app_rxq *q = &w->rxq[i];
		struct rte_mbuf *pkts[CF_BULK_MAX];
		uint16_t n;

		if (q->eof && q->nb_held == 0)
			continue;
		live++;
		if (q->nb_held != 0) {
			n = q->nb_held;
			memcpy(pkts, q->held, n * sizeof(*pkts));
			q->nb_held = 0;
		} else {
			n = link_usable(run, q->port) ?
				rte_eth_rx_burst(q->port, q->queue, pkts,
					(uint16_t)burst) : 0;
			if (n < burst && q->pcap &&
					queue_at_eof(q, &losses[q->port]))
				q->eof = true;
			q->rx_packets += n;
		}
		if (run->lead_ns != 0 && n != 0)
			n = hold_ahead(run, q, pkts, n);
		if (n != 0)
			app_worker_burst(w, q, bl, pkts, n);
		if (q->nb_held != 0) {
			bool none;

			__atomic_store_n(&q->read_ns, queue_time(run,
				q->held[0], q->time_ns, &none),
				__ATOMIC_RELEASE);
		} else if (q->eof) {
			__atomic_store_n(&q->read_ns, UINT64_MAX,
				__ATOMIC_RELEASE);
		}
		*received += n;
	}
	return live;
}

/* What the queues still hold back when the run is stopped. */
static void
held_free(struct app_worker *w)
{
	for (unsigned int i = 0; i < w->nb_rxq; i++) {
		struct app_rxq *q = &w->rxq[i];

		if (q->nb_held != 0)
			rte_pktmbuf_free_bulk(q->held, q->nb_held);
		q->nb_held = 0;
	}
}

int
app_worker_main(void *arg)
{
	struct app_worker *w = arg;
	const struct app_run *run = w->run;
	uint64_t losses[RTE_MAX_ETHPORTS] = { 0 };
	bool pkt_clock = run->cfg->clock == APP_CLOCK_PKT;
	struct rte_rcu_qsbr *rcu = app_blocklist_rcu();
	bool rx_done = false;

	rte_rcu_qsbr_thread_register(rcu, w->index);
	rte_rcu_qsbr_thread_online(rcu, w->index);
	while (!quitting(run)) {
		/* One list for the whole pass; a reload frees it only after
		 * the quiescent report below. */
		const struct cbl *bl = app_blocklist_get();
		unsigned int received = 0, live;

		live = poll_queues(w, bl, losses, &received);
		/* held fragments whose first never came; all of them once
		 * every queue is done */
		frag_expire(w, bl, live == 0);
		received += app_worker_drain(w);
		if (rte_rdtsc() - w->tx_flush_tsc >= run->tx_drain_tsc)
			app_worker_tx_flush(w);
		if (run->watermark)
			advance_as_of(w);
		if (received == 0)
			/* Idle: expire flows all the same. */
			app_worker_tick(w);
		ctl_serve(w);
		top_sync(w);
		rte_rcu_qsbr_quiescent(rcu, w->index);
		if (live != 0)
			continue;
		/* Every capture of this worker is exhausted and handed off.
		 * Once every worker says so, what its rings still hold is all
		 * that will ever come. */
		if (!rx_done) {
			rx_done = true;
			__atomic_store_n(&w->rx_done, true, __ATOMIC_RELEASE);
		}
		if (all_rx_done(run) && app_worker_drain(w) == 0)
			break;
	}
	/* nothing held or gathered stays untracked */
	frag_expire(w, app_blocklist_get(), true);
	app_worker_drain(w);
	app_worker_tx_flush(w); /* nor waits to be sent */
	held_free(w);
	/* Once the main lcore has the last packet time of all lcores, make
	 * the end-of-run counters exact (so that telemetry shows them),
	 * then wait to be stopped. */
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	while (!quitting(run)) {
		if (!w->swept && __atomic_load_n(&run->end_set,
				__ATOMIC_ACQUIRE)) {
			table_sweep_all(w, run->end_ns);
			__atomic_store_n(&w->swept, true, __ATOMIC_RELEASE);
		} else if (w->swept && !pkt_clock) {
			/* Sleeping 1 ms a turn, the sweep's bound per call
			 * (64 buckets) would take a 1 M-flow table's pass 8 s
			 * instead of one period: turns without work cost a
			 * clock read each. */
			for (unsigned int k = 0; k < IDLE_SWEEPS_PER_MS; k++)
				app_worker_tick(w);
		}
		ctl_serve(w);
		top_sync(w);
		rte_rcu_qsbr_quiescent(rcu, w->index);
		rte_delay_us_sleep(1000);
	}
	rte_rcu_qsbr_thread_offline(rcu, w->index);
	rte_rcu_qsbr_thread_unregister(rcu, w->index);
	return 0;
}
