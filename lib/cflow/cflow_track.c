/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Flow tracker: one lib/cuckoo filter whose slot values hold each flow's
 * state, protocol class and coarse last-seen time.
 *
 * Value layout (value_bits 32 or 16): bit 0 closing, bits 1-2 class,
 * with sided a bit 3 set when the key's higher endpoint is the inside
 * one, then count_bits bits (0 to 8) of the flow's saturating packet
 * count, then the time in ticks, modulo 2^(value_bits - 3 - sided -
 * count_bits), of the
 * flow's last packet, open or closing: a closed flow lingers from its
 * last packet as an open one idles from it. A tick is 2^24 ns (16.8 ms)
 * with 32-bit values; with 16-bit values it is the smallest power of two
 * of nanoseconds, from 2^24 up, that keeps every timeout under a quarter
 * of the tick range (2^28 ns = 268 ms for the default 300 s). Ages are
 * differences modulo the range, and the sweep removes every entry long
 * before its age could wrap.
 *
 * Ages are measured to now_tick, the tick judged at: the clock's, or an
 * earlier one while a packet is decided at its own time (flow_time) or
 * while cflow_sweep_at() judges as of a watermark. That tick is kept at
 * most lag_ticks (1/8 of the range) behind the clock, and no entry is
 * stamped later than the clock (a stamp is the later of the old one and
 * a packet's time, which is at most the clock), so a difference within
 * lag_ticks below zero is an entry stamped after the tick judged at: age
 * 0. Every other difference is an age: the range, in fractions of it,
 * tells ages apart up to 7/8 instead of 1. With 16-bit values that is
 * what needs care; they still get nowhere near it. Every entry was found
 * alive (swept or stamped) as of covered_ns or later, and the clock is
 * kept within 1/4 + the lag (1/8) of covered_ns (clock_catch_up(): the
 * paced sweep alone does not keep it, as moves each under 1/4 can go
 * round the range between two whole passes), so every entry's age to
 * the clock is under that + a timeout (< 1/4: tick_shift_for): 5/8. The
 * leap's full sweep, at the old clock + 1/4 (every entry is removed) or,
 * with flow_time, at the new time less the lag if that is earlier, sees
 * ages under 3/8 + 1/4 + 1/4 = 7/8, read to the clock it sets (no lag
 * window); the entries it keeps are then under lag + timeout < 3/8 old.
 * All stay under 7/8.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cflow_key_hash.h"
#include "cflow_track.h"
#include "cfutil.h"
#include "cflow_state.h"

#define MIN_TICK_SHIFT 24
#define VALUE_CLOSING 1u
#define VALUE_CLASS_SHIFT 1
#define VALUE_FLAG_BITS 3       /* closing, class */
#define VALUE_HI_INSIDE 8u      /* sided: bit 3 */
#define NS_PER_S UINT64_C(1000000000)

/*
 * Records: the aux word of a flow's slot (lib/cuckoo's aux_bits 64)
 * holds what its record counts so far, and the state 8 bits more, the
 * record stamp: the time of the record's first packet in units of
 * 2^ushift ns, modulo 256, for the active timeout.
 *
 *   aux bits 0-15   packets (a record is cut before it would overflow)
 *            16-47  IP octets
 *            48-55  OR of TCP flags
 *            56-63  the last packet's time within its tick, in 1/256
 */
#define REC_STAMP_BITS 8
#define REC_PKTS_MAX UINT32_C(0xffff)
#define REC_BYTES_SHIFT 16
#define REC_BYTES_MAX UINT64_C(0xffffffff)
#define REC_FLAGS_SHIFT 48
#define REC_SUB_SHIFT 56
#define REC_SUB_BITS 8
/* A stamp difference this large or more is a stamp ahead of the time
 * judged at (never, but for a clock held back): not due. */
#define REC_AHEAD 224
/* Units of the active timeout's span (see cflow_tracker_create()). */
#define REC_SPAN_UNITS 220

struct cflow_tracker {
	struct cf_filter *filter;
	struct cflow_tracker_params params;
	unsigned int tick_shift;  /* a tick is 2^tick_shift ns */
	uint32_t tick_mask;       /* ticks are stored modulo tick_mask + 1 */
	uint64_t leap_ns;         /* a quarter of the tick range */
	unsigned int count_shift; /* the count's shift: 3, 4 if sided */
	uint32_t side_mask;       /* VALUE_HI_INSIDE if sided, else 0 */
	unsigned int vtick;       /* the time's shift in a value:
				   * count_shift + count bits */
	uint32_t count_max;       /* 2^count_bits - 1, 0 without a count */
	/* records: the stamp's shift in a value (count_shift + count
	 * bits; the time's is 8 more), 255 (0 without records), its unit
	 * 2^ushift ns, the stamp age that cuts a record (UINT32_MAX:
	 * never) */
	bool records;
	unsigned int rstamp_shift;
	uint32_t rstamp_mask;
	unsigned int ushift;
	uint32_t due_units;
	unsigned int chunk_base;  /* index of the chunk's first packet */
	uint8_t *aux;             /* the table slots' aux words, */
	uint32_t aux_stride;      /* this far apart (unaligned) */
	struct cf_value_table vals; /* and their values */
	uint32_t slots;           /* table slots: positions below are in
				   * aux, the stash's above */
	uint32_t timeout_ticks[CFLOW_CLASS_MAX]; /* in force */
	uint32_t linger_ticks;
	uint32_t normal_timeout_ticks[CFLOW_CLASS_MAX];
	uint32_t normal_linger_ticks;
	uint32_t emergency_ticks;
	uint64_t emergency_enter_flows; /* open flows that start one */
	uint64_t emergency_exit_flows;  /* below these, it ends */
	uint64_t tokens;          /* admission: tokens * 1e9 */
	uint64_t tokens_max;
	uint64_t tokens_ns;       /* when last refilled */
	uint64_t tokens_fill_ns;  /* an empty bucket's time to full, + 1 */
	uint64_t now_ns;        /* latest time seen: never goes back */
	uint32_t now_tick;      /* the tick judged at: see above */
	uint64_t judge_ns;      /* the time it is the tick of */
	uint32_t clock_tick;    /* now_ns's tick */
	uint64_t lag_ns;        /* how far behind the clock one may judge */
	uint32_t lag_ticks;
	uint64_t buckets;
	uint64_t cursor;        /* sweep position */
	/* Every entry was found alive (swept, or stamped) as of this time
	 * or later: its age to the clock is at most the clock less this
	 * plus a timeout (see clock_advance()). */
	uint64_t covered_ns;
	uint64_t pass_min_ns;   /* the earliest time the sweep's pass in
				 * progress judged at (UINT64_MAX: none) */
	uint64_t prev_min_ns;   /* the same for the last completed pass */
	uint64_t sweep_period_ns;
	struct cflow_pace sweep_pace; /* in buckets */
	struct cflow_counters c;
};

uint64_t
cflow_random_seed(void)
{
	uint64_t seed;

	/* A random seed, so that flows cannot be chosen to collide. */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) !=
			(ssize_t)sizeof(seed))
		seed = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&seed;
	return seed != 0 ? seed : 1;
}

void
cflow_tracker_params_init(struct cflow_tracker_params *p, uint64_t capacity)
{
	memset(p, 0, sizeof(*p));
	/* All defaults: cannot fail. */
	(void)cflow_tracker_params_resolve(p, p);
	if (capacity != 0)
		p->capacity = capacity;
}

/* ------------------------------------------------------------- values */

/* @p side: VALUE_HI_INSIDE or 0 (always 0 unless sided); @p rstamp: the
 * record stamp (0 without records). */
static inline uint32_t
value_make(const struct cflow_tracker *t, uint32_t tick, unsigned int cls,
		bool closing, uint32_t count, uint32_t side, uint32_t rstamp)
{
	return tick << t->vtick | rstamp << t->rstamp_shift |
		count << t->count_shift | side | cls << VALUE_CLASS_SHIFT |
		(closing ? VALUE_CLOSING : 0);
}

/* The record stamp, 0 without records. */
static inline uint32_t
value_rstamp(const struct cflow_tracker *t, uint64_t v)
{
	return (uint32_t)(v >> t->rstamp_shift) & t->rstamp_mask;
}

/* The flow's packet count, 0 without one. */
static inline uint32_t
value_count(const struct cflow_tracker *t, uint64_t v)
{
	return (uint32_t)(v >> t->count_shift) & t->count_max;
}

/* Sided: VALUE_HI_INSIDE if the key's higher endpoint is inside; 0 if
 * not, and always without sides (the bit is the count's, or time's). */
static inline uint32_t
value_side(const struct cflow_tracker *t, uint64_t v)
{
	return (uint32_t)v & t->side_mask;
}

static inline uint32_t
value_tick(const struct cflow_tracker *t, uint64_t v)
{
	return (uint32_t)(v >> t->vtick) & t->tick_mask;
}

static inline bool
value_closing(uint64_t v)
{
	return v & VALUE_CLOSING;
}

static inline unsigned int
value_class(uint64_t v)
{
	return (v >> VALUE_CLASS_SHIFT) & 3;
}

static inline uint32_t
value_age(const struct cflow_tracker *t, uint64_t v)
{
	uint32_t age = (t->now_tick - value_tick(t, v)) & t->tick_mask;

	/* Stamped after the tick judged at, which is behind the clock. */
	if (t->now_tick != t->clock_tick && age > t->tick_mask - t->lag_ticks)
		return 0;
	return age;
}

/* The tick to stamp on a flow a packet refreshes: the tick judged at,
 * or the flow's own if later (flow_time: other streams moved the clock). */
static inline uint32_t
value_stamp(const struct cflow_tracker *t, uint64_t v)
{
	return value_age(t, v) == 0 ? value_tick(t, v) : t->now_tick;
}

/*
 * Stored ticks are truncated, so an age of a ticks means at least
 * (a - 1) ticks of real time: requiring a > T + 1 never expires a flow
 * before its timeout, and costs at most 3 ticks of lateness.
 */
