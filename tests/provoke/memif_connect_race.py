#!/usr/bin/python3
"""memif_connect_race.py APP: a provocation run by hand (docs/testing.md,
"Provocations"), not a test: the DPDK 22.11.11 (Debian) memif connect race, forced.
cuckooflow APP: memif server, 2 links, 2 rx queues each, 1 worker.
Its worker thread alone is ptraced, with an int3 on eth_memif_rx's
"connected" flag check (librte_net_memif offset 0x87b4, after the ring
address is taken into r9). dpdk-testpmd connects as the client, its
CONNECT message held 8 s (hold_connect.py -1: the server has every ring
recorded, none mapped). A burst that stops there with r9 = NULL + ring
offset is held until cuckooflow's links are up, then resumed. Prints
what happened and whether cuckooflow survived."""
import ctypes, os, struct, subprocess, sys, time
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from harness import Testpmd, empty_pcap, query, links_up, memif_peer_argv, wait_until
APP = os.path.abspath(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PEEKTEXT, POKETEXT, CONT, GETREGS, SETREGS, SINGLESTEP, DETACH = 1, 4, 7, 12, 13, 9, 17
SEIZE, INTERRUPT = 0x4206, 0x4207
WALL = 0x40000000
NAMES = ("r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs").split()

def pt(req, tid, addr=0, data=0):
    ctypes.set_errno(0)
    r = libc.ptrace(req, tid, ctypes.c_void_p(addr), ctypes.c_void_p(data))
    if r == -1 and ctypes.get_errno() != 0:
        raise OSError(ctypes.get_errno(), "ptrace %d" % req)
    return r

def getregs(tid):
    buf = ctypes.create_string_buffer(27 * 8)
    pt(GETREGS, tid, 0, ctypes.addressof(buf))
    return buf, dict(zip(NAMES, struct.unpack("27Q", buf.raw)))

def setrip(tid, buf, rip):
    v = list(struct.unpack("27Q", buf.raw))
    v[NAMES.index("rip")] = rip
    buf2 = ctypes.create_string_buffer(struct.pack("27Q", *v))
    pt(SETREGS, tid, 0, ctypes.addressof(buf2))

import tempfile
d = tempfile.mkdtemp(prefix="memif_race_")
empty = empty_pcap(d + "/empty.pcap")
prefix = "stallrp%d" % os.getpid()
sock = ["%s/s%d.sock" % (d, k) for k in (0, 1)]
cf = subprocess.Popen([APP, "--lcores", "0@0,1@1", "--no-pci", "--no-huge", "-m", "128",
    "--log-level=lib.*:error", "--file-prefix=" + prefix] +
    ["--vdev=net_memif%d,role=server,socket=%s" % (k, sock[k]) for k in (0, 1)] +
    ["--", "--mode", "forward", "--rxq", "2", "--txq", "2"], cwd=d,
    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wait_until(lambda: query(prefix, "/cuckooflow/stats"), "telemetry", proc=cf)
base = [int(l.split()[0].split("-")[0], 16) for l in open("/proc/%d/maps" % cf.pid)
        if l.split()[-1].endswith("librte_net_memif.so.23.0") and int(l.split()[2], 16) == 0][0]
bp = base + 0x87b4
worker = [int(t) for t in os.listdir("/proc/%d/task" % cf.pid)
          if open("/proc/%d/task/%s/comm" % (cf.pid, t)).read().startswith("rte-worker-1")][0]
pt(SEIZE, worker)
pt(INTERRUPT, worker)
os.waitpid(worker, WALL)
orig = pt(PEEKTEXT, worker, bp) & 0xffffffffffffffff
pt(POKETEXT, worker, bp, (orig & ~0xff) | 0xcc)
print("worker %d traced, int3 at memif+0x87b4" % worker, flush=True)
holder = subprocess.Popen(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "hold_connect.py"), "8", "-1"],
    stdout=open(d + "/holder.log", "w"), stderr=subprocess.STDOUT)
tp_box = {}
import threading
th = threading.Thread(target=lambda: tp_box.setdefault("tp", Testpmd(memif_peer_argv(
    "dpdk-testpmd", prefix, sock, ([empty, empty], [d + "/x0", d + "/x1"]),
    ([empty, empty], [d + "/y0", d + "/y1"])))))
th.start()
calls = held = 0
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    pt(CONT, worker)
    _, st = os.waitpid(worker, WALL)
    if os.WIFEXITED(st) or os.WIFSIGNALED(st):
        print("worker gone", flush=True)
        break
    sig = os.WSTOPSIG(st)
    buf, r = getregs(worker)
    if sig == 5 and r["rip"] == bp + 1:
        calls += 1
        pt(POKETEXT, worker, bp, orig)          # the original instruction
        setrip(worker, buf, bp)
        if r["r9"] != 0 and r["r9"] < 0x1000000:
            print("burst %d: ring address %#x (region recorded, not mapped):"
                  " worker held" % (calls, r["r9"]), flush=True)
            up = links_up(prefix, (0, 1), timeout=60)
            print("cuckooflow links up: %s; worker resumed" % up, flush=True)
            held = 1
            pt(DETACH, worker, 0, 0)
            break
        if r["r9"] >= 0x1000000:
            print("burst %d: ring address %#x (mapped): the first burst "
                  "that reads a ring; untraced from here" % (calls, r["r9"]),
                  flush=True)
            pt(DETACH, worker, 0, 0)
            break
        pt(SINGLESTEP, worker)
        os.waitpid(worker, WALL)
        pt(POKETEXT, worker, bp, (orig & ~0xff) | 0xcc)
        continue
    if sig not in (5, 19, 0):
        print("worker stopped by signal %d at %#x" % (sig, r["rip"]), flush=True)
        pt(DETACH, worker, 0, sig)
        break
else:
    print("no burst held in 120 s (%d bursts)" % calls, flush=True)
    pt(POKETEXT, worker, bp, orig)
    pt(DETACH, worker, 0, 0)
th.join()
up = links_up(prefix, (0, 1), timeout=30, proc=cf)
for _ in range(40):
    if cf.poll() is not None:
        break
    query(prefix, "/cuckooflow/stats")
print("links up %s, cuckooflow %s" % (up, "alive" if cf.poll() is None else
      "exited %s" % cf.returncode), flush=True)
if "tp" in tp_box:
    tp_box["tp"].kill()
if cf.poll() is None:
    cf.send_signal(2)
    cf.wait(timeout=60)
print("cuckooflow exit status %s" % cf.returncode)
holder.wait()
print(open(d + "/holder.log").read())
