#!/usr/bin/env bash
# Forwarding yardstick (docs/design.md): l2fwd-sirq against dpdk-testpmd
# (--forward-mode=mac and io) on the same virtual devices, lcores and
# packet size (64 bytes), run alternately: every round runs each variant
# once, in the same order. Three setups (issue 5):
#   null    two net_null ports, one forwarding lcore on CPU 1
#   memif   dpdk-testpmd on CPU 0 as generator and sink in another process
#           (io forwarding of 32 circulating bursts per port: a memif
#           ring full, so the slower side sets the rate) over two
#           net_memif links; the forwarder on CPU 1
#   null2q  two net_null ports with 2 Rx/Tx queues each, two forwarding
#           lcores (CPUs 0 and 1)
#   virtio  dpdk-testpmd on CPU 0 as generator and sink with two net_vhost
#           ports (vhost-user servers), the forwarder on CPU 1 with two
#           net_virtio_user ports (hugepages, --single-file-segments);
#           io forwarding of 32 circulating bursts per port, as memif.
#           Only l2fwd-sirq's defaults and testpmd mac and io.
# Each variant: every policy and execution model with l2fwd-sirq's
# defaults otherwise (no tuning flag: kicinski is the default policy),
# kicinski with the stall scenario's app load, kicinski without priority
# inheritance on the execution lock (--worker-boost 0), the two testpmd
# modes, and on null DPDK's own l2fwd example (dpdk-l2fwd: built by
# bench/dpdk-l2fwd-build.sh, left out with the reason if it cannot be).
# Mpps is packets received by the forwarder (both ports) per second of
# forwarding, for every tool. On null, each l2fwd-sirq run also records
# its threads' CPU time and context switches (/proc/PID/task, twice
# during the run), for where its CPU goes.
# Table on stdout, JSON in out/fwd-bench.json, raw runs in out/fwd-bench/.
#
#   FWD_SETUPS="null memif null2q"   setups to run (default these three;
#                    virtio on request: it needs hugepages)
#   BENCH_HUGE=0     --no-huge for every process (default: hugepages,
#                    reserved and mounted by scripts/hugepages.sh when
#                    root can; --no-huge when they cannot be had)
#   FWD_RUNS=N       rounds (default 5)
#   FWD_SECONDS=S    seconds of forwarding per run (default 5)
#   FWD_ONLY=REGEX   only the variants whose name matches (default all)
#   FWD_BUILD=DIR    the build directory of l2fwd-sirq (default build)
#   FWD_OUT=DIR      raw runs (default out/fwd-bench; emptied first)
#   FWD_JSON=FILE    the JSON summary (default out/fwd-bench.json)
#
# Default: 3 setups x 12 variants x 5 rounds x 5 s, about 20 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

SETUPS=${FWD_SETUPS:-null memif null2q}
RUNS=${FWD_RUNS:-5}
SECONDS_PER_RUN=${FWD_SECONDS:-5}
BUILD=${FWD_BUILD:-build}
L2FWD=$BUILD/apps/l2fwd-sirq/l2fwd-sirq
TESTPMD=${TESTPMD:-/usr/bin/dpdk-testpmd}
PREFIX=fwd-bench-$$
BENCH=fwd-bench
OUT=${FWD_OUT:-out/fwd-bench}
SUMMARY=${FWD_JSON:-out/fwd-bench.json}
source bench/lib.sh
NULL_VDEVS=(--vdev=net_null0 --vdev=net_null1)
MEMIF_BURSTS=${FWD_MEMIF_BURSTS:-32}	# circulating bursts per port: a ring full, the slower side sets the rate
MEMIF_WEDGED_PPS=100000	# below this the loop did not run
HUGEPAGES=512	# 2 MB pages: testpmd -m 512 beside the memif peer's -m 256
VIRTIO_VARIANTS='^(kicinski|testpmd-mac|testpmd-io)$'	# kicinski: the default policy
STALL_LOAD=hold=10ms,period=50ms
# name | l2fwd-sirq options, or testpmd forward mode
VARIANTS=(
	"mainline|--policy mainline"
	"ksoftirqd|--policy ksoftirqd"
	"kicinski|--policy kicinski"
	"deferred|--policy deferred"
	"rt|--policy rt"
	"pushdown|--policy pushdown"
	"pushdown-locked|--policy pushdown-locked"
	"kicinski+stall|--policy kicinski --app-load $STALL_LOAD"
	"kicinski-nopi|--policy kicinski --worker-boost 0"
	"testpmd-mac|mac"
	"testpmd-io|io"
	"dpdk-l2fwd|l2fwd"
)
DPDK_L2FWD_BIN=""

