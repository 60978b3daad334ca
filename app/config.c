/* SPDX-License-Identifier: BSD-3-Clause */

/* cuckooflow's options: one table, read from INI and the command line. */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_config.h>
#include <rte_version.h>

#include "cflow_topk.h"
#include "cfutil.h"
#include "config.h"

#define CFG_FILE_MAX (1u << 20)
#define CFG_LINE_MAX 4096

enum opt_type {
	OPT_UINT,   /* decimal or 0x hex, within [min, max] */
	OPT_FLAG,   /* no argument on the command line; 0/1 in the file */
	OPT_CHOICE, /* one of the names in choices[] */
	OPT_STRING,
};

struct option_def;

/*
 * Where a value is read into: the config and, for --stats-json, the
 * place it was set at (its check, after the command line, names it).
 */
struct parse_ctx {
	struct app_config *cfg;
	char where_json[CFG_LINE_MAX + 320];
};

/* An option's own reading of @p value (instead of its type's); @p where
 * says "--name" or "file:line: [section] key =". 0 or -EINVAL. */
typedef int (*opt_parse_fn)(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where);
/* An option's own text of its value in @p cfg. */
typedef void (*opt_print_fn)(const struct app_config *cfg,
		const struct option_def *d, char *buf, size_t len);

struct option_def {
	const char *name;      /* --name */
	const char *section;   /* INI section, NULL: command line only */
	const char *key;       /* INI key */
	enum opt_type type;
	size_t offset;         /* of its field in struct app_config */
	size_t size;           /* of its field; 0: none */
	uint64_t min, max;
	/* OPT_UINT, OPT_FLAG, OPT_CHOICE: the field's value at start */
	uint64_t def;
	const char *help;
	const char *zero_word;  /* OPT_UINT: a word that stands for 0 */
	const char *arg;        /* OPT_STRING: its name in --help */
	const char *const *choices;
	/* OPT_CHOICE: the number each choice stands for, stored in the
	 * field; NULL: the choice's index. */
	const uint64_t *choice_values;
	/* OPT_UINT: the limit, asked of a library (else max) */
	uint64_t (*max_of)(void);
	opt_parse_fn parse;     /* NULL: the type's */
	opt_print_fn print;     /* NULL: the type's */
	bool first;             /* read before every other option (--cfg) */
};

static const char *const modes[] = { "monitor", "forward", NULL };
static const char *const hashes[] = { "xxh3", "rss", NULL };
static const char *const clocks[] = { "tsc", "pkt", NULL };
static const char *const policies[] = { "evict", "untracked", NULL };
static const char *const age_widths[] = { "32", "16", NULL };
static const uint64_t age_width_bits[] = { 32, 16 };
static const char *const affinities[] = { "auto", "rss", "handoff", NULL };
static const char *const unparsed_policies[] = { "drop", "pass", NULL };
static const char *const fw_unparsed_policies[] = { "auto", "drop", "pass",
	NULL };
static const uint64_t fw_unparsed_values[] = { APP_UNPARSED_AUTO,
	APP_UNPARSED_DROP, APP_UNPARSED_PASS };
static const char *const full_policies[] = { "auto", "wait", "drop", NULL };
static const char *const layouts[] = { "auto", "plain", "interleaved", NULL };
static const char *const records_modes[] = { "auto", "on", "off", NULL };

/* A field: its offset and its size, which its type gives. */
#define FIELD(f) .offset = offsetof(struct app_config, f), \
	.size = sizeof(((struct app_config *)0)->f)

/* Per-option readers and printers, below the table. */
static int parse_portmask(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where);
static void print_portmask(const struct app_config *cfg,
		const struct option_def *d, char *buf, size_t len);
static int parse_hash_seed(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where);
static void print_hash_seed(const struct app_config *cfg,
		const struct option_def *d, char *buf, size_t len);
static int parse_idle_timeout(struct parse_ctx *c,
		const struct option_def *d, const char *value, const char *where);
static void print_idle_timeout(const struct app_config *cfg,
		const struct option_def *d, char *buf, size_t len);
static int parse_decap(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where);
static int parse_stats_json(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where);
static int parse_port_or_none(struct parse_ctx *c,
		const struct option_def *d, const char *value, const char *where);
static void print_port_or_none(const struct app_config *cfg,
		const struct option_def *d, char *buf, size_t len);
static int parse_cfg(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where);

