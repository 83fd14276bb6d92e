#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Markdown tables and SVG plots of policy runs (python3 stdlib only).

    policy_plots.py [--out DIR] [--prefix NAME] RUNS.json...

Writes DIR/NAME-tables.md (also printed) and, per scenario and tick_hz:
  NAME-<scenario>[-hz<N>]-cdf.svg    NET_RX latency CDF per policy
  NAME-stall[-hz<N>]-stalls.svg      stalls >= threshold per second
  NAME-flood[-hz<N>]-app.svg         application CPU share (flood,
                                     flood-burn, mixed)
  NAME-mixed[-hz<N>]-probe.svg       TIMER and TASKLET p99, the timer's
                                     lateness, per mode (runs with the probe)
  NAME-<scenario>[-hz<N>]-rx.svg     packets the application received per
                                     second, where runs have app.rx_pps
and, when the runs hold several tick_hz values:
  NAME-<scenario>-tickhz.svg         stalls/s (stall) or app share (flood)
                                     per policy and tick_hz
DIR defaults to out/, NAME to the first file's "source".

Input: one JSON object per file, as sirq-sim --json writes it and as a
scenario runner on the real scheduler can write it by hand:

  {"source": "sirq-sim",            free text, names the outputs
   "stall_threshold_ms": 8,
   "runs": [                        one object per run; repeats of the same
     {"scenario": "stall",          (scenario, tick_hz, label, mode) are
      "mode": "kicinski",           reduced to their median; the policy or
                                    execution model ("policy", the older
                                    name, is read when "mode" is missing)
      "tick_hz": 0,                 optional, default 0
      "label": "irq mode",          optional, splits groups
      "duration_s": 10,
      "stalls_per_s": 0.1,          NET_RX raise-to-run >= threshold, per s
      "latency": {"NET_RX": {"p50_us": .., "p99_us": .., "p999_us": ..,
                             "max_us": .., "hist_ns": [[upper_ns, count], ..]},
                  "NET_TX": {...}}, hist_ns optional (no CDF without it);
                                    any key may be missing
      "app": {"cpu_share": 0.43, "work_units_per_s": 4.3e5,
              "rx_pps": 4.1e5},     a receiving application (optional)
      "mpps": 0.19,
      "packets": {"processed": .., "dropped": .., "arrived": ..},
      "wakeups": {"need_resched": .., "restart_limit": .., "time_limit": ..},
      "windows": {"overrides": .., "stale_ignored": ..},
      "receiver": {"processed_pps": .., "drops_per_s": ..,   (optional)
                   "cpu_split": {"receiver": 0.45, "sirqd": 0.45,
                                 "threads": 0.0, "dispatcher": 0.05}},
      "timer_p99_us": .., "tasklet_p99_us": .., "timer_late_p99_us": ..,
      "net_rx_pps": .., "app_share": ..,    the probe (mixed scenario)
      "probe": {"timer_missed": .., "tasklet_already_scheduled": ..}}]}

