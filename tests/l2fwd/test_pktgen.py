#!/usr/bin/env python3
"""pktgen-dpdk -> l2fwd-sirq -> pktgen-dpdk, for 2 seconds, the counts
checked on both sides.

The set-up of bench/pktgen-bench.sh (bench/pktgen_bench.py --loop): one
vhost-user link, l2fwd-sirq with its defaults on the server end (CPU 0),
sending back on port 0 what it receives there (--portmap "(0,0)"),
pktgen's virtio-user port on the client end (CPU 1), sending 64-byte
frames at 2 % of the 100 Gb/s the port reports (1.5 to 2 Mpps here) for
2 seconds. The counts:
  pktgen sent == l2fwd-sirq received (the link loses nothing that way)
  l2fwd-sirq sent == pktgen received (nor the other way), and both
    processes' counters (the report, telemetry) say so
  l2fwd-sirq received == sent + dropped at TX (its books balance)
  pktgen's loss at most 0.5 % (the PDR's bound, at a rate well below it)
  l2fwd-sirq exits 0 at SIGINT with every mbuf back in its pool.

pktgen comes from bench/pktgen-build.sh: a binary (PKTGEN), or a release
tarball, source tree or directory of tarballs to build from (PKTGEN_SRC).
Exit 0 on success, 1 on failure (a pktgen that does not build is one),
77 (skip) when there is no pktgen for this DPDK (none given, or no
release in the directory that pairs with it, as on Debian 12's 22.11):
the reason is printed.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SKIP = 77
SECONDS = 2
RATE = 2.0          # pktgen's setting, % of 100 Gb/s: 2.98 Mpps asked at 64 bytes
PDR_LOSS = 0.005
MIN_FRAMES = 10000  # 4 to 5 million in 2 s here


def log(msg):
    print("test_pktgen: " + msg, flush=True)


def main():
    if os.geteuid() != 0:
        log("SKIP: needs root (hugepages, DPDK's runtime directory)")
        return SKIP
    l2fwd = os.environ.get("L2FWD_SIRQ")
    if not l2fwd:
        log("L2FWD_SIRQ is not set: run the test through meson")
        return 1
    build = subprocess.run([os.path.join(TOP, "bench", "pktgen-build.sh")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stdout.write(build.stderr)
    if build.returncode == SKIP:
        log("SKIP: no pktgen for this DPDK (bench/pktgen-build.sh, above)")
        return SKIP
    if build.returncode != 0:
        log("bench/pktgen-build.sh failed (exit %d)" % build.returncode)
        return 1
    pktgen = build.stdout.strip()
    huge = subprocess.run([os.path.join(TOP, "scripts", "hugepages.sh"), "400"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log(huge.stdout.strip() + ("" if huge.returncode == 0 else ": every process --no-huge"))
    with tempfile.TemporaryDirectory(prefix="test-pktgen-") as out:
        cmd = [sys.executable, os.path.join(TOP, "bench", "pktgen_bench.py"),
               "--pktgen", pktgen, "--l2fwd", l2fwd, "--out", out, "--tmp", out,
               "--prefix", "tpg", "--huge", "1" if huge.returncode == 0 else "0",
               "--sizes", "64", "--loop", str(SECONDS), "--rate", str(RATE)]
        log(" ".join(cmd))
        run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             timeout=180)
        sys.stdout.write(run.stderr)
        if run.returncode != 0:
            for name in ("pktgen-last-trial.log", "l2fwd-sirq.log"):
                path = os.path.join(out, name)
                if os.path.exists(path):
                    with open(path, errors="replace") as f:
                        log("%s, its end:\n%s" % (name, f.read()[-3000:]))
            log("the run failed (exit %d)" % run.returncode)
            return 1
        t = json.loads(run.stdout)
    rep = t["l2fwd_report"]
    port = rep["ports"][0]
    lcore = rep["lcores"][0]
    log("pktgen sent %d, received %d (%.3f Mpps offered, loss %.4f %%); l2fwd-sirq "
        "received %d, sent %d, dropped at TX %d, link-down drops %d, mbufs in use %d" % (
            t["tx"], t["rx"], t["tx_pps"] / 1e6, 100 * t["loss"], port["rx"],
            lcore["tx_packets"], lcore["tx_dropped"], port["link_down_drops"],
            rep["mbufs_in_use"]))
    failures = []

    def expect(ok, what):
        if not ok:
            failures.append(what)

    # traffic flowed (how fast is the bench's question, not this test's)
    expect(t["tx"] >= MIN_FRAMES, "pktgen sent %d frames, fewer than %d" % (t["tx"], MIN_FRAMES))
    expect(port["rx"] == t["tx"], "l2fwd-sirq received %d, pktgen sent %d" % (port["rx"], t["tx"]))
    expect(lcore["tx_packets"] == t["rx"], "l2fwd-sirq sent %d, pktgen received %d"
           % (lcore["tx_packets"], t["rx"]))
    expect(t.get("dut_rx") == t["tx"] and t.get("dut_tx") == t["rx"],
           "l2fwd-sirq's telemetry (%s received, %s sent) disagrees with pktgen's counts"
           % (t.get("dut_rx"), t.get("dut_tx")))
    # the books: what port 0 received went back to port 0 (--portmap
    # "(0,0)"), less runts and link-down drops; what went to it was sent
    # or dropped at TX (pktgen's Rx ring full)
    expect(port["rx"] == port["tx"] + port["link_down_drops"] + port["runts"],
           "l2fwd-sirq's books: received %d != to TX %d + link-down %d + runts %d"
           % (port["rx"], port["tx"], port["link_down_drops"], port["runts"]))
    expect(port["tx"] == lcore["tx_packets"] + lcore["tx_dropped"],
           "l2fwd-sirq's books: to TX %d != sent %d + dropped at TX %d"
           % (port["tx"], lcore["tx_packets"], lcore["tx_dropped"]))
    expect(t["loss"] <= PDR_LOSS, "pktgen lost %.3f %% of its frames, more than %.1f %%"
           % (100 * t["loss"], 100 * PDR_LOSS))
    expect(rep["mbufs_in_use"] == 0, "%d mbufs not back in l2fwd-sirq's pool" % rep["mbufs_in_use"])
    for f in failures:
        log("FAIL: " + f)
    if failures:
        return 1
    log("pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
