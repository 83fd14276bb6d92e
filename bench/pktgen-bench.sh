#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Forwarding throughput as DPDK users measure it: pktgen-dpdk drives
# l2fwd-sirq (its defaults, one port that sends back what it receives),
# then dpdk-testpmd (mac forwarding, --port-topology=loop) the same way,
# over a vhost-user link (the forwarder the server on CPU 0, pktgen's
# virtio-user port on CPU 1), beside pktgen looped to itself (a net_ring
# port) as the ceiling. For each at 64 and 1518 bytes: NDR (no loss) and
# PDR (at most 0.5 % lost) by a binary search over 1-second trials of
# pktgen's rate setting, a 10-second confirmation trial of each, and
# pktgen's latency at half the PDR; REPEATS times (default 3), the rows
# alternated within each repeat. bench/pktgen_bench.py has the details
# (loss under vhost-user's push-back, the lcores, why not memif).
#
#   bench/pktgen-bench.sh [REPEATS]
#
# Environment:
#   PKTGEN, PKTGEN_SRC, PKTGEN_CACHE  pktgen, as bench/pktgen-build.sh takes
#                      it (a binary, or a release tarball, a source tree or a
#                      directory of tarballs to build from)
#   L2FWD_SIRQ         default build/apps/l2fwd-sirq/l2fwd-sirq
#   TESTPMD            default dpdk-testpmd
#   PKTGEN_SIZES       frame sizes (default 64,1518)
#   PKTGEN_ROWS        default ceiling,l2fwd-sirq,testpmd
#   PKTGEN_TRIAL_S, PKTGEN_CONFIRM_S   trial and confirmation (1, 10)
#   PKTGEN_PRECISION   the search's end, a share of the rate (0.05)
#   BENCH_HUGE=0       --no-huge for every process (default: hugepages,
#                      reserved by scripts/hugepages.sh when root can)
#   OUT                default out/pktgen-bench: trials.jsonl (every trial),
#                      results.json, logs
#
# Prints the Markdown table on stdout, each trial on stderr. Root. Exit
# 0; 77 when there is no pktgen (the message says how to give one) or no
# dpdk-testpmd; 2 on a bad argument; 1 when a run fails.
#
# In the Debian 13 root (DPDK 24.11, pktgen 24.10.x):
#   PKTGEN_SRC=~/pktgen-24.10.3.tar.gz ./scripts/debian-run.sh trixie \
#       'L2FWD_SIRQ=build-trixie/apps/l2fwd-sirq/l2fwd-sirq bench/pktgen-bench.sh'
set -euo pipefail
cd "$(dirname "$0")/.."

repeats=${1:-3}
case $repeats in ''|*[!0-9]*|0) echo "pktgen-bench: REPEATS is a number >= 1, not '$repeats'" >&2; exit 2 ;; esac
l2fwd=${L2FWD_SIRQ:-build/apps/l2fwd-sirq/l2fwd-sirq}
testpmd=${TESTPMD:-dpdk-testpmd}
out=${OUT:-out/pktgen-bench}
[ -x "$l2fwd" ] || { echo "pktgen-bench: no l2fwd-sirq at $l2fwd (L2FWD_SIRQ)" >&2; exit 2; }
command -v "$testpmd" >/dev/null || { echo "pktgen-bench: no $testpmd (TESTPMD)" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "pktgen-bench: needs root (hugepages, DPDK's runtime directory)" >&2; exit 1; }

rc=0
pktgen=$(bench/pktgen-build.sh) || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

huge=1
if [ "${BENCH_HUGE:-1}" = 0 ]; then
	huge=0
elif ! ./scripts/hugepages.sh 400 >&2; then
	echo "pktgen-bench: no hugepages: every process --no-huge" >&2
	huge=0
fi
mkdir -p "$out"
echo "pktgen-bench: $pktgen, DPDK $(pkg-config --modversion libdpdk 2>/dev/null || echo '?')," \
	"$(nproc) CPUs, $([ "$huge" = 1 ] && echo hugepages || echo --no-huge)" >&2
exec python3 bench/pktgen_bench.py --pktgen "$pktgen" --l2fwd "$l2fwd" --testpmd "$testpmd" \
	--repeats "$repeats" --sizes "${PKTGEN_SIZES:-64,1518}" --rows "${PKTGEN_ROWS:-ceiling,l2fwd-sirq,testpmd}" \
	--trial "${PKTGEN_TRIAL_S:-1}" --confirm "${PKTGEN_CONFIRM_S:-10}" \
	--precision "${PKTGEN_PRECISION:-0.05}" --huge "$huge" --out "$out"
