#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The rr scenario of bench/policy-lab.sh: its runs, table, plot and claims.

    rr_lab.py LAB.json QUIET.json STALL.json [--md OUT.md] [--svg OUT.svg]

QUIET.json and STALL.json are bench/lowload-bench.sh's results (format in
bench/lowload_plot.py) for the rr variants without and with the stall
load on the forwarder's CPU. Each run becomes one object of LAB.json's
"runs" (the file is created, or its other runs are kept and its rr runs
replaced), with:

  scenario "rr"; mode: a policy or execution model (mainline, ksoftirqd,
  kicinski, deferred, and any other name l2fwd-sirq's --policy takes:
  a variant the lab has no other meaning for is one), threaded, busy,
  threaded-busy, defer or suspend; policy: the same as mode, for older readers;
  variant: the lab's name
  of the configuration (busy-nodefer is mode busy without deferral);
  load: low, mid or high (the offered rates, lowest first); stall_load:
  whether the stall load shared the CPU; rate_pps; rps (responses per
  second that came back); p50_us, p99_us, p999_us (request latency,
  lat-gen's TSC stamps); cpu_share (the forwarder's process, all its
  threads: dispatcher, sirqd, NAPI threads, the busy-polling
  application, of one CPU); stalls (requests of 8 ms or more); lost.

