#!/usr/bin/env bash
# Install dependencies, build, and run the main job: today the engine demo,
# which plays a scripted stall scenario and a flood scenario under every
# policy on simulated time and prints them side by side.
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

mkdir -p out
echo "== run: build/tools/sirq-demo --json out/demo.json"
./build/tools/sirq-demo --json out/demo.json
echo
echo "JSON: out/demo.json   docs: README.md, docs/"
