#!/usr/bin/env bash
# Kernel lab: the policy lab's two scenarios against this machine's own
# kernel, whose softirq policy (Linux >= 6.5) is libsirq's `mainline`
# (DESIGN.md, "Two scenarios"). Two network namespaces joined by a veth
# pair; the receiver's side has its receive path steered onto CPU 1 by RPS
# (rx-0/rps_cpus), so NET_RX for it runs on CPU 1, and every sender and
# client runs on CPU 0.
#
#   flood    udp-flood on CPU 0 sends 18-byte datagrams with sendmmsg(), flat
#            out or paced (KLAB_RATES); udp-sink on CPU 1 (SCHED_OTHER)
#            reads them with recvmmsg() and spends KLAB_COSTS ns of CPU on
#            each: received pps, the socket's drops, the split of CPU 1
#            (4cd13c21b207's UDP flood).
#   stall    a kernel TCP echo server (tcp-echo-client --serve, epoll) on
#            CPU 1 with cpu-hog on CPU 1 (the policy lab's stall load: six
#            threads keeping the CPU 10 ms at random moments, 40 ms apart on
#            average); the client of bench/tcp-bench.sh on CPU 0: echo RTT
#            percentiles, retransmissions; netrx-probe's ICMP echoes (answered
#            inside NET_RX on CPU 1) for NET_RX waits and waits >= 8 ms.
#   libsirq  the same udp-flood, paced, into l2fwd-sirq on CPU 1 (irq mode,
#            KLAB_POLICY) through the veth end (net_af_packet) instead of the
#            kernel's receive path, as a receiver (--receiver: NET_RX spends
#            KLAB_PROTO a packet, a reader thread on CPU 1 spends each of
#            KLAB_COSTS): what libsirq's reader receives at the same rate.
#            The receiver's veth has no address and no RPS there: the
#            kernel's part (veth to the packet socket's ring) runs on the
#            sender's CPU, as a NIC's DMA would, and CPU 1 is libsirq's.
#
#   KLAB_SCENARIOS="flood stall libsirq"   (default all three)
#   KLAB_RUNS=N          runs of each case (default 3)
#   KLAB_SECONDS=S       seconds measured per run, after 1 s of warm-up (default 10)
#   KLAB_COSTS="0 1000 3000"   receiver's CPU work per datagram, ns
#   KLAB_RATES="0 300000"      sender's packets/s; 0: as fast as it goes
#   KLAB_SIZE=18         UDP payload bytes
#   KLAB_RCVBUF=BYTES    receiver's SO_RCVBUF (default: the kernel's rmem_default)
#   KLAB_STALL_HOG="--threads 6 --hold 10 --period 40"   cpu-hog options
#   KLAB_CONNS=8         connections of the stall client
#   KLAB_RTO_MIN=1ms     rto_min of the client's route (as tcp-bench.sh)
#   KLAB_POLICY="mainline"   l2fwd-sirq's policies (e.g. "mainline ksoftirqd")
#   KLAB_PROTO=1us       libsirq's NET_RX cost a packet (the kernel's path
#                        to the socket is of that order here)
#   KLAB_LIBSIRQ_OPTS="..."   instead of the receiver per cost: these
#                        l2fwd-sirq options, once per rate (e.g. none: it
#                        forwards into net_null)
#
# Results: out/kernel-lab/ (one JSON per run, logs), out/kernel-lab.json
# (all runs) and out/kernel-lab.md (tables, bench/kernel_lab.py). Root
# only. Default: about 6 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIOS=${KLAB_SCENARIOS:-flood stall libsirq}
RUNS=${KLAB_RUNS:-3}
SECONDS_PER_RUN=${KLAB_SECONDS:-10}
WARMUP=1
COSTS=${KLAB_COSTS:-0 1000 3000}
RATES=${KLAB_RATES:-0 300000}
SIZE=${KLAB_SIZE:-18}
RCVBUF=()
[ -z "${KLAB_RCVBUF:-}" ] || RCVBUF=(--rcvbuf "$KLAB_RCVBUF")
read -r -a HOG <<<"${KLAB_STALL_HOG:---threads 6 --hold 10 --period 40}"
CONNS=${KLAB_CONNS:-8}
RTO_MIN=${KLAB_RTO_MIN:-1ms}
POLICIES=${KLAB_POLICY:-mainline}
PROTO=${KLAB_PROTO:-1us}
read -r -a LIBSIRQ_OPTS <<<"${KLAB_LIBSIRQ_OPTS:-}"
TX_CPU=0
RX_CPU=1
BIN=build/bench
CLIENT=build/apps/tcp-echo/tcp-echo-client
L2FWD=build/apps/l2fwd-sirq/l2fwd-sirq
OUT=out/kernel-lab
NS_TX=klab$$-tx
NS_RX=klab$$-rx
VETH_TX=kl$$t
VETH_RX=kl$$r
NET=10.124.0
TX_IP=$NET.1
RX_IP=$NET.2
PORT=9000
PREFIX=kernel-lab-$$
pids=()

