#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/fwd_bench.py's statistics on made-up runs (no DPDK, no process):
the confidence interval of a median of per-round ratios, the CPU split of
two thread samples, and a summary whose yardsticks include DPDK's l2fwd.

    test_fwd_bench.py
Exit 0 or 1.
"""
import json
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, exit_code  # noqa: E402
import fwd_bench  # noqa: E402

def binomial_coverage(n, k):
    """P(x(k) <= median <= x(n-k+1)) for a continuous law: by counting."""
    miss = sum(math.comb(n, j) for j in range(k)) / 2 ** n
    return 1 - 2 * miss


def the_median_interval_is_the_textbook_one():
    lo, hi, cov = fwd_bench.median_ci([float(x) for x in range(10, 0, -1)])
    check((lo, hi) == (2.0, 9.0), "10 rounds: the 2nd and 9th of them (%s, %s)" % (lo, hi))
    check(abs(cov - binomial_coverage(10, 2)) < 1e-12 and cov >= 0.95,
          "coverage %.4f" % cov)
    lo, hi, cov = fwd_bench.median_ci(list(range(1, 21)))
    check((lo, hi) == (6, 15), "20 rounds: the 6th and 15th (%s, %s)" % (lo, hi))
    check(abs(cov - binomial_coverage(20, 6)) < 1e-12, "coverage %.4f" % cov)
    check(binomial_coverage(20, 7) < 0.95, "the 7th and 14th would hold less than 95 %")
    check(fwd_bench.median_ci([1.0, 2.0, 3.0, 4.0, 5.0]) == (None, None, None),
          "5 rounds cannot hold 95 %: no interval")


def write_sample(path, at_ns, rows):
    with open(path, "w") as f:
        for tid, ns, vol, nvol, comm in rows:
            f.write("%d %d %d %d %s\n" % (tid, ns, vol, nvol, comm))
        f.write("at_ns %d\n" % at_ns)


def the_thread_split_is_per_role_between_two_samples(d):
    a, b = os.path.join(d, "t0"), os.path.join(d, "t1")
    write_sample(a, 0, [(100, 10**9, 5, 7, "l2fwd-sirq"), (101, 0, 0, 0, "sirqd/1"),
                        (102, 0, 3, 0, "eal-intr-thread")])
    # Two seconds later: the dispatcher ran 1.5 s, sirqd 0.4 s, and a
    # softirq thread that started meanwhile 0.1 s.
    write_sample(b, 2 * 10**9, [(100, 2_500_000_000, 105, 107, "l2fwd-sirq"),
                                (101, 400_000_000, 300, 100, "sirqd/1"),
                                (103, 100_000_000, 20, 0, "sirq-net_rx/1"),
                                (102, 0, 3, 0, "eal-intr-thread")])
    s = fwd_bench.thread_split([a, b])
    check(abs(s["dispatcher"]["cpu_share"] - 0.75) < 1e-9, "dispatcher 75 %")
    check(abs(s["sirqd"]["cpu_share"] - 0.2) < 1e-9, "sirqd 20 %")
    check(abs(s["threads"]["cpu_share"] - 0.05) < 1e-9, "a thread born between the samples: 5 %")
    check(abs(s["dispatcher"]["switches_per_s"] - 100) < 1e-9, "dispatcher 200 switches in 2 s")
    check(abs(s["sirqd"]["switches_per_s"] - 200) < 1e-9, "sirqd 400 switches in 2 s")
    check(s["other"]["cpu_share"] == 0, "EAL's own threads apart")


def the_summary_has_both_yardsticks(d):
    runs = []
    for rnd in range(1, 11):
        rep = os.path.join(d, "r%d.json" % rnd)
        with open(rep, "w") as f:
            json.dump({"elapsed_s": 1.0, "app_load": [],
                       "lcores": [{"rx_packets": 10_000_000 + rnd * 100_000,
                                   "tx_dropped": 0}],
                       "sirq": {"lcores": [{"counters": {"deferred_to_worker": 0,
                                                         "worker_passes": 0},
                                            "vectors": {"NET_RX": {"runs_inline": 1,
                                                                   "runs_worker": 0}}}]}},
                      f)
        runs.append({"setup": "null", "variant": "kicinski", "tool": "l2fwd-sirq",
                     "round": rnd, "lcores": 1, "report": rep})
        runs.append({"setup": "null", "variant": "testpmd-mac", "tool": "testpmd",
                     "round": rnd, "lcores": 1, "packets": 10_000_000, "seconds": 1.0})
        runs.append({"setup": "null", "variant": "dpdk-l2fwd", "tool": "dpdk-l2fwd",
                     "round": rnd, "lcores": 1, "packets": 20_000_000, "seconds": 2.0})
    by = fwd_bench.summarize(runs, 3e9)
    v = by["null/kicinski"]
    # Ratios 1.01 .. 1.10 against both: median 1.055, 2nd and 9th 1.02, 1.09.
    for b in ("testpmd-mac", "dpdk-l2fwd"):
        check(abs(v["round_ratio_" + b] - 1.055) < 1e-9,
              "%s: the median of the per-round ratios" % b)
        lo, hi, cov = v["round_ratio_ci_" + b]
        check(abs(lo - 1.02) < 1e-9 and abs(hi - 1.09) < 1e-9 and cov > 0.97,
              "%s: its interval [%s, %s]" % (b, lo, hi))
    check("round_ratio_testpmd-mac" not in by["null/dpdk-l2fwd"],
          "a yardstick has no ratio")
    fwd_bench.render(by)


with tempfile.TemporaryDirectory() as tmp:
    for t in (the_median_interval_is_the_textbook_one,
              lambda: the_thread_split_is_per_role_between_two_samples(tmp),
              lambda: the_summary_has_both_yardsticks(tmp)):
        t()
sys.exit(exit_code())