/* The fields after help are optional: left out, they are zero. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct option_def defs[] = {
	{ "portmask", "ports", "portmask", OPT_UINT, FIELD(portmask), 1,
		UINT64_MAX, 0, "ports to use: a hex bitmask of port "
		"ids (0x or not: 10 is port 4), or all", .zero_word = "all",
		.parse = parse_portmask, .print = print_portmask },
	{ "rxq", "ports", "rxq", OPT_UINT, FIELD(rxq), 1, 1024, 0,
		"rx queues per port (auto: one per worker, or each rx_pcap "
		"of a net_pcap port)", .zero_word = "auto" },
	{ "txq", "ports", "txq", OPT_UINT, FIELD(txq), 1, 1024, 0,
		"tx queues per port (auto: one per worker in forward mode, "
		"where each worker needs its own)", .zero_word = "auto" },
	{ "rxd", "ports", "rxd", OPT_UINT, FIELD(rxd), 32, 32768, 1024,
		"descriptors per rx queue" },
	{ "txd", "ports", "txd", OPT_UINT, FIELD(txd), 32, 32768, 1024,
		"descriptors per tx queue" },
	{ "max-pkt-len", "ports", "max_pkt_len", OPT_UINT, FIELD(max_pkt_len),
		64, 16128, 1518, "largest frame received, in bytes "
		"(jumbo frames: mbufs get the room)" },
	{ "burst", "ports", "burst", OPT_UINT, FIELD(burst), 1, CF_BULK_MAX,
		32, "packets per rx burst" },
	{ "mbufs", "ports", "mbufs", OPT_UINT, FIELD(mbufs), 0, 1u << 24, 0,
		"mbufs in the pool (0: enough for every ring and lcore)" },
	{ "mode", "ports", "mode", OPT_CHOICE, FIELD(mode), 0, 0,
		APP_MODE_MONITOR, "monitor: count and drop; forward: to the "
		"paired port", .choices = modes },
	{ "flows", "flows", "flows", OPT_UINT, FIELD(flows), 1,
		CF_MAX_CAPACITY, CFLOW_CAPACITY_DEFAULT,
		"flow table capacity per lcore" },
	{ "fp-bits", "flows", "fp_bits", OPT_UINT, FIELD(fp_bits), 4, 32, 0,
		"fingerprint bits (FPR ~ 8 * load / 2^bits; auto: 12, "
		"32 in firewall mode: docs/firewall.md)", .zero_word = "auto" },
	{ "age-bits", "flows", "age_bits", OPT_CHOICE, FIELD(age_bits), 0, 0,
		CFLOW_VALUE_BITS_DEFAULT, "bits of state per flow: 32 "
		"(16.8 ms ticks), or 16 (ticks of ~1/2000 of the longest "
		"timeout; 2 bytes less per flow)", .choices = age_widths,
		.choice_values = age_width_bits },
	{ "hash", "flows", "hash", OPT_CHOICE, FIELD(hash), 0, 0,
		CFLOW_HASH_XXH3, "xxh3 of the 5-tuple, or the NIC's rss hash",
		.choices = hashes },
	{ "hash-seed", "flows", "hash_seed", OPT_UINT, FIELD(hash_seed), 0,
		UINT64_MAX, 0, "hash seed, for reproducible runs",
		.parse = parse_hash_seed, .print = print_hash_seed },
	{ "clock", "flows", "clock", OPT_CHOICE, FIELD(clock), 0, 0,
		APP_CLOCK_TSC, "tsc, or pkt: the capture time net_pcap "
		"attaches", .choices = clocks },
	{ "idle-timeout", NULL, NULL, OPT_UINT, 0, 0, 1, 0, 0,
		"idle timeout in s for every protocol class",
		.max_of = app_config_timeout_max_s,
		.parse = parse_idle_timeout, .print = print_idle_timeout },
	{ "timeout-tcp", "timeouts", "tcp", OPT_UINT,
		FIELD(timeout_s[CFLOW_CLASS_TCP]), 1, 0, CFLOW_TIMEOUT_TCP_S,
		"TCP idle timeout, s", .max_of = app_config_timeout_max_s },
	{ "timeout-udp", "timeouts", "udp", OPT_UINT,
		FIELD(timeout_s[CFLOW_CLASS_UDP]), 1, 0, CFLOW_TIMEOUT_UDP_S,
		"UDP and UDP-Lite idle timeout, s",
		.max_of = app_config_timeout_max_s },
	{ "timeout-icmp", "timeouts", "icmp", OPT_UINT,
		FIELD(timeout_s[CFLOW_CLASS_ICMP]), 1, 0, CFLOW_TIMEOUT_ICMP_S,
		"ICMP and ICMPv6 idle timeout, s",
		.max_of = app_config_timeout_max_s },
	{ "timeout-other", "timeouts", "other", OPT_UINT,
		FIELD(timeout_s[CFLOW_CLASS_OTHER]), 1, 0,
		CFLOW_TIMEOUT_OTHER_S, "idle timeout of other protocols, s",
		.max_of = app_config_timeout_max_s },
	{ "close-linger", "flows", "close_linger", OPT_UINT,
		FIELD(close_linger_s), 0, 0, CFLOW_CLOSE_LINGER_S,
		"s a closed TCP flow lingers after its last packet (0: removed "
		"at FIN/RST)", .max_of = app_config_timeout_max_s },
	{ "full-policy", "flows", "full_policy", OPT_CHOICE,
		FIELD(full_policy), 0, 0, CFLOW_FULL_EVICT, "full table: "
		"evict, or leave the new flow untracked",
		.choices = policies },
	{ "exact-size", "flows", "exact_size", OPT_FLAG, FIELD(exact_size), 0,
		1, 0, "size the table to --flows exactly, not to the "
		"next power of two (up to half the memory)" },
	{ "table-layout", "flows", "table_layout", OPT_CHOICE,
		FIELD(table_layout), 0, 0, APP_LAYOUT_AUTO, "each flow's state "
		"in its bucket's cache line (interleaved: a packet reads two "
		"lines, not three) or in an array of its own (plain); auto: "
		"interleaved where it takes no more memory (16-bit "
		"fingerprints and state, or 32 and 32)", .choices = layouts },
	{ "vlan-in-key", "flows", "vlan_in_key", OPT_FLAG, FIELD(vlan_in_key),
		0, 1, 0, "key flows by their VLAN ids too" },
	{ "decap", "flows", "decap", OPT_STRING, FIELD(decap_text), 0, 0, 0,
		"tunnels to decapsulate, keying flows by the inner 5-tuple: "
		"a comma-separated list of vxlan, geneve, gre, gtpu, or all "
		"(docs/tunnels.md)", .arg = "LIST", .parse = parse_decap },
	{ "exit-on-eof", "run", "exit_on_eof", OPT_FLAG, FIELD(exit_on_eof), 0,
		1, 0, "stop when every rx_pcap queue is exhausted" },
	{ "stats-period", "run", "stats_period", OPT_UINT,
		FIELD(stats_period_s), 0, 3600, 0, "print a timestamped "
		"snapshot of the counters with per-second rates and table load "
		"every N s (0: at exit only)" },
	{ "stats-all", "run", "stats_all", OPT_FLAG, FIELD(stats_all), 0, 1,
		0, "print every counter, per lcore, each --stats-period and at "
		"exit (else a line each period, and at exit a summary of the "
		"counters that are not 0)" },
	{ "stats-json", "run", "stats_json", OPT_STRING, FIELD(stats_json),
		0, 0, 0, "write the final counters as JSON to FILE",
		.parse = parse_stats_json },
	{ "stats-json-period", "run", "stats_json_period", OPT_STRING,
		FIELD(stats_json_period), 0, 0, 0, "append a JSON object "
		"(time, rates, counters) every --stats-period N s to FILE: "
		"JSON lines (docs/usage.md)" },
	{ "state-file", "run", "state_file", OPT_STRING, FIELD(state_file), 0,
		0, 0, "warm restart: save every worker's flow table to FILE "
		"at exit, take it over at start if saved by a run like this "
		"one (docs/usage.md)" },
	{ "state-interval", "run", "state_interval", OPT_UINT,
		FIELD(state_interval_s), 1, 86400, 0, "with --state-file, save "
		"the flow tables every N s while running too: a crash loses at "
		"most that much (off: at exit only)", .zero_word = "off" },
	{ "events", "events", "json", OPT_STRING, FIELD(events), 0, 0, 0,
		"append a JSON line for each new flow and each FIN/RST close, "
		"and with --records each flow record, to FILE (reopened when "
		"moved away: logrotate)" },
	{ "new-flow-pcap", "events", "new_flow_pcap", OPT_STRING,
		FIELD(new_flow_pcap), 0, 0, 0, "write the first packet of "
		"each new flow to FILE, pcapng (rte_pcapng)" },
	{ "ipfix", "events", "ipfix", OPT_STRING, FIELD(ipfix), 0, 0, 0,
		"export the flow records as IPFIX over UDP to HOST:PORT "
		"([ADDR]:PORT for IPv6)", .arg = "HOST:PORT" },
	{ "ipfix-domain", "events", "ipfix_domain", OPT_UINT,
		FIELD(ipfix_domain), 0, UINT32_MAX, 1, "the IPFIX "
		"observation domain id of the messages" },
	{ "records", "events", "records", OPT_CHOICE, FIELD(records), 0, 0,
		APP_RECORDS_AUTO, "flow records: each flow's packets, bytes, "
		"times and flags, at each end (idle, FIN/RST, eviction, "
		"active timeout, exit) to --ipfix and --events; 8 bytes a "
		"slot (auto: on with --ipfix)", .choices = records_modes },
	{ "active-timeout", "events", "active_timeout", OPT_UINT,
		FIELD(active_timeout_s), 1, 0, CFLOW_ACTIVE_TIMEOUT_S,
		"with records, a flow's record is cut after this many s of "
		"its packets (off: one record at its end)",
		.zero_word = "off", .max_of = app_config_timeout_max_s },
	{ "records-max", "events", "records_max", OPT_UINT,
		FIELD(records_max), 1, 1u << 31, 0, "flows whose keys the "
		"main lcore keeps for their records, ~96 bytes each (auto: "
		"as many as the tables hold)", .zero_word = "auto" },
	{ "top-sources", "top", "counters", OPT_UINT, FIELD(top_sources), 0,
		CFLOW_TOPK_CAPACITY_MAX, CFLOW_TOPK_CAPACITY_DEFAULT,
		"counters of each worker's sketch of the sources opening the "
		"most flows (0: off; /cuckooflow/top_new_sources)" },
	{ "top-period", "top", "period", OPT_UINT, FIELD(top_period_s), 1,
		3600, 60, "seconds the top sources are counted over before "
		"they are reported and counted anew" },
	{ "event-ring", "events", "ring", OPT_UINT, FIELD(event_ring), 64,
		1u << 24, 16384, "events each worker's ring holds "
		"for the main lcore; a full ring drops them (events_dropped)" },
	{ "affinity", "workers", "affinity", OPT_CHOICE, FIELD(affinity), 0,
		0, APP_AFFINITY_AUTO, "how a flow reaches its one worker: rss "
		"(symmetric RSS on every port), handoff (software hash and "
		"rings), auto (rss where every port can)",
		.choices = affinities },
	{ "config", "workers", "config", OPT_STRING, FIELD(queue_map_text), 0,
		0, 0, "rx queue map (port,queue,lcore)[,...], as l3fwd's "
		"(none: queue i of every port on worker i)", .arg = "MAP" },
	{ "handoff-full", "workers", "handoff_full", OPT_CHOICE,
		FIELD(handoff_full), 0, 0, APP_HANDOFF_FULL_AUTO, "an owner's "
		"full ring: wait, or drop and count (auto: wait when every "
		"port replays a capture)", .choices = full_policies },
	{ "handoff-ring", "workers", "handoff_ring", OPT_UINT,
		FIELD(handoff_ring), 64, 65536, 1024, "packets each "
		"worker-to-worker ring holds" },
	{ "blocklist", "blocklist", "blocklist", OPT_STRING, FIELD(blocklist),
		0, 0, 0, "drop packets matching this list (text or "
		"compiled)" },
	{ "blocklist-unparsed", "blocklist", "blocklist_unparsed", OPT_CHOICE,
		FIELD(blocklist_unparsed), 0, 0, APP_UNPARSED_DROP,
		"with --blocklist, an IP packet whose addresses (or, if the "
		"list has flows, ports) cannot be read: drop (fail closed) or "
		"pass", .choices = unparsed_policies },
	{ "inside", "firewall", "inside", OPT_STRING, FIELD(inside_text), 0, 0,
		0, "firewall mode: ports on the inside, whose packets may open "
		"flows: a list of port ids and ranges (0,2-3)",
		.arg = "PORTS" },
	{ "outside", "firewall", "outside", OPT_STRING, FIELD(outside_text),
		0, 0, 0, "firewall mode: ports on the outside, whose packets "
		"pass only on a tracked flow (or an --allow rule)",
		.arg = "PORTS" },
	{ "tcp-strict", "firewall", "tcp_strict", OPT_FLAG, FIELD(tcp_strict),
		0, 1, 0, "a TCP flow is opened only by a SYN without "
		"ACK (else any packet of it)" },
	{ "allow", "firewall", "allow", OPT_STRING, FIELD(allow), 0, 0, 0,
		"firewall mode: services outside hosts may open, lines of "
		"'PROTO ADDR[/LEN] PORT|any'" },
	{ "firewall-unparsed", "firewall", "firewall_unparsed", OPT_CHOICE,
		FIELD(firewall_unparsed), 0, 0, APP_UNPARSED_AUTO,
		"firewall mode: an outside frame the parser cannot take to a "
		"flow (IP behind 3+ VLAN tags, MPLS, PPPoE, LLC/SNAP, a "
		"tunnel's non-IP frame, other non-IP but ARP): drop or pass "
		"(auto: drop)", .choices = fw_unparsed_policies,
		.choice_values = fw_unparsed_values },
	{ "firewall-nd", "firewall", "firewall_nd", OPT_CHOICE,
		FIELD(firewall_nd), 0, 0, APP_UNPARSED_AUTO, "firewall mode: "
		"outside IPv6 neighbour discovery of no flow (ICMPv6 133-137, "
		"hop limit 255): pass, as conntrack leaves it untracked, or "
		"drop (auto: pass)", .choices = fw_unparsed_policies,
		.choice_values = fw_unparsed_values },
	{ "frag-datagrams", "fragments", "datagrams", OPT_UINT,
		FIELD(frag_datagrams), 1, CFLOW_FRAG_MAX,
		CFLOW_FRAG_DATAGRAMS_DEFAULT, "IP datagrams each worker "
		"follows at once: later fragments go with their first "
		"fragment's flow (off: later fragments are untracked)",
		.zero_word = "off" },
	{ "frag-hold", "fragments", "hold", OPT_UINT, FIELD(frag_hold), 1,
		65536, CFLOW_FRAG_HOLD_DEFAULT, "firewall mode: later fragments "
		"each worker holds until their first fragment comes, dropped "
		"if it never does (off: none held, they go on untracked; "
		"without roles none are)", .zero_word = "off" },
	{ "frag-timeout", "fragments", "timeout", OPT_UINT,
		FIELD(frag_timeout_s), 1, 3600, CFLOW_FRAG_TIMEOUT_S, "s a "
		"datagram is followed from its first fragment, and a later "
		"fragment held" },
	{ "new-flow-rate", "flows", "new_flow_rate", OPT_UINT,
		FIELD(new_flow_rate), 1, 1000000000, 0, "new flows "
		"each worker admits per second, past --new-flow-burst (off: "
		"no limit)", .zero_word = "off" },
	{ "new-flow-burst", "flows", "new_flow_burst", OPT_UINT,
		FIELD(new_flow_burst), 1, 1000000000, 0,
		"new flows admitted at once before the rate applies (rate: "
		"as many as --new-flow-rate)", .zero_word = "rate" },
	{ "emergency-load", "flows", "emergency_load", OPT_UINT,
		FIELD(emergency_load), 1, 100, 0, "table load, % of "
		"--flows, above which idle timeouts shrink to "
		"--emergency-timeout (off: never)", .zero_word = "off" },
	{ "emergency-low", "flows", "emergency_low", OPT_UINT,
		FIELD(emergency_low), 1, 99, 0, "load, %, below "
		"which the emergency ends (auto: --emergency-load less 10)",
		.zero_word = "auto" },
	{ "emergency-timeout", "flows", "emergency_timeout", OPT_UINT,
		FIELD(emergency_timeout_s), 1, 0, CFLOW_EMERGENCY_TIMEOUT_S,
		"idle timeout and linger, s, of every class in an emergency",
		.max_of = app_config_timeout_max_s },
	{ "mirror-port", "mirror", "port", OPT_UINT, FIELD(mirror_port), 0,
		RTE_MAX_ETHPORTS - 1, APP_NO_PORT, "send a copy of each "
		"flow's first --mirror-first packets out of this port (forward "
		"mode; not a forwarding port)", .parse = parse_port_or_none,
		.print = print_port_or_none },
	{ "mirror-first", "mirror", "first", OPT_UINT, FIELD(mirror_first), 1,
		254, 0, "packets of each flow, both directions "
		"together, copied to --mirror-port", .zero_word = "off" },
	{ "cfg", NULL, NULL, OPT_STRING, FIELD(cfg_file), 0, 0, 0,
		"read settings from an INI FILE first", .parse = parse_cfg,
		.first = true },
};
#pragma GCC diagnostic pop
#define NB_DEFS (sizeof(defs) / sizeof(defs[0]))
/* getopt_long's value for defs[i], past every short option's. */
#define OPT_VAL(i) (256 + (int)(i))

