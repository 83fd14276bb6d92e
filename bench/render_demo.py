#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Table of the demo's l2fwd-sirq reports, one row per policy.

    render_demo.py SUMMARY.json REPORT.json...

Reads the JSON reports that l2fwd-sirq wrote with --report (format:
apps/common/app_report.c), prints one row per report and writes the rows
to SUMMARY.json. If REPORT.start.json exists beside REPORT.json (a report
taken with SIGUSR1 when the traffic started), rates are over the interval
between the two; latencies are from REPORT.json, as nothing raises NET_RX
before there is traffic. Lcores are summed (rates, app progress) or maxed
(latencies); the demo runs one forwarding lcore.
"""

import json
import os
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def totals(r):
    lc, ld, t = r["lcores"], r["app_load"], r["elapsed_s"]
    return {
        "s": t,
        "pkts": sum(x["rx_packets"] for x in lc),
        "stalls": sum(x["net_rx_stalls"] for x in lc),
        "units": sum(x["work_units"] for x in ld),
        "busy_s": sum(x["cpu_share"] for x in ld) * t,
    }


def row(path):
    r = load(path)
    end = totals(r)
    base = path[:-len(".json")] + ".start.json"
    start = totals(load(base)) if os.path.exists(base) else dict.fromkeys(end, 0)
    d = {k: end[k] - start[k] for k in end}
    secs = d["s"] if d["s"] > 0 else 1
    return {
        "policy": r["policy"],
        "mode": r["mode"],
        "seconds": round(d["s"], 3),
        "packets": d["pkts"],
        "mpps": d["pkts"] / secs / 1e6,
        "net_rx_stalls": d["stalls"],
        "net_rx_stalls_per_s": d["stalls"] / secs,
        "net_rx_p99_ms": max(x["net_rx_p99_ns"] for x in r["lcores"]) / 1e6,
        "net_rx_max_ms": max(x["net_rx_max_ns"] for x in r["lcores"]) / 1e6,
        "app_work_units_per_s": d["units"] / secs,
        "app_cpu_share": d["busy_s"] / secs,
        "tx_dropped": sum(x["tx_dropped"] for x in r["lcores"]),
        "report": path,
    }


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = [row(p) for p in sys.argv[2:]]
    first = load(sys.argv[2])
    thr = first["stall_threshold_ns"] / 1e6
    fmt = "{:<10} {:>7} {:>16} {:>8} {:>8} {:>13} {:>10}"
    print(fmt.format("policy", "Mpps", f"stalls>={thr:g}ms/s", "p99 ms",
                     "max ms", "app Munits/s", "app CPU %"))
    for x in rows:
        print(fmt.format(x["policy"], f"{x['mpps']:.3f}",
                         f"{x['net_rx_stalls_per_s']:.2f}",
                         f"{x['net_rx_p99_ms']:.3f}",
                         f"{x['net_rx_max_ms']:.2f}",
                         f"{x['app_work_units_per_s'] / 1e6:.3f}",
                         f"{100 * x['app_cpu_share']:.1f}"))
    app = first["app_load"][0] if first["app_load"] else {}
    scenario = {k: app.get(k) for k in ("hold_us", "period_us", "threads")}
    scenario.update(mode=first["mode"], stall_threshold_ms=thr)
    with open(sys.argv[1], "w") as f:
        json.dump({"scenario": scenario, "rows": rows}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
