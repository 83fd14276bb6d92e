#!/usr/bin/env bash
# Low load costs little (issue 21, point 5): CPU and forwarding latency of
# l2fwd-sirq in irq mode (--mode irq, its defaults otherwise) at a few
# offered rates, against dpdk-testpmd --forward-mode=mac (it polls: 100 %
# of a core at any load) on the same ports, run alternately.
#
#   lat-gen (CPU 0)                         forwarder (CPU 1)
#   net_vhost0 (server, p0.sock)  ------->  net_virtio_user0
#   net_vhost1 (server, p1.sock)  <-------  net_virtio_user1
#
# bench/lat-gen.c is the generator and sink, a DPDK primary process on
# CPU 0 owning the vhost-user side: it paces 64-byte frames at the rate
# out of port 0, stamps each with the TSC just before rte_eth_tx_burst(),
# busy-polls port 1 and takes latency = TSC back - stamp. The forwarder
# runs on CPU 1 (-l 1, hugepages, --single-file-segments) on two
# net_virtio_user ports, whose Rx interrupts (the backend writes the
# queue's callfd) wake l2fwd-sirq's irq-mode dispatcher. Over the
# measured window lat-gen also reads utime + stime of the forwarder's
# process (/proc/PID/stat, all its threads): its CPU as a share of one
# core; and how undisturbed the run was: how busy CPU 1 was besides the
# forwarder, and lat-gen's own share of CPU 0 (another engineer's build on
# either CPU shows there; the table flags such runs). l2fwd-sirq's report is taken (SIGUSR1) in the warm-up and after
# the window, for its wake-ups and Rx interrupts per second.
#
# Variants, in this order for every rate of every round:
#   l2fwd-sirq         --mode irq, nothing else (the product's figure)
#   testpmd            dpdk-testpmd --forward-mode=mac, its forwarding
#                      lcore and its main lcore (which waits for commands)
#                      both on CPU 1
#   l2fwd-sirq-tuned   --mode irq plus LOW_TUNING: a tuning, labelled so
#
#   LOW_RATES="1000 10000 100000"   offered rates, frames per second
#   LOW_SECONDS=10                  seconds measured per run (after LOW_WARMUP=1)
#   LOW_RUNS=1                      rounds
#   LOW_TUNING="--irq-tick-us 1000" options of the tuned row; empty: no such row
#   LOW_RETRY=2                     a run disturbed by other load (lat-gen's
#                                   figures, bench/lowload_plot.py) is run
#                                   again up to this many times; the
#                                   discarded ones go to out/lowload/disturbed.jsonl
#   LOW_ONLY=REGEX                  only the variants whose name matches
#   LOW_BUILD=build-lowload         the build with l2fwd-sirq and lat-gen
#   LOW_VARIANTS="name|tool|opts;..."  other variants than the three above
#                                   (tool l2fwd-sirq or testpmd)
#   LOW_HOG="--threads 6 --hold 6 --period 40"  cpu-hog (bench/cpu-hog.c)
#                                   on CPU 1 through each run: a load
#                                   sharing the forwarder's CPU (none by default)
#   LOW_NAME=lowload                names the outputs: out/NAME.json, out/NAME/
#
# Writes out/lowload.json (one object per run: tool, rate_pps, cpu_share,
# p50_us, p99_us, sent, received and more), out/lowload.md and
# out/lowload.svg (bench/lowload_plot.py), logs and raw results in
# out/lowload/. Default: 3 rates x 3 variants x 1 round x ~14 s, about
# 2 minutes on 2 cores. Needs root (hugepages: virtio-user shares its
# memory with the vhost-user backend).
set -euo pipefail
cd "$(dirname "$0")/.."

RATES=${LOW_RATES:-1000 10000 100000}
SECONDS_PER_RUN=${LOW_SECONDS:-10}
WARMUP=${LOW_WARMUP:-1}
RUNS=${LOW_RUNS:-1}
RETRY=${LOW_RETRY:-2}
TUNING=${LOW_TUNING---irq-tick-us 1000}
BUILD=${LOW_BUILD:-build-lowload}
NAME=${LOW_NAME:-lowload}
HOG_ARGS=${LOW_HOG:-}
L2FWD=$BUILD/apps/l2fwd-sirq/l2fwd-sirq
LATGEN=$BUILD/bench/lat-gen
CPU_HOG=$BUILD/bench/cpu-hog
TESTPMD=${TESTPMD:-/usr/bin/dpdk-testpmd}
PREFIX=$NAME-$$
BENCH=lowload-bench
OUT=out/$NAME
HUGEPAGES=256	# 2 MB pages: lat-gen's 8k mbufs, the forwarder's pool, EAL heaps
source bench/lib.sh
# name | tool | l2fwd-sirq options (testpmd: its forward mode)
VARIANTS=(
	"l2fwd-sirq|l2fwd-sirq|--mode irq"
	"testpmd|testpmd|mac"
)
[ -z "$TUNING" ] || VARIANTS+=("l2fwd-sirq-tuned|l2fwd-sirq|--mode irq $TUNING")
if [ -n "${LOW_VARIANTS:-}" ]; then
	IFS=';' read -r -a VARIANTS <<<"$LOW_VARIANTS"
	for v in "${VARIANTS[@]}"; do
		case $(cut -d'|' -f2 <<<"$v") in
		l2fwd-sirq | testpmd) ;;
		*) fail "LOW_VARIANTS: bad variant '$v' (name|l2fwd-sirq|options or name|testpmd|mode)" ;;
		esac
	done
