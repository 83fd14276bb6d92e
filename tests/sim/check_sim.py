#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The policies' qualitative results, on sirq-sim's own numbers.

    check_sim.py SIRQ_SIM stall|flood|determinism|models-stall|
                          models-flood|models-bh|models-determinism|
                          models-help

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
models-stall, models-flood
             the execution models with their softirq threads and a 1 ms
             timer, beside mainline: every run completes and accounts
             for every packet (arrived = processed + dropped + in the
             ring at the end, processed = flushed + dropped + waiting in
             the TX buffer) and for the CPU (its shares add up to the
             run); the model's threads exist, were woken and ran, with
             CPU time; under rt, TIMER ran only in ktimers/0 (SCHED_FIFO
             1), none inline nor in the worker; NET_RX ran in the
             dispatcher's pass (the irq thread), and in the stall
             scenario more there than in the worker; under the flood the
             repolls of passes that hit their limits are ksoftirqd's, not
             the irq thread's (engine 70cef9a): the worker ran NET_RX
             more often than the irq thread, and the application keeps
             at least RT_FLOOD_SHARE of its CPU share under the pushdown,
             where NET_RX's fair thread is what ksoftirqd is to it under
             rt (before 70cef9a every tick with NET_RX pending ran a pass
             and the application had 10.5 % against 49.9 %); under the
             pushdown,
             NET_RX, NET_TX and TIMER ran only in their sirq-<vector>/0
             threads, nothing inline nor in the worker. mainline, the
             control, ran TIMER inline and has no thread.
