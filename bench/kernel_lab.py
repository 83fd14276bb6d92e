#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables of bench/kernel-lab.sh: runs.jsonl -> out/kernel-lab.json and .md.

    kernel_lab.py RUNS.jsonl OUT.json OUT.md
    kernel_lab.py --snmp-delta BEFORE AFTER   (the "Proto name value" lines
                                               of kernel-lab.sh's snmp())

Flood: of the repeats of a case, the run with the median packets received
is shown whole, with the range received; every run is also listed, sorted
by the rate the sender reached. Stall: medians of percentiles, maxima of
maxima, sums of counts. Flood: per (system, rate, cost) the sender's and the
receiver's packet rates, the socket's drops and the split of the
receiver's CPU. Stall: the echo client's RTT and retransmissions, the
server side's retransmissions, and the ICMP probe's NET_RX waits.

libsirq's rows come from two l2fwd-sirq reports (SIGUSR1, start and end of
the window): port 0 is the veth end (net_af_packet), so its Rx is what
libsirq received; what the sender sent and libsirq did not receive was
lost on the way (the packet socket's ring, or the sender's own queue).
Their "softirq" is the time libsirq's handlers ran (inline and in sirqd,
from the report's per-vector times) and their "ksoftirqd" is sirqd's part.
"""
import json
import os
import platform
import statistics
import sys

SNMP_KEYS = ("Tcp RetransSegs", "Tcp OutSegs", "TcpExt TCPTimeouts",
             "TcpExt TCPLossProbes", "TcpExt TCPSpuriousRTOs", "Icmp InEchos",
             "Icmp OutEchoReps")


def snmp_delta(before, after):
    def read(path):
        d = {}
        with open(path) as f:
            for line in f:
                proto, name, value = line.split()
                d[proto + " " + name] = int(value)
        return d
    b, a = read(before), read(after)
    return {k.split()[1]: a.get(k, 0) - b.get(k, 0) for k in SNMP_KEYS}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def libsirq_window(r, base):
    # The reports beside runs.jsonl, wherever that directory was moved.
    with open(os.path.join(base, os.path.basename(r["start_report"]))) as f:
        a = json.load(f)
    with open(os.path.join(base, os.path.basename(r["end_report"]))) as f:
        b = json.load(f)
    secs = b["elapsed_s"] - a["elapsed_s"]
    rx = b["ports"][0]["rx"] - a["ports"][0]["rx"]
    la, lb = a["lcores"][0], b["lcores"][0]
    va, vb = a["sirq"]["lcores"][0]["vectors"], b["sirq"]["lcores"][0]["vectors"]
    spent = lambda v, where: sum(x["time_ns_" + where] for x in v.values())
    inline = spent(vb, "inline") - spent(va, "inline")
    worker = spent(vb, "worker") - spent(va, "worker")
    out = {"seconds": secs, "received": rx, "received_pps": rx / secs,
           "softirq_share": (inline + worker) / 1e9 / secs,
           "worker_share": worker / 1e9 / secs,
           "net_rx_stalls": lb["net_rx_stalls"] - la["net_rx_stalls"],
           "net_rx_max_ns": lb["net_rx_max_ns"],
           "time_squeeze": lb["time_squeeze"] - la["time_squeeze"]}
    if b.get("app_load"):
        out["app_cpu_share"] = b["app_load"][0].get("cpu_share")
    if b.get("receiver") and a.get("receiver"):
        # l2fwd-sirq --receiver: what its reader threads got is the
        # receiver's row, as udp-sink's is the kernel's.
        tot = lambda rep, k: sum(x[k] for x in rep["receiver"])
        cpu = lambda rep, k: sum(x["cpu"][k] for x in rep["receiver"])
        out["forwarded_pps"] = out["received_pps"]
        out["received_pps"] = (tot(b, "received") - tot(a, "received")) / secs
        out["sk_drops_per_s"] = (tot(b, "drops") - tot(a, "drops")) / secs
        out["receiver_share"] = (cpu(b, "receiver_s") - cpu(a, "receiver_s")) / secs
        out["worker_share"] = (cpu(b, "sirqd_s") - cpu(a, "sirqd_s")) / secs
    return out


def flood_rows(runs, base):
    cases = {}
    for r in runs:
        if r["scenario"] != "flood":
            continue
        key = (r["system"], r.get("policy") or "", r["rate"], r.get("cost_ns"))
        row = {"loadavg": r["loadavg"], "sent_pps": r["flood"]["sent_pps"],
               "send_errors": r["flood"]["send_errors"]}
        if r["system"] == "kernel":
            s = r["sink"]
            secs = s["seconds"]
            sh = s["cpu_share"]
            row.update({
                "received_pps": s["received_pps"],
                "sk_drops_per_s": s["sk_drops"] / secs,
                "rcvbuf_errors_per_s": s["udp"]["RcvbufErrors"] / secs,
                "backlog_drops_per_s": s["softnet"]["backlog_drops"] / secs,
                "time_squeeze_per_s": s["softnet"]["time_squeeze"] / secs,
                "cpu_task": sh["user"] + sh["nice"] + sh["system"],
                "cpu_softirq": sh["softirq"] + sh["irq"],
                "cpu_idle": sh["idle"] + sh["iowait"],
                "ksoftirqd_share": s["ksoftirqd_share"],
                "receiver_share": s["receiver_share"],
            })
        else:
            w = libsirq_window(r, base)
            row.update({
                "policy": r.get("policy"),
                "received_pps": w["received_pps"],
                "lost_per_s": max(0.0, r["flood"]["sent_pps"] - w["received_pps"]),
                "cpu_softirq": w["softirq_share"],
                "ksoftirqd_share": w["worker_share"],
                "sk_drops_per_s": w.get("sk_drops_per_s"),
                "receiver_share": w.get("receiver_share"),
                "net_rx_stalls": w["net_rx_stalls"],
                "net_rx_max_ms": w["net_rx_max_ns"] / 1e6,
                "app_cpu_share": w.get("app_cpu_share"),
            })
        cases.setdefault(key, []).append(row)
    out = []
    for (system, policy, rate, cost), rows in sorted(
            cases.items(), key=lambda kv: (kv[0][0] != "kernel", kv[0][3] or 0,
                                           kv[0][2] == 0, kv[0][2], kv[0][1])):
        # The median run by packets received, whole: the figures of one
        # run belong together (what the receiver got depends on what the
        # sender managed to offer, which a busy CPU 0 changes per run).
        ranked = sorted(rows, key=lambda x: x["received_pps"])
        agg = dict(ranked[(len(ranked) - 1) // 2])
        agg.update({"system": system, "rate": rate, "cost_ns": cost, "runs": len(rows),
                    "received_pps_min": ranked[0]["received_pps"],
                    "received_pps_max": ranked[-1]["received_pps"],
                    "all": rows})
        out.append(agg)
    return out


def stall_rows(runs):
    rows = [r for r in runs if r["scenario"] == "stall"]
    if not rows:
        return None
    c = [r["client"] for r in rows]
    p = [r["probe"] for r in rows]
    tot = lambda xs, f: sum(f(x) for x in xs)
    return {
        "runs": len(rows),
        "loadavg_max": max(r["loadavg"] for r in rows),
        "requests": tot(c, lambda x: x["messages"]),
        "rtt_p50_us": med(x["rtt_us"]["p50"] for x in c),
        "rtt_p99_us": med(x["rtt_us"]["p99"] for x in c),
        "rtt_p999_us": med(x["rtt_us"]["p999"] for x in c),
        "rtt_max_us": max(x["rtt_us"]["max"] for x in c),
        "client_retrans_segs": tot(c, lambda x: x["tcp"]["RetransSegs"]),
        "client_out_segs": tot(c, lambda x: x["tcp"]["OutSegs"]),
        "client_rto_timeouts": tot(c, lambda x: x["tcp"]["TCPTimeouts"]),
        "client_loss_probes": tot(c, lambda x: x["tcp"]["TCPLossProbes"]),
        "server_retrans_segs": tot(rows, lambda r: r["server_snmp"]["RetransSegs"]),
        "server_out_segs": tot(rows, lambda r: r["server_snmp"]["OutSegs"]),
        "probe_p50_us": med(x["rtt_us"]["p50"] for x in p),
        "probe_p99_us": med(x["rtt_us"]["p99"] for x in p),
        "probe_p999_us": med(x["rtt_us"]["p999"] for x in p),
        "probe_max_us": max(x["rtt_us"]["max"] for x in p),
        "probe_slow_per_s": tot(p, lambda x: x["slow"]) / tot(p, lambda x: x["seconds"]),
        "probe_lost": tot(p, lambda x: x["lost"]),
        "hog_cpu_share": med(r["hog"]["cpu_share"] for r in rows),
        "hog": "threads=%d hold=%dms period=%dms%s" % (
            rows[0]["hog"]["threads"], rows[0]["hog"]["hold_ms"],
            rows[0]["hog"]["period_ms"], ",random" if rows[0]["hog"]["random"] else ""),
    }


def markdown(flood, stall):
    md = []
    if flood:
        md.append("**flood** (kernel-lab, the run with the median received of each case; CPU 1 split from /proc/stat "
                  "ticks, ksoftirqd/1 and receiver from their run time)\n")
        md.append("| system | rate | cost us | runs | sent kpps | received kpps | received "
                  "range | "
                  "socket drops kpps | backlog drops kpps | CPU1 task % | CPU1 softirq % | "
                  "CPU1 idle % | ksoftirqd/1 % | receiver run % | load |")
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in flood:
            name = "kernel" if r["system"] == "kernel" else \
                "libsirq `%s` (l2fwd-sirq)" % r.get("policy")
            rate = "flat out" if r["rate"] == 0 else "%g k" % (r["rate"] / 1e3)
            cost = "-" if r["cost_ns"] is None else "%g" % (r["cost_ns"] / 1e3)
            pct = lambda k: fmt(None if r.get(k) is None else 100 * r[k], ".1f")
            k = lambda key: fmt(None if r.get(key) is None else r[key] / 1e3, ".1f")
            drops = k("sk_drops_per_s") if r.get("sk_drops_per_s") is not None else \
                "(lost %s)" % k("lost_per_s")
            md.append("| %s | %s | %s | %d | %s | %s | %s-%s | %s | %s | %s | %s | %s | %s | %s "
                      "| %.2f |"
                      % (name, rate, cost, r["runs"], k("sent_pps"), k("received_pps"),
                         k("received_pps_min"), k("received_pps_max"), drops, k("backlog_drops_per_s"), pct("cpu_task"),
                         pct("cpu_softirq"), pct("cpu_idle"), pct("ksoftirqd_share"),
                         pct("receiver_share"), r["loadavg"]))
        md.append("")
        md.append("Every kernel run, by per-packet cost and the rate the sender reached:\n")
        md.append("| cost us | asked | sent kpps | received kpps | socket drops kpps | "
                  "CPU1 softirq % | ksoftirqd/1 % | receiver run % | load |")
        md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        every = [(r["cost_ns"], r["rate"], x) for r in flood if r["system"] == "kernel"
                 for x in r["all"]]
        for cost, rate, x in sorted(every, key=lambda t: (t[0], t[2]["sent_pps"])):
            md.append("| %g | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |"
                      % (cost / 1e3, "flat out" if rate == 0 else "%g k" % (rate / 1e3),
                         x["sent_pps"] / 1e3, x["received_pps"] / 1e3,
                         x["sk_drops_per_s"] / 1e3, 100 * x["cpu_softirq"],
                         100 * x["ksoftirqd_share"], 100 * x["receiver_share"],
                         x["loadavg"]))
        md.append("")
    if stall:
        s = stall
        md.append("**stall** (kernel-lab: kernel echo server and cpu-hog %s on CPU 1; "
                  "tcp-echo-client on CPU 0; %d runs)\n" % (s["hog"], s["runs"]))
        md.append("| requests | RTT p50 us | p99 us | p99.9 us | max us | client RetransSegs "
                  "| per 1000 segs | RTO timeouts | TLP | server RetransSegs | NET_RX probe "
                  "p50 us | p99 us | p99.9 us | max us | probes >= 8 ms /s | lost | hog CPU % "
                  "| load |")
        md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
                  "---:|---:|---:|---:|")
        md.append("| %d | %.0f | %.0f | %.0f | %.0f | %d | %.2f | %d | %d | %d | %.0f | %.0f "
                  "| %.0f | %.0f | %.2f | %d | %.1f | %.2f |"
                  % (s["requests"], s["rtt_p50_us"], s["rtt_p99_us"], s["rtt_p999_us"],
                     s["rtt_max_us"], s["client_retrans_segs"],
                     1000.0 * s["client_retrans_segs"] / max(1, s["client_out_segs"]),
                     s["client_rto_timeouts"], s["client_loss_probes"],
                     s["server_retrans_segs"], s["probe_p50_us"], s["probe_p99_us"],
                     s["probe_p999_us"], s["probe_max_us"], s["probe_slow_per_s"],
                     s["probe_lost"], 100 * s["hog_cpu_share"], s["loadavg_max"]))
        md.append("")
    return "\n".join(md) + "\n"


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--snmp-delta":
        print(json.dumps(snmp_delta(sys.argv[2], sys.argv[3])))
        return
    if len(sys.argv) != 4:
        sys.exit("usage: kernel_lab.py RUNS.jsonl OUT.json OUT.md | "
                 "--snmp-delta BEFORE AFTER")
    with open(sys.argv[1]) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    flood, stall = flood_rows(runs, os.path.dirname(sys.argv[1])), stall_rows(runs)
    with open(sys.argv[2], "w") as f:
        json.dump({"source": "kernel-lab", "kernel": platform.release(),
                   "flood": flood, "stall": stall, "runs": runs}, f, indent=1)
    with open(sys.argv[3], "w") as f:
        f.write(markdown(flood, stall))


if __name__ == "__main__":
    main()