fi
[[ $NAME =~ ^[A-Za-z0-9_-]+$ ]] || fail "LOW_NAME: bad name '$NAME' (letters, digits, - and _)"

number() {	# name value min
	case $2 in
	'' | *[!0-9]*) fail "$1: bad value '$2' (a whole number >= $3)" ;;
	esac
	[ "$2" -ge "$3" ] || fail "$1: bad value '$2' (a whole number >= $3)"
}
for r in $RATES; do number LOW_RATES "$r" 1; done
[ -n "${RATES// /}" ] || fail "LOW_RATES: no rate given"
number LOW_SECONDS "$SECONDS_PER_RUN" 1
number LOW_WARMUP "$WARMUP" 1
number LOW_RUNS "$RUNS" 1
number LOW_RETRY "$RETRY" 0
bins=("$L2FWD" "$LATGEN")
[ -z "$HOG_ARGS" ] || bins+=("$CPU_HOG")
for b in "${bins[@]}"; do
	[ -x "$b" ] || fail "$b missing: meson setup $BUILD -Dbuildtype=release && ninja -C $BUILD"
done
# The figures are those of the binaries in $BUILD: say so if the tree moved on.
if command -v ninja >/dev/null && ! ninja -C "$BUILD" -n 2>/dev/null | grep -q 'no work to do'; then
	echo "$BENCH: warning: $BUILD is older than the source tree (ninja -C $BUILD would rebuild); measuring it as it is" >&2
fi
[ -x "$TESTPMD" ] || fail "$TESTPMD missing (apt-get install dpdk, or TESTPMD=PATH)"

