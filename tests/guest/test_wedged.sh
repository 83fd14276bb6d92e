#!/usr/bin/env bash
# scripts/guest.sh --wedged-retries: a guest whose kernel reports an RCU
# stall is stopped and the command runs again in a new guest; past the
# retries guest.sh exits 75; a guest that times out lists where the
# command's processes wait and shows its console.
# The stall report is the guest kernel's own console line, written here
# through /dev/kmsg at KERN_ERR by the command itself (a real wedge, a
# vCPU multi-threaded TCG left halted, cannot be made on demand). Five
# short boots. Exit 77 where the guest lab cannot run.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d /tmp/sirq-wedged.XXXXXX)
trap 'rm -rf "$t"' EXIT
fails=0
fail() { echo "test_wedged: FAIL: $*"; fails=$((fails + 1)); }
show() { sed 's/^/    /' "$1" | tail -n "${2:-25}"; }
guest() {	# name [guest.sh options] -- cmd...
	local name=$1 rc=0
	shift
	mkdir -p "$t/$name"
	"$top/scripts/guest.sh" --out "$t/$name" --hugepages 0 "$@" \
		>"$t/$name.out" 2>"$t/$name.err" || rc=$?
	echo "$rc"
}
stall='echo "<3>rcu: INFO: rcu_sched detected stalls on CPUs/tasks: (test_wedged.sh)" >/dev/kmsg'

# Guest 1 reports the stall and sleeps: it is stopped, the command runs
# again in guest 2, which finishes.
rc=$(guest retry --timeout 300 --wedged-retries 1 -- bash -c \
	"echo attempt \$GUEST_ATTEMPT; if [ \"\$GUEST_ATTEMPT\" = 1 ]; then $stall; sleep 600; fi; echo finished")
if [ "$rc" -eq 77 ]; then
	echo "skip: $(tail -n 1 "$t/retry.err")"
	exit 77
fi
if [ "$rc" -ne 0 ] || [ "$(cat "$t/retry.out")" != "$(printf 'attempt 1\nattempt 2\nfinished')" ]; then
	fail "retry: exit $rc, output '$(tr '\n' '|' <"$t/retry.out")' (want attempt 1|attempt 2|finished)"
	show "$t/retry.err"
fi
grep -q "guest 1 wedged: its kernel reported an RCU stall" "$t/retry.err" &&
	grep -q "detected stalls on CPUs/tasks: (test_wedged.sh)" "$t/retry.err" &&
	grep -q "running the command again in a new guest (2 of 2)" "$t/retry.err" ||
	{ fail "retry: guest.sh did not say why it ran the command again"; show "$t/retry.err"; }
grep -q "test_wedged.sh" "$t/retry/console.wedged-1.log" 2>/dev/null ||
	fail "retry: the wedged guest's console was not kept as console.wedged-1.log"
! grep -q "test_wedged.sh" "$t/retry/console.log" 2>/dev/null ||
	fail "retry: console.log is the wedged guest's, not the second's"

# A former guest's stall report in a reused --out is not this guest's.
mkdir -p "$t/stale"
printf '[    5.1] rcu: INFO: rcu_sched detected stalls on CPUs/tasks: (stale)\n' >"$t/stale/console.log"
rc=$(guest stale --timeout 300 --wedged-retries 0 -- bash -c 'sleep 3; echo done')
[ "$rc" -eq 0 ] && [ "$(cat "$t/stale.out")" = done ] ||
	{ fail "stale: exit $rc, output '$(cat "$t/stale.out")' (want 0, done)"; show "$t/stale.err"; }

# Bad values are refused by name, before any boot.
rc=0
"$top/scripts/guest.sh" --wedged-retries x -- true >/dev/null 2>"$t/bad.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "wedged-retries must be a number, not 'x'" "$t/bad.err" ||
	{ fail "--wedged-retries x: exit $rc"; show "$t/bad.err"; }

# Every guest wedges: exit 75 after 1 + 0 guests.
rc=$(guest giveup --timeout 300 --wedged-retries 0 -- bash -c "$stall; sleep 600")
[ "$rc" -eq 75 ] && grep -q "the guest wedged 1 times: giving up" "$t/giveup.err" ||
	{ fail "giveup: exit $rc (want 75)"; show "$t/giveup.err"; }

# A guest that times out lists where the command's threads wait, at
# half its time (under 120 s) of uptime, and shows the console's tail
# (here the init's first line).
rc=$(guest timeout --timeout 40 -- bash -c 'sleep 600; echo slept')
[ "$rc" -eq 124 ] && grep -q "timed out after 40 s" "$t/timeout.err" &&
	grep -A 30 "its last lines" "$t/timeout.err" | grep -q "^guest: init" ||
	{ fail "timeout: exit $rc (want 124 and the console's tail)"; show "$t/timeout.err"; }
grep -q "^guest-init: the command still runs at 20 s of uptime; where its threads wait:" "$t/timeout.out" &&
	grep -q "^-- [0-9]*/[0-9]* sleep (S (sleeping)):" "$t/timeout.out" &&
	grep -q "hrtimer_nanosleep" "$t/timeout.out" &&
	grep -E -q "^ *[0-9]+ +[0-9]+ +S .* sleep 600$" "$t/timeout.out" ||
	{ fail "timeout: no list of the command's processes before the timeout"; show "$t/timeout.out" 40; }

[ "$fails" -eq 0 ] || exit 1
echo "test_wedged: ok: a wedged guest ran again, gave up with 75 past its retries; a timeout listed the processes and showed the console"
