"""The IPFIX exporter (lib/cflow/cflow_ipfix.h) read back by others.

ipfix_send turns known flow records into the exporter's messages; then

- test_decode_*: scapy's IPFIX layer (templates learnt from the messages
  themselves, netflowv9_defragment) decodes them: header fields, message
  sizes, sequence numbers, template refresh, every record's fields;
- test_nfdump_*: a real collector, nfcapd on 127.0.0.1 and a free port,
  receives them over UDP; nfdump must list exactly the records, with
  their addresses, ports (ICMP type and code), protocol, flags, times in
  ms, bytes, packets, ingress interface and end reason, and count no
  sequence failure.
"""
import ipaddress
import os
import struct
import subprocess

import pytest

from harness import DEADLINE, nfcapd, nfdump_flows, sequence_failures

# A fixed past time: 2025-11-25 10:40:00 UTC, in ns.
T0 = 1764067200 * 10**9
NOW = 1764067260
REASONS = {"idle": 1, "active": 2, "end": 3, "forced": 4, "resources": 5}


def record(reason, first, last, src, dst, sport, dport, proto, flags, port,
           nbytes, packets, flow, icmp=(0, 0)):
    return dict(reason=reason, first=first, last=last, src=src, dst=dst,
                sport=sport, dport=dport, proto=proto, flags=flags,
                port=port, bytes=nbytes, packets=packets, flow=flow,
                icmp=icmp)


# IPv4 and IPv6, every end reason, TCP, UDP, ICMP and ICMPv6.
RECORDS = [
    record("end", T0 + 123456789, T0 + 1236999999, "10.1.2.3",
           "192.0.2.80", 40000, 80, 6, 0x1b, 1, 1974, 8, 1),
    record("idle", T0 + 3000999999, T0 + 63000000000, "2001:db8::10",
           "2001:db8:1::53", 5353, 53, 17, 0, 3, 312, 4, 2),
    record("resources", T0 + 4000000000, T0 + 4000000000, "2001:db8::10",
           "2001:db8:1::443", 51000, 443, 6, 0x02, 0, 60, 1, 3),
    record("active", T0 + 5000000000, T0 + 1805000000000, "10.1.2.3",
           "10.9.9.9", 0, 0, 1, 0, 65534, 98 * 1800, 1800, 4, (8, 0)),
    record("forced", T0 + 6000000000, T0 + 7000000000, "2001:db8:1::443",
           "2001:db8::10", 443, 51001, 6, 0x18, 7, 151400, 100, 5),
    record("idle", T0 + 8000000000, T0 + 8000000000, "2001:db8::1",
           "2001:db8::2", 0, 0, 58, 0, 2, 1280, 1, 6, (1, 4)),
]


