#!/usr/bin/env bash
# One short libFuzzer run of a target, as CI does it: the kept corpus
# (hand-made seeds and regression inputs) is replayed first, then new
# inputs for FUZZ_SECONDS (default 15). New inputs and any crash go under
# WORKDIR, never into the source tree.
#   run-fuzz.sh FUZZER SEED_DIR WORKDIR [libFuzzer options...]
set -euo pipefail

fuzzer=$1 seeds=$2 work=$3
shift 3
secs=${FUZZ_SECONDS:-15}
mkdir -p "$work/corpus" "$work/artifacts"

echo "fuzz: $(basename "$fuzzer") for ${secs}s from $seeds"
# -close_fd_mask=3: the targets' own messages (usage errors) would flood
# the log; libFuzzer and the sanitizers keep their own descriptor.
exec "$fuzzer" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
	-close_fd_mask=3 -artifact_prefix="$work/artifacts/" "$@" \
	"$work/corpus" "$seeds" </dev/null
