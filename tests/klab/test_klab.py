#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The kernel lab (bench/kernel-lab.sh) and its tools.

    test_klab.py units      the trace parser, the calibration, the table and
                            the claims, the kernels' config check and
                            threads, each kernel against its model (the
                            deviations rows), on made-up inputs (seconds)
    test_klab.py guest BUILD
                            the lab itself on Debian's 6.1 in the guest lab,
                            one short run of each scenario on both systems,
                            and every run of out/kernel-lab.json as issue 20
                            names its fields (about 3 minutes)

Exit 0, 1, or 77 (skip: not root, or no guest lab here).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "bench"))
from checks import TOP, check, exit_code  # noqa: E402
import kernel_lab  # noqa: E402
import softirq_trace  # noqa: E402


TRACE = """# tracer: nop
          <idle>-0       [001] d.h1.   100.000000: softirq_raise: vec=3 [action=NET_RX]
          <idle>-0       [001] d.h1.   100.001000: softirq_raise: vec=3 [action=NET_RX]
          <idle>-0       [001] ..s1.   100.002000: softirq_entry: vec=3 [action=NET_RX]
     ksoftirqd/1-18      [001] ..s1.   100.010000: softirq_entry: vec=3 [action=NET_RX]
         cpu-hog-311     [001] d.h1.   100.020000: softirq_raise: vec=2 [action=NET_TX]
         cpu-hog-311     [001] d.h1.   100.020500: softirq_raise: vec=3 [action=NET_RX]
     ksoftirqd/1-18      [001] ..s1.   100.030000: softirq_entry: vec=2 [action=NET_TX]
     ksoftirqd/1-18      [001] ..s1.   100.0285: softirq_entry: vec=3 [action=NET_RX]
          <idle>-0       [001] d.h1.   100.100000: softirq_raise: vec=1 [action=TIMER]
"""


def units():
    per = softirq_trace.tally(TRACE.splitlines(), 8000000)
    rx, tx = per["NET_RX"], per["NET_TX"]
    check(rx["entries"] == 3 and rx["in_ksoftirqd"] == 2,
          "NET_RX: 3 entries, 2 by ksoftirqd (%s)" % rx)
    # 2 ms from the first raise; the second entry had no raise before it;
    # the third waited 8 ms from its raise: a stall, at the threshold.
    check(rx["waits"] == 2 and rx["stalls"] == 1 and abs(rx["max_ms"] - 8.0) < 1e-6,
          "NET_RX waits from the first raise: 2 waits, one of 8 ms (%s)" % rx)
    check(tx["waits"] == 1 and tx["stalls"] == 1 and abs(tx["max_ms"] - 10.0) < 1e-6,
          "NET_TX: one 10 ms wait (%s)" % tx)
    per = softirq_trace.tally(TRACE.splitlines(), 8000001)
    check(per["NET_RX"]["stalls"] == 0, "a wait under the threshold is no stall")

    sink = {"seconds": 2.0, "received": 20000, "softnet": {"processed": 40000},
            "cpu_share": {"softirq": 0.4, "irq": 0.0, "user": 0.05, "nice": 0.0,
                          "system": 0.15}}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(sink, f)
    try:
        # 0.4 * 2 s / 40000 = 20 us; 0.2 * 2 s / 20000 = 20 us.
        check(kernel_lab.calibrate(f.name) == (20000, 20000),
              "calibration: CPU time over packets (%s)" % (kernel_lab.calibrate(f.name),))
    finally:
        os.unlink(f.name)

    def run(kernel, system, scenario, value, policy=None):
        m = kernel_lab.METRIC[scenario]
        return {"kernel": kernel, "release": "r-" + kernel, "system": system,
                "policy": policy, "scenario": scenario, m: value}
    runs = [run("6.1", "kernel", "stall", 1.8), run("6.1", "kernel", "stall", 1.6),
            run("6.1", "kernel", "stall", 2.0),
            run("6.1+kicinski", "kernel", "stall", 0.16),
            run("6.1", "kernel", "flood", 2000.0), run("6.1+mainline", "kernel", "flood", 150.0),
            run("6.1", "libsirq", "stall", 1.0, "ksoftirqd"),
            run("6.1", "libsirq", "stall", 0.9, "kicinski"),
            run("6.1", "kernel", "retrans", 100), run("6.1+kicinski", "kernel", "retrans", 80)]
    summ = kernel_lab.summary(runs)
    s61 = [x for x in summ if (x["kernel"], x["scenario"], x["system"]) == ("6.1", "stall", "kernel")]
    check(len(s61) == 1 and s61[0]["median"] == 1.8 and s61[0]["runs"] == 3
          and (s61[0]["min"], s61[0]["max"]) == (1.6, 2.0), "summary: median and range (%s)" % s61)
    claims = {c["claim"]: c["holds"] for c in kernel_lab.checks(summ)}
    want = {"6.1 stalls >= 0.5/s and 6.1+kicinski >= 10x less often": True,
            "retransmits >= 30 % fewer with the patches": False,
            "flood: 6.1's receiver gets >= 10x 6.1+mainline's": True,
            "6.1: libsirq ksoftirqd within 2x of the kernel (stall)": True,
            "6.1: libsirq kicinski below ksoftirqd (stall)": True}
    for k, v in want.items():
        check(claims.get(k) is v, "claim %r is %s (%s)" % (k, v, claims.get(k)))
    md = kernel_lab.summary_markdown(summ, kernel_lab.checks(summ))
    check("| 6.1 | r-6.1 | stall | 1.80 (1.60-2.00) | **1.00** | 0.90 |  |  |  |  |" in md,
          "table row of 6.1's stalls:\n" + md)
    config_units()
    model_units(run)


