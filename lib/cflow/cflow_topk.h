/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_TOPK_H_
#define _CFLOW_TOPK_H_

/**
 * @file
 * Top sources of new flows: a Space-Saving sketch (Metwally, Agrawal,
 * El Abbadi, "Efficient computation of frequent and top-k elements in
 * data streams", ICDT 2005) over source addresses, for the hosts that
 * open the most flows (scanners, floods) with their counts and error
 * bounds.
 *
 * A sketch of capacity m keeps m counters, each a monitored address with
 * a count and an error. An address already monitored adds 1 to its
 * count; a new one takes a free counter, or, once all m are taken, the
 * counter of least count c: count c + 1, error c. An update is O(1) (an
 * open-addressing index from address to counter, and Metwally's Stream
 * Summary: the counters in buckets of equal count, the buckets in order
 * of count) and allocates nothing: all memory is taken at creation.
 *
 * Guarantees, after N additions (cflow_topk_total()), with min the least
 * count of a full sketch (m counters taken) and 0 for one that is not
 * (cflow_topk_floor()):
 *
 * - a monitored address's true count is in [count - error, count], and
 *   error <= min;
 * - an address not monitored was added at most min times, and
 *   min <= N / m: every address added more than N / m times is
 *   monitored;
 * - the counts add up to N, and to at most N after a merge;
 * - with at most m distinct addresses, every count is exact (error 0).
 *
 * cflow_topk_merge() combines two sketches of the same capacity into
 * one with the same guarantees for the union of their streams
 * (mergeable summaries: Agarwal, Cormode, Huang, Phillips, Wei, Yi,
 * "Mergeable summaries", PODS 2012).
 *
 * Addresses are (family, 16 bytes): family 4 or 6; an IPv4 address is
 * its first 4 bytes, as in struct cflow_event (the other 12 are not
 * read). IPv4 a.b.c.d and the IPv6 address of the same 16 bytes are
 * two addresses.
 *
 * A sketch is not thread safe and takes no lock: one writer at a time,
 * and no reader while it writes. The application keeps two per worker
 * and swaps them each period: the worker adds to one while the main
 * lcore merges the other, retired one into its report and resets it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cf_alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default capacity (counters). */
#define CFLOW_TOPK_CAPACITY_DEFAULT 1024
/** Largest capacity. */
#define CFLOW_TOPK_CAPACITY_MAX (UINT32_C(1) << 24)

/**
 * Sketch parameters. Zero in any field selects the documented default,
 * so a zeroed struct is a working sketch.
 */
struct cflow_topk_params {
	/** Counters, m: 1..CFLOW_TOPK_CAPACITY_MAX (default
	 *  CFLOW_TOPK_CAPACITY_DEFAULT). The error bound is N / m. */
	uint32_t capacity;
	/**
	 * Seed of the address index's hash. 0 (default): a random one
	 * (cflow_random_seed()), so that sources cannot be chosen to
	 * collide in the index. It decides where addresses sit in the
	 * index only: what a sketch counts never depends on it.
	 */
	uint64_t seed;
	/** lib/cuckoo's allocator hooks, copied (NULL: posix_memalign()):
	 *  one allocation of cflow_topk_memsize() bytes. */
	const struct cf_allocator *allocator;
	int socket_id; /**< passed to the allocator (default 0) */
};

/** One monitored address, as cflow_topk_list() reports it. */
struct cflow_topk_entry {
	uint8_t addr[16];   /**< IPv4: the first 4 bytes, the rest 0 */
	uint8_t family;     /**< 4 or 6 */
	/**
	 * Certainly among the true top n of the list's n: count - error
	 * is more than the count of the next counter (the (n+1)th; or
	 * cflow_topk_floor() if there is none), which bounds the true
	 * count of every address not listed.
	 */
	bool guaranteed;
	uint64_t count;     /**< upper bound on the true count */
	uint64_t error;     /**< count - error is a lower bound */
};

struct cflow_topk;

/**
 * Bytes of memory a sketch of @p capacity counters holds (0: the
 * default), all allocated by cflow_topk_create(); 0 for a capacity out
 * of range. About 96 bytes a counter.
 *
 * @param capacity
 *   Counters, as cflow_topk_params.capacity.
 * @return
 *   The bytes, or 0 for a capacity above CFLOW_TOPK_CAPACITY_MAX.
 */
