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

#include <rte_config.h>

#include "cfutil.h"
#include "config.h"

enum opt_type {
	OPT_UINT,   /* decimal or 0x hex, within [min, max] */
	OPT_FLAG,   /* no argument on the command line; 0/1 in the file */
	OPT_CHOICE, /* one of the names in choices[] */
	OPT_STRING,
};

struct option_def {
	const char *name;      /* --name */
	const char *section;   /* INI section, NULL: command line only */
	const char *key;       /* INI key */
	enum opt_type type;
	size_t offset;         /* in struct app_config */
	uint64_t min, max;
	const char *const *choices;
	const char *defval;
	const char *help;
	const char *zero_word;  /* OPT_UINT: a word that stands for 0 */
	size_t size;            /* OPT_STRING: the field's size */
	const char *arg;        /* OPT_STRING: its name in --help */
	/* OPT_CHOICE: the number each choice stands for, stored in the
	 * field; NULL: the choice's index. */
	const uint64_t *choice_values;
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

#define OFF(f) offsetof(struct app_config, f)
#define STR(f) OFF(f), 0, 0, NULL
#define SIZE(f) .size = sizeof(((struct app_config *)0)->f)
/* The longest timeout or linger, s: 26 days, what 32-bit state holds
 * (16.8 ms ticks, a quarter of the tick range; lib/cflow). */
#define MAX_TIMEOUT_S (86400 * 26)

/* The fields after help are optional: left out, they are zero. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct option_def defs[] = {
	{ "portmask", "ports", "portmask", OPT_UINT, OFF(portmask), 1,
		UINT64_MAX, NULL, "all", "ports to use: a hex bitmask of port "
		"ids (0x or not: 10 is port 4), or all",
		.zero_word = "all" },
	{ "rxq", "ports", "rxq", OPT_UINT, OFF(rxq), 1, 1024, NULL, "auto",
		"rx queues per port (auto: one per worker, or each rx_pcap "
		"of a net_pcap port)", .zero_word = "auto" },
	{ "txq", "ports", "txq", OPT_UINT, OFF(txq), 1, 1024, NULL, "auto",
		"tx queues per port (auto: one per worker in forward mode, "
		"where each worker needs its own)", .zero_word = "auto" },
	{ "rxd", "ports", "rxd", OPT_UINT, OFF(rxd), 32, 32768, NULL, "1024",
		"descriptors per rx queue" },
	{ "txd", "ports", "txd", OPT_UINT, OFF(txd), 32, 32768, NULL, "1024",
		"descriptors per tx queue" },
	{ "max-pkt-len", "ports", "max_pkt_len", OPT_UINT, OFF(max_pkt_len),
		64, 16128, NULL, "1518", "largest frame received, in bytes "
		"(jumbo frames: mbufs get the room)" },
	{ "burst", "ports", "burst", OPT_UINT, OFF(burst), 1, CF_BULK_MAX,
		NULL, "32", "packets per rx burst" },
	{ "mbufs", "ports", "mbufs", OPT_UINT, OFF(mbufs), 0, 1u << 24, NULL,
		"0", "mbufs in the pool (0: enough for every ring and lcore)" },
	{ "mode", "ports", "mode", OPT_CHOICE, OFF(mode), 0, 0, modes,
		"monitor", "monitor: count and drop; forward: to the paired "
		"port" },
	{ "flows", "flows", "flows", OPT_UINT, OFF(flows), 1, CF_MAX_CAPACITY,
		NULL, "1048576", "flow table capacity per lcore" },
	{ "fp-bits", "flows", "fp_bits", OPT_UINT, OFF(fp_bits), 4, 32, NULL,
		"auto", "fingerprint bits (FPR ~ 8 * load / 2^bits; auto: 12, "
		"32 in firewall mode: docs/firewall.md)", .zero_word = "auto" },
	{ "age-bits", "flows", "age_bits", OPT_CHOICE, OFF(value_bits), 0, 0,
		age_widths, "32", "bits of state per flow: 32 (16.8 ms ticks), "
		"or 16 (ticks of ~1/2000 of the longest timeout; 2 bytes "
		"less per flow)", .choice_values = age_width_bits },
	{ "hash", "flows", "hash", OPT_CHOICE, OFF(hash), 0, 0, hashes,
		"xxh3", "xxh3 of the 5-tuple, or the NIC's rss hash" },
	{ "hash-seed", "flows", "hash_seed", OPT_UINT, OFF(hash_seed), 0,
		UINT64_MAX, NULL, "random", "hash seed, for reproducible runs" },
	{ "clock", "flows", "clock", OPT_CHOICE, OFF(clock), 0, 0, clocks,
		"tsc", "tsc, or pkt: the capture time net_pcap attaches" },
	{ "idle-timeout", NULL, NULL, OPT_UINT, 0, 1, MAX_TIMEOUT_S, NULL,
		"(per class)",
		"idle timeout in s for every protocol class" },
	{ "timeout-tcp", "timeouts", "tcp", OPT_UINT,
		OFF(timeout_s[CFLOW_CLASS_TCP]), 1, MAX_TIMEOUT_S, NULL, "300",
		"TCP idle timeout, s" },
	{ "timeout-udp", "timeouts", "udp", OPT_UINT,
		OFF(timeout_s[CFLOW_CLASS_UDP]), 1, MAX_TIMEOUT_S, NULL, "60",
		"UDP and UDP-Lite idle timeout, s" },
	{ "timeout-icmp", "timeouts", "icmp", OPT_UINT,
		OFF(timeout_s[CFLOW_CLASS_ICMP]), 1, MAX_TIMEOUT_S, NULL, "30",
		"ICMP and ICMPv6 idle timeout, s" },
	{ "timeout-other", "timeouts", "other", OPT_UINT,
		OFF(timeout_s[CFLOW_CLASS_OTHER]), 1, MAX_TIMEOUT_S, NULL, "60",
		"idle timeout of other protocols, s" },
	{ "close-linger", "flows", "close_linger", OPT_UINT,
		OFF(close_linger_s), 0, MAX_TIMEOUT_S, NULL, "10",
		"s a closed TCP flow lingers after its last packet (0: removed "
		"at FIN/RST)" },
	{ "full-policy", "flows", "full_policy", OPT_CHOICE, OFF(full_policy),
		0, 0, policies, "evict", "full table: evict, or leave the new "
		"flow untracked" },
	{ "exact-size", "flows", "exact_size", OPT_FLAG, OFF(exact_size), 0,
		1, NULL, "0", "size the table to --flows exactly, not to the "
		"next power of two (up to half the memory)" },
	{ "table-layout", "flows", "table_layout", OPT_CHOICE,
		OFF(table_layout), 0, 0, layouts, "auto", "each flow's state "
		"in its bucket's cache line (interleaved: a packet reads two "
		"lines, not three) or in an array of its own (plain); auto: "
		"interleaved where it takes no more memory (16-bit "
		"fingerprints and state, or 32 and 32)" },
	{ "vlan-in-key", "flows", "vlan_in_key", OPT_FLAG, OFF(vlan_in_key),
		0, 1, NULL, "0", "key flows by their VLAN ids too" },
	{ "decap", "flows", "decap", OPT_STRING, STR(decap_text), "",
		"tunnels to decapsulate, keying flows by the inner 5-tuple: "
		"a comma-separated list of vxlan, geneve, gre, gtpu, or all "
		"(docs/tunnels.md)", SIZE(decap_text), .arg = "LIST" },
	{ "exit-on-eof", "run", "exit_on_eof", OPT_FLAG, OFF(exit_on_eof), 0,
		1, NULL, "0", "stop when every rx_pcap queue is exhausted" },
	{ "stats-period", "run", "stats_period", OPT_UINT, OFF(stats_period_s),
		0, 3600, NULL, "0", "print a timestamped snapshot of the "
		"counters with per-second rates and table load every N s (0: "
		"at exit only)" },
	{ "stats-json", "run", "stats_json", OPT_STRING, STR(stats_json),
		"", "write the final counters as JSON to FILE",
		SIZE(stats_json) },
	{ "stats-json-period", "run", "stats_json_period", OPT_STRING,
		STR(stats_json_period), "", "append a JSON object (time, "
		"rates, counters) every --stats-period N s to FILE: JSON lines "
		"(docs/usage.md)", SIZE(stats_json_period) },
	{ "state-file", "run", "state_file", OPT_STRING, STR(state_file), "",
		"warm restart: save every worker's flow table to FILE at "
		"exit, take it over at start if saved by a run like this one "
		"(docs/usage.md)", SIZE(state_file) },
	{ "events", "events", "json", OPT_STRING, STR(events), "",
		"append a JSON line for each new flow and each FIN/RST close "
		"to FILE (reopened when moved away: logrotate)",
		SIZE(events) },
	{ "new-flow-pcap", "events", "new_flow_pcap", OPT_STRING,
		STR(new_flow_pcap), "", "write the first packet of each new "
		"flow to FILE, pcapng (rte_pcapng)", SIZE(new_flow_pcap) },
	{ "ipfix", "events", "ipfix", OPT_STRING, STR(ipfix), "",
		"export the events as IPFIX over UDP to HOST:PORT "
		"([ADDR]:PORT for IPv6)", SIZE(ipfix), .arg = "HOST:PORT" },
	{ "ipfix-domain", "events", "ipfix_domain", OPT_UINT,
		OFF(ipfix_domain), 0, UINT32_MAX, NULL, "1", "the IPFIX "
		"observation domain id of the messages" },
	{ "top-sources", "top", "counters", OPT_UINT, OFF(top_sources), 0,
		1u << 24, NULL, "1024", "counters of each worker's sketch of "
		"the sources opening the most flows (0: off; "
		"/cuckooflow/top_new_sources)" },
	{ "top-period", "top", "period", OPT_UINT, OFF(top_period_s), 1, 3600,
		NULL, "60", "seconds the top sources are counted over before "
		"they are reported and counted anew" },
	{ "event-ring", "events", "ring", OPT_UINT, OFF(event_ring), 64,
		1u << 24, NULL, "16384", "events each worker's ring holds "
		"for the main lcore; a full ring drops them (events_dropped)" },
	{ "affinity", "workers", "affinity", OPT_CHOICE, OFF(affinity), 0, 0,
		affinities, "auto", "how a flow reaches its one worker: rss "
		"(symmetric RSS on every port), handoff (software hash and "
		"rings), auto (rss where every port can)" },
	{ "config", "workers", "config", OPT_STRING, STR(queue_map_text), "",
		"rx queue map (port,queue,lcore)[,...], as l3fwd's (default: "
		"queue i of every port on worker i)", SIZE(queue_map_text),
		.arg = "MAP" },
	{ "handoff-full", "workers", "handoff_full", OPT_CHOICE,
		OFF(handoff_full), 0, 0, full_policies, "auto", "an owner's "
		"full ring: wait, or drop and count (auto: wait when every "
		"port replays a capture)" },
	{ "handoff-ring", "workers", "handoff_ring", OPT_UINT,
		OFF(handoff_ring), 64, 65536, NULL, "1024", "packets each "
		"worker-to-worker ring holds" },
	{ "blocklist", "blocklist", "blocklist", OPT_STRING, STR(blocklist), "",
		"drop packets matching this list (text or compiled)",
		SIZE(blocklist) },
	{ "blocklist-unparsed", "blocklist", "blocklist_unparsed", OPT_CHOICE,
		OFF(blocklist_unparsed), 0, 0, unparsed_policies, "drop",
		"with --blocklist, an IP packet whose addresses (or, if the "
		"list has flows, ports) cannot be read: drop (fail closed) or "
		"pass" },
	{ "inside", "firewall", "inside", OPT_STRING, STR(inside_text), "",
		"firewall mode: ports on the inside, whose packets may open "
		"flows: a list of port ids and ranges (0,2-3)",
		SIZE(inside_text), .arg = "PORTS" },
	{ "outside", "firewall", "outside", OPT_STRING, STR(outside_text), "",
		"firewall mode: ports on the outside, whose packets pass only "
		"on a tracked flow (or an --allow rule)", SIZE(outside_text),
		.arg = "PORTS" },
	{ "tcp-strict", "firewall", "tcp_strict", OPT_FLAG, OFF(tcp_strict),
		0, 1, NULL, "0", "a TCP flow is opened only by a SYN without "
		"ACK (else any packet of it)" },
	{ "allow", "firewall", "allow", OPT_STRING, STR(allow), "",
		"firewall mode: services outside hosts may open, lines of "
		"'PROTO ADDR[/LEN] PORT|any'", SIZE(allow) },
	{ "firewall-unparsed", "firewall", "firewall_unparsed", OPT_CHOICE,
		OFF(firewall_unparsed), 0, 0, fw_unparsed_policies, "auto",
		"firewall mode: an outside frame the parser cannot take to a "
		"flow (IP behind 3+ VLAN tags, MPLS, PPPoE, LLC/SNAP, a "
		"tunnel's non-IP frame, other non-IP but ARP): drop or pass "
		"(auto: drop)", .choice_values = fw_unparsed_values },
	{ "new-flow-rate", "flows", "new_flow_rate", OPT_UINT,
		OFF(new_flow_rate), 1, 1000000000, NULL, "off", "new flows "
		"each worker admits per second, past --new-flow-burst (off: "
		"no limit)", .zero_word = "off" },
	{ "new-flow-burst", "flows", "new_flow_burst", OPT_UINT,
		OFF(new_flow_burst), 1, 1000000000, NULL, "rate",
		"new flows admitted at once before the rate applies (rate: "
		"as many as --new-flow-rate)", .zero_word = "rate" },
	{ "emergency-load", "flows", "emergency_load", OPT_UINT,
		OFF(emergency_load), 1, 100, NULL, "off", "table load, % of "
		"--flows, above which idle timeouts shrink to "
		"--emergency-timeout (off: never)", .zero_word = "off" },
	{ "emergency-low", "flows", "emergency_low", OPT_UINT,
		OFF(emergency_low), 1, 99, NULL, "auto", "load, %, below "
		"which the emergency ends (auto: --emergency-load less 10)",
		.zero_word = "auto" },
	{ "emergency-timeout", "flows", "emergency_timeout", OPT_UINT,
		OFF(emergency_timeout_s), 1, MAX_TIMEOUT_S, NULL, "10",
		"idle timeout and linger, s, of every class in an emergency" },
	{ "mirror-port", "mirror", "port", OPT_UINT, OFF(mirror_port), 0,
		RTE_MAX_ETHPORTS - 1, NULL, "none", "send a copy of each "
		"flow's first --mirror-first packets out of this port (forward "
		"mode; not a forwarding port)" },
	{ "mirror-first", "mirror", "first", OPT_UINT, OFF(mirror_first), 1,
		254, NULL, "off", "packets of each flow, both directions "
		"together, copied to --mirror-port", .zero_word = "off" },
	{ "cfg", NULL, NULL, OPT_STRING, STR(cfg_file), "",
		"read settings from an INI FILE first", SIZE(cfg_file) },
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

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [options]\n\n", prog);
	for (unsigned int i = 0; i < NB_DEFS; i++) {
		char left[64];

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
		printf("  %-30s %s (default %s)\n", left, defs[i].help,
			defs[i].defval[0] ? defs[i].defval : "none");
	}
	printf("  %-30s %s\n\nConfig file keys: see config/cuckooflow.ini.\n",
		"-h, --help", "this text");
}

static uint64_t *
field(struct app_config *cfg, const struct option_def *d)
{
	return (uint64_t *)(void *)((char *)cfg + d->offset);
}

/* --decap: a comma-separated list of tunnel names, "all", or "" (none). */
static int
set_decap(struct app_config *cfg, const char *value, const char *where)
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

	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		unsigned int k;