static inline bool
idle_expired(const struct cflow_tracker *t, uint64_t v)
{
	return !value_closing(v) &&
		value_age(t, v) > t->timeout_ticks[value_class(v)] + 1;
}

static inline bool
linger_done(const struct cflow_tracker *t, uint64_t v)
{
	return value_closing(v) && value_age(t, v) > t->linger_ticks + 1;
}

/* The filter's slot tables the hot path writes without a call. */
static void
table_refs(struct cflow_tracker *t)
{
	int ret;

	t->aux = cf_aux_table(t->filter, &t->aux_stride);
	ret = cf_value_table(t->filter, &t->vals);
	CFU_ASSERT(ret == 0); /* a tracker's filter has values */
	(void)ret;
}

/* Store @p v as the value of the flow at @p pos, which the tracker found
 * there: in place (16- or 32-bit values), or by cf_value_set() for the
 * stash. The call, half of a packet's at 10 M flows, cost 10 cycles a
 * packet there and at 1 M (issue 29, round 4). */
static inline void
value_store(struct cflow_tracker *t, uint32_t pos, uint64_t v)
{
	const struct cf_value_table *vt = &t->vals;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;
	uint8_t *p = vt->base + (pos >> vt->shift) * vt->pitch +
		(pos & vt->slot_mask) * vt->step;
	int ret;

	if (__builtin_expect(pos < t->slots, 1)) {
		if (vt->bytes == 2) {
			memcpy(p, &v16, sizeof(v16));
			return;
		}
		if (vt->bytes == 4) {
			memcpy(p, &v32, sizeof(v32));
			return;
		}
	}
	ret = cf_value_set(t->filter, pos, v);
	CFU_ASSERT(ret == 0);
	(void)ret;
}

static uint64_t sweep_buckets(struct cflow_tracker *t, uint64_t nb);

static inline void
clock_set(struct cflow_tracker *t, uint64_t ns)
{
	t->now_ns = ns;
	t->judge_ns = ns;
	t->now_tick = (uint32_t)(ns >> t->tick_shift) & t->tick_mask;
	t->clock_tick = t->now_tick;
}

/* Judge ages as of @p ns, clamped to [now_ns - lag_ns, now_ns]; undone by
 * judge_done(). */
static inline void
judge_at(struct cflow_tracker *t, uint64_t ns)
{
	CFU_ASSERT(t->now_tick == t->clock_tick);
	if (ns > t->now_ns)
		ns = t->now_ns;
	if (t->now_ns - ns > t->lag_ns)
		ns = t->now_ns - t->lag_ns;
	t->judge_ns = ns;
	t->now_tick = (uint32_t)(ns >> t->tick_shift) & t->tick_mask;
}

static inline void
judge_done(struct cflow_tracker *t)
{
	t->now_tick = t->clock_tick;
	t->judge_ns = t->now_ns;
}

/* ------------------------------------------------------------ records */

static inline uint64_t
rec_word(uint32_t packets, uint64_t bytes, uint32_t flags, uint32_t sub)
{
	return packets | bytes << REC_BYTES_SHIFT |
		(uint64_t)flags << REC_FLAGS_SHIFT |
		(uint64_t)sub << REC_SUB_SHIFT;
}

static inline uint32_t
rec_packets(uint64_t w)
{
	return (uint32_t)w & REC_PKTS_MAX;
}

static inline uint64_t
rec_bytes(uint64_t w)
{
	return (w >> REC_BYTES_SHIFT) & REC_BYTES_MAX;
}

/* The time judged at within its tick, in 1/256 of a tick. */
static inline uint32_t
rec_sub_now(const struct cflow_tracker *t)
{
	return (uint32_t)(t->judge_ns >> (t->tick_shift - REC_SUB_BITS)) &
		((1u << REC_SUB_BITS) - 1);
}

/* The record stamp of the time judged at. */
static inline uint32_t
rec_stamp_now(const struct cflow_tracker *t)
{
	return (uint32_t)(t->judge_ns >> t->ushift) & t->rstamp_mask;
}

/* A record stamped @p stamp is due to be cut (active timeout). */
static inline bool
rec_due(const struct cflow_tracker *t, uint32_t stamp)
{
	uint32_t d = (rec_stamp_now(t) - stamp) & t->rstamp_mask;

	return d >= t->due_units && d < REC_AHEAD;
}

/*
 * The time of a flow's last packet from its stamped tick (@p v) and the
 * tick's 1/256 in the record word @p w: the stamped tick is the one of
 * the time judged at less the flow's age, or, for a flow stamped after
 * the tick judged at (judging behind the clock), that much ahead.
 */
static uint64_t
rec_last_ns(const struct cflow_tracker *t, uint64_t v, uint64_t w)
{
	uint32_t tick = value_tick(t, v);
	uint32_t back = (t->now_tick - tick) & t->tick_mask;
	uint64_t base = t->judge_ns >> t->tick_shift, abs;

	if (t->now_tick != t->clock_tick && back > t->tick_mask - t->lag_ticks)
		abs = base + ((tick - t->now_tick) & t->tick_mask);
	else
		abs = back <= base ? base - back : 0;
	return abs << t->tick_shift | (w >> REC_SUB_SHIFT) <<
		(t->tick_shift - REC_SUB_BITS);
}

/* Hand the record of the flow @p name (state @p v, record word @p w) to
 * the caller, counted in @p *count. */
static void
rec_emit(struct cflow_tracker *t, uint64_t name, enum cflow_record_reason
		reason, uint64_t v, uint64_t w, uint64_t next_ns, uint64_t *count)
{
	struct cflow_record r = {
		.name = name,
		.last_ns = rec_last_ns(t, v, w),
		.next_ns = next_ns,
		.bytes = rec_bytes(w),
		.packets = rec_packets(w),
		.reason = (uint8_t)reason,
		.tcp_flags = (uint8_t)(w >> REC_FLAGS_SHIFT),
	};

	(*count)++;
	t->params.record_fn(&r, t->params.record_arg);
}

/* The record of the flow at @p pos (state @p v), which ends now. */
static void
rec_end_at(struct cflow_tracker *t, uint32_t pos, uint64_t v,
		enum cflow_record_reason reason, uint64_t *count)
{
	uint64_t name = 0;
	int ret = cf_name_at(t->filter, pos, &name);

	CFU_ASSERT(ret == 0);
	(void)ret;
	rec_emit(t, name, reason, v, cf_aux_get(t->filter, pos), 0, count);
}

static inline uint64_t *
rec_count(struct cflow_tracker *t, enum cflow_record_reason reason)
{
	switch (reason) {
	case CFLOW_RECORD_IDLE:
		return &t->c.records_idle;
	case CFLOW_RECORD_ACTIVE:
		return &t->c.records_active;
	case CFLOW_RECORD_FORCED:
		return &t->c.records_forced;
	case CFLOW_RECORD_RESOURCES:
		return &t->c.records_resources;
	default:
		return &t->c.records_end;
	}
}

/*
 * A packet (@p flags, @p bytes) of the flow at @p pos, whose state is
 * @p v, into its record: first, if the record is due (active timeout)
 * or a count would overflow, the record so far is handed over and a new
 * one starts with this packet. Returns the record stamp to store.
 */
static inline __attribute__((always_inline)) uint32_t
rec_packet(struct cflow_tracker *t, uint32_t pos, uint64_t v, uint8_t flags,
		uint32_t bytes)
{
	uint8_t *a = pos < t->slots ? t->aux + (uint64_t)pos * t->aux_stride :
		cf_aux_at(t->filter, pos);
	uint32_t stamp = value_rstamp(t, v), sub = rec_sub_now(t);
	uint64_t w;

	memcpy(&w, a, sizeof(w));
	if (__builtin_expect(rec_packets(w) == REC_PKTS_MAX ||
			rec_bytes(w) + bytes > REC_BYTES_MAX ||
			rec_due(t, stamp), 0)) {
		uint64_t name = 0;

		/* A record with no packet (a flow taken over from a state
		 * file, none since) is not handed over: this packet starts
		 * the flow's record here too. */
		if (rec_packets(w) != 0) {
			(void)cf_name_at(t->filter, pos, &name);
			rec_emit(t, name, CFLOW_RECORD_ACTIVE, v, w,
				t->judge_ns, &t->c.records_active);
		}
		/* this packet starts the next record: its time */
		w = rec_word(1, bytes, flags, sub);
		memcpy(a, &w, sizeof(w));
		return rec_stamp_now(t);
	}
	/* One add counts the packet and its octets (no carry: checked),
	 * an OR its flags. The last packet's time is this one's, unless the
	 * flow's own stamp is later (flow_time: the stamp stays), or within
	 * the same tick an earlier packet of it was judged later. */
	w += 1 | (uint64_t)bytes << REC_BYTES_SHIFT;
	w |= (uint64_t)flags << REC_FLAGS_SHIFT;
	if (!t->params.flow_time || (value_stamp(t, v) == t->now_tick &&
			(value_tick(t, v) != t->now_tick ||
			 sub >= (uint32_t)(w >> REC_SUB_SHIFT))))
		w = (w & ~(UINT64_C(0xff) << REC_SUB_SHIFT)) |
			(uint64_t)sub << REC_SUB_SHIFT;
	memcpy(a, &w, sizeof(w));
	return stamp;
}

/*
 * Stored times wrap, so a leap of the clock by more than a quarter of
 * the tick range (a gap in a capture: 9 minutes with 16-bit values and
 * the default timeouts) would misread ages. One full sweep first removes
 * every entry no later judgement can find alive, judged at the earliest
 * time a later one may be made at: the new time itself, or with
 * flow_time that less the lag (a packet or a watermark further behind
 * the clock is judged at the clock less the lag). A quarter range after
 * the old time, if earlier: by then every entry is past its timeout or
 * linger, and ages to it are still read right. So a flow_time tracker fed
 * no packet more than the lag ahead of its watermark (cflow_sweep_at())
 * keeps the flows of a stream that has not caught up, as a time-ordered
 * replay would: one judged a quarter range on would have expired every
 * flow whatever their streams' own times. Kept entries are at most
 * lag + timeout old at the new time. Returns true if it swept.
 */
