#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The low-load bench's results (bench/lowload-bench.sh), python3 stdlib only.

    lowload_plot.py --collect RUNS.jsonl OUT.json
        one object per run from the script's records: lat-gen's result
        (rate, CPU of the forwarder, latency percentiles, counts) and, for
        l2fwd-sirq, its counters between the two reports (wake-ups, Rx
        interrupts per second)
    lowload_plot.py --line < one line of RUNS.jsonl
        one line of text: what that run gave; exit status 3 if the run
        was disturbed (something else on the CPUs, see disturbed())
    lowload_plot.py OUT.json [--md FILE] [--svg FILE]
        a Markdown table (printed too) and an SVG plot: the forwarder's CPU
        (share of one core) and p99 latency against the offered rate, log x,
        one line per variant, medians over the rounds

An object of OUT.json: {"tool", "variant", "tuning", "options", "round",
"rate_pps", "cpu_share", "p50_us", "p99_us", "sent", "received", "lost",
"sent_pps", "window_s", "p90_us", "p999_us", "max_us", "mean_us",
"over_8ms" (frames whose latency was 8 ms or more),
"cpu_comm", "cpu_sys_share" (of cpu_share, the kernel's part: stime),
"gen_cpu_share" (lat-gen's own share of CPU 0),
"cpu1_busy_share", "cpu1_others_share" (CPU 1 busy beside the forwarder),
"cpu1_steal_share", "disturbed" (why the run is suspect, or null)} and
for l2fwd-sirq "wakeups_per_s" (the dispatcher's sleeps,
each ended by a wake-up), "rx_irqs_per_s", "ticks_per_s" (scheduler
ticks, tick_hz), "pkts_per_wakeup", "cpu_us_per_wakeup", "irq_tick_us".
"""

import argparse
import json
import math
import statistics
import sys

GOAL_CPU = 0.05          # issue 21: <= 5 % of a core at 10 kpps ...
GOAL_RATE = 10000
GOAL_P99_US = 50         # ... with p99 <= 50 us
ORDER = ["l2fwd-sirq", "testpmd", "l2fwd-sirq-tuned"]
COLOURS = {"l2fwd-sirq": "#009e73", "testpmd": "#d55e00",
           "l2fwd-sirq-tuned": "#0072b2"}
DASHED = {"l2fwd-sirq-tuned"}
OTHER_COLOUR = "#555555"


def get(d, *path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def counters(report):
    """The sirq counters of a report, summed over its lcores, and its time."""
    out = {}
    for lc in get(report, "sirq", "lcores") or []:
        for k, v in (lc.get("counters") or {}).items():
            if isinstance(v, (int, float)):
                out[k] = out.get(k, 0) + v
    return out, report.get("elapsed_s")


def irq_tick_us(report):
    for lc in get(report, "sirq", "lcores") or []:
        return get(lc, "config", "irq_tick_us")
    return None


def collect_one(rec):
    with open(rec["gen"]) as f:
        g = json.load(f)
    lat = g.get("latency_us", {})
    run = {
        "tool": rec["tool"], "variant": rec["variant"],
        "tuning": rec["variant"].endswith("-tuned"),
        "options": rec["options"], "round": rec["round"],
        "rate_pps": rec["rate_pps"],
        "cpu_share": get(g, "cpu", "share"),
        "p50_us": lat.get("p50"), "p99_us": lat.get("p99"),
        "sent": g.get("sent"), "received": g.get("received"),
        "lost": g.get("lost"), "tx_refused": g.get("tx_refused"),
        "sent_pps": g.get("sent_pps"), "window_s": g.get("window_s"),
        "p90_us": lat.get("p90"), "p999_us": lat.get("p999"),
        "over_8ms": lat.get("over_8ms"),
        "max_us": lat.get("max"), "mean_us": lat.get("mean"),
        "cpu_comm": get(g, "cpu", "comm"),
        "cpu_sys_share": (get(g, "cpu", "stime_s") / g["window_s"]
                          if get(g, "cpu", "stime_s") is not None else None),
        "gen_late_bursts": g.get("late_bursts"), "gen_max_due": g.get("max_due"),
        "gen_cpu_share": get(g, "self", "cpu_share"),
        "gen_involuntary_switches": get(g, "self", "involuntary_switches"),
        "cpu1_busy_share": get(g, "watch_cpu", "busy_share"),
        "cpu1_steal_share": get(g, "watch_cpu", "steal_share"),
    }
    busy = run["cpu1_busy_share"]
    run["cpu1_others_share"] = (None if busy is None or run["cpu_share"] is None
                                else round(max(0.0, busy - run["cpu_share"]), 5))
    run["disturbed"] = disturbed(run)
    if rec.get("report_start") and rec.get("report_end"):
        with open(rec["report_start"]) as f:
            a, ta = counters(json.load(f))
        with open(rec["report_end"]) as f:
            end = json.load(f)
        b, tb = counters(end)
        dt = (tb or 0) - (ta or 0)
        if dt > 0:
            def rate(k):
                return (b.get(k, 0) - a.get(k, 0)) / dt
            wake = rate("irq_sleeps")
            run.update({
                "report_window_s": round(dt, 3),
                "wakeups_per_s": round(wake, 1),
                "rx_irqs_per_s": round(rate("irq_rx_events"), 1),
                "ticks_per_s": round(rate("irq_ticks"), 1),
                "rx_pps": round(rate("rx_packets"), 1),
                "pkts_per_wakeup": round(rate("rx_packets") / wake, 3) if wake else None,
                "cpu_us_per_wakeup": (round(run["cpu_share"] * 1e6 / wake, 2)
                                      if wake and run["cpu_share"] is not None else None),
                "irq_tick_us": irq_tick_us(end),
            })
    return run


# A run is flagged when something else had a share of either CPU: more
# than this of CPU 1 beside the forwarder (a polling forwarder has all of
# it, so there it shows as its own share falling short), or lat-gen had
# less than 1 - this of CPU 0 (it polls: anything else delays its frames).
DISTURBED = 0.03


def disturbed(r):
    why = []
    if (r.get("cpu1_others_share") or 0) > DISTURBED:
        why.append(f"others had {100 * r['cpu1_others_share']:.1f} % of CPU 1")
    if r["tool"] == "testpmd" and r.get("cpu_share") is not None \
            and r["cpu_share"] < 1 - DISTURBED:
        why.append(f"testpmd had only {100 * r['cpu_share']:.1f} % of CPU 1")
    if r.get("gen_cpu_share") is not None and r["gen_cpu_share"] < 1 - DISTURBED:
        why.append(f"lat-gen had only {100 * r['gen_cpu_share']:.1f} % of CPU 0")
    offered = (r.get("sent") or 0) + (r.get("tx_refused") or 0)
    if r.get("window_s") and offered < (1 - DISTURBED) * r["rate_pps"] * r["window_s"]:
        why.append(f"lat-gen offered only {offered / r['window_s']:.0f} pps")
    if (r.get("cpu1_steal_share") or 0) > DISTURBED:
        why.append(f"steal {100 * r['cpu1_steal_share']:.1f} % on CPU 1")
    return "; ".join(why) or None


def fmt(v, f):
    return "-" if v is None else f.format(v)


def line(rec):
    """Prints what the run gave; True if it was disturbed."""
    r = collect_one(rec)
    extra = ""
    if r.get("wakeups_per_s") is not None:
        extra = (f", {r['wakeups_per_s']:.0f} wake-ups/s, "
                 f"{fmt(r.get('cpu_us_per_wakeup'), '{:.1f}')} us CPU each")
    print(f"   -> {r['variant']} at {r['rate_pps']} pps: CPU "
          f"{fmt(pct(r['cpu_share']), '{:.1f}')} % of a core, p50 "
          f"{fmt(r['p50_us'], '{:.1f}')} us, p99 {fmt(r['p99_us'], '{:.1f}')} us, "
          f"{r['received']}/{r['sent']} back{extra}")
    if r["disturbed"]:
        print(f"      DISTURBED: {r['disturbed']}")
    return bool(r["disturbed"])


def pct(x):
    return None if x is None else 100 * x


def median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def variant_key(v):
    return (ORDER.index(v) if v in ORDER else len(ORDER), v)


def grouped(runs):
    """{variant: {rate: [runs]}}, the undisturbed runs of each cell only
    (all of them where every one was disturbed: see kept())."""
    g = {}
    for r in runs:
        g.setdefault(r["variant"], {}).setdefault(r["rate_pps"], []).append(r)
    return {v: {rate: kept(rs) for rate, rs in sorted(g[v].items())}
            for v in sorted(g, key=variant_key)}


def kept(rs):
    good = [r for r in rs if not r.get("disturbed")]
    return good or rs


def all_disturbed(rs):
    return all(r.get("disturbed") for r in rs)


def spread(rs, key, scale, f):
    vals = [r.get(key) for r in rs if r.get(key) is not None]
    if not vals:
        return "-"
    m = f.format(statistics.median(vals) * scale)
    if len(vals) > 1:
        m += f" ({f.format(min(vals) * scale)}-{f.format(max(vals) * scale)})"
    return m


def table(runs):
    g = grouped(runs)
    dropped = {}
    for r in runs:
        if r.get("disturbed"):
            k = (r["variant"], r["rate_pps"])
            dropped[k] = dropped.get(k, 0) + 1
    n = max(len(rs) for by in g.values() for rs in by.values())
    head = ["variant", "offered pps", "runs", "back / sent", "CPU % of a core",
            "p50 us", "p99 us", "p99.9 us", "max us", "wake-ups/s",
            "Rx irqs/s", "CPU us / wake-up"]
    lines = ["| " + " | ".join(head) + " |",
             "|---|" + "---:|" * (len(head) - 1)]
    for v, by in g.items():
        label = f"`{v}`" + (" (tuning)" if v.endswith("-tuned") else "")
        for rate, rs in by.items():
            sent = sum(r.get("sent") or 0 for r in rs)
            back = sum(r.get("received") or 0 for r in rs)
            star = "*" if all_disturbed(rs) else ""
            nd = dropped.get((v, rate), 0) if not star else 0
            lines.append("| " + " | ".join([
                label, f"{rate:,}".replace(",", " "),
                f"{len(rs)}{star}" + (f" (+{nd} disturbed)" if nd else ""),
                f"{back}/{sent}",
                spread(rs, "cpu_share", 100, "{:.1f}"),
                spread(rs, "p50_us", 1, "{:.1f}"),
                spread(rs, "p99_us", 1, "{:.1f}"),
                fmt(median([r.get("p999_us") for r in rs]), "{:.0f}"),
                fmt(median([r.get("max_us") for r in rs]), "{:.0f}"),
                fmt(median([r.get("wakeups_per_s") for r in rs]), "{:.0f}"),
                fmt(median([r.get("rx_irqs_per_s") for r in rs]), "{:.0f}"),
                fmt(median([r.get("cpu_us_per_wakeup") for r in rs]), "{:.1f}"),
            ]) + " |")
    opts = {v: next(iter(by.values()))[0]["options"] for v, by in g.items()}
    notes = ["", "Medians" + (f" of up to {n} runs (min-max in brackets)" if n > 1 else
                               " of one run each") + "; options: "
             + "; ".join(f"`{v}` {o}" for v, o in opts.items())
             + f". Goal (issue 21): <= {GOAL_CPU * 100:g} % of a core at "
             f"{GOAL_RATE} pps, p99 <= {GOAL_P99_US} us."]
    bad = [r for r in runs if r.get("disturbed")]
    notes.append("" if not bad else
                 "\nDisturbed runs (something else on the CPUs), left out of the "
                 "medians unless a cell has no other (marked *): " +
                 "; ".join(f"{r['variant']} {r['rate_pps']} pps round {r['round']}: "
                           f"{r['disturbed']}" for r in bad) + ".")
    return "\n".join(lines + notes) + "\n"


# --- SVG: two panels, log x ----------------------------------------------

PW, PH = 440, 320                    # one panel
ML, MR, MT, MB = 70, 24, 46, 48
XPAD = 0.2                           # decades of room left and right of the data
W, H = 2 * PW, PH + 34               # legend row below


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def nice_top(vmax):
    if vmax <= 0:
        return 1, 0.2
    step = 10 ** (math.floor(math.log10(vmax)) - 1)
    for m in (1, 2, 5, 10):
        if vmax / (step * m) <= 5:
            step *= m
            break
    return step * math.ceil(vmax / step), step


def panel(ox, title, ylabel, series, rates, goal, goal_label, yfmt, goal_rate=None,
          top=None, label_right=False):
    """series: {variant: [(rate, value)]}; goal: a horizontal line or None,
    marked with a cross at goal_rate if given, its label at the left end
    (or the right); top: the y axis's end (default: from the data)."""
    x0, x1 = ox + ML, ox + PW - MR
    y0, y1 = PH - MB, MT
    lo = 10 ** math.floor(math.log10(min(rates)))
    hi = 10 ** math.ceil(math.log10(max(rates)))
    if hi == lo:
        hi = lo * 10
    vmax = max([v for pts in series.values() for _, v in pts if v is not None]
               + [goal or 0])
    if top is None:
        top, step = nice_top(vmax * 1.08)
    else:
        step = top / 5

    def px(r):
        a, b = math.log10(lo) - XPAD, math.log10(hi) + XPAD
        return x0 + (x1 - x0) * (math.log10(r) - a) / (b - a)

    def py(v):
        return y0 - (y0 - y1) * v / top

    out = [f'<text x="{ox + PW / 2}" y="20" text-anchor="middle" font-size="14">{esc(title)}</text>',
           f'<text x="{(x0 + x1) / 2}" y="{PH - 12}" text-anchor="middle">'
           'offered rate (frames/s, log)</text>',
           f'<text x="{ox + 22}" y="{(y0 + y1) / 2}" text-anchor="middle" '
           f'transform="rotate(-90 {ox + 22} {(y0 + y1) / 2})">{esc(ylabel)}</text>']
    t = 0.0
    while t <= top + step / 2:
        y = py(t)
        out.append(f'<line x1="{x0 - 4}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{yfmt.format(t)}</text>')
        t += step
    d = lo
    while d <= hi * 1.001:
        x = px(d)
        out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y1}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{y0 + 16}" text-anchor="middle">{d:,.0f}</text>'
                   .replace(",", "\u2009"))
        for m in range(2, 10):
            if d * m < hi:
                xm = px(d * m)
                out.append(f'<line x1="{xm:.1f}" y1="{y0}" x2="{xm:.1f}" y2="{y0 + 4}" stroke="black"/>')
        d *= 10
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="black"/>')
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="black"/>')
    if goal_rate is not None and goal is not None:
        gx, gy = px(goal_rate), py(goal)
        out.append(f'<path d="M{gx - 5:.1f},{gy - 5:.1f} L{gx + 5:.1f},{gy + 5:.1f} '
                   f'M{gx - 5:.1f},{gy + 5:.1f} L{gx + 5:.1f},{gy - 5:.1f}" stroke="#c00" '
                   'stroke-width="2"/>')
    if goal is not None:
        y = py(goal)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#c00" '
                   'stroke-dasharray="2,3"/>')
        lx, anchor = (x1 - 4, "end") if label_right else (x0 + 4, "start")
        out.append(f'<text x="{lx}" y="{y - 4:.1f}" text-anchor="{anchor}" fill="#c00" '
                   f'font-size="11">{esc(goal_label)}</text>')
    for v, pts in series.items():
        pts = [(r, val) for r, val in pts if val is not None]
        if not pts:
            continue
        colour = COLOURS.get(v, OTHER_COLOUR)
        dash = ' stroke-dasharray="6,4"' if v in DASHED else ""
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="'
                   + " ".join(f"{px(r):.1f},{py(val):.1f}" for r, val in pts) + '"/>')
        for r, val in pts:
            out.append(f'<circle cx="{px(r):.1f}" cy="{py(val):.1f}" r="3.5" fill="{colour}">'
                       f'<title>{esc(v)}, {r} pps: {yfmt.format(val)}</title></circle>')
            # dashed: labels below and to the left of the point
            dx, dy, anchor = (-5, 14, "end") if v in DASHED else (5, -5, "start")
            out.append(f'<text x="{px(r) + dx:.1f}" y="{py(val) + dy:.1f}" '
                       f'text-anchor="{anchor}" font-size="10" '
                       f'fill="{colour}">{yfmt.format(val)}</text>')
    return "\n".join(out)