/*
 * Messages for app_config_parse()'s caller, appended to its buffer (one
 * line each, "cuckooflow: " first): parsing is single-threaded and not
 * reentrant, and the library-style API prints nothing itself.
 */
static char *msg_buf;
static size_t msg_len, msg_used;

static void __attribute__((format(printf, 1, 2)))
config_msg(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (msg_buf == NULL || msg_used + 1 >= msg_len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg_buf + msg_used, msg_len - msg_used, fmt, ap);
	va_end(ap);
	if (n > 0)
		msg_used = msg_used + (size_t)n < msg_len ?
			msg_used + (size_t)n : msg_len - 1;
}

/* ------------------------------------------------------------ fields */

/* Store @p v in @p d's field, of its own width (bool, enum, unsigned
 * int or uint64_t). */
static void
field_set(struct app_config *cfg, const struct option_def *d, uint64_t v)
{
	void *p = (char *)cfg + d->offset;

	if (d->type == OPT_FLAG) {
		bool b = v != 0;

		memcpy(p, &b, sizeof(b));
	} else if (d->size == sizeof(uint32_t)) {
		uint32_t u = (uint32_t)v;

		memcpy(p, &u, sizeof(u));
	} else if (d->size == sizeof(uint64_t)) {
		memcpy(p, &v, sizeof(v));
	}
}

