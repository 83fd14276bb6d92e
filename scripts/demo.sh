#!/usr/bin/env bash
# Install dependencies, build, and run the main job: the two scenarios on
# the real scheduler. l2fwd-sirq in irq mode on CPU 1 with its sirqd and
# the application's threads on the same CPU, under all four policies:
#   stall  traffic from dpdk-testpmd over two memif links, six application
#          threads each wanting the CPU 6 ms at random moments (about
#          90 % of it);
#   flood  two net_null ports into a UDP-like receiver on the same CPU
#          (the flood of 4cd13c21b207): packets the application received.
# Then the same two scenarios in the simulator (sirq-sim, simulated time).
# DPDK runs on hugepages, reserved and mounted by scripts/hugepages.sh as
# root (the lab prints which memory it uses); without them, --no-huge.
# Tables on stdout; JSON, tables and SVG plots in out/. Installs only
# what it needs (./scripts/install-deps.sh --demo) and builds only
# l2fwd-sirq and sirq-sim: 3 min 30 s on a fresh Debian 12 machine with
# 2 cores, apt included (apt and the build about 70 s, the lab 138 s).
#
#   DEMO_DURATION=S   seconds per policy and scenario (default 8)
#   BENCH_HUGE=0      --no-huge even where hugepages can be had
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh --demo

# Only what the demo runs: l2fwd-sirq and sirq-sim (`ninja -C build`
# builds the rest, tests included, when you want it).
echo "== build (build/): l2fwd-sirq, sirq-sim"
if [ -d build ]; then
	meson setup --reconfigure build >/dev/null
else
	meson setup build >/dev/null
fi
ninja -C build apps/l2fwd-sirq/l2fwd-sirq tools/sirq-sim

echo
echo "== the policy lab, one run per policy: bench/policy-lab.sh (LAB_RUNS=3 for the full lab)"
LAB_SCENARIOS="stall flood" LAB_RUNS=1 LAB_SECONDS=${DEMO_DURATION:-8} \
	./bench/policy-lab.sh

echo
echo "== the same scenarios on simulated time: build/tools/sirq-sim --json out/demo-sim.json"
./build/tools/sirq-sim --json out/demo-sim.json
echo
echo "JSON: out/policy-lab.json (l2fwd-sirq runs), out/demo-sim.json (simulator)"
echo "tables and plots: out/policy-lab-tables.md, out/policy-lab-*.svg"
echo "docs: README.md, docs/policies.md, docs/l2fwd-sirq.md, docs/benchmarks.md"