def plot(runs):
    g = grouped(runs)
    rates = sorted({r["rate_pps"] for r in runs})
    cpu = {v: [(rate, pct(median([r.get("cpu_share") for r in rs])))
               for rate, rs in by.items()] for v, by in g.items()}
    p99 = {v: [(rate, median([r.get("p99_us") for r in rs]))
               for rate, rs in by.items()] for v, by in g.items()}
    body = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
            f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
            f'<rect width="{W}" height="{H}" fill="white"/>',
            panel(0, "forwarder CPU", "% of one core", cpu, rates,
                  GOAL_CPU * 100, f"goal: {GOAL_CPU * 100:g} % at {GOAL_RATE // 1000} kpps (x)",
                  "{:.1f}", GOAL_RATE, top=100, label_right=True),
            panel(PW, "forwarding latency p99", "p99 (us)", p99, rates,
                  GOAL_P99_US, f"goal: p99 {GOAL_P99_US} us", "{:.0f}")]
    for i, v in enumerate(g):
        x = ML + 230 * i
        colour = COLOURS.get(v, OTHER_COLOUR)
        dash = ' stroke-dasharray="6,4"' if v in DASHED else ""
        label = v + (" (tuning)" if v.endswith("-tuned") else "")
        body.append(f'<line x1="{x}" y1="{H - 14}" x2="{x + 24}" y2="{H - 14}" '
                    f'stroke="{colour}" stroke-width="2"{dash}/>')
        body.append(f'<text x="{x + 30}" y="{H - 10}">{esc(label)}</text>')
    return "\n".join(body) + "\n</svg>\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--collect", nargs=2, metavar=("RUNS.jsonl", "OUT.json"))
    ap.add_argument("--line", action="store_true")
    ap.add_argument("--md")
    ap.add_argument("--svg")
    ap.add_argument("json", nargs="?")
    a = ap.parse_args()
    if a.line:
        bad = False
        for l in sys.stdin:
            if l.strip():
                bad |= line(json.loads(l))
        sys.exit(3 if bad else 0)
    if a.collect:
        with open(a.collect[0]) as f:
            runs = [collect_one(json.loads(l)) for l in f if l.strip()]
        with open(a.collect[1], "w") as f:
            json.dump(runs, f, indent=1)
            f.write("\n")
        return
    if not a.json:
        ap.error("give OUT.json, --collect or --line")
    with open(a.json) as f:
        runs = json.load(f)
    if not runs:
        sys.exit(f"lowload_plot: {a.json}: no runs")
    text = table(runs)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.svg:
        with open(a.svg, "w") as f:
            f.write(plot(runs))
        print(f"wrote {a.svg}", file=sys.stderr)


if __name__ == "__main__":
    main()