Runs of the rr scenario (bench/rr_lab.py's, with load and variant) are
left out: rr_lab.py renders them.

Groups with app.rx_pps get a second table: per policy the packets the
application received per second, the socket's drops per second, NET_RX's
packets per second and the CPU split. Groups with timer_p99_us (the
mixed scenario, l2fwd-sirq --probe) get a third: TIMER's and TASKLET's
raise-to-run p99, the timer's lateness p99, NET_RX's packets per second
and the application's CPU share. Fields that are missing print as "-".
"""

import argparse
import json
import math
import os
import statistics
import sys

POLICY_ORDER = ["mainline", "ksoftirqd", "kicinski", "deferred", "rt",
                "pushdown", "pushdown-locked"]
# One colour per mode, the same in every plot (colour-blind safe).
COLOURS = {"mainline": "#0072b2", "ksoftirqd": "#d55e00",
           "kicinski": "#009e73", "deferred": "#cc79a7", "rt": "#882255",
           "pushdown": "#44aa99", "pushdown-locked": "#999933"}
OTHER_COLOUR = "#555555"
W, H = 640, 360          # SVG canvas
ML, MR, MT, MB = 70, 20, 40, 50   # margins: room for axis labels


def get(d, *path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def load(paths):
    runs, meta = [], {}
    for p in paths:
        with open(p) as f:
            doc = json.load(f)
        meta.setdefault("source", doc.get("source", os.path.basename(p)))
        meta.setdefault("stall_threshold_ms", doc.get("stall_threshold_ms", 8))
        for r in doc["runs"]:
            if r.get("scenario") == "rr":
                continue	# bench/rr_lab.py's
            r.setdefault("mode", r.get("policy"))
            r.setdefault("tick_hz", 0)
            r.setdefault("label", "")
            runs.append(r)
    return runs, meta


def policy_key(p):
    return (POLICY_ORDER.index(p) if p in POLICY_ORDER else len(POLICY_ORDER), p)


def groups(runs):
    """{(scenario, tick_hz, label): {policy: [runs]}} in a stable order."""
    out = {}
    for r in runs:
        g = out.setdefault((r["scenario"], r["tick_hz"], r["label"]), {})
        g.setdefault(r["mode"], []).append(r)
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])))


# Table columns: header, how to get the value from one run, format.
COLUMNS = [
    ("stalls/s", lambda r: r.get("stalls_per_s"), "{:.2f}"),
    ("NET_RX p50 ms", lambda r: ms(get(r, "latency", "NET_RX", "p50_us")), "{:.3f}"),
    ("p99 ms", lambda r: ms(get(r, "latency", "NET_RX", "p99_us")), "{:.2f}"),
    ("p99.9 ms", lambda r: ms(get(r, "latency", "NET_RX", "p999_us")), "{:.2f}"),
    ("max ms", lambda r: ms(get(r, "latency", "NET_RX", "max_us")), "{:.2f}"),
    ("NET_TX p99 ms", lambda r: ms(get(r, "latency", "NET_TX", "p99_us")), "{:.3f}"),
    ("NET_TX max ms", lambda r: ms(get(r, "latency", "NET_TX", "max_us")), "{:.2f}"),
    ("app CPU %", lambda r: pct(get(r, "app", "cpu_share")), "{:.1f}"),
    ("app units/s", lambda r: get(r, "app", "work_units_per_s"), "{:.3g}"),
    ("Mpps", lambda r: r.get("mpps"), "{:.3f}"),
    ("drop %", lambda r: drop_pct(r), "{:.1f}"),
    ("wake nr/rl/tl", lambda r: wakes(r), "{}"),
    ("overrides", lambda r: get(r, "windows", "overrides"), "{:.0f}"),
    ("stale", lambda r: get(r, "windows", "stale_ignored"), "{:.0f}"),
]


def ms(us):
    return None if us is None else us / 1000


def pct(x):
    return None if x is None else 100 * x


def drop_pct(r):
    d, a = get(r, "packets", "dropped"), get(r, "packets", "arrived")
    if d is None:
        return None
    if a is None:
        p = get(r, "packets", "processed")
        a = None if p is None else p + d
    return 100 * d / a if a else 0.0


def wakes(r):
    w = r.get("wakeups")
    if not isinstance(w, dict):
        return None
    return "/".join(str(int(w.get(k, 0)))
                    for k in ("need_resched", "restart_limit", "time_limit"))


def cell(runs, fn, fmt):
    vals = [fn(r) for r in runs]
    if any(isinstance(v, str) for v in vals):
        return vals[len(vals) // 2] if vals else "-"
    v = median(vals)
    return "-" if v is None else fmt.format(v)


# The receiver's table (flood as 4cd13c21b207 measured it).
RECEIVER_COLUMNS = [
    ("app rx pps", lambda r: get(r, "app", "rx_pps"), "{:.4g}"),
    ("drops/s", lambda r: get(r, "receiver", "drops_per_s"), "{:.4g}"),
    ("NET_RX pps", lambda r: get(r, "receiver", "processed_pps"), "{:.4g}"),
    ("CPU app %", lambda r: pct(get(r, "receiver", "cpu_split", "receiver")), "{:.1f}"),
    ("CPU sirqd %", lambda r: pct(get(r, "receiver", "cpu_split", "sirqd")), "{:.1f}"),
    ("CPU softirq threads %", lambda r: pct(get(r, "receiver", "cpu_split", "threads")),
     "{:.1f}"),
    ("CPU dispatcher %", lambda r: pct(get(r, "receiver", "cpu_split", "dispatcher")),
     "{:.1f}"),
]


def receiver_table(key, by_policy, meta):
    scenario, hz, label = key
    n = max(len(v) for v in by_policy.values())
    title = f"{scenario}, tick_hz {hz}" + (f", {label}" if label else "") + ", receiver"
    lines = [f"**{title}** ({meta['name']}"
             + (f", median of {n} runs" if n > 1 else "") + ")", "",
             "| policy | " + " | ".join(c[0] for c in RECEIVER_COLUMNS) + " |",
             "|---|" + "---:|" * len(RECEIVER_COLUMNS)]
    for p in sorted(by_policy, key=policy_key):
        lines.append(f"| `{p}` | " + " | ".join(
            cell(by_policy[p], fn, fmt) for _, fn, fmt in RECEIVER_COLUMNS) + " |")
    return "\n".join(lines) + "\n"


# The probe's table (the mixed scenario: TIMER and tasklets under a flood).
PROBE_COLUMNS = [
    ("TIMER p99 us", lambda r: r.get("timer_p99_us"), "{:.1f}"),
    ("timer late p99 us", lambda r: r.get("timer_late_p99_us"), "{:.0f}"),
    ("timer deadlines skipped %", lambda r: skipped_pct(r), "{:.1f}"),
    ("TASKLET p99 us", lambda r: r.get("tasklet_p99_us"), "{:.0f}"),
    ("TASKLET max us", lambda r: get(r, "latency", "TASKLET", "max_us"), "{:.0f}"),
    ("NET_RX pps", lambda r: r.get("net_rx_pps"), "{:.4g}"),
    ("app CPU %", lambda r: pct(r.get("app_share")), "{:.1f}"),
    ("app rx pps", lambda r: get(r, "app", "rx_pps"), "{:.4g}"),
]


def skipped_pct(r):
    fired, missed = get(r, "probe", "timer_fires"), get(r, "probe", "timer_missed")
    if fired is None or missed is None or fired + missed == 0:
        return None
    return 100 * missed / (fired + missed)


def probe_table(key, by_policy, meta):
    scenario, hz, label = key
    n = max(len(v) for v in by_policy.values())
    title = f"{scenario}, tick_hz {hz}" + (f", {label}" if label else "") + ", probe"
    lines = [f"**{title}** ({meta['name']}"
             + (f", median of {n} runs" if n > 1 else "") + ")", "",
             "| mode | " + " | ".join(c[0] for c in PROBE_COLUMNS) + " |",
             "|---|" + "---:|" * len(PROBE_COLUMNS)]
    for p in sorted(by_policy, key=policy_key):
        lines.append(f"| `{p}` | " + " | ".join(
            cell(by_policy[p], fn, fmt) for _, fn, fmt in PROBE_COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def has_probe(by_policy):
    return any(r.get("timer_p99_us") is not None
               for runs in by_policy.values() for r in runs)


def has_receiver(by_policy):
    return any(get(r, "app", "rx_pps") is not None
               for runs in by_policy.values() for r in runs)


def table(key, by_policy, meta):
    scenario, hz, label = key
    n = max(len(v) for v in by_policy.values())
    title = f"{scenario}, tick_hz {hz}" + (f", {label}" if label else "")
    lines = [f"**{title}** ({meta['name']}"
             + (f", median of {n} runs" if n > 1 else "") + ")", "",
             "| policy | " + " | ".join(c[0] for c in COLUMNS) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    for p in sorted(by_policy, key=policy_key):
        lines.append(f"| `{p}` | " + " | ".join(
            cell(by_policy[p], fn, fmt) for _, fn, fmt in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


# --- SVG -------------------------------------------------------------------

def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg(title, body, xlabel, ylabel):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
            f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">\n'
            f'<rect width="{W}" height="{H}" fill="white"/>\n'
            f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{esc(title)}</text>\n'
            f'<text x="{ML + (W - ML - MR) / 2}" y="{H - 10}" text-anchor="middle">{esc(xlabel)}</text>\n'
            f'<text x="15" y="{MT + (H - MT - MB) / 2}" text-anchor="middle" '
            f'transform="rotate(-90 15 {MT + (H - MT - MB) / 2})">{esc(ylabel)}</text>\n'
            + body + "</svg>\n")


def axes(yticks, ymax, fmt="{:g}"):
    x0, y0, x1, y1 = ML, H - MB, W - MR, MT
    out = [f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="black"/>',
           f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="black"/>']
    for t in yticks:
        y = y0 - (y0 - y1) * t / ymax
        out.append(f'<line x1="{x0 - 4}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt.format(t)}</text>')
    return "\n".join(out) + "\n"


def nice_ticks(vmax):
    if vmax <= 0:
        return [0, 1], 1
    step = 10 ** math.floor(math.log10(vmax))
    for m in (1, 2, 5, 10):
        if vmax / (step * m) <= 6:
            step *= m
            break
    top = step * math.ceil(vmax / step)
    return [i * step for i in range(int(round(top / step)) + 1)], top


def bars(title, ylabel, cats, series, fmt):
    """Grouped bars: cats on x (e.g. tick_hz), one bar per series (policy)."""
    vmax = max([v for s in series.values() for v in s if v is not None] + [0])
    ticks, top = nice_ticks(vmax * 1.1 if vmax else 1)
    x0, y0, y1 = ML, H - MB, MT
    gw = (W - ML - MR) / max(len(cats), 1)
    bw = gw * 0.8 / max(len(series), 1)
    body = [axes(ticks, top)]
    for i, c in enumerate(cats):
        body.append(f'<text x="{x0 + gw * (i + 0.5):.1f}" y="{y0 + 16}" '
                    f'text-anchor="middle">{esc(c)}</text>')
        for j, (name, vals) in enumerate(series.items()):
            v = vals[i]
            if v is None:
                continue
            h = (y0 - y1) * v / top
            x = x0 + gw * i + gw * 0.1 + bw * j
            body.append(f'<rect x="{x:.1f}" y="{y0 - h:.1f}" width="{bw * 0.9:.1f}" '
                        f'height="{h:.1f}" fill="{COLOURS.get(name, OTHER_COLOUR)}">'
                        f'<title>{esc(name)}: {fmt.format(v)}</title></rect>')
            body.append(f'<text x="{x + bw * 0.45:.1f}" y="{y0 - h - 3:.1f}" '
                        f'text-anchor="middle" font-size="10">{fmt.format(v)}</text>')
    body.append(legend(list(series)))
    return svg(title, "\n".join(body) + "\n", "", ylabel)


def legend(names):
    out = []
    for i, n in enumerate(names):
        x = ML + 10 + 110 * i
        out.append(f'<rect x="{x}" y="{MT - 12}" width="10" height="10" '
                   f'fill="{COLOURS.get(n, OTHER_COLOUR)}"/>')
        out.append(f'<text x="{x + 14}" y="{MT - 3}">{esc(n)}</text>')
    return "\n".join(out)


def cdf_points(runs):
    """Cumulative share per latency bound, over all repeats together."""
    hist = {}
    for r in runs:
        for ns, n in get(r, "latency", "NET_RX", "hist_ns") or []:
            hist[ns] = hist.get(ns, 0) + n
    total = sum(hist.values())
    pts, seen = [], 0
    for ns in sorted(hist):
        seen += hist[ns]
        pts.append((max(ns, 1), seen / total))
    return pts


def cdf(title, by_policy):
    """Latency CDF, log x in ms, y as the share of packets not yet served,
    log scale too (1 - CDF), so that the tail is readable."""
    curves = {p: cdf_points(by_policy[p]) for p in sorted(by_policy, key=policy_key)}
    curves = {p: c for p, c in curves.items() if c}
    if not curves:
        return None
    xs = [x for c in curves.values() for x, _ in c]
    lo = 10 ** math.floor(math.log10(min(xs)))
    hi = 10 ** math.ceil(math.log10(max(xs)))
    ymin = 1e-6  # the tail shown down to one packet in a million
    x0, y0, x1, y1 = ML, H - MB, W - MR, MT

    def px(ns):
        return x0 + (x1 - x0) * (math.log10(ns) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    def py(tail):
        t = max(tail, ymin)
        return y1 + (y0 - y1) * (-math.log10(t)) / (-math.log10(ymin))

    body = [f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="black"/>',
            f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="black"/>']
    d = lo
    while d <= hi:
        x = px(d)
        body.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y1}" stroke="#ddd"/>')
        body.append(f'<text x="{x:.1f}" y="{y0 + 16}" text-anchor="middle">{d / 1e6:g}</text>')
        d *= 10
    e = 0
    while 10 ** -e >= ymin:
        y = py(10 ** -e)
        body.append(f'<line x1="{x0 - 4}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#ddd"/>')
        body.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">1e-{e}</text>')
        e += 1
    for p, pts in curves.items():
        path, tail_prev = [], 1.0
        for ns, c in pts:
            # a step: the tail stays until the bucket bound, then drops
            path.append(f"{px(ns):.1f},{py(tail_prev):.1f}")
            tail_prev = 1 - c
            path.append(f"{px(ns):.1f},{py(tail_prev):.1f}")
        body.append(f'<polyline fill="none" stroke="{COLOURS.get(p, OTHER_COLOUR)}" '
                    f'stroke-width="2" points="{" ".join(path)}"/>')
    body.append(legend(list(curves)))
    return svg(title, "\n".join(body) + "\n", "NET_RX latency from packet arrival (ms, log)",
               "share of packets waiting longer (log)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="out")
    ap.add_argument("--prefix")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    runs, meta = load(a.runs)
    prefix = a.prefix or meta["source"]
    meta["name"] = prefix
    os.makedirs(a.out, exist_ok=True)
    g = groups(runs)
    thr = meta["stall_threshold_ms"]
    written = []

    def write(name, text):
        if text is None:
            return
        path = os.path.join(a.out, name)
        with open(path, "w") as f:
            f.write(text)
        written.append(path)

    md = []
    for key, by_policy in g.items():
        scenario, hz, label = key
        md.append(table(key, by_policy, meta))
        if has_receiver(by_policy):
            md.append(receiver_table(key, by_policy, meta))
        if has_probe(by_policy):
            md.append(probe_table(key, by_policy, meta))
        tag = f"{prefix}-{scenario}" + (f"-hz{hz}" if hz else "") + \
            (f"-{label.replace(' ', '_')}" if label else "")
        pols = sorted(by_policy, key=policy_key)
        where = f"{scenario}, tick_hz {hz}" + (f", {label}" if label else "")
        write(f"{tag}-cdf.svg", cdf(f"NET_RX latency, {where}", by_policy))
        if scenario == "stall":
            write(f"{tag}-stalls.svg", bars(
                f"NET_RX stalls >= {thr:g} ms per second, {where}", "stalls/s",
                [""], {p: [median([r.get("stalls_per_s") for r in by_policy[p]])]
                       for p in pols}, "{:.2f}"))
        if has_receiver(by_policy):
            write(f"{tag}-rx.svg", bars(
                f"packets the application received per second, {where}", "packets/s",
                [""], {p: [median([get(r, "app", "rx_pps") for r in by_policy[p]])]
                       for p in pols}, "{:.3g}"))
        if has_probe(by_policy):
            write(f"{tag}-probe.svg", bars(
                f"TIMER and tasklets under the flood, p99, {where}", "us",
                ["TIMER raise-to-run", "timer lateness", "TASKLET raise-to-run"],
                {p: [median([r.get(k) for r in by_policy[p]])
                     for k in ("timer_p99_us", "timer_late_p99_us", "tasklet_p99_us")]
                 for p in pols}, "{:.0f}"))
        if scenario in ("flood", "flood-burn", "mixed"):
            write(f"{tag}-app.svg", bars(
                f"application CPU share, {where}", "app CPU %",
                [""], {p: [pct(median([get(r, "app", "cpu_share") for r in by_policy[p]]))]
                       for p in pols}, "{:.1f}"))

    # tick_hz study: one plot per scenario (and label) over the tick rates
    for scenario in sorted({k[0] for k in g}):
        for label in sorted({k[2] for k in g if k[0] == scenario}):
            hzs = sorted({k[1] for k in g if k[0] == scenario and k[2] == label})
            if len(hzs) < 2:
                continue
            pols = sorted({p for k, v in g.items() if k[0] == scenario and k[2] == label
                           for p in v}, key=policy_key)
            if scenario == "flood":
                fn, what, unit, fmt = (lambda r: pct(get(r, "app", "cpu_share")),
                                       "application CPU share", "app CPU %", "{:.1f}")
            else:
                fn, what, unit, fmt = (lambda r: r.get("stalls_per_s"),
                                       f"NET_RX stalls >= {thr:g} ms per second",
                                       "stalls/s", "{:.2f}")
            series = {p: [median([fn(r) for r in g.get((scenario, hz, label), {}).get(p, [])])
                          for hz in hzs] for p in pols}
            cats = ["TSC" if hz == 0 else f"HZ={hz}" for hz in hzs]
            write(f"{prefix}-{scenario}" + (f"-{label.replace(' ', '_')}" if label else "")
                  + "-tickhz.svg",
                  bars(f"{what}, {scenario}, by tick_hz", unit, cats, series, fmt))

    text = "\n".join(md)
    write(f"{prefix}-tables.md", text)
    print(text)
    print("wrote: " + ", ".join(written), file=sys.stderr)


if __name__ == "__main__":
    main()