		for (k = 0; k < sizeof(tunnels) / sizeof(tunnels[0]); k++)
			if (strlen(tunnels[k].name) == n &&
					strncmp(p, tunnels[k].name, n) == 0)
				break;
		if (k == sizeof(tunnels) / sizeof(tunnels[0])) {
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
	strcpy(cfg->decap_text, value);
	cfg->decap = mask;
	return 0;
}

/* Set one option from text; where says "--name" or "file:section.key". */
static int
set_value(struct app_config *cfg, const struct option_def *d,
		const char *value, const char *where)
{
	unsigned long long v;
	char *end;
	bool hex;

	switch (d->type) {
	case OPT_STRING:
		/* Refused whole, never cut to fit. */
		if (strlen(value) >= d->size) {
			config_msg("cuckooflow: %s %.40s...: %zu "
				"characters, longer than the %zu allowed\n",
				where, value, strlen(value), d->size - 1);
			return -EINVAL;
		}
		if (d->offset == OFF(decap_text))
			return set_decap(cfg, value, where);
		strcpy((char *)field(cfg, d), value);
		return 0;
	case OPT_CHOICE:
		for (unsigned int k = 0; d->choices[k] != NULL; k++)
			if (strcmp(value, d->choices[k]) == 0) {
				*field(cfg, d) = d->choice_values != NULL ?
					d->choice_values[k] : k;
				return 0;
			}
		config_msg("cuckooflow: %s %s: want one of", where, value);
		for (unsigned int k = 0; d->choices[k] != NULL; k++)
			config_msg(" %s", d->choices[k]);
		config_msg("\n");
		return -EINVAL;
	case OPT_FLAG:
	case OPT_UINT:
		if (d->offset == OFF(mirror_port) &&
				strcmp(value, "none") == 0) {
			*field(cfg, d) = APP_NO_PORT;
			return 0;
		}
		/* A word for 0 ("all" ports, "auto"): the number 0
		 * itself is refused below. */
		if (d->zero_word != NULL && strcmp(value, d->zero_word) == 0) {
			*field(cfg, d) = 0;
			return 0;
		}
		errno = 0;
		/* A port mask is hex, 0x or not, as testpmd's and l3fwd's.
		 * (By name: --idle-timeout has no field, so offset 0 too.) */
		hex = strcmp(d->name, "portmask") == 0;
		v = strtoull(value, &end, hex ? 16 : 0);
		if (value[0] == '-' || value[0] == '\0' || *end != '\0' ||
				errno != 0 || v < d->min || v > d->max) {
			if (hex)
				config_msg("cuckooflow: %s %s: want a hex "
					"bitmask of port ids (1 is port 0, 0x3 "
					"ports 0 and 1), or all\n", where,
					value);
			else
				config_msg("cuckooflow: %s %s: want an "
					"integer in %" PRIu64 "..%" PRIu64 "%s%s"
					"\n", where, value, d->min, d->max,
					d->zero_word != NULL ? ", or " : "",
					d->zero_word != NULL ? d->zero_word :
					"");
			return -EINVAL;
		}
		if (strcmp(d->name, "idle-timeout") == 0) {
			for (int c = 0; c < CFLOW_CLASS_MAX; c++)
				cfg->timeout_s[c] = v;
			return 0;
		}
		*field(cfg, d) = v;
		if (strcmp(d->name, "hash-seed") == 0)
			cfg->hash_seed_set = true;
		return 0;
	}
	return -EINVAL;
}

/* ------------------------------------------------------- the INI file */

/*
 * The --cfg file, read whole and strictly: every line is blank, a ; or #
 * comment, a [section] or a key = value, and every section and key is
 * known. A section may come back (its keys add to the first's), but a
 * key may be set once. Any other line, a NUL byte, a line longer than
 * CFG_LINE_MAX, or a file over CFG_FILE_MAX is an error naming FILE:LINE.
 */
#define CFG_FILE_MAX (1u << 20)
#define CFG_LINE_MAX 4096

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
 * line that set defs[i], 0 if none yet. @p where_json gets the place
 * stats_json was set at, for the check after the command line.
 */
static int
load_line(struct app_config *cfg, const char *path, unsigned int n,
		char *text, const char **section, unsigned int *first_line,
		char *where_json, size_t where_len)
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
	if (d->offset == OFF(stats_json) && d->type == OPT_STRING)
		snprintf(where_json, where_len, "%s", where);
	return set_value(cfg, d, value, where);
}

