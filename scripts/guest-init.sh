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
# GUEST_DUMP_AFTER
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
	bash "$GUEST_CTL/cmd" </dev/null >&3 2>&1 &
	cmd=$!
	# Shortly before the host's timeout: where the command's processes
	# wait (a guest whose timers still run; a stopped vCPU is the RCU
	# stall report on the console).
	if [ "${GUEST_DUMP_AFTER:-0}" -gt 0 ]; then
		{
			sleep "$GUEST_DUMP_AFTER"
			echo "guest-init: the command still runs after $GUEST_DUMP_AFTER s; its processes:"
			ps -e -o pid,ppid,stat,wchan:28,etime,args --forest | grep -v '\[.*\]$'
			for p in $(ps -e -o pid= -o args= | awk '$2 !~ /^\[/ { print $1 }'); do
				[ "$p" -ne 1 ] && [ "$p" -ne "$BASHPID" ] && [ -r "/proc/$p/stack" ] || continue
				echo "-- $p $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-100):"
				cat "/proc/$p/stack" 2>/dev/null
			done
		} >&3 2>&1 &
		dumper=$!
	fi
	wait "$cmd"
	rc=$?
	[ -z "${dumper:-}" ] || kill "$dumper" 2>/dev/null
fi
echo "$rc" >"$GUEST_CTL/rc"
sync
exec 3>&-
umount "$GUEST_OUT" 2>/dev/null
poweroff
