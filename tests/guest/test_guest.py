#!/usr/bin/env python3
"""l2fwd-sirq on a PCI NIC model, in a guest of scripts/guest.sh.

Boots one guest with the NICs of one model bound to vfio-pci, runs
l2fwd-sirq in it once per policy and mode (tests/guest/fwd-runs.sh), and
for each run sends well-formed frames from this machine through the
NICs' backends (tests/guest/nicpeer.py), in bursts with quiet gaps. Each
run passes when:
  - every frame came back, byte for byte but the MACs l2fwd rewrites, and
    none only after the next burst was sent (a frame left in a ring after
    its queue's interrupt was re-armed waits for the next packet);
  - the books balance: what entered each NIC (less what its backend
    dropped before the ring) is what l2fwd-sirq received there; what it
    received is what it sent on the paired port plus its link-down drops;
    what it sent is what came back; no mbuf is left out of its pool;
  - the path counters of the report hold (--expect, --expect-irq): the
    Rx "interrupt" the PMD offers, Rx interrupts, TX completion.
--link-flap pulls the cable of the last port mid-traffic (QEMU's
set_link off, then on) and asks for link-down drops and a resumed flow.

A guest whose vCPU stops taking interrupts is not a failed run. TCG
(QEMU 10.0, the igb case's) now and then leaves a vCPU halted with its
timer's vector in service and the next tick pending behind it (`info
lapic`: ISR 236, IRR 236): every task whose timer sits on that CPU
sleeps for good, l2fwd-sirq's stop and fwd-runs.sh's own sleeps among
them, and the guest kernel reports an RCU stall. On that report the
run is dropped, the CPUs' APIC state logged, and the runs from it on go
to a new guest, at most MAX_WEDGED times a case; a real hang of
l2fwd-sirq's, with every vCPU alive, still fails its run
(tests/guest/fwd-runs.sh, run-N.hang).

Exit 0 when every run passes, 1 when one fails, 77 (skip) when the guest
lab cannot run here (not root, no QEMU or kernel).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import nicpeer  # noqa: E402

POLICIES = ["mainline", "ksoftirqd", "kicinski", "deferred"]
VF_MAC = "52:54:00:12:35:56"    # --vf: VF 0's, set from the PF
SKIP = 77
# The guest kernel's report of a CPU that no longer runs its timers.
WEDGED_RX = re.compile(r"rcu: INFO: \S+ detected stalls on CPUs|"
                       r"rcu: \S+ kthread timer wakeup didn't happen")
MAX_WEDGED = 2


class GuestWedged(Exception):
    """The guest kernel reported an RCU stall: a vCPU stopped."""


def log(msg):
    print("test_guest: " + msg, flush=True)


def free_udp_ports(n):
    """N distinct free UDP ports on 127.0.0.1 (free when asked)."""
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def udp_drops(port):
    """Datagrams the kernel dropped on the UDP socket bound to PORT:
    frames for the guest that QEMU's backend never read."""
    want = ":%04X" % port
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1].endswith(want):
                return int(fields[-1])
    return 0


def tap_drops(name):
    try:
        with open("/sys/class/net/%s/statistics/tx_dropped" % name) as f:
            return int(f.read())
    except OSError:
        return 0


class Expect:
    """COUNTER=N, COUNTER>N or COUNTER=all (the number of Rx queues),
    summed over the report's lcores (config or counters)."""

    RE = re.compile(r"^(\w+)(=|>|>=)(\w+)$")

    def __init__(self, spec):
        m = self.RE.match(spec)
        if not m:
            raise argparse.ArgumentTypeError("--expect %r: NAME=N, NAME>N or NAME=all" % spec)
        self.name, self.op, self.value = m.groups()

    def check(self, report):
        total, found = 0, False
        for lc in report["sirq"]["lcores"]:
            for part in ("config", "counters"):
                if self.name in lc[part]:
                    total += lc[part][self.name]
                    found = True
        if not found:
            return "%s: not in the report" % self.name
        if self.value == "all":
            want = sum(lc["config"]["rx_queues"] for lc in report["sirq"]["lcores"])
        else:
            want = int(self.value)
        ok = {"=": total == want, ">": total > want, ">=": total >= want}[self.op]
        return None if ok else "%s is %d, want %s %d" % (self.name, total, self.op, want)

    def __str__(self):
        return self.name + self.op + self.value


