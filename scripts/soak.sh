#!/usr/bin/env bash
# Soak: l2fwd-sirq forwarding a net_null flood (two ports, one lcore) with
# the app load beside the dispatcher, for SOAK_SECONDS (default 600).
# Every SOAK_INTERVAL seconds (default 5) it samples the process's
# resident memory (VmRSS) and asks for the JSON report (SIGUSR1): mbufs in
# use, port and lcore counters, NET_RX stalls. At the end (SIGINT) it
# checks that RSS and mempool use stayed flat after the warm-up, every
# counter only grew, and forwarding and the dispatcher advanced in every
# interval (no stall of the framework itself), and prints the figures.
# Not a CI test: it loads one CPU for the whole run.
#
#   SOAK_SECONDS=60 ./scripts/soak.sh [build-dir]    # results in out/soak/
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build-ci}
secs=${SOAK_SECONDS:-600}
interval=${SOAK_INTERVAL:-5}
policy=${SOAK_POLICY:-kicinski}
load=${SOAK_APP_LOAD:-hold=10ms,period=50ms}
out=${SOAK_OUT:-out/soak}
app=$build/apps/l2fwd-sirq/l2fwd-sirq
prefix=soak-$$

[ -x "$app" ] || { echo "soak: no $app; build first (meson setup $build && ninja -C $build)" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/samples.jsonl "$out"/report.json
echo "soak: $app, $secs s, sample every $interval s, --policy $policy --app-load $load -> $out/"

"$app" -l 0 --no-huge -m 256 --no-pci --file-prefix="$prefix" \
	--log-level='*:warning' --vdev=net_null0 --vdev=net_null1 -- \
	-T 0 --policy "$policy" --app-load "$load" \
	--report "$out/report.json" >"$out/app.log" 2>&1 &
pid=$!
cleanup() {
	kill -KILL "$pid" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$prefix"
}
trap cleanup EXIT

start=$(date +%s)
while [ $(( $(date +%s) - start )) -lt "$secs" ]; do
	sleep "$interval"
	kill -0 "$pid" 2>/dev/null || { echo "soak: l2fwd-sirq died" >&2; cat "$out/app.log" >&2; exit 1; }
	rm -f "$out/report.json"
	kill -USR1 "$pid"
	for _ in $(seq 50); do [ -s "$out/report.json" ] && break; sleep 0.1; done
	[ -s "$out/report.json" ] || { echo "soak: no report within 5 s of SIGUSR1" >&2; exit 1; }
	rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
	python3 - "$out/report.json" "$rss_kb" "$(( $(date +%s) - start ))" >>"$out/samples.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lc = r["sirq"]["lcores"][0]["counters"]
print(json.dumps({
	"t_s": int(sys.argv[3]), "rss_kb": int(sys.argv[2]),
	"mbufs_in_use": r["mbufs_in_use"],
	"rx": sum(p["rx"] for p in r["ports"]), "tx": sum(p["tx"] for p in r["ports"]),
	"iterations": lc["iterations"], "worker_passes": lc["worker_passes"],
	"tx_dropped": lc["tx_dropped"],
	"net_rx_stalls": sum(l["net_rx_stalls"] for l in r["lcores"]),
	"net_rx_max_ns": max(l["net_rx_max_ns"] for l in r["lcores"]),
	"app_work_units": sum(a["work_units"] for a in r.get("app_load", [])),
}))
PY
	tail -n 1 "$out/samples.jsonl"
done

kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
trap - EXIT
rm -rf "/var/run/dpdk/$prefix"
[ "$rc" -eq 0 ] || { echo "soak: l2fwd-sirq exited with $rc after SIGINT" >&2; exit 1; }

python3 - "$out/samples.jsonl" "$out/report.json" "$out/summary.json" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])]
final = json.load(open(sys.argv[2]))
WARMUP = max(1, len(s) // 10)		# the first tenth: pools and caches fill
RSS_SLACK_KB = 1024			# page-granular noise of a flat process
steady = s[WARMUP:]
problems = []
rss0 = steady[0]["rss_kb"]
rss_growth = max(x["rss_kb"] for x in steady) - rss0
if rss_growth > RSS_SLACK_KB:
	problems.append(f"VmRSS grew {rss_growth} kB after warm-up")
half = len(steady) // 2
mb_first = max(x["mbufs_in_use"] for x in steady[:max(half, 1)])
mb_second = max(x["mbufs_in_use"] for x in steady[half:])
if mb_second > mb_first:
	problems.append(f"mbufs in use rose: max {mb_first} then {mb_second}")
for k in ("rx", "tx", "iterations", "worker_passes", "tx_dropped", "net_rx_stalls", "app_work_units"):
	for a, b in zip(s, s[1:]):
		if b[k] < a[k]:
			problems.append(f"{k} went back at {b['t_s']} s")
for a, b in zip(s, s[1:]):
	for k in ("rx", "iterations", "app_work_units"):
		if b[k] == a[k]:
			problems.append(f"no {k} progress between {a['t_s']} and {b['t_s']} s")
secs = s[-1]["t_s"]
summary = {
	"samples": len(s), "seconds": secs,
	"rss_kb_first": s[0]["rss_kb"], "rss_kb_after_warmup": rss0,
	"rss_kb_max": max(x["rss_kb"] for x in s), "rss_growth_kb_after_warmup": rss_growth,
	"mbufs_in_use_min": min(x["mbufs_in_use"] for x in s),
	"mbufs_in_use_max": max(x["mbufs_in_use"] for x in s),
	"mbufs_in_use_at_exit": final["mbufs_in_use"],
	"rx_mpps": round(s[-1]["rx"] / secs / 1e6, 2),
	"packets_forwarded": s[-1]["tx"],
	"net_rx_stalls_per_s": round(s[-1]["net_rx_stalls"] / secs, 3),
	"net_rx_max_ms": round(s[-1]["net_rx_max_ns"] / 1e6, 1),
	"app_work_units_per_s": round(s[-1]["app_work_units"] / secs),
	"problems": problems,
}
if final["mbufs_in_use"] != 0:
	problems.append(f"{final['mbufs_in_use']} mbufs in use at exit")
json.dump(summary, open(sys.argv[3], "w"), indent=1)
print(json.dumps(summary, indent=1))
sys.exit(1 if problems else 0)
PY
