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
import threading

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
    """One DPDK process's telemetry. Errors: OSError (not running, a
    timeout, the connection refused), ValueError (not JSON).

    By default each query is a connection of its own. With @keep, one
    connection serves every query, from any thread, one at a time: it is
    made at the first query and again when it fails (the process
    restarted; a query that fails on a fresh connection raises). DPDK
    22.11 serves at most 10 clients at once (MAX_CONNECTIONS) and closes
    any further one at once: a client that keeps its connection, like
    cuckooflow_exporter.py, is not locked out by others left open."""

    def __init__(self, path, timeout=5.0, keep=False):
        self.path = path
        self.timeout = timeout
        self.keep = keep
        self.lock = threading.Lock()
        self.conn = None        # with @keep: (socket, reply size)

    @classmethod
    def of_prefix(cls, prefix, timeout=5.0, keep=False):
        return cls(socket_path(prefix), timeout, keep)

    def connect(self):
        """A new connection, its greeting read: (socket, reply size)."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(self.timeout)
        try:
            s.connect(self.path)
            data = s.recv(GREETING_MAX)
            if not data:
                raise ConnectionRefusedError(
                    "%s: closed before its greeting (DPDK serves at most "
                    "10 telemetry clients at once)" % self.path)
            greeting = json.loads(data.decode())
        except BaseException:
            s.close()
            raise
        return s, max(int(greeting.get("max_output_len", 0)), 1 << 17)

    @staticmethod
    def ask(conn, cmd):
        s, size = conn
        s.send(cmd.encode())
        data = s.recv(size)
        if not data:
            raise ConnectionResetError("telemetry connection closed")
        return json.loads(data.decode())

    def close(self):
        with self.lock:
            if self.conn is not None:
                self.conn[0].close()
                self.conn = None

    def reply(self, cmd):
        """The whole JSON reply to @cmd."""
        if not self.keep:
            conn = self.connect()
            try:
                return self.ask(conn, cmd)
            finally:
                conn[0].close()
        with self.lock:
            while True:
                fresh = self.conn is None
                if fresh:
                    self.conn = self.connect()
                try:
                    return self.ask(self.conn, cmd)
                except (OSError, ValueError):
                    # closed: a reply left unread would answer the next
                    self.conn[0].close()
                    self.conn = None
                    if fresh:
                        raise

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