class NapiExpect:
    """napi:[pP:]FIELD>N or =N for every NAPI context (Rx queue) of the
    report's lcores, or of port P's: packets (taken from its queue), irqs
    (its own Rx interrupts that woke the dispatcher)."""

    RE = re.compile(r"^napi:(?:p(\d+):)?(packets|irqs)(=|>)(\d+)$")

    def __init__(self, spec):
        m = self.RE.match(spec)
        if not m:
            raise argparse.ArgumentTypeError("%r: napi:[pP:]packets>N, napi:[pP:]irqs>N (or =N)" % spec)
        self.port = None if m.group(1) is None else int(m.group(1))
        self.name, self.op, self.value = m.group(2), m.group(3), int(m.group(4))

    def check(self, report):
        ctxs = [n for lc in report["lcores"] for n in lc["napi"]
                if self.port is None or n["port"] == self.port]
        if not ctxs:
            return "no NAPI context%s in the report" % (
                "" if self.port is None else " of port %d" % self.port)
        bad = [n for n in ctxs
               if not (n[self.name] > self.value if self.op == ">" else n[self.name] == self.value)]
        spread = ", ".join("p%dq%d %d" % (n["port"], n["queue"], n[self.name]) for n in ctxs)
        if bad:
            return "%s per queue: %s; want each %s %d" % (self.name, spread, self.op, self.value)
        log("%s per queue: %s" % (self.name, spread))
        return None

    def __str__(self):
        return "napi:%s%s%s%d" % ("" if self.port is None else "p%d:" % self.port,
                                  self.name, self.op, self.value)


def expectation(spec):
    return NapiExpect(spec) if spec.startswith("napi:") else Expect(spec)


