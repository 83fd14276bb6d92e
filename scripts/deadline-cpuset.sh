#!/usr/bin/env bash
# Give one CPU a scheduling root domain of its own, so that a softirq
# thread pinned to it can take a SCHED_DEADLINE reservation
# (--softirq-thread-sched net_rx=deadline:R/P) while the kernel's
# real-time bandwidth control is on (kernel.sched_rt_runtime_us >= 0).
#
# The kernel's rule: a deadline task's affinity must span its root
# domain, and admission control counts the domain's CPUs. A thread pinned
# to one CPU of an ordinary machine spans nothing, so sched_setattr()
# says EPERM. An exclusive cpuset holding just that CPU, with load
# balancing off above it, makes the CPU a root domain of one:
#
#   cgroup v1: two exclusive cpusets under the top one, sirq-rd<CPU>
#              (the CPU) and sirq-rest (the others), and
#              cpuset.sched_load_balance=0 at the top;
#   cgroup v2: a child cgroup sirq-rd<CPU> with cpuset.cpus=CPU and
#              cpuset.cpus.partition=root.
#
# No task is moved: the root domain is the CPU's, whoever runs there.
# The other CPUs are no longer balanced with that one, which is what a
# dataplane CPU wants anyway.
#
#   ./scripts/deadline-cpuset.sh up CPU     make it (again: nothing to do)
#   ./scripts/deadline-cpuset.sh down       undo what "up" made
#   ./scripts/deadline-cpuset.sh status     say what is there
#
# Prints one line saying what it did or why it could not. Exits 0 when
# done, 77 when it cannot be done here (not root, no cpuset controller,
# one CPU only, another exclusive cpuset in the way), 2 on a bad argument.
set -euo pipefail

say() { echo "deadline-cpuset: $*"; }
skip() { echo "deadline-cpuset: skip: $*" >&2; exit 77; }
usage() { echo "usage: $0 up CPU | down | status" >&2; exit 2; }

V1=/sys/fs/cgroup/cpuset
V2=/sys/fs/cgroup
mode=

# v1 when a cpuset hierarchy is mounted on its own, else v2 with the
# cpuset controller available at the top.
find_mode() {
	if [ -f "$V1/cpuset.cpu_exclusive" ]; then
		mode=v1
	elif [ -f "$V2/cgroup.controllers" ] &&
		grep -qw cpuset "$V2/cgroup.controllers"; then
		mode=v2
	else
		skip "no cpuset controller (neither $V1 nor cpuset in $V2/cgroup.controllers)"
	fi
}

# The online CPUs other than $1, as a cpuset list.
others() {
	python3 - "$1" <<'EOF'
import sys
cpu = int(sys.argv[1])
def parse(s):
    out = []
    for part in s.strip().split(','):
        if not part:
            continue
        a, _, b = part.partition('-')
        out += range(int(a), int(b or a) + 1)
    return out
cpus = [c for c in parse(open('/sys/devices/system/cpu/online').read()) if c != cpu]
print(','.join(map(str, cpus)))
EOF
}

up_v1() {
	local cpu=$1 rest mems rd other="$V1/sirq-rest"
	rd="$V1/sirq-rd$cpu"
	rest=$(others "$cpu")
	[ -n "$rest" ] || skip "CPU $cpu is the only online CPU: a root domain of its own would hold everything"
	mems=$(cat "$V1/cpuset.mems")
	for d in "$V1"/*/; do
		[ -f "$d/cpuset.cpu_exclusive" ] || continue
		case $d in "$rd/" | "$other/") continue ;; esac
		[ "$(cat "$d/cpuset.cpu_exclusive")" = 0 ] ||
			skip "another exclusive cpuset is there ($d): not touching it"
	done
	mkdir -p "$rd" "$other"
	echo "$mems" >"$rd/cpuset.mems"
	echo "$mems" >"$other/cpuset.mems"
	echo "$cpu" >"$rd/cpuset.cpus"
	echo "$rest" >"$other/cpuset.cpus"
	echo 1 >"$rd/cpuset.cpu_exclusive"
	echo 1 >"$other/cpuset.cpu_exclusive"
	echo 0 >"$V1/cpuset.sched_load_balance" 2>/dev/null
	say "v1: CPU $cpu is a root domain of its own ($rd exclusive, $other for CPUs $rest, load balancing off at the top)"
}

down_v1() {
	local d n=0
	echo 1 >"$V1/cpuset.sched_load_balance" 2>/dev/null || true
	for d in "$V1"/sirq-rd* "$V1/sirq-rest"; do
		[ -d "$d" ] || continue
		rmdir "$d" 2>/dev/null || { say "$d still has tasks: left"; continue; }
		n=$((n + 1))
	done
	say "v1: $n cpuset(s) removed, load balancing on at the top"
}

up_v2() {
	local cpu=$1 rd part
	rd="$V2/sirq-rd$cpu"
	[ -n "$(others "$cpu")" ] || skip "CPU $cpu is the only online CPU: a root domain of its own would hold everything"
	grep -qw cpuset "$V2/cgroup.subtree_control" ||
		echo +cpuset >"$V2/cgroup.subtree_control" ||
		skip "cannot enable the cpuset controller under $V2"
	mkdir -p "$rd"
	echo "$cpu" >"$rd/cpuset.cpus"
	echo root >"$rd/cpuset.cpus.partition" 2>/dev/null || true
	part=$(cat "$rd/cpuset.cpus.partition")
	if [ "$part" != root ]; then
		rmdir "$rd" 2>/dev/null || true
		skip "v2: the kernel refused a root partition for CPU $cpu: $part"
	fi
	say "v2: CPU $cpu is a root domain of its own ($rd, cpuset.cpus.partition=root)"
}

down_v2() {
	local d n=0
	for d in "$V2"/sirq-rd*; do
		[ -d "$d" ] || continue
		echo member >"$d/cpuset.cpus.partition" 2>/dev/null || true
		rmdir "$d" 2>/dev/null || { say "$d still has tasks: left"; continue; }
		n=$((n + 1))
	done
	say "v2: $n cgroup(s) removed"
}

status() {
	local d found=0
	for d in "$V1"/sirq-rd* "$V2"/sirq-rd*; do
		[ -d "$d" ] || continue
		found=1
		say "$d: CPUs $(cat "$d/cpuset.cpus")$( [ -f "$d/cpuset.cpus.partition" ] && echo ", partition $(cat "$d/cpuset.cpus.partition")")"
	done
	[ $found = 1 ] || say "none made"
	say "kernel.sched_rt_runtime_us = $(cat /proc/sys/kernel/sched_rt_runtime_us) (-1: no rule to meet)"
}

[ $# -ge 1 ] || usage
case $1 in
up)
	[ $# = 2 ] || usage
	case $2 in '' | *[!0-9]*) echo "deadline-cpuset: CPU must be a number, not '$2'" >&2; exit 2 ;; esac
	[ -d "/sys/devices/system/cpu/cpu$2" ] || { echo "deadline-cpuset: no CPU $2 on this machine" >&2; exit 2; }
	[ "$(id -u)" = 0 ] || skip "needs root (it writes cgroup files)"
	find_mode
	"up_$mode" "$2"
	;;
down)
	[ $# = 1 ] || usage
	[ "$(id -u)" = 0 ] || skip "needs root (it writes cgroup files)"
	find_mode
	"down_$mode"
	;;
status)
	[ $# = 1 ] || usage
	status
	;;
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
*) usage ;;
esac
