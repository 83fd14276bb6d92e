#!/usr/bin/env bash
# Kernel lab: the seed's scenarios on a real kernel, and libsirq beside it
# on the same kernel and scheduler (docs/design.md, "Two scenarios"; issue 20).
#
# Kernels (KLAB_KERNEL, several run one after the other):
#   host           this machine's kernel (6.18: mainline on EEVDF)
#   6.1            Debian's linux-image-cloud-amd64 as shipped: CFS, and
#                  ksoftirqd_running() of 4cd13c21b207 (libsirq `ksoftirqd`)
#   6.1+kicinski   Linux 6.1 with the seed's patches 002-004 (`kicinski`)
#   6.1+mainline   Linux 6.1 with d15121be7485 (`mainline`)
#   6.1-rt         Debian bookworm's linux-image-rt-amd64 (6.1, PREEMPT_RT,
#                  the per-CPU BH lock held; libsirq `rt`)
#   7.x-rt         trixie-backports' newest 7.*+deb13-rt-amd64 (7.3.4 on
#                  2026-12-05): PREEMPT_RT past 6.18, the BH lock dropped
#                  (no PREEMPT_RT_NEEDS_BH_LOCK), threaded busy poll of
#                  6.19 (libsirq `pushdown`)
#   7.x            the same version's -amd64 (PREEMPT_LAZY; `mainline`)
# A guest kernel runs in the guest lab (scripts/guest.sh: QEMU, 2 CPUs, the
# host's root over virtiofs); the patched ones are built and cached by
# scripts/kernel-build.sh (28 minutes the first time), the Debian ones
# fetched from Debian's archive with their modules by
# scripts/kernel-fetch.sh (/var/cache/libsirq/kernels, a minute the first
# time). Inside, this script runs again and writes its runs to the share;
# a guest whose kernel reports an RCU stall (a vCPU that TCG left halted)
# is stopped and that kernel's runs are made again in a new guest, once.
# At its start it records the kernel's config (/proc/config.gz, else the
# package's config-<release>: PREEMPT_RT, PREEMPT_RT_NEEDS_BH_LOCK) and the
# softirq threads ps shows (ksoftirqd/N, ktimers/N, backlog_napi/N, napi/,
# irq/N-...) into "kernels", and fails the run when the config does not
# match the kernel's name (6.1-rt or 7.x-rt without PREEMPT_RT, 7.x-rt with
# the BH lock, 7.x or a 6.1 with PREEMPT_RT): on the host before the boot,
# and again inside.
#
# Two network namespaces joined by a veth pair. The sender or client runs
# on CPU 0; the receiver, its NET_RX and the stall load on CPU 1.
#
# Scenarios (KLAB_SCENARIOS), each on both systems (KLAB_SYSTEMS):
#   flood    udp-flood (sendmmsg() on CPU 0) sends KLAB_SIZE-byte datagrams
#            into the veth flat out (or at KLAB_RATES). kernel: udp-sink on
#            CPU 1 reads them, the veth end's receive path steered onto
#            CPU 1 by RPS and through KLAB_RULES firewall rules; libsirq:
#            l2fwd-sirq on CPU 1 (irq mode) into its UDP-like receiver
#            (--receiver, KLAB_RECEIVER), its input the policy lab's: two
#            net_null ports without end (KLAB_LIBSIRQ_INPUT=null), or the
#            veth end through net_af_packet (veth: CPU 0 then carries the
#            packets to the packet socket too, and offers about 60 % of
#            what reaches the kernel's CPU 1). received_pps: what the
#            application read.
#   stall    the patch's load on CPU 1 (KLAB_LOAD: six threads keeping the
#            CPU 6 ms at random moments 40 ms apart, about 90 %) and a
#            request/response TCP load from CPU 0 (KLAB_CONNS connections,
#            64..4096 B, 1 ms apart, rto_min KLAB_RTO_MIN). kernel: an
#            epoll echo server and cpu-hog; NET_RX waits from raise to
#            entry on CPU 1 in the softirq tracepoints (bench/
#            softirq_trace.py); libsirq: tcp-echo over net_af_packet in irq
#            mode with --app-load, its own NET_RX waits. stalls_per_s:
#            NET_RX waits >= 8 ms a second.
#   retrans  the same runs as stall (one run gives both rows when both are
#            asked for): the client's TcpRetransSegs.
#
#   KLAB_KERNEL="host"         kernels, see above
#   KLAB_SCENARIOS="stall flood retrans"
#   KLAB_SYSTEMS="kernel libsirq"
#   KLAB_POLICY="..."          libsirq's policies (default: all four on
#                              host and 6.1, the kernel's own on a patched
#                              6.1, rt on 6.1-rt, pushdown on 7.x-rt,
#                              mainline on 7.x); each checked against the
#                              build's libsirq.so before anything runs
#   KLAB_RUNS=N                runs of each case (default 3)
#   KLAB_SECONDS=S             seconds measured per run, after 1 s of warm-up (default 10)
#   KLAB_RATES="0"             sender's packets/s; 0: as fast as it goes
#   KLAB_COSTS="0"             receiver's CPU work per datagram, ns
#   KLAB_LIBSIRQ_INPUT=null    libsirq's flood input: null or veth
#   KLAB_RULES=N               flood: firewall rules (nftables, none
#                              matching) the kernel's receiving namespace
#                              runs every datagram through (default 200,
#                              the load at which 6.1+mainline's receiver
#                              starves; 0: 1.2x): a costlier NET_RX, which
#                              libsirq's calibrated receiver then costs too
#   KLAB_SIZE=18               UDP payload bytes
#   KLAB_RCVBUF=BYTES          udp-sink's SO_RCVBUF (default: rmem_default)
#   KLAB_RECEIVER=SPEC         libsirq's flood receiver (--receiver), COST
#                              standing for the cost; default auto: NET_RX
#                              and the reader spend per datagram what this
#                              kernel's did (calibrate_receiver), and
#                              rcvbuf=256 (about rmem_default's datagrams)
#   KLAB_LOAD=SPEC             the stall load, --app-load syntax (default
#                              hold=6ms,period=40ms,random,threads=6)
#   KLAB_CONNS=8               connections of the stall client
#   KLAB_RTO_MIN=1ms           rto_min of the client's route
#   KLAB_TLP=1                 0: the client sends no tail loss probes
#                              (net.ipv4.tcp_early_retrans 0 in its
#                              namespace): its retransmissions are then
#                              the timeouts and fast retransmits
#   KLAB_KSOFTIRQD_SCHED=deadline:R/P
#                              the kernel system's ksoftirqd/N (N the
#                              receiving CPU) given a SCHED_DEADLINE
#                              reservation of R us every P us (chrt -d)
#                              for its runs, kernel.sched_rt_runtime_us
#                              at -1 meanwhile (the thread is bound to its
#                              CPU: the root-domain rule); or fair:slice=US,
#                              an EEVDF slice. Its runs are recorded as
#                              the kernel "<kernel> ksoftirqd=<spec>"
#   KLAB_BUILD=build           the build directory of the binaries
#   KLAB_APPEND="tsc=reliable" the guest kernels' extra command line. TCG's
#                              TSC drifts from the HPET under load; the
#                              clocksource watchdog then marks it unstable
#                              and flips sched_clock's static key, and
#                              7.3.4-rt died of that text patching under
#                              multi-threaded TCG (int3 in
#                              sched_clock_cpu, 35 s into a run). "" for none
#   KLAB_OUT=out/kernel-lab    the runs' directory; the results beside it
#
# Results: out/kernel-lab/ (per run, and per guest kernel a directory),
# out/kernel-lab.json ("runs": one object per run with kernel, release,
# system, policy, scenario and stalls_per_s, received_pps or retrans_segs;
# "kernels": the softirq symbols, config and softirq threads of each
# kernel; "summary", "claims", and "deviations": each kernel's model not
# within 2x of it on stalls/s or received pps, with the measured effect)
# and out/kernel-lab.md (bench/kernel_lab.py). Root only. About 3-5 minutes
# a guest kernel with KLAB_RUNS=1, KLAB_SECONDS=5 and one policy (TCG: 545 s
# for the three of issue 28).
#
# Issue 28's run (docs/policies.md, "Real RT kernels"):
#   KLAB_KERNEL="6.1-rt 7.x-rt 7.x" KLAB_RUNS=1 KLAB_SECONDS=5 ./bench/kernel-lab.sh
set -euo pipefail
cd "$(dirname "$0")/.."