LAB.json's "rr_claims" is the IRQ-suspension authors' claim checked on
the runs without the stall load: at high load suspend uses no more CPU
than defer at equal or better throughput; at low load its p99 is below
defer's; full busy polling (mode busy: busy or busy-nodefer, or mode
threaded-busy: the NAPI threads' busy polling of Linux 6.19) is the
latency floor (the lowest p99 at every load), with its CPU beside it. Each holds, or not, with the figures.
"""

import argparse
import json
import math
import os

# Same directory: the percentile and number formatting of the rr runs'
# source, bench/lowload-bench.sh's results.
from lowload_plot import fmt, median

POLICIES = ("mainline", "ksoftirqd", "kicinski", "deferred", "rt", "pushdown",
            "pushdown-locked")
# variant -> mode; any other variant is a policy (bench/policy-lab.sh has
# checked that l2fwd-sirq takes it) and its own mode.
OTHER_MODES = {"threaded": "threaded", "threaded-busy": "threaded-busy",
               "defer": "defer", "busy": "busy",
               "busy-nodefer": "busy", "suspend": "suspend"}


class VariantModes(dict):
    def __missing__(self, variant):
        return variant


VARIANT_MODE = VariantModes({p: p for p in POLICIES})
VARIANT_MODE.update(OTHER_MODES)
ORDER = list(POLICIES) + ["threaded", "threaded-busy", "defer", "busy", "busy-nodefer", "suspend"]
# Modes that poll without sleeping under traffic: full busy polling.
FULL_BUSY = ("busy", "threaded-busy")
LOADS = ("low", "mid", "high")
# The load names for as many offered rates as a run had, lowest first.
LOAD_NAMES = {1: ("mid",), 2: ("low", "high"), 3: LOADS}
COLOURS = {"mainline": "#999999", "ksoftirqd": "#e69f00", "kicinski": "#009e73",
           "deferred": "#56b4e9", "threaded": "#cc79a7", "threaded-busy": "#aa4499",
           "defer": "#0072b2",
           "busy": "#d55e00", "busy-nodefer": "#f0e442", "suspend": "#000000",
           "rt": "#882255", "pushdown": "#44aa99", "pushdown-locked": "#117733"}
OTHER_COLOUR = "#555555"


def order(runs):
    """ORDER, then the variants it does not know, as they came."""
    out = list(ORDER)
    for r in runs:
        if r["variant"] not in out:
            out.append(r["variant"])
    return out


def load(path):
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)


def to_runs(quiet, stall):
    rates = sorted({r["rate_pps"] for r in quiet + stall})
    if len(rates) not in LOAD_NAMES:
        raise SystemExit(f"rr_lab.py: {len(rates)} rates; low, mid and high take 1 to 3")
    names = dict(zip(rates, LOAD_NAMES[len(rates)]))
    runs = []
    for stalled, group in ((False, quiet), (True, stall)):
        for r in group:
            v = r["variant"]
            window = r.get("window_s") or 0
            runs.append({
                "scenario": "rr", "mode": VARIANT_MODE[v], "policy": VARIANT_MODE[v],
                "variant": v,
                "load": names[r["rate_pps"]], "stall_load": stalled,
                "rate_pps": r["rate_pps"], "round": r.get("round", 1),
                "rps": round(r["received"] / window, 1) if window else None,
                "p50_us": r.get("p50_us"), "p99_us": r.get("p99_us"),
                "p999_us": r.get("p999_us"), "max_us": r.get("max_us"),
                "cpu_share": r.get("cpu_share"),
                "stalls": r.get("over_8ms"), "lost": r.get("lost"),
                "options": r.get("options"),
                "gen_cpu_share": r.get("gen_cpu_share"),
            })
    return runs


def med(runs, key):
    return median([r.get(key) for r in runs])


def cell(runs, variant, load, stalled):
    return [r for r in runs if r["variant"] == variant and r["load"] == load
            and r["stall_load"] == stalled]


def claims(runs):
    """The authors' three claims, on the runs without the stall load."""
    def fig(v, load, key):
        return med(cell(runs, v, load, False), key)

    out = []
    s_cpu, d_cpu = fig("suspend", "high", "cpu_share"), fig("defer", "high", "cpu_share")
    s_rps, d_rps = fig("suspend", "high", "rps"), fig("defer", "high", "rps")
    if None not in (s_cpu, d_cpu, s_rps, d_rps):
        out.append({
            "claim": "at high load, suspend uses no more CPU than defer, at equal or better throughput",
            "holds": s_cpu <= d_cpu and s_rps >= 0.99 * d_rps,
            "suspend_cpu_share": s_cpu, "defer_cpu_share": d_cpu,
            "suspend_rps": s_rps, "defer_rps": d_rps})
    s_p99, d_p99 = fig("suspend", "low", "p99_us"), fig("defer", "low", "p99_us")
    if None not in (s_p99, d_p99):
        out.append({
            "claim": "at low load, suspend's p99 is below defer's",
            "holds": s_p99 < d_p99, "suspend_p99_us": s_p99, "defer_p99_us": d_p99})
    # Full busy polling is the mode busy: with deferral (busy) or without
    # (busy-nodefer), an application that never sleeps under traffic; or
    # threaded-busy, the NAPI threads that never sleep (Linux 6.19).
    floor = {}
    for load in LOADS:
        p99 = {v: fig(v, load, "p99_us") for v in order(runs)}
        p99 = {v: x for v, x in p99.items() if x is not None}
        busy = [v for v in p99 if VARIANT_MODE[v] in FULL_BUSY]
        if busy:
            lowest = min(p99, key=p99.get)
            floor[load] = {"lowest": lowest, "lowest_p99_us": p99[lowest]}
            for v in busy:
                floor[load][v + "_p99_us"] = p99[v]
                floor[load][v + "_cpu_share"] = fig(v, load, "cpu_share")
    if floor:
        out.append({
            "claim": "full busy polling (mode busy or threaded-busy) is the latency floor (lowest p99 at every load), at its CPU cost",
            "holds": all(VARIANT_MODE[f["lowest"]] in FULL_BUSY for f in floor.values()),
            "per_load": floor})
    return out


def markdown(runs, cl):
    lines = []
    for stalled in (False, True):
        lines.append("### " + ("With the stall load (cpu-hog on the CPU)" if stalled
                               else "Without other load"))
        lines.append("")
        lines.append("| mode | load | rate | rps | p50 us | p99 us | p99.9 us | CPU % | stalls >= 8 ms |")
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for v in order(runs):
            for load in LOADS:
                rs = cell(runs, v, load, stalled)
                if not rs:
                    continue
                cpu = med(rs, "cpu_share")
                lines.append(
                    f"| {v} | {load} | {rs[0]['rate_pps']} | {fmt(med(rs, 'rps'), '{:.0f}')} | "
                    f"{fmt(med(rs, 'p50_us'), '{:.1f}')} | {fmt(med(rs, 'p99_us'), '{:.1f}')} | "
                    f"{fmt(med(rs, 'p999_us'), '{:.1f}')} | "
                    f"{fmt(None if cpu is None else 100 * cpu, '{:.1f}')} | "
                    f"{sum(r['stalls'] or 0 for r in rs)} |")
        lines.append("")
    lines.append("### The IRQ-suspension authors' claims (runs without other load)")
    lines.append("")
    for c in cl:
        extra = {k: v for k, v in c.items() if k not in ("claim", "holds")}
        lines.append(f"- {c['claim']}: **{'holds' if c['holds'] else 'does not hold'}** "
                     f"({json.dumps(extra)})")
    return "\n".join(lines) + "\n"


