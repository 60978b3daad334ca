#!/usr/bin/python3
"""Serve cuckooflow's counters to Prometheus.

Reads DPDK telemetry on every scrape (/cuckooflow/counters, /stats,
/lcore,<id>, /table, /losses, /info, /blocklist, /events, /state, and
/ethdev/list, /ethdev/stats,<port>, /ethdev/info,<port>), over one
connection it keeps (made again when cuckooflow restarts: DPDK serves
10 telemetry clients at once, and others left open do not lock the
exporter out once it has connected), and serves it
as Prometheus text on http://ADDRESS:PORT/metrics, after Prometheus'
conventions (the series: docs/usage.md, Telemetry):

- a counter's help is cuckooflow's own (its counter tables, through
  /cuckooflow/counters), and which are gauges too;
- counters of one group by reason are one series with a "reason" label
  (cuckooflow_dropped_total{reason="unsolicited"}, blocked, malformed),
  as are the losses (cuckooflow_packets_lost_total{reason="rx_missed"});
- base units: ratios for parts per million or billion, bytes for bits,
  seconds for micro- and nanoseconds (BASE_UNITS);
- cuckooflow_build_info{version, dpdk, code_path} and
  cuckooflow_start_time_seconds.

The address defaults to 127.0.0.1, the file prefix to cuckooflow (the
service's: cuckooflow-exporter.service runs this).

usage: cuckooflow_exporter.py [--file-prefix cuckooflow] [--port 9109]
                              [--address 127.0.0.1]
Needs Debian's python3-prometheus-client.
"""
import argparse
import os
import re
import sys
import time

# dpdk_telemetry.py lies next to this script (tools/, and where installed)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from dpdk_telemetry import Telemetry, socket_path  # noqa: E402

try:
    from prometheus_client import start_http_server
    from prometheus_client.core import (REGISTRY, CounterMetricFamily,
                                        GaugeMetricFamily, InfoMetricFamily)
except ImportError:
    sys.exit("cuckooflow_exporter: needs prometheus_client: install "
             "Debian's python3-prometheus-client and run this with "
             "/usr/bin/python3 (as its first line says)")

# Each ethdev port's counters, from /ethdev/stats,<port>
PORT_STATS = {
    "ipackets": "packets received",
    "opackets": "packets sent",
    "ibytes": "bytes received",
    "obytes": "bytes sent",
    "imissed": "packets dropped by the device (rx queues full), the "
               "driver's count (net_af_packet's ring drops are in "
               "cuckooflow_rx_missed_total)",
    "ierrors": "packets received in error",
    "oerrors": "packets not sent",
    "rx_nombuf": "packets not received for want of an mbuf",
}
BLOCKLIST_GAUGES = {
    "entries": "entries of the list in force",
    "addresses": "address entries",
    "prefixes": "prefix entries",
    "flows": "flow entries",
    "prefix_lengths_v4": "distinct IPv4 prefix lengths (lookups a packet)",
    "prefix_lengths_v6": "distinct IPv6 prefix lengths",
    "bits_per_entry_milli": "memory per entry",
    "last_load_us": "the last reload's time to read and build the list",
    "last_sync_us": "the last reload's wait for the workers (RCU)",
    "max_sync_us": "the longest wait for the workers of any reload",
}
# cuckooflow's scaled integers (telemetry has no floats) in base units:
# suffix -> (the base unit's suffix, factor). bits_per_X_milli: bytes.
BASE_UNITS = (
    (re.compile(r"^bits_(per_\w+)_milli$"), r"bytes_\1", 1e-3 / 8),
    (re.compile(r"^(\w+)_ppm$"), r"\1_ratio", 1e-6),
    (re.compile(r"^(\w+)_ppb$"), r"\1_ratio", 1e-9),
    (re.compile(r"^(\w+)_us$"), r"\1_seconds", 1e-6),
    (re.compile(r"^(\w+)_ms$"), r"\1_seconds", 1e-3),
    (re.compile(r"^(\w+)_ns$"), r"\1_seconds", 1e-9),
)
# Records each output wrote, from /cuckooflow/events: (key, output)
OUTPUT_RECORDS = (("json_lines", "events"), ("pcapng_packets",
                                               "new_flow_pcap"),
                  ("ipfix_records", "ipfix"))
OUTPUT_ERRORS = (("json_errors", "events"), ("pcapng_errors",
                                             "new_flow_pcap"),
                 ("ipfix_failed", "ipfix"))


def base_unit(name, value):
    """(name, value) in base units: load_ppm -> (load_ratio, v / 1e6)."""
    for pattern, repl, factor in BASE_UNITS:
        if pattern.match(name):
            return pattern.sub(repl, name), value * factor
    return name, value


def epoch_gauge(name, what, ns):
    """A gauge of a time in nanoseconds since the epoch, in seconds."""
    g = GaugeMetricFamily(name, what + ", seconds since the epoch")
    g.add_metric([], ns / 1e9)
    return g