CFG_61_RT = """#
# Automatically generated file; DO NOT EDIT.
# Linux/x86 6.1.192 Kernel Configuration
#
CONFIG_HZ=250
CONFIG_PREEMPT_BUILD=y
CONFIG_PREEMPT_RT=y
CONFIG_PREEMPTION=y
"""
CFG_61 = CFG_61_RT.replace("CONFIG_PREEMPT_RT=y", "CONFIG_PREEMPT_VOLUNTARY=y\n"
                           "# CONFIG_PREEMPT_RT is not set")
CFG_7_RT = CFG_61_RT.replace("6.1.192", "7.3.4") + \
    "# CONFIG_PREEMPT_RT_NEEDS_BH_LOCK is not set\nCONFIG_PREEMPT_DYNAMIC=y\n"
CFG_7 = CFG_61.replace("6.1.192", "7.3.4").replace("CONFIG_PREEMPT_VOLUNTARY=y",
                                                    "CONFIG_PREEMPT_LAZY=y")
PS = """COMMAND         CLS RTPRIO
systemd          TS      -
ksoftirqd/0      TS      -
ktimers/0        FF      1
ktimers/1        FF      1
ksoftirqd/1      TS      -
irq/9-acpi       FF     50
backlog_napi/0   TS      -
backlog_napi/1   TS      -
napi/eth0-8193   TS      -
irq/25-virtio0-  FF     50
kworker/1:0-eve  TS      -
"""


