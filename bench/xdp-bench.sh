#!/usr/bin/env bash
# l2fwd-sirq on net_af_xdp against net_af_packet, on the same veths in
# one run: two veth pairs into a network namespace this script makes and
# deletes; inside it dpdk-testpmd (txonly, net_af_packet, on lcore 1) floods
# both far ends; l2fwd-sirq forwards on this side (lcore 0), each PMD in
# turn, ROUNDS alternated pairs of RUN_S seconds. The rate is what
# l2fwd-sirq received and sent a second (its report's rx_pps, tx_pps,
# both ports), the ratio af_xdp / af_packet per pair.
#
#   bench/xdp-bench.sh [ROUNDS [RUN_S]]      (default 5 rounds of 5 s)
#
# Environment: L2FWD_SIRQ (default build/apps/l2fwd-sirq/l2fwd-sirq),
# XDP_MODE=poll|irq (l2fwd-sirq's --mode, default its default), OUT
# (default out/xdp-bench: each run's report). Root. Prints a Markdown
# table; exit 1 when a run fails, 77 when XDP or testpmd cannot run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
rounds=${1:-5} run_s=${2:-5}
case $rounds$run_s in *[!0-9]*) echo "xdp-bench: ROUNDS and RUN_S are numbers, not '$rounds' '$run_s'" >&2; exit 2 ;; esac
l2fwd=${L2FWD_SIRQ:-$top/build/apps/l2fwd-sirq/l2fwd-sirq}
out=${OUT:-$top/out/xdp-bench}
[ -x "$l2fwd" ] || { echo "xdp-bench: no l2fwd-sirq at $l2fwd" >&2; exit 2; }
command -v dpdk-testpmd >/dev/null || { echo "xdp-bench: dpdk-testpmd missing" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "xdp-bench: needs root" >&2; exit 77; }
mkdir -p "$out"

tag=$$
ns=sqxb$tag
a=(xba${tag}_0 xba${tag}_1) b=(xbb${tag}_0 xbb${tag}_1)
tpid=""
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null && wait "$tpid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null || true
	for i in 0 1; do ip link del "${a[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$ns"
for i in 0 1; do
	ip link add "${a[$i]}" type veth peer name "${b[$i]}"
	ip link set "${b[$i]}" netns "$ns"
	sysctl -qw "net.ipv6.conf.${a[$i]}.disable_ipv6=1"
	ip netns exec "$ns" sysctl -qw "net.ipv6.conf.${b[$i]}.disable_ipv6=1"
	ip link set "${a[$i]}" up
	ip netns exec "$ns" ip link set "${b[$i]}" up
done

# The source: testpmd's txonly on both far ends, on lcore 1, until this
# script stops it (--stats-period: no prompt, it runs until a signal).
ip netns exec "$ns" dpdk-testpmd -l 0,1 --no-pci --no-huge -m 512 \
	--file-prefix xbsrc$tag --log-level lib.eal:error \
	--vdev "net_af_packet0,iface=${b[0]}" --vdev "net_af_packet1,iface=${b[1]}" -- \
	--forward-mode=txonly --txpkts=64 --total-num-mbufs=16384 --stats-period 60 \
	</dev/null >"$out/testpmd.log" 2>&1 &
tpid=$!
sleep 3
kill -0 "$tpid" 2>/dev/null || { echo "xdp-bench: testpmd did not start:" >&2; tail -5 "$out/testpmd.log" >&2; exit 77; }

one() {	# PMD ROUND -> "rx_pps tx_pps"
	local pmd=$1 r=$2 rep="$out/$1-$2.json"
	"$l2fwd" -l 0 --no-pci --file-prefix "xb$tag" --log-level lib.eal:error \
		--vdev "${pmd}0,iface=${a[0]}" --vdev "${pmd}1,iface=${a[1]}" -- \
		-p 0x3 -T 0 ${XDP_MODE:+--mode "$XDP_MODE"} --duration "$run_s" \
		--report "$rep" >"$out/$pmd-$r.log" 2>&1 ||
		{ echo "xdp-bench: l2fwd-sirq on $pmd failed:" >&2; tail -5 "$out/$pmd-$r.log" >&2; return 1; }
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print("%.0f %.0f" % (sum(p["rx_pps"] for p in r["ports"]), sum(p["tx_pps"] for p in r["ports"])))' "$rep"
}

echo "| pair | af_xdp rx Mpps | af_packet rx Mpps | ratio |"
echo "|---|--:|--:|--:|"
ratios=()
for r in $(seq "$rounds"); do
	# Alternate which PMD goes first.
	if [ $((r % 2)) -eq 1 ]; then
		x=$(one net_af_xdp "$r"); p=$(one net_af_packet "$r")
	else
		p=$(one net_af_packet "$r"); x=$(one net_af_xdp "$r")
	fi
	ratio=$(awk -v x="${x% *}" -v p="${p% *}" 'BEGIN { printf "%.3f", (p > 0 ? x / p : 0) }')
	ratios+=("$ratio")
	awk -v r="$r" -v x="${x% *}" -v p="${p% *}" -v q="$ratio" \
		'BEGIN { printf "| %d | %.3f | %.3f | %s |\n", r, x / 1e6, p / 1e6, q }'
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END {
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "\nmedian ratio af_xdp / af_packet: %.3f (%d pairs, %s to %s)\n", m, NR, v[1], v[NR] }'