class Monitor:
    """QEMU's human monitor on a unix socket."""

    def __init__(self, path):
        self.path = path

    def session(self, lines):
        """LINES in one connection (`cpu N` holds for the next); what
        the monitor answered, its echo and escapes removed."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.path)
        s.settimeout(5)
        out = b""
        try:
            for line in lines:
                s.sendall(line.encode() + b"\n")
                time.sleep(0.5)
                while True:
                    try:
                        chunk = s.recv(65536)
                    except socket.timeout:
                        break
                    out += chunk
                    if not chunk or out.endswith(b"(qemu) "):
                        break
        finally:
            s.close()
        text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out.decode(errors="replace"))
        return "\n".join(ln for ln in text.replace("\r", "").splitlines()
                         if ln.strip() and not ln.startswith("(qemu)"))

    def cmd(self, line):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.path)
        s.settimeout(5)
        s.sendall(line.encode() + b"\n")
        time.sleep(0.3)
        s.close()


class Case:
    def __init__(self, a, phases):
        self.a = a
        self.phases = phases
        self.nics = a.nics
        # Several queues need a multi-queue tap backend, but on igb, whose
        # model computes RSS itself whatever the backend.
        self.queues = max(p.queues for p in phases)
        self.tap = a.tap or (self.queues > 1 and a.model != "igb")
        self.dir = tempfile.mkdtemp(prefix="guest-%s-" % a.model, dir=a.workdir)
        self.case = os.path.join(self.dir, "case")
        os.makedirs(self.case)
        self.results = []
        self.wedged = []        # the runs during which the guest wedged
        if self.tap:
            self.taps = ["sq%d_%d" % (os.getpid() % 10000, i) for i in range(self.nics)]
            self.specs = ["tap=" + t for t in self.taps]
        else:
            ports = free_udp_ports(2 * self.nics)
            # QEMU sends to A (we listen there) and listens on B.
            self.udp = [(ports[2 * i], ports[2 * i + 1]) for i in range(self.nics)]
            self.specs = ["udp=%d:%d" % p for p in self.udp]
        # scripts/guest.sh's: an igb sits behind a root port, on bus 1, 2...
        if a.model == "igb":
            self.bdfs = ["0000:%02x:00.0" % (1 + i) for i in range(self.nics)]
        else:
            self.bdfs = ["0000:00:%02x.0" % (3 + i) for i in range(self.nics)]
        self.macs = [nicpeer.mac_bytes("52:54:00:12:34:%02x" % (0x56 + i))
                     for i in range(self.nics)]
        # --vf: port 0 is VF 0 of NIC 0 (tests/guest/sriov-vf.sh), from
        # the first run of the phase that asks for it on: the 82576's first
        # VF is at device 0x10 of the PF's bus.
        self.pf = self.bdfs[0]
        vf = False
        for ph in phases:
            vf = vf or ph.vf
            ph.bdfs, ph.macs = list(self.bdfs), list(self.macs)
            if vf:
                ph.bdfs[0] = "%s:10.0" % self.pf.rsplit(":", 1)[0]
                ph.macs[0] = nicpeer.mac_bytes(VF_MAC)

    # --- the guest ---------------------------------------------------
    def runs(self):
        """(phase, policy, mode) for each run, in order."""
        for p in self.phases:
            if p.runs:
                for policy, mode in p.runs:
                    yield p, policy, mode
                continue
            for mode in p.modes:
                for policy in p.policies:
                    yield p, policy, mode

    def write_vf_pre(self, n):
        """Before run N the guest makes the VFs (fwd-runs.sh)."""
        with open(os.path.join(self.case, "run-%d.pre" % n), "w") as f:
            f.write("bash %s %s %s\n" % (os.path.join(HERE, "sriov-vf.sh"), self.pf, VF_MAC))

    def write_runs(self):
        vf_made = False
        for n, (p, policy, mode) in enumerate(self.runs(), 1):
            if p.vf and not vf_made:
                self.write_vf_pre(n)
                vf_made = True
            lcores = ",".join(str(i) for i in range(p.lcores))
            argv = ["-l", lcores, "--file-prefix", "g%d" % n, "--log-level", "lib.eal:notice"]
            for b in p.bdfs:
                argv += ["-a", b]
            argv += p.eal
            argv += ["--", "-p", "0x%x" % ((1 << self.nics) - 1), "-T", "0",
                     "--policy", policy, "--mode", mode]
            if p.queues > 1:
                argv += ["--rxq", str(p.queues)]
            argv += p.app
            with open(os.path.join(self.case, "run-%d.args" % n), "w") as f:
                f.write("\n".join(argv) + "\n")
        if self.a.tx_tracked:
            # The last NIC alone, after the runs (NIC 0 may have become a
            # VF's PF on the kernel): its TX completions (tx_tracked.c).
            argv = ["-l", "0,1", "--file-prefix", "gtx", "--log-level", "lib.eal:notice",
                    "-a", self.bdfs[-1], "--", "--pkts", str(self.a.tx_tracked)]
            with open(os.path.join(self.case, "after.args"), "w") as f:
                f.write("\n".join(argv) + "\n")

    def make_taps(self):
        for t in self.taps:
            subprocess.run(["ip", "tuntap", "add", "dev", t, "mode", "tap"] +
                           (["multi_queue"] if self.queues > 1 else []), check=True)
            # Nothing of this machine's own (IPv6 solicitations) into the guest.
            with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % t, "w") as f:
                f.write("1")
            subprocess.run(["ip", "link", "set", t, "up"], check=True)

    def del_taps(self):
        for t in getattr(self, "taps", []):
            subprocess.run(["ip", "link", "del", t], stderr=subprocess.DEVNULL)

    def start_guest(self, first=1):
        """A guest whose fwd-runs.sh starts at run FIRST."""
        with open(os.path.join(self.case, "first"), "w") as f:
            f.write("%d\n" % first)
        nic_args = []
        for s in self.specs:
            spec = "%s,%s" % (self.a.model, s)
            if self.tap and self.queues > 1:
                spec += ",queues=%d" % self.queues
            nic_args += ["--nic", spec]
        self.mon = os.path.join(self.dir, "mon.sock")
        cmd = [os.path.join(TOP, "scripts", "guest.sh"), "--out", self.dir,
               "--monitor", self.mon, "--smp", str(self.a.smp),
               "--timeout", str(self.a.timeout)] + nic_args
        for t in self.a.qemu_trace:
            cmd += ["--qemu-trace", t]
        cmd += ["--", "bash", os.path.join(HERE, "fwd-runs.sh"), self.case, self.a.l2fwd]
        if self.a.tx_tracked:
            cmd.append(self.a.tx_tracked_bin)
        log("guest: " + " ".join(cmd))
        self.guest_log = open(os.path.join(self.dir, "guest.log"), "w")
        self.guest = subprocess.Popen(cmd, stdout=self.guest_log, stderr=subprocess.STDOUT)

    def wait_file(self, path, timeout):
        end = time.monotonic() + timeout
        next_look = 0
        while time.monotonic() < end:
            if os.path.exists(path):
                return True
            if self.guest.poll() is not None:
                return os.path.exists(path)
            if time.monotonic() >= next_look:
                self.check_wedged()
                next_look = time.monotonic() + 1
            time.sleep(0.1)
        return False

    def check_wedged(self):
        """GuestWedged when the guest kernel reported an RCU stall."""
        try:
            with open(os.path.join(self.dir, "console.log"), errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return
        hits = [i for i, ln in enumerate(lines) if WEDGED_RX.search(ln)]
        if hits:
            raise GuestWedged("\n".join(lines[hits[0]:hits[0] + 8]))

    def apic_state(self):
        """Each vCPU's halt flag and local APIC ISR/IRR, from the monitor."""
        cmds = []
        for cpu in range(self.a.smp):
            cmds += ["cpu %d" % cpu, "info lapic", "info registers"]
        try:
            text = self.mon_session(cmds)
        except OSError as e:
            return "(the monitor: %s)" % e
        keep = [ln.strip() for ln in text.splitlines()
                if re.match(r"\s*(dumping local APIC|ISR|IRR|APR|CPU#|RIP=)", ln)]
        return "; ".join(keep)

    def mon_session(self, cmds):
        return Monitor(self.mon).session(cmds)

    def stop_guest(self):
        """guest.sh stops QEMU and virtiofsd on SIGTERM (its trap)."""
        if self.guest.poll() is None:
            self.guest.terminate()
            try:
                self.guest.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.guest.kill()
                self.guest.wait()
        self.guest_log.close()

    def resume(self, n, why):
        """The guest wedged in run N: runs N on in a new guest."""
        self.wedged.append(n)
        state = self.apic_state()
        log("run %d: the guest wedged (a vCPU stopped taking interrupts); the guest kernel said:" % n)
        for ln in why.splitlines():
            log("    " + ln)
        log("    APIC: " + state)
        self.stop_guest()
        for name in ("console.log", "guest.log"):
            src = os.path.join(self.dir, name)
            if os.path.exists(src):
                os.replace(src, os.path.join(self.dir, "wedged-%d-%s" % (len(self.wedged), name)))
        # The dropped run and those after it start over: only their
        # arguments stay, and the VF is made again when the phase has one.
        for f in os.listdir(self.case):
            m = re.match(r"run-(\d+)\.", f)
            if m and int(m.group(1)) >= n and not f.endswith((".args", ".pre")):
                os.remove(os.path.join(self.case, f))
        ph = list(self.runs())[n - 1][0]
        if ph.vf:
            self.write_vf_pre(n)
        log("run %d: runs %d to %d in a new guest (%d of at most %d)"
            % (n, n, len(list(self.runs())), len(self.wedged), MAX_WEDGED))
        self.start_guest(first=n)

    # --- one run -----------------------------------------------------
    def drops(self):
        if self.tap:
            return [tap_drops(t) for t in self.taps]
        return [udp_drops(b) for _a, b in self.udp]

    def traffic(self, peer, a):
        if not peer.warm_up(timeout_s=a.warmup_s):
            return "no frame came back within %d s" % a.warmup_s
        flows = 4096 if a.queues > 1 else None
        if a.link_flap:
            half = a.bursts // 2
            peer.send_bursts(half, a.burst, a.gap_ms / 1e3, flows=flows)
            # The last port's cable: frames to it are dropped (link down),
            # and the flow resumes when it is back.
            last = "nic%d" % (self.nics - 1)
            mon = Monitor(self.mon)
            mon.cmd("set_link %s off" % last)
            time.sleep(a.flap_s)
            # Into the ports whose frames leave through the pulled one.
            into = [i for i, o in peer.pairs.items() if o == self.nics - 1]
            peer.send_bursts(2, a.burst, a.gap_ms / 1e3, ports=into, flows=flows,
                             kind=nicpeer.LINKDOWN)
            time.sleep(a.flap_s)
            mon.cmd("set_link %s on" % last)
            # Until the peer sees the path again.
            if not peer.warm_up(timeout_s=a.warmup_s):
                return "no frame came back after the link returned"
            peer.send_bursts(a.bursts - half, a.burst, a.gap_ms / 1e3, flows=flows)
        else:
            peer.send_bursts(a.bursts, a.burst, a.gap_ms / 1e3, flows=flows)
        peer.wait_quiet(a.quiet_s, 120)
        return None

    def check(self, a, policy, mode, books, report, rc, drops):
        fails = []
        sent = sum(bp["sent"]["data"] for bp in books["ports"])
        if sent < a.min_frames:
            fails.append("%d data frames sent, fewer than --min-frames %d" % (sent, a.min_frames))
        if rc != 0:
            fails.append("l2fwd-sirq exit %s" % rc)
        if books["corrupt"]:
            fails.append("%d frames differ, e.g. %s" % (len(books["corrupt"]), books["corrupt"][0]))
        if books["duplicates"]:
            fails.append("%d duplicates" % books["duplicates"])
        lost = [m for m in books["missing"] if m["kind"] == "data"]
        if len(lost) > sum(drops):
            fails.append("%d data frames never came back (%d dropped by the backends), e.g. %s"
                         % (len(lost), sum(drops), lost[:3]))
        if books["late"]:
            fails.append("%d frames came back only after the next burst (waited in a ring), e.g. %s"
                         % (len(books["late"]), books["late"][:3]))
        if report is None:
            fails.append("no report")
            return fails
        if report.get("mbufs_in_use", 0) != 0:
            fails.append("%d mbufs out of the pool at exit" % report["mbufs_in_use"])
        ports = {p["port"]: p for p in report["ports"]}
        for bp in books["ports"]:
            i = bp["port"]
            out = i ^ 1
            rp, ro = ports[i], ports[out]
            into = bp["into_guest"]
            if rp["rx"] != into - drops[i]:
                fails.append("port %d: l2fwd rx %d, but %d entered the NIC (%d sent, %d dropped by the backend)"
                             % (i, rp["rx"], into - drops[i], into, drops[i]))
            if rp["runts"]:
                fails.append("port %d: %d runts" % (i, rp["runts"]))
        for bp in books["ports"]:
            i = bp["port"]
            src = ports[i ^ 1]
            rp = ports[i]
            if src["rx"] != rp["tx"] + rp["link_down_drops"]:
                fails.append("port %d: rx %d on port %d, but tx %d + link-down drops %d here"
                             % (i, src["rx"], i ^ 1, rp["tx"], rp["link_down_drops"]))
            if rp["tx"] != bp["out_of_guest"]:
                fails.append("port %d: l2fwd tx %d, %d came out of the NIC" % (i, rp["tx"], bp["out_of_guest"]))
        expects = list(a.expect) + (list(a.expect_irq) if mode == "irq" else [])
        if a.link_flap:
            expects.append(Expect("link_down_drops>0"))
        for e in expects:
            if e.name == "link_down_drops":
                total = sum(p["link_down_drops"] for p in report["ports"])
                if total <= 0:
                    fails.append("no link-down drops while the cable was out")
                continue
            why = e.check(report)
            if why:
                fails.append(why)
        if a.lcores > 1:
            for lc in report["lcores"]:
                if lc["rx_packets"] == 0:
                    fails.append("lcore %d received nothing (RSS)" % lc["lcore"])
        return fails

    def run_one(self, n, a, policy, mode):
        ready = os.path.join(self.case, "run-%d.ready" % n)
        runlog = os.path.join(self.case, "run-%d.log" % n)
        if not self.wait_file(ready, a.start_s) or open(ready).read().strip() != "up":
            tail = open(runlog).read()[-2000:] if os.path.exists(runlog) else ""
            open(os.path.join(self.case, "run-%d.done" % n), "w").close()
            fails = ["l2fwd-sirq did not start; its output ends:\n" + tail]
            self.results.append({"run": n, "policy": policy, "mode": mode, "fails": fails,
                                 "books": None, "drops": None, "report": None})
            return fails
        before = self.drops()
        peer = nicpeer.Peer(self.specs, {i: i ^ 1 for i in range(self.nics)}, a.macs,
                            seed=n, burst_max=a.burst)
        try:
            why = self.traffic(peer, a)
            books = peer.books()
        finally:
            peer.close()
        drops = [x - y for x, y in zip(self.drops(), before)]
        open(os.path.join(self.case, "run-%d.done" % n), "w").close()
        rc_path = os.path.join(self.case, "run-%d.rc" % n)
        # fwd-runs.sh's FWD_STOP_S (60) for the stop, then up to 60 s of
        # gdb when it did not stop.
        self.wait_file(rc_path, 180)
        try:
            rc = int(open(rc_path).read())
        except (OSError, ValueError):
            rc = None
        try:
            report = json.load(open(os.path.join(self.case, "run-%d.json" % n)))
        except (OSError, ValueError):
            report = None
        with open(os.path.join(self.dir, "books-%d.json" % n), "w") as f:
            json.dump({"policy": policy, "mode": mode, "books": books, "drops": drops}, f, indent=1)
        try:
            cpu = [float(x) for x in open(os.path.join(self.case, "run-%d.cpu" % n)).read().split()]
        except (OSError, ValueError):
            cpu = None
        fails = [why] if why else []
        hang = os.path.join(self.case, "run-%d.hang" % n)
        if os.path.exists(hang):
            fails.append("l2fwd-sirq did not stop within 60 s of its SIGINT (killed); its threads:\n"
                         + open(hang, errors="replace").read()[-6000:])
        if mode == "irq" and a.log_irq:
            out = open(runlog, errors="replace").read() if os.path.exists(runlog) else ""
            fails += ["l2fwd-sirq's output has no line matching %r" % rx
                      for rx in a.log_irq if not re.search(rx, out, re.M)]
        fails += self.check(a, policy, mode, books, report, rc, drops)
        self.results.append({"run": n, "policy": policy, "mode": mode, "fails": fails,
                             "books": books, "drops": drops, "report": report, "cpu": cpu})
        return fails

    def check_tx_tracked(self):
        """tx_tracked.c's run on the last NIC: every tracked packet completed,
        through the PMD's tx_done_cleanup, the last ones with no traffic
        after them, and every mbuf back."""
        path = os.path.join(self.case, "after.json")
        try:
            rc = int(open(os.path.join(self.case, "after.rc")).read())
            r = json.loads(open(path).read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            out = os.path.join(self.case, "after.log")
            tail = open(out).read()[-2000:] if os.path.exists(out) else ""
            return ["tx_tracked: no result; its output ends:\n" + tail]
        self.results.append({"run": "tx_tracked", "report": r, "rc": rc})
        log("tx_tracked on %s: way %s, %d sent, %d completed (last %.1f ms after the last send), "
            "tx_done_cleanup %d calls freed %d, exit %d" % (
                r["driver"], r["way"], r["sent"], r["completed"], r["last_completion_ms"],
                r["tx_done_cleanup_calls"], r["tx_done_cleanup_pkts"], rc))
        fails = []
        if rc != 0:
            fails.append("tx_tracked exit %d" % rc)
        if r["way"] != "tx_done_cleanup":
            fails.append("tx_tracked: completion by %s, not the PMD's tx_done_cleanup" % r["way"])
        if r["sent"] != self.a.tx_tracked or r["completed"] != r["sent"]:
            fails.append("tx_tracked: %d of %d sent, %d completed" % (r["sent"], self.a.tx_tracked, r["completed"]))
        if r["tx_done_cleanup_pkts"] <= 0:
            fails.append("tx_tracked: tx_done_cleanup freed nothing (%d calls)" % r["tx_done_cleanup_calls"])
        if r["mbufs_in_use"] != 0:
            fails.append("tx_tracked: %d mbufs out of the pool" % r["mbufs_in_use"])
        return fails

    def counters_line(self, r):
        rep = r["report"]
        if rep is None:
            return ""
        tot = {}
        for lc in rep["sirq"]["lcores"]:
            for part in ("config", "counters"):
                for k in ("rx_queues_desc_status", "rx_queues_count", "rx_queues_monitor", "rx_queues_intr", "rx_intr_rearms", "rx_intr_rearm_work",
                          "tx_queues_done_cleanup", "rx_sched_desc", "rx_sched_count", "rx_sched_monitor",
                          "rx_sched_fetch", "irq_rx_events", "tx_done_cleanup_calls",
                          "tx_completions"):
                    if k in lc[part]:
                        tot[k] = tot.get(k, 0) + lc[part][k]
        ports = " ".join("p%d rx %d tx %d ldd %d" % (p["port"], p["rx"], p["tx"], p["link_down_drops"])
                         for p in rep["ports"])
        return ports + " | " + " ".join("%s %d" % kv for kv in tot.items())

    def run(self):
        self.write_runs()
        if self.tap:
            self.make_taps()
        try:
            self.start_guest()
            failed = 0
            runs = list(enumerate(self.runs(), 1))
            i = 0
            while i < len(runs):
                n, (ph, policy, mode) = runs[i]
                t0 = time.monotonic()
                try:
                    fails = self.run_one(n, ph, policy, mode)
                except GuestWedged as e:
                    if len(self.wedged) >= MAX_WEDGED:
                        log("run %d: the guest wedged again (%d times): not going on; it said:\n%s"
                            % (n, len(self.wedged) + 1, e))
                        log("    APIC: " + self.apic_state())
                        self.results.append({"run": n, "policy": policy, "mode": mode,
                                             "fails": ["the guest wedged"], "books": None,
                                             "drops": None, "report": None})
                        failed += 1
                        self.stop_guest()
                        break
                    self.resume(n, str(e))
                    continue
                i += 1
                r = self.results[-1]
                b = r["books"]
                sent = sum(bp["sent"]["data"] for bp in b["ports"]) if b else 0
                log("%s%-10s %-4s %s in %.0f s: %d data frames, %s" % (
                    ph.label, policy, mode, "FAIL" if fails else "ok", time.monotonic() - t0, sent,
                    self.counters_line(r)))
                if b and r.get("cpu"):
                    u, sy, w = r["cpu"]
                    lat = ", ".join("into p%d %s/%s" % (bp["port"], bp["latency_us"]["p50"], bp["latency_us"]["p99"])
                                    for bp in b["ports"])
                    log("    l2fwd-sirq CPU %.2f s user + %.2f s sys in %.1f s; latency p50/p99 us %s"
                        % (u, sy, w, lat))
                for f in fails:
                    log("    " + f)
                failed += bool(fails)
                if self.guest.poll() is not None:
                    break
            rc = self.guest.wait(timeout=300)
        finally:
            if hasattr(self, "guest"):
                self.stop_guest()
            self.del_taps()
        glog = open(os.path.join(self.dir, "guest.log")).read()
        if rc == SKIP and not self.results:
            log("skip: " + glog.strip().splitlines()[-1] if glog.strip() else "skip")
            return SKIP
        if self.wedged:
            log("the guest wedged during run(s) %s; each was run again in a new guest"
                % ", ".join(map(str, self.wedged)))
        if rc != 0 or len(self.results) != len(list(self.runs())):
            log("the guest exited %d after %d of %d runs; its log:" % (rc, len(self.results), len(list(self.runs()))))
            print(glog[-3000:])
            failed += 1
        if self.a.tx_tracked:
            fails = self.check_tx_tracked()
            for f in fails:
                log("    " + f)
            failed += bool(fails)
        if self.a.json:
            with open(self.a.json, "w") as f:
                json.dump({"model": self.a.model, "results": self.results}, f, indent=1)
        return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, choices=["e1000e", "virtio", "vmxnet3", "igb"])
    ap.add_argument("--l2fwd", default=os.environ.get("L2FWD_SIRQ", os.path.join(TOP, "build", "apps", "l2fwd-sirq", "l2fwd-sirq")))
    ap.add_argument("--nics", type=int, default=2)
    ap.add_argument("--queues", type=int, default=1, help="Rx queues per port (RSS; a multi-queue tap backend)")
    ap.add_argument("--tap", action="store_true", help="tap backends even for one queue")
    ap.add_argument("--lcores", type=int, default=1)
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--modes", default="poll,irq")
    ap.add_argument("--runs", default="",
                    help="POLICY:MODE,... instead of every policy in every mode; "
                    "ignored when SIRQ_GUEST_MATRIX=full")
    ap.add_argument("--bursts", type=int, default=12)
    ap.add_argument("--burst", type=int, default=24, help="largest burst per port (sizes vary 1..N)")
    ap.add_argument("--min-frames", type=int, default=0, metavar="N",
                    help="a run fails unless at least N data frames were sent")
    ap.add_argument("--gap-ms", type=float, default=300)
    ap.add_argument("--quiet-s", type=float, default=3)
    ap.add_argument("--warmup-s", type=float, default=120)
    ap.add_argument("--start-s", type=float, default=600)
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--link-flap", action="store_true")
    ap.add_argument("--flap-s", type=float, default=1.0)
    ap.add_argument("--expect", type=expectation, action="append", default=[],
                    help="COUNTER=N, COUNTER>N, COUNTER=all, or napi:FIELD>N for every queue")
    ap.add_argument("--expect-irq", type=expectation, action="append", default=[],
                    help="as --expect, in irq mode only")
    ap.add_argument("--log-irq", action="append", default=[], metavar="REGEX",
                    help="l2fwd-sirq's output must match REGEX in irq mode")
    ap.add_argument("--eal", action="append", default=[], help="one more EAL argument")
    ap.add_argument("--app", action="append", default=[], help="one more l2fwd-sirq argument")
    ap.add_argument("--qemu-trace", action="append", default=[])
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the case directory")
    ap.add_argument("--json", default=None)
    ap.add_argument("--phase", action="append", default=[], metavar="'ARGS'",
                    help="a set of runs with their own run options (--runs, --queues, "
                    "--lcores, --bursts, --link-flap, --expect...), after the runs of the "
                    "command line's, in the same guest; repeatable")
    ap.add_argument("--no-main-runs", action="store_true",
                    help="only the --phase runs")
    ap.add_argument("--vf", action="store_true",
                    help="igb: from this phase's first run on, port 0 is an SR-IOV VF of NIC 0, "
                    "whose PF goes to the kernel's igb (tests/guest/sriov-vf.sh)")
    ap.add_argument("--tx-tracked", type=int, default=0, metavar="N",
                    help="after the runs, N tracked sends on the last NIC (tests/guest/tx_tracked.c, "
                    "$GUEST_TX_TRACKED) whose completions must come from the PMD's tx_done_cleanup")
    a = ap.parse_args()
    phases = [] if a.no_main_runs else [a]
    for i, text in enumerate(a.phase, 1):
        ph = ap.parse_args(shlex.split(text) + ["--model", a.model])
        if ph.phase or ph.tx_tracked or ph.nics != a.nics or ph.smp != a.smp:
            ap.error("--phase %r: run options only" % text)
        ph.label = "[%d] " % i
        phases.append(ph)
    if not phases:
        ap.error("--no-main-runs needs a --phase")
    a.label = ""
    for ph in phases:
        if ph.vf and a.model != "igb":
            ap.error("--vf: only on --model igb (SR-IOV)")
    for ph in phases:
        settle(ap, ph)
    if a.tx_tracked:
        a.tx_tracked_bin = os.environ.get("GUEST_TX_TRACKED", "")
        if not os.access(a.tx_tracked_bin, os.X_OK):
            ap.error("--tx-tracked: GUEST_TX_TRACKED=%r is not an executable" % a.tx_tracked_bin)
    if os.geteuid() != 0:
        log("skip: the guest lab runs as root")
        return SKIP
    # meson's timeout sends SIGTERM: the guest still goes down (finally).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not os.access(a.l2fwd, os.X_OK):
        ap.error("--l2fwd: %s is not an executable" % a.l2fwd)
    case = Case(a, phases)
    try:
        rc = case.run()
    finally:
        if a.keep or os.environ.get("GUEST_KEEP"):
            log("kept " + case.dir)
        else:
            shutil.rmtree(case.dir, ignore_errors=True)
    return rc


