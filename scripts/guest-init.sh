#!/bin/bash
# The guest side of scripts/guest.sh, run by the initramfs as PID 1 in a
# chroot onto the host's root (read-only over virtiofs), with /proc, /sys,
# /dev, tmpfs /tmp and /run, and the writable share mounted. Loads
# vfio-pci, makes sure of the hugepages, binds the NICs with
# dpdk-devbind.py, runs the command with its output on the second serial
# port, writes its exit status to the control directory and powers the
# guest off. Not for use on a host.
#
#   guest-init.sh CTL_DIR
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8

poweroff() { echo o >/proc/sysrq-trigger; sleep 10; }
if [ "$$" -ne 1 ] || [ $# -ne 1 ] || [ ! -f "$1/env" ]; then
	echo "guest-init: the guest's PID 1 (scripts/guest.sh), not a command" >&2
	exit 2
fi
# GUEST_OUT, GUEST_CTL, GUEST_NICS, GUEST_BIND, GUEST_HUGEPAGES, GUEST_ATTEMPT,
# GUEST_DUMP_AT
# shellcheck disable=SC1091
. "$1/env"
export GUEST_OUT GUEST_NICS GUEST_ATTEMPT

tty=/dev/ttyS1
stty -F "$tty" raw -echo 2>/dev/null
exec 3>"$tty"

setup() {
	ip link set lo up
	# Built in, or a module (Debian's kernel).
	[ -d /sys/bus/pci/drivers/vfio-pci ] || modprobe vfio-pci || return 1
	# Reserved at boot (hugepages=N); this mounts hugetlbfs.
	if [ "$GUEST_HUGEPAGES" -gt 0 ]; then
		"$(dirname "$0")/hugepages.sh" "$GUEST_HUGEPAGES" || return 1
	fi
	if [ "$GUEST_BIND" = 1 ] && [ -n "$GUEST_NICS" ]; then
		# shellcheck disable=SC2086
		dpdk-devbind.py --force -b vfio-pci $GUEST_NICS || return 1
	fi
}

rc=0
if ! setup >&3 2>&1; then
	echo "guest-init: setup failed (vfio-pci, hugepages or binding)" >&3
	rc=125
else
	# Near the host's timeout (GUEST_DUMP_AT, the guest's uptime in
	# seconds): where the command's processes wait, for a guest whose
	# timers still run (a stopped vCPU is the console's RCU stall report).
	# Stacks first: ps reads each command line under its process's
	# mmap lock, which a process stuck in a fault may hold.
	if [ "${GUEST_DUMP_AT:-0}" -gt 0 ]; then
		{
			up=$(cut -d. -f1 /proc/uptime)
			[ "$up" -ge "$GUEST_DUMP_AT" ] || sleep $((GUEST_DUMP_AT - up))
			self=$BASHPID
			echo "guest-init: the command still runs at $GUEST_DUMP_AT s of uptime; where its threads wait:"
			# No fork a thread (a fork is tens of ms under TCG): reads
			# and bash's own string work only.
			for t in /proc/[0-9]*/task/[0-9]*; do
				p=${t#/proc/}
				p=${p%%/*}
				[ "$p" -ne 1 ] && [ "$p" -ne "$self" ] || continue
				state="" ppid="" comm=""
				# State comes before PPid in status.
				while IFS=$'\t' read -r k v; do
					case $k in
					State:) state=$v ;;
					PPid:) ppid=$v; break ;;
					esac
				done 2>/dev/null <"$t/status"
				# User threads, and kernel threads (kthreadd's) not asleep.
				if [ "$p" -eq 2 ] || [ "$ppid" = 2 ]; then
					case $state in R* | D*) ;; *) continue ;; esac
				fi
				read -r comm 2>/dev/null <"$t/comm"
				echo "-- $p/${t##*/} $comm ($state):"
				while read -r line; do echo "$line"; done 2>/dev/null <"$t/stack"
			done
			# Bounded: ps reads command lines under the mmap locks.
			timeout --foreground 10 ps -e -o pid,ppid,stat,wchan:28,etime,args --forest |
				grep -v '^ *[0-9]* *2 .*\]$' | grep -v '^ *2 *0 '
		} >&3 2>&1 &
		dumper=$!
	fi
	# In the foreground: a background job of a script starts with SIGINT
	# and SIGQUIT ignored, and so would every process of the command.
	bash "$GUEST_CTL/cmd" </dev/null >&3 2>&1
	rc=$?
	[ -z "${dumper:-}" ] || kill "$dumper" 2>/dev/null
fi
echo "$rc" >"$GUEST_CTL/rc"
sync
exec 3>&-
umount "$GUEST_OUT" 2>/dev/null
poweroff
