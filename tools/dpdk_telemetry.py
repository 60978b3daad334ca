#!/usr/bin/env python3
"""A client of DPDK's telemetry socket (v2), for cuckooflow_exporter.py
and the tests.

DPDK serves telemetry on a SOCK_SEQPACKET Unix socket,
<runtime dir>/dpdk/<file prefix>/dpdk_telemetry.v2: on connecting it
sends a greeting (JSON holding "max_output_len"), then answers each
command ("/cuckooflow/stats", "/ethdev/link_status,0"...) with one JSON
object, {"<command without its parameter>": value}.
"""
import json
import os
import socket

GREETING_MAX = 16384


def runtime_dir():
    """The directory DPDK keeps its runtime files in, as the EAL picks
    it: /var/run for root, else $XDG_RUNTIME_DIR, else /tmp."""
    if os.getuid() == 0:
        return "/var/run"
    return os.environ.get("XDG_RUNTIME_DIR", "/tmp")


def socket_path(prefix="rte"):
    """The telemetry socket of the DPDK process with EAL --file-prefix
    @prefix."""
    return os.path.join(runtime_dir(), "dpdk", prefix, "dpdk_telemetry.v2")


class Telemetry:
    """One DPDK process's telemetry; each query is a connection of its
    own. Errors: OSError (not running, timeout), ValueError (not JSON)."""

    def __init__(self, path, timeout=5.0):
        self.path = path
        self.timeout = timeout

    @classmethod
    def of_prefix(cls, prefix, timeout=5.0):
        return cls(socket_path(prefix), timeout)

    def reply(self, cmd):
        """The whole JSON reply to @cmd."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(self.timeout)
        try:
            s.connect(self.path)
            greeting = json.loads(s.recv(GREETING_MAX).decode())
            s.send(cmd.encode())
            size = max(int(greeting.get("max_output_len", 0)), 1 << 17)
            return json.loads(s.recv(size).decode())
        finally:
            s.close()

    def query(self, cmd):
        """The value of the reply to @cmd (None for a command the
        process does not know)."""
        reply = self.reply(cmd)
        return reply.get(cmd.split(",")[0]) if isinstance(reply, dict) \
            else None


def query(prefix, cmd, timeout=5.0):
    """The value of the reply to @cmd from the process with EAL
    --file-prefix @prefix."""
    return Telemetry.of_prefix(prefix, timeout).query(cmd)


def main(argv=None):
    """dpdk_telemetry.py [-f PREFIX] COMMAND...: each reply as one JSON
    line (the value, without the command's key), for scripts."""
    import argparse
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("-f", "--file-prefix", default="rte",
                    help="the EAL --file-prefix of the process (rte)")
    ap.add_argument("commands", nargs="+", metavar="COMMAND")
    args = ap.parse_args(argv)
    try:
        t = Telemetry.of_prefix(args.file_prefix)
    except OSError as e:
        raise SystemExit("dpdk_telemetry.py: %s: %s" % (
            socket_path(args.file_prefix), e.strerror))
    for cmd in args.commands:
        print(json.dumps(t.query(cmd)))


if __name__ == "__main__":
    main()