static int
load_file(struct app_config *cfg, const char *path, char *where_json,
		size_t where_len)
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
			ret = load_line(cfg, path, n, line, &section,
				first_line, where_json, where_len);
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

/* The inline filter's options, together (ports are checked against the
 * devices later, in ports.c). */
static int
check_inline(struct app_config *cfg)
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
	if (cfg->firewall_unparsed != APP_UNPARSED_AUTO &&
			!app_config_firewall(cfg)) {
		config_msg("cuckooflow: --firewall-unparsed %s: only with "
			"--inside and --outside\n", cfg->firewall_unparsed ==
			APP_UNPARSED_PASS ? "pass" : "drop");
		return -EINVAL;
	}
	if (cfg->firewall_unparsed == APP_UNPARSED_AUTO)
		cfg->firewall_unparsed = APP_UNPARSED_DROP;
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
 * The first pass over the arguments: only --cfg, however getopt_long
 * reads it (--cfg F, --cfg=F, an abbreviation: --cf F), and only once.
 * Returns 1 if given (even empty: then refused by the read), 0 if not,
 * or a negative errno.
 */
static int
find_cfg(struct app_config *cfg, int argc, char **argv,
		const struct option *longopts)
{
	bool seen = false;
	int opt, ret;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (opt < OPT_VAL(0) || defs[opt - OPT_VAL(0)].offset !=
				OFF(cfg_file))
			continue;
		if (seen) {
			config_msg("cuckooflow: --cfg given twice: %s, "
				"then %s\n", cfg->cfg_file, optarg);
			return -EINVAL;
		}
		seen = true;
		ret = set_value(cfg, &defs[opt - OPT_VAL(0)], optarg, "--cfg");
		if (ret < 0)
			return ret;
	}
	return seen;
}

