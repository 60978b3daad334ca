/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _APP_CONFIG_H_
#define _APP_CONFIG_H_

/*
 * cuckooflow's settings: defaults, then the --cfg INI file, then the
 * command line. One table (config.c) defines every option: its config
 * key, its field (of its own type), its default (lib/cflow's and
 * lib/cuckoo's where they have one), its range and its help line, and
 * for the few that need one, how it reads and prints its value.
 * config.c reads the INI file itself, strictly (docs/config.md).
 */

#include <stdbool.h>
#include <stdint.h>

#include "cflow.h"

enum app_mode {
	APP_MODE_MONITOR, /* count, then free */
	APP_MODE_FORWARD, /* count, then send to the paired port */
};

enum app_affinity {
	APP_AFFINITY_AUTO,    /* rss where every port can, else handoff */
	APP_AFFINITY_RSS,     /* symmetric RSS: track where it arrives */
	APP_AFFINITY_HANDOFF, /* hash in software, pass to the owner */
};

enum app_handoff_full {
	APP_HANDOFF_FULL_AUTO, /* wait when replaying captures, else drop */
	APP_HANDOFF_FULL_WAIT,
	APP_HANDOFF_FULL_DROP,
};

/* One entry of --config: rx queue @queue of port @port is polled by
 * lcore @lcore. */
struct app_queue_map {
	uint16_t port;
	uint16_t queue;
	uint16_t lcore;
};
#define APP_MAX_QUEUE_MAP 256

enum app_unparsed {
	APP_UNPARSED_DROP, /* fail closed */
	APP_UNPARSED_PASS,
	/* --firewall-unparsed auto: drop, in firewall mode only (settled
	 * once the options are read) */
	APP_UNPARSED_AUTO,
};

/* --table-layout: lib/cuckoo's layout of the flow tables. */
enum app_table_layout {
	APP_LAYOUT_AUTO,        /* interleaved where it costs no memory */
	APP_LAYOUT_PLAIN,
	APP_LAYOUT_INTERLEAVED,
};

enum app_clock {
	APP_CLOCK_TSC, /* the CPU's time stamp counter */
	APP_CLOCK_PKT, /* net_pcap's per-packet capture timestamp */
};

/* --records: flow records (lib/cflow's records, docs/usage.md). */
enum app_records {
	APP_RECORDS_AUTO,       /* on with --ipfix */
	APP_RECORDS_ON,
	APP_RECORDS_OFF,
};

struct app_config {
	uint64_t portmask;
	uint64_t rxq;          /* 0: auto */
	uint64_t txq;          /* 0: auto */
	uint64_t rxd;
	uint64_t txd;
	uint64_t max_pkt_len;
	uint64_t burst;
	uint64_t mbufs;        /* 0: sized from rings, queues and lcores */
	enum app_mode mode;
	uint64_t flows;        /* flow table capacity per lcore */
	uint64_t fp_bits;      /* 0 (auto) until parsed: then
				* CF_DEFAULT_FP_BITS, or APP_FIREWALL_FP_BITS */
	unsigned int age_bits; /* 32 or 16 bits of age state per flow: the
				* tracker's value_bits */
	enum cflow_hash_mode hash;
	uint64_t hash_seed;
	bool hash_seed_set;    /* else random */
	enum app_clock clock;
	uint64_t timeout_s[CFLOW_CLASS_MAX];
	uint64_t close_linger_s;
	enum cflow_full_policy full_policy;
	bool vlan_in_key;
	uint64_t decap;        /* mask of enum cflow_decap, from decap_text */
	char decap_text[64];   /* --decap, as given */
	bool exact_size;
	enum app_table_layout table_layout;
	bool exit_on_eof;
	enum app_affinity affinity;
	enum app_handoff_full handoff_full;
	uint64_t handoff_ring; /* packets per (receiver, owner) ring */
	char queue_map_text[1024]; /* --config, as given */
	struct app_queue_map queue_map[APP_MAX_QUEUE_MAP];
	unsigned int nb_queue_map; /* 0: the default map */
	uint64_t stats_period_s;
	bool stats_all;        /* every counter, per lcore, in the prints */
	char stats_json[256];
	char stats_json_period[256]; /* JSON lines, one per stats period */
	char state_file[256];  /* warm restart: flow tables saved and read */
	uint64_t state_interval_s; /* and saved every so often (0: at exit) */
	char events[256];      /* flow events as JSON lines */
	char new_flow_pcap[256]; /* each new flow's first packet, pcapng */
	uint64_t event_ring;   /* events per worker ring */
	char ipfix[256];       /* collector HOST:PORT */
	uint64_t ipfix_domain; /* observation domain id */
	enum app_records records;
	uint64_t active_timeout_s; /* 0: none */
	uint64_t records_max;  /* the key store's flows; 0: auto */
	uint64_t top_sources;  /* counters of each top-sources sketch */
	uint64_t top_period_s;
	enum app_unparsed blocklist_unparsed;
	char blocklist[256];   /* text list, or one cuckooflow-filter compiled */
	/* Firewall mode (docs/firewall.md). */
	char inside_text[256]; /* --inside, as given */
	char outside_text[256];
	uint64_t inside_mask;  /* port ids, from inside_text */
	uint64_t outside_mask;
	bool tcp_strict;       /* a TCP flow only from a SYN without ACK */
	char allow[256];       /* services outside hosts may open */
	/* outside frames the parser cannot place */
	enum app_unparsed firewall_unparsed;
	/* outside IPv6 neighbour discovery of no flow (auto: pass) */
	enum app_unparsed firewall_nd;
	/* Fragments (cflow_frag.h): datagrams followed per worker (0: off),
	 * later fragments held for their first, how long. */
	uint64_t frag_datagrams;
	uint64_t frag_hold;
	uint64_t frag_timeout_s;
	uint64_t new_flow_rate;  /* flows/s per worker, 0: no limit */
	uint64_t new_flow_burst; /* 0: the rate */
	uint64_t emergency_load; /* % of capacity, 0: off */
	uint64_t emergency_low;  /* %, 0: emergency_load - 10 */
	uint64_t emergency_timeout_s;
	uint64_t mirror_port;  /* APP_NO_PORT: none */
	uint64_t mirror_first; /* copies of each flow's first N packets */
	char cfg_file[256];
};

