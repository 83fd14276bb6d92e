#!/usr/bin/env bash
# The policy lab on simulated time: sirq-sim plays the stall and flood
# scenarios under every policy and execution model, at tick_hz 0
# (TSC-exact windows), 100, 250 and 1000, with the kernel's ksoftirqd and
# with libsirq's boosted sirqd as the worker, plus the flood at 100 Gb/s
# line rate of 64 B frames, and the models with their softirq threads
# busy: a 1 ms timer (ktimers), then also the application's bottom-half
# sections (the BH lock); bench/policy_plots.py turns the JSON into
# markdown tables and SVG plots. Everything lands in out/policy-sim/.
# Seconds on 2 cores.
#
#   SIM_DURATION_MS=N   simulated time per run (default 30000)
#   IMG_DIR=DIR         also copy the plots that docs/policies.md shows
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
SIM=$BUILD/tools/sirq-sim
OUT=out/policy-sim
DURATION=${SIM_DURATION_MS:-30000}

if [ ! -x "$SIM" ]; then
	echo "== build ($BUILD)"
	[ -d "$BUILD" ] || meson setup "$BUILD" >/dev/null
	ninja -C "$BUILD" -j2 tools/sirq-sim
fi
mkdir -p "$OUT"

run() {	# name, sirq-sim options...
	local name=$1
	shift
	echo "== $SIM $* --json $OUT/$name.json"
	"$SIM" --quiet --json "$OUT/$name.json" "$@"
}

run sim-kernel --duration-ms "$DURATION" --tick-hz 0,100,250,1000 --worker kernel
run sim-sirqd --duration-ms "$DURATION" --worker sirqd
# 100 Gb/s of 64 B frames is 148.8 Mpps; 13.44 ns a packet is half of it
# (the flood), 1.34 ns a fifth (stall: about the default's network load).
# A real NIC interrupts a few us after a packet: --rx-irq-us 8.
run sim-100g-flood --scenario flood --duration-ms 1000 --rate-gbps 100 \
	--pkt-size 64 --cost-ns 13.44 --rx-irq-us 8
run sim-100g-stall --scenario stall --duration-ms 5000 --rate-gbps 100 \
	--pkt-size 64 --cost-ns 1.34 --rx-irq-us 8
# The execution models' threads at work (docs/policies.md, "The execution
# models"): TIMER every 1 ms, then 200 us bottom-half sections in every
# 1 ms of the application's CPU time.
run sim-models --duration-ms "$DURATION" --timer-us 1000
run sim-models-bh --duration-ms "$DURATION" --timer-us 1000 \
	--app-bh-us 200 --app-bh-every-us 1000

for name in sim-kernel sim-sirqd sim-100g-flood sim-100g-stall sim-models \
	sim-models-bh; do
	echo
	echo "== python3 bench/policy_plots.py --out $OUT --prefix $name $OUT/$name.json"
	python3 bench/policy_plots.py --out "$OUT" --prefix "$name" "$OUT/$name.json"
done

if [ -n "${IMG_DIR:-}" ]; then
	mkdir -p "$IMG_DIR"
	cp "$OUT"/sim-kernel-stall-cdf.svg "$OUT"/sim-kernel-stall-stalls.svg \
		"$OUT"/sim-kernel-flood-app.svg "$OUT"/sim-kernel-stall-tickhz.svg \
		"$OUT"/sim-kernel-flood-tickhz.svg "$IMG_DIR"/
	echo "plots copied to $IMG_DIR"
fi
echo "JSON, tables (*-tables.md) and plots (*.svg): $OUT/"