static bool
clock_leap(struct cflow_tracker *t, uint64_t time_ns)
{
	uint64_t judge_ns = t->now_ns + t->leap_ns;
	struct cf_stats st;
	bool swept = false;

	if (t->params.flow_time && time_ns - t->lag_ns < judge_ns)
		judge_ns = time_ns - t->lag_ns;
	cf_stats(t->filter, &st);
	if (st.items != 0) {
		clock_set(t, judge_ns);
		sweep_buckets(t, t->buckets);
		swept = true;
		cf_stats(t->filter, &st);
	}
	clock_set(t, time_ns);
	/* An empty table is all covered; a kept entry was found alive as
	 * of judge_ns (sweep_buckets()). */
	if (st.items == 0)
		t->covered_ns = time_ns;
	return swept;
}

/*
 * The clock may also go round the range by moves each under a quarter
 * of it (a sparse capture: one packet every 8 minutes with 16-bit values
 * and the default timeouts) while the sweep runs no whole pass between
 * them: all in one burst, or a sweep bounded to sweep_max_buckets a call
 * on a table of more buckets. An entry left alone then reads young again
 * (test_clock_steps_under_quarter). So before the clock moves more than
 * a quarter range past covered_ns, the whole table is swept at the clock
 * (with flow_time, the clock less the lag, as no packet still to come is
 * earlier: the sweep expires only what any later packet would). The
 * clock then stays within a quarter range plus the lag of covered_ns, and
 * every age under that plus a timeout: 3/8 + 1/4 of the range. Returns
 * true if it swept.
 */
static bool
clock_catch_up(struct cflow_tracker *t)
{
	uint64_t judge_ns = t->now_ns;
	struct cf_stats st;

	if (t->params.flow_time)
		judge_ns = judge_ns > t->lag_ns ? judge_ns - t->lag_ns : 0;
	cf_stats(t->filter, &st);
	if (st.items == 0) {
		t->covered_ns = t->now_ns;
		return false;
	}
	judge_at(t, judge_ns);
	sweep_buckets(t, t->buckets);
	judge_done(t);
	return true;
}

/* Time never goes backwards: an earlier timestamp (a capture replayed
 * twice, merged captures) counts as the latest one seen. Returns true if
 * entries were removed. */
static inline bool
clock_advance(struct cflow_tracker *t, uint64_t time_ns)
{
	bool swept = false;

	if (time_ns <= t->now_ns)
		return false;
	if (time_ns - t->now_ns > t->leap_ns)
		return clock_leap(t, time_ns);
	if (__builtin_expect(time_ns - t->covered_ns > t->leap_ns, 0))
		swept = clock_catch_up(t);
	clock_set(t, time_ns);
	return swept;
}

/* ---------------------------------------------------------- lifecycle */

static uint32_t
ticks_of(uint64_t ns, unsigned int shift)
{
	return (uint32_t)((ns + (UINT64_C(1) << shift) - 1) >> shift);
}

/*
 * The tick for @p value_bits: the finest from 2^24 ns up under which
 * @p longest (the longest timeout or linger) spans less than a quarter
 * of the tick range. The other quarter of the half range that ages can
 * tell apart is the sweep's slack. 0 if none fits.
 */
static unsigned int
tick_shift_for(unsigned int value_bits, unsigned int count_bits, bool sided,
		bool records, uint64_t longest)
{
	unsigned int tick_bits = value_bits - VALUE_FLAG_BITS - sided -
		count_bits - (records ? REC_STAMP_BITS : 0);

	for (unsigned int shift = MIN_TICK_SHIFT; shift < 40; shift++)
		if ((longest >> shift) + 4 < (UINT64_C(1) << (tick_bits - 2)))
			return shift;
	return 0;
}

/* The longest timeout or linger of resolved parameters. */
static uint64_t
longest_ns(const struct cflow_tracker_params *p)
{
	uint64_t longest = p->close_linger_ns == CFLOW_LINGER_NONE ? 0 :
		p->close_linger_ns;

	for (unsigned int c = 0; c < CFLOW_CLASS_MAX; c++)
		if (p->timeout_ns[c] > longest)
			longest = p->timeout_ns[c];
	return longest;
}

int
cflow_tracker_params_resolve(const struct cflow_tracker_params *p,
		struct cflow_tracker_params *out)
{
	static const uint64_t timeout_s[CFLOW_CLASS_MAX] = {
		[CFLOW_CLASS_TCP] = CFLOW_TIMEOUT_TCP_S,
		[CFLOW_CLASS_UDP] = CFLOW_TIMEOUT_UDP_S,
		[CFLOW_CLASS_ICMP] = CFLOW_TIMEOUT_ICMP_S,
		[CFLOW_CLASS_OTHER] = CFLOW_TIMEOUT_OTHER_S,
	};
	struct cflow_tracker_params r;
	unsigned int shift;

	if (p == NULL || out == NULL)
		goto einval;
	r = *p;
	if (r.capacity == 0)
		r.capacity = CFLOW_CAPACITY_DEFAULT;
	if (r.fp_bits == 0)
		r.fp_bits = CF_DEFAULT_FP_BITS;
	if (r.value_bits == 0)
		r.value_bits = CFLOW_VALUE_BITS_DEFAULT;
	if (r.seed == 0 && !r.fixed_seed)
		r.seed = cflow_random_seed();
	for (unsigned int c = 0; c < CFLOW_CLASS_MAX; c++)
		if (r.timeout_ns[c] == 0)
			r.timeout_ns[c] = timeout_s[c] * NS_PER_S;
	if (r.close_linger_ns == 0)
		r.close_linger_ns = CFLOW_CLOSE_LINGER_S * NS_PER_S;
	if (r.sweep_max_buckets == 0)
		r.sweep_max_buckets = CFLOW_SWEEP_MAX_BUCKETS;
	if (r.new_flow_rate != 0 && r.new_flow_burst == 0)
		r.new_flow_burst = r.new_flow_rate;
	if (r.records && r.active_timeout_ns == 0)
		r.active_timeout_ns = CFLOW_ACTIVE_TIMEOUT_S * NS_PER_S;
	if (r.emergency_load_ppm != 0) {
		if (r.emergency_timeout_ns == 0)
			r.emergency_timeout_ns = CFLOW_EMERGENCY_TIMEOUT_S *
				NS_PER_S;
		if (r.emergency_low_ppm == 0)
			r.emergency_low_ppm = r.emergency_load_ppm > 100000 ?
				r.emergency_load_ppm - 100000 : 0;
	}
	/* Capacities above CF_MAX_CAPACITY would need a table of 2^32 slots
	 * or more, past lib/cuckoo's 32-bit positions. */
	if (r.capacity > CF_MAX_CAPACITY ||
			(r.value_bits != 16 && r.value_bits != 32) ||
			(unsigned int)r.full_policy > CFLOW_FULL_UNTRACKED ||
			(unsigned int)r.hash > CFLOW_HASH_RSS ||
			(r.table != CF_TABLE_PLAIN &&
			 r.table != CF_TABLE_INTERLEAVED) ||
			r.count_bits > 8 || r.new_flow_rate > NS_PER_S ||
			r.new_flow_burst > NS_PER_S ||
			r.emergency_load_ppm > 1000000 ||
			(r.emergency_load_ppm != 0 &&
			 r.emergency_low_ppm >= r.emergency_load_ppm) ||
			(r.records && (r.value_bits != 32 ||
			 r.record_fn == NULL)))
		goto einval;
	/* 32-bit values keep 16.8 ms ticks: timeouts up to 26 days (less
	 * with a packet count or a side, whose bits come from the time's). */
	shift = tick_shift_for(r.value_bits, r.count_bits, r.sided, r.records,
		longest_ns(&r));
	if (shift == 0 || (r.value_bits == 32 && r.count_bits == 0 &&
			!r.sided && !r.records && shift != MIN_TICK_SHIFT))
		goto einval;
	*out = r;
	return 0;
einval:
	errno = EINVAL;
	return -EINVAL;
}

/* The flow table's parameters: lib/cuckoo's part of resolved @p p. */
static struct cf_params
filter_params(const struct cflow_tracker_params *p)
{
	return (struct cf_params){
		.capacity = p->capacity,
		.fp_bits = p->fp_bits,
		.value_bits = p->value_bits,
		.exact_size = p->exact_size,
		.table = p->table,
		.seed = p->seed,
		.socket_id = p->socket_id,
		.allocator = p->allocator,
		.aux_bits = p->records ? 64 : 0,
	};
}

