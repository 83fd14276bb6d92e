#!/usr/bin/env python3
"""l2fwd-sirq on net_af_xdp, and on net_af_packet beside it, over veths.

The test makes a network namespace and two veth pairs: l2fwd-sirq drives
the ends on this side (xa0, xa1) through the PMD, and the traffic source,
tests/guest/nicpeer.py, sends and receives on the ends inside the
namespace (AF_PACKET on xb0, xb1). Every frame sent into one port must
come back out of the other byte for byte (but the MACs l2fwd rewrites),
once, and the books of l2fwd-sirq's report must balance. The runs:
net_af_xdp in poll and irq mode (irq runs on the tick: the PMD has no Rx
interrupt), then net_af_packet in poll mode.

mbufs: net_af_packet must give every mbuf back (0 in use at exit). The
net_af_xdp PMD (DPDK 22.11, and 24.11 and 25.11 alike) never returns the
mbufs that it put into each Rx queue's fill ring (2048 a queue): its
close deletes the socket and drops the pool without freeing them. So at
exit its ports hold exactly 2048 per Rx queue, plus the last TX burst
of each port whose completions the PMD had not reaped: no more is
allowed.

Exit 0 on success, 1 on failure, 77 (skip) when the test cannot run:
not root, no veth or netns, or XDP cannot attach (kernel, privileges,
libxdp): the reason is printed.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
NICPEER = os.path.join(TOP, "tests", "guest", "nicpeer.py")
SKIP = 77
# The af_xdp PMD's errors when the kernel, the privileges or libxdp do
# not let it attach (DPDK 22.11's messages), or when it is not there.
XDP_CANNOT = re.compile(r"Failed to (create xsk socket|configure xdp socket|create umem|"
                        r"load program|set prog fd)|net_af_xdp\S* did not probe")
FILL_RING = 2048          # XSK_RING_PROD__DEFAULT_NUM_DESCS, the PMD's fill ring
TX_BURST_MAX = 32         # l2fwd-sirq's TX burst: what one port may leave unreaped


def log(msg):
    print("test_af_xdp: " + msg, flush=True)


def sh(*argv, check=True, ns=None):
    if ns:
        argv = ("ip", "netns", "exec", ns) + argv
    return subprocess.run(argv, check=check, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


class Veths:
    def __init__(self):
        tag = "%d" % (os.getpid() % 100000)
        self.ns = "sqxdp" + tag
        self.a = ["xa%s_%d" % (tag, i) for i in range(2)]
        self.b = ["xb%s_%d" % (tag, i) for i in range(2)]

    def make(self):
        sh("ip", "netns", "add", self.ns)
        for a, b in zip(self.a, self.b):
            sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
            sh("ip", "link", "set", b, "netns", self.ns)
            # Nothing of the kernels' own (IPv6 solicitations) on the wire.
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % a)
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % b, ns=self.ns)
            sh("ip", "link", "set", a, "up")
            sh("ip", "link", "set", b, "up", ns=self.ns)

    def macs(self):
        return [open("/sys/class/net/%s/address" % a).read().strip() for a in self.a]

    def delete(self):
        sh("ip", "netns", "del", self.ns, check=False)
        for a in self.a:
            sh("ip", "link", "del", a, check=False)


def run(l2fwd, v, pmd, mode, n, wd):
    """One run: l2fwd-sirq on PMD in MODE, traffic from the namespace."""
    vdevs = []
    for i, a in enumerate(v.a):
        vdevs += ["--vdev", "%s%d,iface=%s" % (pmd, i, a)]
    report = os.path.join(wd, "run-%d.json" % n)
    out = os.path.join(wd, "run-%d.log" % n)
    argv = [l2fwd, "-l", "0", "--no-pci", "--file-prefix", "axdp%d_%d" % (os.getpid(), n),
            "--log-level", "lib.eal:notice"] + vdevs + [
            "--", "-p", "0x3", "-T", "0", "--mode", mode, "--report", report]
    if not os.path.isdir("/dev/hugepages") or not any(
            int(open(os.path.join(d, "free_hugepages")).read()) >= 256
            for d in [os.path.join("/sys/kernel/mm/hugepages", x)
                      for x in os.listdir("/sys/kernel/mm/hugepages")]):
        argv[4:4] = ["--no-huge", "-m", "512"]
    env = dict(os.environ)
    if pmd == "net_af_xdp":
        # Under LeakSanitizer: the 22.11 PMD's libxdp umem (see the file).
        supp = "suppressions=" + os.path.join(HERE, "af_xdp.lsan.supp")
        env["LSAN_OPTIONS"] = ":".join(x for x in (env.get("LSAN_OPTIONS", ""), supp) if x)
    log("run %d: %s" % (n, " ".join(argv)))
    with open(out, "w") as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=env)
    up = False
    for _ in range(300):
        text = open(out, errors="replace").read()
        if " forwards " in text:
            up = True
            break
        if p.poll() is not None:
            break
        time.sleep(0.1)
    if not up:
        p.kill()
        p.wait()
        return None, open(out, errors="replace").read()
    cmd = ["ip", "netns", "exec", v.ns, sys.executable, NICPEER]
    for b in v.b:
        cmd += ["--port", "tap=" + b]
    for m in v.macs():
        cmd += ["--guest-mac", m]
    cmd += ["--bursts", "10", "--burst", "40", "--gap-ms", "100", "--quiet-s", "2"]
    peer = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.send_signal(2)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "killed: no exit within 60 s of SIGINT"
    try:
        books = json.loads(peer.stdout)
    except ValueError:
        books = None
    try:
        rep = json.load(open(report))
    except (OSError, ValueError):
        rep = None
    return {"rc": rc, "books": books, "report": rep, "peer_rc": peer.returncode,
            "peer_err": peer.stderr[-1000:]}, open(out, errors="replace").read()


def check(r, pmd, log_text):
    fails = []
    if r["rc"] != 0:
        fails.append("l2fwd-sirq exit %s" % r["rc"])
    b, rep = r["books"], r["report"]
    if b is None:
        return fails + ["no books from the peer (exit %s): %s" % (r["peer_rc"], r["peer_err"])]
    if rep is None:
        return fails + ["no report"]
    sent = sum(p["sent"]["data"] for p in b["ports"])
    if sent == 0:
        fails.append("no data frame sent")
    if b["missing"]:
        fails.append("%d frames never came back, e.g. %s" % (len(b["missing"]), b["missing"][:3]))
    if b["corrupt"]:
        fails.append("%d frames differ, e.g. %s" % (len(b["corrupt"]), b["corrupt"][0]))
    if b["duplicates"]:
        fails.append("%d duplicates" % b["duplicates"])
    ports = {p["port"]: p for p in rep["ports"]}
    for bp in b["ports"]:
        i = bp["port"]
        if ports[i]["rx"] != bp["into_guest"]:
            fails.append("port %d: rx %d, %d frames sent into it" % (i, ports[i]["rx"], bp["into_guest"]))
        if ports[i]["tx"] != bp["out_of_guest"]:
            fails.append("port %d: tx %d, %d came out" % (i, ports[i]["tx"], bp["out_of_guest"]))
    in_use = rep["mbufs_in_use"]
    said = re.search(r"^l2fwd-sirq: (\d+) mbufs not back in the pool after the ports closed(.*)$",
                     log_text, re.M)
    if pmd == "net_af_packet":
        if in_use != 0:
            fails.append("%d mbufs out of the pool at exit" % in_use)
        if said:
            fails.append("l2fwd-sirq said: " + said.group(0))
    else:
        if not said or int(said.group(1)) != in_use or "net_af_xdp keeps" not in said.group(2):
            fails.append("no exit line naming net_af_xdp's %d mbufs (%s)" %
                         (in_use, said.group(0) if said else "none"))
        held = FILL_RING * len(rep["ports"])
        if not held <= in_use < held + TX_BURST_MAX * len(rep["ports"]):
            fails.append("%d mbufs in use at exit: the PMD's fill rings hold %d, and at most "
                         "%d unreaped TX completions may add to them" %
                         (in_use, held, TX_BURST_MAX * len(rep["ports"]) - 1))
    return fails


def main():
    l2fwd = os.environ.get("L2FWD_SIRQ", os.path.join(TOP, "build", "apps", "l2fwd-sirq", "l2fwd-sirq"))
    if os.geteuid() != 0:
        log("skip: needs root (network namespace, veths, XDP)")
        return SKIP
    if not os.access(l2fwd, os.X_OK):
        log("L2FWD_SIRQ=%s is not an executable" % l2fwd)
        return 1
    v = Veths()
    try:
        v.make()
    except subprocess.CalledProcessError as e:
        v.delete()
        log("skip: cannot make the namespace and veths: %s" % e.stdout.strip())
        return SKIP
    except OSError as e:
        log("skip: %s (iproute2's ip, sysctl)" % e)
        return SKIP
    failed = 0
    wd = tempfile.mkdtemp(prefix="af_xdp-")
    try:
        for n, (pmd, mode) in enumerate([("net_af_xdp", "poll"), ("net_af_xdp", "irq"),
                                         ("net_af_packet", "poll")], 1):
            t0 = time.monotonic()
            r, text = run(l2fwd, v, pmd, mode, n, wd)
            if r is None:
                if pmd == "net_af_xdp" and n == 1 and XDP_CANNOT.search(text):
                    why = [l for l in text.splitlines() if "xdp" in l.lower() or "xsk" in l.lower()]
                    log("skip: XDP could not attach (kernel, privileges or libxdp); "
                        "l2fwd-sirq said:\n" + "\n".join(why[-8:]))
                    return SKIP
                log("%s %s: l2fwd-sirq did not start:\n%s" % (pmd, mode, text[-2000:]))
                failed += 1
                continue
            fails = check(r, pmd, text)
            b, rep = r["books"], r["report"]
            sent = sum(p["sent"]["data"] for p in b["ports"]) if b else 0
            log("%-13s %-4s %s in %.0f s: %d data frames, mbufs in use at exit %s, "
                "latency p50/p99 %s/%s us, %d after the next burst" % (
                    pmd, mode, "FAIL" if fails else "ok", time.monotonic() - t0, sent,
                    rep["mbufs_in_use"] if rep else "?",
                    b["latency_us"]["p50"] if b else "?", b["latency_us"]["p99"] if b else "?",
                    len(b["late"]) if b else 0))
            for line in text.splitlines():
                if "Rx work" in line:
                    log("    " + line.strip())
            for f in fails:
                log("    " + f)
            failed += bool(fails)
    finally:
        v.delete()
        subprocess.run(["rm", "-rf", wd])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