def svg(runs):
    """Two panels per load kind: p99 and CPU against the offered load."""
    w, h, pad = 900, 620, 60
    pw, ph = (w - 3 * pad) / 2, (h - 3 * pad) / 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    panels = [(False, "p99_us", "p99 latency, us (log)"), (False, "cpu_share", "CPU of the forwarder, %"),
              (True, "p99_us", "p99 latency, us (log), stall load"),
              (True, "cpu_share", "CPU, %, stall load")]
    for i, (stalled, key, title) in enumerate(panels):
        ox = pad + (i % 2) * (pw + pad)
        oy = pad + (i // 2) * (ph + pad)
        vals = [r[key] for r in runs if r["stall_load"] == stalled and r.get(key)]
        if not vals:
            continue
        logy = key == "p99_us"
        lo = min(vals) if logy else 0
        hi = max(vals)
        if key == "cpu_share":
            hi = max(1.0, hi)

        def py(v):
            if logy:
                a, b = math.log10(max(lo, 1e-3)), math.log10(max(hi, lo * 10))
                return oy + ph - ph * (math.log10(max(v, 1e-3)) - a) / (b - a or 1)
            return oy + ph - ph * v / hi

        def px(j):
            return ox + pw * (j + 0.5) / len(LOADS)
        out.append(f'<rect x="{ox}" y="{oy}" width="{pw}" height="{ph}" fill="none" stroke="#ccc"/>')
        out.append(f'<text x="{ox}" y="{oy - 8}">{title}</text>')
        for j, load in enumerate(LOADS):
            out.append(f'<text x="{px(j) - 10}" y="{oy + ph + 14}">{load}</text>')
        for tick in ((lo, hi) if logy else (0, hi / 2, hi)):
            lab = f"{tick:.0f}" if logy else f"{100 * tick:.0f}"
            out.append(f'<text x="{ox - 40}" y="{py(tick) + 4}">{lab}</text>')
        for v in order(runs):
            pts = []
            for j, load in enumerate(LOADS):
                m = med(cell(runs, v, load, stalled), key)
                if m is not None:
                    pts.append(f"{px(j):.1f},{py(m):.1f}")
            if pts:
                dash = ' stroke-dasharray="4 3"' if v not in OTHER_MODES else ""
                out.append(f'<polyline points="{" ".join(pts)}" fill="none" '
                           f'stroke="{COLOURS.get(v, OTHER_COLOUR)}" stroke-width="2"{dash}/>')
    x = pad
    for v in [v for v in order(runs) if any(r["variant"] == v for r in runs)]:
        out.append(f'<line x1="{x}" y1="{h - 15}" x2="{x + 18}" y2="{h - 15}" '
                   f'stroke="{COLOURS.get(v, OTHER_COLOUR)}" stroke-width="3"/>')
        out.append(f'<text x="{x + 22}" y="{h - 11}">{v}</text>')
        x += 34 + 7 * len(v)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lab")
    ap.add_argument("quiet")
    ap.add_argument("stall")
    ap.add_argument("--md")
    ap.add_argument("--svg")
    a = ap.parse_args()
    runs = to_runs(load(a.quiet), load(a.stall))
    if not runs:
        raise SystemExit("rr_lab.py: no rr runs")
    lab = load(a.lab) if os.path.exists(a.lab) else {}
    if isinstance(lab, list):
        lab = {"runs": lab}
    lab["runs"] = [r for r in lab.get("runs", []) if r.get("scenario") != "rr"] + runs
    cl = claims(runs)
    lab["rr_claims"] = cl
    with open(a.lab, "w") as f:
        json.dump(lab, f, indent=1)
    md = markdown(runs, cl)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    if a.svg:
        with open(a.svg, "w") as f:
            f.write(svg(runs))
    print(md)


if __name__ == "__main__":
    main()
