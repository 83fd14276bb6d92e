#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""pktgen-dpdk against a forwarder over vhost-user: NDR and PDR by a
binary search over short trials, as RFC 2544 and FD.io CSIT measure a
forwarder's throughput. Run by bench/pktgen-bench.sh (read its header);
tests/l2fwd/test_pktgen.py runs one trial (--loop).

The link: one vhost-user link, the forwarder (the DUT) on its server
end (net_vhost0), pktgen on its client end (net_virtio_user0). The DUT
sends back on port 0 what it receives there (l2fwd-sirq --portmap
"(0,0)", testpmd --port-topology=loop):

    pktgen virtio_user0 <-> vhost0 DUT (port 0 to port 0)

Why one port: pktgen (24.10 and later) gives every port an lcore of its
own, so two ports of pktgen and a forwarder are three busy-polling
lcores on two CPUs. With one, the forwarder has CPU 0 and pktgen's lcore
1 CPU 1. pktgen's main lcore 0, on CPU 0, runs the command file and
sleeps in its delays; but pktgen also starts a display thread on the
main lcore's CPU that never sleeps (it spins on rte_pause() between
screen updates). On CPU 1 it took half of pktgen's lcore, which then
left its Rx ring unread for a slice at a time and lost frames at any
rate; on CPU 0 it would take half of the forwarder's. So the bench
makes that thread SCHED_IDLE once pktgen runs the command file: it runs
on CPU 0 only when the forwarder leaves the CPU (nothing here reads the
display). memif, the other link both sides have, is not usable: pktgen
asks for an MTU of 1518, whose frame is more than net_memif's largest
(1518 bytes with the header), and stops.

The ceiling is pktgen looped to itself: one net_ring port whose
transmit ring is its receive ring, lcores placed as above, nothing on
CPU 0. Its lcore sends and receives as in the other rows, without the
vhost-user link (one pktgen process cannot hold both ends of one:
net_vhost listens only once its port is started, after every port is
probed, and a virtio-user server waits for its client inside the probe).
The ring loses nothing (a full ring pushes back), so the ceiling is the
rate of its first trial, pktgen as fast as it can. pktgen 25.08 stops on
a port whose PMD cannot set the MTU ("Cannot set MTU", ENOTSUP), which
net_ring cannot (nor net_vhost, nor net_memif): then the ceiling is
pktgen on one net_null port, which drops what pktgen sends and hands it
a full burst at every receive, so pktgen's lcore sends and receives as
fast as it can with no link at all. That is not a loop, and says so in
the table ("ceiling (net_null)").

A trial: pktgen runs the command file bench/pktgen/trial.pkt (size,
rate, duration filled in): its port sends at RATE % of the link speed
it reports (the virtio-user port is given speed=100000, 100 Gb/s; at
100 % it sends as fast as it can) for the trial's seconds, stops, waits
1.5 s and quits. Its port's counters are read through DPDK's telemetry
(/ethdev/stats) every 0.1 s; the last read, in the wait after "stop",
holds the trial's totals. The offered rate is what pktgen's port sent a
second, the received rate what it received.