[ -x "$L2FWD" ] || { echo "fwd-bench: $L2FWD missing; run ninja -C $BUILD" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/*
tmp=$(mktemp -d /tmp/fwd-bench.XXXXXX)
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

record() {	# setup variant tool round lcores json-fields...
	printf '{"setup": "%s", "variant": "%s", "tool": "%s", "round": %d, "lcores": %d, %s}\n' \
		"$1" "$2" "$3" "$4" "$5" "$6" >>"$OUT/runs.jsonl"
}

# EAL and application arguments of a net_null setup.
null_eal() {	# setup -> l2fwd-sirq's -l and vdevs
	case $1 in
	null) echo "-l 1" ;;
	null2q) echo "-l 0,1" ;;
	esac
}

null_lcores() { [ "$1" = null2q ] && echo 2 || echo 1; }

# Every thread of process PID: "tid cpu_ns voluntary nonvoluntary comm",
# the CPU time from schedstat (ns), the switches from status.
threads_sample() {	# pid file
	local d tid comm ns vol nvol
	: >"$2"
	for d in /proc/"$1"/task/*; do
		tid=${d##*/}
		read -r comm <"$d/comm" 2>/dev/null || continue
		read -r ns _ <"$d/schedstat" 2>/dev/null || continue
		vol=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$d/status" 2>/dev/null)
		nvol=$(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "$d/status" 2>/dev/null)
		echo "$tid $ns ${vol:-0} ${nvol:-0} $comm" >>"$2"
	done
	echo "at_ns $(date +%s%N)" >>"$2"
}

# l2fwd-sirq times itself on net_null: its report has packets and elapsed_s.
# Its threads are sampled once it forwards (after 0.5 s) and 1 s before
# its end.
run_l2fwd_null() {
	local setup=$1 name=$2 opts=$3 round=$4 tag=$1-$2-$4
	local report=$OUT/$tag.json log=$OUT/$tag.log app=() sampled=""
	[ "$setup" = null2q ] && app=(--rxq 2)
	# shellcheck disable=SC2046,SC2086 # lists of options
	set -- "$L2FWD" $(null_eal "$setup") $(eal_mem 512) --no-pci "${NULL_VDEVS[@]}" \
		--file-prefix="$PREFIX-$round" \
		-- -T 0 --duration "$SECONDS_PER_RUN" --report "$report" "${app[@]}" $opts
	echo "   $*"
	"$@" >"$log" 2>&1 &
	pid=$!
	if [ "$setup" = null ] && [ "$SECONDS_PER_RUN" -ge 3 ]; then
		until grep -qs ' forwards ' "$log"; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.02
		done
		sleep 0.5
		threads_sample "$pid" "$OUT/$tag.threads0"
		sleep $((SECONDS_PER_RUN - 2))
		threads_sample "$pid" "$OUT/$tag.threads1"
		sampled=", \"threads\": [\"$OUT/$tag.threads0\", \"$OUT/$tag.threads1\"]"
	fi
	wait "$pid" || fail "$tag: l2fwd-sirq exited with $?; see $log"
	pid=""
	dpdk_leftovers_rm "$PREFIX-$round"
	record "$setup" "$name" l2fwd-sirq "$round" "$(null_lcores "$setup")" \
		"\"report\": \"$report\"$sampled"
}