struct cflow_tracker *
cflow_tracker_create(const struct cflow_tracker_params *params)
{
	const struct cflow_tracker_params *p;
	uint64_t shortest = UINT64_MAX, lateness;
	struct cflow_tracker_params r;
	struct cflow_tracker *t;
	struct cf_params fp;
	struct cf_stats st;

	if (cflow_tracker_params_resolve(params, &r) != 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	t->params = r;
	p = &t->params;
	fp = filter_params(p);
	t->filter = cf_create(&fp);
	if (t->filter == NULL) {
		free(t);
		return NULL;
	}
	for (unsigned int c = 0; c < CFLOW_CLASS_MAX; c++)
		if (p->timeout_ns[c] < shortest)
			shortest = p->timeout_ns[c];
	t->tick_shift = tick_shift_for(p->value_bits, p->count_bits, p->sided,
		p->records, longest_ns(p));
	CFU_ASSERT(t->tick_shift >= MIN_TICK_SHIFT);
	t->count_shift = VALUE_FLAG_BITS + p->sided;
	t->side_mask = p->sided ? VALUE_HI_INSIDE : 0;
	t->records = p->records;
	t->rstamp_shift = t->count_shift + p->count_bits;
	t->rstamp_mask = p->records ? (1u << REC_STAMP_BITS) - 1 : 0;
	t->vtick = t->rstamp_shift + (p->records ? REC_STAMP_BITS : 0);
	/*
	 * The record stamp's unit: 256 of them span more than any record's
	 * age a packet can see (REC_SPAN_UNITS of the active timeout, two
	 * units of lateness, the longest gap between two packets of a live
	 * flow: its timeout or linger, the sweep's lateness up to 1/8 of it
	 * or 1 s, truncated ticks), with the REC_AHEAD window to spare.
	 */
	t->ushift = 30;
	t->due_units = UINT32_MAX;
	if (p->records && p->active_timeout_ns != CFLOW_ACTIVE_NONE) {
		uint64_t longest = longest_ns(p);
		uint64_t span = p->active_timeout_ns + longest + longest / 8 +
			2 * NS_PER_S;

		if (span < p->active_timeout_ns)
			span = UINT64_MAX;
		for (t->ushift = 20; t->ushift < 63 &&
				(span >> t->ushift) >= REC_SPAN_UNITS;
				t->ushift++)
			;
		t->due_units = (uint32_t)((p->active_timeout_ns +
			(UINT64_C(1) << t->ushift) - 1) >> t->ushift) + 1;
	}
	t->count_max = (UINT32_C(1) << p->count_bits) - 1;
	t->tick_mask = (UINT32_C(1) << (p->value_bits - t->vtick)) - 1;
	t->leap_ns = (uint64_t)(t->tick_mask / 4 + 1) << t->tick_shift;
	t->lag_ticks = (t->tick_mask / 4 + 1) / 2;
	t->lag_ns = (uint64_t)t->lag_ticks << t->tick_shift;
	t->pass_min_ns = UINT64_MAX;
	t->prev_min_ns = UINT64_MAX;
	for (unsigned int c = 0; c < CFLOW_CLASS_MAX; c++)
		t->timeout_ticks[c] =
			(uint32_t)(p->timeout_ns[c] >> t->tick_shift);
	t->linger_ticks = p->close_linger_ns == CFLOW_LINGER_NONE ? 0 :
		ticks_of(p->close_linger_ns, t->tick_shift);
	memcpy(t->normal_timeout_ticks, t->timeout_ticks,
		sizeof(t->timeout_ticks));
	t->normal_linger_ticks = t->linger_ticks;
	if (p->emergency_load_ppm != 0) {
		uint64_t e = p->emergency_timeout_ns >> t->tick_shift;

		t->emergency_ticks = e > t->tick_mask / 4 ? t->tick_mask / 4 :
			(uint32_t)e;
		t->emergency_enter_flows = (p->capacity *
			p->emergency_load_ppm + 999999) / 1000000;
		t->emergency_exit_flows = p->capacity * p->emergency_low_ppm /
			1000000;
	}
	t->tokens_max = p->new_flow_burst * NS_PER_S;
	t->tokens = t->tokens_max;
	/* token_take() divides by nothing: past this the bucket is full */
	t->tokens_fill_ns = p->new_flow_rate == 0 ? 0 :
		t->tokens_max / p->new_flow_rate + 1;
	/*
	 * A full pass per L = max(1 s, shortest timeout / 8), the promised
	 * lateness, less what truncated ticks add (3 ticks) and a tick of
	 * margin: the slowest pace that keeps the promise, since on a big
	 * table the sweep is a large part of the per-packet cost. Never
	 * below L / 2.
	 */
	lateness = shortest / 8 > NS_PER_S ? shortest / 8 : NS_PER_S;
	t->sweep_period_ns = lateness - (UINT64_C(4) << t->tick_shift);
	if (t->sweep_period_ns < lateness / 2)
		t->sweep_period_ns = lateness / 2;
	cf_stats(t->filter, &st);
	t->buckets = st.buckets;
	t->slots = (uint32_t)st.slots;
	table_refs(t);
	return t;
}

void
cflow_tracker_params_get(const struct cflow_tracker *t,
		struct cflow_tracker_params *p)
{
	*p = t->params;
}

void
cflow_tracker_free(struct cflow_tracker *t)
{
	if (t == NULL)
		return;
	cf_free(t->filter);
	free(t);
}

/* ----------------------------------------------------------- tracking */

/*
 * Slots an earlier packet of the chunk found, hence may have written or
 * emptied, hashed to 1024 bits: a later packet of the same flow must
 * look it up again, not trust what the bulk lookup returned. A collision
 * only costs a needless lookup: with 256 bits a chunk of 32 had about
 * two (2-3 cycles a packet at 1 K flows), with 1024 half of one, for
 * four more 32-byte stores to clear it.
 */
#define WRITTEN_WORDS 16

static inline bool
written_test(const uint64_t *w, uint32_t pos)
{
	return (w[(pos >> 6) % WRITTEN_WORDS] >> (pos & 63)) & 1;
}

static inline void
written_set(uint64_t *w, uint32_t pos)
{
	w[(pos >> 6) % WRITTEN_WORDS] |= UINT64_C(1) << (pos & 63);
}

/* Remove the entry at @p pos, which the tracker found there. */
static void
remove_at(struct cflow_tracker *t, uint32_t pos)
{
	int ret = cf_delete_at(t->filter, pos);

	CFU_ASSERT(ret == 0);
	(void)ret;
}

/*
 * Make room for a new flow in its two buckets: a closing entry if there
 * is one, else the open one idle longest. The add before it failed
 * without a walk when the table is at its load limit (lib/cuckoo makes
 * none there), so nothing else moved and cf_relocations() may be
 * unchanged: the evicted slot is marked written, so that a later packet
 * of the burst whose flow is evicted here looks it up again instead of
 * taking the new flow's entry, which likely goes into that slot, for its
 * own.
 */
static bool
evict_for(struct cflow_tracker *t, uint64_t hash, uint64_t *written)
{
	uint32_t pos[2 * 8], best = 0, best_age = 0;
	uint64_t values[2 * 8], best_v = 0;
	unsigned int n = cf_bucket_entries(t->filter, hash, pos, values);
	bool found = false, best_closing = false;

	for (unsigned int k = 0; k < n; k++) {
		uint64_t v = values[k];
		uint32_t age;

		age = value_age(t, v);
		if (value_closing(v) && !best_closing) {
			best = pos[k];
			best_v = v;
			best_closing = true;
			found = true;
		} else if (!best_closing && (!found || age > best_age)) {
			best = pos[k];
			best_v = v;
			best_age = age;
			found = true;
		}
	}
	if (!found)
		return false;
	/* A lingering closed flow ends (its linger cut short), an open one
	 * for lack of room. */
	if (t->records)
		rec_end_at(t, best, best_v, best_closing ? CFLOW_RECORD_END :
			CFLOW_RECORD_RESOURCES, best_closing ?
			&t->c.records_end : &t->c.records_resources);
	if (best_closing) {
		CFU_ASSERT(t->c.lingering > 0);
		t->c.lingering--;
	}
	remove_at(t, best);
	written_set(written, best);
	if (!best_closing) {
		CFU_ASSERT(t->c.active > 0);
		t->c.flows_evicted++;
		t->c.active--;
	}
	return true;
}

/* Insert a new open flow (@p side: its value_side()) for packet @p pkt
 * (of @p bytes, the @p index th of the call); false if the table is
 * full and stays so. With records, its record starts with the packet,
 * and the caller learns of it (CFLOW_RECORD_NEW) after any record of the
 * flow it evicted. */
static bool
insert_flow(struct cflow_tracker *t, uint64_t hash, unsigned int cls,
		uint32_t side, uint64_t *written, const struct cflow_packet *pkt,
		uint32_t bytes, unsigned int index)
{
	uint32_t v = value_make(t, t->now_tick, cls, false,
		t->count_max != 0, side, t->records ? rec_stamp_now(t) : 0);
	/* with records, the flow's record: this packet */
	uint64_t aux = t->records ? rec_word(1, bytes, pkt->tcp_flags,
		rec_sub_now(t)) : 0;
	int ret = cf_add_with_hash_aux(t->filter, hash, v, aux, NULL);

	/* -ENOSPC comes at once from a table at its load limit: evicting
	 * in the flow's own buckets is then the only work. Below the limit
	 * the add walked first, as it should: the table has room. */
	if (ret == -ENOSPC && t->params.full_policy == CFLOW_FULL_EVICT &&
			evict_for(t, hash, written))
		ret = cf_add_with_hash_aux(t->filter, hash, v, aux, NULL);
	if (ret == 0 && t->records) {
		struct cflow_record r = {
			.name = cf_name_of_hash(t->filter, hash),
			.last_ns = t->judge_ns,
			.bytes = bytes,
			.packets = 1,
			.reason = CFLOW_RECORD_NEW,
			.tcp_flags = pkt->tcp_flags,
			.index = (uint16_t)index,
			.pkt = pkt,
		};

		t->params.record_fn(&r, t->params.record_arg);
	}
	return ret == 0;
}

/* Admission control: a token for a new flow, the bucket refilled by the
 * clock at new_flow_rate a second. */
static bool
token_take(struct cflow_tracker *t)
{
	uint64_t dt = t->now_ns - t->tokens_ns;

	if (t->params.new_flow_rate == 0)
		return true;
	t->tokens_ns = t->now_ns;
	/* No division a packet (as rte_meter): below tokens_fill_ns,
	 * dt * rate <= tokens_max <= 10^18 and the sum cannot wrap. */
	if (dt >= t->tokens_fill_ns) {
		t->tokens = t->tokens_max;
	} else {
		t->tokens += dt * t->params.new_flow_rate;
		if (t->tokens > t->tokens_max)
			t->tokens = t->tokens_max;
	}
	if (t->tokens < NS_PER_S)
		return false;
	t->tokens -= NS_PER_S;
	return true;
}

/* Emergency mode: shorter timeouts while the table is nearly full. */
static void
emergency_check(struct cflow_tracker *t)
{
	bool on = t->c.emergency != 0;

	if (t->params.emergency_load_ppm == 0)
		return;
	/* On at the high mark, off below the low one. */
	if (on ? t->c.active >= t->emergency_exit_flows :
			t->c.active < t->emergency_enter_flows)
		return;
	if (!on) {
		for (unsigned int c = 0; c < CFLOW_CLASS_MAX; c++)
			if (t->timeout_ticks[c] > t->emergency_ticks)
				t->timeout_ticks[c] = t->emergency_ticks;
		if (t->linger_ticks > t->emergency_ticks)
			t->linger_ticks = t->emergency_ticks;
		t->c.emergency_enter++;
		t->c.emergency = 1;
	} else {
		memcpy(t->timeout_ticks, t->normal_timeout_ticks,
			sizeof(t->timeout_ticks));
		t->linger_ticks = t->normal_linger_ticks;
		t->c.emergency_exit++;
		t->c.emergency = 0;
	}
}

/*
 * The common packet, cheaply: its flow found open, not idle past its
 * timeout, not a TCP FIN or RST, from its own side. cflow_state_step()
 * then takes its OPEN branch to CFLOW_SEEN and stores the flow OPEN,
 * which cflow_state_admit() and the token bucket leave as it is (they
 * act on insertions and orphans only): what track_one() would do, done
 * here without its general step. False for any other packet, with
 * nothing done.
 */
static inline __attribute__((always_inline)) bool
track_seen(struct cflow_tracker *t, const struct cflow_packet *pkt,
		const struct cflow_input *in, uint32_t pos, uint64_t v,
		uint8_t *count)
{
	uint8_t in_flags = in->flags;
	uint32_t n, rstamp;
	uint64_t nv;

	/* FIN or RST by the flags alone, which the parser sets for TCP
	 * only: a class test first was a branch mispredicted about every
	 * other packet with TCP and UDP mixed (11% of track_chunk's
	 * samples at 1 K flows). Another protocol's packet that carries
	 * such flags anyway takes track_one(), which ignores them. */
	if (value_closing(v) || idle_expired(t, v) ||
			(pkt->tcp_flags & (CFLOW_TCP_FIN | CFLOW_TCP_RST)))
		return false;
	if (t->params.sided && !cflow_side_ok(value_side(t, v) != 0,
			pkt->reversed, in_flags))
		return false;
	n = value_count(t, v);
	n += n < t->count_max;
	rstamp = value_rstamp(t, v);
	/* the flow's record (its aux word), as track_one() keeps it */
	if (t->records)
		rstamp = rec_packet(t, pos, v, pkt->tcp_flags,
			pkt->ip_len != 0 ? pkt->ip_len : in->wire_len);
	nv = value_make(t, value_stamp(t, v), value_class(v), false, n,
		value_side(t, v), rstamp);
	/* A busy flow's packets within one tick change nothing. */
	if (nv != v)
		value_store(t, pos, nv);
	*count = (uint8_t)n;
	t->c.flows_seen++;
	return true;
}

/*
 * What track_seen() reads of the tracker, in registers for a chunk, for
 * a tracker without flow_time or records (sided or not): its packets
 * are judged at the clock's own tick, and a seen flow's value is only
 * its tick, count, class and side. The tracker's fields were loaded
 * again after every store of a verdict or count (a char or enum store
 * may alias them). now_tick is refreshed whenever the clock moves.
 */
struct seen_ctx {
	bool fast;
	uint8_t outside;	/* CFLOW_IN_OUTSIDE if sided, else 0 */
	uint32_t side_mask;	/* VALUE_HI_INSIDE if sided, else 0 */
	uint32_t now_tick;
	uint32_t tick_mask;
	unsigned int vtick;
	unsigned int count_shift;
	uint32_t count_max;
	uint32_t expire_after[CFLOW_CLASS_MAX]; /* timeout_ticks + 1 */
};

static inline void
seen_ctx_init(const struct cflow_tracker *t, struct seen_ctx *s)
{
	s->fast = !t->params.flow_time && !t->records;
	s->outside = t->params.sided ? CFLOW_IN_OUTSIDE : 0;
	s->side_mask = t->side_mask;
	s->now_tick = t->now_tick;
	s->tick_mask = t->tick_mask;
	s->vtick = t->vtick;
	s->count_shift = t->count_shift;
	s->count_max = t->count_max;
	for (unsigned int c = 0; c < CFLOW_CLASS_MAX; c++)
		s->expire_after[c] = t->timeout_ticks[c] + 1;
}

/*
 * track_seen() for a tracker without flow_time or records (seen_ctx):
 * the same test, the new value into @p nv, the packet's ordinal into
 * @p count; false, with nothing done, for any packet track_seen() would
 * refuse. Stamped at the clock's tick: with no flow_time, value_stamp()
 * is now_tick (an age of 0 is the tick itself), and value_make() of the
 * value's class and side, the count and no record stamp is what is
 * built here. Sided (a firewall), a packet from the outside must travel
 * toward the flow's inside endpoint (cflow_side_ok(): refused when the
 * flow's hi-inside bit equals the packet's reversed flag); refused, it
 * takes track_one(), which drops it as the wrong direction. @p sided is
 * a constant at each call: the function is compiled once with the side
 * test and once without.
 */
static inline __attribute__((always_inline)) bool
seen_fast(const struct seen_ctx *s, const bool sided,
		const struct cflow_packet *pkt, uint8_t in_flags, uint64_t v,
		uint64_t *nv, uint8_t *count)
{
	uint32_t tick = (uint32_t)(v >> s->vtick) & s->tick_mask;
	uint32_t age = (s->now_tick - tick) & s->tick_mask;
	uint32_t side = sided ? (uint32_t)v & s->side_mask : 0;
	unsigned int cls = value_class(v);
	uint32_t n;

	if (value_closing(v) | (age > s->expire_after[cls]) |
			((pkt->tcp_flags & (CFLOW_TCP_FIN | CFLOW_TCP_RST))
			 != 0) |
			(sided && (((in_flags & s->outside) != 0) &
			 ((side != 0) == pkt->reversed))))
		return false;
	n = (uint32_t)(v >> s->count_shift) & s->count_max;
	n += n < s->count_max;
	*nv = (uint64_t)(s->now_tick << s->vtick | n << s->count_shift |
		side | cls << VALUE_CLASS_SHIFT);
	*count = (uint8_t)n;
	return true;
}

/*
 * One parsed packet whose flow lookup gave found/pos/v (the value at pos):
 * the state machine's step (cflow_state.h), done on the filter.
 * *changed is set when it added or removed an entry; an evicted entry's
 * slot is added to @p written. *count receives the packet's ordinal in
 * its flow (0: untracked).
 */
static __attribute__((noinline)) enum cflow_verdict
track_one(struct cflow_tracker *t, const struct cflow_packet *pkt,
		const struct cflow_input *in, unsigned int index,
		uint64_t hash, bool found, uint32_t pos, uint64_t v,
		bool *changed, uint64_t *written, uint8_t *count)
{
	uint8_t in_flags = in->flags;
	uint32_t bytes = pkt->ip_len != 0 ? pkt->ip_len : in->wire_len;
	bool closing = found && value_closing(v), inserted = false;
	bool stale = closing ? linger_done(t, v) :
		found && idle_expired(t, v);
	struct cflow_step s;
	enum cflow_verdict verdict;

	if (t->params.sided && found && !stale && !cflow_side_ok(
			value_side(t, v) != 0, pkt->reversed, in_flags)) {
		/* From the outside, claiming the inside endpoint's source. */
		s = cflow_state_wrong_dir();
	} else {
		s = cflow_state_step(!found ? CFLOW_STATE_NONE :
				closing ? CFLOW_STATE_CLOSING :
				CFLOW_STATE_OPEN, stale, pkt->proto_class,
			pkt->tcp_flags, t->linger_ticks != 0);
		cflow_state_admit(&s, in_flags, t->params.tcp_strict,
			pkt->proto_class, pkt->tcp_flags);
		if (s.insert && !token_take(t))
			cflow_state_limit(&s);
	}
	CFU_ASSERT(pkt->proto_class < CFLOW_CLASS_MAX);
	CFU_ASSERT(!found || value_class(v) < CFLOW_CLASS_MAX);
	if (s.remove) {
		/* The flow's end: idle (found so by this packet), a closed
		 * flow's linger over or its tuple reopened by a SYN, or, with
		 * no linger, the FIN or RST in hand, the last of its record. */
		if (t->records) {
			enum cflow_record_reason why = s.expired ?
				CFLOW_RECORD_IDLE : CFLOW_RECORD_END;
			uint64_t rv = v;

			if (!stale && s.verdict == CFLOW_CLOSING)
				rv = value_make(t, value_stamp(t, v),
					value_class(v), true, 0, 0, rec_packet(t,
						pos, v, pkt->tcp_flags, bytes));
			rec_end_at(t, pos, rv, why, rec_count(t, why));
		}
		if (closing) {
			CFU_ASSERT(t->c.lingering > 0);
			t->c.lingering--;
		}
		remove_at(t, pos);
		*changed = true;
	}
	*count = 0;
	if (s.next == CFLOW_STATE_CLOSING && !closing)
		t->c.lingering++;
	if (s.next != CFLOW_STATE_NONE) {
		uint32_t n = value_count(t, v);
		uint32_t rstamp = value_rstamp(t, v);
		uint64_t nv;

		n += n < t->count_max;
		if (t->records)
			rstamp = rec_packet(t, pos, v, pkt->tcp_flags, bytes);
		nv = value_make(t, value_stamp(t, v), value_class(v),
			s.next == CFLOW_STATE_CLOSING, n, value_side(t, v),
			rstamp);
		CFU_ASSERT(found && !s.remove);
		/* A busy flow's packets within one tick change nothing: no
		 * call, and the line stays clean. */
		if (nv != v)
			value_store(t, pos, nv);
		*count = (uint8_t)n;
	} else if (s.insert) {
		*changed = true;
		inserted = insert_flow(t, hash, pkt->proto_class,
			t->params.sided && cflow_side_hi_inside(pkt->reversed,
				in_flags) ? VALUE_HI_INSIDE : 0, written, pkt,
			bytes, t->chunk_base + index);
		*count = inserted && t->count_max != 0;
	}
	CFU_ASSERT(!s.expired || t->c.active > 0);
	CFU_ASSERT(s.verdict != CFLOW_CLOSING || t->c.active > 0);
	verdict = cflow_count_step(&t->c, &s, inserted);
	return verdict;
}

/*
 * A packet that follows a flow without being one of its packets (an ICMP
 * error, a later fragment: struct cflow_packet's kind), whose flow lookup
 * gave found/v: related, or not, by the flow's state and side; the flow
 * is left as it was.
 */
static enum cflow_verdict
track_follow(struct cflow_tracker *t, const struct cflow_packet *pkt,
		uint8_t in_flags, bool found, uint64_t v)
{
	bool live = found && !(value_closing(v) ? linger_done(t, v) :
		idle_expired(t, v));
	struct cflow_step s;

	if (live && t->params.sided)
		live = cflow_side_ok(value_side(t, v) != 0, pkt->reversed,
			in_flags);
	s = cflow_state_follow(pkt->kind, live);
	return cflow_count_step(&t->c, &s, false);
}

static uint64_t
rss_hash(uint32_t rss, uint64_t seed)
{
	return cfu_mix64(((uint64_t)rss << 32 | rss) ^ seed);
}

/* The counters' identities (struct cflow_counters), checked in builds
 * with assertions: every flow's fate, at any time; every packet's, once
 * a chunk is done (a chunk counts its packets first, and a leap of the
 * clock sweeps in the middle of one). */
static inline bool
flows_consistent(const struct cflow_counters *c)
{
	return c->flows_new + c->flows_restored == cflow_flows_accounted(c);
}

static inline bool
counters_consistent(const struct cflow_counters *c)
{
	return flows_consistent(c) &&
		c->packets == cflow_packets_classified(c);
}

/* With records: every flow's end is one record (struct cflow_counters),
 * until cflow_tracker_end_records(). */
static inline bool
records_consistent(const struct cflow_tracker *t)
{
	const struct cflow_counters *c = &t->c;

	return !t->records || c->records_shutdown != 0 ||
		c->flows_new + c->flows_restored + c->lingering_restored ==
		c->active + c->lingering + c->records_idle + c->records_end +
		c->records_forced + c->records_resources;
}

/* The table's hash of a parsed packet's flow: the NIC's in RSS mode
 * when it has one, else the caller's XXH3 of the key or our own. */
static inline uint64_t
input_hash(const struct cflow_tracker *t, const struct cflow_input *in,
		const struct cflow_packet *pkt)
{
	if (t->params.hash == CFLOW_HASH_RSS && in->has_rss)
		return rss_hash(in->rss, t->params.seed);
	if (t->params.hash == CFLOW_HASH_XXH3 && in->has_hash)
		return in->hash;
	return cflow_key_hash(&pkt->key, t->params.seed);
}

/* Up to CF_BULK_MAX parsed packets: one bulk lookup. */
static void
track_chunk(struct cflow_tracker *t, const struct cflow_input *in,
		const struct cflow_packet *pkts,
		const enum cflow_parse_status *status, unsigned int n,
		enum cflow_verdict *verdicts, uint8_t *counts)
{
	uint64_t hashes[CF_BULK_MAX], values[CF_BULK_MAX], hits = 0, latest = 0;
	uint64_t clock_at[CF_BULK_MAX];
	uint64_t written[WRITTEN_WORDS] = { 0 };
	uint32_t pos[CF_BULK_MAX];
	uint8_t index[CF_BULK_MAX];
	uint64_t relocations = cf_relocations(t->filter), seen = 0;
	struct seen_ctx sc;
	unsigned int m = 0;
	bool moved = false, changed = false;

	CFU_ASSERT(n <= CF_BULK_MAX);
	for (unsigned int k = 0; k < n; k++) {
		cflow_count_packet(&t->c, &in[k]);
		/* Every packet's time moves the clock, in order: parsed or
		 * not (non-IP, malformed, fragments). */
		if (in[k].time_ns > latest)
			latest = in[k].time_ns;
		if (status[k] != CFLOW_PARSE_OK ||
				pkts[k].kind == CFLOW_KIND_ICMP_UNRELATED) {
			struct cflow_step s = cflow_state_follow(
				CFLOW_KIND_ICMP_UNRELATED, false);
			enum cflow_verdict v = status[k] != CFLOW_PARSE_OK ?
				cflow_count_untracked(&t->c, status[k]) :
				cflow_count_step(&t->c, &s, false);

			if (verdicts != NULL)
				verdicts[k] = v;
			if (counts != NULL)
				counts[k] = 0;
			continue;
		}
		if (t->params.hash == CFLOW_HASH_RSS && !in[k].has_rss)
			t->c.hash_fallback++;
		hashes[m] = input_hash(t, &in[k], &pkts[k]);
		clock_at[m] = latest;
		index[m++] = (uint8_t)k;
	}
	if (m != 0)
		cf_lookup_bulk_values(t->filter, hashes, m, &hits, pos, values);
	seen_ctx_init(t, &sc);
	for (unsigned int j = 0; j < m; j++) {
		unsigned int k = index[j];
		bool found = (hits >> j) & 1, changed_now = false;
		enum cflow_verdict v;
		uint64_t nv;
		uint8_t count;

		/* The latest time of the packets up to this one, unparsed
		 * ones included; a leap of the clock swept the table. */
		if (clock_at[j] > t->now_ns) {
			if (clock_advance(t, clock_at[j]))
				moved = true;
			sc.now_tick = t->now_tick;
		}
		/* Look the flow up again if entries moved (kicks, stash), if
		 * an earlier packet wrote or emptied its slot, or if it was
		 * missing and entries were added since (perhaps its own). */
		if (moved || (found ? written_test(written, pos[j]) : changed))
			found = cf_lookup_with_hash(t->filter, hashes[j],
					&pos[j]) &&
				cf_value_get(t->filter, pos[j], &values[j]) == 0;
		if (found)
			written_set(written, pos[j]);
		/* seen_fast() compiled twice, with and without sides:
		 * the side test cost a plain tracker 2-3% */
		if (sc.fast && found && pkts[k].kind == CFLOW_KIND_FLOW &&
				(sc.outside != 0 ?
				 seen_fast(&sc, true, &pkts[k], in[k].flags,
					values[j], &nv, &count) :
				 seen_fast(&sc, false, &pkts[k], 0,
					values[j], &nv, &count))) {
			/* A busy flow's packets within one tick change
			 * nothing. */
			if (nv != values[j])
				value_store(t, pos[j], nv);
			seen++;
			if (verdicts != NULL)
				verdicts[k] = CFLOW_SEEN;
			if (counts != NULL)
				counts[k] = count;
			continue;
		}
		if (t->params.flow_time)
			judge_at(t, in[k].time_ns);
		count = 0;
		if (pkts[k].kind != CFLOW_KIND_FLOW)
			v = track_follow(t, &pkts[k], in[k].flags, found,
				values[j]);
		else if (found && track_seen(t, &pkts[k], &in[k], pos[j],
				values[j], &count))
			v = CFLOW_SEEN;
		else
			v = track_one(t, &pkts[k], &in[k], k, hashes[j],
				found, pos[j], values[j], &changed_now,
				written, &count);
		judge_done(t);
		CFU_ASSERT(v < CFLOW_VERDICT_MAX);
		if (changed_now) {
			changed = true;
			moved |= cf_relocations(t->filter) != relocations;
		}
		if (verdicts != NULL)
			verdicts[k] = v;
		if (counts != NULL)
			counts[k] = count;
	}
	t->c.flows_seen += seen;
	clock_advance(t, latest);
	emergency_check(t);
	CFU_ASSERT(t->now_tick == t->clock_tick);
	CFU_ASSERT(counters_consistent(&t->c));
	CFU_ASSERT(records_consistent(t));
}

void
cflow_track_parsed(struct cflow_tracker *t, const struct cflow_input *in,
		const struct cflow_packet *pkts,
		const enum cflow_parse_status *status, unsigned int n,
		enum cflow_verdict *verdicts, uint8_t *counts)
{
	for (unsigned int k = 0; k < n; k += CF_BULK_MAX) {
		t->chunk_base = k;
		track_chunk(t, in + k, pkts + k, status + k,
			n - k < CF_BULK_MAX ? n - k : CF_BULK_MAX,
			verdicts != NULL ? verdicts + k : NULL,
			counts != NULL ? counts + k : NULL);
	}
	t->chunk_base = 0;
}

void
cflow_track_burst(struct cflow_tracker *t, const struct cflow_input *in,
		unsigned int n, enum cflow_verdict *verdicts)
{
	struct cflow_packet pkts[CF_BULK_MAX];
	enum cflow_parse_status status[CF_BULK_MAX];

	for (unsigned int k = 0; k < n; k += CF_BULK_MAX) {
		unsigned int c = n - k < CF_BULK_MAX ? n - k : CF_BULK_MAX;

		for (unsigned int j = 0; j < c; j++)
			status[j] = cflow_parse(in[k + j].data, in[k + j].len,
					&t->params.parse, &pkts[j]);
		t->chunk_base = k;
		track_chunk(t, in + k, pkts, status, c,
			verdicts != NULL ? verdicts + k : NULL, NULL);
	}
	t->chunk_base = 0;
}

/* -------------------------------------------------------------- sweep */

struct sweep_ctx {
	struct cflow_tracker *t;
	uint64_t expired;
};

/* One batch of slots: of the items due (older than the shortest
 * timeout), select the idle flows and the lingered-out closed ones. */
static uint64_t
sweep_select(uint32_t first, const uint64_t *values, uint64_t used,
		unsigned int n, void *arg)
{
	struct sweep_ctx *ctx = arg;
	uint64_t expired = 0, done = 0;

	(void)n;
	for (uint64_t m = used; m != 0; m &= m - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(m);

		expired |= (uint64_t)idle_expired(ctx->t, values[k]) << k;
		done |= (uint64_t)linger_done(ctx->t, values[k]) << k;
	}
	CFU_ASSERT((done & expired) == 0);
	ctx->expired += (uint64_t)__builtin_popcountll(expired);
	CFU_ASSERT(ctx->t->c.lingering >= (uint64_t)__builtin_popcountll(done));
	ctx->t->c.lingering -= (uint64_t)__builtin_popcountll(done);
	if (ctx->t->records)
		for (uint64_t m = expired | done; m != 0; m &= m - 1) {
			unsigned int k = (unsigned int)__builtin_ctzll(m);
			bool idle = (expired >> k) & 1;

			rec_end_at(ctx->t, first + k, values[k], idle ?
				CFLOW_RECORD_IDLE : CFLOW_RECORD_END, idle ?
				&ctx->t->c.records_idle :
				&ctx->t->c.records_end);
		}
	return expired | done;
}

/*
 * What the sweep can skip: an item younger than every timeout and the
 * linger is neither idle nor lingered out, and one stamped after the
 * tick judged at (judging behind the clock) has age 0 (value_age()).
 * cf_scan_due() hands sweep_select() only the others.
 */
static void
sweep_due(const struct cflow_tracker *t, struct cf_scan_due *d)
{
	/* Without a linger no flow is closing (emergency mode may cut the
	 * linger to 0, but then the timeouts too). */
	uint32_t min = t->linger_ticks != 0 ? t->linger_ticks + 1 :
		t->tick_mask;

	for (unsigned int c = 0; c < CFLOW_CLASS_MAX; c++)
		if (t->timeout_ticks[c] + 1 < min)
			min = t->timeout_ticks[c] + 1;
	memset(d, 0, sizeof(*d));
	d->shift = t->vtick;
	d->bits = (unsigned int)__builtin_popcount(t->tick_mask);
	d->now = t->now_tick;
	d->min_age = min;
	d->max_age = t->now_tick != t->clock_tick ?
		t->tick_mask - t->lag_ticks : t->tick_mask;
}

/* The sweep's coverage (covered_ns) after it judged @p nb buckets from
 * @p from as of judge_ns: a whole table at once covers it as of then; a
 * pass that completes covers it as of the earliest time it or the pass
 * before judged at, as a kick can move an entry into a bucket the pass
 * has visited (it is visited at most one pass late: design.md). */
static void
sweep_cover(struct cflow_tracker *t, uint64_t from, uint64_t nb)
{
	if (nb >= t->buckets) {
		t->covered_ns = t->judge_ns > t->covered_ns ? t->judge_ns :
			t->covered_ns;
		t->prev_min_ns = t->judge_ns;
		t->pass_min_ns = t->judge_ns;
		return;
	}
	if (t->judge_ns < t->pass_min_ns)
		t->pass_min_ns = t->judge_ns;
	if ((from < t->buckets ? from : 0) + nb < t->buckets)
		return;
	if (t->prev_min_ns != UINT64_MAX) {
		uint64_t m = t->prev_min_ns < t->pass_min_ns ?
			t->prev_min_ns : t->pass_min_ns;

		if (m > t->covered_ns)
			t->covered_ns = m;
	}
	t->prev_min_ns = t->pass_min_ns;
	t->pass_min_ns = t->judge_ns;
}

static uint64_t
sweep_buckets(struct cflow_tracker *t, uint64_t nb)
{
	struct sweep_ctx ctx = { t, 0 };
	struct cf_scan_due due;
	uint64_t from = t->cursor;
	int64_t r;

	sweep_due(t, &due);
	r = cf_scan_due(t->filter, &t->cursor, nb, &due, sweep_select, &ctx);
	/* The tracker's parameters keep the test in range. */
	CFU_ASSERT(r >= 0);
	if (r < 0)
		cf_scan_batch(t->filter, &t->cursor, nb, sweep_select, &ctx);
	sweep_cover(t, from, nb);
	CFU_ASSERT(ctx.expired <= t->c.active);
	t->c.flows_expired += ctx.expired;
	t->c.active -= ctx.expired;
	CFU_ASSERT(flows_consistent(&t->c));
	CFU_ASSERT(records_consistent(t));
	emergency_check(t);
	return ctx.expired;
}

uint64_t
cflow_pace_take(struct cflow_pace *p, uint64_t now_ns, uint64_t total,
		uint64_t period_ns, uint64_t max)
{
	uint64_t nb;

	if (!p->started) {
		p->started = true;
		p->last_ns = now_ns;
		return 0;
	}
	p->credit += (double)total * (double)(now_ns - p->last_ns) /
		(double)period_ns;
	p->last_ns = now_ns;
	if (p->credit > (double)total)
		p->credit = (double)total;
	nb = (uint64_t)p->credit;
	if (nb > max)
		nb = max;
	p->credit -= (double)nb;
	return nb;
}

uint64_t
cflow_sweep_at(struct cflow_tracker *t, uint64_t now_ns, uint64_t as_of_ns)
{
	uint64_t nb, expired;

	clock_advance(t, now_ns);
	nb = cflow_pace_take(&t->sweep_pace, t->now_ns, t->buckets,
			t->sweep_period_ns, t->params.sweep_max_buckets);
	if (nb == 0)
		return 0;
	/* An as_of_ns from now_ns up is the clock: cflow_sweep() as ever,
	 * even when now_ns is behind the clock. */
	if (as_of_ns < now_ns)
		judge_at(t, as_of_ns);
	expired = sweep_buckets(t, nb);
	judge_done(t);
	CFU_ASSERT(counters_consistent(&t->c));
	return expired;
}

uint64_t
cflow_sweep(struct cflow_tracker *t, uint64_t now_ns)
{
	return cflow_sweep_at(t, now_ns, now_ns);
}

uint64_t
cflow_sweep_all(struct cflow_tracker *t, uint64_t now_ns)
{
	clock_advance(t, now_ns);
	return sweep_buckets(t, t->buckets);
}

uint64_t
cflow_tracker_lag_ns(const struct cflow_tracker *t)
{
	return t->lag_ns;
}

uint64_t
cflow_malformed_total(const struct cflow_counters *c)
{
	uint64_t n = 0;

	for (int st = CFLOW_PARSE_MALFORMED_FIRST;
			st <= CFLOW_PARSE_MALFORMED_LAST; st++)
		n += c->malformed[st];
	return n;
}

uint64_t
cflow_packets_classified(const struct cflow_counters *c)
{
	return c->non_ip + cflow_malformed_total(c) + c->fragments +
		c->orphan_close + c->insert_failed + c->unsolicited +
		c->not_syn + c->new_flow_limited + c->wrong_direction +
		c->flows_new + c->flows_seen + c->flows_closed + c->related +
		c->unrelated + c->fragments_seen;
}

uint64_t
cflow_flows_accounted(const struct cflow_counters *c)
{
	return c->active + c->flows_closed + c->flows_expired +
		c->flows_evicted + c->flows_flushed;
}

void
cflow_counters_get(const struct cflow_tracker *t, struct cflow_counters *c)
{
	*c = t->c;
}

/* ------------------------------------------------------ warm restart */

#define STATE_MAGIC "CFLOWTRK"
/* 2: flags (sided); version 1's reserved field was 0. */
#define STATE_VERSION 2
#define STATE_BYTE_ORDER UINT32_C(0x01020304)
#define STATE_FLAG_SIDED 1u
#define STATE_FLAG_RECORDS 2u   /* the values hold a record stamp */

/* The header of cflow_tracker_save() output, in the host's byte order;
 * the table follows. */
struct state_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t hash;          /* enum cflow_hash_mode */
	uint32_t tick_shift;
	uint32_t count_bits;
	uint32_t flags;         /* STATE_FLAG_* */
	uint64_t now_ns;        /* the clock */
	uint64_t table_len;     /* bytes of cf_save_mem() output after it */
	uint64_t checksum;      /* XXH64 of the bytes before it, seed 0 */
};

