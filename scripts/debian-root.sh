#!/usr/bin/env bash
# Make, or reuse, a cached Debian root from Debian's archive with what
# libsirq's build and tests need there: `mmdebstrap --variant=apt`.
#
#   trixie  Debian 13, DPDK 24.11, gcc 14: the build, every suite that
#           boots no guest, the Debian packages and lintian; QEMU 10 for
#           the guest lab's igb (scripts/guest.sh)
#   forky   Debian testing, DPDK 25.11, gcc 16: the build and the unit,
#           lcore and sim suites
#
# The cache directory is keyed by what makes the root (package list,
# suite, mirrors, apt options), so changing the list below makes a new
# root and the old one can be removed. Used by scripts/debian-run.sh and
# scripts/test-debian.sh; as root.
#
# Prints what it does on stderr and the root's path alone on stdout.
# Exit 77 when Debian's archive cannot be reached (and no root is cached),
# 2 on a suite it does not know, 1 on any other failure.
#
#   ./scripts/debian-root.sh trixie     # e.g. /var/cache/libsirq/trixie-3f2a9c01d4e5
#   SIRQ_ROOT_CACHE=DIR                 # where roots are kept (/var/cache/libsirq)
#   SIRQ_ROOT_MIRROR=URL                # default: the host's Debian mirror, from
#                                       # its apt sources (else deb.debian.org)
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=${1:-}
say() { echo "debian-root: ${SUITE:-?}: $*" >&2; }
fail() { say "$*"; exit 1; }

# What scripts/install-deps.sh installs on Debian 12, less the guest lab
# (QEMU, the guest kernel, busybox) and the clang jobs (TSan, fuzz), which
# scripts/test.sh runs on the host only.
BUILD_PKGS=(
	gcc
	meson
	ninja-build
	pkgconf
	python3
	python3-pyelftools
	libcriterion-dev
	dpdk
	dpdk-dev
	libdpdk-dev
	libnuma-dev
	libpcap-dev
	liblwip-dev
	libjansson-dev
	# pktgen-dpdk, which bench/pktgen-build.sh builds from a source the
	# user gives: its meson.build requires libbsd
	libbsd-dev
	# network namespaces and taps (tests/lcore, tests/tcpecho, tests/mp)
	iproute2
	ethtool
	nftables
	# mount for hugetlbfs (scripts/hugepages.sh), ps
	mount
	procps
)
APTOPTS=()
case $SUITE in
trixie)
	PKGS=("${BUILD_PKGS[@]}"
		babeltrace2
		# reads the sirq.* CTF trace in tests/l2fwd/test_trace.c: trixie's
		# babeltrace2 2.1.1 aborts on DPDK's CTF (22.11's and 24.11's alike,
		# a failed library precondition), babeltrace 1.5 reads it
		babeltrace
		valgrind
		# the Debian packages (scripts/deb.sh, tests/deb)
		build-essential
		dpkg-dev
		debhelper
		help2man
		lintian
		# QEMU 10 for the guest lab's igb (the 82576, QEMU 8.0 and later;
		# Debian 12 has 7.2): scripts/guest.sh runs it from this root
		qemu-system-x86
	)
	;;
forky)
	PKGS=("${BUILD_PKGS[@]}")
	# Debian's archive signs a testing suite's Release files for a week
	# (Valid-Until); a mirror or snapshot that is not refreshed serves
	# them expired, and apt then refuses the suite. The signature is
	# still checked: only the date is not.
	APTOPTS=('Acquire::Check-Valid-Until "false"')
	;;
*)
	echo "usage: $0 trixie|forky" >&2
	exit 2
	;;
esac

# The host's Debian mirror (and security mirror): the URI its apt sources
# give for its own release, deb822 (.sources) or one-line (.list).
host_uri() {	# suite-suffix ('' or -security)
	local codename
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || return 0
	{ cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
		2>/dev/null || true; } | awk -v want="$codename$1" '
		/^deb[ \t]/ {
			line = $0
			sub(/\[[^]]*\]/, "", line)	# [ options ]
			split(line, f)
			if (f[3] == want) { print f[2]; exit }
		}
		/^URIs:/ { uri = $2 }
		/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == want && uri != "") { print uri; exit } }
		/^$/ { uri = "" }'
}
MIRROR=${SIRQ_ROOT_MIRROR:-$(host_uri '')}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY=${SIRQ_ROOT_SECURITY_MIRROR:-$(host_uri -security)}
SECURITY=${SECURITY:-${MIRROR%/debian}/debian-security}
SOURCES=(
	"deb $MIRROR $SUITE main"
	"deb $MIRROR $SUITE-updates main"
	"deb $SECURITY $SUITE-security main"
)

CACHE=${SIRQ_ROOT_CACHE:-/var/cache/libsirq}
key=$(printf '%s\n' "$SUITE" "${SOURCES[@]}" "${PKGS[@]}" "${APTOPTS[@]}" | sha256sum | cut -c1-12)
root=$CACHE/$SUITE-$key

[ "$(id -u)" -eq 0 ] || fail "needs root (mmdebstrap, chroot)"
mkdir -p "$CACHE"
# One maker at a time; a second caller waits, then reuses the root.
exec 9>"$CACHE/.$SUITE.lock"
flock 9

if [ -f "$root/.libsirq-root-ok" ]; then
	say "reusing $root (key $key: suite, sources and ${#PKGS[@]} packages)"
	echo "$root"
	exit 0
fi

# Reachable? InRelease of the suite, 20 s at most.
say "checking $MIRROR/dists/$SUITE/InRelease"
if ! python3 - "$MIRROR/dists/$SUITE/InRelease" <<'PY' >&2; then
import sys, urllib.request
try:
	urllib.request.urlopen(sys.argv[1], timeout=20).read(64)
except Exception as e:
	print("debian-root: %s: %s" % (sys.argv[1], e))
	sys.exit(1)
PY
	say "SKIP: Debian's archive cannot be reached ($MIRROR); no $SUITE root"
	exit 77
fi

command -v mmdebstrap >/dev/null || fail "mmdebstrap is not installed (./scripts/install-deps.sh)"

tmp=$root.tmp.$$
trap 'rm -rf "$tmp"' EXIT
rm -rf "$CACHE/$SUITE-$key".tmp.*
start=$(date +%s)
say "making $root: mmdebstrap --variant=apt $SUITE with ${#PKGS[@]} packages from $MIRROR (a few minutes)"
mmdebstrap --variant=apt --include="$(IFS=,; echo "${PKGS[*]}")" \
	--aptopt='APT::Install-Recommends "false"' "${APTOPTS[@]/#/--aptopt=}" \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	"$SUITE" "$tmp" "${SOURCES[@]}" >&2 || fail "mmdebstrap failed"
dpdk=$(chroot "$tmp" pkg-config --modversion libdpdk)
gccv=$(chroot "$tmp" gcc -dumpfullversion)
printf 'suite=%s\nkey=%s\ndpdk=%s\ngcc=%s\nmade=%s\n' "$SUITE" "$key" "$dpdk" "$gccv" \
	"$(date -u +%FT%TZ)" >"$tmp/.libsirq-root-ok"
mv "$tmp" "$root"
trap - EXIT
say "made $root in $(( $(date +%s) - start )) s ($(du -sh "$root" | cut -f1); DPDK $dpdk, gcc $gccv)"
echo "$root"
