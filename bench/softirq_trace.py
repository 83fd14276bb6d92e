#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The kernel's own NET_RX and NET_TX waits, from its softirq tracepoints.

    softirq_trace.py start [--buffer-kb N]
    softirq_trace.py stop --cpu N --seconds S [--threshold-ms 8] [--json FILE]

start: clears the trace buffer and records irq:softirq_raise and
irq:softirq_entry for NET_TX (vec 2) and NET_RX (vec 3) on every CPU.
stop: stops recording and reads CPU N's buffer. A wait runs from the first
raise of a vector that is not yet pending to that vector's next entry on
the same CPU: what the patch set calls a stall when it lasts 8 ms or more.
Prints one JSON object: per vector the waits, the stalls (>= threshold),
stalls per second of the window (--seconds), the longest wait, the
entries ksoftirqd ran (the task the trace names), and the events the ring
lost (a result with lost events is not a count: exit status 3).

The trace shows no moment at which a pass of __do_softirq() takes the
pending mask; a raise between that moment and the vector's entry in the
same pass counts as served by that entry. So a wait can be short by the
time the handlers before it in one pass took (TIMER's before NET_TX's):
microseconds here, against the 8 ms threshold.

Needs tracefs at /sys/kernel/tracing (the guest lab mounts it) and root.
"""
import argparse
import json
import os
import re
import sys

TRACING = os.environ.get("SOFTIRQ_TRACING", "/sys/kernel/tracing")
VECTORS = {2: "NET_TX", 3: "NET_RX"}
EVENTS = ("softirq_raise", "softirq_entry")
LINE = re.compile(r"^\s*(.+?)-\d+\s+\[\d+\].*?\s(\d+\.\d+): (softirq_raise|softirq_entry): "
                  r"vec=(\d+)")


def put(path, value):
    with open(os.path.join(TRACING, path), "w") as f:
        f.write(value)


def start(args):
    if not os.path.isdir(os.path.join(TRACING, "events", "irq")):
        sys.exit("softirq_trace: no %s/events/irq (tracefs not mounted?)" % TRACING)
    put("tracing_on", "0")
    put("buffer_size_kb", str(args.buffer_kb))
    put("trace_clock", "mono")
    put("events/enable", "0")
    vecs = " || ".join("vec == %d" % v for v in VECTORS)
    for ev in EVENTS:
        put("events/irq/%s/filter" % ev, vecs)
        put("events/irq/%s/enable" % ev, "1")
    put("trace", "")
    put("tracing_on", "1")


def lost_events(cpu):
    lost = 0
    with open(os.path.join(TRACING, "per_cpu", "cpu%d" % cpu, "stats")) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k.strip() in ("overrun", "dropped events"):
                lost += int(v)
    return lost


def waits(lines):
    """(vector, wait in ns or None, whether ksoftirqd ran it) for each entry;
    the wait is None for an entry no raise in the trace led to."""
    since = {}
    for line in lines:
        m = LINE.search(line)
        if not m:
            continue
        comm, ev, vec = m.group(1), m.group(3), int(m.group(4))
        sec, frac = m.group(2).split(".")
        ts = int(sec) * 1000000000 + int(frac.ljust(9, "0")[:9])
        if vec not in VECTORS:
            continue
        if ev == "softirq_raise":
            since.setdefault(vec, ts)
        else:
            start = since.pop(vec, None)
            yield vec, None if start is None else ts - start, comm.startswith("ksoftirqd/")


def tally(lines, thr):
    """Per vector: entries, those ksoftirqd ran, waits, stalls (>= thr ns)
    and the longest wait."""
    per = {name: {"entries": 0, "in_ksoftirqd": 0, "waits": 0, "stalls": 0, "max_ms": 0.0}
           for name in VECTORS.values()}
    for vec, w, in_ksoftirqd in waits(lines):
        v = per[VECTORS[vec]]
        v["entries"] += 1
        v["in_ksoftirqd"] += in_ksoftirqd
        if w is not None:
            v["waits"] += 1
            v["stalls"] += w >= thr
            v["max_ms"] = max(v["max_ms"], w / 1e6)
    return per


def stop(args):
    put("tracing_on", "0")
    lost = lost_events(args.cpu)
    thr = round(args.threshold_ms * 1e6)
    with open(os.path.join(TRACING, "per_cpu", "cpu%d" % args.cpu, "trace")) as f:
        per = tally(f, thr)
    for ev in EVENTS:
        put("events/irq/%s/enable" % ev, "0")
        put("events/irq/%s/filter" % ev, "0")
    put("trace", "")
    for v in per.values():
        v["stalls_per_s"] = v["stalls"] / args.seconds
        v["max_ms"] = round(v["max_ms"], 3)
    out = {"cpu": args.cpu, "seconds": args.seconds, "threshold_ms": args.threshold_ms,
           "lost_events": lost, "vectors": per}
    text = json.dumps(out)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    if lost:
        print("softirq_trace: CPU %d's ring lost %d events: raise --buffer-kb" % (args.cpu, lost),
              file=sys.stderr)
        return 3
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start")
    s.add_argument("--buffer-kb", type=int, default=32768, help="ring per CPU (default 32768)")
    t = sub.add_parser("stop")
    t.add_argument("--cpu", type=int, required=True)
    t.add_argument("--seconds", type=float, required=True)
    t.add_argument("--threshold-ms", type=float, default=8.0)
    t.add_argument("--json")
    args = ap.parse_args()
    if args.cmd == "stop" and args.seconds <= 0:
        ap.error("--seconds must be > 0, not %s" % args.seconds)
    try:
        return start(args) if args.cmd == "start" else stop(args)
    except OSError as e:
        sys.exit("softirq_trace: %s" % e)


if __name__ == "__main__":
    sys.exit(main() or 0)
