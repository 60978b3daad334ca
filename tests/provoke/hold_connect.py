#!/usr/bin/python3
"""hold_connect.py HOLD WHICH: a provocation run by hand (docs/testing.md,
"Provocations"), not a test. Finds the next dpdk-testpmd started as a
memif client (--file-prefix ..._peer), ptraces its eal-intr-thread alone
(PTRACE_SEIZE on the thread id: its other threads run on) and holds it
HOLD seconds at a point of the memif handshake, then lets it go:
  WHICH = N > 0: once it has received the N-th CONNECTED (type 7): the
      server (cuckooflow) has both links up, testpmd not that one;
  WHICH = 0: at the CONNECTED of its second link (the higher socket);
  WHICH = -1: before it sends its first CONNECT (type 6): the server has
      every ring of that link recorded, none mapped.
Run beside test_memif_two_queues (WHICH 0, 1 or 2: the test lost frames
before Testpmd.start_forwarding()) or by memif_connect_race.py."""
import ctypes, os, re, struct, sys, time

HOLD = float(sys.argv[1]) if len(sys.argv) > 1 else 15.0
WHICH = int(sys.argv[2]) if len(sys.argv) > 2 else 2
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                        ctypes.c_void_p]
PTRACE_SYSCALL, PTRACE_GETREGS, PTRACE_DETACH = 24, 12, 17
PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
PTRACE_O_TRACESYSGOOD = 1
PTRACE_GET_SYSCALL_INFO = 0x420e
WALL = 0x40000000
SYS_recvmsg = 47


def pt(req, tid, addr=0, data=0):
    r = libc.ptrace(req, tid, ctypes.c_void_p(addr), ctypes.c_void_p(data))
    if r < 0:
        raise OSError(ctypes.get_errno(), "ptrace %d" % req)
    return r


def regs(tid):
    buf = ctypes.create_string_buffer(27 * 8)
    pt(PTRACE_GETREGS, tid, 0, ctypes.addressof(buf))
    v = struct.unpack("27Q", buf.raw)
    names = ("r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi "
             "orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs")
    return dict(zip(names.split(), v))


def find():
    while True:
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                cmd = open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")
            except OSError:
                continue
            if cmd and cmd[0].endswith(b"dpdk-testpmd") and \
                    any(re.match(rb"--file-prefix=.*_peer$", a) for a in cmd):
                for t in os.listdir("/proc/%s/task" % p):
                    try:
                        comm = open("/proc/%s/task/%s/comm" % (p, t)).read()
                    except OSError:
                        continue
                    if comm.startswith("eal-intr"):
                        return int(p), int(t)
        time.sleep(0.001)


pid, tid = find()
print("testpmd %d, eal-intr-thread %d" % (pid, tid), flush=True)
pt(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD)
pt(PTRACE_INTERRUPT, tid)
os.waitpid(tid, WALL)
mem = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
seen, in_recvmsg, msghdr, hello = 0, False, 0, set()
t0 = time.monotonic()
while True:
    pt(PTRACE_SYSCALL, tid)
    _, status = os.waitpid(tid, WALL)
    if os.WIFEXITED(status) or os.WIFSIGNALED(status):
        print("thread gone", flush=True)
        sys.exit(1)
    if not (os.WIFSTOPPED(status) and os.WSTOPSIG(status) == 0x85):
        continue          # a signal or group stop: go on
    info = ctypes.create_string_buffer(88)
    n = pt(PTRACE_GET_SYSCALL_INFO, tid, 88, ctypes.addressof(info))
    op = info.raw[0]
    if op == 1:          # entry: nr, args
        nr, a0, a1 = struct.unpack_from("QQQ", info.raw, 24)
        if nr == 46 and WHICH < 0:       # sendmsg: hold a CONNECT unsent
            iov = struct.unpack("Q", os.pread(mem, 8, a1 + 16))[0]
            base = struct.unpack("Q", os.pread(mem, 8, iov))[0]
            if struct.unpack("H", os.pread(mem, 2, base))[0] == 6:
                print("%.3f s: CONNECT about to be sent (fd %d)" % (
                    time.monotonic() - t0, a0), flush=True)
                break
        if nr == SYS_recvmsg:
            msghdr, in_recvmsg, fd = a1, True, a0
        else:
            in_recvmsg = False
    elif op == 2 and in_recvmsg:     # exit: rval
        rval = struct.unpack_from("q", info.raw, 24)[0]
        in_recvmsg = False
        if rval == 128:
            iov = struct.unpack("Q", os.pread(mem, 8, msghdr + 16))[0]
            base = struct.unpack("Q", os.pread(mem, 8, iov))[0]
            mtype = struct.unpack("H", os.pread(mem, 2, base))[0]
            if mtype == 2:
                hello.add(fd)
            if mtype == 7:
                seen += 1
                print("%.3f s: CONNECTED %d received (fd %d, hello fds %s)" % (
                    time.monotonic() - t0, seen, fd, sorted(hello)), flush=True)
                if (WHICH and seen == WHICH) or \
                        (not WHICH and fd == max(hello) and len(hello) == 2):
                    break
print("holding the eal-intr-thread %.0f s" % HOLD, flush=True)
time.sleep(HOLD)
pt(PTRACE_DETACH, tid)
print("released", flush=True)