static uint64_t
field_get(const struct app_config *cfg, const struct option_def *d)
{
	const void *p = (const char *)cfg + d->offset;

	if (d->type == OPT_FLAG) {
		bool b;

		memcpy(&b, p, sizeof(b));
		return b;
	} else if (d->size == sizeof(uint32_t)) {
		uint32_t u;

		memcpy(&u, p, sizeof(u));
		return u;
	} else if (d->size == sizeof(uint64_t)) {
		uint64_t v;

		memcpy(&v, p, sizeof(v));
		return v;
	}
	return 0;
}

static uint64_t
max_of(const struct option_def *d)
{
	return d->max_of != NULL ? d->max_of() : d->max;
}

uint64_t
app_config_timeout_max_s(void)
{
	static uint64_t max;
	uint64_t lo = 1, hi = UINT64_C(1) << 34; /* s: no overflow in ns */
	int saved = errno;

	if (max != 0)
		return max;
	/* The longest lib/cflow accepts with its defaults (32-bit state,
	 * no packet count, no side): a bisection of its own check. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct cflow_tracker_params p = {
			.fixed_seed = true,
			.timeout_ns = { [CFLOW_CLASS_TCP] = mid * 1000000000ull },
		}, r;

		if (cflow_tracker_params_resolve(&p, &r) == 0)
			lo = mid;
		else
			hi = mid;
	}
	errno = saved;
	max = lo;
	return max;
}

/* ----------------------------------------------------- reading values */

/* The type's reading of @p value into @p d's field. */
static int
set_typed(struct app_config *cfg, const struct option_def *d,
		const char *value, const char *where, uint64_t *out)
{
	unsigned long long v;
	char *end;

	switch (d->type) {
	case OPT_STRING:
		/* Refused whole, never cut to fit. */
		if (strlen(value) >= d->size) {
			config_msg("cuckooflow: %s %.40s...: %zu "
				"characters, longer than the %zu allowed\n",
				where, value, strlen(value), d->size - 1);
			return -EINVAL;
		}
		if (out == NULL)
			strcpy((char *)cfg + d->offset, value);
		return 0;
	case OPT_CHOICE:
		for (unsigned int k = 0; d->choices[k] != NULL; k++)
			if (strcmp(value, d->choices[k]) == 0) {
				field_set(cfg, d, d->choice_values != NULL ?
					d->choice_values[k] : k);
				return 0;
			}
		config_msg("cuckooflow: %s %s: want one of", where, value);
		for (unsigned int k = 0; d->choices[k] != NULL; k++)
			config_msg(" %s", d->choices[k]);
		config_msg("\n");
		return -EINVAL;
	case OPT_FLAG:
	case OPT_UINT:
		/* A word for 0 ("all" ports, "auto"): the number 0
		 * itself is refused below. */
		if (d->zero_word != NULL && strcmp(value, d->zero_word) == 0) {
			v = 0;
		} else {
			errno = 0;
			v = strtoull(value, &end, 0);
			if (value[0] == '-' || value[0] == '\0' ||
					*end != '\0' || errno != 0 ||
					v < d->min || v > max_of(d)) {
				config_msg("cuckooflow: %s %s: want an "
					"integer in %" PRIu64 "..%" PRIu64 "%s%s"
					"\n", where, value, d->min, max_of(d),
					d->zero_word != NULL ? ", or " : "",
					d->zero_word != NULL ? d->zero_word :
					"");
				return -EINVAL;
			}
		}
		if (out != NULL)
			*out = v;
		else
			field_set(cfg, d, v);
		return 0;
	}
	return -EINVAL;
}

/* Set one option from text; where says "--name" or "file:section.key". */
static int
set_value(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where)
{
	if (d->parse != NULL)
		return d->parse(c, d, value, where);
	return set_typed(c->cfg, d, value, where, NULL);
}

/* --portmask: hex, 0x or not, as testpmd's and l3fwd's. */
static int
parse_portmask(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where)
{
	unsigned long long v;
	char *end;

	if (strcmp(value, d->zero_word) == 0) {
		field_set(c->cfg, d, 0);
		return 0;
	}
	errno = 0;
	v = strtoull(value, &end, 16);
	if (value[0] == '-' || value[0] == '\0' || *end != '\0' ||
			errno != 0 || v < d->min || v > d->max) {
		config_msg("cuckooflow: %s %s: want a hex bitmask of port "
			"ids (1 is port 0, 0x3 ports 0 and 1), or all\n",
			where, value);
		return -EINVAL;
	}
	field_set(c->cfg, d, v);
	return 0;
}

static void
print_portmask(const struct app_config *cfg, const struct option_def *d,
		char *buf, size_t len)
{
	uint64_t v = field_get(cfg, d);

	if (v == 0)
		snprintf(buf, len, "%s", d->zero_word);
	else
		snprintf(buf, len, "0x%" PRIx64, v);
}

/* --hash-seed: given, else random. */
static int
parse_hash_seed(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where)
{
	int ret = set_typed(c->cfg, d, value, where, NULL);

	if (ret == 0)
		c->cfg->hash_seed_set = true;
	return ret;
}

static void
print_hash_seed(const struct app_config *cfg, const struct option_def *d,
		char *buf, size_t len)
{
	if (cfg->hash_seed_set)
		snprintf(buf, len, "%" PRIu64, field_get(cfg, d));
	else
		snprintf(buf, len, "random");
}

/* --idle-timeout: every class's timeout at once. */
static int
parse_idle_timeout(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where)
{
	uint64_t v = 0;
	int ret = set_typed(c->cfg, d, value, where, &v);

	if (ret == 0)
		for (int k = 0; k < CFLOW_CLASS_MAX; k++)
			c->cfg->timeout_s[k] = v;
	return ret;
}

static void
print_idle_timeout(const struct app_config *cfg, const struct option_def *d,
		char *buf, size_t len)
{
	(void)cfg;
	(void)d;
	snprintf(buf, len, "per class");
}

/* --mirror-port: a port id, or none. */
static int
parse_port_or_none(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where)
{
	if (strcmp(value, "none") == 0) {
		field_set(c->cfg, d, APP_NO_PORT);
		return 0;
	}
	return set_typed(c->cfg, d, value, where, NULL);
}

static void
print_port_or_none(const struct app_config *cfg, const struct option_def *d,
		char *buf, size_t len)
{
	uint64_t v = field_get(cfg, d);

	if (v == APP_NO_PORT)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%" PRIu64, v);
}

/* --decap: a comma-separated list of tunnel names, "all", or "" (none). */
static int
parse_decap(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} tunnels[] = {
		{ "vxlan", CFLOW_DECAP_VXLAN },
		{ "geneve", CFLOW_DECAP_GENEVE },
		{ "gre", CFLOW_DECAP_GRE },
		{ "gtpu", CFLOW_DECAP_GTPU },
		{ "all", CFLOW_DECAP_ALL },
	};
	const char *p = value;
	uint64_t mask = 0;
	int ret = set_typed(c->cfg, d, value, where, &mask);

	if (ret < 0)
		return ret;
	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		unsigned int k;

		for (k = 0; k < RTE_DIM(tunnels); k++)
			if (strlen(tunnels[k].name) == n &&
					strncmp(p, tunnels[k].name, n) == 0)
				break;
		if (k == RTE_DIM(tunnels)) {
			config_msg("cuckooflow: %s %s: want a comma-"
				"separated list of vxlan, geneve, gre, gtpu, "
				"or all\n", where, value);
			return -EINVAL;
		}
		mask |= tunnels[k].bit;
		p += n;
		if (*p == ',' && *++p == '\0') {
			config_msg("cuckooflow: %s %s: a trailing "
				"comma\n", where, value);
			return -EINVAL;
		}
	}
	strcpy(c->cfg->decap_text, value);
	c->cfg->decap = mask;
	return 0;
}

