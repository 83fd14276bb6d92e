#!/usr/bin/env bash
# Forwarding yardstick (DESIGN.md): l2fwd-sirq against dpdk-testpmd on the
# same two net_null ports (64-byte packets, net_null's default), one
# forwarding lcore on CPU 1, run alternately: every round runs each
# variant once, in the same order. Each run forwards for SECONDS; Mpps is
# packets forwarded (Rx of both ports) / forwarding time, for both tools.
# Table on stdout, JSON in out/fwd-bench.json, raw runs in out/fwd-bench/.
#
#   FWD_RUNS=N       rounds (default 5)
#   FWD_SECONDS=S    seconds of forwarding per run (default 5)
#
# Default: 7 variants x 5 rounds x 5 s, about 3.5 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${FWD_RUNS:-5}
SECONDS_PER_RUN=${FWD_SECONDS:-5}
L2FWD=build/apps/l2fwd-sirq/l2fwd-sirq
TESTPMD=${TESTPMD:-/usr/bin/dpdk-testpmd}
PREFIX=fwd-bench-$$
OUT=out/fwd-bench
EAL=(--no-huge -m 512 --no-pci --vdev=net_null0 --vdev=net_null1)
STALL_LOAD=hold=10ms,period=50ms
# name | what: l2fwd-sirq options, or testpmd forward mode
VARIANTS=(
	"mainline|--policy mainline"
	"ksoftirqd|--policy ksoftirqd"
	"kicinski|--policy kicinski"
	"threaded|--policy threaded"
	"kicinski+stall|--policy kicinski --app-load $STALL_LOAD"
	"testpmd-mac|mac"
	"testpmd-io|io"
)

[ -x "$L2FWD" ] || { echo "fwd-bench: $L2FWD missing; run ninja -C build" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/*
tmp=$(mktemp -d /tmp/fwd-bench.XXXXXX)
pid=""

cleanup() {
	exec 3>&-
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp" /var/run/dpdk/"$PREFIX"-*
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "fwd-bench: $*" >&2
	exit 1
}

# l2fwd-sirq times itself: its report has packets and elapsed_s.
run_l2fwd() {
	local name=$1 opts=$2 round=$3 tag=$1-$3
	local report=$OUT/$tag.json log=$OUT/$tag.log
	# shellcheck disable=SC2086 # opts is a list of options
	set -- "$L2FWD" -l 1 "${EAL[@]}" --file-prefix="$PREFIX-$round" \
		-- -T 0 --duration "$SECONDS_PER_RUN" --report "$report" $opts
	echo "   $*"
	"$@" >"$log" 2>&1 &
	pid=$!
	wait "$pid" || fail "$tag: l2fwd-sirq exited with $?; see $log"
	pid=""
	rm -rf /var/run/dpdk/"$PREFIX-$round"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); \
		sys.exit(0 if sum(l["rx_packets"] for l in r["lcores"]) > 0 else 1)' \
		"$report" || fail "$tag: l2fwd-sirq forwarded no packets; see $report"
	printf '{"variant": "%s", "tool": "l2fwd-sirq", "round": %d, "report": "%s"}\n' \
		"$name" "$round" "$report" >>"$OUT/runs.jsonl"
}

# testpmd is interactive, commands through a fifo: "start", SECONDS, "stop",
# which prints the accumulated statistics of the run. Its main lcore (CPU 0)
# only waits for commands; lcore 1 (CPU 1) forwards.
run_testpmd() {
	local name=$1 mode=$2 round=$3 tag=$1-$3
	local log=$OUT/$tag.log fifo=$tmp/testpmd.in t0 t1 _ rx
	rm -f "$fifo"
	mkfifo "$fifo"
	set -- "$TESTPMD" -l 0,1 "${EAL[@]}" --file-prefix="$PREFIX-$round" \
		-- -i --forward-mode="$mode" --nb-cores=1 --total-num-mbufs=16384
	echo "   $*"
	stdbuf -oL "$@" <"$fifo" >"$log" 2>&1 &
	pid=$!
	exec 3>"$fifo"
	for _ in $(seq 200); do
		grep -q '^testpmd> ' "$log" && break
		kill -0 "$pid" 2>/dev/null || fail "$tag: testpmd exited at start; see $log"
		sleep 0.05
	done
	t0=$(date +%s.%N)
	echo "start" >&3
	sleep "$SECONDS_PER_RUN"
	t1=$(date +%s.%N)
	echo "stop" >&3
	for _ in $(seq 100); do
		grep -q 'Accumulated forward statistics' "$log" && break
		sleep 0.05
	done
	echo "quit" >&3
	exec 3>&-
	wait "$pid" || fail "$tag: testpmd exited with $?; see $log"
	pid=""
	rm -rf /var/run/dpdk/"$PREFIX-$round"
	grep -q 'Logical Core 1 (socket 0) forwards packets on 2 streams' "$log" ||
		fail "$tag: testpmd did not forward on lcore 1 alone; see $log"
	rx=$(grep -A1 'Accumulated forward statistics' "$log" |
		grep -o 'RX-packets: *[0-9]*' | grep -o '[0-9]*$' || true)
	[ "${rx:-0}" -gt 0 ] || fail "$tag: testpmd forwarded no packets; see $log"
	printf '{"variant": "%s", "tool": "testpmd", "round": %d, "packets": %s, "seconds": %s, "log": "%s"}\n' \
		"$name" "$round" "$rx" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')" "$log" >>"$OUT/runs.jsonl"
}

echo "== fwd-bench: ${#VARIANTS[@]} variants x $RUNS rounds x ${SECONDS_PER_RUN}s, two net_null ports, forwarding on CPU 1"
start=$(date +%s)
for round in $(seq "$RUNS"); do
	echo "== round $round/$RUNS"
	for v in "${VARIANTS[@]}"; do
		name=${v%%|*}
		what=${v#*|}
		case $name in
		testpmd-*) run_testpmd "$name" "$what" "$round" ;;
		*) run_l2fwd "$name" "$what" "$round" ;;
		esac
	done
done

echo "== results ($(($(date +%s) - start)) s in all)"
python3 bench/fwd_bench.py "$OUT/runs.jsonl" out/fwd-bench.json
echo "JSON: out/fwd-bench.json; reports and logs: $OUT/"
