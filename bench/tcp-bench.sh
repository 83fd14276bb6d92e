#!/usr/bin/env bash
# tcp-echo against the kernel's TCP in a network namespace (docs/design.md,
# stall scenario), then against a kernel echo server (the yardstick).
#
# 1. Stall scenario, per policy: tcp-echo on lcore 1 (CPU 1) in irq mode
#    with --app-load (three SCHED_OTHER threads on CPU 1, each keeping it
#    10 ms every 50 ms); tcp-echo-client on CPU 0 in the namespace, CONNS
#    connections of 64..4096-byte requests, 1 ms apart. The namespace's
#    route to the server has rto_min RTO_MIN (datacentre hosts lower it
#    from 200 ms; a stalled server then costs real retransmissions). Per
#    policy: the client's TCP retransmissions (RetransSegs, TCPTimeouts,
#    TCPLossProbes of the namespace), request RTT percentiles, and the
#    server's NET_RX stalls >= 8 ms from its JSON report.
# 2. Yardstick, no app load: the same client against tcp-echo (poll mode)
#    and against a kernel echo server (tcp-echo-client --serve on CPU 1)
#    in the same namespace (over loopback): echo throughput with 64 KB..1 MB
#    messages, and RTT of one connection with 64-byte messages.
#
# Table on stdout (bench/tcp_bench.py), JSON in out/tcp-bench/.
#
#   TCP_SECONDS=S      seconds per stall run (default 10)
#   TCP_CONNS=N        connections in the stall runs (default 8)
#   TCP_RTO_MIN=T      rto_min of the namespace route (default 1ms: the
#                      kernel then shows rto:8 in ss -ti, its jiffy floor)
#   TCP_POLICIES=...   (default "mainline ksoftirqd kicinski deferred")
#   TCP_ROUNDS=N       stall runs per policy, alternating (default 1)
#   TCP_APP_LOAD=SPEC  --app-load of the stall runs (default below)
#   BENCH_HUGE=0       --no-huge (default: hugepages when root can have
#                      them, scripts/hugepages.sh; --no-huge otherwise)
#
# Default: about 1.5 minutes on 2 cores. Root only.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_RUN=${TCP_SECONDS:-10}
CONNS=${TCP_CONNS:-8}
RTO_MIN=${TCP_RTO_MIN:-1ms}
POLICIES=${TCP_POLICIES:-"mainline ksoftirqd kicinski deferred"}
ROUNDS=${TCP_ROUNDS:-1}
YARD_SECONDS=5
APP_LOAD=${TCP_APP_LOAD:-hold=10ms,period=50ms,threads=3}
ECHO=build/apps/tcp-echo/tcp-echo
CLIENT=build/apps/tcp-echo/tcp-echo-client
OUT=out/tcp-bench
NS=tcpbench$$
TAP=tbtap$$
NET=10.123.0
PREFIX=tcp-bench-$$
KERNEL_MAC=02:00:00:00:00:02
BENCH=tcp-bench
source bench/lib.sh	# bench_memory, eal_mem, dpdk_leftovers_rm
server=""
kserver=""