size_t cflow_topk_memsize(uint32_t capacity);

/**
 * Create an empty sketch; @p p may be NULL (all defaults).
 *
 * @param p
 *   The parameters, copied, or NULL.
 * @return
 *   The sketch, or NULL with errno EINVAL (a capacity out of range, an
 *   allocator without both hooks) or ENOMEM.
 */
struct cflow_topk *cflow_topk_create(const struct cflow_topk_params *p);

/**
 * Free a sketch; NULL is a no-op.
 *
 * @param s
 *   The sketch, or NULL. Its memory goes back through its allocator.
 */
void cflow_topk_free(struct cflow_topk *s);

/**
 * Count one more flow from @p addr. O(1), no allocation, no system call.
 *
 * @param s
 *   The sketch.
 * @param family
 *   4 or 6.
 * @param addr
 *   The address: 4 bytes read for IPv4, 16 for IPv6.
 * @return
 *   0, or -EINVAL (errno set) for a NULL argument or another family:
 *   nothing is counted.
 */
int cflow_topk_add(struct cflow_topk *s, uint8_t family,
		const uint8_t *addr);

/**
 * Empty a sketch: no address, total 0, as created. O(m).
 *
 * @param s
 *   The sketch.
 */
void cflow_topk_reset(struct cflow_topk *s);

/**
 * The (at most) @p n monitored addresses of greatest count, by count
 * descending, then error ascending, then family and address. When the
 * n-th and the (n+1)th counts are equal, which of them is listed is
 * arbitrary (neither is guaranteed), though the same for the same
 * additions and merges, whatever the seed. O(m) at most, plus
 * O(n log n); no allocation.
 *
 * @param s
 *   The sketch.
 * @param out
 *   Receives up to @p n entries.
 * @param n
 *   Entries @p out has room for.
 * @return
 *   The number of entries written to @p out (fewer than @p n when fewer
 *   addresses are monitored), or -EINVAL (errno set) for a NULL
 *   argument.
 */
int cflow_topk_list(const struct cflow_topk *s,
		struct cflow_topk_entry *out, unsigned int n);

/**
 * Merge @p src into @p dst, which then summarises both streams
 * (@p src is unchanged): for each address of either, count and error
 * are the sums of its count and error in each sketch, taking for a
 * sketch that does not monitor it that sketch's floor
 * (cflow_topk_floor()) as both count and error; the m of greatest count
 * are kept. The total is the sum of the totals.
 *
 * The merged sketch keeps every guarantee of the file comment for the
 * union of the two streams, N = N_dst + N_src: true count in [count -
 * error, count], error <= floor <= N / m, an address not monitored
 * added at most floor times, the counts adding up to at most N. Merges
 * compose: a report merged from any number of sketches has the bounds
 * of one sketch fed all their streams. O(m log m), no allocation.
 *
 * @param dst
 *   The sketch merged into.
 * @param src
 *   The sketch merged from, of the same capacity.
 * @return
 *   0, or -EINVAL (errno set, @p dst unchanged) for a NULL argument,
 *   @p dst == @p src, or capacities that differ.
 */
int cflow_topk_merge(struct cflow_topk *dst, const struct cflow_topk *src);

/**
 * Items counted since creation or the last reset (merged in too).
 *
 * @param s
 *   The sketch.
 * @return
 *   N, the number of cflow_topk_add() calls that counted, plus the
 *   totals merged in.
 */
uint64_t cflow_topk_total(const struct cflow_topk *s);

/**
 * The most times an address that is not monitored may have been added:
 * the least count of a full sketch, 0 while counters are free. At most
 * cflow_topk_total() / m; every error is at most this.
 *
 * @param s
 *   The sketch.
 * @return
 *   The floor, a count.
 */
uint64_t cflow_topk_floor(const struct cflow_topk *s);

/**
 * The sketch's capacity, m.
 *
 * @param s
 *   The sketch.
 * @return
 *   Its counters, the default resolved.
 */
uint32_t cflow_topk_capacity(const struct cflow_topk *s);

#ifdef __cplusplus
}
#endif

#endif /* _CFLOW_TOPK_H_ */
