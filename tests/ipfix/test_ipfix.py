"""The IPFIX exporter (lib/cflow/cflow_ipfix.h) read back by others.

ipfix_send turns known flow events into the exporter's messages; then

- test_decode_*: scapy's IPFIX layer (templates learnt from the messages
  themselves, netflowv9_defragment) decodes them: header fields, message
  sizes, sequence numbers, template refresh, every record's fields;
- test_nfdump_*: a real collector, nfcapd on 127.0.0.1 and a free port,
  receives them over UDP; nfdump must list exactly the events' flows,
  with their addresses, ports, protocol, flags, times in ms, bytes,
  packets, ingress interface and end reason, and count no sequence
  failure. Skipped without nfcapd and nfdump (Debian: nfdump).
"""
import ipaddress
import os
import struct
import subprocess

import pytest

from harness import nfcapd, nfdump_flows, sequence_failures

# A fixed past time: 2025-11-25 10:40:00 UTC, in ns.
T0 = 1764067200 * 10**9
NOW = 1764067260


def event(kind, t_ns, src, dst, sport, dport, proto, flags, port, wire):
    return dict(kind=kind, t_ns=t_ns, src=src, dst=dst, sport=sport,
                dport=dport, proto=proto, flags=flags, port=port,
                wire=wire)


# IPv4 and IPv6, new and close (FIN, RST), TCP, UDP and ICMP.
EVENTS = [
    event("new", T0 + 123456789, "10.1.2.3", "192.0.2.80", 40000, 80, 6,
          0x02, 1, 74),
    event("fin", T0 + 2500000000, "192.0.2.80", "10.1.2.3", 80, 40000, 6,
          0x11, 2, 66),
    event("new", T0 + 3000999999, "2001:db8::10", "2001:db8:1::53", 5353,
          53, 17, 0, 3, 90),
    event("rst", T0 + 4000000000, "2001:db8::10", "2001:db8:1::443", 51000,
          443, 6, 0x14, 0, 60),
    event("new", T0 + 5000000000, "10.1.2.3", "10.9.9.9", 0, 0, 1, 0,
          65535, 98),
    event("fin", T0 + 6000000000, "2001:db8:1::443", "2001:db8::10", 443,
          51001, 6, 0x11, 7, 1514),
]