/* --stats-json: its check, at the end, names where it was set. */
static int
parse_stats_json(struct parse_ctx *c, const struct option_def *d,
		const char *value, const char *where)
{
	int ret = set_typed(c->cfg, d, value, where, NULL);

	if (ret == 0)
		snprintf(c->where_json, sizeof(c->where_json), "%s", where);
	return ret;
}

/* --cfg: read by find_cfg() before the rest; the main pass skips it. */
static int
parse_cfg(struct parse_ctx *c, const struct option_def *d, const char *value,
		const char *where)
{
	(void)c;
	(void)d;
	(void)value;
	(void)where;
	return 0;
}

/* ----------------------------------------------------- printing values */

/* @p d's value in @p cfg, as text (a string as it is, "" if empty). */
static void
print_value(const struct app_config *cfg, const struct option_def *d,
		char *buf, size_t len)
{
	uint64_t v;

	if (d->print != NULL) {
		d->print(cfg, d, buf, len);
		return;
	}
	if (d->type == OPT_STRING) {
		snprintf(buf, len, "%s", (const char *)cfg + d->offset);
		return;
	}
	v = field_get(cfg, d);
	if (d->type == OPT_CHOICE) {
		unsigned int k;

		/* the choice whose field value is v */
		for (k = 0; d->choices[k + 1] != NULL; k++)
			if ((d->choice_values != NULL ? d->choice_values[k] :
					k) == v)
				break;
		snprintf(buf, len, "%s", d->choices[k]);
	} else if (d->zero_word != NULL && v == 0) {
		snprintf(buf, len, "%s", d->zero_word);
	} else {
		snprintf(buf, len, "%" PRIu64, v);
	}
}

void
app_config_defaults(struct app_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (unsigned int i = 0; i < NB_DEFS; i++)
		if (defs[i].size != 0 && defs[i].type != OPT_STRING)
			field_set(cfg, &defs[i], defs[i].def);
}

static void
usage(const char *prog)
{
	struct app_config *cfg = malloc(sizeof(*cfg));

	if (cfg == NULL)
		return;
	app_config_defaults(cfg);
	printf("usage: %s [EAL options] -- [options]\n\n", prog);
	for (unsigned int i = 0; i < NB_DEFS; i++) {
		char left[64], def[320], key[64];

		snprintf(left, sizeof(left), "--%s%s%s", defs[i].name,
			defs[i].type == OPT_FLAG ? "" :
			defs[i].type != OPT_STRING ? " N" :
			defs[i].arg != NULL ? " " : " FILE",
			defs[i].arg != NULL ? defs[i].arg : "");
		if (defs[i].type == OPT_CHOICE) {
			size_t n = strlen(left);

			snprintf(left + n - 2, sizeof(left) - n + 2, " ");
			for (const char *const *c = defs[i].choices; *c; c++)
				snprintf(left + strlen(left), sizeof(left) -
					strlen(left), "%s%s", *c, c[1] ? "|" : "");
		}
		print_value(cfg, &defs[i], def, sizeof(def));
		/* its --cfg file key (section.key), as the man page and
		 * docs/usage.md give it; none: the command line only */
		if (defs[i].section != NULL)
			snprintf(key, sizeof(key), "%s.%s; ", defs[i].section,
				defs[i].key);
		else
			key[0] = '\0';
		printf("  %-30s %s (%sdefault %s)\n", left, defs[i].help, key,
			def[0] ? def : "none");
	}
	printf("  %-30s %s\n  %-30s %s\n\nEAL options: those of DPDK's "
		"programs (dpdk-testpmd --help); the usual ones: -l or --lcores "
		"(the first the main lcore,\neach other one a worker), -a (a "
		"PCI device), --vdev, --no-huge -m MB, --file-prefix.\nEach "
		"option's --cfg file key is shown as section.key before its "
		"default:\nconfig/cuckooflow.ini lists them all.\n", "-h, --help",
		"this text", "--version", "the version, and DPDK's");
	free(cfg);
}

/* ------------------------------------------------------- the INI file */

/*
 * The --cfg file, read whole and strictly: every line is blank, a ; or #
 * comment, a [section] or a key = value, and every section and key is
 * known. A section may come back (its keys add to the first's), but a
 * key may be set once. Any other line, a NUL byte, a line longer than
 * CFG_LINE_MAX, or a file over CFG_FILE_MAX is an error naming FILE:LINE.
 */

static char *
trim(char *p)
{
	size_t len;

	while (isspace((unsigned char)*p))
		p++;
	len = strlen(p);
	while (len > 0 && isspace((unsigned char)p[len - 1]))
		p[--len] = '\0';
	return p;
}

