#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The runs of bench/policy-lab.sh in bench/policy_plots.py's format.

    policy_lab.py RUNS.jsonl LAB.json

RUNS.jsonl has one line per run naming l2fwd-sirq's --report (format:
apps/common/app_report.c) and, for runs measured while traffic flowed, the
report taken at the start; counters are then the difference of the two.
Latency percentiles come from the raise-to-run histogram (log2 buckets of
ns: a percentile is the upper bound of its bucket); the maximum is the
run's own. LAB.json is the renderer's input (one object per run, format
in policy_plots.py); the figures the issues target are printed: the
stall ratio ksoftirqd / kicinski (stalls pooled over all runs); under
flood (l2fwd-sirq --receiver) the packets the application received per
second, ksoftirqd's against mainline's and kicinski's against
ksoftirqd's; under flood-burn the application progress of each policy
against ksoftirqd's.

A run with --receiver adds app.rx_pps (packets the reader threads
received per second), and "receiver": processed (by NET_RX), received,
drops (the socket queue's, UDP's RcvbufErrors) with their rates, and
cpu_split: the CPU time of the readers, sirqd and the dispatcher as
shares of the time they were sampled over.

Every run has "mode": the policy or execution model it ran under (the
name given to l2fwd-sirq's --policy), and "policy", the same, which the
older readers take. A run with --probe (the mixed scenario) adds
timer_p99_us and tasklet_p99_us (raise-to-run of the TIMER and TASKLET
vectors, from their histograms: the upper bound of a log2 bucket, so
1048.6 means 0.52 to 1.05 ms), timer_late_p99_us (the probe timer's
lateness from its deadline, which holds the wait for the execution lock
before TIMER is raised), net_rx_pps (NET_RX's packets per second),
app_share (the reader's CPU share, as the flood scenario's app.cpu_share),
and "probe": the periods, runs, and deadlines skipped.
"""

import json
import statistics
import sys
import time

WAKE_REASONS = ("need_resched", "restart_limit", "time_limit", "handoff",
                "explicit", "raise")
# NET_RX and NET_TX for every scenario; TIMER and TASKLET for the probe.
VECTORS = ("NET_RX", "NET_TX", "TIMER", "TASKLET")
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
    for vec in VECTORS:
        if vec not in lc["vectors"]:
            continue
        lat = lc["vectors"][vec]["latency"]
        t[vec + "_stalls"] = lat["stalls"]
        t[vec + "_samples"] = lat["samples"]
        t[vec + "_hist"] = list(lat["hist_log2_ns"])
        t[vec + "_max_ns"] = lat["max_ns"]
        t[vec + "_worker_runs"] = lc["vectors"][vec]["runs_worker"]
        t[vec + "_inline_runs"] = lc["vectors"][vec]["runs_inline"]
    for w in WAKE_REASONS:
        t["wakeup_" + w] = k["wakeup_" + w]
    # need_resched deferrals: passes that ended on need_resched (the
    # patch counted ~900 a second on a loaded webserver).
    t["defer_nr"] = k["pass_need_resched_inline"] + k["pass_need_resched_worker"]
    for c in COUNTERS:
        t[c] = k[c]
    rcv = r.get("receiver")
    if rcv:
        for key in ("processed", "received", "drops", "drained_at_exit"):
            t["rcv_" + key] = sum(x[key] for x in rcv)
        for key in ("receiver_s", "sirqd_s", "threads_s", "dispatcher_s"):
            # threads_s: the models' softirq threads (older reports: none)
            t["rcv_cpu_" + key] = sum(x["cpu"].get(key, 0.0) for x in rcv)
        t["rcv_cpu_window_s"] = rcv[0]["cpu"]["window_s"]
    probe = r.get("probe")
    if probe:
        for key in ("timer_fires", "timer_missed", "tasklet_scheduled",
                    "tasklet_already_scheduled", "tasklet_runs", "tasklet_missed"):
            t["probe_" + key] = sum(x[key] for x in probe)
        t["probe_late_hist"] = [sum(x) for x in
                                zip(*(p["timer_late_hist_log2_ns"] for p in probe))]
        t["probe_late_max_ns"] = max(x["timer_late_max_ns"] for x in probe)
        t["probe_timer_ns"] = probe[0]["timer_ns"]
        t["probe_tasklet_ns"] = probe[0]["tasklet_ns"]
    return t


def minus(a, b):
    out = {}
    for key, v in a.items():
        if key.endswith("_max_ns") or key in ("probe_timer_ns", "probe_tasklet_ns"):
            out[key] = v	# not additive: the run's maximum so far, a setting
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
    for vec in VECTORS:
        if vec + "_hist" not in t:
            continue
        h = t[vec + "_hist"]
        f[vec] = {
            "samples": t[vec + "_samples"],
            "stalls": t[vec + "_stalls"],
            "stalls_per_s": t[vec + "_stalls"] / s,
            "p50_ns": percentile(h, 0.50),
            "p99_ns": percentile(h, 0.99),
            "p999_ns": percentile(h, 0.999),
            "max_ns": t[vec + "_max_ns"],
            "worker_runs": t[vec + "_worker_runs"],
            "inline_runs": t[vec + "_inline_runs"],
            "worker_share": (t[vec + "_worker_runs"] /
                             max(1, t[vec + "_worker_runs"] + t[vec + "_inline_runs"])),
            "hist_log2_ns": h,
        }
    f["wakeups_per_s"] = {w: t["wakeup_" + w] / s for w in WAKE_REASONS}
    f["need_resched_deferrals_per_s"] = t["defer_nr"] / s
    for c in COUNTERS:
        f[c + "_per_s"] = t[c] / s
    if "rcv_processed" in t:
        win = t["rcv_cpu_window_s"]
        f["receiver"] = {
            "processed": t["rcv_processed"], "received": t["rcv_received"],
            "drops": t["rcv_drops"], "drained_at_exit": t["rcv_drained_at_exit"],
            "processed_pps": t["rcv_processed"] / s,
            "rx_pps": t["rcv_received"] / s, "drops_per_s": t["rcv_drops"] / s,
            "cpu_split": {who: (t["rcv_cpu_" + who + "_s"] / win if win else None)
                          for who in ("receiver", "sirqd", "threads", "dispatcher")},
        }
    if "probe_timer_fires" in t:
        h = t["probe_late_hist"]
        f["probe"] = {
            "timer_ns": t["probe_timer_ns"], "tasklet_ns": t["probe_tasklet_ns"],
            "timer_fires": t["probe_timer_fires"], "timer_missed": t["probe_timer_missed"],
            "tasklet_scheduled": t["probe_tasklet_scheduled"],
            "tasklet_already_scheduled": t["probe_tasklet_already_scheduled"],
            "tasklet_runs": t["probe_tasklet_runs"],
            "tasklet_missed": t["probe_tasklet_missed"],
            "timer_late_p50_us": percentile(h, 0.50) / 1e3,
            "timer_late_p99_us": percentile(h, 0.99) / 1e3,
            "timer_late_max_us": t["probe_late_max_ns"] / 1e3,
            "timer_late_hist_log2_ns": h,
        }
    return f


def to_plots(line):
    """One run in the renderer's format."""
    f = run_figures(line)
    mode = line.get("mode", line["policy"])
    out = {"scenario": line["scenario"], "mode": mode, "policy": mode,
           "tick_hz": line["tick_hz"], "duration_s": f["seconds"],
           "stalls_per_s": f["NET_RX"]["stalls_per_s"],
           "stalls": f["NET_RX"]["stalls"], "mpps": f["mpps"],
           "need_resched_deferrals_per_s": f["need_resched_deferrals_per_s"],
           "app": {"cpu_share": f["app_cpu_share"],
                   "work_units_per_s": f["work_units_per_s"]},
           "packets": {"processed": round(f["mpps"] * 1e6 * f["seconds"]),
                       "dropped": f["tx_dropped"]},
           "wakeups": {w: round(v * f["seconds"])
                       for w, v in f["wakeups_per_s"].items()},
           "windows": {"overrides": round(f["window_overrides_per_s"] * f["seconds"]),
                       "stale_ignored": round(f["stale_windows_ignored_per_s"] * f["seconds"])},
           "latency": {}}
    rcv = f.get("receiver")
    if rcv:
        # The application is the reader: its CPU and what it received.
        out["app"] = {"cpu_share": rcv["cpu_split"]["receiver"],
                      "rx_pps": rcv["rx_pps"]}
        out["packets"] = {"processed": rcv["processed"], "dropped": rcv["drops"],
                          "arrived": rcv["processed"]}
        out["receiver"] = rcv
    for vec in VECTORS:
        v = f.get(vec)
        if v is None or v["samples"] == 0:
            continue
        out["latency"][vec] = {
            "p50_us": v["p50_ns"] / 1e3, "p99_us": v["p99_ns"] / 1e3,
            "p999_us": v["p999_ns"] / 1e3, "max_us": v["max_ns"] / 1e3,
            "hist_ns": [[(1 << (i + 1)) - 1, n]
                        for i, n in enumerate(v["hist_log2_ns"]) if n]}
    probe = f.get("probe")
    if probe:
        s = f["seconds"]
        out["timer_p99_us"] = f["TIMER"]["p99_ns"] / 1e3 if "TIMER" in f else None
        out["tasklet_p99_us"] = f["TASKLET"]["p99_ns"] / 1e3 if "TASKLET" in f else None
        out["timer_late_p99_us"] = probe["timer_late_p99_us"]
        out["net_rx_pps"] = rcv["processed_pps"] if rcv else f["mpps"] * 1e6
        out["app_share"] = out["app"]["cpu_share"]
        out["probe"] = {k: v for k, v in probe.items() if k != "timer_late_hist_log2_ns"}
        out["probe"]["timer_runs_per_s"] = (f["TIMER"]["worker_runs"] + f["TIMER"]["inline_runs"]) / s \
            if "TIMER" in f else None
        out["probe"]["tasklet_runs_per_s"] = probe["tasklet_runs"] / s
    return out


def modes_of(runs, scenario):
    """The modes of @scenario's runs, in the order they ran."""
    seen = []
    for r in runs:
        if r["scenario"] == scenario and r["mode"] not in seen:
            seen.append(r["mode"])
    return seen


def headline(runs):
    def pooled(scenario, policy, key):
        rs = [r for r in runs if r["scenario"] == scenario and r["mode"] == policy]
        secs = sum(r["duration_s"] for r in rs)
        return (sum(r[key] * (r["duration_s"] if key.endswith("_per_s") else 1)
                    for r in rs) / secs, len(rs)) if secs else (None, 0)

    for scenario in ("stall", "stall-harsh"):
        ks, n = pooled(scenario, "ksoftirqd", "stalls")
        kc, _ = pooled(scenario, "kicinski", "stalls")
        if ks is not None and kc is not None:
            ratio = ("%.1fx" % (ks / kc)) if kc else "inf (kicinski had none)"
            print("%s: ksoftirqd %.2f, kicinski %.2f stalls/s pooled over %d runs: "
                  "ratio %s (target: ksoftirqd >= 0.5/s, ratio >= 10x)"
                  % (scenario, ks, kc, n, ratio))
        nr = {p: pooled(scenario, p, "need_resched_deferrals_per_s")[0]
              for p in modes_of(runs, scenario)}
        if any(v is not None for v in nr.values()):
            print("%s: need_resched deferrals/s: " % scenario +
                  ", ".join("%s %.0f" % (p, v) for p, v in nr.items() if v is not None))
    def medians(scenario, key):
        by = {}
        for r in runs:
            if r["scenario"] == scenario and r["app"].get(key) is not None:
                by.setdefault(r["mode"], []).append(r["app"][key])
        return {p: statistics.median(v) for p, v in by.items()}

    def ratio(a, b):
        return ("%.1fx" % (a / b)) if b else "inf"

    rx = medians("flood", "rx_pps")
    if rx:
        print("flood: packets received per second (medians): " +
              ", ".join("%s %.0f" % (p, v) for p, v in rx.items()))
    if "ksoftirqd" in rx and "mainline" in rx:
        print("flood: ksoftirqd / mainline %s (target >= 10x)"
              % ratio(rx["ksoftirqd"], rx["mainline"]))
    if "kicinski" in rx and "ksoftirqd" in rx:
        print("flood: kicinski / ksoftirqd %s (target >= 0.8x)"
              % ratio(rx["kicinski"], rx["ksoftirqd"]))
    for m in modes_of(runs, "mixed"):
        rs = [r for r in runs if r["scenario"] == "mixed" and r["mode"] == m]

        def med(key):
            v = [r.get(key) for r in rs if r.get(key) is not None]
            return statistics.median(v) if v else float("nan")
        print("mixed: %s: TIMER p99 %.1f us (lateness p99 %.1f us), TASKLET p99 %.1f us, "
              "NET_RX %.0f pps, app %.1f %% (medians of %d)"
              % (m, med("timer_p99_us"), med("timer_late_p99_us"), med("tasklet_p99_us"),
                 med("net_rx_pps"), 100 * med("app_share"), len(rs)))
    burn = medians("flood-burn", "work_units_per_s")
    if "ksoftirqd" in burn:
        print("flood-burn: application progress against ksoftirqd's (medians): " +
              ", ".join("%s %.2f" % (p, v / burn["ksoftirqd"])
                        for p, v in burn.items()))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    runs = [to_plots(x) for x in lines]
    headline(runs)
    with open(sys.argv[2], "w") as f:
        json.dump({"source": "policy-lab",
                   "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
                   "stall_threshold_ms": 8, "runs": runs}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
