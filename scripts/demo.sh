#!/usr/bin/env bash
# Install dependencies, build, and run the main job: the stall scenario on
# real threads. l2fwd-sirq forwards traffic from dpdk-testpmd over two
# memif links, in irq mode, with three application threads on its CPU that
# each keep it 10 ms every 50 ms, under mainline, ksoftirqd and kicinski.
# One table at the end; JSON reports in out/. Then the engine demo (stall
# and flood, all four policies, on simulated time). About a minute after
# the build on 2 cores.
#
#   DEMO_DURATION=S   seconds per policy (default 12)
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh

echo "== build (build/)"
if [ -d build ]; then
	meson setup --reconfigure build >/dev/null
else
	meson setup build >/dev/null
fi
ninja -C build

DURATION=${DEMO_DURATION:-12}
POLICIES=(mainline ksoftirqd kicinski)
APP_LOAD=hold=10ms,period=50ms		# 3 threads at SCHED_OTHER (default)
L2FWD=build/apps/l2fwd-sirq/l2fwd-sirq
TESTPMD=/usr/bin/dpdk-testpmd
PREFIX=sirq-demo-$$

mkdir -p out
tmp=$(mktemp -d /tmp/sirq-demo.XXXXXX)	# memif sockets, testpmd's stdin
pids=()

cleanup() {
	local pid
	exec 3>&-
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp" /var/run/dpdk/"$PREFIX"-*
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] ||
	echo "demo: not root: irq mode cannot use SCHED_FIFO, results will differ" >&2

# RX-packets of both testpmd ports, from a fresh "show port stats all".
testpmd_rx() {
	local log=$1 before i
	before=$(grep -c 'NIC statistics for port 1' "$log" || true)
	echo "show port stats all" >&3
	for i in $(seq 40); do
		sleep 0.05
		[ "$(grep -c 'NIC statistics for port 1' "$log" || true)" -gt "$before" ] && break
	done
	sleep 0.05
	grep -o 'RX-packets: *[0-9]*' "$log" | tail -2 | grep -o '[0-9]*$' | tr '\n' ' '
}

# testpmd sends one burst per port (tx_first) and then forwards what comes
# back: a fixed population of 64 packets circulates through l2fwd-sirq,
# moderate traffic whose rate shows how long packets wait. memif drops
# what the server sends before the client has polled once, so testpmd
# polls a moment first; if the burst is lost all the same, again.
start_traffic() {
	local log=$1 try rx0 rx1
	echo "start" >&3
	sleep 0.3
	echo "stop" >&3
	for try in 1 2 3 4 5; do
		echo "start tx_first" >&3
		sleep 0.3
		read -r rx0 rx1 < <(testpmd_rx "$log")
		[ "${rx0:-0}" -gt 0 ] && [ "${rx1:-0}" -gt 0 ] && return 0
		echo "demo: no traffic yet (try $try), injecting again"
		echo "stop" >&3
		sleep 0.2
	done
	return 1
}

# Start testpmd as memif client, its commands on fd 3. Interactive, so that
# forwarding stops ("stop") before either side closes its ports: memif can
# crash a process whose peer leaves during traffic. 0 once both links are
# up (testpmd reads commands only after its start-up link check).
start_testpmd() {
	local policy=$1 sock=$2 log=$3 i
	set -x
	stdbuf -oL "$TESTPMD" --lcores=0@0,1@0 --no-huge -m 256 --no-pci \
		--file-prefix="$PREFIX-testpmd-$policy" \
		--vdev=net_memif0,role=client,socket="$sock/p0.sock",socket-abstract=no \
		--vdev=net_memif1,role=client,socket="$sock/p1.sock",socket-abstract=no \
		-- -i --forward-mode=io --burst=32 --total-num-mbufs=16384 \
		<"$sock/testpmd.in" >"$log" 2>&1 &
	{ set +x; } 2>/dev/null
	testpmd=$!
	pids+=("$testpmd")
	exec 3>"$sock/testpmd.in"
	for i in $(seq 300); do
		grep -A1 '^Checking link statuses' "$log" | grep -q '^Done' && break
		kill -0 "$testpmd" 2>/dev/null || break
		sleep 0.05
	done
	grep -q 'Failed to connect' "$log" || return 0
	echo "demo: testpmd could not connect, starting it again"
	echo "quit" >&3
	exec 3>&-
	wait "$testpmd" || true
	unset 'pids[-1]'
	return 1
}