/*
 * A ; or # after a space or tab ends the value: an inline comment.
 * @p value: what follows the '=' (value[-1]), untrimmed.
 */
static void
cut_comment(char *value)
{
	for (char *p = value; *p != '\0'; p++)
		if ((*p == ';' || *p == '#') &&
				(p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
}

/* The name of a known section (in defs), or NULL. */
static const char *
known_section(const char *name)
{
	for (unsigned int i = 0; i < NB_DEFS; i++)
		if (defs[i].section != NULL &&
				strcmp(defs[i].section, name) == 0)
			return defs[i].section;
	return NULL;
}

/*
 * One line (NUL-terminated, no newline) of @p path. first_line[i]: the
 * line that set defs[i], 0 if none yet.
 */
static int
load_line(struct parse_ctx *c, const char *path, unsigned int n,
		char *text, const char **section, unsigned int *first_line)
{
	const struct option_def *d = NULL;
	char *p = trim(text), *eq, *key, *value;
	char where[CFG_LINE_MAX + 320];
	size_t len = strlen(p);

	if (len == 0 || *p == ';' || *p == '#')
		return 0;
	if (*p == '[' && p[len - 1] == ']' && len > 2) {
		p[len - 1] = '\0';
		key = trim(p + 1);
		if (strcmp(key, "filter") == 0) {
			/* "filter" names the cuckoo filter; its keys were the
			 * blocklist's. */
			config_msg("cuckooflow: %s:%u: [filter] is "
				"deprecated: read as [blocklist]\n", path, n);
			key = "blocklist";
		}
		*section = known_section(key);
		if (*section != NULL)
			return 0;
		config_msg("cuckooflow: %s:%u: unknown section [%s] (see "
			"config/cuckooflow.ini)\n", path, n, key);
		return -EINVAL;
	}
	eq = strchr(p, '=');
	if (*p == '[' || eq == NULL || eq == p) {
		config_msg("cuckooflow: %s:%u: want [section] or key = "
			"value (line %u is \"%.80s\")\n", path, n, n, p);
		return -EINVAL;
	}
	cut_comment(eq + 1);
	*eq = '\0';
	key = trim(p);
	value = trim(eq + 1);
	if (*section == NULL) {
		config_msg("cuckooflow: %s:%u: %s: before any [section]\n",
			path, n, key);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < NB_DEFS; i++)
		if (defs[i].section == *section &&
				strcmp(defs[i].key, key) == 0)
			d = &defs[i];
	if (d == NULL) {
		config_msg("cuckooflow: %s:%u: unknown key [%s] %s (see "
			"config/cuckooflow.ini)\n", path, n, *section, key);
		return -EINVAL;
	}
	if (first_line[d - defs] != 0) {
		config_msg("cuckooflow: %s:%u: [%s] %s set again (first "
			"at line %u)\n", path, n, *section, key,
			first_line[d - defs]);
		return -EINVAL;
	}
	first_line[d - defs] = n;
	snprintf(where, sizeof(where), "%s:%u: [%s] %s =", path, n, *section,
		key);
	return set_value(c, d, value, where);
}

static int
load_file(struct parse_ctx *c, const char *path)
{
	unsigned int first_line[NB_DEFS] = { 0 };
	const char *section = NULL;
	char line[CFG_LINE_MAX + 1], err[PATH_MAX + 128];
	size_t len, pos = 0;
	unsigned int n = 0;
	char *buf;
	int ret = 0;

	buf = cfu_file_read(path, CFG_FILE_MAX, &len, err, sizeof(err));
	if (buf == NULL) {
		ret = -errno;
		config_msg("cuckooflow: --cfg %s\n", err);
		return ret;
	}
	while (pos < len && ret == 0) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl != NULL ? (size_t)(nl - buf) : len;
		const char *nul = memchr(buf + pos, '\0', end - pos);

		n++;
		if (end - pos > CFG_LINE_MAX) {
			config_msg("cuckooflow: %s:%u: longer than %d "
				"bytes\n", path, n, CFG_LINE_MAX);
			ret = -EINVAL;
		} else if (nul != NULL) {
			config_msg("cuckooflow: %s:%u: a NUL byte "
				"(column %zu)\n", path, n,
				(size_t)(nul - buf) - pos + 1);
			ret = -EINVAL;
		} else {
			memcpy(line, buf + pos, end - pos);
			line[end - pos] = '\0';
			ret = load_line(c, path, n, line, &section,
				first_line);
		}
		pos = end + 1;
	}
	free(buf);
	return ret;
}

/*
 * --config "(port,queue,lcore)[,(port,queue,lcore)...]", as l3fwd's;
 * spaces allowed. Only the syntax and the ranges here: ports, queues and
 * lcores are checked against the EAL's once it has them.
 */
static int
parse_queue_map(struct app_config *cfg)
{
	const char *p = cfg->queue_map_text;

	cfg->nb_queue_map = 0;
	while (*p != '\0') {
		unsigned long v[3];
		const char *at = p;
		char *end;

		while (*p == ' ')
			p++;
		if (*p++ != '(')
			goto bad;
		for (int k = 0; k < 3; k++) {
			while (*p == ' ')
				p++;
			if (*p < '0' || *p > '9')
				goto bad;
			errno = 0;
			v[k] = strtoul(p, &end, 10);
			p = end;
			while (*p == ' ')
				p++;
			if (errno != 0 || *p++ != (k < 2 ? ',' : ')'))
				goto bad;
		}
		if (v[0] >= RTE_MAX_ETHPORTS || v[1] > UINT16_MAX ||
				v[2] > UINT16_MAX) {
			config_msg("cuckooflow: --config: (%lu,%lu,%lu): "
				"port, queue or lcore out of range\n", v[0],
				v[1], v[2]);
			return -EINVAL;
		}
		if (cfg->nb_queue_map == APP_MAX_QUEUE_MAP) {
			config_msg("cuckooflow: --config: more than %d "
				"entries\n", APP_MAX_QUEUE_MAP);
			return -EINVAL;
		}
		cfg->queue_map[cfg->nb_queue_map++] = (struct app_queue_map){
			(uint16_t)v[0], (uint16_t)v[1], (uint16_t)v[2] };
		while (*p == ' ')
			p++;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			goto bad;
		continue;
bad:
		config_msg("cuckooflow: --config: at \"%.24s\": want "
			"(port,queue,lcore)[,(port,queue,lcore)...]\n", at);
		return -EINVAL;
	}
	if (cfg->queue_map_text[0] != '\0' && cfg->nb_queue_map == 0) {
		config_msg("cuckooflow: --config: no entry\n");
		return -EINVAL;
	}
	return 0;
}

/* A list of port ids and ranges ("0,2-3") into a mask; "" is none. */
static int
parse_ports(const char *text, const char *opt, uint64_t *mask)
{
	const char *p = text;

	*mask = 0;
	while (*p != '\0') {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*p))
			goto bad;
		lo = strtoul(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				goto bad;
			hi = strtoul(end + 1, &end, 10);
		}
		if (lo > hi || hi >= 64 || hi >= RTE_MAX_ETHPORTS) {
			config_msg("cuckooflow: --%s %s: port ids 0..%u, "
				"ranges low-high\n", opt, text,
				RTE_MAX_ETHPORTS < 64 ? RTE_MAX_ETHPORTS - 1 : 63);
			return -EINVAL;
		}
		for (unsigned long k = lo; k <= hi; k++)
			*mask |= UINT64_C(1) << k;
		p = end;
		if (*p == ',' && p[1] != '\0')
			p++;
		else if (*p != '\0')
			goto bad;
	}
	return 0;