/* --mirror-port none. */
#define APP_NO_PORT UINT64_MAX

/* --fp-bits auto in firewall mode: a spoofed outside packet passes at
 * about 8 * load / 2^32 (docs/firewall.md, measured by bench_spoof). */
#define APP_FIREWALL_FP_BITS 32

/* Firewall mode: ports have roles. */
static inline bool
app_config_firewall(const struct app_config *cfg)
{
	return cfg->inside_mask != 0 || cfg->outside_mask != 0;
}

/* Flow records on: --records on, or auto with --ipfix. */
static inline bool
app_config_records(const struct app_config *cfg)
{
	return cfg->records == APP_RECORDS_ON ||
		(cfg->records == APP_RECORDS_AUTO && cfg->ipfix[0] != '\0');
}

/* app_config_parse() printed --help or --version: the caller exits with
 * success. */
#define APP_CONFIG_HELP 1

/*
 * Fill @p cfg from the defaults, the --cfg file and the application
 * arguments (those after the EAL's), in that order. --help is printed
 * on stdout; nothing else is printed.
 *
 * @param err
 *   If not NULL, receives the messages, one line each ("cuckooflow: "
 *   first, NUL-terminated, cut at @p err_len): on failure, the one that
 *   names the bad option, value or FILE:LINE and what is allowed; on
 *   success, warnings (a deprecated section name), or "".
 * @return
 *   - 0: cfg is filled, run;
 *   - APP_CONFIG_HELP (positive): --help was given and printed, exit 0;
 *   - a negative errno (errno set too) on a bad option or value, an
 *     unreadable --cfg file or a --stats-json that cannot be written:
 *     -EINVAL for a bad option, value or line, else the failing call's
 *     (-ENOENT, -EACCES, -EFBIG, ...).
 */
int app_config_parse(struct app_config *cfg, int argc, char **argv,
		char *err, size_t err_len);

/*
 * Whether @p arg ("--exit-on-eof", "--flows=8") is one of the
 * application's options, by its whole name: what the EAL would refuse
 * before "--". (--allow is the EAL's too: -a.)
 */
bool app_config_is_option(const char *arg);

/* "cuckooflow VERSION (DPDK VERSION)", for --version and the banner. */
const char *app_config_version(void);

/* Every setting with its INI section and key, as text (the --help
 * defaults are the default config's). */
typedef void (*app_config_visit_fn)(const char *section, const char *key,
		const char *value, void *arg);
void app_config_visit(const struct app_config *cfg, app_config_visit_fn fn,
		void *arg);

/* @p cfg with every default, as app_config_parse() starts from (--fp-bits
 * and --firewall-unparsed still auto). */
void app_config_defaults(struct app_config *cfg);

/* The longest timeout or linger, s, that lib/cflow's 32-bit state holds
 * (26 days): the limit of --timeout-*, --close-linger and
 * --emergency-timeout, asked of cflow_tracker_params_resolve(). */
uint64_t app_config_timeout_max_s(void);

#endif /* _APP_CONFIG_H_ */
