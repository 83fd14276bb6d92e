#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Find or build pktgen-dpdk for the DPDK that pkg-config finds here, and
# print the binary's path alone on stdout (what it does goes to stderr).
# pktgen is not packaged in Debian; a user brings a binary or a source:
#
#   PKTGEN=FILE       a pktgen binary already built: used as it is
#   PKTGEN_SRC=PATH   a release tarball (pktgen-YY.MM.N.tar.gz or .tar.xz),
#                     a source tree (meson.build and app/), or a directory
#                     of release tarballs, of which the newest release not
#                     newer than the DPDK is taken (pktgen's releases follow
#                     DPDK's: 24.10 builds against DPDK 24.11, 25.08
#                     against 25.11, and none here against 22.11)
#   PKTGEN_CACHE=DIR  where builds are kept (/var/cache/libsirq/pktgen):
#                     a tarball's build under the first 16 hex digits of
#                     its SHA-256 and the DPDK version, a tree's build under
#                     its path's hash (meson rebuilds what changed)
#
# Needs meson, ninja, the DPDK's libdpdk-dev, libnuma, libpcap and libbsd
# (pktgen's meson.build requires it); Lua stays off (pktgen's default),
# and so does pktgen's -Werror: a newer gcc's warnings (gcc 16 on
# 25.08.1's pktgen-gtpu.c) are not this build's to fail on.
# Exit 0 with the path; 77 when neither variable is set or no release in
# the directory pairs with this DPDK (the message says how to give one);
# 2 on a path that is not what it should be; 1 when the build fails (the
# log's tail is shown, the whole log is kept in the cache).
#
#   PKTGEN_SRC=~/src/pktgen-24.10.3.tar.gz bench/pktgen-build.sh
set -euo pipefail

say() { echo "pktgen-build: $*" >&2; }
usage_skip() {
	say "$*"
	say "give a binary with PKTGEN=/path/to/pktgen, or a source with" \
		"PKTGEN_SRC=pktgen-YY.MM.N.tar.gz (a release of Pktgen-DPDK," \
		"https://github.com/pktgen/Pktgen-DPDK, that pairs with DPDK $dpdk)," \
		"a source tree or a directory of release tarballs"
	exit 77
}

dpdk=$(pkg-config --modversion libdpdk 2>/dev/null) || dpdk=""

if [ -n "${PKTGEN:-}" ]; then
	[ -f "$PKTGEN" ] && [ -x "$PKTGEN" ] || { say "PKTGEN=$PKTGEN is not an executable file"; exit 2; }
	echo "$PKTGEN"
	exit 0
fi
[ -n "$dpdk" ] || { say "pkg-config finds no libdpdk: install libdpdk-dev"; exit 1; }
[ -n "${PKTGEN_SRC:-}" ] || usage_skip "no pktgen: PKTGEN and PKTGEN_SRC are unset"
[ -e "$PKTGEN_SRC" ] || { say "PKTGEN_SRC=$PKTGEN_SRC does not exist"; exit 2; }

# YY.MM of a version, as a number to compare: 24.10.3 -> 2410.
yymm() { local IFS=.; set -- $1; printf '%d%02d\n' "$((10#$1))" "$((10#${2:-0}))"; }
dpdk_yymm=$(yymm "$dpdk")

src=$PKTGEN_SRC
if [ -d "$src" ] && ! [ -f "$src/meson.build" ]; then
	best="" best_yymm=0
	for t in "$src"/pktgen-[0-9]*.tar.gz "$src"/pktgen-[0-9]*.tar.xz; do
		[ -f "$t" ] || continue
		v=${t##*/pktgen-}
		v=${v%.tar.*}
		case $v in *[!0-9.]*) continue ;; esac
		y=$(yymm "$v")
		if [ "$y" -le "$dpdk_yymm" ] && [ "$y" -gt "$best_yymm" ]; then
			best=$t best_yymm=$y
		fi
	done
	[ -n "$best" ] || usage_skip "no pktgen release in $src pairs with DPDK $dpdk" \
		"(a release not newer than the DPDK)"
	say "$best pairs with DPDK $dpdk"
	src=$best
fi

cache=${PKTGEN_CACHE:-/var/cache/libsirq/pktgen}
mkdir -p "$cache"
if [ -d "$src" ]; then
	[ -d "$src/app" ] || { say "PKTGEN_SRC=$src: a tree without app/ is not pktgen's"; exit 2; }
	src=$(cd "$src" && pwd)
	key=tree-$(printf '%s' "$src" | sha256sum | cut -c1-16)-dpdk$dpdk
else
	case $src in *.tar.gz|*.tgz|*.tar.xz) ;; *)
		say "PKTGEN_SRC=$src: not a .tar.gz or .tar.xz, a tree, or a directory of tarballs"; exit 2 ;;
	esac
	key=$(sha256sum "$src" | cut -c1-16)-dpdk$dpdk
fi
dir=$cache/$key
bin=$dir/build/app/pktgen

exec 9>"$cache/.lock"
flock 9	# two builds of one key at once would share a build tree
if [ -f "$dir/.built" ] && [ -x "$bin" ] && ! [ -d "$src" ]; then
	say "cached: $bin"
	echo "$bin"
	exit 0
fi

mkdir -p "$dir"
log=$dir/build.log
if [ -d "$src" ]; then
	tree=$src
else
	rm -rf "$dir/src" "$dir/build"
	mkdir "$dir/src"
	tar -xf "$src" -C "$dir/src" --strip-components=1 ||
		{ say "cannot unpack $src"; exit 2; }
	tree=$dir/src
fi
[ -f "$tree/meson.build" ] || { say "$src holds no meson.build: not a pktgen source"; exit 2; }
say "building $(cat "$tree/VERSION" 2>/dev/null || echo pktgen) against DPDK $dpdk in $dir (log: $log)"
start=$(date +%s)
if ! { [ -d "$dir/build" ] || meson setup "$dir/build" "$tree" -Dbuildtype=release -Dwerror=false -Denable_lua=false; } >"$log" 2>&1 ||
	! ninja -C "$dir/build" >>"$log" 2>&1; then
	tail -n 20 "$log" >&2
	say "the build failed against DPDK $dpdk (whole log: $log)"
	exit 1
fi
[ -x "$bin" ] || { say "the build made no $bin"; exit 1; }
touch "$dir/.built"
say "built in $(( $(date +%s) - start )) s: $bin"
echo "$bin"