def flat(counters):
    """A counters reply of /cuckooflow/stats or /cuckooflow/lcore with
    its groups ("malformed": {reason: n}) as "<group>_<key>" numbers."""
    out = {}
    for name, value in (counters or {}).items():
        if isinstance(value, dict):
            out.update(("%s_%s" % (name, k), v) for k, v in value.items())
        else:
            out[name] = value
    return out


def counter_list(reply):
    """/cuckooflow/counters' parallel arrays as {source: {name: (kind,
    help, group)}}: "tracker", "worker", "frag" and "port" of
    /cuckooflow/stats and /cuckooflow/lcore, "table" of /cuckooflow/table."""
    out = {}
    r = reply or {}
    groups = r.get("group") or [""] * len(r.get("name", []))
    for name, source, kind, what, group in zip(
            r.get("name", []), r.get("source", []), r.get("kind", []),
            r.get("help", []), groups):
        out.setdefault(source, {})[name] = (kind, what, group)
    return out


class Collector:
    """One scrape: cuckooflow_up, then (when cuckooflow answers) every
    counter per lcore only (sum() over lcore gives the total), groups of
    counters as one series with a reason label, the ports' counters
    unlabelled, each flow table's figures, the losses, the blocklist's,
    the outputs', the state file's and each ethdev port's counters."""

    def __init__(self, tel):
        self.tel = tel

    def query(self):
        q = self.tel.query
        r = {"listed": counter_list(q("/cuckooflow/counters")),
             "total": flat(q("/cuckooflow/stats")),
             "table": q("/cuckooflow/table") or {},
             "losses": q("/cuckooflow/losses") or {},
             "info": q("/cuckooflow/info") or {},
             "bl": q("/cuckooflow/blocklist") or {},
             "events": q("/cuckooflow/events") or {},
             "state": q("/cuckooflow/state") or {},
             "ports": q("/ethdev/list") or []}
        r["lcores"] = sorted(int(k.split("_")[1]) for k in r["table"])
        r["per"] = {lc: flat(q("/cuckooflow/lcore,%d" % lc))
                    for lc in r["lcores"]}
        r["port_stats"] = {p: q("/ethdev/stats,%d" % p) or {}
                           for p in r["ports"]}
        r["port_names"] = {p: (q("/ethdev/info,%d" % p) or {}).get(
            "name", "") for p in r["ports"]}
        return r

    def collect(self):
        up = GaugeMetricFamily("cuckooflow_up", "1 if cuckooflow answered "
                               "this scrape's telemetry queries, else 0")
        try:
            r = self.query()
        except (OSError, ValueError):
            up.add_metric([], 0)
            yield up
            return  # cuckooflow not running: no other samples
        up.add_metric([], 1)
        yield up
        yield from self.about(r)
        yield from self.counters(r)
        yield from self.tables(r)
        yield from self.losses(r)
        yield from self.blocklist(r)
        yield from self.outputs(r)
        yield from self.ports(r)

    @staticmethod
    def about(r):
        info = r["info"]
        if info:
            b = InfoMetricFamily("cuckooflow_build", "the version running, "
                                 "the DPDK it was built with, the code "
                                 "path of the filter's hot functions")
            b.add_metric([], {"version": info.get("version", ""),
                              "dpdk": info.get("dpdk", ""),
                              "code_path": info.get("code_path", "")})
            yield b
            yield epoch_gauge("cuckooflow_start_time_seconds",
                              "when cuckooflow started",
                              info.get("start_time_ns", 0))

    @staticmethod
    def counters(r):
        listed, total = r["listed"], r["total"]
        known = {n: c for src in ("tracker", "worker", "frag")
                 for n, c in listed.get(src, {}).items()}
        by_port = listed.get("port", {})
        groups = {}
        for name in sorted(total):
            if not isinstance(total[name], (int, float)):
                continue
            kind, what, group = by_port.get(name) or known.get(
                name, ("counter", "", ""))
            family = GaugeMetricFamily if kind == "gauge" else \
                CounterMetricFamily
            # Counted by the ports, not by an lcore: exported once,
            # without a label (the per-lcore replies hold 0 for them).
            if name in by_port:
                m = family("cuckooflow_" + name, what)
                m.add_metric([], total[name])
                yield m
                continue
            if group:
                groups.setdefault(group, []).append(
                    (name[len(group) + 1:], name))
                continue
            if name == "malformed_total":
                continue  # sum(cuckooflow_malformed_total) by reason
            m = family("cuckooflow_" + name, what, labels=["lcore"])
            for lc in r["lcores"]:
                if name in r["per"][lc]:
                    m.add_metric([str(lc)], r["per"][lc][name])
            yield m
        for group, members in sorted(groups.items()):
            what = {"dropped": "packets dropped, by reason (firewall "
                               "mode, the mirror port's input)",
                    "blocked": "packets the blocklist dropped, by the "
                               "entry kind that matched (unparsed: "
                               "--blocklist-unparsed drop)",
                    "malformed": "packets that did not parse, by reason "
                                 "(docs/parse.md)"}.get(group, group)
            m = CounterMetricFamily("cuckooflow_" + group, what,
                                    labels=["lcore", "reason"])
            for reason, name in members:
                for lc in r["lcores"]:
                    if name in r["per"][lc]:
                        m.add_metric([str(lc), reason], r["per"][lc][name])
            yield m

    @staticmethod
    def tables(r):
        figures = r["listed"].get("table", {})
        keys = sorted({k for v in r["table"].values() for k in v})
        for key in keys:
            name, _ = base_unit(key, 0)
            what = figures.get(key, ("gauge", key, ""))[1]
            g = GaugeMetricFamily("cuckooflow_table_" + name,
                                  "flow table: " + what, labels=["lcore"])
            for lc in r["lcores"]:
                t = r["table"]["lcore_%d" % lc]
                if key == "load_ppm" and t.get("slots"):
                    # items / slots exactly: ppm loses a light table's
                    value = t.get("items", 0) / t["slots"]
                else:
                    value = base_unit(key, t.get(key, 0))[1]
                g.add_metric([str(lc)], value)
            yield g

    @staticmethod
    def losses(r):
        what = {"packets": "packets lost, by the counter that counts them "
                           "(rx_missed, handoff_drops, ...: docs/usage.md, "
                           "Losses)",
                "events": "flow events lost, by the counter that counts "
                          "them",
                "records": "output records lost (IPFIX, JSON lines, "
                           "pcapng), by the counter that counts them"}
        for kind in ("packets", "events", "records"):
            c = CounterMetricFamily("cuckooflow_%s_lost" % kind, what[kind],
                                    labels=["reason"])
            for reason, n in sorted((r["losses"].get(kind) or {}).items()):
                c.add_metric([reason], n)
            yield c

    @staticmethod
    def blocklist(r):
        bl = r["bl"]
        for key, what in (("reloads", "reloads that replaced the list"),
                          ("reload_failures", "reloads that failed, the "
                           "list kept")):
            if key in bl:
                c = CounterMetricFamily("cuckooflow_blocklist_" + key,
                                        "blocklist: " + what)
                c.add_metric([], bl[key])
                yield c
        loaded = GaugeMetricFamily("cuckooflow_blocklist_loaded",
                                   "1 if a blocklist is in force")
        loaded.add_metric([], 1 if "entries" in bl else 0)
        yield loaded
        for key, what in BLOCKLIST_GAUGES.items():
            if key in bl:
                name, value = base_unit(key, bl[key])
                g = GaugeMetricFamily("cuckooflow_blocklist_" + name,
                                      "blocklist: " + what)
                g.add_metric([], value)
                yield g

    @staticmethod
    def outputs(r):
        ev, st = r["events"], r["state"]
        if ev:
            for suffix, keys, what in (
                    ("records", OUTPUT_RECORDS, "records written, by "
                     "output (events: --events JSON lines; new_flow_pcap; "
                     "ipfix)"),
                    ("errors", OUTPUT_ERRORS, "failed writes and sends, by "
                     "output")):
                c = CounterMetricFamily("cuckooflow_output_" + suffix, what,
                                        labels=["output"])
                for key, output in keys:
                    if key in ev:
                        c.add_metric([output], ev[key])
                yield c
        if st:
            for key, what in (("saves", "--state-interval saves of the "
                               "flow tables"), ("save_failures", "saves "
                               "that failed")):
                c = CounterMetricFamily("cuckooflow_state_" + key, what)
                c.add_metric([], st.get(key, 0))
                yield c
            yield epoch_gauge("cuckooflow_state_last_save_time_seconds",
                              "when the tables were last saved (0: not "
                              "yet)", st.get("last_save_ns", 0))

    @staticmethod
    def ports(r):
        for key, what in PORT_STATS.items():
            c = CounterMetricFamily("cuckooflow_port_" + key, "ethdev " +
                                    key + ": " + what + ", by port",
                                    labels=["port", "name"])
            for p in r["ports"]:
                if key in r["port_stats"][p]:
                    c.add_metric([str(p), r["port_names"][p]],
                                 r["port_stats"][p][key])
            yield c


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file-prefix", default="cuckooflow",
                    help="the EAL --file-prefix of cuckooflow (default "
                    "cuckooflow, the service's)")
    ap.add_argument("--port", type=int, default=9109)
    ap.add_argument("--address", default="127.0.0.1")
    ap.add_argument("--version", action="version",
                    version="cuckooflow_exporter (cuckooflow's telemetry: "
                    "/cuckooflow/info)")
    args = ap.parse_args()
    if not 0 < args.port < 65536:
        sys.exit("cuckooflow_exporter: --port %d: want 1..65535" % args.port)
    # one connection kept for every scrape: DPDK serves 10 clients at
    # once, and others left open must not lock the exporter out
    REGISTRY.register(Collector(Telemetry(socket_path(args.file_prefix),
                                          keep=True)))
    start_http_server(args.port, addr=args.address)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
