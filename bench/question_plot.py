#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The article's question, every mode against the four targets at once.

    question_plot.py [--out DIR] [--rr-quiet F] [--rr-stall F] LAB.json

LAB.json is bench/policy-lab.sh's out/policy-lab.json (the stall, flood
and mixed runs); the rr figures at 1,000 requests a second come from its
out/policy-lab-rr-quiet.json and out/policy-lab-rr-stall.json (by
default beside LAB.json). For every mode:

  stall   NET_RX stalls >= the threshold per second, pooled over every
          run (stalls over seconds), and the seconds pooled;
  flood   the application's CPU share and the socket's drops (share of
          NET_RX's packets), medians of the runs;
  mixed   the timer's p99 lateness and its skipped deadlines, medians;
  rr      CPU of a core and p99 at 1,000 requests a second, without and
          with the stall load.

Prints a Markdown table, each figure marked against its target, and
writes DIR/policy-lab-question.svg: per figure, each mode's value as a
multiple of its target (1 is the target; below 1 meets it, drawn up to
4), so the frontier shows as the modes' bars against one line. A mode
that wins every column has every bar at or below it. python3 stdlib only.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import policy_plots as pp  # noqa: E402

# (key, label, target, "le" or "ge", unit)
TARGETS = [
    ("stalls", "stalls/s", 0.1, "le", "/s"),
    ("app", "flood: app CPU %", 40.0, "ge", "%"),
    ("drops", "flood: socket drops %", 1.0, "le", "%"),
    ("late", "mixed: timer late p99 ms", 1.05, "le", " ms"),
    ("skipped", "mixed: skipped %", 1.0, "le", "%"),
    ("rr_cpu", "rr 1,000/s: CPU % (worse of quiet, stall)", 4.0, "le", "%"),
    ("rr_p99", "rr 1,000/s: p99 us (worse of quiet, stall)", 150.0, "le", " us"),
]
CAP = 4.0


def rr_runs(path):
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        d = json.load(f)
    runs = d if isinstance(d, list) else d.get("runs", [])
    out = {}
    for r in runs:
        if r.get("rate_pps") == 1000 and not r.get("tuning"):
            out.setdefault(r["variant"], []).append(r)
    return out


def med(vals):
    vals = [v for v in vals if v is not None]
    return pp.median(vals) if vals else None


def figures(lab, quiet, stall):
    by = {}
    for r in lab["runs"]:
        by.setdefault(r["mode"], {}).setdefault(r["scenario"], []).append(r)
    out = {}
    for mode, sc in by.items():
        f = {}
        st = sc.get("stall", [])
        secs = sum(r.get("duration_s", 0) for r in st)
        stalls = sum(r.get("stalls", round(r.get("stalls_per_s", 0) * r.get("duration_s", 0)))
                     for r in st)
        f["stalls"] = stalls / secs if secs else None
        f["stall_s"] = secs
        fl = sc.get("flood", [])
        f["app"] = med([pp.pct(pp.get(r, "app", "cpu_share")) for r in fl])
        f["drops"] = med([100 * pp.get(r, "receiver", "drops") / pp.get(r, "receiver", "processed")
                          if pp.get(r, "receiver", "processed") else None for r in fl])
        mx = sc.get("mixed", [])
        f["late"] = pp.ms(med([r.get("timer_late_p99_us") for r in mx]))
        f["skipped"] = med([pp.skipped_pct(r) for r in mx])
        q = [pp.pct(r.get("cpu_share")) for r in quiet.get(mode, [])]
        s = [pp.pct(r.get("cpu_share")) for r in stall.get(mode, [])]
        f["rr_cpu_q"], f["rr_cpu_s"] = med(q), med(s)
        f["rr_p99_q"] = med([r.get("p99_us") for r in quiet.get(mode, [])])
        f["rr_p99_s"] = med([r.get("p99_us") for r in stall.get(mode, [])])
        worse = lambda a, b: None if a is None and b is None else max(v for v in (a, b) if v is not None)
        f["rr_cpu"] = worse(f["rr_cpu_q"], f["rr_cpu_s"])
        f["rr_p99"] = worse(f["rr_p99_q"], f["rr_p99_s"])
        out[mode] = f
    return out


def ratio(v, target, how):
    if v is None:
        return None
    if how == "le":
        return v / target
    return target / v if v > 0 else CAP


def met(v, target, how):
    return v is not None and (v <= target if how == "le" else v >= target)


def fmt(v, digits=2):
    return "-" if v is None else f"{v:,.{digits}f}"


def table(figs, modes):
    head = ("| mode | stall: stalls/s (s pooled) | flood: app CPU % | flood: drops % | "
            "mixed: timer late p99 ms | mixed: skipped % | rr 1,000/s: CPU % quiet / stall | "
            "rr 1,000/s: p99 us quiet / stall | targets met |")
    lines = [head, "|" + "---|" * 9,
             "| target | <= 0.1 (>= 60 s) | >= 40 | <= 1 | <= 1.05 | <= 1 | <= 4 | <= 150 | 7 of 7 |"]
    for m in modes:
        f = figs[m]
        mark = {k: "" if met(f[k], t, h) else " x" for k, _, t, h, _ in TARGETS}
        n = sum(1 for k, _, t, h, _ in TARGETS if met(f[k], t, h))
        lines.append(
            f"| `{m}` | {fmt(f['stalls'])}{mark['stalls']} ({fmt(f['stall_s'], 0)}) | "
            f"{fmt(f['app'], 1)}{mark['app']} | {fmt(f['drops'], 1)}{mark['drops']} | "
            f"{fmt(f['late'])}{mark['late']} | {fmt(f['skipped'], 1)}{mark['skipped']} | "
            f"{fmt(f['rr_cpu_q'], 1)} / {fmt(f['rr_cpu_s'], 1)}{mark['rr_cpu']} | "
            f"{fmt(f['rr_p99_q'], 0)} / {fmt(f['rr_p99_s'], 0)}{mark['rr_p99']} | {n} of 7 |")
    return "\n".join(lines) + "\n\n`x`: the figure misses its target.\n"


def plot(figs, modes):
    cats = [label for _, label, _, _, _ in TARGETS]
    pp.W = 1400     # seven groups of up to a dozen bars
    series = {}
    for m in modes:
        series[m] = [None if ratio(figs[m][k], t, h) is None else min(ratio(figs[m][k], t, h), CAP)
                     for k, _, t, h, _ in TARGETS]
    out = pp.bars("The article's question: each figure / its target (<= 1 meets it; drawn up to 4)",
                  "figure / target", [c.split(" (")[0] for c in cats], series, "{:.2f}")
    # The target line at 1.
    vmax = max([v for s in series.values() for v in s if v is not None] + [0])
    _, top = pp.nice_ticks(vmax * 1.1 if vmax else 1)
    y = pp.H - pp.MB - (pp.H - pp.MB - pp.MT) * 1.0 / top
    line = (f'<line x1="{pp.ML}" y1="{y:.1f}" x2="{pp.W - pp.MR}" y2="{y:.1f}" '
            f'stroke="red" stroke-dasharray="6 3"/>\n')
    return out.replace("</svg>", line + "</svg>")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lab")
    ap.add_argument("--rr-quiet")
    ap.add_argument("--rr-stall")
    ap.add_argument("--out", default="out")
    a = ap.parse_args()
    base = os.path.dirname(os.path.abspath(a.lab))
    with open(a.lab) as f:
        lab = json.load(f)
    quiet = rr_runs(a.rr_quiet or os.path.join(base, "policy-lab-rr-quiet.json"))
    stall = rr_runs(a.rr_stall or os.path.join(base, "policy-lab-rr-stall.json"))
    figs = figures(lab, quiet, stall)
    modes = sorted(figs, key=lambda m: (pp.policy_key(m), m))
    print(table(figs, modes), end="")
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "policy-lab-question.svg")
    with open(path, "w") as f:
        f.write(plot(figs, modes))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