size_t
cflow_tracker_save_size(const struct cflow_tracker *t)
{
	return sizeof(struct state_header) + cf_save_size(t->filter);
}

/* The table's saved size for @p params (0: refused), its filter's
 * parameters into @p fp. */
static uint64_t
table_save_size(const struct cflow_tracker_params *params,
		struct cf_params *fp)
{
	struct cflow_tracker_params r;

	if (cflow_tracker_params_resolve(params, &r) != 0)
		return 0;
	*fp = filter_params(&r);
	return cf_params_save_size(fp);
}

uint64_t
cflow_tracker_save_bound(const struct cflow_tracker_params *params)
{
	struct cf_params fp;
	uint64_t n = table_save_size(params, &fp);

	return n == 0 ? 0 : sizeof(struct state_header) + n;
}

uint64_t
cflow_tracker_flows_bound(const struct cflow_tracker_params *params)
{
	struct cf_params fp;
	uint64_t n = table_save_size(params, &fp);

	/* a slot saves its fingerprint and value: at least their bits */
	return n == 0 ? 0 : n * 8 / (fp.fp_bits + fp.value_bits) +
		CF_STASH_SIZE;
}

int64_t
cflow_tracker_save(const struct cflow_tracker *t, void *buf, size_t len)
{
	struct state_header h;
	int64_t n;

	if (len < cflow_tracker_save_size(t)) {
		errno = ENOSPC;
		return -ENOSPC;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, STATE_MAGIC, sizeof(h.magic));
	h.version = STATE_VERSION;
	h.byte_order = STATE_BYTE_ORDER;
	h.hash = (uint32_t)t->params.hash;
	h.tick_shift = t->tick_shift;
	h.count_bits = t->params.count_bits;
	h.flags = (t->params.sided ? STATE_FLAG_SIDED : 0) |
		(t->params.records ? STATE_FLAG_RECORDS : 0);
	h.now_ns = t->now_ns;
	n = cf_save_mem(t->filter, (char *)buf + sizeof(h),
		len - sizeof(h));
	if (n < 0)
		return n;
	h.table_len = (uint64_t)n;
	h.checksum = XXH64(&h, offsetof(struct state_header, checksum), 0);
	memcpy(buf, &h, sizeof(h));
	return (int64_t)(sizeof(h) + (size_t)n);
}