bad:
	config_msg("cuckooflow: --%s %s: want a list of port ids and "
		"ranges, such as 0,2-3\n", opt, text);
	return -EINVAL;
}

/* Firewall mode's options, together (ports are checked against the
 * devices later, in ports.c). */
/* A firewall policy (--firewall-unparsed, --firewall-nd): given only in
 * firewall mode; auto settles to @p auto_is. 0, or -EINVAL said. */
static int
fw_policy_settle(const struct app_config *cfg, enum app_unparsed *policy,
		const char *option, enum app_unparsed auto_is)
{
	if (*policy != APP_UNPARSED_AUTO && !app_config_firewall(cfg)) {
		config_msg("cuckooflow: --%s %s: only with --inside and "
			"--outside\n", option, *policy == APP_UNPARSED_PASS ?
			"pass" : "drop");
		return -EINVAL;
	}
	if (*policy == APP_UNPARSED_AUTO)
		*policy = auto_is;
	return 0;
}

static int
check_firewall(struct app_config *cfg)
{
	uint64_t both;
	int ret;

	ret = parse_ports(cfg->inside_text, "inside", &cfg->inside_mask);
	if (ret == 0)
		ret = parse_ports(cfg->outside_text, "outside",
			&cfg->outside_mask);
	if (ret < 0)
		return ret;
	if ((cfg->inside_mask == 0) != (cfg->outside_mask == 0)) {
		config_msg("cuckooflow: --%s given without --%s: "
			"firewall mode needs both roles\n",
			cfg->inside_mask ? "inside" : "outside",
			cfg->inside_mask ? "outside" : "inside");
		return -EINVAL;
	}
	both = cfg->inside_mask & cfg->outside_mask;
	if (both != 0) {
		config_msg("cuckooflow: port %d is both --inside and "
			"--outside\n", __builtin_ctzll(both));
		return -EINVAL;
	}
	if (app_config_firewall(cfg) && cfg->mode != APP_MODE_FORWARD) {
		config_msg("cuckooflow: --inside/--outside need --mode "
			"forward\n");
		return -EINVAL;
	}
	if (cfg->allow[0] != '\0' && !app_config_firewall(cfg)) {
		config_msg("cuckooflow: --allow %s: only with --inside "
			"and --outside\n", cfg->allow);
		return -EINVAL;
	}
	if (fw_policy_settle(cfg, &cfg->firewall_unparsed, "firewall-unparsed",
			APP_UNPARSED_DROP) < 0 || fw_policy_settle(cfg,
			&cfg->firewall_nd, "firewall-nd", APP_UNPARSED_PASS) < 0)
		return -EINVAL;
	if (cfg->frag_datagrams == 0 && cfg->frag_hold !=
			CFLOW_FRAG_HOLD_DEFAULT) {
		config_msg("cuckooflow: --frag-hold needs fragments followed "
			"(--frag-datagrams off)\n");
		return -EINVAL;
	}
	if (cfg->new_flow_burst != 0 && cfg->new_flow_rate == 0) {
		config_msg("cuckooflow: --new-flow-burst needs "
			"--new-flow-rate\n");
		return -EINVAL;
	}
	if (cfg->emergency_load == 0 && cfg->emergency_low != 0) {
		config_msg("cuckooflow: --emergency-low needs "
			"--emergency-load\n");
		return -EINVAL;
	}
	if (cfg->emergency_load != 0 && cfg->emergency_low >=
			cfg->emergency_load) {
		config_msg("cuckooflow: --emergency-low %" PRIu64 " is "
			"not below --emergency-load %" PRIu64 "\n",
			cfg->emergency_low, cfg->emergency_load);
		return -EINVAL;
	}
	if ((cfg->mirror_port == APP_NO_PORT) != (cfg->mirror_first == 0)) {
		config_msg("cuckooflow: --%s needs --%s\n",
			cfg->mirror_first ? "mirror-first" : "mirror-port",
			cfg->mirror_first ? "mirror-port" : "mirror-first");
		return -EINVAL;
	}
	if (cfg->mirror_first != 0 && cfg->mode != APP_MODE_FORWARD) {
		config_msg("cuckooflow: --mirror-port needs --mode "
			"forward\n");
		return -EINVAL;
	}
	if (cfg->mirror_port != APP_NO_PORT &&
			((cfg->inside_mask | cfg->outside_mask) >>
			 cfg->mirror_port & 1)) {
		config_msg("cuckooflow: --mirror-port %" PRIu64 " has a "
			"firewall role: want a port of its own\n",
			cfg->mirror_port);
		return -EINVAL;
	}
	return 0;
}

/* Flow records' options, together. */
static int
check_records(const struct app_config *cfg)
{
	if (cfg->records == APP_RECORDS_OFF && cfg->ipfix[0] != '\0') {
		config_msg("cuckooflow: --ipfix %s exports flow records: not "
			"with --records off\n", cfg->ipfix);
		return -EINVAL;
	}
	if (app_config_records(cfg) && cfg->age_bits != 32) {
		config_msg("cuckooflow: --records: needs --age-bits 32 (a "
			"record's active timeout takes 8 bits of the state)\n");
		return -EINVAL;
	}
	if (app_config_records(cfg) && cfg->events[0] == '\0' &&
			cfg->ipfix[0] == '\0') {
		config_msg("cuckooflow: --records on: with --events FILE or "
			"--ipfix HOST:PORT, where the records go\n");
		return -EINVAL;
	}
	return 0;
}

/*
 * --state-file is written at the end of the run, through a temporary
 * file beside it: its directory must exist and be writable now.
 */
static int
check_state_dir(const char *path)
{
	char dir[sizeof(((struct app_config *)0)->state_file)];
	struct stat sb;

	if (path[0] == '\0')
		return 0;
	/* the option's length bound: it fits */
	(void)cfu_path_dir(path, dir, sizeof(dir));
	if (path[strlen(path) - 1] == '/' || (stat(path, &sb) == 0 &&
			!S_ISREG(sb.st_mode))) {
		config_msg("cuckooflow: --state-file %s: want a regular file "
			"(it is replaced at exit)\n", path);
		return -EINVAL;
	}
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
			access(dir, W_OK | X_OK) != 0) {
		config_msg("cuckooflow: --state-file %s: directory %s: %s\n",
			path, dir, stat(dir, &sb) != 0 ? strerror(errno) :
			!S_ISDIR(sb.st_mode) ? "not a directory" :
			"not writable");
		return -EINVAL;
	}
	return 0;
}

/*
 * --stats-json is written at the end of the run: check now that it can
 * be, without truncating a file that is there (opened for append) or
 * leaving one that was not (created, then removed). A FIFO is left to
 * the end (its reader may come later: app_stats_write_json() refuses it
 * then without one, never waiting); any other kind of file is refused.
 * @p where: "--stats-json", or the file's line.
 */
