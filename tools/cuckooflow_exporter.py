#!/usr/bin/python3
"""Serve cuckooflow's counters to Prometheus.

Reads DPDK telemetry (/cuckooflow/stats, /cuckooflow/lcore,<id> and
/cuckooflow/table) on every scrape, and serves them as Prometheus text on
http://ADDRESS:PORT/metrics. The address defaults to 127.0.0.1.

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

from prometheus_client import start_http_server
from prometheus_client.core import (REGISTRY, CounterMetricFamily,
                                    GaugeMetricFamily)

GAUGES = {"active", "emergency"}  # the others only grow


class Collector:
    def __init__(self, tel):
        self.tel = tel

    def collect(self):
        try:
            total = self.tel.query("/cuckooflow/stats")
            table = self.tel.query("/cuckooflow/table") or {}
        except (OSError, ValueError):
            return  # cuckooflow not running: no samples
        lcores = sorted(int(k.split("_")[1]) for k in table)
        per = {lc: self.tel.query("/cuckooflow/lcore,%d" % lc) or {}
               for lc in lcores}
        for name in sorted(total or {}):
            family = GaugeMetricFamily if name in GAUGES else \
                CounterMetricFamily
            m = family("cuckooflow_" + name, "cuckooflow counter " + name,
                       labels=["lcore"])
            m.add_metric(["all"], total[name])
            for lc in lcores:
                if name in per[lc]:
                    m.add_metric([str(lc)], per[lc][name])
            yield m
        for key in ("items", "slots", "bytes", "load_ppm", "stash"):
            g = GaugeMetricFamily("cuckooflow_table_" + key,
                                  "flow table " + key, labels=["lcore"])
            for lc in lcores:
                g.add_metric([str(lc)], table["lcore_%d" % lc].get(key, 0))
            yield g


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
