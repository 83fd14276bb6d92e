#!/usr/bin/env bash
# Run one shell command in a cached Debian root (scripts/debian-root.sh
# makes or reuses it: trixie or forky), in /src, the source tree. In a
# mount namespace of its own: the root is mounted as an overlay (the cache is never written;
# what the command writes outside /src is gone afterwards), the tree is
# bound at /src, and /proc, /sys, /dev (with /dev/pts, /dev/shm and
# /dev/hugepages when the host has them) and a fresh /run (DPDK's runtime
# directories, /run/netns) are mounted inside; all of it is unmounted on
# exit. As root.
#
# pktgen (bench/pktgen-build.sh) crosses over: PKTGEN_SRC, a tarball or a
# directory, is bound read-only at the same path inside and passed on,
# and so is PKTGEN_CACHE (default /var/cache/libsirq/pktgen, made when
# missing), where the root's builds of pktgen are kept; PKTGEN is passed on.
#
# Exit: the command's status; 77 when Debian's archive cannot be reached
# to make the root (nothing ran).
#
#   ./scripts/debian-run.sh trixie 'meson setup build-trixie && ninja -C build-trixie'
#   ./scripts/debian-run.sh trixie 'FWD_BUILD=build-trixie-rel ./bench/fwd-bench.sh'
#   ./scripts/debian-run.sh forky 'pkg-config --modversion libdpdk'
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
say() { echo "debian-run: $*" >&2; }

[ $# -eq 2 ] || { echo "usage: $0 trixie|forky 'COMMAND'" >&2; exit 2; }
suite=$1
[ "$(id -u)" -eq 0 ] || { say "needs root (chroot, mounts)"; exit 1; }
if [ -z "${SIRQ_ROOT_IN_NS:-}" ]; then
	exec env SIRQ_ROOT_IN_NS=1 unshare --mount --propagation private -- \
		"$top/scripts/debian-run.sh" "$@"
fi

rc=0
root=$(./scripts/debian-root.sh "$suite") || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

work=$(mktemp -d /tmp/debian-run.XXXXXX)
merged=$work/root
cleanup() {
	# The namespace takes its mounts along when it ends; unmount anyway.
	umount -R "$merged" 2>/dev/null || umount -R -l "$merged" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/upper" "$work/work" "$merged"
mount -t overlay overlay -o "lowerdir=$root,upperdir=$work/upper,workdir=$work/work" "$merged"
mkdir -p "$merged/src"
mount --bind "$top" "$merged/src"
mount -t proc proc "$merged/proc"
mount --rbind /sys "$merged/sys"
mount --rbind /dev "$merged/dev"	# with /dev/pts, /dev/shm, /dev/hugepages
mount -t tmpfs -o mode=755 tmpfs "$merged/run"
mkdir -p "$merged/run/lock" "$merged/run/netns"

pk=()
if [ -n "${PKTGEN_SRC:-}" ] && [ -e "$PKTGEN_SRC" ]; then
	src=$(realpath "$PKTGEN_SRC")
	if [ -d "$src" ]; then mkdir -p "$merged$src"; else mkdir -p "$merged${src%/*}"; touch "$merged$src"; fi
	mount --bind -o ro "$src" "$merged$src"
	pk+=(PKTGEN_SRC="$src")
fi
cache=${PKTGEN_CACHE:-/var/cache/libsirq/pktgen}
mkdir -p "$cache" "$merged$cache"
mount --bind "$cache" "$merged$cache"
pk+=(PKTGEN_CACHE="$cache" ${PKTGEN:+PKTGEN=$PKTGEN})

say "in $root: $2"
# BABELTRACE2: tests/l2fwd/test_trace.c's reader. Debian 13's babeltrace2
# (2.1.1) aborts on DPDK's CTF trace, 22.11's as well as 24.11's ("packet
# beginning ... no default clock snapshot is needed, but one was
# provided": a failed precondition inside the library); babeltrace 1.5
# prints the same lines.
bt=()
[ -x "$merged/usr/bin/babeltrace" ] && bt=(BABELTRACE2=/usr/bin/babeltrace)
rc=0
chroot "$merged" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
	LANG=C.UTF-8 TERM=dumb ${CI:+CI=$CI} "${bt[@]}" "${pk[@]}" \
	bash -c "cd /src && $2" || rc=$?
exit "$rc"
