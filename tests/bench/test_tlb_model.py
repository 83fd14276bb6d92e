#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/tlb-model.c on made-up lackey traces (no valgrind, no DPDK): a
cycle of pages that fits the 64-entry L1 takes no miss once warm, one page
more misses on every access (LRU), more pages than the L2 miss there too;
misses and pages go to the mapping they fall in; bad options and a
library never mapped are refused.

    test_tlb_model.py TLB_MODEL
Exit 0 or 1.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, exit_code  # noqa: E402

MODEL = sys.argv[1]
LIB_LO, LIB_OFF, PC_OFF = 0x100000, 0x1000, 0x20f3
DATA = 0x10000000
MAPS = ("%x-%x r-xp %08x fe:00 1 /fake/librte_net_null.so.23.0\n"
        "%x-%x rw-s 00000000 00:01 2 /memfd:test (deleted)\n"
        "%x-%x rw-p 00000000 00:00 0\n") % (
            LIB_LO, LIB_LO + 0x5000, LIB_OFF, DATA, DATA + 0x4000000,
            0x7f0000000000, 0x7f0000100000)


def trace(pages, packets, base=DATA):
    """Each packet: the marker instruction, then one load of the next page
    of a cycle of @pages, and a store to one fixed anonymous page."""
    pc = LIB_LO + PC_OFF - LIB_OFF
    out = []
    for i in range(packets):
        out.append("I  %08X,4\n" % pc)
        out.append(" L %08X,8\n" % (base + (i % pages) * 4096 + 64))
        out.append(" S %08X,8\n" % 0x7f0000000010)
    return "".join(out)


def run(pages, packets, args=(), maps=MAPS):
    with tempfile.NamedTemporaryFile("w", suffix=".maps") as f:
        f.write(maps)
        f.flush()
        p = subprocess.run([MODEL, "--maps", f.name, "--lib", "librte_net_null",
                            "--pc-offset", "20f3"] + list(args),
                           input=trace(pages, packets), capture_output=True,
                           text=True)
    return p


def mapping(out, name):
    return next((m for m in out["mappings"] if name in m["name"]), None)


def a_cycle_that_fits_takes_no_miss():
    # 63 data pages and the store's page: 64 live pages in 64 entries.
    p = run(63, 5000, ["--warm", "1000", "--packets", "3000"])
    out = json.loads(p.stdout)
    check(p.returncode == 0 and out["packets"] == 3000,
          "3000 packets counted after 1000 (%s)" % p.stdout[:80])
    check(out["l1_misses_per_packet"] == 0,
          "64 live pages in 64 entries: no miss once warm (%s)"
          % out["l1_misses_per_packet"])
    check(out["pages"] == 64, "64 pages seen (%d)" % out["pages"])
    check(out["accesses_per_packet"] == 2, "two accesses a packet")


def one_page_more_misses_on_every_access():
    # 64 data pages and the store's page: 65 live pages in 64 entries.
    p = run(64, 5000, ["--warm", "1000", "--packets", "3000"])
    out = json.loads(p.stdout)
    check(abs(out["l1_misses_per_packet"] - 1.0) < 0.01,
          "a cycle one page over the L1: a miss a packet (%.4f)"
          % out["l1_misses_per_packet"])
    check(out["l2_misses_per_packet"] == 0, "the L2 holds them all")
    memfd = mapping(out, "/memfd:test")
    anon = mapping(out, "[anon]")
    check(memfd is not None and abs(memfd["l1_misses_per_packet"] - 1.0) < 0.01
          and memfd["pages"] == 64,
          "the misses and the 64 pages are the memfd's (%s)" % memfd)
    check(anon is not None and anon["l1_misses_per_packet"] == 0
          and anon["pages"] == 1, "the store's page never misses (%s)" % anon)


def more_pages_than_the_l2_miss_there_too():
    p = run(3000, 12000, ["--warm", "6000", "--packets", "6000"])
    out = json.loads(p.stdout)
    check(abs(out["l2_misses_per_packet"] - 1.0) < 0.01,
          "3000 pages over 2048 entries: an L2 miss a packet (%.4f)"
          % out["l2_misses_per_packet"])


def no_warm_up_counts_from_the_first_packet():
    p = run(8, 100, ["--warm", "0", "--packets", "50"])
    out = json.loads(p.stdout)
    check(p.returncode == 0 and out["packets"] == 50, "50 packets, no warm-up")
    check(abs(out["l1_misses_per_packet"] - 9 / 50) < 1e-9,
          "cold: 9 first misses in 50 packets (%.4f)" % out["l1_misses_per_packet"])


def bad_input_is_refused():
    p = run(8, 100, ["--l1", "0"])
    check(p.returncode == 2 and "--l1: bad value '0'" in p.stderr,
          "--l1 0 refused, named (%d: %s)" % (p.returncode, p.stderr.strip()))
    p = run(8, 100, ["--packets", "ten"])
    check(p.returncode == 2 and "--packets: bad value 'ten'" in p.stderr,
          "--packets ten refused, named (%s)" % p.stderr.strip())
    p = run(8, 100, ["--pc-offset", "0xzz"])
    check(p.returncode == 2 and "--pc-offset: bad value '0xzz'" in p.stderr,
          "--pc-offset 0xzz refused, named (%s)" % p.stderr.strip())
    p = subprocess.run([MODEL, "--lib", "x"], capture_output=True, text=True)
    check(p.returncode == 2 and "--maps" in p.stderr, "missing options named")
    p = run(8, 100, ["--warm", "10"], maps=MAPS.replace("librte_net_null", "other"))
    check(p.returncode == 1 and "never mapped" in p.stderr,
          "a library never mapped: exit 1, said (%s)" % p.stderr.strip())
    p = run(8, 100, ["--warm", "500"])
    check(p.returncode == 1 and "100 of 500 warm-up packets" in p.stderr,
          "a trace that ends in the warm-up: exit 1, said (%s)" % p.stderr.strip())


a_cycle_that_fits_takes_no_miss()
one_page_more_misses_on_every_access()
more_pages_than_the_l2_miss_there_too()
no_warm_up_counts_from_the_first_packet()
bad_input_is_refused()
sys.exit(exit_code())
