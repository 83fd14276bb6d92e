#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The policies' qualitative results, on sirq-sim's own numbers.

    check_sim.py SIRQ_SIM stall|flood|determinism

stall        the Dec 2022 patches' claim: in the stall scenario kicinski
             has at least STALL_RATIO times fewer NET_RX stalls (>= 8 ms)
             than ksoftirqd, and ksoftirqd has at least STALL_RATIO of
             them, so that the ratio means something.
flood        the 2016 claim kept: under a flood ksoftirqd keeps the
             application's progress that mainline loses part of
             (mainline below MAINLINE_SHARE of ksoftirqd's work units)
             and kicinski keeps at least KICINSKI_SHARE of it.
determinism  the same options give byte-identical JSON; another seed
             gives other numbers.

Every number comes from a run made here; nothing is compared with a
stored result.
"""

import json
import os
import subprocess
import sys
import tempfile

# The target for the stall scenario: >= 10x fewer stalls.
STALL_RATIO = 10
# Simulated time of the stall runs: at ~1.5 stalls/s under ksoftirqd
# (the demo's three 10 ms / 50 ms threads) 60 s give ~90 stalls.
STALL_DURATION_MS = 60000
# The target for the flood scenario: kicinski keeps >= 80 %.
KICINSKI_SHARE = 0.8
# mainline must be clearly worse. It keeps 0.73 of ksoftirqd's progress
# (seeds 1-3, tick_hz 0/100/250): with one Rx queue a NET_RX run is one
# poll of 64 packets (v6.1 net_rx_action, the engine's since issue 13.8),
# shorter than the 100 us tick, so each tick's inline pass ends on
# need_resched after 65 us. Until issue 13.8 the simulator's own
# net_rx_action polled the queue again up to 300 packets (the order
# before d75b1ade567f), a pass outlasted the tick and mainline kept
# 0.37; this bound was 0.5 then.
MAINLINE_SHARE = 0.85
FLOOD_DURATION_MS = 10000


def run(sim, *args):
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        cmd = [sim, "--quiet", "--json", path, *args]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)


def by_policy(raw):
    return {r["policy"]: r for r in json.loads(raw)["runs"]}


def check_stall(sim):
    runs = by_policy(run(sim, "--scenario", "stall", "--policy",
                         "ksoftirqd,kicinski",
                         "--duration-ms", str(STALL_DURATION_MS)))
    ks, kc = runs["ksoftirqd"]["stalls"], runs["kicinski"]["stalls"]
    print(f"stalls in {STALL_DURATION_MS} ms: ksoftirqd {ks} "
          f"({runs['ksoftirqd']['stalls_per_s']:.2f}/s), kicinski {kc} "
          f"({runs['kicinski']['stalls_per_s']:.2f}/s)")
    if ks < STALL_RATIO * max(kc, 1):
        sys.exit(f"FAIL: ksoftirqd {ks} stalls is not >= {STALL_RATIO} x "
                 f"max(kicinski {kc}, 1)")
    print(f"ok: ksoftirqd / kicinski >= {ks / max(kc, 1):.0f}")


def check_flood(sim):
    runs = by_policy(run(sim, "--scenario", "flood", "--policy",
                         "mainline,ksoftirqd,kicinski",
                         "--duration-ms", str(FLOOD_DURATION_MS)))
    units = {p: r["app"]["work_units"] for p, r in runs.items()}
    print("app work units:", units)
    base = units["ksoftirqd"]
    if base == 0:
        sys.exit("FAIL: the application made no progress under ksoftirqd")
    if units["kicinski"] < KICINSKI_SHARE * base:
        sys.exit(f"FAIL: kicinski keeps {units['kicinski'] / base:.2f} of "
                 f"ksoftirqd's progress, want >= {KICINSKI_SHARE}")
    if units["mainline"] >= MAINLINE_SHARE * base:
        sys.exit(f"FAIL: mainline keeps {units['mainline'] / base:.2f} of "
                 f"ksoftirqd's progress, want < {MAINLINE_SHARE}")
    print(f"ok: kicinski {units['kicinski'] / base:.2f}, mainline "
          f"{units['mainline'] / base:.2f} of ksoftirqd's progress")


def check_determinism(sim):
    args = ["--duration-ms", "3000", "--tick-hz", "0,250"]
    a = run(sim, *args)
    b = run(sim, *args)
    if a != b:
        sys.exit("FAIL: two runs with the same options differ")
    c = run(sim, "--seed", "2", *args)
    if c == a:
        sys.exit("FAIL: --seed 2 gave the same JSON as --seed 1")
    json.loads(a)
    print(f"ok: {len(a)} bytes of JSON identical twice, another seed differs")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    checks = {"stall": check_stall, "flood": check_flood,
              "determinism": check_determinism}
    checks[sys.argv[2]](sys.argv[1])


if __name__ == "__main__":
    main()
