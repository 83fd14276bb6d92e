#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The policy lab's python part (bench/policy_lab.py, policy_plots.py,
rr_lab.py) on made-up reports, and the question bench/policy-lab.sh asks
l2fwd-sirq to choose its modes.

    test_policy_lab.py units [L2FWD_SIRQ]

units: one mixed run (receiver and probe) and one run of an older
runs.jsonl (no "mode") through policy_lab.py: every run has "mode" and
"policy", the mixed figures come from the TIMER and TASKLET histograms;
policy_plots.py reads the result (and leaves rr runs to rr_lab.py), with
the probe's table; rr_lab.py takes a variant named after any policy.
With L2FWD_SIRQ: --policy NAME --help exits 0 for the four policies and
2 for a name it does not take, before EAL (what the lab's mode filter
relies on). Exit 0 or 1.
"""
import io
import json
import os
import subprocess
import sys
import tempfile
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, exit_code  # noqa: E402
import policy_lab  # noqa: E402
import policy_plots  # noqa: E402
import rr_lab  # noqa: E402

def hist(bucket, n):
    h = [0] * 40
    h[bucket] = n
    return h


def vector(runs, bucket, inline=0):
    return {"runs_inline": inline, "runs_worker": runs - inline,
            "latency": {"samples": runs, "stalls": 0, "max_ns": (2 << bucket) - 1,
                        "hist_log2_ns": hist(bucket, runs)}}


COUNTERS = {k: 0 for k in ("wakeup_need_resched", "wakeup_restart_limit",
                           "wakeup_time_limit", "wakeup_handoff", "wakeup_explicit",
                           "wakeup_raise", "pass_need_resched_inline",
                           "pass_need_resched_worker") + policy_lab.COUNTERS}


def report(probe):
    """A 2-second l2fwd-sirq report: NET_RX at 1000 packets/s."""
    r = {"elapsed_s": 2.0,
         "lcores": [{"rx_packets": 2000, "tx_dropped": 0}],
         "app_load": [] if probe else [{"work_units": 1000, "cpu_share": 0.5}],
         "sirq": {"lcores": [{"counters": COUNTERS, "vectors": {
             "NET_RX": vector(100, 10), "NET_TX": vector(0, 0),
             # TIMER: 2000 runs, p99 in [2^9, 2^10) ns; TASKLET: 1980
             # runs, 20 at [2^19, 2^20) and the rest at [2^12, 2^13).
             "TIMER": vector(2000, 9),
             "TASKLET": vector(1980, 12)}}]}}
    t = r["sirq"]["lcores"][0]["vectors"]["TASKLET"]["latency"]
    t["hist_log2_ns"][12] = 1960
    t["hist_log2_ns"][19] = 20
    if probe:
        r["receiver"] = [{"processed": 2000, "received": 1500, "drops": 500,
                          "drained_at_exit": 0,
                          "cpu": {"receiver_s": 0.5, "sirqd_s": 1.0,
                                  "dispatcher_s": 0.2, "window_s": 2.0}}]
        r["probe"] = [{"lcore": 1, "timer_ns": 1000000, "tasklet_ns": 1000000,
                       "timer_fires": 1990, "timer_missed": 10,
                       "tasklet_scheduled": 1980, "tasklet_already_scheduled": 10,
                       "tasklet_runs": 1980, "tasklet_missed": 0,
                       "timer_late_max_ns": 3000000,
                       "timer_late_hist_log2_ns": hist(14, 1990)}]
    return r


def units(l2fwd):
    d = tempfile.mkdtemp(prefix="test-policy-lab.")
    paths = {}
    for name, probe in (("mixed", True), ("old", False)):
        paths[name] = os.path.join(d, name + ".json")
        with open(paths[name], "w") as f:
            json.dump(report(probe), f)
    jsonl = os.path.join(d, "runs.jsonl")
    with open(jsonl, "w") as f:
        f.write(json.dumps({"scenario": "mixed", "mode": "kicinski", "policy": "kicinski",
                            "tick_hz": 250, "run": 1, "report": paths["mixed"]}) + "\n")
        # An older runs.jsonl line: "policy" alone.
        f.write(json.dumps({"scenario": "flood-burn", "policy": "ksoftirqd",
                            "tick_hz": 250, "run": 1, "report": paths["old"]}) + "\n")
    lab = os.path.join(d, "lab.json")
    sys.argv = ["policy_lab.py", jsonl, lab]
    out = io.StringIO()
    with redirect_stdout(out):
        policy_lab.main()
    with open(lab) as f:
        runs = json.load(f)["runs"]
    mixed, old = runs
    check(all(r.get("mode") and r["mode"] == r["policy"] for r in runs),
          "every run has mode, and policy the same (%s)" % [(r.get("mode"), r.get("policy")) for r in runs])
    check(mixed["mode"] == "kicinski" and old["mode"] == "ksoftirqd",
          "mode from the line, or from policy in an older line")
    check(abs(mixed["timer_p99_us"] - 1.023) < 1e-9,
          "timer_p99_us: TIMER's p99 bucket, 2^10 - 1 ns (%s)" % mixed.get("timer_p99_us"))
    check(abs(mixed["tasklet_p99_us"] - 1048.575) < 1e-9,
          "tasklet_p99_us: 20 of 1980 runs >= 2^19 ns put p99 in that bucket (%s)"
          % mixed.get("tasklet_p99_us"))
    check(abs(mixed["timer_late_p99_us"] - 32.767) < 1e-9,
          "timer_late_p99_us from the probe's lateness histogram (%s)"
          % mixed.get("timer_late_p99_us"))
    check(abs(mixed["net_rx_pps"] - 1000) < 1e-9 and abs(mixed["app_share"] - 0.25) < 1e-9,
          "net_rx_pps = processed / s, app_share = the reader's CPU share (%s, %s)"
          % (mixed.get("net_rx_pps"), mixed.get("app_share")))
    check(mixed["probe"]["timer_missed"] == 10 and
          abs(mixed["probe"]["tasklet_runs_per_s"] - 990) < 1e-9,
          "the probe's counts and rates (%s)" % mixed.get("probe"))
    check("TIMER" in mixed["latency"] and "TASKLET" in mixed["latency"],
          "TIMER and TASKLET in the run's latency")
    check("timer_p99_us" not in old, "no probe figures without the probe")
    check("mixed: kicinski: TIMER p99 1.0 us" in out.getvalue(),
          "the headline prints the mixed figures:\n" + out.getvalue())

    # policy_plots: the lab's runs, an rr run beside them (skipped).
    with open(lab) as f:
        doc = json.load(f)
    doc["runs"].append({"scenario": "rr", "mode": "busy", "variant": "busy-nodefer",
                        "load": "low"})
    with open(lab, "w") as f:
        json.dump(doc, f)
    sys.argv = ["policy_plots.py", "--out", d, "--prefix", "t", lab]
    out = io.StringIO()
    with redirect_stdout(out):
        policy_plots.main()
    text = out.getvalue()
    check("mixed, tick_hz 250, probe" in text and "| `kicinski` | 1.0 |" in text,
          "policy_plots: the probe's table:\n" + text)
    check("rr" not in [line.split(",")[0].strip("*") for line in text.splitlines()],
          "policy_plots leaves the rr runs to rr_lab.py")
    check(os.path.exists(os.path.join(d, "t-mixed-hz250-probe.svg")),
          "policy_plots: the probe's plot")

    # rr_lab: a variant named after a policy it does not list.
    rr = [{"variant": v, "rate_pps": 1000, "received": 5000, "window_s": 5,
           "p99_us": 10} for v in ("rt", "busy-nodefer", "mainline")]
    got = {r["variant"]: (r["mode"], r["policy"]) for r in rr_lab.to_runs(rr, [])}
    check(got == {"rt": ("rt", "rt"), "busy-nodefer": ("busy", "busy"),
                  "mainline": ("mainline", "mainline")},
          "rr_lab: mode and policy of each variant (%s)" % got)
    check("| some-new-policy |" in rr_lab.markdown(
        rr_lab.to_runs([dict(rr[0], variant="some-new-policy")], []), []),
        "rr_lab: a policy it has never heard of gets its rows")

    if l2fwd:
        def asks(name):
            return subprocess.run([l2fwd, "--", "--policy", name, "--help"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  timeout=30)
        for p in ("mainline", "ksoftirqd", "kicinski", "deferred"):
            r = asks(p)
            check(r.returncode == 0, "l2fwd-sirq --policy %s --help: 0 (%d)" % (p, r.returncode))
        r = asks("no-such-policy")
        check(r.returncode == 2 and b"--policy: bad value 'no-such-policy'" in r.stderr,
              "l2fwd-sirq --policy no-such-policy --help: 2, naming it (%d, %s)"
              % (r.returncode, r.stderr))


def main():
    if len(sys.argv) in (2, 3) and sys.argv[1] == "units":
        units(sys.argv[2] if len(sys.argv) == 3 else None)
    else:
        sys.exit(__doc__)
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