/* Open flows of a table ([0]) and lingering closed ones ([1]), counted
 * by their values. */
static uint64_t
count_open(uint32_t first, const uint64_t *values, uint64_t used,
		unsigned int n, void *arg)
{
	uint64_t *open = arg;

	(void)first;
	for (unsigned int k = 0; k < n; k++)
		if (used >> k & 1)
			open[value_closing(values[k])]++;
	return 0;
}

/* The first table parameter of @p a that differs from @p b's, or NULL. */
static const char *
table_params_differ(const struct cf_params *a, const struct cf_params *b)
{
	if (a->capacity != b->capacity)
		return "capacity (--flows)";
	if (a->exact_size != b->exact_size)
		return "exact_size (--exact-size)";
	if (a->fp_bits != b->fp_bits)
		return "fingerprint bits (--fp-bits)";
	if (a->value_bits != b->value_bits)
		return "value bits (--age-bits)";
	if (a->table != b->table)
		return "table layout (--table-layout)";
	if (a->bucket_slots != b->bucket_slots)
		return "bucket slots";
	if (a->seed != b->seed)
		return "seed (--hash-seed)";
	return NULL;
}

int
cflow_tracker_restore(struct cflow_tracker *t, const void *buf, size_t len,
		uint64_t *saved_ns, char *err, size_t errlen)
{
	struct cf_params want, got;
	struct state_header h;
	struct cf_filter *f;
	const char *differs;
	uint64_t open[2] = { 0, 0 }, cursor = 0;
	struct cf_stats st;

	if (t->c.packets != 0 || t->c.flows_restored != 0)
		return cfu_fail(EBUSY, err, errlen, "the tracker has tracked "
			"packets already");
	if (len < sizeof(h))
		return cfu_fail(ENODATA, err, errlen, "%zu bytes: shorter than "
			"a header", len);
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, STATE_MAGIC, sizeof(h.magic)) != 0)
		return cfu_fail(EBADMSG, err, errlen, "not a saved flow table "
			"(magic)");
	if (h.byte_order != STATE_BYTE_ORDER)
		return cfu_fail(ENOTSUP, err, errlen, "written on a host of "
			"the other byte order");
	if (h.checksum != XXH64(&h, offsetof(struct state_header, checksum),
			0))
		return cfu_fail(EBADMSG, err, errlen, "header checksum");
	if (h.version != STATE_VERSION)
		return cfu_fail(EPROTONOSUPPORT, err, errlen, "format version "
			"%u (this build reads %u)", h.version, STATE_VERSION);
	if (h.table_len > len - sizeof(h))
		return cfu_fail(ENODATA, err, errlen, "table of %llu bytes, "
			"%zu present", (unsigned long long)h.table_len,
			len - sizeof(h));
	if (h.table_len < len - sizeof(h))
		return cfu_fail(EBADMSG, err, errlen, "%zu bytes after the "
			"table", len - sizeof(h) - (size_t)h.table_len);
	if (h.hash != (uint32_t)t->params.hash)
		return cfu_fail(ESTALE, err, errlen, "saved with another hash "
			"mode (--hash)");
	if (h.count_bits != t->params.count_bits)
		return cfu_fail(ESTALE, err, errlen, "saved with another packet "
			"count (%u bits, now %u: --mirror-first)", h.count_bits,
			t->params.count_bits);
	if (h.flags & ~(STATE_FLAG_SIDED | STATE_FLAG_RECORDS))
		return cfu_fail(EBADMSG, err, errlen, "unknown flags %#x",
			h.flags);
	if (!(h.flags & STATE_FLAG_RECORDS) != !t->params.records)
		return cfu_fail(ESTALE, err, errlen, "saved %s flow records "
			"(--records), this tracker %s them", (h.flags &
			STATE_FLAG_RECORDS) ? "with" : "without",
			t->params.records ? "keeps" : "does not keep");
	if (!(h.flags & STATE_FLAG_SIDED) != !t->params.sided)
		return cfu_fail(ESTALE, err, errlen, "saved %s the flows' "
			"inside endpoints (firewall roles: --inside, "
			"--outside), this tracker %s them", (h.flags &
			STATE_FLAG_SIDED) ? "with" : "without",
			t->params.sided ? "keeps" : "does not keep");
	if (h.tick_shift != t->tick_shift)
		return cfu_fail(ESTALE, err, errlen, "saved with another tick "
			"(2^%u ns, now 2^%u ns: the longest timeout or linger "
			"picks it)", h.tick_shift, t->tick_shift);
	f = cf_load_mem((const char *)buf + sizeof(h), (size_t)h.table_len,
		t->params.allocator, t->params.socket_id);
	if (f == NULL) {
		int e = errno;

		return cfu_fail(e, err, errlen, "flow table: %s", strerror(e));
	}
	/* The aux words are not saved: the flows' records start anew. */
	if (t->params.records && cf_aux_attach(f) != 0) {
		int e = errno;

		cf_free(f);
		return cfu_fail(e, err, errlen, "flow records: %s",
			strerror(e));
	}
	cf_get_params(f, &got);
	cf_get_params(t->filter, &want);
	differs = table_params_differ(&got, &want);
	if (differs != NULL) {
		cf_free(f);
		return cfu_fail(ESTALE, err, errlen, "saved with another %s",
			differs);
	}
	cf_stats(f, &st);
	(void)cf_scan_batch(f, &cursor, st.buckets, count_open, open);
	cf_free(t->filter);
	t->filter = f;
	table_refs(t);
	t->cursor = 0;
	if (h.now_ns > t->now_ns)
		clock_set(t, h.now_ns);
	/* What the saved tracker's sweep covered is not saved: the clock's
	 * next move sweeps the table (clock_advance()). */
	t->covered_ns = t->now_ns > t->leap_ns ? t->now_ns - t->leap_ns : 0;
	t->pass_min_ns = UINT64_MAX;
	t->prev_min_ns = UINT64_MAX;
	t->c.active += open[0];
	t->c.flows_restored += open[0];
	t->c.lingering += open[1];
	t->c.lingering_restored += open[1];
	CFU_ASSERT(flows_consistent(&t->c));
	if (saved_ns != NULL)
		*saved_ns = h.now_ns;
	return 0;
}

