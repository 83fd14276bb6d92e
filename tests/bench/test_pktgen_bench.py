#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/pktgen_bench.py's search, latency setting and table, on a
made-up forwarder instead of pktgen (no DPDK, no process).

The made-up forwarder: pktgen offers 0.62 of what a setting asks for
(as pktgen does here), the forwarder takes at most CAPACITY a second and
pushes the rest back (pktgen offers no more), and it loses a share of
what it takes that grows with the rate: nothing below NDR_AT, PDR's
0.5 % at PDR_AT. So the search must find the NDR just under NDR_AT and
the PDR just under PDR_AT, within its precision, and confirm both; a
forwarder that loses at every rate has no NDR; a confirmation that fails
steps down 10 % at a time, three tries at most.

    test_pktgen_bench.py
Exit 0 or 1.
"""
import os
import sys
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, exit_code  # noqa: E402
import pktgen_bench  # noqa: E402

SHARE = 0.62           # what pktgen offers of what a setting asks for
SIZE = 64


class FakeForwarder(pktgen_bench.Bench):
    """Bench with trial() answered by a loss curve over the offered rate
    (Mpps): loss 0 up to ndr_at, rising linearly to 0.005 at pdr_at, and
    on; at most capacity offered. fail_confirm: how many confirmation
    trials (long ones) lose 1 % whatever the rate."""

    def __init__(self, ndr_at, pdr_at, capacity, floor_loss=0.0, fail_confirm=0):
        self.ndr_at, self.pdr_at, self.capacity = ndr_at, pdr_at, capacity
        self.floor_loss = floor_loss
        self.fail_confirm = fail_confirm
        self.trials = 0
        self.history = []
        self.dut = object()   # a forwarder is there: 100 Gb/s link
        self.calls = []

    def trial(self, size, rate, secs, latency=False):
        self.trials += 1
        asked_pps = pktgen_bench.line_pps(size) * rate / 100
        offered = min(asked_pps * SHARE, self.capacity * 1e6)
        mpps = offered / 1e6
        if mpps <= self.ndr_at:
            loss = self.floor_loss
        else:
            loss = 0.005 * (mpps - self.ndr_at) / (self.pdr_at - self.ndr_at)
        if secs >= 10 and self.fail_confirm > 0:
            self.fail_confirm -= 1
            loss = 0.01
        tx = offered * secs
        r = {"size": size, "rate": rate, "secs": secs, "tx": tx, "rx": tx * (1 - loss),
             "asked": asked_pps * secs, "tx_pps": offered, "rx_pps": offered * (1 - loss),
             "loss": loss}
        self.history.append(r)
        self.calls.append((rate, secs))
        return r


def args(**kw):
    a = SimpleNamespace(pdr=0.005, precision=0.02, floor=0.1, trial=1.0, confirm=10.0)
    a.__dict__.update(kw)
    return a


def quiet(t, confirm=False):
    pass


def search_finds_both_bounds():
    b = FakeForwarder(ndr_at=2.0, pdr_at=4.0, capacity=8.0)
    found = pktgen_bench.search(b, SIZE, args(), quiet)
    ndr, pdr = found["ndr"], found["pdr"]
    check(b.calls[0] == (100.0, 1.0), "the first trial asks for 100 %% (as fast as pktgen can): %s"
          % (b.calls[0],))
    check(ndr is not None and ndr["confirmed"] and ndr["loss"] == 0,
          "the NDR is confirmed with no loss: %s" % ndr)
    check(ndr is not None and 2.0 * 0.96 <= ndr["tx_pps"] / 1e6 <= 2.0,
          "the NDR offered rate %.3f Mpps is within 4 %% under 2.0" % (ndr["tx_pps"] / 1e6))
    check(pdr is not None and pdr["confirmed"] and pdr["loss"] <= 0.005,
          "the PDR is confirmed within 0.5 %%: %s" % pdr)
    check(pdr is not None and 4.0 * 0.96 <= pdr["tx_pps"] / 1e6 <= 4.0,
          "the PDR offered rate %.3f Mpps is within 4 %% under 4.0" % (pdr["tx_pps"] / 1e6))
    confirms = [c for c in b.calls if c[1] == 10.0]
    check(len(confirms) == 2, "one 10 s confirmation each: %s" % confirms)
    # half the PDR's received rate: the setting from the trials pktgen held back
    s = b.setting_for(pdr["rx_pps"] / 2)
    t = b.trial(SIZE, s, 10.0)
    check(abs(t["tx_pps"] / (pdr["rx_pps"] / 2) - 1) < 0.01,
          "the latency setting %.3f %% offers %.3f Mpps, half the PDR's %.3f"
          % (s, t["tx_pps"] / 1e6, pdr["rx_pps"] / 1e6))


def a_forwarder_that_keeps_up_ends_the_search_at_once():
    b = FakeForwarder(ndr_at=50.0, pdr_at=60.0, capacity=8.0)
    found = pktgen_bench.search(b, SIZE, args(), quiet)
    check([c for c in b.calls if c[1] == 1.0] == [(100.0, 1.0)],
          "one search trial when 100 %% loses nothing: %s" % b.calls)
    check(found["ndr"]["rate"] == 100.0 and found["pdr"]["rate"] == 100.0,
          "NDR and PDR at 100 %")
    check(b.setting_for(4e6) is None, "no latency setting without a trial pktgen held back")


def a_forwarder_that_always_loses_has_no_ndr():
    b = FakeForwarder(ndr_at=2.0, pdr_at=4.0, capacity=8.0, floor_loss=0.0001)
    found = pktgen_bench.search(b, SIZE, args(), quiet)
    check(found["ndr"] is None, "no NDR: %s" % found["ndr"])
    check(found["pdr"] is not None and found["pdr"]["confirmed"], "a PDR all the same")
    check(min(c[0] for c in b.calls) >= 0.1 / 2, "no trial under half the floor: %s"
          % min(c[0] for c in b.calls))


def a_failed_confirmation_steps_down_three_times_at_most():
    b = FakeForwarder(ndr_at=2.0, pdr_at=4.0, capacity=8.0, fail_confirm=10)
    found = pktgen_bench.search(b, SIZE, args(), quiet)
    confirms = [c for c in b.calls if c[1] == 10.0]
    check(len(confirms) == 6, "three confirmations each for NDR and PDR: %d" % len(confirms))
    pdr_rates = [c[0] for c in confirms[:3]]
    check(all(abs(pdr_rates[i + 1] / pdr_rates[i] - 0.9) < 1e-9 for i in range(2)),
          "each 10 %% lower: %s" % pdr_rates)
    check(found["pdr"] is not None and not found["pdr"]["confirmed"],
          "reported as not confirmed")


def the_table_gives_ratios_per_repeat():
    def res(row, rep, pdr, ndr=None, confirmed=True):
        def x(v):
            return None if v is None else {"setting": 1.0, "offered_pps": v * 1e6,
                                           "received_pps": v * 1e6, "loss": 0.0,
                                           "confirmed": confirmed}
        return {"row": row, "size": 64, "repeat": rep, "pdr": x(pdr), "ndr": x(ndr),
                "latency": {"offered_pps": 1, "samples": 3, "p50_us": 5.0, "p99_us": 9.0,
                            "max_us": 20.0}}
    rs = [res("l2fwd-sirq", 0, 6.0, 1.0), res("testpmd", 0, 5.0, 1.0),
          res("l2fwd-sirq", 1, 6.6, None), res("testpmd", 1, 6.0, 1.0, confirmed=False)]
    table = pktgen_bench.render(rs)
    print(table)
    line = [ln for ln in table.splitlines() if ln.startswith("| l2fwd-sirq")][0]
    check("1.150 (1.200, 1.100)" in line, "PDR ratio: the median of 6.0/5.0 and 6.6/6.0")
    check("6.000 / 6.300 / 6.600" in line, "PDR min / median / max")
    check("1.000 / 1.000 / 1.000 (1 of 2 none found)" in line,
          "an NDR not found is said, and left out of min / median / max")
    tline = [ln for ln in table.splitlines() if ln.startswith("| testpmd")][0]
    check("(1 of 2 not confirmed)" in tline and "| - |" in tline,
          "testpmd: its unconfirmed rates said, no ratio to itself")


for t in (search_finds_both_bounds, a_forwarder_that_keeps_up_ends_the_search_at_once,
          a_forwarder_that_always_loses_has_no_ndr,
          a_failed_confirmation_steps_down_three_times_at_most,
          the_table_gives_ratios_per_repeat):
    print("== " + t.__name__)
    t()
sys.exit(exit_code())