mkdir -p "$OUT"
rm -f "$OUT"/*
tmp=$(mktemp -d /tmp/lowload-bench.XXXXXX)
gen_pid=""
hog_pid=""

# Nothing of a run outlives the script: the forwarder (virtio side) stops
# first, then lat-gen (the vhost-user servers), then sockets, runtime
# directories and hugepage files go.
cleanup() {
	exec 4>&- 2>/dev/null || true
	hog_stop
	if [ -n "$pid" ]; then
		kill -INT "$pid" 2>/dev/null || true
		sleep 0.5
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pid=""
	fi
	if [ -n "$gen_pid" ]; then
		kill -INT "$gen_pid" 2>/dev/null || true
		wait "$gen_pid" 2>/dev/null || true
		gen_pid=""
	fi
	bench_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# lat-gen on CPU 0 with the two vhost-user servers in DIR; it waits for
# the links, probes, warms up, measures, writes RESULT and keeps the ports
# (--hold) until the forwarder has gone.
gen_start() {	# dir rate result log
	local dir=$1 rate=$2 res=$3 log=$4 _
	set -- "$LATGEN" -l 0 --no-pci --file-prefix="$PREFIX-gen" \
		--vdev="net_vhost0,iface=$dir/p0.sock,queues=1" \
		--vdev="net_vhost1,iface=$dir/p1.sock,queues=1" \
		-- --rate "$rate" --warmup "$WARMUP" --duration "$SECONDS_PER_RUN" \
		--cpu-pid-file "$dir/fwd.pid" --watch-cpu 1 --json "$res" --hold --hold-max 30
	echo "   $*"
	stdbuf -oL "$@" >"$log" 2>&1 &
	gen_pid=$!
	for _ in $(seq 300); do
		grep -q 'waiting for the links' "$log" && return 0
		kill -0 "$gen_pid" 2>/dev/null || break
		sleep 0.05
	done
	fail "lat-gen did not start; see $log"
}

# Until lat-gen forwards its probes, then sleep through the warm-up;
# fails if lat-gen or the forwarder exits.
gen_wait_forwarded() {	# genlog fwdlog
	until grep -q 'forwarded;' "$1"; do
		kill -0 "$gen_pid" 2>/dev/null || fail "lat-gen exited; see $1"
		kill -0 "$pid" 2>/dev/null || fail "the forwarder exited; see $2"
		sleep 0.05
	done
}

# Until lat-gen has written its result. One sleep of SLEEP seconds first,
# to the end of the window: this script's own polling (a fork and exec
# every 100 ms) would run on the forwarder's CPU, idle most of the time.
gen_wait_result() {	# result genlog fwdlog sleep
	local limit=$((SECONDS_PER_RUN + WARMUP + 70)) t0=$SECONDS
	sleep "$4"
	until [ -s "$1" ]; do
		kill -0 "$gen_pid" 2>/dev/null || fail "lat-gen exited without a result; see $2"
		kill -0 "$pid" 2>/dev/null || fail "the forwarder exited; see $3"
		[ $((SECONDS - t0)) -lt "$limit" ] || fail "no result after ${limit}s; see $2"
		sleep 0.1
	done
}

# lat-gen leaves once both links are down (the forwarder stopped).
gen_stop() {	# log
	local _
	for _ in $(seq 100); do
		kill -0 "$gen_pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -INT "$gen_pid" 2>/dev/null || true
	wait "$gen_pid" || fail "lat-gen exited with $?; see $1"
	gen_pid=""
}

# LOW_HOG: cpu-hog on the forwarder's CPU from before the warm-up to
# after the window.
hog_start() {	# log
	[ -n "$HOG_ARGS" ] || return 0
	# shellcheck disable=SC2086 # a list of options
	"$CPU_HOG" --cpu 1 $HOG_ARGS --duration $((WARMUP + SECONDS_PER_RUN + 60)) >"$1" 2>&1 &
	hog_pid=$!
}

hog_stop() {
	[ -n "$hog_pid" ] || return 0
	kill -INT "$hog_pid" 2>/dev/null || true
	wait "$hog_pid" 2>/dev/null || true
	hog_pid=""
}

virtio_vdevs() {	# dir
	echo "--vdev=net_virtio_user0,path=$1/p0.sock" "--vdev=net_virtio_user1,path=$1/p1.sock"
}

record() {	# variant tool round rate options json-fields
	printf '{"variant": "%s", "tool": "%s", "round": %d, "rate_pps": %d, "options": "%s", %s}\n' \
		"$1" "$2" "$3" "$4" "$5" "$6" >>"$OUT/runs.jsonl"
}

run_l2fwd() {	# name opts round rate tag
	local name=$1 opts=$2 round=$3 rate=$4 tag=$5 dir rc=0
	local res=$OUT/$tag.gen.json glog=$OUT/$tag.gen.log log=$OUT/$tag.log
	local report=$OUT/$tag.report.json
	dir=$(mktemp -d "$tmp/$tag.XXXX")
	gen_start "$dir" "$rate" "$res" "$glog"
	# shellcheck disable=SC2046,SC2086 # lists of options
	set -- "$L2FWD" -l 1 --single-file-segments --no-pci $(virtio_vdevs "$dir") \
		--file-prefix="$PREFIX-fwd" -- --report "$report" $opts
	echo "   $*"
	stdbuf -oL "$@" >"$log" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/fwd.pid"
	hog_start "$OUT/$tag.hog.log"
	# A report in the warm-up, one after the window: the counters' rates.
	gen_wait_forwarded "$glog" "$log"
	sleep "$(awk -v w="$WARMUP" 'BEGIN { print w / 2 }')"
	report_snapshot "$report" "$OUT/$tag.start.json" "$log"
	gen_wait_result "$res" "$glog" "$log" "$(awk -v w="$WARMUP" -v s="$SECONDS_PER_RUN" 'BEGIN { print s + w / 2 }')"
	report_snapshot "$report" "$OUT/$tag.end.json" "$log"
	hog_stop
	kill -INT "$pid"
	wait "$pid" || rc=$?
	pid=""
	[ "$rc" -eq 0 ] || fail "$tag: l2fwd-sirq exited with $rc; see $log"
	gen_stop "$glog"
	rm -rf "$dir"
	dpdk_leftovers_rm "$PREFIX-"
	record "$name" l2fwd-sirq "$round" "$rate" "$opts" \
		"\"gen\": \"$res\", \"report_start\": \"$OUT/$tag.start.json\", \"report_end\": \"$OUT/$tag.end.json\""
}

# testpmd is interactive, commands on fd 4 through a fifo; both its lcores
# on CPU 1: the forwarding one polls, the main one waits for commands.
run_testpmd() {	# name mode round rate tag
	local name=$1 mode=$2 round=$3 rate=$4 tag=$5 dir _
	local res=$OUT/$tag.gen.json glog=$OUT/$tag.gen.log log=$OUT/$tag.log
	dir=$(mktemp -d "$tmp/$tag.XXXX")
	gen_start "$dir" "$rate" "$res" "$glog"
	mkfifo "$dir/testpmd.in"
	# shellcheck disable=SC2046 # virtio_vdevs gives two arguments
	set -- "$TESTPMD" --lcores=0@1,1@1 --single-file-segments --no-pci \
		$(virtio_vdevs "$dir") --file-prefix="$PREFIX-fwd" \
		-- -i --forward-mode="$mode" --nb-cores=1 --disable-link-check
	echo "   $*"
	stdbuf -oL "$@" <"$dir/testpmd.in" >"$log" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/fwd.pid"
	exec 4>"$dir/testpmd.in"
	for _ in $(seq 300); do
		grep -q '^testpmd> ' "$log" && break
		kill -0 "$pid" 2>/dev/null || fail "$tag: testpmd exited at start; see $log"
		sleep 0.05
	done
	grep -q '^testpmd> ' "$log" || fail "$tag: testpmd gave no prompt; see $log"
	echo "start" >&4
	hog_start "$OUT/$tag.hog.log"
	gen_wait_forwarded "$glog" "$log"
	gen_wait_result "$res" "$glog" "$log" "$((SECONDS_PER_RUN + WARMUP))"
	hog_stop
	echo "stop" >&4
	echo "quit" >&4
	exec 4>&-
	wait "$pid" || fail "$tag: testpmd exited with $?; see $log"
	pid=""
	gen_stop "$glog"
	rm -rf "$dir"
	dpdk_leftovers_rm "$PREFIX-"
	record "$name" testpmd "$round" "$rate" "--forward-mode=$mode" "\"gen\": \"$res\""
}

# How busy the machine is: the share of all CPUs not idle over 1 s.
busy_now() {
	local a b
	read -r -a a < <(head -1 /proc/stat)
	sleep 1
	read -r -a b < <(head -1 /proc/stat)
	awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
		n = split(a, x); split(b, y)
		for (i = 2; i <= 9; i++) t += y[i] - x[i]
		idle = y[5] - x[5] + y[6] - x[6]
		printf "%.0f %% of %d CPUs busy", t ? 100 * (t - idle) / t : 0, '"$(nproc)"'
	}'
}

nvar=0
for v in "${VARIANTS[@]}"; do [[ ${v%%|*} =~ ${LOW_ONLY:-.} ]] && nvar=$((nvar + 1)); done
echo "== lowload-bench: rates $RATES pps; $nvar variant(s) x $RUNS round(s) x (${WARMUP}s warm-up + ${SECONDS_PER_RUN}s)"
echo "   commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- lib apps 2>/dev/null || echo ' (lib/ or apps/ modified)'); load $(cut -d' ' -f1-3 /proc/loadavg); $(busy_now) before the run"
bench_memory "$HUGEPAGES"
[ -n "$HUGE_DIR" ] ||
	fail "no hugepages: virtio-user shares its memory with the vhost-user backend (run as root)"
start=$(date +%s)
discarded=0
for round in $(seq "$RUNS"); do
	for rate in $RATES; do
		echo "== round $round/$RUNS, $rate pps"
		for v in "${VARIANTS[@]}"; do
			IFS='|' read -r name tool opts <<<"$v"
			[[ $name =~ ${LOW_ONLY:-.} ]] || continue
			for attempt in $(seq 0 "$RETRY"); do
				tag=$name-$rate-$round
				[ "$attempt" -eq 0 ] || tag=$name-$rate-$round-again$attempt
				case $tool in
				testpmd) run_testpmd "$name" "$opts" "$round" "$rate" "$tag" ;;
				*) run_l2fwd "$name" "$opts" "$round" "$rate" "$tag" ;;
				esac
				st=0
				tail -n1 "$OUT/runs.jsonl" | python3 bench/lowload_plot.py --line || st=$?
				[ "$st" -eq 0 ] || [ "$st" -eq 3 ] || fail "$tag: bench/lowload_plot.py failed ($st)"
				if [ "$st" -eq 0 ] || [ "$attempt" -ge "$RETRY" ]; then
					break
				fi
				# Disturbed: set aside, and once more after a pause.
				tail -n1 "$OUT/runs.jsonl" >>"$OUT/disturbed.jsonl"
				sed -i '$d' "$OUT/runs.jsonl"
				discarded=$((discarded + 1))
				echo "   disturbed by other load: set aside, run again in 5 s ($((attempt + 1))/$RETRY)"
				sleep 5
			done
		done
	done
done
echo "== results ($(($(date +%s) - start)) s in all; load $(cut -d' ' -f1-3 /proc/loadavg); $(busy_now) after)"
[ "$discarded" -eq 0 ] ||
	echo "   $discarded disturbed run(s) set aside and run again: $OUT/disturbed.jsonl"
python3 bench/lowload_plot.py --collect "$OUT/runs.jsonl" "out/$NAME.json"
python3 bench/lowload_plot.py "out/$NAME.json" --md "out/$NAME.md" --svg "out/$NAME.svg"
echo "JSON: out/$NAME.json; table: out/$NAME.md; plot: out/$NAME.svg; logs: $OUT/"