[ -x "$ECHO" ] && [ -x "$CLIENT" ] ||
	{ echo "tcp-bench: $ECHO or $CLIENT missing; run ninja -C build" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/*

cleanup() {
	[ -n "$server" ] && { kill -INT "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
	[ -n "$kserver" ] && { kill -TERM "$kserver" 2>/dev/null || true; wait "$kserver" 2>/dev/null || true; }
	ip netns del "$NS" 2>/dev/null || true
	dpdk_leftovers_rm "$PREFIX-"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "tcp-bench: $*" >&2
	exit 1
}

in_ns() {
	ip netns exec "$NS" "$@"
}

# tcp-echo in the namespace, its tap configured, the route's rto_min set.
start_server() {	# tag, tcp-echo options...
	local tag=$1 i
	shift
	# Not through in_ns: $! must be tcp-echo itself (ip execs it).
	# shellcheck disable=SC2046 # eal_mem gives two or three arguments
	ip netns exec "$NS" "$ECHO" -l 1 $(eal_mem 256) --no-pci --file-prefix="$PREFIX-$tag" \
		--vdev=net_tap0,iface="$TAP" -- --ip "$NET.1/24" -T 0 \
		--report "$OUT/server-$tag.json" "$@" >"$OUT/server-$tag.log" 2>&1 &
	server=$!
	for i in $(seq 200); do
		in_ns ip link show "$TAP" >/dev/null 2>&1 && break
		kill -0 "$server" 2>/dev/null || fail "tcp-echo died; see $OUT/server-$tag.log"
		sleep 0.1
	done
	in_ns ip link set "$TAP" address "$KERNEL_MAC"
	in_ns ip addr add "$NET.2/24" dev "$TAP"
	in_ns ip link set "$TAP" up
	in_ns ip route change "$NET.0/24" dev "$TAP" proto kernel scope link \
		src "$NET.2" rto_min "$RTO_MIN"
	# ARP, SYN and the first echo before anything is measured.
	in_ns "$CLIENT" --addr "$NET.1" --conns 1 --messages 1 --max-size 64 \
		--json /dev/null --timeout 10 ||
		fail "no echo from tcp-echo; see $OUT/server-$tag.log"
}

stop_server() {
	kill -INT "$server"
	wait "$server" || fail "tcp-echo exited $?; see $OUT/server-$1.log"
	server=""
}

client() {	# json, client options...
	local json=$1
	shift
	in_ns taskset -c 0 "$CLIENT" --json "$json" --timeout 30 "$@" ||
		fail "tcp-echo-client failed; $json"
}

bench_memory 128
ip netns add "$NS"
in_ns ip link set lo up
echo "tcp-bench: namespace $NS, server $NET.1 (tcp-echo, lcore 1), client $NET.2 on CPU 0, rto_min $RTO_MIN"

STALL=(--conns "$CONNS" --duration "$SECONDS_PER_RUN" --min-size 64 --max-size 4096 --gap-us 1000)
for round in $(seq "$ROUNDS"); do
	for p in $POLICIES; do
		tag=stall-$p-$round
		echo "tcp-bench: stall scenario, $p, round $round: ${SECONDS_PER_RUN} s"
		start_server "$tag" --policy "$p" --mode irq --app-load "$APP_LOAD"
		client "$OUT/client-$tag.json" --addr "$NET.1" "${STALL[@]}"
		stop_server "$tag"
	done
done

THROUGHPUT=(--conns 8 --duration "$YARD_SECONDS" --min-size 65536 --max-size 1048576)
LATENCY=(--conns 1 --duration "$YARD_SECONDS" --min-size 64 --max-size 64)
echo "tcp-bench: yardstick, tcp-echo (poll mode, no load): throughput then RTT"
start_server yard
client "$OUT/client-yard-tcp-echo-throughput.json" --addr "$NET.1" "${THROUGHPUT[@]}"
client "$OUT/client-yard-tcp-echo-rtt.json" --addr "$NET.1" "${LATENCY[@]}"
stop_server yard

echo "tcp-bench: yardstick, kernel echo server on CPU 1: throughput then RTT"
ip netns exec "$NS" taskset -c 1 "$CLIENT" --serve --addr 127.0.0.1 --port 7 >"$OUT/kernel-server.log" 2>&1 &
kserver=$!
sleep 0.5
client "$OUT/client-yard-kernel-throughput.json" --addr 127.0.0.1 "${THROUGHPUT[@]}"
client "$OUT/client-yard-kernel-rtt.json" --addr 127.0.0.1 "${LATENCY[@]}"
kill -TERM "$kserver"
wait "$kserver" || true
kserver=""

python3 bench/tcp_bench.py "$OUT" --rto-min "$RTO_MIN" --seconds "$SECONDS_PER_RUN" \
	--conns "$CONNS" --app-load "$APP_LOAD"
