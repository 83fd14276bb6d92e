#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Table of bench/fwd-bench.sh: median Mpps per variant, ratio to testpmd.

    fwd_bench.py RUNS.jsonl SUMMARY.json

RUNS.jsonl has one line per run: l2fwd-sirq runs name their --report
(format: apps/common/app_report.c), testpmd runs carry the packets of its
"Accumulated forward statistics" (RX, both ports) and the seconds between
"start" and "stop", DPDK l2fwd runs the packets between two of its
per-second totals. Mpps = packets / seconds for all. Ratios are l2fwd-sirq
over a yardstick (testpmd mac and io, DPDK's l2fwd): of the medians, and
the median of the per-round ratios (rounds alternate the tools, so a
round's ratio sees the same machine state), with a distribution-free
confidence interval of at least 95 % for that median (order statistics
of the binomial, e.g. the 2nd and 9th of 10 rounds: 97.9 %). Cycles per
packet = TSC Hz / packets per second, the forwarding core being busy the
whole time in poll mode. l2fwd-sirq runs that sampled their threads
(null setup) also give the dispatcher's and sirqd's shares of the CPU,
their context switches a second and the cycles per packet of each.
"""

import json
import math
import platform
import statistics
import sys
import time

BASELINES = ("testpmd-mac", "testpmd-io", "dpdk-l2fwd")


def median_ci(xs, level=0.95):
    """The order-statistic interval that holds the median of @xs' law with
    at least @level, the narrowest such: (lo, hi, coverage); three Nones
    when no interval of @xs gives that coverage (fewer than 6 values)."""
    xs = sorted(xs)
    n = len(xs)
    best = None
    # P(X < k) for X ~ Binomial(n, 1/2): the interval [x(k), x(n-k+1)]
    # misses the median with probability 2 P(X < k).
    cdf = 0.0
    for k in range(1, n // 2 + 1):
        cdf += math.comb(n, k - 1) / 2 ** n
        if 1 - 2 * cdf >= level:
            best = (xs[k - 1], xs[n - k], 1 - 2 * cdf)
    if best is None:
        return None, None, None
    return best


def thread_sample(path):
    """A threads file of fwd-bench.sh: {tid: (comm, ns, switches)}, at_ns."""
    threads, at = {}, None
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "at_ns":
                at = int(w[1])
                continue
            threads[w[0]] = (w[4], int(w[1]), int(w[2]) + int(w[3]))
    return threads, at


def thread_role(comm):
    if comm.startswith("sirqd/"):
        return "sirqd"
    if comm.startswith(("sirq-", "ktimers/", "napi/")):
        return "threads"
    if comm == "l2fwd-sirq":
        return "dispatcher"	# -l 1: the main lcore's thread
    return "other"


def thread_split(paths):
    """CPU shares and switches a second of the roles between two samples."""
    (a, t0), (b, t1) = thread_sample(paths[0]), thread_sample(paths[1])
    dt = (t1 - t0) / 1e9
    out = {}
    for tid, (comm, ns, sw) in b.items():
        ns0, sw0 = (a[tid][1], a[tid][2]) if tid in a else (0, 0)
        r = out.setdefault(thread_role(comm), {"cpu_share": 0.0, "switches_per_s": 0.0})
        r["cpu_share"] += (ns - ns0) / 1e9 / dt
        r["switches_per_s"] += (sw - sw0) / dt
    return out


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
    if "threads" in run:
        c["threads"] = thread_split(run["threads"])
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
            split = [m["threads"] for m in v["runs"] if "threads" in m]
            if split:
                v["threads"] = {}
                for role in ("dispatcher", "sirqd", "threads", "other"):
                    for k in ("cpu_share", "switches_per_s"):
                        v["threads"][role + "_" + k] = statistics.median(
                            t.get(role, {}).get(k, 0.0) for t in split)
                # The forwarding CPU's cycles per packet, by thread.
                if hz:
                    for role in ("dispatcher", "sirqd", "threads"):
                        v["threads"][role + "_cycles_per_packet"] = (
                            hz * v["threads"][role + "_cpu_share"] /
                            (v["median_mpps"] * 1e6))
    for v in by.values():
        if v["tool"] != "l2fwd-sirq":
            continue
        for b in BASELINES:
            base_v = by.get(v["setup"] + "/" + b)
            if base_v is None:
                continue
            base = {m["round"]: m["mpps"] for m in base_v["runs"]}
            v["ratio_" + b] = v["median_mpps"] / base_v["median_mpps"]
            pairs = [m["mpps"] / base[m["round"]] for m in v["runs"]
                     if m["round"] in base]
            v["round_ratio_" + b] = statistics.median(pairs)
            lo, hi, cov = median_ci(pairs)
            v["round_ratio_ci_" + b] = [lo, hi, cov]
    return by


def render(by):
    head = ("setup", "variant", "runs", "median Mpps", "min-max", "cyc/pkt",
            "/mac", "/mac rnd [CI]", "/io", "/l2fwd rnd [CI]", "defer/s",
            "wake/s", "disp/sirqd %", "sw/s")
    rows = []
    for v in by.values():
        def r(k):
            return "%.3f" % v[k] if k in v else "-"

        def rci(b):
            if "round_ratio_" + b not in v:
                return "-"
            lo, hi, _ = v["round_ratio_ci_" + b]
            ci = " [%.3f-%.3f]" % (lo, hi) if lo is not None else ""
            return "%.3f%s" % (v["round_ratio_" + b], ci)
        t = v.get("threads")
        rows.append((
            v["setup"], v["variant"], str(len(v["runs"])), "%.2f" % v["median_mpps"],
            "%.1f-%.1f" % (v["min_mpps"], v["max_mpps"]),
            "%.1f" % v["cycles_per_packet"] if v["cycles_per_packet"] else "-",
            r("ratio_testpmd-mac"), rci("testpmd-mac"),
            r("ratio_testpmd-io"), rci("dpdk-l2fwd"),
            "%.0f" % v["deferred_to_worker_per_s"] if "wakeups_per_s" in v else "-",
            "%.0f" % v["wakeups_per_s"] if "wakeups_per_s" in v else "-",
            "%.1f/%.1f" % (100 * t["dispatcher_cpu_share"],
                           100 * (t["sirqd_cpu_share"] + t["threads_cpu_share"]))
            if t else "-",
            "%.0f" % (t["dispatcher_switches_per_s"] + t["sirqd_switches_per_s"] +
                      t["threads_switches_per_s"]) if t else "-",
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
          "median; /mac rnd, /l2fwd rnd: median of per-round ratios, [a "
          ">= 95 %% confidence interval of it]; disp/sirqd %%: CPU of the "
          "dispatcher and of sirqd (and softirq threads); sw/s: their context "
          "switches a second" % (hz / 1e9))
    with open(sys.argv[2], "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
                   "cpu": cpu_model(), "tsc_hz": hz,
                   "kernel": platform.release(), "variants": by}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
