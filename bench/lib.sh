# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Shared by bench/fwd-bench.sh and bench/policy-lab.sh: source it after
# setting BENCH (the name in messages), PREFIX (the stem of every EAL
# --file-prefix), TESTPMD and tmp (a scratch directory); the process under
# test is in $pid.
#
# dpdk-testpmd as the traffic peer of a forwarder over two memif links
# uses fd 3 for the peer's commands. The forwarder (l2fwd-sirq, or testpmd
# for the baseline) is the memif server on DIR/p0.sock and DIR/p1.sock;
# the peer is the client. The peer io-forwards: after "start tx_first N" a
# fixed population of N bursts of 32 packets per port circulates through
# the forwarder, so the population sets the load (a few bursts: moderate
# traffic whose rate shows how long packets wait; more: as fast as the
# slower side goes).
#
# memif can crash a process whose peer leaves during traffic, and a
# client that is still connected when the server exits can crash in its
# own rte_eal_cleanup() (DPDK 22.11): stop the peer's forwarding, let the
# peer quit, then stop the forwarder (peer_stop, peer_quit, forwarder).

pid=""

# EAL memory options of the benches' DPDK processes: hugepages, reserved
# and mounted by scripts/hugepages.sh when it can (root), as deployments
# run; --no-huge when it cannot, or when BENCH_HUGE=0 asks for it. Says
# which. Sets HUGE_DIR (the hugetlbfs mount, empty without hugepages);
# eal_mem MB prints the options for a process of MB megabytes.
#   bench_memory PAGES
HUGE_DIR=""
bench_memory() {
	local out
	if [ "${BENCH_HUGE:-1}" = 0 ]; then
		echo "   memory: --no-huge (BENCH_HUGE=0)"
		return 0
	fi
	if out=$(./scripts/hugepages.sh "$1" 2>&1); then
		HUGE_DIR=${out##*hugetlbfs at }
		HUGE_DIR=${HUGE_DIR%%[:;]*}
		echo "   memory: hugepages ($out)"
	else
		echo "   memory: --no-huge, no hugepages to be had ($out)"
	fi
}

eal_mem() {
	if [ -n "$HUGE_DIR" ]; then
		echo "-m $1"
	else
		echo "--no-huge -m $1"
	fi
}

# What the DPDK processes whose --file-prefix starts with STEM leave:
# runtime directories and hugepage files.
dpdk_leftovers_rm() {	# STEM
	rm -rf /var/run/dpdk/"$1"*
	[ -z "$HUGE_DIR" ] || rm -f "$HUGE_DIR"/"$1"*
}

fail() {
	echo "$BENCH: $*" >&2
	exit 1
}

# The EXIT trap of the scripts: nothing of a run outlives them.
bench_cleanup() {
	exec 4>&-
	peer_quit
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
	dpdk_leftovers_rm "$PREFIX-"
}

# l2fwd-sirq as the memif server on CPU 1, the peer injecting BURSTS per
# port, one second of warm-up, then SECONDS between two reports:
# $OUT/TAG.start.json and $OUT/TAG.end.json. Logs: $OUT/TAG.log and
# $OUT/TAG-peer.log.
#   l2fwd_memif_run TAG BURSTS SECONDS l2fwd-sirq-options...
l2fwd_memif_run() {
	local tag=$1 bursts=$2 secs=$3 dir=$tmp/$1 try rc=0
	local report=$OUT/$1.json log=$OUT/$1.log plog=$OUT/$1-peer.log
	shift 3
	mkdir "$dir"
	# shellcheck disable=SC2046 # memif_vdevs gives two arguments
	# shellcheck disable=SC2046 # eal_mem gives two or three arguments
	set -- "$L2FWD" -l 1 $(eal_mem 256) --no-pci $(memif_vdevs "$dir" server) \
		--file-prefix="$PREFIX-l2fwd" -- -T 0 --report "$report" "$@"
	echo "   $*"
	stdbuf -oL "$@" >"$log" 2>&1 &
	pid=$!
	until grep -qs ' forwards ' "$log"; do
		kill -0 "$pid" 2>/dev/null || fail "$tag: l2fwd-sirq exited; see $log"
		sleep 0.05
	done
	for try in 1 2 3; do
		peer_start "$dir" "$plog" "$PREFIX-peer" && break
		[ "$try" -lt 3 ] || fail "$tag: the peer could not connect; see $plog"
	done
	peer_inject "$plog" "$bursts" || fail "$tag: no traffic through memif; see $plog"
	sleep 1
	report_snapshot "$report" "$OUT/$tag.start.json" "$log"
	sleep "$secs"
	report_snapshot "$report" "$OUT/$tag.end.json" "$log"
	peer_stop
	peer_quit
	kill -INT "$pid"
	wait "$pid" || rc=$?
	pid=""
	dpdk_leftovers_rm "$PREFIX-"
	[ "$rc" -eq 0 ] || fail "$tag: l2fwd-sirq exited with $rc; see $log"
}

# Report of the running l2fwd-sirq (SIGUSR1), moved to DST:
# report_snapshot REPORT DST LOG.
report_snapshot() {
	local _
	rm -f "$1"
	kill -USR1 "$pid"
	for _ in $(seq 100); do
		[ -s "$1" ] && { mv "$1" "$2"; return 0; }
		kill -0 "$pid" 2>/dev/null || fail "l2fwd-sirq died; see $3"
		sleep 0.05
	done
	fail "no report on SIGUSR1; see $3"
}

PEER_PID=""

# The server-side vdev arguments of a forwarder: memif_vdevs DIR ROLE.
memif_vdevs() {
	local dir=$1 role=$2
	echo "--vdev=net_memif0,role=$role,socket=$dir/p0.sock,socket-abstract=no" \
		"--vdev=net_memif1,role=$role,socket=$dir/p1.sock,socket-abstract=no"
}

# RX-packets of both ports of the testpmd writing LOG and reading commands
# on fd FD, from a fresh "show port stats all": testpmd_rx LOG FD.
testpmd_rx() {
	local log=$1 fd=$2 before i
	before=$(grep -c 'NIC statistics for port 1' "$log" || true)
	echo "show port stats all" >&"$fd"
	for i in $(seq 40); do
		sleep 0.05
		[ "$(grep -c 'NIC statistics for port 1' "$log" || true)" -gt "$before" ] && break
	done
	sleep 0.05
	echo $(grep -o 'RX-packets: *[0-9]*' "$log" | tail -2 | grep -o '[0-9]*$')
}

# Wait until testpmd's start-up link check is over: testpmd_ready LOG PID.
testpmd_ready() {
	local log=$1 pid=$2 i
	for i in $(seq 300); do
		grep -A1 '^Checking link statuses' "$log" | grep -q '^Done' && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# peer_start DIR LOG PREFIX: the client on CPU 0, commands on fd 3 through
# the fifo DIR/peer.in. 1 if it could not connect (it is gone then).
peer_start() {
	local dir=$1 log=$2 prefix=$3
	rm -f "$dir/peer.in"
	mkfifo "$dir/peer.in"
	# shellcheck disable=SC2046 # memif_vdevs gives two arguments
	# shellcheck disable=SC2046 # eal_mem gives two or three arguments
	stdbuf -oL "$TESTPMD" --lcores=0@0,1@0 $(eal_mem 256) --no-pci \
		--file-prefix="$prefix" $(memif_vdevs "$dir" client) \
		-- -i --forward-mode=io --burst=32 --total-num-mbufs=32768 \
		<"$dir/peer.in" >"$log" 2>&1 &
	PEER_PID=$!
	exec 3>"$dir/peer.in"
	testpmd_ready "$log" "$PEER_PID" || true
	grep -q 'Failed to connect' "$log" || return 0
	echo "peer: testpmd could not connect; see $log" >&2
	peer_quit
	return 1
}

# peer_inject LOG BURSTS: let BURSTS bursts per port circulate. memif
# drops what the server sends before the client has polled once, so the
# peer polls a moment first; if the injection is lost all the same, again.
peer_inject() {
	local log=$1 bursts=$2 try rx0 rx1
	echo "start" >&3
	sleep 0.3
	echo "stop" >&3
	for try in 1 2 3 4 5; do
		echo "start tx_first $bursts" >&3
		sleep 0.3
		read -r rx0 rx1 < <(testpmd_rx "$log" 3)
		[ "${rx0:-0}" -gt 0 ] && [ "${rx1:-0}" -gt 0 ] && return 0
		echo "peer: no traffic yet (try $try), injecting again" >&2
		echo "stop" >&3
		sleep 0.2
	done
	return 1
}

peer_stop() {
	[ -n "$PEER_PID" ] && echo "stop" >&3
	sleep 0.2
}

peer_quit() {
	[ -n "$PEER_PID" ] || return 0
	echo "quit" >&3 2>/dev/null || true
	exec 3>&-
	wait "$PEER_PID" 2>/dev/null || true
	PEER_PID=""
}