KERNELS=${KLAB_KERNEL:-host}
SCENARIOS=${KLAB_SCENARIOS:-stall flood retrans}
SYSTEMS=${KLAB_SYSTEMS:-kernel libsirq}
RUNS=${KLAB_RUNS:-3}
SECONDS_PER_RUN=${KLAB_SECONDS:-10}
WARMUP=1
COSTS=${KLAB_COSTS:-0}
RATES=${KLAB_RATES:-0}
RULES=${KLAB_RULES:-200}
LIBSIRQ_INPUT=${KLAB_LIBSIRQ_INPUT:-null}
SIZE=${KLAB_SIZE:-18}
RCVBUF=()
[ -z "${KLAB_RCVBUF:-}" ] || RCVBUF=(--rcvbuf "$KLAB_RCVBUF")
RECEIVER=${KLAB_RECEIVER:-auto}
LOAD=${KLAB_LOAD:-hold=6ms,period=40ms,random,threads=6}
CONNS=${KLAB_CONNS:-8}
RTO_MIN=${KLAB_RTO_MIN:-1ms}
TLP=${KLAB_TLP:-1}
TX_CPU=0
RX_CPU=1
BUILD=${KLAB_BUILD:-build}
GUEST_APPEND=${KLAB_APPEND-tsc=reliable}
BIN=$BUILD/bench
CLIENT=$BUILD/apps/tcp-echo/tcp-echo-client
ECHO=$BUILD/apps/tcp-echo/tcp-echo
L2FWD=$BUILD/apps/l2fwd-sirq/l2fwd-sirq
# Inside a guest: the kernel's name, and the share to write to.
INSIDE=${KLAB_INSIDE:-}
OUT=${KLAB_OUT:-out/kernel-lab}
OUT=${OUT%/}
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
	fail "needs root (network namespaces, RPS, tracefs, guests, SCHED_FIFO for libsirq); nothing was done"
for s in $SCENARIOS; do
	case $s in stall | flood | retrans) ;;
	*) fail "KLAB_SCENARIOS: unknown scenario '$s' (stall, flood, retrans)" ;;
	esac
done
case $TLP in 0 | 1) ;; *) fail "KLAB_TLP must be 0 or 1, not '$TLP'" ;; esac
case $LIBSIRQ_INPUT in
null) [ "$RATES" = 0 ] || fail "KLAB_LIBSIRQ_INPUT=null is an input without end: KLAB_RATES must be 0, or KLAB_LIBSIRQ_INPUT=veth" ;;
veth) ;;
*) fail "KLAB_LIBSIRQ_INPUT must be null or veth, not '$LIBSIRQ_INPUT'" ;;
esac
case $RULES in '' | *[!0-9]*) fail "KLAB_RULES must be a number, not '$RULES'" ;; esac
for s in $SYSTEMS; do
	case $s in kernel | libsirq) ;;
	*) fail "KLAB_SYSTEMS: unknown system '$s' (kernel, libsirq)" ;;
	esac
