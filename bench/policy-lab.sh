#!/usr/bin/env bash
# Policy lab (issue 6, docs/design.md "Two scenarios"): l2fwd-sirq in irq mode
# on CPU 1, its sirqd and the application's threads on the same CPU under
# the Linux scheduler, every policy, several runs each:
#
#   stall  moderate traffic: dpdk-testpmd on CPU 0 io-forwards a fixed
#          population of LAB_BURSTS bursts per port through l2fwd-sirq
#          over two memif links; the application's six threads each want
#          the CPU for 6 ms at random moments, 40 ms apart on average:
#          about 90 % of the CPU, the patch's "webserver at 90 % CPU".
#   stall-harsh  the same with 10 ms bursts: 150 % of a CPU, overloaded
#          (the stall scenario before issue 13).
#   flood  the flood of 4cd13c21b207 (2016) as the commit measured it: two
#          net_null ports (input without end) into a UDP-like receiver
#          on the same CPU (--receiver LAB_FLOOD_RECEIVER): NET_RX spends
#          1 us a packet and queues it on a socket of 256 packets, one
#          reader thread spends 1 us a packet. What the application
#          receives per second, the socket's drops, NET_RX's packets and
#          the CPU split between the reader, sirqd and the dispatcher.
#   mixed  where the BH lock matters: the flood's input and receiver
#          (two net_null ports into --receiver LAB_FLOOD_RECEIVER on CPU
#          1, irq mode) with l2fwd-sirq --probe LAB_MIXED_PROBE: a timer
#          every 1 ms raises TIMER on the flooded lcore, and its callback
#          schedules a tasklet (TASKLET raised from TIMER, not from
#          TASKLET). Per run: timer_p99_us and tasklet_p99_us (the TIMER
#          and TASKLET vectors' raise-to-run p99, log2 buckets),
#          timer_late_p99_us (the timer's lateness from its deadline:
#          TIMER is raised only when the dispatcher or sirqd, holding the
#          execution lock, sees the deadline passed, so the wait for the
#          lock is here and not in timer_p99_us), net_rx_pps (NET_RX's
#          packets per second), app_share (the reader's CPU share), as
#          the flood scenario has them. Not in the default scenarios.
#   flood-burn  the flood as it was before: the same ports forwarded and
#          a CPU-burning load that never touches a packet and does not
#          ask for the CPU (LAB_FLOOD_LOAD, quiet); its application
#          progress. Not in the default scenarios.
#   tick   the stall scenario under kicinski at tick_hz 0 (TSC-exact
#          time, a decision at every look: the "Gleixner" row), 100 and
#          1000, against the default 250 of the stall rows.
#   rr     request/response (issue 22): bench/lat-gen.c on CPU 0 sends
#          requests at a paced rate into l2fwd-sirq on CPU 1 (irq mode,
#          two net_virtio_user ports against lat-gen's vhost-user
#          servers), which sends each back out of its other port: the
#          response. Request latency from lat-gen's TSC stamps, the
#          forwarder's CPU (all its threads) over the window, at low, mid
#          and high load (LAB_RR_RATES), without and with the stall load
#          on CPU 1 (cpu-hog: the threads of --app-load, in a process of
#          their own so that the forwarder's CPU is its own). Modes:
#            the modes of LAB_POLICIES  --policy <mode>
#            threaded      --napi-threaded
#            threaded-busy --napi-threaded-mode busy-poll: every Rx queue's
#                          NAPI thread polls it without end, never
#                          turning its interrupt back on (Linux 6.19)
#            defer         --napi-defer-hard-irqs 100 --gro-flush-timeout-us 20
#            busy          an application thread busy-polls without
#                          sleeping, prefer_busy_poll, budget 64, with
#                          deferral (100, 5 ms) keeping NET_RX out
#            busy-nodefer  the same without prefer_busy_poll or deferral
#            suspend       defer's deferral, --irq-suspend-timeout-us
#                          20000, the application polls once (budget 64,
#                          prefer_busy_poll) and sleeps when it finds
#                          nothing
#          The values are those of the IRQ-suspension authors' own
#          experiment script (defer20, fullbusy, suspend20). Runs once
#          (LAB_RR_RUNS rounds), not per LAB_RUNS; bench/rr_lab.py adds
#          its runs to out/policy-lab.json with the table and plot
#          out/policy-lab-rr.md, out/policy-lab-rr.svg. Needs hugepages
#          (virtio-user). About 9 minutes.
#
# Every scenario runs at the default tick_hz (250, a server kernel's HZ)
# unless it says otherwise. RT throttling is lifted for the run
# (sched_rt_runtime_us -1, restored at exit; LAB_RT_THROTTLE=1 keeps it):
# the dispatcher stands for interrupt context, which the kernel does not
# throttle, and with the default 95 % a fair-class thread keeps 5 % of the
# CPU under any flood.
#
# Modes: the policies and execution models of LAB_POLICIES, each the name
# of an l2fwd-sirq --policy, or a variant NAME=POLICY@CLASSES: POLICY with
# --softirq-thread-sched CLASSES, named NAME in the results (letters,
# digits, . _ -), e.g. pushdown-dl=pushdown@net_rx=deadline:1000/4000 or
# pushdown-s100=pushdown@net_rx=fair:slice=100. The default list is every
# name the lab knows, and only those the built l2fwd-sirq accepts run (it
# is asked: --policy NAME --help, which parses the options and exits
# before EAL starts); the others are named as skipped. A LAB_POLICIES
# given by hand must be accepted whole. Each run's object in
# out/policy-lab.json has "mode" (and "policy", the same, for older
# readers).
#
# NET_RX latency counts from the raise, which the irq-mode dispatcher does
# within one tick (100 us) of the packets' arrival: the gap is bounded by
# the tick, small against the 8 ms stall threshold. Reports per run in
# out/policy-lab/, all runs in out/policy-lab.json; bench/policy_plots.py
# prints the tables and draws the plots (out/policy-lab-*.svg). With
# stall, flood, mixed and rr all run, bench/question_plot.py prints every
# mode against the four targets of the article's question and draws
# out/policy-lab-question.svg (each figure over its target).
#
#   LAB_SCENARIOS="stall flood tick stall-harsh"   (default these four;
#                     also mixed, flood-burn, rr)
#   LAB_POLICIES="mainline ksoftirqd kicinski deferred rt pushdown pushdown-locked"
#                     (default: those of them l2fwd-sirq accepts)
#   LAB_MIXED_PROBE="timer=1ms,tasklet=1ms"   --probe of mixed
#   LAB_RUNS=N        runs per policy (default 3)
#   LAB_SECONDS=S     seconds measured per run (default 10)
#   LAB_STALL_LOAD, LAB_HARSH_LOAD, LAB_FLOOD_LOAD   --app-load of stall,
#                     stall-harsh and flood-burn
#   LAB_FLOOD_RECEIVER                --receiver of flood
#   LAB_OPTS="..."    more l2fwd-sirq options for every run
#   LAB_RR_RATES="1000 10000 100000"  rr: low, mid, high requests/s
#   LAB_RR_SECONDS=5, LAB_RR_RUNS=1   rr: seconds per run, rounds
#   LAB_RR_MODES="<the modes> threaded threaded-busy defer busy busy-nodefer suspend"
#   LAB_RR_HOG="--threads 6 --hold 6 --period 40"  rr: the stall load (cpu-hog)
#   BENCH_HUGE=0      --no-huge (default: hugepages when root can have
#                     them, scripts/hugepages.sh; --no-huge otherwise)
#
# Default: about 10 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIOS=${LAB_SCENARIOS:-stall flood tick stall-harsh}
ALL_MODES="mainline ksoftirqd kicinski deferred rt pushdown pushdown-locked"
MIXED_PROBE=${LAB_MIXED_PROBE:-timer=1ms,tasklet=1ms}
RUNS=${LAB_RUNS:-3}
SECONDS_PER_RUN=${LAB_SECONDS:-10}
BURSTS=${LAB_BURSTS:-8}
STALL_LOAD=${LAB_STALL_LOAD:-hold=6ms,period=40ms,random,threads=6}
HARSH_LOAD=${LAB_HARSH_LOAD:-hold=10ms,period=40ms,random,threads=6}
FLOOD_LOAD=${LAB_FLOOD_LOAD:-hold=50ms,period=50ms,threads=2,quiet}
FLOOD_RECEIVER=${LAB_FLOOD_RECEIVER:-proto=1us,app=1us,rcvbuf=256,threads=1}
TICK_HZ="0 100 1000"
RR_RATES=${LAB_RR_RATES:-1000 10000 100000}
RR_SECONDS=${LAB_RR_SECONDS:-5}
RR_RUNS=${LAB_RR_RUNS:-1}
RR_OTHER_MODES="threaded threaded-busy defer busy busy-nodefer suspend"
RR_HOG=${LAB_RR_HOG:---threads 6 --hold 6 --period 40}
DEFAULT_HZ=250
L2FWD=build/apps/l2fwd-sirq/l2fwd-sirq
TESTPMD=${TESTPMD:-/usr/bin/dpdk-testpmd}
PREFIX=policy-lab-$$
BENCH=policy-lab
OUT=out/policy-lab
source bench/lib.sh
read -r -a EXTRA <<<"${LAB_OPTS:-}"