static int
check_output(const char *path, const char *where)
{
	size_t len = strlen(path);
	struct stat sb;
	int fd;

	if (len == 0)
		return 0;
	if (path[len - 1] == '/' || (stat(path, &sb) == 0 &&
			S_ISDIR(sb.st_mode))) {
		config_msg("cuckooflow: %s %s: names a directory, want a "
			"file to write the counters to\n", where, path);
		return -EINVAL;
	}
	if (stat(path, &sb) == 0) {
		if (S_ISFIFO(sb.st_mode))
			return 0;
		if (!S_ISREG(sb.st_mode)) {
			config_msg("cuckooflow: %s %s: is %s, not a regular "
				"file or FIFO\n", where, path,
				cfu_file_kind(sb.st_mode));
			return -EINVAL;
		}
		fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY |
			O_CLOEXEC);
	} else if (errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY |
			O_CLOEXEC, 0666);
		if (fd >= 0)
			unlink(path);
		else if (errno == EEXIST) /* created meanwhile */
			return 0;
	} else {
		fd = -1;
	}
	if (fd < 0) {
		int err = errno;

		config_msg("cuckooflow: %s %s: cannot write the counters "
			"there: %s\n", where, path, strerror(err));
		return -err;
	}
	close(fd);
	return 0;
}

/*
 * The first pass over the arguments: only the options read first (--cfg),
 * however getopt_long reads them (--cfg F, --cfg=F, an abbreviation:
 * --cf F), and only once. Returns 1 if given (even empty: then refused
 * by the read), 0 if not, or a negative errno.
 */
static int
find_cfg(struct parse_ctx *c, int argc, char **argv,
		const struct option *longopts)
{
	bool seen = false;
	int opt, ret;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		const struct option_def *d;

		if (opt < OPT_VAL(0) || !defs[opt - OPT_VAL(0)].first)
			continue;
		d = &defs[opt - OPT_VAL(0)];
		if (seen) {
			config_msg("cuckooflow: --%s given twice: %s, "
				"then %s\n", d->name, c->cfg->cfg_file, optarg);
			return -EINVAL;
		}
		seen = true;
		ret = set_typed(c->cfg, d, optarg, "--cfg", NULL);
		if (ret < 0)
			return ret;
	}
	return seen;
}

/* Defaults, then the --cfg file, then the rest of the command line. */
static int
config_parse(struct app_config *cfg, int argc, char **argv)
{
	struct option longopts[NB_DEFS + 3];
	struct parse_ctx c = { .cfg = cfg, .where_json = "--stats-json" };
	int opt, ret;

	app_config_defaults(cfg);
	for (unsigned int i = 0; i < NB_DEFS; i++)
		/* Each its own val: else glibc takes an ambiguous
		 * abbreviation (--c) for the first option it matches. */
		longopts[i] = (struct option){ defs[i].name,
			defs[i].type == OPT_FLAG ? no_argument :
			required_argument, NULL, OPT_VAL(i) };
	longopts[NB_DEFS] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[NB_DEFS + 1] = (struct option){ "version", no_argument, NULL,
		'V' };
	longopts[NB_DEFS + 2] = (struct option){ NULL, 0, NULL, 0 };

	ret = find_cfg(&c, argc, argv, longopts);
	if (ret == 1)
		ret = load_file(&c, cfg->cfg_file);
	if (ret < 0)
		return ret;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		const struct option_def *d;
		char where[64];

		if (opt == 'h') {
			usage(argv[0]);
			return APP_CONFIG_HELP;
		}
		if (opt == 'V') {
			printf("%s\n", app_config_version());
			return APP_CONFIG_HELP;
		}
		if (opt < OPT_VAL(0)) {
			config_msg("cuckooflow: %s: %s (see --help)\n",
				argv[optind - 1], opt == ':' ? "needs a value" :
				"unknown option, or an ambiguous abbreviation");
			return -EINVAL;
		}
		d = &defs[opt - OPT_VAL(0)];
		snprintf(where, sizeof(where), "--%s", d->name);
		if (d->type == OPT_FLAG) {
			field_set(cfg, d, 1);
			continue;
		}
		ret = set_value(&c, d, optarg, where);
		if (ret < 0)
			return ret;
	}
	if (optind < argc) {
		config_msg("cuckooflow: %s: unexpected argument\n",
			argv[optind]);
		return -EINVAL;
	}
	ret = parse_queue_map(cfg);
	if (ret < 0)
		return ret;
	ret = check_firewall(cfg);
	if (ret < 0)
		return ret;
	/* A firewall's spoofed outside packets pass at the cuckoo filter's
	 * false positive rate: wider fingerprints there (docs/firewall.md). */
	if (cfg->fp_bits == 0)
		cfg->fp_bits = app_config_firewall(cfg) ?
			APP_FIREWALL_FP_BITS : CF_DEFAULT_FP_BITS;
	if (cfg->stats_json_period[0] != '\0' && cfg->stats_period_s == 0) {
		config_msg("cuckooflow: --stats-json-period %s: needs "
			"--stats-period N (1 to 3600 s), the period\n",
			cfg->stats_json_period);
		return -EINVAL;
	}
	ret = check_records(cfg);
	if (ret < 0)
		return ret;
	ret = check_state_dir(cfg->state_file);
	if (ret < 0)
		return ret;
	if (cfg->state_interval_s != 0 && cfg->state_file[0] == '\0') {
		config_msg("cuckooflow: --state-interval %" PRIu64 ": needs "
			"--state-file FILE, where the tables are saved\n",
			cfg->state_interval_s);
		return -EINVAL;
	}
	return check_output(cfg->stats_json, c.where_json);
}

int
app_config_parse(struct app_config *cfg, int argc, char **argv, char *err,
		size_t err_len)
{
	int ret;

	msg_buf = err;
	msg_len = err_len;
	msg_used = 0;
	if (err != NULL && err_len > 0)
		err[0] = '\0';
	ret = config_parse(cfg, argc, argv);
	msg_buf = NULL;
	if (ret < 0)
		errno = -ret;
	return ret;
}

void
app_config_visit(const struct app_config *cfg, app_config_visit_fn fn,
		void *arg)
{
	for (unsigned int i = 0; i < NB_DEFS; i++) {
		char buf[320];

		if (defs[i].section == NULL)
			continue;
		print_value(cfg, &defs[i], buf, sizeof(buf));
		fn(defs[i].section, defs[i].key, buf, arg);
	}
}

bool
app_config_is_option(const char *arg)
{
	size_t len;

	if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
		return false;
	arg += 2;
	len = strcspn(arg, "=");
	/* the whole name: abbreviations may be the EAL's (--block) */
	for (unsigned int i = 0; i < NB_DEFS; i++)
		if (strlen(defs[i].name) == len &&
				strncmp(defs[i].name, arg, len) == 0)
			return true;
	return false;
}

const char *
app_config_version(void)
{
	static char text[128];

	/* the DPDK built against (config.c links no DPDK library) */
	snprintf(text, sizeof(text), "cuckooflow %s (DPDK %d.%02d.%d)",
		CF_VERSION, RTE_VER_YEAR, RTE_VER_MONTH, RTE_VER_MINOR);
	return text;
}