done
for k in $KERNELS; do
	case $k in host | 6.1 | 6.1+kicinski | 6.1+mainline | 6.1-rt | 7.x-rt | 7.x) ;;
	*) fail "KLAB_KERNEL: unknown kernel '$k' (host, 6.1, 6.1+kicinski, 6.1+mainline, 6.1-rt, 7.x-rt, 7.x)" ;;
	esac
done
for v in RUNS SECONDS_PER_RUN SIZE CONNS; do
	case ${!v} in '' | *[!0-9]* | 0) fail "$v must be a number > 0, not '${!v}'" ;; esac
done
for t in udp-flood udp-sink cpu-hog netrx-probe; do
	[ -x "$BIN/$t" ] || fail "$BIN/$t missing; run ninja -C build"
done
command -v ethtool >/dev/null || fail "ethtool missing: scripts/install-deps.sh installs it"
[ "$RULES" = 0 ] || command -v nft >/dev/null || fail "nft missing: scripts/install-deps.sh installs nftables"
for t in "$CLIENT" "$ECHO" "$L2FWD"; do
	[ -x "$t" ] || fail "$t missing; run ninja -C build"
done
[ "$(nproc)" -ge 2 ] || fail "needs CPUs $TX_CPU and $RX_CPU"

# The stall load in cpu-hog's terms: the same threads as --app-load.
hog_threads=3 hog_hold="" hog_period="" hog_random=0
IFS=, read -r -a load_kv <<<"$LOAD"
for o in "${load_kv[@]}"; do
	case $o in
	hold=*ms) hog_hold=${o#hold=}; hog_hold=${hog_hold%ms} ;;
	period=*ms) hog_period=${o#period=}; hog_period=${hog_period%ms} ;;
	threads=*) hog_threads=${o#threads=} ;;
	random) hog_random=1 ;;
	*) fail "KLAB_LOAD: '$o' has no cpu-hog equivalent (hold=Nms, period=Nms, threads=N, random)" ;;
	esac
done
for v in hog_threads hog_hold hog_period; do
	case ${!v} in '' | *[!0-9]*) fail "KLAB_LOAD '$LOAD': needs hold=Nms and period=Nms, and threads=N a number" ;; esac
done
HOG=(--threads "$hog_threads" --hold "$hog_hold" --period "$hog_period")
[ "$hog_random" = 1 ] || HOG+=(--fixed)

# Background processes are started as "ip netns exec NS PROG" (ip execs
# PROG), never through a shell function, so that $! is PROG itself.
# Nothing of a run outlives the script: its processes, its namespaces
# (which take the veth pair with them), DPDK's runtime directories.
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
# RX_IP and RPS onto RX_CPU; libsirq: no address and no RPS (the kernel's
# part, veth to the packet socket's ring, runs on the sender's CPU, as a
# NIC's DMA would; CPU 1 is libsirq's), and for the flood a static
# neighbour entry, as nothing answers ARP there.
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
		# A packet socket sees the kernel's TCP and UDP segments with their
		# checksums left to the device (CHECKSUM_PARTIAL); lwIP needs them done.
		in_tx ethtool -K "$VETH_TX" tx off >/dev/null
	fi
	# Route with rto_min, as tcp-bench.sh: a stalled receiver costs real
	# retransmissions instead of hiding under the 200 ms default.
	ip -n "$NS_TX" route change "$NET.0/24" dev "$VETH_TX" proto kernel scope link \
		src "$TX_IP" rto_min "$RTO_MIN"
	[ "$TLP" = 1 ] || in_tx sysctl -qw net.ipv4.tcp_early_retrans=0
}

# RULES input rules in the receiver's namespace that no datagram of the
# lab matches (source addresses in 198.18.0.0/15): each one is evaluated
# for every packet in NET_RX, as a server's firewall is.
rules_up() {
	local i
	{
		echo "table ip klab {"
		echo "  chain in { type filter hook input priority 0; policy accept;"
		for i in $(seq "$RULES"); do
			echo "    ip saddr 198.18.$((i / 250)).$((i % 250 + 1)) udp dport $PORT counter drop"
		done
		echo "  }"
		echo "}"
	} >"$OUT/rules.nft"
	in_rx nft -f "$OUT/rules.nft" || fail "nft could not load $RULES rules (nftables, nf_tables)"
}

static_neigh() {
	ip -n "$NS_TX" neigh replace "$RX_IP" dev "$VETH_TX" \
		lladdr "$(in_rx cat /sys/class/net/"$VETH_RX"/address)"
}

net_down() {
	ip netns del "$NS_TX"
	ip netns del "$NS_RX"
}

record() {	# json-object-text
	echo "$1" >>"$OUT/runs.jsonl"
}

# What every run names: where it ran.
where() {	# system policy scenario
	local k=$KERNEL
	[ "$1" != kernel ] || [ -z "$KSOFTIRQD_SCHED" ] || k="$KERNEL ksoftirqd=$KSOFTIRQD_SCHED"
	printf '"kernel": "%s", "release": "%s", "system": "%s", "policy": %s, "scenario": "%s"' \
		"$k" "$(uname -r)" "$1" "$([ "$2" = - ] && echo null || echo "\"$2\"")" "$3"
}

