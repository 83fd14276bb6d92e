#!/bin/bash
# In a guest of scripts/guest.sh: run l2fwd-sirq once per run-N.args file
# in DIR (its arguments, one per line), in order, each while the host's
# tests/guest/test_guest.py sends it traffic. The two sides meet through
# files in DIR, which the host sees:
#   run-N.pre     a command to run first (host side; e.g. sriov-vf.sh):
#                 when it fails, the run is "dead"
#   run-N.ready   "up": l2fwd-sirq is forwarding, "dead": it exited or
#                 never said so (this side)
#   run-N.done    the host has its books; stop with SIGINT (host side)
#   run-N.json    l2fwd-sirq's report, run-N.log its output, run-N.rc its
#                 exit status, run-N.cpu the CPU it used from its start to
#                 the stop ("USER_S SYS_S WALL_S", every thread) (this side)
#   run-N.hang    when l2fwd-sirq had not exited STOP_S (FWD_STOP_S, 60)
#                 after the SIGINT: each thread's state, kernel stack and,
#                 with gdb, user stack; then it is killed (SIGKILL) and its
#                 status is 137, and the next run goes on (this side)
# DIR/first, when there, holds the number of the first run (a new guest
# for the runs after one whose guest wedged: tests/guest/test_guest.py).
# Then, with AFTER and DIR/after.args, AFTER runs once with those
# arguments: after.json its stdout, after.log its stderr, after.rc its
# exit status (tests/guest/tx_tracked.c).
# Exits 0 when every run exited 0.
#
#   fwd-runs.sh DIR L2FWD_SIRQ [AFTER]
set -u
dir=$1 l2fwd=$2 after=${3:-}
wait_s=${FWD_RUN_WAIT_S:-600}
stop_s=${FWD_STOP_S:-60}

# The host polls for these files: each appears whole, or not at all.
put() { echo "$2" >"$1.tmp" && mv "$1.tmp" "$1"; }

# Where PID's threads are: comm, state, wchan and kernel stack of each,
# then every user stack when gdb is there.
threads_of() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "== thread ${t##*/} $(cat "$t/comm" 2>/dev/null):" \
			"$(grep '^State:' "$t/status" 2>/dev/null)," \
			"wchan $(cat "$t/wchan" 2>/dev/null)"
		cat "$t/stack" 2>/dev/null
	done
	if command -v gdb >/dev/null; then
		timeout -k 5 60 gdb -q -batch -p "$1" -ex 'thread apply all bt' 2>&1
	fi
}

rc_all=0
n=$(cat "$dir/first" 2>/dev/null || echo 1)
while [ -f "$dir/run-$n.args" ]; do
	mapfile -t argv <"$dir/run-$n.args"
	if [ -f "$dir/run-$n.pre" ]; then
		echo "fwd-runs: run $n: first $(cat "$dir/run-$n.pre")"
		if ! bash "$dir/run-$n.pre" >"$dir/run-$n.log" 2>&1; then
			cat "$dir/run-$n.log"
			put "$dir/run-$n.ready" dead
			put "$dir/run-$n.rc" 125
			rc_all=1
			n=$((n + 1))
			continue
		fi
		cat "$dir/run-$n.log"
	fi
	echo "fwd-runs: run $n: l2fwd-sirq ${argv[*]}"
	t0=$(date +%s.%N)
	"$l2fwd" "${argv[@]}" --report "$dir/run-$n.json" >"$dir/run-$n.log" 2>&1 &
	pid=$!
	# Up when every lcore said what it forwards; dead is an answer too.
	state=dead
	for _ in $(seq $((wait_s * 10))); do
		grep -q ' forwards ' "$dir/run-$n.log" 2>/dev/null && { state=up; break; }
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	put "$dir/run-$n.ready" "$state"
	for _ in $(seq $((wait_s * 10))); do
		[ -f "$dir/run-$n.done" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	# utime and stime (fields 14 and 15, after the ") " that ends comm).
	if read -r stat 2>/dev/null <"/proc/$pid/stat"; then
		set -- ${stat##*) }
		hz=$(getconf CLK_TCK)
		echo "${12} ${13} $hz $t0 $(date +%s.%N)" |
			awk '{ printf "%.2f %.2f %.2f\n", $1 / $3, $2 / $3, $5 - $4 }' >"$dir/run-$n.cpu"
	fi
	kill -INT "$pid" 2>/dev/null
	# A stop that never ends is a failure of its own, said with where
	# each thread is; the next run does not wait for it.
	for _ in $(seq $((stop_s * 10))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		threads_of "$pid" >"$dir/run-$n.hang.tmp" 2>&1
		mv "$dir/run-$n.hang.tmp" "$dir/run-$n.hang"
		echo "fwd-runs: run $n: still running ${stop_s} s after SIGINT: killed"
		kill -KILL "$pid" 2>/dev/null
	fi
	rc=0
	wait "$pid" || rc=$?
	put "$dir/run-$n.rc" "$rc"
	echo "fwd-runs: run $n: exit $rc"
	[ "$rc" -eq 0 ] || rc_all=1
	n=$((n + 1))
done
if [ -n "$after" ] && [ -f "$dir/after.args" ]; then
	mapfile -t argv <"$dir/after.args"
	echo "fwd-runs: after: ${after##*/} ${argv[*]}"
	rc=0
	timeout -k 5 "$wait_s" "$after" "${argv[@]}" >"$dir/after.json" 2>"$dir/after.log" || rc=$?
	put "$dir/after.rc" "$rc"
	echo "fwd-runs: after: exit $rc"
fi
exit "$rc_all"
