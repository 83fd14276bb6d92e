#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Figures of bench/perf-check.sh, compared with bench/perf-baseline.json.

    perf_check.py compare BASELINE OUT.json MB-DIR FWD.json META.json
    perf_check.py record  BASELINE OUT.json MB-DIR FWD.json META.json [--force]

MB-DIR holds one sirq-microbench --json file per run (mb-*.json), FWD.json
is bench/fwd-bench.sh's summary of the null setup with the variants
kicinski and testpmd-mac, META.json what the shell knows (commit, build,
run counts, seconds).

Figures (each the median over this run's repetitions):
  microbench/CASE      cycles of each sirq-microbench case (lower is better)
  microbench/CASE / call  the same over the direct call's cycles, run by run
  fwd/kicinski         l2fwd-sirq's Mpps with its defaults (higher is better)
  fwd/testpmd-mac      dpdk-testpmd --forward-mode=mac's Mpps
  fwd/ratio            the first over the second, ratio of the medians

The samples of a figure are its single runs: the microbench runs, the
forwarding rounds, and for the ratio the per-round ratios (a round runs
both tools back to back). Its spread is (max - min) / median of the
samples, in per cent, after dropping the lowest and the highest when
there are five or more: the figure is a median, which one outlier on
either side does not move, and a single preempted run would otherwise set
the band (range_pct keeps the full range). compare prints one line per
figure: "MOVED" when |change| exceeds the baseline's noise band, else
"ok". record writes the baseline: the figures, and as each band
max(BAND_FACTOR x spread, the figure's floor); unless --force, it writes
nothing and exits 3 when a spread exceeds SPREAD_LIMIT_PCT (a machine
noisy in a way the shell's count of other processes does not see: after
a busy spell the same binary's first five of ten microbench runs took
5.2-5.9 cycles for the direct call, the last five 4.3-4.6).
"""

import glob
import json
import os
import platform
import statistics
import sys
import tempfile
import time

BAND_FACTOR = 2.0
# Floors of the noise band, per cent: the smallest band a figure gets
# whatever spread its recording saw, because the noise between sessions
# is larger than within one. Nine quiet runs of the unchanged tree
# against two baselines minutes old (docs/benchmarks.md) moved by up to:
# microbench cycles 7.7 % (all cases together: the VM's clock), cases
# over the call 2.4 %, Mpps 12.6 %, the ratio 8.1 %.
FLOOR_PCT = {"microbench": 10.0, "microbench / call": 5.0, "fwd": 15.0,
             "fwd/ratio": 10.0}
# Above these spreads (per cent) record refuses the measurement: quiet
# recordings stayed under half of them.
SPREAD_LIMIT_PCT = {"microbench": 5.0, "microbench / call": 5.0, "fwd": 10.0,
                    "fwd/ratio": 10.0}
MB_PREFIX = "microbench/"
CALL_CASE = "direct call"


def load(path):
    with open(path) as f:
        return json.load(f)


def range_pct(samples):
    m = statistics.median(samples)
    return 100.0 * (max(samples) - min(samples)) / m if m else 0.0


def spread_pct(samples):
    """Range in per cent of the median, without the extremes from 5 samples on."""
    s = sorted(samples)
    if len(s) >= 5:
        s = s[1:-1]
    return range_pct(s) * statistics.median(s) / statistics.median(samples)


def measure(mb_dir, fwd_path):
    """{name: {value, unit, better, samples, spread_pct}} and machine facts."""
    figures = {}
    files = sorted(glob.glob(os.path.join(mb_dir, "mb-*.json")),
                   key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]))
    if not files:
        sys.exit("perf-check: no sirq-microbench results in %s" % mb_dir)
    runs = [load(p) for p in files]
    tsc = statistics.median(r["tsc_ghz"] for r in runs)
    for case in runs[0]["cases"]:
        s = [r["cases"][case]["cycles"] for r in runs if case in r["cases"]]
        figures[MB_PREFIX + case] = {"unit": "cycles", "better": "lower", "samples": s}
    # Each engine case over the direct call of the same run: what the VM's
    # clock does to all cases alike (the same binary gave 4.3 and 5.3
    # cycles for the call, 101 and 124 for raise + run, minutes apart)
    # cancels out.
    if CALL_CASE in runs[0]["cases"]:
        for case in runs[0]["cases"]:
            if case == CALL_CASE:
                continue
            s = [r["cases"][case]["cycles"] / r["cases"][CALL_CASE]["cycles"]
                 for r in runs if case in r["cases"] and CALL_CASE in r["cases"]]
            figures[MB_PREFIX + case + " / call"] = {
                "unit": "x", "better": "lower", "samples": s}

    fwd = load(fwd_path)["variants"]
    try:
        sirq, mac = fwd["null/kicinski"], fwd["null/testpmd-mac"]
    except KeyError as e:
        sys.exit("perf-check: %s has no variant %s" % (fwd_path, e))
    for name, v in (("fwd/kicinski", sirq), ("fwd/testpmd-mac", mac)):
        figures[name] = {"unit": "Mpps", "better": "higher",
                         "samples": [m["mpps"] for m in v["runs"]]}
    base = {m["round"]: m["mpps"] for m in mac["runs"]}
    figures["fwd/ratio"] = {
        "unit": "x", "better": "higher",
        "what": "l2fwd-sirq kicinski median Mpps / testpmd mac median Mpps",
        "samples": [m["mpps"] / base[m["round"]] for m in sirq["runs"]
                    if m["round"] in base]}

    for name, f in figures.items():
        s = f["samples"]
        if not s or min(s) <= 0:
            sys.exit("perf-check: %s: no usable samples (%s)" % (name, s))
        f["value"] = statistics.median(s)
        f["spread_pct"] = spread_pct(s)
        f["range_pct"] = range_pct(s)
    r = figures["fwd/ratio"]
    r["value"] = figures["fwd/kicinski"]["value"] / figures["fwd/testpmd-mac"]["value"]
    return figures, {"tsc_ghz": tsc, "tracepoints": runs[0].get("tracepoints")}


def per_figure(table, name):
    if name in table:
        return table[name]
    if name.startswith(MB_PREFIX) and name.endswith(" / call"):
        return table["microbench / call"]
    return table[name.split("/", 1)[0]]


def floor_of(name):
    return per_figure(FLOOR_PCT, name)


def machine(tsc):
    model = platform.machine()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cpu": model, "cpus": os.cpu_count(), "tsc_ghz": round(tsc, 4),
            "kernel": platform.release(), "host": platform.node()}


def fmt(v, unit):
    if unit == "x":
        return "%.3f" % v if v < 10 else "%.2f" % v
    return "%.2f" % v if unit == "Mpps" else "%.1f" % v


def write_atomic(path, obj):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".perf-check.", dir=d)
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def record(baseline, out, figures, facts, meta, force):
    noisy = [(n, f["spread_pct"], per_figure(SPREAD_LIMIT_PCT, n))
             for n, f in figures.items()
             if f["spread_pct"] > per_figure(SPREAD_LIMIT_PCT, n)]
    for name, spread, limit in noisy:
        print("perf-check: %s: spread %.1f %% above the %.0f %% a recording accepts (samples %s)"
              % (name, spread, limit, " ".join("%.3g" % x for x in figures[name]["samples"])))
    if noisy and not force:
        write_atomic(out, {"mode": "record", "recorded": False, "baseline": baseline,
                           **meta, "figures": figures})
        sys.exit(3)
    for name, f in figures.items():
        f["floor_pct"] = floor_of(name)
        f["noise_pct"] = round(max(BAND_FACTOR * f["spread_pct"], f["floor_pct"]), 1)
        f["spread_pct"] = round(f["spread_pct"], 2)
        f["range_pct"] = round(f["range_pct"], 2)
    doc = {
        "what": "bench/perf-check.sh baseline; rewrite with bench/perf-check.sh --record",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "commit": meta["commit"], "dirty": meta["dirty"],
        "forced": bool(force and noisy),
        "machine": machine(facts["tsc_ghz"]),
        "build": meta["build"],
        "method": {
            "microbench_runs": meta["mb_runs"], "fwd_rounds": meta["fwd_runs"],
            "fwd_seconds": meta["fwd_seconds"],
            "value": "median of the samples (fwd/ratio: ratio of the two medians)",
            "spread_pct": "(max - min) / median of the samples without the lowest and the highest (5 samples or more)",
            "range_pct": "(max - min) / median of all the samples",
            "noise_pct": "max(%g x spread_pct, floor_pct)" % BAND_FACTOR,
            "load_before": meta.get("load_before"), "load_after": meta.get("load_after"),
            "measured_s": meta.get("measured_s"),
            "others_cpu_s": meta.get("others_cpu_s"),
        },
        "figures": figures,
    }
    write_atomic(baseline, doc)
    if meta["dirty"]:
        print("perf-check: warning: recorded from a tree with uncommitted changes: %s"
              % " ".join(meta["dirty"]))
    print("perf-check: baseline recorded in %s (commit %s%s)" %
          (baseline, meta["commit"][:12], ", dirty tree" if meta["dirty"] else ""))
    w = max(len(n) for n in figures)
    print("%-*s %10s %8s %8s %8s" % (w, "figure", "value", "spread%", "floor%", "noise%"))
    for name, f in figures.items():
        print("%-*s %10s %8.1f %8.1f %8.1f" % (w, name, fmt(f["value"], f["unit"]),
                                               f["spread_pct"], f["floor_pct"], f["noise_pct"]))
    write_atomic(out, {"mode": "record", "recorded": True, "baseline": baseline,
                       **meta, "figures": figures})


def compare(baseline, out, figures, facts, meta):
    base = load(baseline) if os.path.exists(baseline) else None
    rows = []
    names = list(figures)
    if base:
        names += [n for n in base["figures"] if n not in figures]
    w = max(len(n) for n in names)
    moved = 0
    for name in names:
        now = figures.get(name)
        was = base["figures"].get(name) if base else None
        row = {"name": name, "baseline": was["value"] if was else None,
               "now": now["value"] if now else None,
               "noise_pct": was["noise_pct"] if was else None}
        if now:
            row["spread_pct"] = round(now["spread_pct"], 2)
            row["samples"] = now["samples"]
            row["unit"], row["better"] = now["unit"], now["better"]
        if now and was:
            change = 100.0 * (now["value"] - was["value"]) / was["value"]
            row["change_pct"] = round(change, 2)
            if abs(change) > was["noise_pct"]:
                worse = (change > 0) == (now["better"] == "lower")
                row["verdict"] = "MOVED"
                row["direction"] = "worse" if worse else "better"
                moved += 1
            else:
                row["verdict"] = "ok"
        else:
            row["verdict"] = "new" if now else "missing"
        rows.append(row)
    if base:
        print("perf-check: against %s: %s, commit %s, %s" %
              (baseline, base["date"], base["commit"][:12], base["machine"]["cpu"]))
        if base["machine"]["cpu"] != machine(facts["tsc_ghz"])["cpu"]:
            print("perf-check: another CPU than the baseline's: compare with care")
        if base.get("build", {}).get("buildtype") != meta["build"]["buildtype"]:
            print("perf-check: another buildtype than the baseline's")
    else:
        print("perf-check: no baseline (%s); record one with --record" % baseline)
    print("%-*s %10s %10s %8s %7s %7s  %s" % (w, "figure", "baseline", "now", "change",
                                               "noise", "spread", "verdict"))
    for r in rows:
        unit = r.get("unit") or (base["figures"][r["name"]]["unit"] if base else "")
        print("%-*s %10s %10s %8s %7s %7s  %s" % (
            w, r["name"],
            fmt(r["baseline"], unit) if r["baseline"] is not None else "-",
            fmt(r["now"], unit) if r["now"] is not None else "-",
            "%+.1f%%" % r["change_pct"] if "change_pct" in r else "-",
            "%.1f%%" % r["noise_pct"] if r["noise_pct"] is not None else "-",
            "%.1f%%" % r["spread_pct"] if "spread_pct" in r else "-",
            r["verdict"] + (" (%s)" % r["direction"] if "direction" in r else "")))
    print("perf-check: %d of %d figures moved beyond their noise band "
          "(noise: the baseline's band; spread: this run's, as recorded)"
          % (moved, len(rows)))
    doc = {"mode": "compare", "baseline": baseline,
           "baseline_date": base["date"] if base else None,
           "baseline_commit": base["commit"] if base else None,
           **meta, "machine": machine(facts["tsc_ghz"]), "moved": moved, "figures": rows}
    write_atomic(out, doc)


def main():
    args = sys.argv[1:]
    force = "--force" in args
    args = [a for a in args if a != "--force"]
    if len(args) != 6 or args[0] not in ("compare", "record"):
        sys.exit(__doc__)
    mode, baseline, out, mb_dir, fwd, meta_path = args
    meta = load(meta_path)
    figures, facts = measure(mb_dir, fwd)
    meta["tracepoints"] = facts["tracepoints"]
    if mode == "record":
        record(baseline, out, figures, facts, meta, force)
    else:
        compare(baseline, out, figures, facts, meta)


if __name__ == "__main__":
    main()