# KLAB_KSOFTIRQD_SCHED on ksoftirqd/RX_CPU for the kernel system's runs
# (ksoftirqd_sched on), its old class back after them (off).
KSOFTIRQD_SCHED=${KLAB_KSOFTIRQD_SCHED:-}
ksoftirqd_saved_rt=
ksoftirqd_sched() {	# on|off
	local pid r p sl
	[ -n "$KSOFTIRQD_SCHED" ] || return 0
	pid=$(pgrep -x "ksoftirqd/$RX_CPU") || fail "no ksoftirqd/$RX_CPU"
	if [ "$1" = off ]; then
		chrt -o -p 0 "$pid"
		[ -z "$ksoftirqd_saved_rt" ] || sysctl -qw kernel.sched_rt_runtime_us="$ksoftirqd_saved_rt"
		return 0
	fi
	case $KSOFTIRQD_SCHED in
	deadline:*/*)
		r=${KSOFTIRQD_SCHED#deadline:}; p=${r#*/}; r=${r%/*}
		ksoftirqd_saved_rt=$(sysctl -n kernel.sched_rt_runtime_us)
		sysctl -qw kernel.sched_rt_runtime_us=-1
		chrt -d --sched-runtime $((r * 1000)) --sched-deadline $((p * 1000)) \
			--sched-period $((p * 1000)) -p 0 "$pid" ||
			fail "ksoftirqd/$RX_CPU: chrt refused $KSOFTIRQD_SCHED" ;;
	fair:slice=*)
		sl=${KSOFTIRQD_SCHED#fair:slice=}
		chrt -o --sched-runtime $((sl * 1000)) -p 0 "$pid" ||
			fail "ksoftirqd/$RX_CPU: chrt refused $KSOFTIRQD_SCHED" ;;
	*) fail "KLAB_KSOFTIRQD_SCHED: '$KSOFTIRQD_SCHED' is not deadline:R/P or fair:slice=US" ;;
	esac
	echo "   ksoftirqd/$RX_CPU: $(chrt -p "$pid" | tr '\n' ' ')"
}

loadavg() {
	cut -d' ' -f1 /proc/loadavg
}

wanted() {	# scenario
	case " $SCENARIOS " in *" $1 "*) return 0 ;; esac
	return 1
}

# udp-flood on TX_CPU, in the background (its pid in $source): WARMUP
# seconds, then the window of SECONDS_PER_RUN whose sent packets go to
# OUT/TAG-flood.json.
source=""
source_start() {	# rate tag
	ip netns exec "$NS_TX" "$BIN/udp-flood" --dst "$RX_IP:$PORT" --cpu "$TX_CPU" --rate "$1" \
		--size "$SIZE" --warmup "$WARMUP" --duration "$SECONDS_PER_RUN" \
		--json "$OUT/$2-flood.json" 2>"$OUT/$2-flood.log" &
	source=$!
	pids+=("$source")
}

# udp-sink on RX_CPU, then udp-flood on TX_CPU; both measure the same
# window after WARMUP seconds.
run_flood() {	# rate cost run|calibration
	local rate=$1 cost=$2 run=$3 tag=flood-r$1-c$2-$3 sp load
	load=$(loadavg)
	echo "   kernel flood: rate $rate pps, cost $cost ns, run $run (load $load)"
	ip netns exec "$NS_RX" "$BIN/udp-sink" --bind "$RX_IP:$PORT" --cpu "$RX_CPU" --cost-ns "$cost" \
		${RCVBUF[@]+"${RCVBUF[@]}"} --warmup "$WARMUP" --duration "$SECONDS_PER_RUN" \
		--json "$OUT/$tag-sink.json" 2>"$OUT/$tag-sink.log" &
	sp=$!
	pids+=("$sp")
	until grep -qs ready "$OUT/$tag-sink.log"; do
		kill -0 "$sp" 2>/dev/null || fail "udp-sink died; see $OUT/$tag-sink.log"
		sleep 0.05
	done
	source_start "$rate" "$tag"
	wait "$source" || fail "udp-flood failed; see $OUT/$tag-flood.log"
	wait "$sp" || fail "udp-sink failed; see $OUT/$tag-sink.log"
	pids=()
	[ "${run#calibration}" = "$run" ] || return 0
	record "{$(where kernel - flood), \"received_pps\": $(json_get "$OUT/$tag-sink.json" 'd["received_pps"]'), \"rate\": $rate, \"cost_ns\": $cost, \"run\": $run, \"loadavg\": $load, \"sink\": $(cat "$OUT/$tag-sink.json"), \"flood\": $(cat "$OUT/$tag-flood.json")}"
}

# TCP and ICMP counters of a namespace, one "name value" a line.
snmp() {	# netns
	ip netns exec "$1" cat /proc/net/snmp /proc/net/netstat | awk '
		$1 == prev { for (i = 2; i <= NF; i++) print p, h[i], $i; next }
		{ prev = $1; p = $1; sub(":", "", p); for (i = 2; i <= NF; i++) h[i] = $i }'
}

# The stall and retrans rows of one run (the same run, when both are
# asked for). $1: the fields common to both; $2: the stall's; $3: the
# retrans's.
record_stall() {	# system policy common stall-fields retrans-fields
	if wanted stall; then
		record "{$(where "$1" "$2" stall), $4, $3}"
	fi
	if wanted retrans; then
		record "{$(where "$1" "$2" retrans), $5, $3}"
	fi
}

# The request/response client on TX_CPU for one window; JSON to $1.
stall_client() {	# json
	in_ns_wait "$NS_TX" taskset -c "$TX_CPU" "$CLIENT" --addr "$RX_IP" --conns "$CONNS" \
		--duration "$SECONDS_PER_RUN" --min-size 64 --max-size 4096 --gap-us 1000 \
		--timeout 30 --json "$1" || fail "tcp-echo-client failed; see $1"
}

json_get() {	# file python-expression-on-d
	python3 -c 'import json,sys; d = json.load(sys.stdin if sys.argv[1] == "-" else open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# Kernel: echo server and cpu-hog on RX_CPU, the client and netrx-probe's
# ICMP echoes on TX_CPU, the softirq tracepoints over the window.
run_stall() {	# run
	local run=$1 tag=stall-$1 sp hp pp load
	load=$(loadavg)
	echo "   kernel stall: run $run (load $load): echo server and cpu-hog ${HOG[*]} on CPU $RX_CPU"
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
	python3 bench/softirq_trace.py start || fail "cannot trace the softirqs (tracefs)"
	ip netns exec "$NS_TX" "$BIN/netrx-probe" --dst "$RX_IP" --cpu "$TX_CPU" --duration "$SECONDS_PER_RUN" \
		--json "$OUT/$tag-probe.json" &
	pp=$!
	pids+=("$pp")
	stall_client "$OUT/$tag-client.json"
	python3 bench/softirq_trace.py stop --cpu "$RX_CPU" --seconds "$SECONDS_PER_RUN" \
		--json "$OUT/$tag-trace.json" || fail "softirq trace incomplete; see $OUT/$tag-trace.json"
	wait "$pp" || fail "netrx-probe failed"
	snmp "$NS_RX" >"$OUT/$tag-server-snmp.after"
	wait "$hp" || fail "cpu-hog failed"
	kill -TERM "$sp"
	wait "$sp" || true
	pids=()
	record_stall kernel - \
		"\"run\": $run, \"loadavg\": $load, \"client\": $(cat "$OUT/$tag-client.json"), \"probe\": $(cat "$OUT/$tag-probe.json"), \"hog\": $(cat "$OUT/$tag-hog.json"), \"trace\": $(cat "$OUT/$tag-trace.json"), \"server_snmp\": $(python3 bench/kernel_lab.py --snmp-delta "$OUT/$tag-server-snmp.before" "$OUT/$tag-server-snmp.after")" \
		"\"stalls_per_s\": $(json_get "$OUT/$tag-trace.json" 'd["vectors"]["NET_RX"]["stalls_per_s"]')" \
		"$(retrans_fields "$OUT/$tag-client.json")"
}

# The retrans row's figures from the client's report.
retrans_fields() {	# client-json
	json_get "$1" '"\"retrans_segs\": %d, \"tlp\": %d, \"retrans_timeouts\": %d, \"loss_probes\": %d" % (d["tcp"]["RetransSegs"], '"$TLP"', d["tcp"]["TCPTimeouts"], d["tcp"]["TCPLossProbes"])'
}

# A DPDK app on RX_CPU with the veth end as its port (net_af_packet), up
# when its log has READY; its pid in $app.
app=""
app_start() {	# log ready-pattern prog args...
	local log=$1 ready=$2
	shift 2
	ip netns exec "$NS_RX" stdbuf -oL "$@" >"$log" 2>&1 &
	app=$!
	pids+=("$app")
	until grep -Eqs "$ready" "$log"; do
		kill -0 "$app" 2>/dev/null || fail "$(basename "$1") exited; see $log"
		sleep 0.05
	done
}

app_stop() {	# log
	kill -INT "$app"
	wait "$app" || fail "$(basename "$1") exited with $?; see $1"
	app=""
	pids=()
	rm -rf /var/run/dpdk/"$PREFIX"*
}

eal() {	# the EAL arguments of the app on RX_CPU
	echo -l "$RX_CPU" --no-huge -m 256 --no-pci --file-prefix="$PREFIX" \
		--vdev=net_af_packet0,iface="$VETH_RX"
}

# The receiver spec for a cost: COST+N (ns) summed, else COST replaced.
receiver_spec() {	# cost
	local r=$RECEIVER
	while [[ $r =~ COST\+([0-9]+) ]]; do
		r=${r/COST+${BASH_REMATCH[1]}/$(($1 + BASH_REMATCH[1]))}
	done
	echo "${r//COST/$1}"
}

# libsirq's flood: l2fwd-sirq on RX_CPU, port 0 the veth end, port 1 a
# net_null that only transmits; the window is between two SIGUSR1 reports.
run_libsirq_flood() {	# policy rate cost run
	local policy=$1 rate=$2 cost=$3 run=$4 tag load recv w
	tag=libsirq-$policy-r$rate-c$cost-$run
	local report=$OUT/$tag.json log=$OUT/$tag.log
	recv=$(receiver_spec "$cost")
	load=$(loadavg)
	echo "   libsirq flood: $policy, rate $rate pps, cost $cost ns, run $run (load $load): --receiver $recv"
	if [ "$LIBSIRQ_INPUT" = veth ]; then
		# shellcheck disable=SC2046 # eal gives several words
		app_start "$log" ' (forwards|receives) ' "$L2FWD" $(eal) --vdev=net_null0,no-rx=1 -- \
			-T 0 --mode irq --policy "$policy" --report "$report" --receiver "$recv"
		source_start "$rate" "$tag"
	else
		app_start "$log" ' (forwards|receives) ' "$L2FWD" -l "$RX_CPU" --no-huge -m 256 --no-pci \
			--file-prefix="$PREFIX" --vdev=net_null0 --vdev=net_null1 -- \
			-T 0 --mode irq --policy "$policy" --report "$report" --receiver "$recv"
	fi
	sleep "$WARMUP" & wait $!
	snapshot "$app" "$report" "$OUT/$tag.start.json" "$log"
	sleep "$SECONDS_PER_RUN" & wait $!
	snapshot "$app" "$report" "$OUT/$tag.end.json" "$log"
	[ "$LIBSIRQ_INPUT" = null ] ||
		wait "$source" || fail "udp-flood failed; see $OUT/$tag-flood.log"
	app_stop "$log"
	w=$(python3 bench/kernel_lab.py --libsirq-window "$OUT/$tag.start.json" "$OUT/$tag.end.json")
	# What net_null offered is what NET_RX took from it.
	[ "$LIBSIRQ_INPUT" = veth ] ||
		json_get - '"{\"source\": \"net_null\", \"sent_pps\": %f, \"send_errors\": 0}" % d["forwarded_pps"]' \
			<<<"$w" >"$OUT/$tag-flood.json"
	record "{$(where libsirq "$policy" flood), \"received_pps\": $(json_get - 'd["received_pps"]' <<<"$w"), \"rate\": $rate, \"cost_ns\": $cost, \"run\": $run, \"loadavg\": $load, \"opts\": \"--receiver $recv\", \"window\": $w, \"flood\": $(cat "$OUT/$tag-flood.json")}"
}

# libsirq's stall: tcp-echo on RX_CPU in irq mode over the veth end with
# the stall load as its --app-load; the same client on TX_CPU. Its NET_RX
# waits from its report, over the window (two SIGUSR1 reports).
run_libsirq_stall() {	# policy run
	local policy=$1 run=$2 tag load
	tag=libsirq-stall-$policy-$run
	local report=$OUT/$tag.json log=$OUT/$tag.log
	load=$(loadavg)
	echo "   libsirq stall: $policy, run $run (load $load): tcp-echo --app-load $LOAD"
	# shellcheck disable=SC2046 # eal gives several words
	app_start "$log" ', MAC ' "$ECHO" $(eal) -- --ip "$RX_IP/24" -T 0 --mode irq \
		--policy "$policy" --app-load "$LOAD" --report "$report"
	in_tx "$CLIENT" --addr "$RX_IP" --conns 1 --messages 1 --max-size 64 \
		--json /dev/null --timeout 10 || fail "no echo from tcp-echo; see $log"
	snapshot "$app" "$report" "$OUT/$tag.start.json" "$log"
	stall_client "$OUT/$tag-client.json"
	snapshot "$app" "$report" "$OUT/$tag.end.json" "$log"
	app_stop "$log"
	local w
	w=$(python3 bench/kernel_lab.py --libsirq-window "$OUT/$tag.start.json" "$OUT/$tag.end.json")
	record_stall libsirq "$policy" \
		"\"run\": $run, \"loadavg\": $load, \"load\": \"$LOAD\", \"client\": $(cat "$OUT/$tag-client.json"), \"window\": $w" \
		"\"stalls_per_s\": $(json_get - 'd["net_rx_stalls"] / d["seconds"]' <<<"$w")" \
		"$(retrans_fields "$OUT/$tag-client.json")"
}

# The report of the running app (SIGUSR1), moved to DST.
snapshot() {	# pid report dst log
	local _
	rm -f "$2"
	kill -USR1 "$1"
	for _ in $(seq 200); do
		[ -s "$2" ] && { mv "$2" "$3"; return 0; }
		kill -0 "$1" 2>/dev/null || fail "the app died; see $4"
		sleep 0.05
	done
	fail "no report on SIGUSR1; see $4"
}

# libsirq's receiver at this kernel's costs, from two kernel runs of
# udp-flood flat out that are not rows (kernel_lab.py --calibrate: CPU 1's
# softirq time over the packets its backlog processed, its task time over
# the datagrams read): the reader's cost from a run without the rules,
# where no kernel starves its receiver (under the rules 6.1+mainline's
# read 9.3 us a datagram against 2.2 on 6.1: time charged to it for
# softirqs it did not run); NET_RX's from a run with them. libsirq's NET_RX
# and reader then spend as much, the case's cost on top. Leaves the rules
# in place.
calibrated=""
calibrate_receiver() {
	local c proto app
	echo "   calibration: the kernel's reader under udp-flood flat out, no rules"
	run_flood 0 0 calibration-reader
	c=$(python3 bench/kernel_lab.py --calibrate "$OUT/flood-r0-c0-calibration-reader-sink.json") ||
		fail "calibration failed"
	app=${c#* } proto=${c% *}
	if [ "$RULES" != 0 ]; then
		rules_up
		echo "   calibration: the kernel's NET_RX under udp-flood flat out, $RULES rules"
		run_flood 0 0 calibration-netrx
		c=$(python3 bench/kernel_lab.py --calibrate "$OUT/flood-r0-c0-calibration-netrx-sink.json") ||
			fail "calibration failed"
		proto=${c% *}
	fi
	calibrated="proto=${proto}ns,app=COST+${app}ns,rcvbuf=256,threads=1"
	echo "   calibration: NET_RX $proto ns, reader $app ns a datagram: --receiver $calibrated"
}

# Which softirq code this kernel runs, by its symbols: 002 renames
# ksoftirqd_running() to ksoftirqd_should_handle(), 003 adds the per-CPU
# overload_limit of its windows; d15121be7485
# removes ksoftirqd_running(). Its config (/proc/config.gz, else the
# config-<release> of its package, KLAB_KERNEL_CONFIG) and the threads
# that run softirqs (ps: ksoftirqd/N, ktimers/N, backlog_napi/N, napi/...,
# irq/...), checked against the kernel's name by kernel_lab.py
# --kernel-check: 6.1-rt and 7.x-rt need CONFIG_PREEMPT_RT=y (7.x-rt
# without CONFIG_PREEMPT_RT_NEEDS_BH_LOCK), the others not. Written to
# OUT/kernel.json, whatever the verdict.
kernel_check() {
	local syms=(ksoftirqd_running ksoftirqd_should_handle overload_limit) s first=1 conf=- cfg rc=0
	if [ -r /proc/config.gz ]; then
		conf=$OUT/kernel-config
		zcat /proc/config.gz >"$conf"
	elif [ -n "${KLAB_KERNEL_CONFIG:-}" ] && [ -r "$KLAB_KERNEL_CONFIG" ]; then
		conf=$KLAB_KERNEL_CONFIG
	elif [ -r "/boot/config-$(uname -r)" ]; then
		conf=/boot/config-$(uname -r)
	fi
	ps -eo comm,cls,rtprio >"$OUT/kernel-ps.txt"
	cfg=$(python3 bench/kernel_lab.py --kernel-check "$KERNEL" "$(uname -r)" "$conf" \
		"$OUT/kernel-ps.txt" 2>"$OUT/kernel-check.err") || rc=$?
	[ -n "$cfg" ] || fail "kernel_lab.py --kernel-check failed: $(cat "$OUT/kernel-check.err")"
	{
		printf '{"kernel": "%s", "release": "%s", "symbols": {' "$KERNEL" "$(uname -r)"
		for s in "${syms[@]}"; do
			[ "$first" = 1 ] || printf ', '
			first=0
			if grep -qw "$s" /proc/kallsyms; then printf '"%s": true' "$s"; else printf '"%s": false' "$s"; fi
		done
		printf '}, %s\n' "${cfg#\{}"
	} >"$OUT/kernel.json"
	echo "   kernel: $(json_get "$OUT/kernel.json" '"config %s: %s; threads: %s" % (d["config_file"], d["config"], {k: len(v) for k, v in d["threads"].items()})')"
	[ "$rc" = 0 ] || fail "$KERNEL's config does not match its name: $(sed 's/^kernel_lab: //' "$OUT/kernel-check.err")"
	case $KERNEL in
	6.1+kicinski) grep -qw overload_limit /proc/kallsyms ||
		fail "6.1+kicinski without the patches' overload_limit in /proc/kallsyms" ;;
	6.1+mainline | 6.1 | 6.1-rt) ! grep -qw -e overload_limit -e ksoftirqd_should_handle /proc/kallsyms ||
		fail "$KERNEL runs the seed's patches" ;;
	esac
}

# Every scenario of one kernel, here.
run_here() {
	local run rate cost policy
	kernel_check
	echo "== kernel-lab on $KERNEL ($(uname -r)): $SCENARIOS; systems $SYSTEMS; $RUNS runs x ${SECONDS_PER_RUN} s"
	echo "   namespaces $NS_TX ($TX_IP, CPU $TX_CPU) and $NS_RX ($RX_IP, CPU $RX_CPU); libsirq: $POLICIES"
	echo "   load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	if wanted stall || wanted retrans; then
		for system in $SYSTEMS; do
			echo "== stall: $LOAD on CPU $RX_CPU; $CONNS connections, 64..4096 B, 1 ms apart; rto_min $RTO_MIN"
			net_up "$system"
			[ "$system" != kernel ] || ksoftirqd_sched on
			for run in $(seq "$RUNS"); do
				if [ "$system" = kernel ]; then
					run_stall "$run"
				else
					for policy in $POLICIES; do run_libsirq_stall "$policy" "$run"; done
				fi
			done
			[ "$system" != kernel ] || ksoftirqd_sched off
			net_down
		done
	fi
	if wanted flood; then
		for system in $SYSTEMS; do
			if [ "$system" = libsirq ] && [ "$RECEIVER" = auto ]; then
				[ -n "$calibrated" ] ||
					fail "KLAB_RECEIVER=auto takes the kernel's costs from its flood run: add kernel to KLAB_SYSTEMS, or give KLAB_RECEIVER"
				RECEIVER=$calibrated
			fi
			echo "== flood: rates $RATES pps, costs $COSTS ns, ${SIZE}-byte datagrams"
			net_up "$system"
			if [ "$system" = kernel ] && [ "$RECEIVER" = auto ] && [[ " $SYSTEMS " = *" libsirq "* ]]; then
				calibrate_receiver
			elif [ "$system" = kernel ] && [ "$RULES" != 0 ]; then
				rules_up
			fi
			[ "$system" = kernel ] || static_neigh
			[ "$system" != kernel ] || ksoftirqd_sched on
			for run in $(seq "$RUNS"); do
				for rate in $RATES; do for cost in $COSTS; do
					if [ "$system" = kernel ]; then
						run_flood "$rate" "$cost" "$run"
					else
						for policy in $POLICIES; do run_libsirq_flood "$policy" "$rate" "$cost" "$run"; done
					fi
				done; done
			done
			[ "$system" != kernel ] || ksoftirqd_sched off
			net_down
		done
	fi
}

default_policies() {	# kernel
	case $1 in
	6.1+kicinski) echo kicinski ;;
	6.1+mainline) echo mainline ;;
	6.1-rt) echo rt ;;
	7.x-rt) echo pushdown ;;
	7.x) echo mainline ;;
	*) echo "ksoftirqd kicinski mainline deferred" ;;
	esac
}

# Every policy asked for is one libsirq.so of this build knows
# (sirq_policy_from_name()): rt and pushdown are issue 28's.
policies_check() {	# kernel policies
	local p
	for p in $2; do
		python3 -c 'import ctypes, sys; sys.exit(ctypes.CDLL(sys.argv[1]).sirq_policy_from_name(sys.argv[2].encode()) < 0)' \
			"$BUILD/lib/sirq/libsirq.so" "$p" ||
			fail "$1: libsirq's policy '$p' is not in this build ($BUILD/lib/sirq/libsirq.so); KLAB_POLICY=mainline runs the lab with mainline in its place"
	done
}

# The image of a guest kernel: Debian's as shipped (in /boot, or fetched
# from Debian's archive by scripts/kernel-fetch.sh), or one built here.
kernel_image() {	# kernel
	case $1 in
	6.1)
		ls -v /boot/vmlinuz-6.1.*-cloud-amd64 2>/dev/null | tail -n 1 | grep . ||
			fail "no Debian 6.1 image in /boot: apt-get install linux-image-cloud-amd64" ;;
	6.1-rt | 7.x-rt | 7.x)
		scripts/kernel-fetch.sh "$1" || fail "scripts/kernel-fetch.sh $1 failed" ;;
	*)
		scripts/kernel-build.sh "$1" || fail "scripts/kernel-build.sh $1 failed" ;;
	esac
}

# The config of a guest kernel's image: config-<release> beside
# vmlinuz-<release> (Debian's packages), else the tree kernel-build.sh
# builds from (one config for its three variants).
kernel_config() {	# image
	local c
	case $1 in
	*/vmlinuz-*) c=${1%/vmlinuz-*}/config-${1##*/vmlinuz-} ;;
	*) c=${KERNEL_CACHE:-/var/cache/libsirq-kernels}/linux-source-6.1/.config ;;
	esac
	[ ! -r "$c" ] || echo "$c"
}