models-bh    the application's bottom-half sections (--app-bh-us): the
             BH lock is waited for under rt (ktimers) and pushdown-locked
             (NET_RX's thread among the waiters), and NET_RX's thread never
             waits under pushdown, where it is registered BH-safe; every
             packet is still accounted for.
models-determinism
             the same for the models, sections included (their OS
             threads): identical JSON twice, another seed differs.
models-help  --policy all runs the seven policies and models that
             --help lists.

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


# The execution models, beside mainline as the control.
MODELS = ["rt", "pushdown", "pushdown-locked"]
MODEL_DURATION_MS = 10000
# A 1 ms timer on TIMER: the ktimers/0 thread has something to run.
TIMER_ARGS = ["--timer-us", "1000"]
# Sections of 200 us in every 1 ms of the application's CPU time.
BH_ARGS = ["--app-bh-us", "200", "--app-bh-every-us", "1000"]
SIM_VECS = ["TIMER", "NET_TX", "NET_RX"]
# rt under flood, the application's CPU share against the pushdown's:
# both split the CPU between the application and one fair task that
# polls (ksoftirqd, sirq-net_rx/0), 0.4995 each at seed 1.
RT_FLOOD_SHARE = 0.9


def fail(run, msg):
    sys.exit(f"FAIL: {run['scenario']}/{run['policy']}: {msg}")


def check_accounting(r):
    p = r["packets"]
    if p["arrived"] == 0 or p["processed"] == 0:
        fail(r, f"no traffic: {p}")
    if p["arrived"] != p["processed"] + p["dropped"] + p["in_ring"]:
        fail(r, f"arrived {p['arrived']} != processed {p['processed']} + "
             f"dropped {p['dropped']} + in the ring {p['in_ring']}")
    if p["processed"] != p["tx_flushed"] + p["tx_dropped"] + p["tx_pending"]:
        fail(r, f"processed {p['processed']} != flushed {p['tx_flushed']} + "
             f"dropped {p['tx_dropped']} + pending {p['tx_pending']}")
    total = sum(r["cpu"].values())
    # Every picosecond is someone's (five shares, each rounded to 1e-5);
    # passes run past the end of the run by less than a pass.
    if not 0.9999 <= total <= 1.01:
        fail(r, f"CPU shares add up to {total:.5f}: {r['cpu']}")
    threads = sum(t["cpu"] for t in r["threads"])
    if abs(threads - r["cpu"]["threads"]) > 1e-4 * (1 + len(r["threads"])):
        fail(r, f"threads' CPU {threads:.5f} != cpu.threads "
             f"{r['cpu']['threads']:.5f}")


def handler_runs(r):
    """{context: {vector: runs}}: inline, worker, each thread by name."""
    out = {"inline": r["inline"]["handler_runs"],
           "worker": r["worker"]["handler_runs"]}
    for t in r["threads"]:
        out[t["name"]] = t["handler_runs"]
    return out


def check_ran_only_in(r, vec, where):
    runs = handler_runs(r)
    total = sum(c[vec] for c in runs.values())
    if total == 0:
        fail(r, f"{vec} never ran")
    elsewhere = {k: c[vec] for k, c in runs.items() if k != where and c[vec]}
    if elsewhere or runs.get(where, {}).get(vec, 0) != total:
        fail(r, f"{vec} ran {total} times, {runs.get(where, {}).get(vec, 0)} "
             f"in {where}, also in {elsewhere}")
    print(f"ok: {r['scenario']}/{r['policy']}: {vec} ran {total} times, "
          f"all in {where}")


def thread(r, name):
    for t in r["threads"]:
        if t["name"] == name:
            return t
    fail(r, f"no thread {name}: {[t['name'] for t in r['threads']]}")


def check_models(sim, scenario):
    runs = by_policy(run(sim, "--scenario", scenario, "--policy",
                         ",".join(["mainline"] + MODELS), *TIMER_ARGS,
                         "--duration-ms", str(MODEL_DURATION_MS)))
    for r in runs.values():
        check_accounting(r)
        if r["timer"]["runs"] == 0:
            fail(r, "the timer never ran")
    ml = runs["mainline"]
    if ml["threads"] or ml["cpu"]["threads"] != 0:
        fail(ml, f"threads under mainline: {ml['threads']}")
    check_ran_only_in(ml, "TIMER", "inline")

    for m in MODELS:
        r = runs[m]
        ran = [t for t in r["threads"] if t["calls"] > 0]
        if not ran or r["cpu"]["threads"] <= 0:
            fail(r, f"no softirq thread ran: {r['threads']}")
        for t in ran:
            if t["wakeups"] == 0 or t["cpu"] <= 0:
                fail(r, f"{t['name']} ran {t['calls']} times with "
                     f"{t['wakeups']} wake-ups and CPU {t['cpu']}")
        print(f"ok: {scenario}/{m}: threads CPU {r['cpu']['threads']:.4f}, "
              + ", ".join(f"{t['name']} {t['calls']} calls {t['cpu']:.4f}"
                          for t in ran))

    rt = runs["rt"]
    kt = thread(rt, "ktimers/0")
    if [t["name"] for t in rt["threads"]] != ["ktimers/0"]:
        fail(rt, f"threads {[t['name'] for t in rt['threads']]}, want "
             "ktimers/0 alone")
    if (kt["sched"], kt["prio"]) != ("fifo", 1):
        fail(rt, f"ktimers/0 is {kt['sched']} {kt['prio']}, want fifo 1")
    if kt["handler_runs"]["TIMER"] != rt["timer"]["runs"]:
        fail(rt, f"ktimers/0 ran TIMER {kt['handler_runs']['TIMER']} times, "
             f"the timer ran {rt['timer']['runs']}")
    check_ran_only_in(rt, "TIMER", "ktimers/0")
    if rt["inline"]["as"] != "irq/sim-rx" or rt["inline"]["prio"] != 50:
        fail(rt, f"the dispatcher's pass is {rt['inline']}")
    irq_rx = rt["inline"]["handler_runs"]["NET_RX"]
    worker_rx = rt["worker"]["handler_runs"]["NET_RX"]
    if irq_rx == 0:
        fail(rt, "NET_RX never ran in the irq thread's pass")
    if scenario == "stall" and irq_rx <= worker_rx:
        fail(rt, f"NET_RX ran {irq_rx} times in the irq thread, "
             f"{worker_rx} in the worker: want the irq thread's the most")
    if scenario == "flood":
        if worker_rx <= irq_rx:
            fail(rt, f"NET_RX ran {irq_rx} times in the irq thread, "
                 f"{worker_rx} in the worker: the repolls should be "
                 "ksoftirqd's")
        share = rt["app"]["cpu_share"]
        fair = runs["pushdown"]["app"]["cpu_share"]
        if share < RT_FLOOD_SHARE * fair:
            fail(rt, f"the application has {100 * share:.1f} % of the CPU, "
                 f"{100 * fair:.1f} % under the pushdown: want >= "
                 f"{RT_FLOOD_SHARE} of it")
    print(f"ok: {scenario}/rt: NET_RX ran {irq_rx} times in the irq "
          f"thread, {worker_rx} in the worker; application "
          f"{100 * rt['app']['cpu_share']:.1f} % of the CPU")

    for m in ["pushdown", "pushdown-locked"]:
        r = runs[m]
        names = [t["name"] for t in r["threads"]]
        for vec in SIM_VECS:
            name = f"sirq-{vec.lower()}/0"
            if name not in names:
                fail(r, f"no {name} among {names}")
            if thread(r, name)["sched"] != "other":
                fail(r, f"{name} is not SCHED_OTHER")
            if vec == "NET_TX" and sum(c["NET_TX"] for c in
                                       handler_runs(r).values()) == 0:
                continue	# the flood fills whole TX bursts: no NET_TX
            check_ran_only_in(r, vec, name)
        if r["cpu"]["inline"] != 0 or r["cpu"]["worker"] != 0:
            fail(r, f"CPU inline {r['cpu']['inline']}, worker "
                 f"{r['cpu']['worker']}: all should be the threads'")


def check_models_stall(sim):
    check_models(sim, "stall")


def check_models_flood(sim):
    check_models(sim, "flood")


def check_models_bh(sim):
    runs = by_policy(run(sim, "--scenario", "stall", "--policy",
                         ",".join(MODELS), *TIMER_ARGS, *BH_ARGS,
                         "--duration-ms", str(MODEL_DURATION_MS)))
    for r in runs.values():
        check_accounting(r)
        if r["app"]["bh_sections"] == 0:
            fail(r, "no bottom-half section")
        if r["bh_lock"]["waits"] == 0:
            fail(r, "nobody waited for the BH lock")
        waits = sum(t["lock_waits"] for t in r["threads"])
        print(f"{r['policy']}: {r['app']['bh_sections']} sections, "
              f"{r['bh_lock']['waits']} lock waits (threads {waits}), "
              + ", ".join(f"{t['name']} {t['lock_waits']}"
                          for t in r["threads"] if t["lock_waits"]))
    if thread(runs["rt"], "ktimers/0")["lock_waits"] == 0:
        fail(runs["rt"], "ktimers/0 never waited for the BH lock")
    safe = thread(runs["pushdown"], "sirq-net_rx/0")
    locked = thread(runs["pushdown-locked"], "sirq-net_rx/0")
    if safe["lock_waits"] != 0:
        fail(runs["pushdown"], f"NET_RX's thread, BH-safe, waited "
             f"{safe['lock_waits']} times for the BH lock")
    if locked["lock_waits"] == 0:
        fail(runs["pushdown-locked"], "NET_RX's thread never waited for "
             "the BH lock")
    print(f"ok: NET_RX's thread waited {locked['lock_waits']} times under "
          f"pushdown-locked, 0 under pushdown")


def check_models_determinism(sim):
    args = ["--duration-ms", "3000", "--policy", ",".join(MODELS),
            *TIMER_ARGS, *BH_ARGS]
    a = run(sim, *args)
    b = run(sim, *args)
    if a != b:
        sys.exit("FAIL: two runs of the models with the same options differ")
    c = run(sim, "--seed", "2", *args)
    if c == a:
        sys.exit("FAIL: --seed 2 gave the same JSON as --seed 1")
    doc = json.loads(a)
    if not all(r["threads"] for r in doc["runs"]):
        sys.exit("FAIL: a model run without threads")
    print(f"ok: {len(a)} bytes of JSON identical twice, another seed differs")


def check_models_help(sim):
    out = subprocess.run([sim, "--help"], check=True, capture_output=True,
                         text=True).stdout
    runs = json.loads(run(sim, "--policy", "all", "--scenario", "flood",
                          "--duration-ms", "200"))["runs"]
    names = [r["policy"] for r in runs]
    want = ["mainline", "ksoftirqd", "kicinski", "deferred"] + MODELS
    if names != want:
        sys.exit(f"FAIL: --policy all ran {names}, want {want}")
    listed = [n for n in names if f" {n}" in out]
    if listed != names:
        sys.exit(f"FAIL: --help lists {listed} of {names}")
    print(f"ok: --policy all runs and --help lists {', '.join(names)}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    checks = {"stall": check_stall, "flood": check_flood,
              "determinism": check_determinism,
              "models-stall": check_models_stall,
              "models-flood": check_models_flood,
              "models-bh": check_models_bh,
              "models-determinism": check_models_determinism,
              "models-help": check_models_help}
    checks[sys.argv[2]](sys.argv[1])


if __name__ == "__main__":
    main()
