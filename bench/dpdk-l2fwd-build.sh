#!/usr/bin/env bash
# DPDK's own l2fwd example, built against the DPDK that pkg-config finds,
# as the second yardstick of bench/fwd-bench.sh: the plain run-to-completion
# forwarder of the DPDK sample applications guide. Prints the binary's path.
#
#   DPDK_L2FWD=PATH      use this binary (nothing is built)
#   DPDK_L2FWD_SRC=DIR   the example's sources (default: the first of
#                        /usr/share/dpdk/examples/l2fwd, Debian's dpdk-doc,
#                        and $(pkg-config --variable=prefix libdpdk)/share/dpdk/examples/l2fwd)
#   DPDK_L2FWD_CACHE=DIR where builds are kept (default out/dpdk-l2fwd),
#                        one per DPDK version
#
# As root without the sources on Debian, installs dpdk-doc. Exit 77 with
# the reason when no l2fwd can be had, 1 when the build fails.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${DPDK_L2FWD:-}" ]; then
	[ -x "$DPDK_L2FWD" ] || { echo "dpdk-l2fwd-build: DPDK_L2FWD=$DPDK_L2FWD is not an executable" >&2; exit 77; }
	echo "$DPDK_L2FWD"
	exit 0
fi
version=$(pkg-config --modversion libdpdk 2>/dev/null) ||
	{ echo "dpdk-l2fwd-build: pkg-config finds no libdpdk" >&2; exit 77; }

src=${DPDK_L2FWD_SRC:-}
if [ -z "$src" ]; then
	prefix=$(pkg-config --variable=prefix libdpdk)
	for d in /usr/share/dpdk/examples/l2fwd "$prefix/share/dpdk/examples/l2fwd"; do
		[ -f "$d/main.c" ] && { src=$d; break; }
	done
fi
if [ -z "$src" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null &&
	[ "$(pkg-config --variable=prefix libdpdk)" = /usr ]; then
	echo "dpdk-l2fwd-build: installing dpdk-doc (DPDK's example sources)" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q dpdk-doc >&2 ||
		{ echo "dpdk-l2fwd-build: apt-get install dpdk-doc failed" >&2; exit 77; }
	[ -f /usr/share/dpdk/examples/l2fwd/main.c ] && src=/usr/share/dpdk/examples/l2fwd
fi
[ -n "$src" ] && [ -f "$src/main.c" ] || {
	echo "dpdk-l2fwd-build: no l2fwd sources for DPDK $version: install dpdk-doc, or give DPDK_L2FWD_SRC=DIR (examples/l2fwd of the DPDK sources) or DPDK_L2FWD=BINARY" >&2
	exit 77
}

cache=${DPDK_L2FWD_CACHE:-out/dpdk-l2fwd}/dpdk-$version
bin=$cache/build/l2fwd-shared
if [ ! -x "$bin" ] || [ "$src/main.c" -nt "$bin" ]; then
	rm -rf "$cache"
	mkdir -p "$cache"
	cp "$src/main.c" "$src/Makefile" "$cache/"
	make -C "$cache" -s shared >"$cache/build.log" 2>&1 ||
		{ echo "dpdk-l2fwd-build: make failed; see $cache/build.log" >&2; exit 1; }
fi
echo "$bin"