[ -x "$L2FWD" ] || { echo "policy-lab: $L2FWD missing; run ninja -C build" >&2; exit 1; }

# A mode's l2fwd-sirq options: --policy, and a variant's classes.
mode_args() {	# mode
	case $1 in
	*=*@*) local rest=${1#*=}
		echo "--policy ${rest%%@*} --softirq-thread-sched ${rest#*@}" ;;
	*) echo "--policy $1" ;;
	esac
}
# Its name in the results and file names.
mode_name() { echo "${1%%=*}"; }

# Does the built l2fwd-sirq take the mode? Its options are parsed before
# EAL starts, and --help then exits 0 (2 for a bad value).
policy_ok() {
	case $1 in
	*=*@*) [[ ${1%%=*} =~ ^[A-Za-z0-9._-]+$ ]] || return 1 ;;
	*=* | *@* | *[!A-Za-z0-9._-]*) return 1 ;;
	esac
	# shellcheck disable=SC2046 # the options, one word each
	"$L2FWD" -- $(mode_args "$1") --help >/dev/null 2>&1
}
if [ -n "${LAB_POLICIES:-}" ]; then
	POLICIES=$LAB_POLICIES
	for p in $POLICIES; do
		# shellcheck disable=SC2046 # the mode's options, one word each
		policy_ok "$p" ||
			fail "LAB_POLICIES: l2fwd-sirq does not take '$p' (a --policy, or NAME=POLICY@CLASSES of --softirq-thread-sched, NAME of letters, digits, . _ -)$(
				"$L2FWD" -- $(mode_args "$p") --help 2>&1 >/dev/null | tail -n 1 | sed 's/^/: /')"
	done