run_policy() {
	local policy=$1 sock=$tmp/$1 report=out/demo-$1.json
	local l2log=out/demo-$1-l2fwd.log tplog=out/demo-$1-testpmd.log
	local l2fwd testpmd try i rc=0

	mkdir "$sock"
	mkfifo "$sock/testpmd.in"
	rm -f "$report" "out/demo-$1.start.json"
	echo "== $policy: l2fwd-sirq (CPU 1, memif server) <-> dpdk-testpmd (CPU 0, io forwarding)"
	set -x
	stdbuf -oL "$L2FWD" -l 1 --no-huge -m 256 --no-pci --file-prefix="$PREFIX-l2fwd-$policy" \
		--vdev=net_memif0,role=server,socket="$sock/p0.sock",socket-abstract=no \
		--vdev=net_memif1,role=server,socket="$sock/p1.sock",socket-abstract=no \
		-- -T 0 --policy "$policy" --mode irq --app-load "$APP_LOAD" \
		--report "$report" >"$l2log" 2>&1 &
	{ set +x; } 2>/dev/null
	l2fwd=$!
	pids+=("$l2fwd")
	until grep -q ' forwards ' "$l2log"; do
		kill -0 "$l2fwd" 2>/dev/null || { cat "$l2log"; return 1; }
		sleep 0.05
	done

	for try in 1 2 3; do
		start_testpmd "$policy" "$sock" "$tplog" && break
		[ "$try" -lt 3 ] || return 1
	done
	if ! start_traffic "$tplog"; then
		echo "demo: $policy: no traffic through memif; see $tplog, $l2log" >&2
		return 1
	fi

	# Counters at the start of the traffic (SIGUSR1 writes the report),
	# then DURATION seconds of it; the renderer takes the difference.
	echo "   traffic flows; SIGUSR1 for the baseline report, then ${DURATION}s"
	kill -USR1 "$l2fwd"
	for i in $(seq 60); do
		[ -s "$report" ] && break
		kill -0 "$l2fwd" 2>/dev/null || { cat "$l2log"; return 1; }
		sleep 0.05
	done
	if [ -s "$report" ]; then
		mv "$report" "out/demo-$1.start.json"
	else
		echo "demo: $policy: no baseline report within 3 s (its timer did not run); rates over the whole run" >&2
	fi
	sleep "$DURATION"
	echo "stop" >&3
	sleep 0.2
	echo "   testpmd stopped; SIGINT to l2fwd-sirq (final report), then quit testpmd"
	kill -INT "$l2fwd"
	wait "$l2fwd" || rc=$?
	echo "quit" >&3
	exec 3>&-
	wait "$testpmd" || echo "demo: $policy: testpmd exited with $?; see $tplog" >&2
	pids=()
	if [ "$rc" -ne 0 ] || [ ! -s "$report" ]; then
		echo "demo: $policy: l2fwd-sirq exited with $rc; see $l2log" >&2
		return 1
	fi
}

for p in "${POLICIES[@]}"; do
	run_policy "$p"
done

echo
echo "== stall scenario: moderate traffic (64 packets circulating testpmd <-> l2fwd-sirq),"
echo "   irq mode, --app-load $APP_LOAD (3 threads on the forwarding CPU), ${DURATION}s each"
reports=()
for p in "${POLICIES[@]}"; do reports+=("out/demo-$p.json"); done
python3 bench/render_demo.py out/demo-summary.json "${reports[@]}"
echo
echo "== engine simulation (simulated time, all four policies): build/tools/sirq-sim --json out/demo-engine.json"
./build/tools/sirq-sim --json out/demo-engine.json
echo
echo "JSON: out/demo-summary.json, out/demo-<policy>.json (l2fwd-sirq reports), out/demo-engine.json"
echo "logs: out/demo-<policy>-l2fwd.log, out/demo-<policy>-testpmd.log"
echo "docs: README.md, docs/l2fwd-sirq.md (options, report fields, telemetry), docs/"
