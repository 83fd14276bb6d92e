#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A forwarder's data-TLB misses on 4 KB pages, modelled (docs/benchmarks.md,
# "One lcore, every policy and model"): the command runs under valgrind's
# lackey, whose trace of every load and store goes through a FIFO into
# bench/tlb-model.c, an LRU model of a 64-entry L1 and a 2048-entry L2
# data TLB. This VM's perf has no hardware counters to count them.
#
#   bench/tlb-model.sh [--warm N] [--packets N] -- COMMAND [ARG...]
#
# A packet is one pass of net_null's receive loop: TLB_LIB
# (librte_net_null) and TLB_PC_OFFSET, the offset of its per-packet store
# of pkt_len in eth_null_rx(). The default offset, 0x20f3, is that of
# Debian 12's librte_net_null.so.23.0 (DPDK 22.11.11-0+deb12u1), checked
# by its SHA-256; another build needs TLB_PC_OFFSET (objdump -d the
# library: the store of a register into 0x24(mbuf) in the receive loop).
# Give the command its own --file-prefix: it is killed once the packets
# are counted. About 2.5 minutes for 100,000 packets after 100,000.
#
#   TLB_BUILD=DIR   the build with bench/tlb-model (default build)
#
# Prints tlb-model's JSON; the command's output goes to TLB_LOG (default
# out/tlb-model.log). Exit 0, 1 on failure, 2 on a bad option, 77 when
# valgrind is missing.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${TLB_BUILD:-$TOP/build}
LIB=${TLB_LIB:-librte_net_null}
LOG=${TLB_LOG:-$TOP/out/tlb-model.log}
KNOWN_SHA=cf6a209e24f4b5b0eba6f0032e57e23499cfdab64a78836bc1e4db21afb4be04
KNOWN_LIB=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0/librte_net_null.so.23.0
WARM=100000
PACKETS=100000

usage() {
	sed -n '/^#   bench/p' "$0" | sed 's/^#   //' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--warm) WARM=${2:?--warm needs a number}; shift 2 ;;
	--packets) PACKETS=${2:?--packets needs a number}; shift 2 ;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) echo "tlb-model.sh: unknown option '$1'" >&2; usage ;;
	esac
done
[ $# -gt 0 ] || { echo "tlb-model.sh: no command after --" >&2; usage; }

if ! command -v valgrind >/dev/null; then
	echo "tlb-model.sh: skipped: valgrind is not installed (apt-get install valgrind)" >&2
	exit 77
fi
[ -x "$BUILD/bench/tlb-model" ] || {
	echo "tlb-model.sh: $BUILD/bench/tlb-model not built (ninja -C $BUILD)" >&2
	exit 1
}
if [ -z "${TLB_PC_OFFSET:-}" ]; then
	if [ "$LIB" != librte_net_null ] || [ ! -f "$KNOWN_LIB" ] ||
	   [ "$(sha256sum "$KNOWN_LIB" | cut -d' ' -f1)" != "$KNOWN_SHA" ]; then
		echo "tlb-model.sh: $LIB is not the build whose per-packet store is known: set TLB_PC_OFFSET" >&2
		exit 1
	fi
	TLB_PC_OFFSET=0x20f3
fi

mkdir -p "$(dirname "$LOG")"
dir=$(mktemp -d)
fifo=$dir/trace
mkfifo "$fifo"
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -INT "$pid" 2>/dev/null || true
		for _ in 1 2 3 4 5; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT

# exec: the PID is valgrind's, whose /proc/PID/maps are the command's.
(exec valgrind --tool=lackey --trace-mem=yes --log-file="$fifo" "$@" >"$LOG" 2>&1) &
pid=$!
rc=0
"$BUILD/bench/tlb-model" --maps "/proc/$pid/maps" --lib "$LIB" \
	--pc-offset "$TLB_PC_OFFSET" --warm "$WARM" --packets "$PACKETS" \
	<"$fifo" || rc=$?
if [ $rc -ne 0 ]; then
	echo "tlb-model.sh: the model counted nothing (exit $rc); the command's output: $LOG" >&2
	exit 1
fi
