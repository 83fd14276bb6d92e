#!/usr/bin/env bash
# Make sure DPDK can have PAGES (default 256) free 2 MB hugepages and a
# hugetlbfs mount for them: reserves the missing pages and mounts
# hugetlbfs at /dev/hugepages when no 2 MB mount exists. Does nothing when
# both are already there, so it is safe to run again and again.
#
# Hugepages are what DPDK multi-process needs (dpdk-dumpcap, dpdk-pdump,
# dpdk-proc-info attach to a primary by mapping its hugepage memory);
# everything else here also runs with --no-huge.
#
# Prints one line saying what it did or why it could not; exits 0 when the
# pages are there, 1 when they could not be had (not root, no hugetlbfs in
# the kernel, the kernel refused the reservation), 2 on a bad argument.
#
#   ./scripts/hugepages.sh [PAGES]
set -euo pipefail

pages=${1:-256}
size_kb=2048
sysfs=/sys/kernel/mm/hugepages/hugepages-${size_kb}kB
mnt=/dev/hugepages

say() { echo "hugepages: $*"; }
fail() { echo "hugepages: $*" >&2; exit 1; }

case $pages in
'' | *[!0-9]*) echo "hugepages: PAGES must be a number, not '$pages'" >&2; exit 2 ;;
esac

[ -d "$sysfs" ] || fail "the kernel has no ${size_kb} kB hugepages ($sysfs missing)"
grep -qw hugetlbfs /proc/filesystems ||
	fail "the kernel has no hugetlbfs (not in /proc/filesystems)"

# A hugetlbfs mount DPDK uses for 2 MB pages: pagesize=2M, or no pagesize
# option when 2 MB is the default hugepage size.
default_kb=$(awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo)
mount_2m() {
	awk -v dflt="$default_kb" -v want="$size_kb" '
		$3 == "hugetlbfs" {
			ps = ""
			n = split($4, o, ",")
			for (i = 1; i <= n; i++)
				if (o[i] ~ /^pagesize=/)
					ps = substr(o[i], 10)
			if ((ps == "" && dflt == want) || ps == "2M" || ps == "2048k") {
				print $2
				exit
			}
		}' /proc/mounts
}

free=$(cat "$sysfs/free_hugepages")
total=$(cat "$sysfs/nr_hugepages")
where=$(mount_2m)
if [ "$free" -ge "$pages" ] && [ -n "$where" ]; then
	say "$free of $total 2 MB pages free (>= $pages wanted), hugetlbfs at $where: nothing to do"
	exit 0
fi

[ "$(id -u)" -eq 0 ] ||
	fail "$free 2 MB pages free, $pages wanted, hugetlbfs ${where:+at }${where:-not mounted}: only root can change that"

did=()
if [ "$free" -lt "$pages" ]; then
	# Pages in use by others stay theirs: add what is missing.
	before=$total
	want=$((total + pages - free))
	echo "$want" >"$sysfs/nr_hugepages" 2>/dev/null ||
		fail "the kernel refused nr_hugepages=$want"
	total=$(cat "$sysfs/nr_hugepages")
	free=$(cat "$sysfs/free_hugepages")
	[ "$free" -ge "$pages" ] ||
		fail "reservation refused: asked for $want 2 MB pages in all, the kernel gave $total ($free free, $pages wanted; memory too fragmented or too small?)"
	did+=("reserved $((total - before)) more 2 MB pages ($total in all)")
fi

if [ -z "$where" ]; then
	if mountpoint -q "$mnt" 2>/dev/null; then
		fail "$mnt is already a mount point, but not of 2 MB hugetlbfs: mount one elsewhere (mount -t hugetlbfs -o pagesize=2M nodev DIR)"
	fi
	mkdir -p "$mnt"
	mount -t hugetlbfs -o pagesize=2M nodev "$mnt" ||
		fail "mount -t hugetlbfs nodev $mnt failed"
	where=$mnt
	did+=("mounted hugetlbfs at $mnt")
fi

msg=$(printf '%s; ' "${did[@]}")
say "${msg}$free free for DPDK, hugetlbfs at $where"