/* ----------------------------------------------------- lookup, flush */

int
cflow_tracker_lookup(const struct cflow_tracker *t,
		const struct cflow_key *key, struct cflow_flow_info *info)
{
	uint64_t v = 0;
	uint32_t pos;

	memset(info, 0, sizeof(*info));
	if (t->params.hash == CFLOW_HASH_RSS) {
		errno = ENOTSUP;
		return -ENOTSUP;
	}
	if (!cf_lookup_with_hash(t->filter, cflow_hash_key(key,
			t->params.seed), &pos) ||
			cf_value_get(t->filter, pos, &v) != 0)
		return 0;
	info->tracked = true;
	info->closing = value_closing(v);
	info->expired = info->closing ? linger_done(t, v) :
		idle_expired(t, v);
	info->proto_class = (uint8_t)value_class(v);
	info->idle_ns = (uint64_t)value_age(t, v) << t->tick_shift;
	info->count = value_count(t, v);
	return 1;
}

struct end_ctx {
	struct cflow_tracker *t;
	bool shutdown;          /* cflow_tracker_end_records() */
};

/* Records of every flow of a batch: a forced end of the open ones, the
 * end of the closed ones lingering. Nothing is removed here. */
static uint64_t
end_each(uint32_t first, const uint64_t *values, uint64_t used,
		unsigned int n, void *arg)
{
	struct end_ctx *ctx = arg;
	struct cflow_tracker *t = ctx->t;

	(void)n;
	for (uint64_t m = used; m != 0; m &= m - 1) {
		unsigned int k = (unsigned int)__builtin_ctzll(m);
		enum cflow_record_reason why = value_closing(values[k]) ?
			CFLOW_RECORD_END : CFLOW_RECORD_FORCED;

		rec_end_at(t, first + k, values[k], why, ctx->shutdown ?
			&t->c.records_shutdown : rec_count(t, why));
		/* the flow's counts start again */
		(void)cf_aux_set(t->filter, first + k, 0);
	}
	return 0;
}