def many_events(n):
    """n events of every kind, each its own 5-tuple."""
    out = []
    for i in range(n):
        kind = ("new", "fin", "rst")[i % 3]
        flags = {"new": 0x02, "fin": 0x11, "rst": 0x04}[kind]
        if i % 2:
            src, dst = "10.0.%d.%d" % (i // 250, i % 250 + 1), "10.255.0.1"
        else:
            src, dst = "2001:db8::%x" % (i + 1), "2001:db8:ffff::1"
        out.append(event(kind, T0 + i * 7000001, src, dst, 10000 + i, 443,
                         6, flags, i % 4, 40 + i))
    return out


def run_send(ipfix_send, tmp_path, events, *args):
    path = tmp_path / "events.txt"
    with open(path, "w") as f:
        f.write("# kind time_ns src dst sport dport proto flags port len\n")
        for e in events:
            f.write("%(kind)s %(t_ns)d %(src)s %(dst)s %(sport)d %(dport)d "
                    "%(proto)d 0x%(flags)02x %(port)d %(wire)d\n" % e)
    r = subprocess.run([ipfix_send, "--now", str(NOW), *args, str(path)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def expected(e):
    """A flow as a collector shows it: the event's one packet."""
    ms = e["t_ns"] // 10**6
    return (str(ipaddress.ip_address(e["src"])),
            str(ipaddress.ip_address(e["dst"])), e["sport"], e["dport"],
            e["proto"], e["flags"], e["port"], ms, ms, e["wire"], 1,
            0 if e["kind"] == "new" else 3)


# ------------------------------------------------------------ scapy


def split_messages(data):
    msgs, off = [], 0
    while off < len(data):
        version, length = struct.unpack("!HH", data[off:off + 4])
        assert version == 10 and 16 <= length <= len(data) - off
        msgs.append(data[off:off + length])
        off += length
    return msgs


def scapy_records(msgs):
    """[(header fields, template set ids, [(template, record fields)])]"""
    from scapy.layers.netflow import (NetflowDataflowsetV9,
                                      NetflowFlowsetV9, NetflowHeader,
                                      netflowv9_defragment)

    pkts = netflowv9_defragment([NetflowHeader(m) for m in msgs])
    out = []
    for p in pkts:
        hdr = p["IPFix (Netflow V10) Header"]
        tmpls = []
        i = 1
        while p.getlayer(NetflowFlowsetV9, i) is not None:
            fs = p.getlayer(NetflowFlowsetV9, i)
            tmpls += [t.templateID for t in fs.templates]
            i += 1
        recs = []
        i = 1
        while p.getlayer(NetflowDataflowsetV9, i) is not None:
            ds = p.getlayer(NetflowDataflowsetV9, i)
            for r in ds.records:
                recs.append((ds.templateID, {
                    f.name: r.getfieldval(f.name) for f in r.fields_desc}))
            i += 1
        out.append(((hdr.length, hdr.ExportTime, hdr.flowSequence,
                     hdr.ObservationDomainID), tmpls, recs))
    return out


def as_int(v):
    return int.from_bytes(v, "big") if isinstance(v, bytes) else int(v)


def decoded_flow(tid, r):
    v6 = tid in (258, 259)
    src = r["IPV6_SRC_ADDR" if v6 else "IPV4_SRC_ADDR"]
    dst = r["IPV6_DST_ADDR" if v6 else "IPV4_DST_ADDR"]
    return (str(ipaddress.ip_address(src)), str(ipaddress.ip_address(dst)),
            as_int(r["L4_SRC_PORT"]), as_int(r["L4_DST_PORT"]),
            as_int(r["PROTOCOL"]), as_int(r["TCP_FLAGS"]),
            as_int(r["INPUT_SNMP"]), as_int(r["flowStartMilliseconds"]),
            as_int(r["flowEndMilliseconds"]), as_int(r["IN_BYTES"]),
            as_int(r["IN_PKTS"]), as_int(r.get("flowEndReason", b"\0")))


def template_of(e):
    return 256 + (2 if ":" in e["src"] else 0) + (e["kind"] != "new")


def test_decode_events(ipfix_send, tmp_path):
    pytest.importorskip("scapy.layers.netflow")
    out = tmp_path / "msgs.ipfix"
    run_send(ipfix_send, tmp_path, EVENTS, "--out", str(out), "--domain",
             "77")
    msgs = split_messages(out.read_bytes())
    assert len(msgs) == 1
    (length, export, seq, domain), tmpls, recs = scapy_records(msgs)[0]
    assert (length, export, seq, domain) == (len(msgs[0]), NOW, 0, 77)
    assert tmpls == [256, 257, 258, 259]
    # Records by template, each template's in event order.
    want = sorted(EVENTS, key=template_of)
    assert [t for t, _ in recs] == [template_of(e) for e in want]
    assert [decoded_flow(t, r) for t, r in recs] == \
        [expected(e) for e in want]


def test_decode_many_messages(ipfix_send, tmp_path):
    """512-byte messages, templates every 4th: sizes, sequence numbers,
    templates, and every event found back once."""
    pytest.importorskip("scapy.layers.netflow")
    events = many_events(300)
    out = tmp_path / "msgs.ipfix"
    run_send(ipfix_send, tmp_path, events, "--out", str(out), "--mtu",
             "512", "--refresh-msgs", "3")
    msgs = split_messages(out.read_bytes())
    assert len(msgs) > 30
    seq, got = 0, []
    for k, ((length, export, s, domain), tmpls, recs) in enumerate(
            scapy_records(msgs)):
        assert length == len(msgs[k]) <= 512
        assert (export, s, domain) == (NOW, seq, 1), k
        assert tmpls == ([256, 257, 258, 259] if k % 4 == 0 else []), k
        assert recs, k
        seq += len(recs)
        got += [decoded_flow(t, r) for t, r in recs]
    assert sorted(got) == sorted(expected(e) for e in events)


# ----------------------------------------------------------- nfcapd


def collect(ipfix_send, tmp_path, events, *args):
    """Send @events to a fresh nfcapd; the flow files it wrote."""
    with nfcapd(tmp_path) as cap:
        print(run_send(ipfix_send, tmp_path, events, "--to",
                       "127.0.0.1:%d" % cap.port, *args).strip())
    return cap.files


def test_nfdump_events(ipfix_send, tmp_path):
    files = collect(ipfix_send, tmp_path, EVENTS)
    got = nfdump_flows(files)
    assert sorted(got) == sorted(expected(e) for e in EVENTS)
    assert sequence_failures(files) == 0
    # What nfdump shows, for the record.
    out = subprocess.run(
        ["nfdump", "-r", files[0], "-q", "-N", "-o",
         "fmt:%ts %te %pr %sap -> %dap %flg %pkt %byt %in"],
        capture_output=True, text=True, env=dict(os.environ, TZ="UTC"))
    print(out.stdout)


def test_nfdump_many_messages(ipfix_send, tmp_path):
    """300 events in 512-byte messages, templates every 4th: nfdump lists
    every flow once and counts no sequence failure."""
    events = many_events(300)
    files = collect(ipfix_send, tmp_path, events, "--mtu", "512",
                    "--refresh-msgs", "3", "--domain", "5")
    assert sorted(nfdump_flows(files)) == \
        sorted(expected(e) for e in events)
    assert sequence_failures(files) == 0