def many_records(n):
    """n records of every reason, each its own 5-tuple."""
    out = []
    reasons = list(REASONS)
    for i in range(n):
        if i % 2:
            src, dst = "10.0.%d.%d" % (i // 250, i % 250 + 1), "10.255.0.1"
        else:
            src, dst = "2001:db8::%x" % (i + 1), "2001:db8:ffff::1"
        out.append(record(reasons[i % 5], T0 + i * 7000001,
                          T0 + i * 7000001 + i * 999, src, dst, 10000 + i,
                          443, 6, 0x10 | (i & 7), i % 4, 40 + i, 1 + i % 13,
                          i + 1))
    return out


def run_send(ipfix_send, tmp_path, records, *args):
    path = tmp_path / "records.txt"
    with open(path, "w") as f:
        f.write("# reason first last src dst sport dport proto flags port "
                "bytes packets flow icmp_type icmp_code\n")
        for r in records:
            f.write("%(reason)s %(first)d %(last)d %(src)s %(dst)s "
                    "%(sport)d %(dport)d %(proto)d 0x%(flags)02x %(port)d "
                    "%(bytes)d %(packets)d %(flow)d " % r +
                    "%d %d\n" % r["icmp"])
    r = subprocess.run([ipfix_send, "--now", str(NOW), *args, str(path)],
                       capture_output=True, text=True, timeout=DEADLINE)
    assert r.returncode == 0, r.stderr
    return r.stdout


def expected(r):
    """A record as a collector shows it: ingress interface the port + 1;
    for ICMP, no ports but type.code."""
    icmp = r["proto"] in (1, 58)
    return (str(ipaddress.ip_address(r["src"])),
            str(ipaddress.ip_address(r["dst"])), 0 if icmp else r["sport"],
            0 if icmp else r["dport"], r["proto"], r["flags"],
            r["port"] + 1, r["first"] // 10**6, r["last"] // 10**6,
            r["bytes"], r["packets"], REASONS[r["reason"]],
            r["icmp"] if icmp else None)


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
    """A decoded Data Record as expected() shows a record."""
    v6 = tid == 257
    src = r["IPV6_SRC_ADDR" if v6 else "IPV4_SRC_ADDR"]
    dst = r["IPV6_DST_ADDR" if v6 else "IPV4_DST_ADDR"]
    proto = as_int(r["PROTOCOL"])
    icmp = as_int(r["icmpTypeCodeIPv6" if v6 else "ICMP_TYPE"])
    if proto not in (1, 58):
        assert icmp == 0
    return (str(ipaddress.ip_address(src)), str(ipaddress.ip_address(dst)),
            as_int(r["L4_SRC_PORT"]), as_int(r["L4_DST_PORT"]), proto,
            as_int(r["TCP_FLAGS"]), as_int(r["INPUT_SNMP"]),
            as_int(r["flowStartMilliseconds"]),
            as_int(r["flowEndMilliseconds"]), as_int(r["IN_BYTES"]),
            as_int(r["IN_PKTS"]), as_int(r["flowEndReason"]),
            (icmp >> 8, icmp & 255) if proto in (1, 58) else None)


def decoded_ids(recs):
    return [as_int(r["flowId"]) for _, r in recs]


def template_of(r):
    return 257 if ":" in r["src"] else 256


def test_decode_records(ipfix_send, tmp_path):
    pytest.importorskip("scapy.layers.netflow")
    out = tmp_path / "msgs.ipfix"
    run_send(ipfix_send, tmp_path, RECORDS, "--out", str(out), "--domain",
             "77")
    msgs = split_messages(out.read_bytes())
    assert len(msgs) == 1
    (length, export, seq, domain), tmpls, recs = scapy_records(msgs)[0]
    assert (length, export, seq, domain) == (len(msgs[0]), NOW, 0, 77)
    assert tmpls == [256, 257]
    # Records by template, each template's in the order given.
    want = sorted(RECORDS, key=template_of)
    assert [t for t, _ in recs] == [template_of(r) for r in want]
    assert [decoded_flow(t, r) for t, r in recs] == \
        [expected(r) for r in want]
    assert decoded_ids(recs) == [r["flow"] for r in want]


def test_decode_many_messages(ipfix_send, tmp_path):
    """512-byte messages, templates every 4th: sizes, sequence numbers,
    templates, and every record found back once."""
    pytest.importorskip("scapy.layers.netflow")
    records = many_records(300)
    out = tmp_path / "msgs.ipfix"
    run_send(ipfix_send, tmp_path, records, "--out", str(out), "--mtu",
             "512", "--refresh-msgs", "3")
    msgs = split_messages(out.read_bytes())
    assert len(msgs) > 30
    seq, got = 0, []
    for k, ((length, export, s, domain), tmpls, recs) in enumerate(
            scapy_records(msgs)):
        assert length == len(msgs[k]) <= 512
        assert (export, s, domain) == (NOW, seq, 1), k
        assert tmpls == ([256, 257] if k % 4 == 0 else []), k
        assert recs, k
        seq += len(recs)
        got += [decoded_flow(t, r) for t, r in recs]
    assert sorted(got) == sorted(expected(r) for r in records)


# ----------------------------------------------------------- nfcapd


def collect(ipfix_send, tmp_path, records, *args):
    """Send @records to a fresh nfcapd; the flow files it wrote."""
    with nfcapd(tmp_path) as cap:
        print(run_send(ipfix_send, tmp_path, records, "--to",
                       "127.0.0.1:%d" % cap.port, *args).strip())
    return cap.files


def test_nfdump_records(ipfix_send, tmp_path):
    files = collect(ipfix_send, tmp_path, RECORDS)
    got = nfdump_flows(files)
    assert sorted(got) == sorted(expected(r) for r in RECORDS)
    assert sequence_failures(files) == 0
    # What nfdump shows, for the record.
    out = subprocess.run(
        ["nfdump", "-r", files[0], "-q", "-N", "-o",
         "fmt:%ts %te %pr %sap -> %dap %flg %pkt %byt %in"],
        capture_output=True, text=True, env=dict(os.environ, TZ="UTC"))
    print(out.stdout)


def test_nfdump_many_messages(ipfix_send, tmp_path):
    """300 records in 512-byte messages, templates every 4th: nfdump lists
    every flow once and counts no sequence failure."""
    records = many_records(300)
    files = collect(ipfix_send, tmp_path, records, "--mtu", "512",
                    "--refresh-msgs", "3", "--domain", "5")
    assert sorted(nfdump_flows(files)) == \
        sorted(expected(r) for r in records)
    assert sequence_failures(files) == 0