uint64_t
cflow_tracker_flush(struct cflow_tracker *t)
{
	uint64_t open[2] = { 0, 0 }, cursor = 0;
	struct end_ctx ctx = { t, false };

	(void)cf_scan_batch(t->filter, &cursor, t->buckets, count_open,
		open);
	if (t->records)
		(void)cf_scan_batch(t->filter, &cursor, t->buckets, end_each,
			&ctx);
	cf_clear(t->filter);
	t->cursor = 0;
	t->covered_ns = t->now_ns;
	/* Each open flow is one entry (a packet that finds its
	 * fingerprint adds none). */
	CFU_ASSERT(open[0] == t->c.active && open[1] == t->c.lingering);
	(void)open;
	open[0] = t->c.active;
	t->c.flows_flushed += open[0];
	t->c.active = 0;
	t->c.lingering = 0;
	CFU_ASSERT(records_consistent(t));
	return open[0];
}

uint64_t
cflow_tracker_end_records(struct cflow_tracker *t)
{
	uint64_t cursor = 0, before = t->c.records_shutdown;
	struct end_ctx ctx = { t, true };

	if (!t->records)
		return 0;
	(void)cf_scan_batch(t->filter, &cursor, t->buckets, end_each, &ctx);
	return t->c.records_shutdown - before;
}

uint64_t
cflow_tracker_active_unit_ns(const struct cflow_tracker *t)
{
	return t->due_units == UINT32_MAX ? 0 : UINT64_C(1) << t->ushift;
}

const struct cf_filter *
cflow_tracker_filter(const struct cflow_tracker *t)
{
	return t->filter;
}