/* Defaults, then the --cfg file, then the rest of the command line. */
static int
config_parse(struct app_config *cfg, int argc, char **argv)
{
	struct option longopts[NB_DEFS + 2];
	char where_json[CFG_LINE_MAX + 320] = "--stats-json";
	int opt, ret;

	memset(cfg, 0, sizeof(*cfg));
	for (unsigned int i = 0; i < NB_DEFS; i++) {
		/* Each its own val: else glibc takes an ambiguous
		 * abbreviation (--c) for the first option it matches. */
		longopts[i] = (struct option){ defs[i].name,
			defs[i].type == OPT_FLAG ? no_argument :
			required_argument, NULL, OPT_VAL(i) };
		if (defs[i].section != NULL &&
				strcmp(defs[i].defval, "random") != 0) {
			ret = set_value(cfg, &defs[i], defs[i].defval,
				"default");
			if (ret < 0)
				return ret;
		}
	}
	longopts[NB_DEFS] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[NB_DEFS + 1] = (struct option){ NULL, 0, NULL, 0 };

	ret = find_cfg(cfg, argc, argv, longopts);
	if (ret == 1)
		ret = load_file(cfg, cfg->cfg_file, where_json,
			sizeof(where_json));
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
		if (opt < OPT_VAL(0)) {
			config_msg("cuckooflow: %s: %s (see --help)\n",
				argv[optind - 1], opt == ':' ? "needs a value" :
				"unknown option, or an ambiguous abbreviation");
			return -EINVAL;
		}
		d = &defs[opt - OPT_VAL(0)];
		snprintf(where, sizeof(where), "--%s", d->name);
		if (d->type == OPT_FLAG) {
			*field(cfg, d) = 1;
			continue;
		}
		if (d->offset == OFF(cfg_file))
			continue; /* read by find_cfg() */
		if (d->offset == OFF(stats_json))
			snprintf(where_json, sizeof(where_json), "%s", where);
		ret = set_value(cfg, d, optarg, where);
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
	ret = check_inline(cfg);
	if (ret < 0)
		return ret;
	/* A firewall's spoofed outside packets pass at the filter's false
	 * positive rate: wider fingerprints there (docs/firewall.md). */
	if (cfg->fp_bits == 0)
		cfg->fp_bits = app_config_firewall(cfg) ?
			APP_FIREWALL_FP_BITS : CF_DEFAULT_FP_BITS;
	if (cfg->stats_json_period[0] != '\0' && cfg->stats_period_s == 0) {
		config_msg("cuckooflow: --stats-json-period %s: needs "
			"--stats-period N (1 to 3600 s), the period\n",
			cfg->stats_json_period);
		return -EINVAL;
	}
	ret = check_state_dir(cfg->state_file);
	if (ret < 0)
		return ret;
	return check_output(cfg->stats_json, where_json);
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

/* The name of the choice whose field value is v. */
static const char *
choice_name(const struct option_def *d, uint64_t v)
{
	unsigned int k;

	if (d->choice_values == NULL)
		return d->choices[v];
	for (k = 0; d->choices[k + 1] != NULL; k++)
		if (d->choice_values[k] == v)
			break;
	return d->choices[k];
}

void
app_config_visit(const struct app_config *cfg, app_config_visit_fn fn,
		void *arg)
{
	for (unsigned int i = 0; i < NB_DEFS; i++) {
		const struct option_def *d = &defs[i];
		uint64_t v;
		char buf[320];

		if (d->section == NULL)
			continue;
		v = *field((struct app_config *)(uintptr_t)cfg, d);
		if (d->type == OPT_STRING)
			snprintf(buf, sizeof(buf), "%s",
				(const char *)field((struct app_config *)
				(uintptr_t)cfg, d));
		else if (d->type == OPT_CHOICE)
			snprintf(buf, sizeof(buf), "%s", choice_name(d, v));
		else if (strcmp(d->name, "hash-seed") == 0 &&
				!cfg->hash_seed_set)
			snprintf(buf, sizeof(buf), "random");
		else if (d->zero_word != NULL && v == 0)
			snprintf(buf, sizeof(buf), "%s", d->zero_word);
		else if (d->offset == OFF(mirror_port) && v == APP_NO_PORT)
			snprintf(buf, sizeof(buf), "none");
		else if (strcmp(d->name, "portmask") == 0)
			snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
		else
			snprintf(buf, sizeof(buf), "%" PRIu64, v);
		fn(d->section, d->key, buf, arg);
	}
}