def settle(ap, a):
    """Check a phase's run options and turn them into lists."""
    a.policies = [p for p in a.policies.split(",") if p]
    a.modes = [m for m in a.modes.split(",") if m]
    for p in a.policies:
        if p not in POLICIES:
            ap.error("--policies: unknown policy %r (%s)" % (p, ", ".join(POLICIES)))
    for m in a.modes:
        if m not in ("poll", "irq"):
            ap.error("--modes: unknown mode %r (poll, irq)" % m)
    # CI's guest suite runs the pairs meson gives; the full matrix of
    # --policies and --modes is opt-in (SIRQ_GUEST_MATRIX=full).
    matrix = os.environ.get("SIRQ_GUEST_MATRIX", "")
    if matrix not in ("", "full"):
        ap.error("SIRQ_GUEST_MATRIX=%r: only 'full' (every policy in every mode)" % matrix)
    runs = []
    for item in (x for x in a.runs.split(",") if x):
        policy, sep, mode = item.partition(":")
        if not sep or policy not in POLICIES or mode not in ("poll", "irq"):
            ap.error("--runs: %r is not POLICY:MODE (policies %s; modes poll, irq)"
                     % (item, ", ".join(POLICIES)))
        if (policy, mode) in runs:
            ap.error("--runs: %r twice" % item)
        runs.append((policy, mode))
    a.runs = [] if matrix == "full" else runs
    if runs:
        log("%sruns: %s%s" % (getattr(a, "label", ""), " ".join("%s:%s" % r for r in runs),
                              " (ignored: SIRQ_GUEST_MATRIX=full)" if matrix == "full" else ""))


if __name__ == "__main__":
    sys.exit(main())