else
	POLICIES="" skipped=""
	for p in $ALL_MODES; do
		if policy_ok "$p"; then POLICIES+="${POLICIES:+ }$p"; else skipped+="${skipped:+ }$p"; fi
	done
	[ -z "$skipped" ] ||
		echo "   modes skipped: l2fwd-sirq --policy does not take: $skipped"
fi
RR_MODES=${LAB_RR_MODES:-$POLICIES $RR_OTHER_MODES}
[ "$(id -u)" -eq 0 ] ||
	echo "policy-lab: not root: irq mode cannot use SCHED_FIFO, results will differ" >&2
mkdir -p "$OUT"
rm -f "$OUT"/*
tmp=$(mktemp -d /tmp/policy-lab.XXXXXX)
RT_RUNTIME=/proc/sys/kernel/sched_rt_runtime_us
rt_saved=""
rt_restore() {
	[ -z "$rt_saved" ] || echo "$rt_saved" >"$RT_RUNTIME"
}
if [ "${LAB_RT_THROTTLE:-0}" != 1 ] && [ -w "$RT_RUNTIME" ]; then
	rt_saved=$(cat "$RT_RUNTIME")
	echo -1 >"$RT_RUNTIME"
	echo "   RT throttling lifted for the lab (sched_rt_runtime_us $rt_saved -> -1, restored at exit)"
fi
trap 'rt_restore; bench_cleanup' EXIT
trap 'exit 130' INT TERM

record() {	# scenario mode tick_hz run report [start_report]
	local start=""
	[ -n "${6:-}" ] && start=", \"start_report\": \"$6\""
	printf '{"scenario": "%s", "mode": "%s", "policy": "%s", "tick_hz": %d, "run": %d, "report": "%s"%s}\n' \
		"$1" "$2" "$2" "$3" "$4" "$5" "$start" >>"$OUT/runs.jsonl"
}

# The stall scenario: counters between two reports taken while traffic
# flows, so start-up and shutdown are not in the figures.
run_stall() {	# scenario mode tick_hz run [app-load]
	local name tag
	name=$(mode_name "$2")
	tag=$1-$name-$3-$4
	# shellcheck disable=SC2046 # the mode's options, one word each
	l2fwd_memif_run "$tag" "$BURSTS" "$SECONDS_PER_RUN" --mode irq \
		$(mode_args "$2") --tick-hz "$3" --app-load "${5:-$STALL_LOAD}" "${EXTRA[@]}"
	record "$1" "$name" "$3" "$4" "$OUT/$tag.end.json" "$OUT/$tag.start.json"
}

# The flood scenarios: two net_null ports, counters from start to end.
run_flood() {	# scenario mode run l2fwd-sirq-options...
	local scenario=$1 mode=$2 run=$3 name tag report log
	name=$(mode_name "$mode")
	tag=$1-$name-0-$3 report=$OUT/$1-$name-0-$3.json log=$OUT/$1-$name-0-$3.log
	shift 3
	# shellcheck disable=SC2046 # eal_mem gives two or three arguments, mode_args words
	set -- "$L2FWD" -l 1 $(eal_mem 256) --no-pci --vdev=net_null0 --vdev=net_null1 \
		--file-prefix="$PREFIX-l2fwd" -- -T 0 --mode irq $(mode_args "$mode") \
		"$@" --duration "$SECONDS_PER_RUN" --report "$report" \
		"${EXTRA[@]}"
	echo "   $*"
	"$@" >"$log" 2>&1 &
	pid=$!
	wait "$pid" || fail "$tag: l2fwd-sirq exited with $?; see $log"
	pid=""
	dpdk_leftovers_rm "$PREFIX-"
	record "$scenario" "$name" "$DEFAULT_HZ" "$run" "$report"
}

# rr: the l2fwd-sirq options of each mode.
rr_options() {	# mode
	local defer="--napi-defer-hard-irqs 100 --gro-flush-timeout-us 20"
	local app="--busy-poll --busy-poll-budget 64"
	case $1 in
	threaded) echo "--mode irq --napi-threaded" ;;
	threaded-busy) echo "--mode irq --napi-threaded-mode busy-poll" ;;
	defer) echo "--mode irq $defer" ;;
	busy) echo "--mode irq $app --busy-poll-us 1000000 --prefer-busy-poll --napi-defer-hard-irqs 100 --gro-flush-timeout-us 5000" ;;
	busy-nodefer) echo "--mode irq $app --busy-poll-us 1000000" ;;
	suspend) echo "--mode irq $defer --irq-suspend-timeout-us 20000 $app --busy-poll-us 0 --prefer-busy-poll" ;;
	*) policy_ok "$1" && echo "--mode irq $(mode_args "$1")" ;;
	esac
}

# rr: bench/lowload-bench.sh runs lat-gen and l2fwd-sirq, once without
# and once with the stall load; bench/rr_lab.py turns both into runs.
run_rr() {
	local variants="" m o
	for m in $RR_MODES; do
		o=$(rr_options "$m") ||
			fail "LAB_RR_MODES: unknown mode '$m' (a policy l2fwd-sirq takes, or one of: $RR_OTHER_MODES)"
		variants+="${variants:+;}$(mode_name "$m")|l2fwd-sirq|-T 0 $o ${EXTRA[*]}"
	done
	for kind in quiet stall; do
		echo "== rr: $kind"
		local hog=""
		[ "$kind" = quiet ] || hog=$RR_HOG
		LOW_NAME=policy-lab-rr-$kind LOW_VARIANTS=$variants LOW_RATES=$RR_RATES \
			LOW_SECONDS=$RR_SECONDS LOW_RUNS=$RR_RUNS LOW_RETRY=0 LOW_TUNING="" \
			LOW_BUILD=$(dirname "$(dirname "$(dirname "$L2FWD")")") LOW_HOG=$hog \
			bench/lowload-bench.sh
	done
}

echo "== policy-lab: $SCENARIOS; modes $POLICIES; $RUNS runs x ${SECONDS_PER_RUN}s"
echo "   stall load --app-load $STALL_LOAD (stall-harsh: $HARSH_LOAD), $BURSTS burst(s) per port circulating"
echo "   flood: two net_null ports into --receiver $FLOOD_RECEIVER"
echo "   mixed: the flood's input and receiver, --probe $MIXED_PROBE"
echo "   flood-burn: two net_null ports forwarded, --app-load $FLOOD_LOAD"
bench_memory 256
start=$(date +%s)
for run in $(seq "$RUNS"); do
	for scenario in $SCENARIOS; do
		echo "== $scenario: run $run/$RUNS"
		case $scenario in
		stall)
			for p in $POLICIES; do run_stall stall "$p" "$DEFAULT_HZ" "$run"; done ;;
		stall-harsh)
			for p in $POLICIES; do
				run_stall stall-harsh "$p" "$DEFAULT_HZ" "$run" "$HARSH_LOAD"
			done ;;
		flood)
			for p in $POLICIES; do
				run_flood flood "$p" "$run" --receiver "$FLOOD_RECEIVER"
			done ;;
		mixed)
			for p in $POLICIES; do
				run_flood mixed "$p" "$run" --receiver "$FLOOD_RECEIVER" \
					--probe "$MIXED_PROBE"
			done ;;
		flood-burn)
			for p in $POLICIES; do
				run_flood flood-burn "$p" "$run" --app-load "$FLOOD_LOAD"
			done ;;
		tick)
			for hz in $TICK_HZ; do run_stall tick kicinski "$hz" "$run"; done ;;
		rr)
			[ "$run" -gt 1 ] || run_rr ;;
		*)
			fail "unknown scenario '$scenario' (stall, stall-harsh, flood, mixed, flood-burn, tick, rr)" ;;
		esac
	done
done

echo "== results ($(($(date +%s) - start)) s in all)"
if [ -s "$OUT/runs.jsonl" ]; then
	python3 bench/policy_lab.py "$OUT/runs.jsonl" out/policy-lab.json
	python3 bench/policy_plots.py --out out --prefix policy-lab out/policy-lab.json
else
	rm -f out/policy-lab.json
fi
if [[ " $SCENARIOS " == *" rr "* ]]; then
	python3 bench/rr_lab.py out/policy-lab.json out/policy-lab-rr-quiet.json \
		out/policy-lab-rr-stall.json --md out/policy-lab-rr.md --svg out/policy-lab-rr.svg
fi
# All four columns of the article's question (stall, flood, mixed, rr):
# every mode against the targets, and the frontier plot.
if [ -s out/policy-lab.json ] &&
	[[ " $SCENARIOS " == *" stall "* && " $SCENARIOS " == *" flood "* &&
	   " $SCENARIOS " == *" mixed "* && " $SCENARIOS " == *" rr "* ]]; then
	echo "== the article's question (bench/question_plot.py)"
	python3 bench/question_plot.py --out out out/policy-lab.json
fi
echo "JSON: out/policy-lab.json; tables and plots: out/policy-lab-*; reports and logs: $OUT/"