def config_units():
    cc = kernel_lab.config_check
    facts, err = cc("6.1-rt", "6.1.0-57-rt-amd64", CFG_61_RT)
    check(not err and facts["preempt_rt"] and facts["bh_lock"] and facts["hz"] == 250
          and facts["preempt"] == "PREEMPT_RT" and facts["preempt_rt_needs_bh_lock"] is None,
          "6.1-rt on an RT 6.1 config: PREEMPT_RT, the BH lock held (%s %s)" % (facts, err))
    facts, err = cc("6.1-rt", "6.1.0-57-cloud-amd64", CFG_61)
    check(len(err) == 1 and "without CONFIG_PREEMPT_RT=y" in err[0],
          "6.1-rt on a config without PREEMPT_RT fails (%s)" % err)
    facts, err = cc("7.x-rt", "7.3.4+deb13-rt-amd64", CFG_7_RT)
    check(not err and facts["preempt_rt"] and facts["bh_lock"] is False
          and facts["preempt_rt_needs_bh_lock"] is False,
          "7.x-rt: PREEMPT_RT, the BH lock dropped (%s %s)" % (facts, err))
    facts, err = cc("7.x-rt", "7.3.4+deb13-rt-amd64", CFG_7_RT.replace(
        "# CONFIG_PREEMPT_RT_NEEDS_BH_LOCK is not set", "CONFIG_PREEMPT_RT_NEEDS_BH_LOCK=y"))
    check(len(err) == 1 and "BH lock is held" in err[0] and facts["bh_lock"],
          "7.x-rt with PREEMPT_RT_NEEDS_BH_LOCK=y fails: pushdown models the lock dropped (%s)"
          % err)
    facts, err = cc("7.x", "7.3.4+deb13-amd64", CFG_7)
    check(not err and not facts["preempt_rt"] and facts["preempt"] == "PREEMPT_LAZY",
          "7.x on the generic 7.3 config (%s %s)" % (facts, err))
    facts, err = cc("7.x", "7.3.4+deb13-rt-amd64", CFG_7_RT)
    check(len(err) == 1 and "has CONFIG_PREEMPT_RT=y" in err[0],
          "7.x on an RT config fails (%s)" % err)
    facts, err = cc("7.x-rt", "6.1.0-57-rt-amd64", CFG_61_RT)
    check(any("not Linux 7.x" in e for e in err), "7.x-rt on a 6.1 kernel fails (%s)" % err)
    facts, err = cc("6.1-rt", "6.1.0-57-rt-amd64", CFG_7_RT)
    check(any("the config is of Linux 7.3.4" in e for e in err),
          "a config of another version than the kernel's fails (%s)" % err)
    facts, err = cc("6.1-rt", "6.1.0-57-rt-amd64", None)
    check(len(err) == 1 and "no kernel config" in err[0], "6.1-rt without a config fails (%s)"
          % err)
    facts, err = cc("6.1", "6.1.0-57-cloud-amd64", None)
    check(not err and facts is None, "6.1 without a config is recorded as such (%s)" % err)
    facts, err = cc("host", "6.18.44", CFG_7_RT)
    check(not err and facts["preempt_rt"], "host: recorded, not checked (%s)" % err)
    t = kernel_lab.softirq_threads(PS)
    check([x["name"] for x in t["ksoftirqd"]] == ["ksoftirqd/0", "ksoftirqd/1"]
          and [x["sched"] for x in t["ktimers"]] == ["FF 1", "FF 1"]
          and len(t["backlog_napi"]) == 2 and [x["name"] for x in t["napi"]] == ["napi/eth0-8193"]
          and [x["sched"] for x in t["irq"]] == ["FF 50", "FF 50"],
          "the softirq threads of ps, by kind (%s)" % t)
    # The command the lab runs: the reasons on stderr, exit 1, the facts
    # still on stdout (kernel.json keeps them).
    d = tempfile.mkdtemp(prefix="klab-units.")
    try:
        conf, ps = os.path.join(d, "config"), os.path.join(d, "ps")
        with open(conf, "w") as f:
            f.write(CFG_61)
        with open(ps, "w") as f:
            f.write(PS)
        p = subprocess.run([sys.executable, os.path.join(TOP, "bench", "kernel_lab.py"),
                            "--kernel-check", "6.1-rt", "6.1.0-57-cloud-amd64", conf, ps],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = json.loads(p.stdout) if p.stdout.strip() else {}
        check(p.returncode == 1 and "without CONFIG_PREEMPT_RT=y" in p.stderr
              and out.get("config", {}).get("preempt_rt") is False
              and len(out.get("threads", {}).get("ktimers", [])) == 2,
              "--kernel-check fails 6.1-rt on a non-RT config (rc %d, %r, %r)" % (
                  p.returncode, p.stderr, p.stdout[:200]))
        with open(conf, "w") as f:
            f.write(CFG_61_RT)
        p = subprocess.run([sys.executable, os.path.join(TOP, "bench", "kernel_lab.py"),
                            "--kernel-check", "6.1-rt", "6.1.0-57-rt-amd64", conf, ps],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 0 and json.loads(p.stdout)["config"]["bh_lock"] is True,
              "--kernel-check passes 6.1-rt on its RT config (rc %d, %r)" % (p.returncode,
                                                                            p.stderr))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def model_units(run):
    """Each new kernel against its model: within 2x, or a deviations row
    with the measured effect; a stand-in policy where the model did not run."""
    runs = [run("6.1-rt", "kernel", "stall", 0.5), run("6.1-rt", "libsirq", "stall", 1.5, "rt"),
            run("6.1-rt", "kernel", "flood", 100000.0),
            run("6.1-rt", "libsirq", "flood", 60000.0, "rt"),
            run("7.x-rt", "kernel", "stall", 0.0),
            run("7.x-rt", "libsirq", "stall", 0.4, "mainline"),
            run("7.x-rt", "kernel", "flood", 50000.0),
            run("7.x-rt", "libsirq", "flood", 20000.0, "mainline"),
            run("7.x", "kernel", "stall", 0.05), run("7.x", "libsirq", "stall", 0.0, "mainline"),
            run("7.x", "kernel", "flood", 80000.0),
            run("7.x", "libsirq", "flood", 30000.0, "mainline"),
            run("7.x", "libsirq", "flood", 90000.0, "deferred"),
            run("6.1+mainline", "kernel", "stall", 0.5),
            run("6.1+mainline", "libsirq", "stall", 0.0, "mainline")]
    summ = kernel_lab.summary(runs)
    claims = {c["claim"]: c["holds"] for c in kernel_lab.checks(summ)}
    want = {"6.1-rt: libsirq rt within 2x of the kernel (stall)": False,
            "6.1-rt: libsirq rt within 2x of the kernel (flood)": True,
            "7.x-rt: libsirq mainline (stand-in for pushdown) within 2x of the kernel (stall)":
            False,
            "7.x-rt: libsirq mainline (stand-in for pushdown) within 2x of the kernel (flood)":
            False,
            "7.x: libsirq mainline within 2x of the kernel (stall)": True,
            "7.x: libsirq mainline within 2x of the kernel (flood)": False}
    for k, v in want.items():
        check(claims.get(k) is v, "claim %r is %s (%s)" % (k, v, claims.get(k)))
    devs = kernel_lab.deviations(summ)
    got = {(d["kernel"], d["scenario"]): d for d in devs}
    check(set(got) == {("6.1-rt", "stall"), ("7.x-rt", "stall"), ("7.x-rt", "flood"),
                       ("7.x", "flood"), ("6.1+mainline", "stall")},
          "a deviations row for each pair out of 2x (%s)" % sorted(got))
    d = got.get(("6.1+mainline", "stall"), {})
    check(d.get("ratio") == 0 and "has no stalls/s where the kernel has 0.50" in d.get("effect", ""),
          "a model without stalls beside a kernel with some (%s)" % d)
    d = got.get(("6.1-rt", "stall"), {})
    check(d.get("ratio") == 3.0 and d.get("model") == "rt" and not d.get("stand_in")
          and "3.00x the kernel's stalls/s (kernel 0.50, libsirq 1.50)" in d.get("effect", ""),
          "6.1-rt stall: libsirq rt 3x the kernel's stalls (%s)" % d)
    d = got.get(("7.x-rt", "flood"), {})
    check(d.get("policy") == "mainline" and d.get("stand_in") and d.get("model") == "pushdown"
          and abs(d.get("ratio", 0) - 0.4) < 1e-9
          and "0.40x the kernel's received pps" in d.get("effect", ""),
          "7.x-rt flood: mainline stands in for pushdown, 0.4x (%s)" % d)
    d = got.get(("7.x-rt", "stall"), {})
    check(d.get("ratio") is None and "0.40 stalls/s where the kernel has none"
          in d.get("effect", ""), "7.x-rt stall: stalls where the kernel has none (%s)" % d)
    d = got.get(("7.x", "flood"), {})
    check(d.get("policy") == "mainline" and not d.get("stand_in"),
          "7.x: its model mainline ran, no stand-in beside deferred (%s)" % d)
    md = kernel_lab.summary_markdown(summ, kernel_lab.checks(summ), None, devs)
    check("| 7.x-rt | pushdown | mainline (stand-in) | flood | 50000 | 20000 |" in md,
          "the deviations table:\n" + md)


def guest(build):
    if os.geteuid() != 0:
        print("skip: the guest lab runs as root")
        return 77
    if not shutil.which("qemu-system-x86_64") or not os.path.exists("/usr/lib/qemu/virtiofsd"):
        print("skip: no QEMU or virtiofsd")
        return 77
    out = tempfile.mkdtemp(prefix="klab-test.")
    try:
        env = dict(os.environ, KLAB_KERNEL="6.1", KLAB_RUNS="1", KLAB_SECONDS="2",
                   KLAB_POLICY="ksoftirqd", KLAB_BUILD=build, KLAB_OUT=os.path.join(out, "k"))
        p = subprocess.run([os.path.join(TOP, "bench", "kernel-lab.sh")], cwd=TOP, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=900)
        # All of it on a failure: the guest's list of where the lab's
        # processes wait, the console's tail.
        print(p.stdout if p.returncode else p.stdout[-6000:])
        check(p.returncode == 0, "kernel-lab.sh on 6.1 exits 0 (%d)" % p.returncode)
        if p.returncode != 0:
            return 1
        with open(os.path.join(out, "k.json")) as f:
            res = json.load(f)
        runs = res["runs"]
        seen = {(r["system"], r["scenario"]) for r in runs}
        check(seen == {(sy, sc) for sy in ("kernel", "libsirq")
                       for sc in ("stall", "flood", "retrans")},
              "a run of each scenario on each system (%s)" % sorted(seen))
        for r in runs:
            m = kernel_lab.METRIC[r["scenario"]]
            check(r["kernel"] == "6.1" and r["release"].startswith("6.1.")
                  and r["policy"] == (None if r["system"] == "kernel" else "ksoftirqd")
                  and isinstance(r.get(m), (int, float)) and r[m] >= 0,
                  "run %s/%s names where it ran and its %s (%s)" % (
                      r["system"], r["scenario"], m,
                      {k: r.get(k) for k in ("kernel", "release", "policy", m)}))
        got = {(r["system"], r["scenario"]): r for r in runs}
        # Traffic went through: the figures are measured, not defaults.
        check(got[("kernel", "flood")]["received_pps"] > 100, "the kernel's receiver read datagrams")
        check(got[("libsirq", "flood")]["received_pps"] > 100, "libsirq's receiver read datagrams")
        trace = got[("kernel", "stall")]["trace"]
        check(trace["lost_events"] == 0 and trace["vectors"]["NET_RX"]["waits"] > 100,
              "the softirq trace saw NET_RX on CPU 1 (%s)" % trace["vectors"]["NET_RX"])
        ks = res["kernels"]
        check(len(ks) == 1 and ks[0]["symbols"]["overload_limit"] is False
              and ks[0]["symbols"]["ksoftirqd_should_handle"] is False,
              "6.1 as shipped has none of the seed's symbols (%s)" % ks)
        cfg, thr = ks[0].get("config") or {}, ks[0].get("threads") or {}
        check(cfg.get("preempt_rt") is False and cfg.get("preempt") == "PREEMPT_VOLUNTARY"
              and cfg.get("config_version", "").startswith("6.1.")
              and len(thr.get("ksoftirqd", [])) == 2 and not thr.get("ktimers"),
              "6.1's config and threads recorded: not RT, ksoftirqd/0-1, no ktimers (%s %s)"
              % (ks[0].get("config_file"), cfg))
        return 0
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "units":
        units()
    elif len(sys.argv) == 3 and sys.argv[1] == "guest":
        rc = guest(os.path.abspath(sys.argv[2]))
        if rc == 77:
            return 77
    else:
        sys.exit(__doc__)
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
