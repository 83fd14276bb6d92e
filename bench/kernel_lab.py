#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables of bench/kernel-lab.sh: runs.jsonl -> out/kernel-lab.json and .md.

    kernel_lab.py RUNS.jsonl OUT.json OUT.md
    kernel_lab.py --snmp-delta BEFORE AFTER   (the "Proto name value" lines
                                               of kernel-lab.sh's snmp())
    kernel_lab.py --kernel-check KERNEL RELEASE CONFIG|- PS
                                              (kernel.json's "config" and
                                               "threads"; exit 1 when the
                                               config does not match the name)

Flood: of the repeats of a case, the run with the median packets received
is shown whole, with the range received; every run is also listed, sorted
by the rate the sender reached. Stall: medians of percentiles, maxima of
maxima, sums of counts. Flood: per (system, rate, cost) the sender's and the
receiver's packet rates, the socket's drops and the split of the
receiver's CPU. Stall: the echo client's RTT and retransmissions, the
server side's retransmissions, and the ICMP probe's NET_RX waits.

libsirq's rows come from two reports of the app (SIGUSR1, start and end of
the window, --libsirq-window): its ports' Rx is what NET_RX took in (the
veth end's, or the net_null flood's two ports), its receiver's count what
the application read. Their "softirq" is the time libsirq's handlers ran
(inline and in sirqd, from the report's per-vector times) and their
"ksoftirqd" is sirqd's part.

Summary: per kernel, scenario, system and policy the median of the
scenario's figure (stalls_per_s, received_pps, retrans_segs), and the
claims of issue 20 checked on them (--calibrate: the kernel's costs a
datagram, for libsirq's receiver). Each kernel against its model
(KERNEL_POLICY: 6.1-rt `rt`, 7.x-rt `pushdown`, 7.x `mainline`, issue
28): within 2x on stalls/s and received pps, else a "deviations" row with
the measured effect; a policy that ran alone beside a kernel stands in
for a model not run, and says so.

Kernels (--kernel-check): the config of each kernel (PREEMPT_RT,
PREEMPT_RT_NEEDS_BH_LOCK, whether the softirq BH lock is held: always on
RT before 6.18, after it only with NEEDS_BH_LOCK) against what its name
promises (KERNEL_EXPECT), and the softirq threads ps shows.
"""
import json
import os
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


def libsirq_window(start, end):
    """What an app did between two of its reports (files)."""
    with open(start) as f:
        a = json.load(f)
    with open(end) as f:
        b = json.load(f)
    secs = b["elapsed_s"] - a["elapsed_s"]
    # Every port's input: the veth end's, or both net_null ports'.
    rx = sum(p["rx"] for p in b["ports"]) - sum(p["rx"] for p in a["ports"]) \
        if "ports" in b else None
    la, lb = a["lcores"][0], b["lcores"][0]
    va, vb = a["sirq"]["lcores"][0]["vectors"], b["sirq"]["lcores"][0]["vectors"]
    spent = lambda v, where: sum(x["time_ns_" + where] for x in v.values())
    inline = spent(vb, "inline") - spent(va, "inline")
    worker = spent(vb, "worker") - spent(va, "worker")
    out = {"seconds": secs, "received": rx, "received_pps": None if rx is None else rx / secs,
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


def flood_rows(runs):
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
            w = r["window"]
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
    rows = [r for r in runs if r["scenario"] == "stall" and r["system"] == "kernel"]
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


def calibrate(sink_json):
    """The kernel's cost per datagram on the receiving CPU under a flood,
    from udp-sink's report: NET_RX's (the CPU's softirq time over the
    packets its backlog processed) and the receiver's (the CPU's task time
    over the datagrams it read), in ns. Per-packet costs fall as a flood
    batches them (one IPI, one softirq entry, one recvmmsg() for many), so
    they are taken under the flood itself, not at a rate the kernel keeps
    up with."""
    with open(sink_json) as f:
        s = json.load(f)
    secs, sh = s["seconds"], s["cpu_share"]
    processed, received = s["softnet"]["processed"], s["received"]
    if processed < 1000 or received < 1000:
        sys.exit("kernel_lab: calibration run too small (%d processed, %d received)"
                 % (processed, received))
    proto = (sh["softirq"] + sh["irq"]) * secs / processed * 1e9
    app = (sh["user"] + sh["nice"] + sh["system"]) * secs / received * 1e9
    return max(100, round(proto)), max(100, round(app))


KERNEL_POLICY = {"6.1": "ksoftirqd", "6.1+kicinski": "kicinski", "6.1+mainline": "mainline",
                 "host": "mainline", "6.1-rt": "rt", "7.x-rt": "pushdown", "7.x": "mainline"}
METRIC = {"stall": "stalls_per_s", "flood": "received_pps", "retrans": "retrans_segs"}
KERNEL_ORDER = ["6.1", "6.1+kicinski", "6.1+mainline", "6.1-rt", "7.x", "7.x-rt", "host"]
POLICY_ORDER = ["ksoftirqd", "kicinski", "mainline", "deferred", "rt", "pushdown"]
# The kernels whose model is compared on these figures, with a deviations
# row where it is not within 2x (issue 28).
MODEL_METRICS = ("stall", "flood")


def parse_config(text):
    """A kernel .config: {"CONFIG_X": "y" | "m" | "n" | value}, "n" for
    "# CONFIG_X is not set"; "#version" the version of its header."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("CONFIG_") and "=" in line:
            k, v = line.split("=", 1)
            out[k] = v.strip('"')
        elif line.startswith("# CONFIG_") and line.endswith(" is not set"):
            out[line[2:-len(" is not set")]] = "n"
        elif line.startswith("# Linux/") and line.endswith("Kernel Configuration"):
            out["#version"] = line.split()[2]
    return out


def version_tuple(release):
    """(major, minor) of a release or version string: "7.3.4+deb13-rt-amd64"
    -> (7, 3); None if it does not start with one."""
    parts = release.split("-")[0].split("+")[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def config_facts(cfg, release):
    """What a config says of softirq handling on PREEMPT_RT."""
    rt = cfg.get("CONFIG_PREEMPT_RT") == "y"
    needs = cfg.get("CONFIG_PREEMPT_RT_NEEDS_BH_LOCK")
    ver = version_tuple(release)
    # Before 6.18 a PREEMPT_RT kernel always serialises BH by the per-CPU
    # lock; from 6.18 only with PREEMPT_RT_NEEDS_BH_LOCK.
    bh_lock = rt and (needs == "y" or (ver is not None and ver < (6, 18)))
    model = next((m for m in ("PREEMPT_RT", "PREEMPT_LAZY", "PREEMPT", "PREEMPT_VOLUNTARY",
                              "PREEMPT_NONE") if cfg.get("CONFIG_" + m) == "y"), None)
    return {"preempt_rt": rt,
            "preempt_rt_needs_bh_lock": None if needs is None else needs == "y",
            "bh_lock": bh_lock, "preempt": model,
            "preempt_dynamic": cfg.get("CONFIG_PREEMPT_DYNAMIC") == "y",
            "hz": int(cfg["CONFIG_HZ"]) if cfg.get("CONFIG_HZ", "").isdigit() else None,
            "config_version": cfg.get("#version")}


# What a kernel's name promises: its version, PREEMPT_RT, the BH lock.
KERNEL_EXPECT = {
    "6.1": {"version": (6, 1), "rt": False},
    "6.1+kicinski": {"version": (6, 1), "rt": False},
    "6.1+mainline": {"version": (6, 1), "rt": False},
    "6.1-rt": {"version": (6, 1), "rt": True, "bh_lock": True},
    "7.x-rt": {"major": 7, "rt": True, "bh_lock": False},
    "7.x": {"major": 7, "rt": False},
}


def config_check(kernel, release, config_text):
    """The config facts of a kernel and the ways it does not match its name
    (empty when it does). config_text None: no config was found."""
    exp = KERNEL_EXPECT.get(kernel)
    errors = []
    if config_text is None:
        if exp is not None and (exp["rt"] or "bh_lock" in exp):
            errors.append("%s (%s): no kernel config to check (neither /proc/config.gz nor "
                          "the config-<release> of its package)" % (kernel, release))
        return None, errors
    cfg = parse_config(config_text)
    facts = config_facts(cfg, release)
    if exp is None:
        return facts, errors
    ver = version_tuple(release)
    if "version" in exp and ver != exp["version"]:
        errors.append("%s runs %s, not Linux %d.%d" % ((kernel, release) + exp["version"]))
    if "major" in exp and (ver is None or ver[0] != exp["major"]):
        errors.append("%s runs %s, not Linux %d.x" % (kernel, release, exp["major"]))
    cv = facts["config_version"] and version_tuple(facts["config_version"])
    if cv and ver and cv != ver:
        errors.append("%s: the config is of Linux %s, the kernel %s" % (
            kernel, facts["config_version"], release))
    if exp["rt"] and not facts["preempt_rt"]:
        errors.append("%s (%s) without CONFIG_PREEMPT_RT=y" % (kernel, release))
    if not exp["rt"] and facts["preempt_rt"]:
        errors.append("%s (%s) has CONFIG_PREEMPT_RT=y" % (kernel, release))
    if exp["rt"] and facts["preempt_rt"] and "bh_lock" in exp and \
            facts["bh_lock"] != exp["bh_lock"]:
        errors.append("%s (%s): the softirq BH lock is %s (CONFIG_PREEMPT_RT_NEEDS_BH_LOCK %s), "
                      "its model (%s) takes it %s" % (
                          kernel, release, "held" if facts["bh_lock"] else "dropped",
                          cfg.get("CONFIG_PREEMPT_RT_NEEDS_BH_LOCK", "absent"),
                          KERNEL_POLICY.get(kernel), "held" if exp["bh_lock"] else "dropped"))
    return facts, errors


THREAD_KINDS = (("ksoftirqd", "ksoftirqd/"), ("ktimers", "ktimers/"),
                ("backlog_napi", "backlog_napi/"), ("napi", "napi/"), ("irq", "irq/"))


def softirq_threads(ps_text):
    """The threads that run softirqs, from `ps -eo comm,cls,rtprio`: per
    kind (ksoftirqd/N, ktimers/N, backlog_napi/N, napi/..., irq/N-...) the
    names and scheduling ("TS", "FF 1", ...)."""
    out = {k: [] for k, _ in THREAD_KINDS}
    for line in ps_text.splitlines():
        f = line.split()
        if not f or f[0] == "COMMAND":
            continue
        for kind, prefix in THREAD_KINDS:
            if f[0].startswith(prefix):
                sched = f[1] if len(f) > 1 else "?"
                if len(f) > 2 and f[2] != "-":
                    sched += " " + f[2]
                out[kind].append({"name": f[0], "sched": sched})
                break
    return out


def summary(runs):
    """Per kernel, scenario, system and policy: the median of the scenario's
    figure over the runs, with its range and the release it ran on."""
    cases = {}
    for r in runs:
        m = METRIC[r["scenario"]]
        if r.get(m) is None:
            continue
        key = (r["kernel"], r["scenario"], r["system"], r.get("policy"))
        cases.setdefault(key, {"release": r["release"], "values": []})["values"].append(r[m])
    out = []
    for (k, sc, sy, po), c in cases.items():
        v = c["values"]
        out.append({"kernel": k, "release": c["release"], "scenario": sc, "system": sy,
                    "policy": po, "metric": METRIC[sc], "runs": len(v),
                    "median": statistics.median(v), "min": min(v), "max": max(v)})
    order = lambda x: (KERNEL_ORDER.index(x["kernel"]) if x["kernel"] in KERNEL_ORDER else 9,
                       list(METRIC).index(x["scenario"]), x["system"] != "kernel",
                       POLICY_ORDER.index(x["policy"]) if x["policy"] in POLICY_ORDER else 9)
    return sorted(out, key=order)


def find(summ, kernel, scenario, system, policy=None):
    for x in summ:
        if (x["kernel"], x["scenario"], x["system"]) == (kernel, scenario, system) and \
                (system == "kernel" or x["policy"] == policy):
            return x["median"]
    return None


def ratio(a, b):
    if a is None or b is None:
        return None
    if b == 0:
        return float("inf") if a > 0 else None
    return a / b


def within_2x(scenario, kv, lv):
    """A model's figure against its kernel's: within a factor 2 either way
    (both 0 included); stalls below 0.1/s on both sides count as equal."""
    hi, lo = max(kv, lv), min(kv, lv)
    return hi == 0 or (lo > 0 and hi / lo <= 2) or (scenario == "stall" and hi < 0.1)


def model_comparisons(summ):
    """Each kernel against its model in libsirq (KERNEL_POLICY), per
    scenario. Where the model's policy did not run but one other policy
    did on that kernel (the model not in this build yet: KLAB_POLICY
    named another), that one stands in, and says so."""
    out = []
    for kern, model in KERNEL_POLICY.items():
        for sc in METRIC:
            kv = find(summ, kern, sc, "kernel")
            if kv is None:
                continue
            pol, stand_in = model, False
            lv = find(summ, kern, sc, "libsirq", model)
            if lv is None:
                ran = [x["policy"] for x in summ if (x["kernel"], x["scenario"], x["system"]) ==
                       (kern, sc, "libsirq")]
                if len(ran) != 1:
                    continue
                pol, stand_in = ran[0], True
                lv = find(summ, kern, sc, "libsirq", pol)
            out.append({"kernel": kern, "model": model, "policy": pol, "stand_in": stand_in,
                        "scenario": sc, "metric": METRIC[sc], "kernel_value": kv,
                        "libsirq_value": lv, "ratio": ratio(lv, kv),
                        "within_2x": within_2x(sc, kv, lv)})
    return out


UNIT = {"stall": ("stalls/s", "%.2f"), "flood": ("received pps", "%.0f"),
        "retrans": ("RetransSegs", "%g")}


def deviations(summ):
    """The rows where a model is not within 2x of its kernel on stalls/s or
    received pps, each with the measured effect."""
    out = []
    for c in model_comparisons(summ):
        if c["within_2x"] or c["scenario"] not in MODEL_METRICS:
            continue
        unit, f = UNIT[c["scenario"]]
        r = c["ratio"]
        times = "all of it" if r == float("inf") else "%.2fx" % r
        who = "libsirq `%s`" % c["policy"] + (" (stand-in for `%s`)" % c["model"]
                                              if c["stand_in"] else "")
        effect = "%s has %s the kernel's %s (kernel %s, libsirq %s)" % (
            who, times, unit, f % c["kernel_value"], f % c["libsirq_value"])
        if r == float("inf"):
            effect = "%s has %s %s where the kernel has none" % (
                who, f % c["libsirq_value"], unit)
        elif c["libsirq_value"] == 0:
            effect = "%s has no %s where the kernel has %s" % (who, unit, f % c["kernel_value"])
        d = dict(c)
        d["ratio"] = None if r == float("inf") else r
        d["effect"] = effect
        out.append(d)
    return out


def checks(summ):
    """The issue's claims, each with the figures it rests on; None where a
    figure is missing (not run)."""
    out = []

    def claim(name, ok, detail):
        out.append({"claim": name, "holds": ok, "detail": detail})

    k = lambda kern, sc: find(summ, kern, sc, "kernel")
    s61, skic = k("6.1", "stall"), k("6.1+kicinski", "stall")
    if s61 is not None and skic is not None:
        claim("6.1 stalls >= 0.5/s and 6.1+kicinski >= 10x less often",
              s61 >= 0.5 and (skic == 0 or s61 / skic >= 10),
              "6.1 %.2f/s, 6.1+kicinski %.2f/s" % (s61, skic))
    r61, rkic = k("6.1", "retrans"), k("6.1+kicinski", "retrans")
    if r61 is not None and rkic is not None:
        claim("retransmits >= 30 % fewer with the patches",
              r61 > 0 and rkic <= 0.7 * r61, "6.1 %g, 6.1+kicinski %g" % (r61, rkic))
    f61, fml = k("6.1", "flood"), k("6.1+mainline", "flood")
    if f61 is not None and fml is not None:
        claim("flood: 6.1's receiver gets >= 10x 6.1+mainline's",
              f61 > 0 and (fml == 0 or f61 / fml >= 10),
              "6.1 %.0f pps, 6.1+mainline %.0f pps" % (f61, fml))
    for c in model_comparisons(summ):
        name = c["policy"] if not c["stand_in"] else "%s (stand-in for %s)" % (
            c["policy"], c["model"])
        claim("%s: libsirq %s within 2x of the kernel (%s)" % (c["kernel"], name, c["scenario"]),
              c["within_2x"], "kernel %g, libsirq %g" % (c["kernel_value"], c["libsirq_value"]))
    for kern in KERNEL_POLICY:
        l = lambda sc, pol: find(summ, kern, sc, "libsirq", pol)
        for sc in ("stall", "retrans"):
            a, b = l(sc, "ksoftirqd"), l(sc, "kicinski")
            if a is not None and b is not None:
                claim("%s: libsirq kicinski below ksoftirqd (%s)" % (kern, sc), b < a or a == b == 0,
                      "ksoftirqd %g, kicinski %g" % (a, b))
        a, b = l("flood", "ksoftirqd"), l("flood", "mainline")
        if a is not None and b is not None:
            claim("%s: libsirq ksoftirqd receives more than mainline under the flood" % kern,
                  a > b, "ksoftirqd %.0f pps, mainline %.0f pps (%s)" % (
                      a, b, "x%.1f" % (a / b) if b else "mainline 0"))
    return out


def retrans_detail(runs):
    """Per kernel, system and policy: the parts of the client's
    retransmissions (medians over the runs), and for the kernel the
    loaded side's own (the server's RetransSegs: the seed's "outgoing")."""
    cases = {}
    for r in runs:
        if r["scenario"] != "retrans":
            continue
        t = r["client"]["tcp"]
        row = {"retrans_segs": t["RetransSegs"], "loss_probes": t["TCPLossProbes"],
               "timeouts": t["TCPTimeouts"], "out_segs": t["OutSegs"],
               "server_retrans_segs": r["server_snmp"]["RetransSegs"] if "server_snmp" in r
               else None}
        cases.setdefault((r["kernel"], r["system"], r.get("policy")), []).append(row)
    out = []
    for (k, sy, po), rows in cases.items():
        agg = {"kernel": k, "system": sy, "policy": po, "runs": len(rows)}
        for f in rows[0]:
            agg[f] = med(x[f] for x in rows)
        out.append(agg)
    order = lambda x: (KERNEL_ORDER.index(x["kernel"]) if x["kernel"] in KERNEL_ORDER else 9,
                       x["system"] != "kernel",
                       POLICY_ORDER.index(x["policy"]) if x["policy"] in POLICY_ORDER else 9)
    return sorted(out, key=order)


def summary_markdown(summ, claims, retrans=None, devs=None, kernels=None):
    md = ["**Against the kernels** (kernel-lab: the median of the runs, range in brackets; "
          "stall: NET_RX waits >= 8 ms a second; flood: datagrams the application read a "
          "second; retrans: the client's TcpRetransSegs in a run)\n"]
    md.append("| kernel | release | scenario | kernel | libsirq " + " | ".join(POLICY_ORDER) + " |")
    md.append("|---|---|---|--:|" + "--:|" * len(POLICY_ORDER))
    seen = []
    for x in summ:
        if (x["kernel"], x["scenario"]) not in seen:
            seen.append((x["kernel"], x["scenario"]))
    for kern, sc in seen:
        rel = next(x["release"] for x in summ if (x["kernel"], x["scenario"]) == (kern, sc))
        cells = []
        for sy, po in [("kernel", None)] + [("libsirq", p) for p in POLICY_ORDER]:
            x = next((x for x in summ if (x["kernel"], x["scenario"], x["system"]) == (kern, sc, sy)
                      and (sy == "kernel" or x["policy"] == po)), None)
            if x is None:
                cells.append("")
                continue
            f = "%.0f" if sc == "flood" else ("%.2f" if sc == "stall" else "%g")
            cell = f % x["median"]
            if x["runs"] > 1:
                cell += " (" + f % x["min"] + "-" + f % x["max"] + ")"
            if sy == "libsirq" and KERNEL_POLICY.get(kern) == po:
                cell = "**" + cell + "**"
            cells.append(cell)
        md.append("| %s | %s | %s | %s |" % (kern, rel, sc, " | ".join(cells)))
    md.append("\nIn bold: the policy of the row's kernel.\n")
    if retrans:
        md.append("**retrans, in parts** (medians over the runs: the client's TcpRetransSegs, its "
                  "tail loss probes and timeouts among them; the loaded side's own RetransSegs, "
                  "the kernel's only: lwIP's are not counted)\n")
        md.append("| kernel | system | runs | client RetransSegs | of which TLP | RTO timeouts "
                  "| per 1000 segs | server RetransSegs |")
        md.append("|---|---|--:|--:|--:|--:|--:|--:|")
        for x in retrans:
            name = "kernel" if x["system"] == "kernel" else "libsirq `%s`" % x["policy"]
            md.append("| %s | %s | %d | %g | %g | %g | %.1f | %s |" % (
                x["kernel"], name, x["runs"], x["retrans_segs"], x["loss_probes"], x["timeouts"],
                1000.0 * x["retrans_segs"] / max(1, x["out_segs"]),
                "-" if x["server_retrans_segs"] is None else "%g" % x["server_retrans_segs"]))
        md.append("")
    if claims:
        md.append("| claim | holds | figures |")
        md.append("|---|---|---|")
        for c in claims:
            md.append("| %s | %s | %s |" % (c["claim"], "yes" if c["holds"] else "**no**",
                                             c["detail"]))
        md.append("")
    if devs:
        md.append("**Deviations** (a model not within 2x of its kernel on stalls/s or received "
                  "pps: the measured effect)\n")
        md.append("| kernel | model | ran | scenario | kernel | libsirq | effect |")
        md.append("|---|---|---|---|--:|--:|---|")
        for d in devs:
            unit, f = UNIT[d["scenario"]]
            md.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                d["kernel"], d["model"], d["policy"] + (" (stand-in)" if d["stand_in"] else ""),
                d["scenario"], f % d["kernel_value"], f % d["libsirq_value"], d["effect"]))
        md.append("")
    if kernels:
        md.append("**Kernels** (config: the package's config-<release> or /proc/config.gz; "
                  "threads: `ps` in the guest at boot)\n")
        md.append("| kernel | release | preempt | PREEMPT_RT | NEEDS_BH_LOCK | BH lock | "
                  "ksoftirqd | ktimers | backlog_napi | napi | irq threads |")
        md.append("|---|---|---|---|---|---|--:|--:|--:|--:|--:|")
        yn = lambda v: "-" if v is None else ("y" if v else "n")
        for kx in kernels:
            c = kx.get("config") or {}
            t = kx.get("threads") or {}
            n = lambda kind: "-" if kind not in t else "%d" % len(t[kind])
            md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                kx["kernel"], kx["release"], c.get("preempt") or "-", yn(c.get("preempt_rt")),
                yn(c.get("preempt_rt_needs_bh_lock")), yn(c.get("bh_lock")), n("ksoftirqd"),
                n("ktimers"), n("backlog_napi"), n("napi"), n("irq")))
        md.append("")
    return "\n".join(md) + "\n"


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--snmp-delta":
        print(json.dumps(snmp_delta(sys.argv[2], sys.argv[3])))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--calibrate":
        print("%d %d" % calibrate(sys.argv[2]))
        return
    if len(sys.argv) == 6 and sys.argv[1] == "--kernel-check":
        # KERNEL RELEASE CONFIG|- PS-OUTPUT: the "config" and "threads" of
        # kernel.json on stdout; exit 1 with the reasons when the config
        # does not match the kernel's name.
        kern, release, conf, ps = sys.argv[2:]
        text = None
        if conf != "-":
            with open(conf) as f:
                text = f.read()
        facts, errors = config_check(kern, release, text)
        with open(ps) as f:
            threads = softirq_threads(f.read())
        print(json.dumps({"config_file": None if conf == "-" else conf, "config": facts,
                          "threads": threads}))
        if errors:
            sys.exit("kernel_lab: " + "; ".join(errors))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--libsirq-window":
        print(json.dumps(libsirq_window(sys.argv[2], sys.argv[3])))
        return
    if len(sys.argv) != 4:
        sys.exit("usage: kernel_lab.py RUNS.jsonl OUT.json OUT.md | "
                 "--snmp-delta BEFORE AFTER | --libsirq-window START END")
    with open(sys.argv[1]) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    summ = summary(runs)
    claims = checks(summ)
    devs = deviations(summ)
    retrans = retrans_detail(runs)
    kernels = []
    kfile = os.path.join(os.path.dirname(sys.argv[1]), "kernels.jsonl")
    if os.path.exists(kfile):
        with open(kfile) as kf:
            kernels = [json.loads(line) for line in kf if line.strip()]
    md = [summary_markdown(summ, claims, retrans, devs, kernels)]
    detail = {}
    for kern in sorted({r["kernel"] for r in runs}, key=lambda k: KERNEL_ORDER.index(k)
                       if k in KERNEL_ORDER else 9):
        mine = [r for r in runs if r["kernel"] == kern]
        flood, stall = flood_rows(mine), stall_rows(mine)
        detail[kern] = {"flood": flood, "stall": stall}
        if flood or stall:
            md.append("### %s (%s)\n" % (kern, mine[0]["release"]))
            md.append(markdown(flood, stall))
    with open(sys.argv[2], "w") as f:
        json.dump({"source": "kernel-lab", "kernels": kernels, "summary": summ,
                   "retrans_detail": retrans, "claims": claims, "deviations": devs,
                   "detail": detail, "runs": runs}, f, indent=1)
    with open(sys.argv[3], "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
