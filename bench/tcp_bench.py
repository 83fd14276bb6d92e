#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables of bench/tcp-bench.sh from its JSON files; also out/.../summary.json.

Stall scenario, per policy (summed or taken from every round): the kernel
client's retransmissions, its request RTT percentiles, the server's NET_RX
stalls. Yardstick: tcp-echo against a kernel echo server, as ratios.
"""
import argparse
import glob
import json
import os
import re
import statistics


def load(path):
    with open(path) as f:
        return json.load(f)


def stall_rows(out):
    rows = {}
    for path in sorted(glob.glob(os.path.join(out, "client-stall-*.json"))):
        m = re.match(r"client-stall-(\w+)-(\d+)\.json", os.path.basename(path))
        policy = m.group(1)
        c = load(path)
        s = load(os.path.join(out, "server-stall-%s-%s.json" % (policy, m.group(2))))
        lc = s["lcores"][0]
        rows.setdefault(policy, []).append({
            "messages": c["messages"],
            "seconds": c["elapsed_s"],
            "retrans_segs": c["tcp"]["RetransSegs"],
            "out_segs": c["tcp"]["OutSegs"],
            "rto_timeouts": c["tcp"]["TCPTimeouts"],
            "loss_probes": c["tcp"]["TCPLossProbes"],
            "rtt_us": c["rtt_us"],
            "server_stalls": lc["net_rx_stalls"],
            "server_stalls_per_s": lc["net_rx_stalls_per_s"],
            "net_rx_max_ms": lc["net_rx_max_ns"] / 1e6,
            "app_cpu_share": s["app_load"][0]["cpu_share"] if s["app_load"] else None,
        })
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rto-min", default="?")
    ap.add_argument("--seconds", default="?")
    ap.add_argument("--conns", default="?")
    ap.add_argument("--app-load", default="?")
    a = ap.parse_args()

    rows = stall_rows(a.out)
    order = [p for p in ("mainline", "ksoftirqd", "kicinski", "deferred") if p in rows]
    print("\nStall scenario: irq mode, app load %s on the server's CPU; "
          "%s connections, %s s per run, rto_min %s\n"
          % (a.app_load, a.conns, a.seconds, a.rto_min))
    print("| policy | runs | requests | RetransSegs | per 1000 segs | RTO timeouts | TLP "
          "| RTT p50 us | p99 us | p99.9 us | max us | server stalls >= 8 ms/s | NET_RX max ms "
          "| app CPU |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    summary = {"stall": {}, "yardstick": {}}
    for p in order:
        r = rows[p]
        tot = lambda k: sum(x[k] for x in r)
        med = lambda f: statistics.median(f(x) for x in r)
        agg = {
            "runs": len(r),
            "requests": tot("messages"),
            "retrans_segs": tot("retrans_segs"),
            "retrans_per_1000_segs": 1000.0 * tot("retrans_segs") / max(1, tot("out_segs")),
            "rto_timeouts": tot("rto_timeouts"),
            "loss_probes": tot("loss_probes"),
            "rtt_p50_us": med(lambda x: x["rtt_us"]["p50"]),
            "rtt_p99_us": med(lambda x: x["rtt_us"]["p99"]),
            "rtt_p999_us": med(lambda x: x["rtt_us"]["p999"]),
            "rtt_max_us": max(x["rtt_us"]["max"] for x in r),
            "server_stalls_per_s": med(lambda x: x["server_stalls_per_s"]),
            "net_rx_max_ms": max(x["net_rx_max_ms"] for x in r),
            "app_cpu_share": med(lambda x: x["app_cpu_share"] or 0),
        }
        summary["stall"][p] = agg
        print("| %s | %d | %d | %d | %.2f | %d | %d | %.0f | %.0f | %.0f | %.0f | %.2f | %.1f | %.2f |"
              % (p, agg["runs"], agg["requests"], agg["retrans_segs"],
                 agg["retrans_per_1000_segs"], agg["rto_timeouts"], agg["loss_probes"],
                 agg["rtt_p50_us"], agg["rtt_p99_us"], agg["rtt_p999_us"], agg["rtt_max_us"],
                 agg["server_stalls_per_s"], agg["net_rx_max_ms"], agg["app_cpu_share"]))
    st = summary["stall"]
    if "kicinski" in st and "ksoftirqd" in st and st["ksoftirqd"]["retrans_segs"] > 0:
        cut = 1 - st["kicinski"]["retrans_segs"] / st["ksoftirqd"]["retrans_segs"]
        summary["kicinski_vs_ksoftirqd_retrans_reduction"] = cut
        print("\nkicinski vs ksoftirqd: %.0f%% fewer retransmissions (target: >= 50%%)"
              % (100 * cut))

    yard = {}
    for who in ("tcp-echo", "kernel"):
        for what in ("throughput", "rtt"):
            p = os.path.join(a.out, "client-yard-%s-%s.json" % (who, what))
            if os.path.exists(p):
                yard[(who, what)] = load(p)
    if len(yard) == 4:
        te_t, k_t = yard[("tcp-echo", "throughput")], yard[("kernel", "throughput")]
        te_r, k_r = yard[("tcp-echo", "rtt")], yard[("kernel", "rtt")]
        print("\nYardstick, no app load: tcp-echo (poll mode, net_tap) against a kernel echo "
              "server in the same namespace (loopback)\n")
        print("| | tcp-echo | kernel | ratio |")
        print("|---|--:|--:|--:|")
        print("| echo Mbit/s, 8 conns, 64 KB..1 MB | %.0f | %.0f | %.2f |"
              % (te_t["echo_mbit_s"], k_t["echo_mbit_s"], te_t["echo_mbit_s"] / k_t["echo_mbit_s"]))
        for q in ("p50", "p99", "max"):
            print("| RTT %s us, 1 conn, 64 B | %.1f | %.1f | %.2f |"
                  % (q, te_r["rtt_us"][q], k_r["rtt_us"][q], te_r["rtt_us"][q] / k_r["rtt_us"][q]))
        summary["yardstick"] = {
            "throughput_mbit_s": {"tcp_echo": te_t["echo_mbit_s"], "kernel": k_t["echo_mbit_s"]},
            "throughput_ratio": te_t["echo_mbit_s"] / k_t["echo_mbit_s"],
            "rtt_us": {"tcp_echo": te_r["rtt_us"], "kernel": k_r["rtt_us"]},
            "rtt_p50_ratio": te_r["rtt_us"]["p50"] / k_r["rtt_us"]["p50"],
        }
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