Loss. A frame is lost when pktgen sent it and did not get it back:
loss = 1 - received / offered. vhost-user pushes back: while the DUT's
Rx ring is full, pktgen's send waits (pktgen retries a burst until the
ring takes it), so a DUT that cannot keep up slows pktgen down rather
than drop what it is sent; a NIC would have dropped those frames. What
is lost is what the DUT took and could not send back, because pktgen's
Rx ring was full (pktgen's lcore receives only between its sends). So
the search's variable is pktgen's rate setting (RATE %), its result the
rates pktgen measured: offered and received a second at the highest
setting whose loss is within the bound. pktgen sends 0.6 to 0.65 of
what a setting asks for (1 % of 100 Gb/s at 64 bytes asks for 1.49
Mpps; it sends 0.90 here), so the setting is a knob, not a rate, and
the bench never quotes it as one.
"""

import argparse
import atexit
import fcntl
import json
import os
import pty
import select
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import termios
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LINK_MBPS = 100000
WIRE_OVERHEAD = 20  # preamble, start delimiter, inter-frame gap; size has the FCS


def line_pps(size, mbps=LINK_MBPS):
    """What pktgen asks for at 100 % of MBPS with SIZE-byte frames."""
    return mbps * 1e6 / ((size + WIRE_OVERHEAD) * 8)


def telemetry(prefix, cmd, timeout=1.0):
    """One command on the telemetry socket of the DPDK process PREFIX."""
    path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.recv(4096)
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 16))
    finally:
        s.close()


def port_stats(prefix, ports):
    out = []
    for p in ports:
        st = telemetry(prefix, "/ethdev/stats,%d" % p)["/ethdev/stats"]
        out.append(st)
    return out


class Bench:
    def __init__(self, args):
        self.a = args
        self.tag = "%s-%d" % (args.prefix, os.getpid())
        self.dir = os.path.join(args.tmp, self.tag)
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(args.out, exist_ok=True)
        self.dut = None
        self.dut_name = None
        self.dut_report = None
        self.trials = 0
        self.history = []  # this row's and size's trials (main() resets it)
        self.ceiling_pmd = "net_ring"
        # pktgen's own log of the last trial (its -l): what its commands said
        self.pglog = os.path.abspath(os.path.join(args.out, "pktgen-last-trial.log"))

    def cleanup(self):
        """What a run leaves: the forwarder, the runtime directories and
        hugepage files of every process of this bench, the scratch
        directory. At exit, SIGINT and SIGTERM included."""
        if self.dut is not None and self.dut.poll() is None:
            self.dut.kill()
            self.dut.wait()
        for d in ("/var/run/dpdk", "/dev/hugepages"):
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for n in names:
                if n.startswith(self.tag + "-"):
                    path = os.path.join(d, n)
                    if os.path.isdir(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        try:
                            os.unlink(path)
                        except OSError:
                            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def sock(self):
        return os.path.join(self.dir, "v0.sock")

    def mem(self, mb):
        return ["-m", str(mb)] if self.a.huge else ["--no-huge", "-m", str(mb)]

    # --- the DUT --------------------------------------------------------

    def dut_start(self, name):
        """Start the forwarder NAME (l2fwd-sirq, testpmd) on CPU 0, the
        vhost-user server of the link; return once the socket listens."""
        if os.path.exists(self.sock()):
            os.unlink(self.sock())
        eal = ["--no-pci", "--file-prefix=%s-dut" % self.tag, "--log-level=lib.eal:error",
               "--vdev=net_vhost0,iface=%s,queues=1" % self.sock()] + self.mem(256)
        if name == "l2fwd-sirq":
            # its defaults but for the topology; the report at SIGINT
            self.dut_report = os.path.join(self.a.out, "l2fwd-sirq-%d.json" % os.getpid())
            cmd = [self.a.l2fwd, "-l", "0"] + eal + [
                "--", "-T", "0", "-p", "0x1", "--portmap", "(0,0)",
                "--report", self.dut_report]
        elif name == "testpmd":
            # main lcore 0 (it sleeps between statistics), forwarding lcore
            # 1, both on CPU 0
            cmd = [self.a.testpmd, "--lcores=0@0,1@0", "--main-lcore=0"] + eal + [
                "--", "--forward-mode=mac", "--port-topology=loop", "--nb-cores=1",
                "--stats-period=3600", "--disable-link-check"]
        else:
            raise SystemExit("pktgen-bench: no forwarder called %s" % name)
        log = open(os.path.join(self.a.out, "%s.log" % name), "a")
        log.write("# %s\n" % " ".join(cmd))
        log.flush()
        self.dut = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    preexec_fn=every_cpu)
        self.dut_name = name
        deadline = time.monotonic() + 30
        while not os.path.exists(self.sock()):
            if self.dut.poll() is not None:
                raise SystemExit("pktgen-bench: %s exited with %d at start; see %s"
                                 % (name, self.dut.returncode, log.name))
            if time.monotonic() > deadline:
                raise SystemExit("pktgen-bench: %s made no vhost-user socket in 30 s" % name)
            time.sleep(0.05)
        time.sleep(0.5)
        return cmd

    def dut_stats(self):
        if self.dut is None:
            return None
        try:
            return port_stats("%s-dut" % self.tag, (0,))[0]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def dut_stop(self):
        """SIGINT to the forwarder; its exit status must be 0."""
        if self.dut is None:
            return 0
        self.dut.send_signal(signal.SIGINT)
        try:
            rc = self.dut.wait(20)
        except subprocess.TimeoutExpired:
            self.dut.kill()
            rc = self.dut.wait()
        self.dut = None
        shutil.rmtree("/var/run/dpdk/%s-dut" % self.tag, ignore_errors=True)
        if rc != 0:
            raise SystemExit("pktgen-bench: %s exited with %d at SIGINT" % (self.dut_name, rc))
        return rc

    # --- pktgen ---------------------------------------------------------

    def pktgen_cmd(self, cmdfile):
        """pktgen's command line and the port whose counters count."""
        prefix = "%s-pg" % self.tag
        eal = ["--no-pci", "--file-prefix=%s" % prefix, "--log-level=lib.eal:error"]
        eal += self.mem(384)  # pktgen's pools: about 150 MB a port
        if self.a.huge:
            eal.append("--single-file-segments")  # vhost-user maps at most 8 regions
        virtio = "net_virtio_user%d,path=%s,speed=%d"
        if self.dut is not None:
            # lcore 1 (CPU 1) receives and sends on the port; lcore 0,
            # pktgen's main (CPU 0), runs the command file, sleeping in its
            # delays; its display thread is made SCHED_IDLE (run_on_pty)
            eal = ["--lcores=0@0,1@1"] + eal + ["--vdev=" + virtio % (0, self.sock(), LINK_MBPS)]
            return prefix, 0, [self.a.pktgen] + eal + ["--", "-m", "1.0", "-l", self.pglog, "-f", cmdfile]
        # the ceiling: a ring port that receives what it sends (or net_null)
        eal = ["--lcores=0@0,1@1"] + eal + ["--vdev=%s0" % self.ceiling_pmd]
        return prefix, 0, [self.a.pktgen] + eal + ["--", "-m", "1.0", "-l", self.pglog, "-f", cmdfile]

    def trial(self, size, rate, secs, latency=False):
        """One trial: returns a dict of what pktgen sent and received."""
        self.trials += 1
        n = self.trials
        lat_file = os.path.join(self.dir, "lat-%d.txt" % n)
        prefix, port, cmd = self.pktgen_cmd(os.path.join(self.dir, "trial-%d.pkt" % n))
        with open(os.path.join(HERE, "pktgen", "trial.pkt")) as f:
            text = f.read()
        if latency:
            # timestamped packets, sampled evenly over the trial up to 45,000
            # (pktgen keeps 50,000 at most), written when the sampler stops
            lat = ("latency all rate 1\nenable all latency\n"
                   "set %d latsampler simple 50000 %d %s\nstart %d latsampler"
                   % (port, max(1, int(45000 / secs)), lat_file, port))
            lat_stop = "stop %d latsampler\ndisable all latency" % port
        else:
            lat = lat_stop = ""
        # 100 %: as fast as it can, whatever the link speed (net_ring
        # reports 10 Gb/s): no wait between bursts
        text = (text.replace("@SIZE@", str(size)).replace("@RATE@", "%.4f" % rate)
                .replace("@FAST@", "set all tx_cycles 0" if rate >= 100 else "")
                .replace("@MS@", str(int(secs * 1000)))
                .replace("@LATENCY_STOP@", lat_stop).replace("@LATENCY@", lat))
        with open(cmd[-1], "w") as f:
            f.write(text)
        d0 = self.dut_stats()
        log_path = os.path.join(self.a.out, "pktgen.log")
        stats, rc = run_on_pty(cmd, prefix, (0,), log_path, secs + 60)
        if rc != 0 and self.dut is None and self.ceiling_pmd == "net_ring" and \
                b"Cannot set MTU" in tail_of(log_path):
            print("pktgen-bench: this pktgen cannot use net_ring (it must set the MTU):"
                  " the ceiling is pktgen on net_null", file=sys.stderr, flush=True)
            self.ceiling_pmd = "net_null"
            return self.trial(size, rate, secs, latency)
        d1 = self.dut_stats()
        if rc != 0 or stats is None:
            raise SystemExit("pktgen-bench: pktgen exited with %s%s; see %s" % (
                rc, "" if stats else " before its telemetry answered", log_path))
        tx = stats[port]["opackets"]
        rx = stats[port]["ipackets"]
        # net_ring and net_null, the ceiling's ports, report 10 Gb/s
        asked = line_pps(size, LINK_MBPS if self.dut is not None else 10000) * rate / 100 * secs
        r = {"size": size, "rate": rate, "secs": secs, "tx": tx, "rx": rx,
             "asked": asked, "tx_pps": tx / secs, "rx_pps": rx / secs,
             "loss": max(0.0, (tx - rx) / tx) if tx else 1.0}
        if d0 is not None and d1 is not None:
            r["dut_rx"] = d1["ipackets"] - d0["ipackets"]
            r["dut_tx"] = d1["opackets"] - d0["opackets"]
        if latency:
            r["latency_ns"] = read_latency(lat_file)
        self.history.append(r)
        return r

    def setting_for(self, pps):
        """The rate setting at which pktgen should offer PPS, from the
        trials so far at this size: pktgen offers a share of what a
        setting asks for (0.6 to 0.65 here), taken as the median over
        the trials that pktgen itself held back (offered less than 0.8
        of the most it offered). None when there is no such trial."""
        if not self.history:
            return None
        top = max(t["tx_pps"] for t in self.history)
        ks = [t["tx_pps"] * t["secs"] / t["asked"] for t in self.history
              if t["rate"] < 100 and t["asked"] > 0 and t["tx_pps"] < 0.8 * top]
        if not ks:
            return None
        last = self.history[-1]
        asked_at_1 = last["asked"] / last["secs"] / last["rate"]  # pps a 1 % setting asks for
        setting = pps / (statistics.median(ks) * asked_at_1)
        return setting if setting < 100 else None


ALL_CPUS = set(os.sched_getaffinity(0))


def every_cpu():
    """In a child before exec: the CPUs this bench started with (EAL
    pins its lcores itself, and refuses CPUs outside the mask)."""
    os.sched_setaffinity(0, ALL_CPUS)


def off_pktgen_cpu():
    """This bench's own work (the pseudo-terminal's reader, the telemetry
    polls) on CPU 0, beside the forwarder, not on CPU 1: pktgen's lcore
    there must not be kept from its Rx ring. A forwarder that loses CPU 0
    for a moment pushes back, a pktgen that loses CPU 1 drops (its Rx
    ring, 256 descriptors, holds 3 ms at 90 kpps)."""
    if 0 in ALL_CPUS and len(ALL_CPUS) > 1:
        os.sched_setaffinity(0, {0})


def idle_display_thread(pid):
    """SCHED_IDLE for pktgen's display thread (the thread named as the
    process that is not its main thread): it spins. Returns its TID, or
    None when there is none (another pktgen), which is said."""
    for tid in sorted(int(t) for t in os.listdir("/proc/%d/task" % pid)):
        if tid == pid:
            continue
        try:
            with open("/proc/%d/task/%d/comm" % (pid, tid)) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm == "pktgen":
            os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
            return tid
    print("pktgen-bench: no display thread in pktgen %d: left as it is" % pid,
          file=sys.stderr, flush=True)
    return None


def run_on_pty(cmd, prefix, ports, log_path, timeout):
    """Run CMD with a pseudo-terminal as stdin, stdout and stderr, copying
    what it prints to LOG_PATH; poll the counters of PORTS through telemetry
    every 0.1 s. Returns (the last counters read, exit status)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 132, 0, 0))
    log = open(log_path, "ab")
    log.write(("# %s\n" % " ".join(cmd)).encode())
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True, close_fds=True, preexec_fn=every_cpu)
    os.close(slave)
    last = None
    deadline = time.monotonic() + timeout
    next_poll = 0
    # Counters are read once pktgen runs the command file ("Executing
    # 'FILE'"), after its ports are set up: DPDK 24.11's net_vhost reads
    # queues that do not exist yet when its stats are asked for before
    # (a SIGSEGV in eth_stats_get() through telemetry).
    seen = b""
    running = False
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                break
            r, _, _ = select.select([master], [], [], 0.05)
            if r:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    data = b""
                log.write(data)
                if not running:
                    seen = (seen + data)[-4096:]
                    running = b"Executing '" in seen
                    if running:
                        idle_display_thread(proc.pid)
            if running and time.monotonic() >= next_poll:
                next_poll = time.monotonic() + 0.1
                try:
                    last = port_stats(prefix, ports)
                except (OSError, ValueError, KeyError, TypeError):
                    pass
        rc = proc.wait()
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            log.write(data)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        log.close()
        shutil.rmtree("/var/run/dpdk/%s" % prefix, ignore_errors=True)
    return last, rc


def tail_of(path, n=8192):
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - n))
        return f.read()


def read_latency(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split() if x.isdigit()]
    except OSError:
        return []


def search(b, size, args, log):
    """NDR (no loss) and PDR (loss <= args.pdr) at SIZE: a binary search
    over pktgen's rate setting, both bounds from every trial, until the
    interval is narrower than args.precision of its upper end, or its
    upper end is below args.floor (no rate found). Returns {"ndr": trial,
    "pdr": trial}: the confirmation trial of args.confirm seconds at the
    rate found ("confirmed" says whether it held), or None."""
    bounds = {"ndr": [0.0, 100.0], "pdr": [0.0, 100.0]}
    lim = {"ndr": 0.0, "pdr": args.pdr}
    found = {}
    for what in ("pdr", "ndr"):
        lo, hi = bounds[what]
        while hi - lo > args.precision * hi and hi >= args.floor:
            # as fast as pktgen can first: a DUT that keeps up ends the search
            rate = 100.0 if not b.history else (lo + hi) / 2
            t = b.trial(size, rate, args.trial)
            log(t)
            for w in ("ndr", "pdr"):
                if t["loss"] <= lim[w]:
                    bounds[w][0] = max(bounds[w][0], rate)
                else:
                    bounds[w][1] = min(bounds[w][1], rate)
            lo, hi = bounds[what]
        found[what] = None
        if lo == 0:
            continue
        # the confirmation: a longer trial at the lower bound; if it loses
        # more than allowed, up to two more, each 10 % lower. A rate that
        # none of them holds is reported with "confirmed": false.
        rate = lo
        for _ in range(3):
            t = b.trial(size, rate, args.confirm)
            t["confirmed"] = t["loss"] <= lim[what]
            log(t, confirm=True)
            if t["confirmed"]:
                break
            rate *= 0.9
        found[what] = t
    return found


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pktgen")
    ap.add_argument("--l2fwd")
    ap.add_argument("--testpmd", default="dpdk-testpmd")
    ap.add_argument("--rows", default="ceiling,l2fwd-sirq,testpmd")
    ap.add_argument("--sizes", default="64,1518")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trial", type=float, default=1.0, help="search trial, s")
    ap.add_argument("--confirm", type=float, default=10.0, help="confirmation trial, s")
    ap.add_argument("--pdr", type=float, default=0.005, help="PDR's loss ratio")
    ap.add_argument("--precision", type=float, default=0.02,
                    help="the search ends when its interval is this share of its upper end")
    ap.add_argument("--floor", type=float, default=0.1,
                    help="lowest rate setting tried, %%")
    ap.add_argument("--huge", type=int, default=1)
    ap.add_argument("--out", default="out/pktgen-bench")
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("--prefix", default="pgb")
    ap.add_argument("--loop", type=float, help="one trial of S seconds through l2fwd-sirq at --rate, as JSON")
    ap.add_argument("--rate", type=float, default=1.0, help="--loop: pktgen's rate setting, %%")
    ap.add_argument("--latency", action="store_true", help="--loop: with pktgen's latency sampler")
    ap.add_argument("--render", metavar="RESULTS_JSON", help="print the table of a run and exit")
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f:
            print(render(json.load(f)))
        return 0

    if not args.pktgen:
        ap.error("--pktgen is required")
    off_pktgen_cpu()
    b = Bench(args)
    atexit.register(b.cleanup)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda n, f: sys.exit(128 + n))
    if args.loop:
        # one trial through l2fwd-sirq, and what its report says at SIGINT
        b.dut_start("l2fwd-sirq")
        try:
            t = b.trial(int(args.sizes.split(",")[0]), args.rate, args.loop,
                        latency=args.latency)
        finally:
            b.dut_stop()
        with open(b.dut_report) as f:
            t["l2fwd_report"] = json.load(f)
        print(json.dumps(t))
        return 0

    results = []
    jl = open(os.path.join(args.out, "trials.jsonl"), "a")

    def log(t, confirm=False):
        t = dict(t, row=b.dut_name or "ceiling", confirm=confirm)
        t.pop("latency_ns", None)
        jl.write(json.dumps(t) + "\n")
        jl.flush()
        print("   %-10s %5d B %7.3f %%: asked %6.3f Mpps, offered %6.3f, received %6.3f, loss %.4f%%%s"
              % (t["row"], t["size"], t["rate"], t["asked"] / t["secs"] / 1e6, t["tx_pps"] / 1e6,
                 t["rx_pps"] / 1e6, 100 * t["loss"], " (confirmation)" if confirm else ""),
              file=sys.stderr, flush=True)

    sizes = [int(x) for x in args.sizes.split(",")]
    for rep in range(args.repeats):
        for size in sizes:
            for row in args.rows.split(","):
                b.history = []
                if row != "ceiling":
                    b.dut_start(row)
                else:
                    b.dut_name = None
                lat = None
                try:
                    found = search(b, size, args, log)
                    # the latency at half the PDR's received rate, where the
                    # setting for it can be told from the trials (not in the
                    # ceiling: all its trials ran as fast as pktgen can)
                    setting = None
                    if found["pdr"] is not None:
                        setting = b.setting_for(found["pdr"]["rx_pps"] / 2)
                    if setting is not None:
                        lat = b.trial(size, setting, args.confirm, latency=True)
                        log(lat)
                finally:
                    if row != "ceiling":
                        b.dut_stop()
                r = {"row": row, "size": size, "repeat": rep}
                if row == "ceiling":
                    r["pmd"] = b.ceiling_pmd
                for what in ("ndr", "pdr"):
                    t = found[what]
                    r[what] = None if t is None else {
                        "setting": t["rate"], "offered_pps": t["tx_pps"],
                        "received_pps": t["rx_pps"], "loss": t["loss"],
                        "confirmed": t["confirmed"]}
                ns = (lat or {}).get("latency_ns") or []
                r["latency"] = None if lat is None else {
                    "offered_pps": lat["tx_pps"], "samples": len(ns),
                    "p50_us": pct(ns, 0.5) / 1e3 if ns else None,
                    "p99_us": pct(ns, 0.99) / 1e3 if ns else None,
                    "max_us": max(ns) / 1e3 if ns else None}
                results.append(r)
                print("%s %d B repeat %d: NDR %s, PDR %s, latency p50 %s us" % (
                    row, size, rep, fmt_rate(r["ndr"]), fmt_rate(r["pdr"]),
                    "%.1f" % r["latency"]["p50_us"] if ns else "-"),
                    file=sys.stderr, flush=True)
                with open(os.path.join(args.out, "results.json"), "w") as f:
                    json.dump(results, f, indent=1)
    print(render(results))
    return 0


def fmt_rate(x):
    if x is None:
        return "none"
    return "%.3f Mpps%s" % (x["received_pps"] / 1e6, "" if x["confirmed"] else " (not confirmed)")


def render(results):
    """The Markdown table: per forwarder and frame size, NDR and PDR
    (received Mpps) min / median / max over the repeats, the median of
    the per-repeat PDR ratios to testpmd, and the latency at half the PDR
    setting (medians over the repeats of each run's p50, p99, max)."""
    out = ["| forwarder | frame | NDR Mpps received, min / median / max"
           " | PDR Mpps received, min / median / max | PDR offered, median"
           " | PDR / testpmd, median (each repeat) | latency at 50 % of PDR:"
           " p50 / p99 / max us |",
           "|---|--:|---|---|--:|---|---|"]
    keys = []
    pmd = {}
    for r in results:
        if (r["row"], r["size"]) not in keys:
            keys.append((r["row"], r["size"]))
        if "pmd" in r:
            pmd[r["row"]] = r["pmd"]
    by = {(r["row"], r["size"], r["repeat"]): r for r in results}
    for row, size in keys:
        rs = [r for r in results if (r["row"], r["size"]) == (row, size)]

        def mmm(what):
            xs = [r[what]["received_pps"] / 1e6 for r in rs if r[what] is not None]
            if not xs:
                return "none found"
            none = sum(1 for r in rs if r[what] is None)
            unconfirmed = sum(1 for r in rs if r[what] is not None and not r[what]["confirmed"])
            notes = ["%d of %d none found" % (none, len(rs))] if none else []
            if unconfirmed:
                notes.append("%d of %d not confirmed" % (unconfirmed, len(rs)))
            return "%.3f / %.3f / %.3f%s" % (min(xs), statistics.median(xs), max(xs),
                                            " (%s)" % ", ".join(notes) if notes else "")

        def lat(f):
            xs = [r["latency"][f] for r in rs if r["latency"] and r["latency"][f] is not None]
            return "%.0f" % statistics.median(xs) if xs else "-"

        ratios = []
        for r in rs:
            ref = by.get(("testpmd", size, r["repeat"]))
            if ref and ref["pdr"] and r["pdr"]:
                ratios.append(r["pdr"]["received_pps"] / ref["pdr"]["received_pps"])
        ratio = "%.3f (%s)" % (statistics.median(ratios), ", ".join("%.3f" % x for x in ratios)) \
            if ratios and row != "testpmd" else "-"
        offered = [r["pdr"]["offered_pps"] / 1e6 for r in rs if r["pdr"] is not None]
        out.append("| %s | %d B | %s | %s | %s | %s | %s / %s / %s |" % (
            "%s (%s)" % (row, pmd[row]) if row in pmd else row, size, mmm("ndr"), mmm("pdr"),
            "%.3f" % statistics.median(offered) if offered else "-", ratio,
            lat("p50_us"), lat("p99_us"), lat("max_us")))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
