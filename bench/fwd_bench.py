#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Table of bench/fwd-bench.sh: median Mpps per variant, ratio to testpmd.

    fwd_bench.py RUNS.jsonl SUMMARY.json

RUNS.jsonl has one line per run: l2fwd-sirq runs name their --report
(format: apps/common/app_report.c), testpmd runs carry the packets of its
"Accumulated forward statistics" (RX, both ports) and the seconds between
"start" and "stop". Mpps = packets / seconds for both. Ratios are l2fwd-sirq
over testpmd: of the medians, and the median of the per-round ratios
(rounds alternate the tools, so a round's ratio sees the same machine
state). Cycles per packet = TSC Hz / packets per second, the forwarding
core being busy the whole time in poll mode.
"""

import json
import platform
import statistics
import sys
import time

BASELINES = ("testpmd-mac", "testpmd-io")


def tsc_hz():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) * 1e6
    return 0.0


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.machine()


def load_report(path):
    with open(path) as f:
        return json.load(f)


def l2fwd_counts(r):
    c = {"packets": sum(x["rx_packets"] for x in r["lcores"]),
         "seconds": r["elapsed_s"],
         "tx_dropped": sum(x["tx_dropped"] for x in r["lcores"]),
         "deferred_to_worker": 0, "worker_passes": 0, "wakeups": 0,
         "net_rx_inline": 0, "net_rx_worker": 0,
         "app_cpu_s": sum(x["cpu_share"] * r["elapsed_s"]
                          for x in r["app_load"])}
    for lc in r["sirq"]["lcores"]:
        k = lc["counters"]
        c["deferred_to_worker"] += k["deferred_to_worker"]
        c["worker_passes"] += k["worker_passes"]
        c["wakeups"] += sum(v for n, v in k.items() if n.startswith("wakeup_"))
        c["net_rx_inline"] += lc["vectors"]["NET_RX"]["runs_inline"]
        c["net_rx_worker"] += lc["vectors"]["NET_RX"]["runs_worker"]
    return c


def l2fwd_run(run):
    """Counters of a run; of its second report minus its first if it has two."""
    c = l2fwd_counts(load_report(run["report"]))
    if "start_report" in run:
        s = l2fwd_counts(load_report(run["start_report"]))
        c = {k: c[k] - s[k] for k in c}
    runs = c["net_rx_inline"] + c["net_rx_worker"]
    c["net_rx_worker_share"] = c["net_rx_worker"] / runs if runs else 0.0
    c["app_cpu_share"] = c["app_cpu_s"] / c["seconds"]
    return c


def summarize(runs, hz):
    by = {}
    for run in runs:
        m = l2fwd_run(run) if run["tool"] == "l2fwd-sirq" else dict(run)
        m["round"] = run["round"]
        m["mpps"] = m["packets"] / m["seconds"] / 1e6
        key = run["setup"] + "/" + run["variant"]
        by.setdefault(key, {"setup": run["setup"], "variant": run["variant"],
                            "tool": run["tool"], "lcores": run["lcores"],
                            "runs": []})
        by[key]["runs"].append(m)
    for v in by.values():
        mpps = [m["mpps"] for m in v["runs"]]
        v["median_mpps"] = statistics.median(mpps)
        v["min_mpps"], v["max_mpps"] = min(mpps), max(mpps)
        # Every forwarding lcore busy the whole time: cycles per packet.
        v["cycles_per_packet"] = (hz * v["lcores"] / (v["median_mpps"] * 1e6)
                                  if hz else None)
        if v["tool"] == "l2fwd-sirq":
            for k in ("deferred_to_worker", "worker_passes", "wakeups"):
                v[k + "_per_s"] = statistics.median(
                    m[k] / m["seconds"] for m in v["runs"])
            for k in ("net_rx_worker_share", "app_cpu_share"):
                v[k] = statistics.median(m[k] for m in v["runs"])
    for v in by.values():
        if v["tool"] != "l2fwd-sirq":
            continue
        for b in BASELINES:
            base_v = by.get(v["setup"] + "/" + b)
            if base_v is None:
                continue
            base = {m["round"]: m["mpps"] for m in base_v["runs"]}
            v["ratio_" + b] = v["median_mpps"] / base_v["median_mpps"]
            v["round_ratio_" + b] = statistics.median(
                m["mpps"] / base[m["round"]] for m in v["runs"]
                if m["round"] in base)
    return by


def render(by):
    head = ("setup", "variant", "runs", "median Mpps", "min-max", "cyc/pkt",
            "/mac", "/mac rnd", "/io", "defer/s", "wake/s")
    rows = []
    for v in by.values():
        def r(k):
            return "%.3f" % v[k] if k in v else "-"
        rows.append((
            v["setup"], v["variant"], str(len(v["runs"])), "%.2f" % v["median_mpps"],
            "%.1f-%.1f" % (v["min_mpps"], v["max_mpps"]),
            "%.1f" % v["cycles_per_packet"] if v["cycles_per_packet"] else "-",
            r("ratio_testpmd-mac"), r("round_ratio_testpmd-mac"),
            r("ratio_testpmd-io"),
            "%.0f" % v["deferred_to_worker_per_s"] if "wakeups_per_s" in v else "-",
            "%.0f" % v["wakeups_per_s"] if "wakeups_per_s" in v else "-",
        ))
    w = [max(len(x[i]) for x in rows + [head]) for i in range(len(head))]
    line = "| " + " | ".join("%-*s" if i < 2 else "%*s" for i in range(len(head))) + " |"
    print(line % tuple(a for p in zip(w, head) for a in p))
    print("|" + "|".join("-" * (x + 1) + (":" if i > 1 else "-") for i, x in enumerate(w)) + "|")
    for row in rows:
        print(line % tuple(a for p in zip(w, row) for a in p))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    hz = tsc_hz()
    by = summarize(runs, hz)
    render(by)
    print("Mpps: packets forwarded (Rx, both ports) / forwarding time; "
          "cyc/pkt at %.3f GHz; /mac, /io: l2fwd-sirq median over testpmd "
          "median; /mac rnd: median of per-round ratios" % (hz / 1e9))
    with open(sys.argv[2], "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
                   "cpu": cpu_model(), "tsc_hz": hz,
                   "kernel": platform.release(), "variants": by}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
