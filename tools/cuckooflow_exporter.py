#!/usr/bin/python3
"""Serve cuckooflow's counters to Prometheus.

Reads DPDK telemetry (/cuckooflow/stats, /cuckooflow/lcore,<id>,
/cuckooflow/table, /cuckooflow/blocklist, and /ethdev/list,
/ethdev/stats,<port> and /ethdev/info,<port>) on every scrape, and serves
them as Prometheus text on http://ADDRESS:PORT/metrics (the series:
docs/usage.md). Which counters are gauges, which the ports count, and
each one's help come from cuckooflow itself (/cuckooflow/counters, its
counter tables). The address defaults to 127.0.0.1.

usage: cuckooflow_exporter.py [--file-prefix PREFIX] [--port 9109]
                              [--address 127.0.0.1]
Needs Debian's python3-prometheus-client.
"""
import argparse
import os
import sys
import time

# dpdk_telemetry.py lies next to this script (tools/, and where installed)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from dpdk_telemetry import Telemetry, socket_path  # noqa: E402

try:
    from prometheus_client import start_http_server
    from prometheus_client.core import (REGISTRY, CounterMetricFamily,
                                        GaugeMetricFamily)
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
    "imissed": "packets dropped by the device (rx queues full)",
    "ierrors": "packets received in error",
    "oerrors": "packets not sent",
    "rx_nombuf": "packets not received for want of an mbuf",
}
BLOCKLIST_GAUGES = ("entries", "addresses", "prefixes", "flows",
                    "prefix_lengths_v4", "prefix_lengths_v6",
                    "bits_per_entry_milli")


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
    help)}}: "tracker", "worker", "frag" and "port" of /cuckooflow/stats and
    /cuckooflow/lcore, "table" of /cuckooflow/table."""
    out = {}
    r = reply or {}
    for name, source, kind, what in zip(r.get("name", []),
                                        r.get("source", []),
                                        r.get("kind", []),
                                        r.get("help", [])):
        out.setdefault(source, {})[name] = (kind, what)
    return out


class Collector:
    """One scrape: cuckooflow_up, then (when cuckooflow answers) every
    counter per lcore only (sum() over lcore gives the total), the ports'
    counters unlabelled, each flow table's figures, the blocklist's and
    each ethdev port's counters."""

    def __init__(self, tel):
        self.tel = tel

    def collect(self):
        up = GaugeMetricFamily("cuckooflow_up", "1 if cuckooflow answered "
                               "this scrape's telemetry queries, else 0")
        try:
            listed = counter_list(self.tel.query("/cuckooflow/counters"))
            total = flat(self.tel.query("/cuckooflow/stats"))
            table = self.tel.query("/cuckooflow/table") or {}
            lcores = sorted(int(k.split("_")[1]) for k in table)
            per = {lc: flat(self.tel.query("/cuckooflow/lcore,%d" % lc))
                   for lc in lcores}
            bl = self.tel.query("/cuckooflow/blocklist") or {}
            ports = self.tel.query("/ethdev/list") or []
            port_stats = {p: self.tel.query("/ethdev/stats,%d" % p) or {}
                          for p in ports}
            port_names = {p: (self.tel.query("/ethdev/info,%d" % p) or
                              {}).get("name", "") for p in ports}
        except (OSError, ValueError):
            up.add_metric([], 0)
            yield up
            return  # cuckooflow not running: no other samples
        up.add_metric([], 1)
        yield up
        counters = {n: c for src in ("tracker", "worker", "frag")
                    for n, c in listed.get(src, {}).items()}
        by_port = listed.get("port", {})
        for name in sorted(total):
            if not isinstance(total[name], (int, float)):
                continue
            kind, what = by_port.get(name) or counters.get(
                name, ("counter", ""))
            family = GaugeMetricFamily if kind == "gauge" else \
                CounterMetricFamily
            what = "cuckooflow %s %s%s" % (kind, name,
                                           ": " + what if what else "")
            # Counted by the ports, not by an lcore: exported once,
            # without a label (the per-lcore replies hold 0 for them).
            if name in by_port:
                m = family("cuckooflow_" + name, what)
                m.add_metric([], total[name])
                yield m
                continue
            m = family("cuckooflow_" + name, what, labels=["lcore"])
            for lc in lcores:
                if name in per[lc]:
                    m.add_metric([str(lc)], per[lc][name])
            yield m
        figures = listed.get("table", {})
        keys = sorted({k for v in table.values() for k in v})
        for key in keys:
            what = figures.get(key, ("gauge", ""))[1]
            g = GaugeMetricFamily("cuckooflow_table_" + key,
                                  "flow table " + key +
                                  (": " + what if what else ""),
                                  labels=["lcore"])
            for lc in lcores:
                g.add_metric([str(lc)], table["lcore_%d" % lc].get(key, 0))
            yield g
        for key in ("reloads", "reload_failures"):
            if key in bl:
                c = CounterMetricFamily("cuckooflow_blocklist_" + key,
                                        "blocklist " + key)
                c.add_metric([], bl[key])
                yield c
        loaded = GaugeMetricFamily("cuckooflow_blocklist_loaded",
                                   "1 if a blocklist is in force")
        loaded.add_metric([], 1 if "entries" in bl else 0)
        yield loaded
        for key in BLOCKLIST_GAUGES:
            if key in bl:
                g = GaugeMetricFamily("cuckooflow_blocklist_" + key,
                                      "blocklist " + key)
                g.add_metric([], bl[key])
                yield g
        for key, what in PORT_STATS.items():
            c = CounterMetricFamily("cuckooflow_port_" + key, "ethdev " +
                                    key + ": " + what + ", by port",
                                    labels=["port", "name"])
            for p in ports:
                if key in port_stats[p]:
                    c.add_metric([str(p), port_names[p]], port_stats[p][key])
            yield c


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file-prefix", default="rte",
                    help="the EAL --file-prefix of cuckooflow (default rte)")
    ap.add_argument("--port", type=int, default=9109)
    ap.add_argument("--address", default="127.0.0.1")
    args = ap.parse_args()
    if not 0 < args.port < 65536:
        sys.exit("cuckooflow_exporter: --port %d: want 1..65535" % args.port)
    REGISTRY.register(Collector(Telemetry(socket_path(args.file_prefix))))
    start_http_server(args.port, addr=args.address)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
