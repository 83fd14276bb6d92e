#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables of bench/policy-lab.sh: per scenario and policy, medians over runs.

    policy_lab.py RUNS.jsonl SUMMARY.json

RUNS.jsonl has one line per run naming l2fwd-sirq's --report (format:
apps/common/app_report.c) and, for runs measured while traffic flowed, the
report taken at the start; counters are then the difference of the two.
Latency percentiles come from the raise-to-run histogram (log2 buckets of
ns: a percentile is the upper bound of its bucket); the maximum is the
run's own. SUMMARY.json keeps every run, the medians, and the NET_RX
histogram summed over the runs of each group (for the CDF plots).
"""

import json
import statistics
import sys
import time

WAKE_REASONS = ("need_resched", "restart_limit", "time_limit", "handoff",
                "explicit")
COUNTERS = ("deferred_to_worker", "window_overrides", "stale_windows_ignored",
            "window_defer", "window_overload", "windows_closed_idle",
            "worker_passes", "lock_busy")


def load(path):
    with open(path) as f:
        return json.load(f)


def totals(r):
    """The additive figures of one report (one forwarding lcore)."""
    lc = r["sirq"]["lcores"][0]
    k = lc["counters"]
    t = {
        "seconds": r["elapsed_s"],
        "packets": sum(x["rx_packets"] for x in r["lcores"]),
        "tx_dropped": sum(x["tx_dropped"] for x in r["lcores"]),
        "work_units": sum(x["work_units"] for x in r["app_load"]),
        "app_cpu_s": sum(x["cpu_share"] * r["elapsed_s"] for x in r["app_load"]),
    }
    for vec in ("NET_RX", "NET_TX"):
        lat = lc["vectors"][vec]["latency"]
        t[vec + "_stalls"] = lat["stalls"]
        t[vec + "_samples"] = lat["samples"]
        t[vec + "_hist"] = list(lat["hist_log2_ns"])
        t[vec + "_max_ns"] = lat["max_ns"]
        t[vec + "_worker_runs"] = lc["vectors"][vec]["runs_worker"]
        t[vec + "_inline_runs"] = lc["vectors"][vec]["runs_inline"]
    for w in WAKE_REASONS:
        t["wakeup_" + w] = k["wakeup_" + w]
    for c in COUNTERS:
        t[c] = k[c]
    return t


def minus(a, b):
    out = {}
    for key, v in a.items():
        if key.endswith("_max_ns"):
            out[key] = v	# not additive: the run's maximum so far
        elif isinstance(v, list):
            out[key] = [x - y for x, y in zip(v, b[key])]
        else:
            out[key] = v - b[key]
    return out


def percentile(hist, q):
    total = sum(hist)
    if total == 0:
        return 0
    seen = 0
    for i, n in enumerate(hist):
        seen += n
        if seen >= q * total:
            return (1 << (i + 1)) - 1
    return (1 << len(hist)) - 1


def run_figures(run):
    t = totals(load(run["report"]))
    if "start_report" in run:
        t = minus(t, totals(load(run["start_report"])))
    s = t["seconds"]
    f = {
        "seconds": s,
        "mpps": t["packets"] / s / 1e6,
        "tx_dropped": t["tx_dropped"],
        "work_units_per_s": t["work_units"] / s,
        "app_cpu_share": t["app_cpu_s"] / s,
    }
    for vec in ("NET_RX", "NET_TX"):
        h = t[vec + "_hist"]
        f[vec] = {
            "samples": t[vec + "_samples"],
            "stalls": t[vec + "_stalls"],
            "stalls_per_s": t[vec + "_stalls"] / s,
            "p50_ns": percentile(h, 0.50),
            "p99_ns": percentile(h, 0.99),
            "p999_ns": percentile(h, 0.999),
            "max_ns": t[vec + "_max_ns"],
            "worker_share": (t[vec + "_worker_runs"] /
                             max(1, t[vec + "_worker_runs"] + t[vec + "_inline_runs"])),
            "hist_log2_ns": h,
        }
    f["wakeups_per_s"] = {w: t["wakeup_" + w] / s for w in WAKE_REASONS}
    for c in COUNTERS:
        f[c + "_per_s"] = t[c] / s
    return f


def median_of(runs, path):
    vals = []
    for r in runs:
        v = r
        for p in path:
            v = v[p]
        vals.append(v)
    return statistics.median(vals)


def summarize(lines):
    groups = {}
    for run in lines:
        key = "%s/%s/%d" % (run["scenario"], run["policy"], run["tick_hz"])
        g = groups.setdefault(key, {"scenario": run["scenario"],
                                    "policy": run["policy"],
                                    "tick_hz": run["tick_hz"], "runs": []})
        g["runs"].append(run_figures(run))
    for g in groups.values():
        runs = g["runs"]
        g["median"] = {
            "mpps": median_of(runs, ("mpps",)),
            "work_units_per_s": median_of(runs, ("work_units_per_s",)),
            "app_cpu_share": median_of(runs, ("app_cpu_share",)),
            "tx_dropped": median_of(runs, ("tx_dropped",)),
        }
        for vec in ("NET_RX", "NET_TX"):
            g["median"][vec] = {k: median_of(runs, (vec, k)) for k in
                                ("stalls_per_s", "p50_ns", "p99_ns",
                                 "p999_ns", "max_ns", "worker_share")}
            g[vec + "_hist_log2_ns"] = [sum(x) for x in zip(
                *(r[vec]["hist_log2_ns"] for r in runs))]
        g["median"]["wakeups_per_s"] = {
            w: median_of(runs, ("wakeups_per_s", w)) for w in WAKE_REASONS}
        for c in COUNTERS:
            g["median"][c + "_per_s"] = median_of(runs, (c + "_per_s",))
        # Stalls over all runs: a rare event, so the pooled rate too.
        secs = sum(r["seconds"] for r in runs)
        g["NET_RX_stalls_pooled_per_s"] = sum(
            r["NET_RX"]["stalls"] for r in runs) / secs
    return groups


def ms(ns):
    return "%.2f" % (ns / 1e6)


def table(head, rows):
    w = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    fmt = "| " + " | ".join("%-*s" if i == 0 else "%*s"
                            for i in range(len(head))) + " |"
    print(fmt % tuple(a for p in zip(w, head) for a in p))
    print("|" + "|".join("-" * (x + 1) + (":" if i else "-")
                         for i, x in enumerate(w)) + "|")
    for r in rows:
        print(fmt % tuple(a for p in zip(w, r) for a in p))


def render(groups):
    by = {}
    for g in groups.values():
        by.setdefault(g["scenario"], []).append(g)
    for scen in ("stall", "tick"):
        if scen not in by:
            continue
        print("\n%s scenario (NET_RX raise-to-run, ms; medians over runs; "
              "stalls >= 8 ms per second, also pooled over all runs)" % scen)
        rows = []
        for g in by[scen]:
            m, lat = g["median"], g["median"]["NET_RX"]
            w = m["wakeups_per_s"]
            rows.append((
                g["policy"] + ("" if g["tick_hz"] == 0 else "@%dHz" % g["tick_hz"]),
                str(len(g["runs"])), "%.2f" % lat["stalls_per_s"],
                "%.2f" % g["NET_RX_stalls_pooled_per_s"], ms(lat["p50_ns"]),
                ms(lat["p99_ns"]), ms(lat["p999_ns"]), ms(lat["max_ns"]),
                "%.2f" % m["mpps"], "%.0f" % w["need_resched"],
                "%.0f" % w["restart_limit"], "%.0f" % w["time_limit"],
                "%.0f" % m["window_overrides_per_s"],
                "%.1f" % m["stale_windows_ignored_per_s"],
                "%.3f" % m["app_cpu_share"]))
        table(("policy", "runs", "stalls/s", "pooled", "p50", "p99", "p99.9",
               "max", "Mpps", "wk nr/s", "wk rl/s", "wk tl/s", "ovr/s",
               "stale/s", "app cpu"), rows)
    if "flood" in by:
        print("\nflood scenario (medians over runs; app progress relative "
              "to ksoftirqd's)")
        base = next((g["median"]["work_units_per_s"] for g in by["flood"]
                     if g["policy"] == "ksoftirqd"), None)
        rows = []
        for g in by["flood"]:
            m = g["median"]
            rows.append((
                g["policy"], str(len(g["runs"])),
                "%.0f" % m["work_units_per_s"],
                "%.2f" % (m["work_units_per_s"] / base) if base else "-",
                "%.3f" % m["app_cpu_share"], "%.2f" % m["mpps"],
                "%.0f" % m["tx_dropped"],
                "%.2f" % m["NET_RX"]["worker_share"],
                "%.2f" % m["NET_RX"]["stalls_per_s"]))
        table(("policy", "runs", "work/s", "vs ksoftirqd", "app cpu", "Mpps",
               "tx drops", "NET_RX in sirqd", "stalls/s"), rows)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    groups = summarize(lines)
    render(groups)
    with open(sys.argv[2], "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
                   "groups": list(groups.values())}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