# One guest kernel: this script again inside it, writing to OUT/KERNEL/.
run_guest() {	# kernel
	local k=$1 image dir n timeout conf
	image=$(kernel_image "$k")
	conf=$(kernel_config "$image")
	dir=$OUT/$k
	mkdir -p "$dir"
	# The config against the name before a boot, where the image names its
	# release; the guest checks again on the kernel it runs.
	if [ -n "$conf" ] && [[ $image = */vmlinuz-* ]]; then
		python3 bench/kernel_lab.py --kernel-check "$k" "${image##*/vmlinuz-}" "$conf" /dev/null \
			>/dev/null 2>"$dir/kernel-check.err" ||
			fail "$k ($image): its config does not match its name: $(sed 's/^kernel_lab: //' "$dir/kernel-check.err")"
	fi
	n=$(( ( $(wc -w <<<"$SYSTEMS") * $(wc -w <<<"${KLAB_POLICY:-$(default_policies "$k")}") + 2) * RUNS *
		( $(wc -w <<<"$RATES") * $(wc -w <<<"$COSTS") + 1 ) ))
	timeout=$(( 300 + n * (SECONDS_PER_RUN + 60) ))
	echo "== $k: $image in the guest lab (at most $timeout s)"
	scripts/guest.sh --kernel "$image" --smp 2 --mem 3072 --hugepages 0 --out "$dir" \
		--append "$GUEST_APPEND" \
		--timeout "$timeout" --wedged-retries 1 -- env KLAB_INSIDE="$k" KLAB_OUT="$dir" KLAB_KERNEL_CONFIG="$conf" \
		KLAB_SCENARIOS="$SCENARIOS" KLAB_SYSTEMS="$SYSTEMS" \
		KLAB_POLICY="${KLAB_POLICY:-$(default_policies "$k")}" KLAB_RUNS="$RUNS" \
		KLAB_SECONDS="$SECONDS_PER_RUN" KLAB_RATES="$RATES" KLAB_COSTS="$COSTS" \
		KLAB_SIZE="$SIZE" KLAB_RULES="$RULES" KLAB_LIBSIRQ_INPUT="$LIBSIRQ_INPUT" KLAB_RCVBUF="${KLAB_RCVBUF:-}" KLAB_RECEIVER="$RECEIVER" \
		KLAB_LOAD="$LOAD" KLAB_CONNS="$CONNS" KLAB_RTO_MIN="$RTO_MIN" KLAB_TLP="$TLP" KLAB_BUILD="$BUILD" \
		KLAB_KSOFTIRQD_SCHED="$KSOFTIRQD_SCHED" \
		bash bench/kernel-lab.sh || fail "$k: the guest's run failed (exit $?); see $dir/console*.log"
	[ -s "$dir/runs.jsonl" ] || fail "$k: the guest wrote no runs"
	cat "$dir/runs.jsonl" >>"$OUT/runs.jsonl"
	cat "$dir/kernel.json" >>"$OUT/kernels.jsonl"
}

mkdir -p "$OUT"
if [ -n "$INSIDE" ]; then
	KERNEL=$INSIDE
	POLICIES=${KLAB_POLICY:-$(default_policies "$KERNEL")}
	policies_check "$KERNEL" "$POLICIES"
	rm -f "$OUT"/runs.jsonl
	run_here
	exit 0
fi

for KERNEL in $KERNELS; do
	policies_check "$KERNEL" "${KLAB_POLICY:-$(default_policies "$KERNEL")}"
done
find "$OUT" -mindepth 1 -delete
start=$(date +%s)
for KERNEL in $KERNELS; do
	if [ "$KERNEL" = host ]; then
		POLICIES=${KLAB_POLICY:-$(default_policies host)}
		run_here
		cat "$OUT/kernel.json" >>"$OUT/kernels.jsonl"
	else
		run_guest "$KERNEL"
	fi
done

echo "== results ($(($(date +%s) - start)) s in all)"
python3 bench/kernel_lab.py "$OUT/runs.jsonl" "$OUT.json" "$OUT.md"
cat "$OUT.md"
echo "JSON: $OUT.json; tables: $OUT.md; per run: $OUT/"