# DPDK's l2fwd on the null setup's ports and lcore: one lcore polls both
# ports (-q 2), statistics every second (-T 1, totals since the start,
# printed by that lcore between bursts). Mpps from the first to the last
# total printed, one second apart each; SIGINT ends it.
run_dpdk_l2fwd_null() {
	local setup=$1 name=$2 round=$3 tag=$1-$2-$3
	local log=$OUT/$tag.log totals n first last
	# shellcheck disable=SC2046 # eal_mem gives two or three arguments
	set -- "$DPDK_L2FWD_BIN" -l 1 $(eal_mem 512) --no-pci "${NULL_VDEVS[@]}" \
		--file-prefix="$PREFIX-$round" -- -p 0x3 -q 2 -T 1
	echo "   $*"
	"$@" >"$log" 2>&1 &
	pid=$!
	sleep $((SECONDS_PER_RUN + 2))
	kill -INT "$pid"
	wait "$pid" || fail "$tag: l2fwd exited with $?; see $log"
	pid=""
	dpdk_leftovers_rm "$PREFIX-$round"
	# The first total is the start's (0), the second after a second of
	# warm-up: measured from there.
	totals=$(grep -a -o 'Total packets received: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n +2)
	n=$(echo "$totals" | wc -l)
	[ "$n" -ge 3 ] || fail "$tag: l2fwd printed $n totals; see $log"
	first=$(echo "$totals" | head -1)
	last=$(echo "$totals" | tail -1)
	[ "$last" -gt "$first" ] || fail "$tag: l2fwd forwarded no packets; see $log"
	record "$setup" "$name" dpdk-l2fwd "$round" 1 \
		"\"packets\": $((last - first)), \"seconds\": $((n - 1)), \"log\": \"$log\""
}

# testpmd is interactive, commands on fd 4 through a fifo: "start", SECONDS,
# "stop", which prints the accumulated statistics of the run. Its main
# lcore (CPU 0) only waits for commands.
testpmd_open() {	# log fifo args...
	local log=$1 fifo=$2 _
	shift 2
	rm -f "$fifo"
	mkfifo "$fifo"
	echo "   $*"
	stdbuf -oL "$@" <"$fifo" >"$log" 2>&1 &
	pid=$!
	exec 4>"$fifo"
	for _ in $(seq 200); do
		grep -q '^testpmd> ' "$log" && return 0
		kill -0 "$pid" 2>/dev/null || fail "testpmd exited at start; see $log"
		sleep 0.05
	done
	fail "testpmd gave no prompt; see $log"
}

testpmd_close() {	# log
	echo "quit" >&4
	exec 4>&-
		wait "$pid" || fail "testpmd exited with $?; see $1"
	pid=""
}

run_testpmd_null() {
	local setup=$1 name=$2 mode=$3 round=$4 tag=$1-$2-$4
	local log=$OUT/$tag.log t0 t1 _ rx lcores
	local eal=(-l 0,1) app=(--nb-cores=1)
	lcores=$(null_lcores "$setup")
	if [ "$setup" = null2q ]; then
		eal=(--lcores=0@0,1@0,2@1)
		app=(--nb-cores=2 --rxq=2 --txq=2)
	fi
	# shellcheck disable=SC2046 # eal_mem gives two or three arguments
	testpmd_open "$log" "$tmp/testpmd.in" "$TESTPMD" "${eal[@]}" $(eal_mem 512) --no-pci \
		"${NULL_VDEVS[@]}" --file-prefix="$PREFIX-$round" \
		-- -i --forward-mode="$mode" --total-num-mbufs=16384 "${app[@]}"
	t0=$(date +%s.%N)
	echo "start" >&4
	sleep "$SECONDS_PER_RUN"
	t1=$(date +%s.%N)
	echo "stop" >&4
	for _ in $(seq 100); do
		grep -q 'Accumulated forward statistics' "$log" && break
		sleep 0.05
	done
	testpmd_close "$log"
	dpdk_leftovers_rm "$PREFIX-$round"
	[ "$(grep -c 'forwards packets on' "$log")" -eq "$lcores" ] ||
		fail "$tag: testpmd did not forward on $lcores lcore(s); see $log"
	rx=$(grep -A1 'Accumulated forward statistics' "$log" |
		grep -o 'RX-packets: *[0-9]*' | grep -o '[0-9]*$' || true)
	[ "${rx:-0}" -gt 0 ] || fail "$tag: testpmd forwarded no packets; see $log"
	record "$setup" "$name" testpmd "$round" "$lcores" \
		"\"packets\": $rx, \"seconds\": $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'), \"log\": \"$log\""
}

# memif: the forwarder is the server on CPU 1, the peer (bench/lib.sh)
# the client on CPU 0. One second of warm-up after the injection, then
# SECONDS measured.
peer_up() {	# dir tag
	local try
	for try in 1 2 3; do
		peer_start "$1" "$OUT/$2-peer.log" "$PREFIX-peer" && break
		[ "$try" -lt 3 ] || fail "$2: the peer could not connect"
	done
	peer_inject "$OUT/$2-peer.log" "$MEMIF_BURSTS" ||
		fail "$2: no traffic through memif; see $OUT/$2-peer.log"
	sleep 1
}

run_l2fwd_memif() {
	local name=$1 opts=$2 round=$3 tag=memif-$1-$3
	# shellcheck disable=SC2086 # opts is a list of options
	l2fwd_memif_run "$tag" "$MEMIF_BURSTS" "$SECONDS_PER_RUN" $opts
	record memif "$name" l2fwd-sirq "$round" 1 \
		"\"report\": \"$OUT/$tag.end.json\", \"start_report\": \"$OUT/$tag.start.json\""
}

run_testpmd_memif() {
	local name=$1 mode=$2 round=$3 tag=memif-$1-$3 dir
	local log=$OUT/$tag.log t0 t1 rx0 rx1
	dir=$(mktemp -d "$tmp/$tag.XXXX")
	# shellcheck disable=SC2046 # memif_vdevs gives two arguments
	testpmd_open "$log" "$tmp/testpmd.in" "$TESTPMD" --lcores=0@0,1@1 $(eal_mem 512) \
		--no-pci $(memif_vdevs "$dir" server) --file-prefix="$PREFIX-$round" \
		-- -i --forward-mode="$mode" --nb-cores=1 --total-num-mbufs=32768 \
		--disable-link-check
	echo "start" >&4
	peer_up "$dir" "$tag"
	echo "clear port stats all" >&4
	t0=$(date +%s.%N)
	sleep "$SECONDS_PER_RUN"
	read -r rx0 rx1 < <(testpmd_rx "$log" 4)
	t1=$(date +%s.%N)
	peer_stop
	echo "stop" >&4
	sleep 0.2
	peer_quit
	testpmd_close "$log"
	dpdk_leftovers_rm "$PREFIX-"
	# The memif loop sometimes wedges at start-up (the forwarder gets a
	# few thousand packets and no more); such a run is discarded, once.
	if [ $((rx0 + rx1)) -lt $((MEMIF_WEDGED_PPS * SECONDS_PER_RUN)) ]; then
		echo "fwd-bench: $tag: $((rx0 + rx1)) packets in ${SECONDS_PER_RUN}s: the memif loop wedged; see $log" >&2
		return 1
	fi
	record memif "$name" testpmd "$round" 1 \
		"\"packets\": $((rx0 + rx1)), \"seconds\": $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'), \"log\": \"$log\""
}

# The vhost-user side: testpmd io-forwarding on CPU 0 between two
# net_vhost servers in DIR, commands on fd 3 (bench/lib.sh's peer_*).
# It listens before the forwarder's virtio-user ports connect.
vhost_peer_start() {	# dir log
	local dir=$1 log=$2 _
	rm -f "$dir/peer.in"
	mkfifo "$dir/peer.in"
	stdbuf -oL "$TESTPMD" --lcores=0@0,1@0 --no-pci --file-prefix="$PREFIX-peer" \
		--vdev="net_vhost0,iface=$dir/p0.sock,queues=1" \
		--vdev="net_vhost1,iface=$dir/p1.sock,queues=1" \
		-- -i --forward-mode=io --burst=32 --total-num-mbufs=32768 \
		--disable-link-check <"$dir/peer.in" >"$log" 2>&1 &
	PEER_PID=$!
	exec 3>"$dir/peer.in"
	for _ in $(seq 200); do
		grep -q '^testpmd> ' "$log" && return 0
		kill -0 "$PEER_PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "vhost peer did not start; see $log"
}

virtio_vdevs() {	# dir
	echo "--vdev=net_virtio_user0,path=$1/p0.sock" "--vdev=net_virtio_user1,path=$1/p1.sock"
}

# l2fwd-sirq on CPU 1 with its defaults on the virtio-user ports; SECONDS
# between two reports after one second of warm-up, as memif.
run_l2fwd_virtio() {
	local name=$1 opts=$2 round=$3 tag=virtio-$1-$3 dir rc=0
	local report=$OUT/$tag.json log=$OUT/$tag.log plog=$OUT/$tag-peer.log
	dir=$(mktemp -d "$tmp/$tag.XXXX")
	vhost_peer_start "$dir" "$plog"
	# shellcheck disable=SC2046,SC2086 # lists of options
	set -- "$L2FWD" -l 1 --single-file-segments --no-pci $(virtio_vdevs "$dir") \
		--file-prefix="$PREFIX-l2fwd" -- -T 0 --report "$report" $opts
	echo "   $*"
	stdbuf -oL "$@" >"$log" 2>&1 &
	pid=$!
	until grep -qs ' forwards ' "$log"; do
		kill -0 "$pid" 2>/dev/null || fail "$tag: l2fwd-sirq exited; see $log"
		sleep 0.05
	done
	peer_inject "$plog" "$MEMIF_BURSTS" || fail "$tag: no traffic through virtio; see $plog"
	sleep 1
	report_snapshot "$report" "$OUT/$tag.start.json" "$log"
	sleep "$SECONDS_PER_RUN"
	report_snapshot "$report" "$OUT/$tag.end.json" "$log"
	peer_stop
	kill -INT "$pid"
	wait "$pid" || rc=$?
	pid=""
	peer_quit
	dpdk_leftovers_rm "$PREFIX-"
	[ "$rc" -eq 0 ] || fail "$tag: l2fwd-sirq exited with $rc; see $log"
	record virtio "$name" l2fwd-sirq "$round" 1 \
		"\"report\": \"$OUT/$tag.end.json\", \"start_report\": \"$OUT/$tag.start.json\""
}

# testpmd on the same ports, main lcore on CPU 0 (it only reads commands),
# forwarding lcore on CPU 1; measured as memif.
run_testpmd_virtio() {
	local name=$1 mode=$2 round=$3 tag=virtio-$1-$3 dir
	local log=$OUT/$tag.log plog=$OUT/$tag-peer.log t0 t1 rx0 rx1
	dir=$(mktemp -d "$tmp/$tag.XXXX")
	vhost_peer_start "$dir" "$plog"
	# shellcheck disable=SC2046 # virtio_vdevs gives two arguments
	testpmd_open "$log" "$tmp/testpmd.in" "$TESTPMD" --lcores=0@0,1@1 \
		--single-file-segments --no-pci $(virtio_vdevs "$dir") \
		--file-prefix="$PREFIX-$round" \
		-- -i --forward-mode="$mode" --nb-cores=1 --total-num-mbufs=32768 \
		--disable-link-check
	echo "start" >&4
	peer_inject "$plog" "$MEMIF_BURSTS" || fail "$tag: no traffic through virtio; see $plog"
	sleep 1
	echo "clear port stats all" >&4
	t0=$(date +%s.%N)
	sleep "$SECONDS_PER_RUN"
	read -r rx0 rx1 < <(testpmd_rx "$log" 4)
	t1=$(date +%s.%N)
	peer_stop
	echo "stop" >&4
	testpmd_close "$log"
	peer_quit
	dpdk_leftovers_rm "$PREFIX-"
	[ $((rx0 + rx1)) -gt 0 ] || fail "$tag: testpmd forwarded no packets; see $log"
	record virtio "$name" testpmd "$round" 1 \
		"\"packets\": $((rx0 + rx1)), \"seconds\": $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'), \"log\": \"$log\""
}

echo "== fwd-bench: setups $SETUPS; ${#VARIANTS[@]} variants x $RUNS rounds x ${SECONDS_PER_RUN}s"
bench_memory "$HUGEPAGES"
if [[ $SETUPS =~ (^| )null( |$) ]] && [[ dpdk-l2fwd =~ ${FWD_ONLY:-.} ]]; then
	DPDK_L2FWD_BIN=$(bench/dpdk-l2fwd-build.sh) ||
		echo "fwd-bench: no DPDK l2fwd (bench/dpdk-l2fwd-build.sh said why): dpdk-l2fwd left out" >&2
fi
start=$(date +%s)
for setup in $SETUPS; do
	case $setup in null | memif | null2q) ;;
	virtio) [ -n "$HUGE_DIR" ] ||
		fail "virtio needs hugepages (virtio-user shares its memory with the vhost-user backend): run as root, or leave virtio out of FWD_SETUPS" ;;
	*) fail "unknown setup '$setup' (null, memif, null2q, virtio)" ;; esac
	for round in $(seq "$RUNS"); do
		echo "== $setup: round $round/$RUNS"
		for v in "${VARIANTS[@]}"; do
			name=${v%%|*}
			what=${v#*|}
			[[ $name =~ ${FWD_ONLY:-.} ]] || continue
			[ "$setup" != virtio ] || [[ $name =~ $VIRTIO_VARIANTS ]] || continue
			if [ "$name" = dpdk-l2fwd ]; then
				[ "$setup" = null ] && [ -n "$DPDK_L2FWD_BIN" ] || continue
				run_dpdk_l2fwd_null "$setup" "$name" "$round"
				continue
			fi
			case $setup-$name in
			virtio-testpmd-*) run_testpmd_virtio "$name" "$what" "$round" ;;
			virtio-*) run_l2fwd_virtio "$name" "$what" "$round" ;;
			memif-testpmd-*)
				run_testpmd_memif "$name" "$what" "$round" ||
					run_testpmd_memif "$name" "$what" "$round" ||
					fail "memif-$name-$round: wedged twice" ;;
			memif-*) run_l2fwd_memif "$name" "$what" "$round" ;;
			*-testpmd-*) run_testpmd_null "$setup" "$name" "$what" "$round" ;;
			*) run_l2fwd_null "$setup" "$name" "$what" "$round" ;;
			esac
		done
	done
done

echo "== results ($(($(date +%s) - start)) s in all)"
python3 bench/fwd_bench.py "$OUT/runs.jsonl" "$SUMMARY"
echo "JSON: $SUMMARY; reports and logs: $OUT/"