fail() {
	echo "kernel-lab: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] ||
	fail "needs root (network namespaces, RPS, raw ICMP, SCHED_FIFO for l2fwd-sirq); nothing was done"
for t in udp-flood udp-sink cpu-hog netrx-probe; do
	[ -x "$BIN/$t" ] || fail "$BIN/$t missing; run ninja -C build"
done
[ "$(nproc)" -ge 2 ] || fail "needs CPUs $TX_CPU and $RX_CPU"

# Background processes are started as "ip netns exec NS PROG" (ip execs
# PROG), never through a shell function, so that $! is PROG itself.
# Nothing of a run outlives the script: its processes, its namespaces
# (which take the veth pair with them), l2fwd-sirq's runtime directory.
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	ip netns del "$NS_TX" 2>/dev/null || true
	ip netns del "$NS_RX" 2>/dev/null || true
	rm -rf /var/run/dpdk/"$PREFIX"*
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_tx() { ip netns exec "$NS_TX" "$@"; }
in_rx() { ip netns exec "$NS_RX" "$@"; }

# A long command in a namespace, waited for in the background: bash runs
# the INT/TERM trap at once during "wait", only after a foreground command.
in_ns_wait() {	# netns command...
	local p
	ip netns exec "$@" &
	p=$!
	pids+=("$p")
	wait "$p"
}

# The two namespaces and the veth pair. kernel: the receiver's end has
# RX_IP and RPS onto RX_CPU; libsirq: no address, no RPS, and a static
# neighbour entry so the sender needs no ARP answer.
net_up() {	# kernel|libsirq
	ip netns add "$NS_TX"
	ip netns add "$NS_RX"
	ip link add "$VETH_TX" netns "$NS_TX" type veth peer name "$VETH_RX" netns "$NS_RX"
	ip -n "$NS_TX" link set lo up
	ip -n "$NS_RX" link set lo up
	ip -n "$NS_TX" addr add "$TX_IP/24" dev "$VETH_TX"
	ip -n "$NS_TX" link set "$VETH_TX" up
	ip -n "$NS_RX" link set "$VETH_RX" up
	if [ "$1" = kernel ]; then
		ip -n "$NS_RX" addr add "$RX_IP/24" dev "$VETH_RX"
		in_rx sh -c "printf '%x' $((1 << RX_CPU)) > /sys/class/net/$VETH_RX/queues/rx-0/rps_cpus"
	else
		ip -n "$NS_TX" neigh replace "$RX_IP" dev "$VETH_TX" \
			lladdr "$(in_rx cat /sys/class/net/"$VETH_RX"/address)"
	fi
	# Route with rto_min, as tcp-bench.sh: a stalled receiver costs real
	# retransmissions instead of hiding under the 200 ms default.
	ip -n "$NS_TX" route change "$NET.0/24" dev "$VETH_TX" proto kernel scope link \
		src "$TX_IP" rto_min "$RTO_MIN"
}

net_down() {
	ip netns del "$NS_TX"
	ip netns del "$NS_RX"
}

record() {	# json-object-text
	echo "$1" >>"$OUT/runs.jsonl"
}

loadavg() {
	cut -d' ' -f1 /proc/loadavg
}

# udp-sink on RX_CPU, then udp-flood on TX_CPU; both measure the same
# window after WARMUP seconds.
run_flood() {	# rate cost run
	local rate=$1 cost=$2 run=$3 tag=flood-r$1-c$2-$3 sp load
	load=$(loadavg)
	echo "   flood rate ${rate:-0} pps, cost $cost ns, run $run (load $load)"
	ip netns exec "$NS_RX" "$BIN/udp-sink" --bind "$RX_IP:$PORT" --cpu "$RX_CPU" --cost-ns "$cost" \
		"${RCVBUF[@]}" --warmup "$WARMUP" --duration "$SECONDS_PER_RUN" \
		--json "$OUT/$tag-sink.json" 2>"$OUT/$tag-sink.log" &
	sp=$!
	pids+=("$sp")
	until grep -qs ready "$OUT/$tag-sink.log"; do
		kill -0 "$sp" 2>/dev/null || fail "udp-sink died; see $OUT/$tag-sink.log"
		sleep 0.05
	done
	in_ns_wait "$NS_TX" "$BIN/udp-flood" --dst "$RX_IP:$PORT" --cpu "$TX_CPU" --rate "$rate" \
		--size "$SIZE" --warmup "$WARMUP" --duration "$SECONDS_PER_RUN" \
		--json "$OUT/$tag-flood.json" 2>"$OUT/$tag-flood.log" ||
		fail "udp-flood failed; see $OUT/$tag-flood.log"
	wait "$sp" || fail "udp-sink failed; see $OUT/$tag-sink.log"
	pids=()
	record "{\"scenario\": \"flood\", \"system\": \"kernel\", \"rate\": $rate, \"cost_ns\": $cost, \"run\": $run, \"loadavg\": $load, \"sink\": $(cat "$OUT/$tag-sink.json"), \"flood\": $(cat "$OUT/$tag-flood.json")}"
}

# TCP and ICMP counters of a namespace, one "name value" a line.
snmp() {	# netns
	ip netns exec "$1" cat /proc/net/snmp /proc/net/netstat | awk '
		$1 == prev { for (i = 2; i <= NF; i++) print p, h[i], $i; next }
		{ prev = $1; p = $1; sub(":", "", p); for (i = 2; i <= NF; i++) h[i] = $i }'
}

run_stall() {	# run
	local run=$1 tag=stall-$1 sp hp pp load
	load=$(loadavg)
	echo "   stall run $run (load $load): echo server and cpu-hog ${HOG[*]} on CPU $RX_CPU"
	ip netns exec "$NS_RX" taskset -c "$RX_CPU" "$CLIENT" --serve --addr "$RX_IP" --port 7 \
		>"$OUT/$tag-server.log" 2>&1 &
	sp=$!
	pids+=("$sp")
	until grep -qs serving "$OUT/$tag-server.log"; do
		kill -0 "$sp" 2>/dev/null || fail "echo server died; see $OUT/$tag-server.log"
		sleep 0.05
	done
	# ARP, SYN and the first echo before anything is measured.
	in_tx "$CLIENT" --addr "$RX_IP" --conns 1 --messages 1 --max-size 64 \
		--json /dev/null --timeout 10 || fail "no echo from the kernel echo server"
	snmp "$NS_RX" >"$OUT/$tag-server-snmp.before"
	ip netns exec "$NS_RX" "$BIN/cpu-hog" --cpu "$RX_CPU" "${HOG[@]}" --duration $((SECONDS_PER_RUN + 2)) \
		--json "$OUT/$tag-hog.json" &
	hp=$!
	pids+=("$hp")
	sleep "$WARMUP"
	ip netns exec "$NS_TX" "$BIN/netrx-probe" --dst "$RX_IP" --cpu "$TX_CPU" --duration "$SECONDS_PER_RUN" \
		--json "$OUT/$tag-probe.json" &
	pp=$!
	pids+=("$pp")
	in_ns_wait "$NS_TX" taskset -c "$TX_CPU" "$CLIENT" --addr "$RX_IP" --conns "$CONNS" \
		--duration "$SECONDS_PER_RUN" --min-size 64 --max-size 4096 --gap-us 1000 \
		--timeout 30 --json "$OUT/$tag-client.json" ||
		fail "tcp-echo-client failed; see $OUT/$tag-client.json"
	wait "$pp" || fail "netrx-probe failed"
	snmp "$NS_RX" >"$OUT/$tag-server-snmp.after"
	wait "$hp" || fail "cpu-hog failed"
	kill -TERM "$sp"
	wait "$sp" || true
	pids=()
	record "{\"scenario\": \"stall\", \"system\": \"kernel\", \"run\": $run, \"loadavg\": $load, \"client\": $(cat "$OUT/$tag-client.json"), \"probe\": $(cat "$OUT/$tag-probe.json"), \"hog\": $(cat "$OUT/$tag-hog.json"), \"server_snmp\": $(python3 bench/kernel_lab.py --snmp-delta "$OUT/$tag-server-snmp.before" "$OUT/$tag-server-snmp.after")}"
}

# l2fwd-sirq on RX_CPU: port 0 the veth end (net_af_packet), port 1 a
# net_null that only transmits; the window is between two SIGUSR1 reports.
run_libsirq() {	# rate cost|- run
	local rate=$1 cost=$2 run=$3 tag=libsirq-$POLICY-r$1-c$2-$3 lp fp load cost_json=null
	local report=$OUT/$tag.json log=$OUT/$tag.log opts=("${LIBSIRQ_OPTS[@]}")
	if [ "$cost" != - ]; then
		opts=(--receiver "proto=$PROTO,app=${cost}ns,threads=1")
		cost_json=$cost
	fi
	load=$(loadavg)
	echo "   libsirq rate $rate pps, run $run (load $load): l2fwd-sirq --policy $POLICY --mode irq ${opts[*]}"
	ip netns exec "$NS_RX" stdbuf -oL "$L2FWD" -l "$RX_CPU" --no-huge -m 256 --no-pci --file-prefix="$PREFIX" \
		--vdev=net_af_packet0,iface="$VETH_RX" --vdev=net_null0,no-rx=1 -- \
		-T 0 --mode irq --policy "$POLICY" --report "$report" "${opts[@]}" \
		>"$log" 2>&1 &
	lp=$!
	pids+=("$lp")
	until grep -Eqs ' (forwards|receives) ' "$log"; do
		kill -0 "$lp" 2>/dev/null || fail "l2fwd-sirq exited; see $log"
		sleep 0.05
	done
	ip netns exec "$NS_TX" "$BIN/udp-flood" --dst "$RX_IP:$PORT" --cpu "$TX_CPU" --rate "$rate" \
		--size "$SIZE" --warmup "$WARMUP" --duration "$SECONDS_PER_RUN" \
		--json "$OUT/$tag-flood.json" 2>"$OUT/$tag-flood.log" &
	fp=$!
	pids+=("$fp")
	sleep "$WARMUP" & wait $!
	snapshot "$lp" "$report" "$OUT/$tag.start.json" "$log"
	sleep "$SECONDS_PER_RUN" & wait $!
	snapshot "$lp" "$report" "$OUT/$tag.end.json" "$log"
	wait "$fp" || fail "udp-flood failed; see $OUT/$tag-flood.log"
	kill -INT "$lp"
	wait "$lp" || fail "l2fwd-sirq exited with $?; see $log"
	pids=()
	rm -rf /var/run/dpdk/"$PREFIX"*
	record "{\"scenario\": \"flood\", \"system\": \"libsirq\", \"policy\": \"$POLICY\", \"rate\": $rate, \"cost_ns\": $cost_json, \"run\": $run, \"loadavg\": $load, \"opts\": \"${opts[*]}\", \"start_report\": \"$OUT/$tag.start.json\", \"end_report\": \"$OUT/$tag.end.json\", \"flood\": $(cat "$OUT/$tag-flood.json")}"
}

# The report of the running l2fwd-sirq (SIGUSR1), moved to DST.
snapshot() {	# pid report dst log
	local _
	rm -f "$2"
	kill -USR1 "$1"
	for _ in $(seq 100); do
		[ -s "$2" ] && { mv "$2" "$3"; return 0; }
		kill -0 "$1" 2>/dev/null || fail "l2fwd-sirq died; see $4"
		sleep 0.05
	done
	fail "no report on SIGUSR1; see $4"
}

mkdir -p "$OUT"
rm -f "$OUT"/*
echo "== kernel-lab: $SCENARIOS; $RUNS runs x ${SECONDS_PER_RUN} s; kernel $(uname -r)"
echo "   namespaces $NS_TX ($TX_IP, CPU $TX_CPU) and $NS_RX ($RX_IP, NET_RX and receiver on CPU $RX_CPU)"
echo "   load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
for scenario in $SCENARIOS; do
	case $scenario in
	flood)
		echo "== flood: rates $RATES pps, costs $COSTS ns, ${SIZE}-byte datagrams"
		net_up kernel
		for run in $(seq "$RUNS"); do
			for rate in $RATES; do
				for cost in $COSTS; do run_flood "$rate" "$cost" "$run"; done
			done
		done
		net_down ;;
	stall)
		[ -x "$CLIENT" ] || fail "$CLIENT missing; run ninja -C build"
		echo "== stall: $CONNS connections, 64..4096 B, 1 ms apart; rto_min $RTO_MIN"
		net_up kernel
		for run in $(seq "$RUNS"); do run_stall "$run"; done
		net_down ;;
	libsirq)
		[ -x "$L2FWD" ] || fail "$L2FWD missing; run ninja -C build"
		echo "== libsirq: l2fwd-sirq on CPU $RX_CPU via net_af_packet, rates $RATES pps"
		net_up libsirq
		for run in $(seq "$RUNS"); do
			for rate in $RATES; do for POLICY in $POLICIES; do
				if [ -n "${KLAB_LIBSIRQ_OPTS+set}" ]; then
					run_libsirq "$rate" - "$run"
				else
					for cost in $COSTS; do run_libsirq "$rate" "$cost" "$run"; done
				fi
			done; done
		done
		net_down ;;
	*)
		fail "unknown scenario '$scenario' (flood, stall, libsirq)" ;;
	esac
done

echo "== results ($(($(date +%s) - start)) s in all)"
python3 bench/kernel_lab.py "$OUT/runs.jsonl" out/kernel-lab.json out/kernel-lab.md
cat out/kernel-lab.md
echo "JSON: out/kernel-lab.json; tables: out/kernel-lab.md; per run: $OUT/"
