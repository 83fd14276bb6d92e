#!/usr/bin/env bash
# A leg of scripts/test.sh in a newer Debian: libsirq against that
# release's DPDK and gcc, in the cached root of scripts/debian-root.sh,
# each step through scripts/debian-run.sh (the root as an overlay, the
# tree at /src, /proc, /sys, /dev and a fresh /run mounted in a mount
# namespace of its own, unmounted on exit). As root.
#
#   trixie  Debian 13, DPDK 24.11, gcc 14: -Dwerror=true build, every
#           suite that boots no guest except lcore (it runs on 22.11 twice
#           and on 25.11), the Debian packages for trixie
#           (tests/deb/check-deb.sh: dpkg-buildpackage, lintian without
#           errors)
#   forky   Debian testing, DPDK 25.11, gcc 16: -Dwerror=true build, the
#           unit, lcore and sim suites
#
# Prints "SUITE: N passed, N failed" last (the Debian packages count as
# one test, as in scripts/test.sh). Exit 0 when all passed, 1 otherwise,
# 2 on bad usage, 77 (skip) only when Debian's archive cannot be reached
# to make the root.
#
#   ./scripts/test-debian.sh trixie|forky
#   SIRQ_LEG_BUILD=DIR      build directory in the tree (default build-SUITE)
#   SIRQ_LEG_SUITES="..."   meson suites (default: as above)
#   SIRQ_LEG_DEB=0|1        the Debian packages (default: 1 on trixie)
#   SIRQ_LEG_FAILURES=FILE  append the failed tests' names there (test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

leg=${1:-}
case $leg in
trixie)	what="DPDK 24.11, gcc 14"
	suites="unit l2fwd tcpecho sim stress install mp virtio"
	deb=1 ;;
forky)	what="DPDK 25.11, gcc 16"
	suites="unit lcore sim"
	deb=0 ;;
*)	echo "usage: $0 trixie|forky" >&2; exit 2 ;;
esac
BUILD=${SIRQ_LEG_BUILD:-build-$leg}
SUITES=${SIRQ_LEG_SUITES:-$suites}
DEB=${SIRQ_LEG_DEB:-$deb}
FAILURES=${SIRQ_LEG_FAILURES:-/dev/null}
say() { echo "== $leg: $*"; }

[ "$(id -u)" -eq 0 ] || { echo "test-debian: needs root (chroot, mounts)" >&2; exit 1; }
# Hugepages for the mp and virtio suites; without them they skip.
./scripts/hugepages.sh || say "no hugepages: the mp and virtio suites will skip"

start=$(date +%s)
rc=0
root=$(./scripts/debian-root.sh "$leg") || rc=$?
if [ "$rc" -eq 77 ]; then
	say "SKIP: Debian's archive cannot be reached and no $leg root is cached"
	exit 77
fi
[ "$rc" -eq 0 ] || { say "scripts/debian-root.sh $leg failed (exit $rc)"; exit 1; }
say "root $root ($(tr '\n' ' ' <"$root/.libsirq-root-ok"))"
in_root() { ./scripts/debian-run.sh "$leg" "$1"; }

jobs=$(nproc)
say "configure and build $BUILD -Dwerror=true -Dbuildtype=debugoptimized"
if [ -d "$BUILD" ]; then setup="meson setup --reconfigure"; else setup="meson setup"; fi
build_start=$(date +%s)
if ! in_root "$setup $BUILD -Dwerror=true -Dbuildtype=debugoptimized >/dev/null &&
		ninja -C $BUILD -j $jobs"; then
	echo "$leg: build: meson setup or ninja failed (-Werror, $what)" >>"$FAILURES"
	say "the build failed: no test ran"
	echo "$leg: 0 passed, 1 failed"
	exit 1
fi
say "built in $(( $(date +%s) - build_start )) s"

args=""
for s in $SUITES; do args="$args --suite $s"; done
say "test$args"
test_rc=0
in_root "meson test -C $BUILD --print-errorlogs --num-processes $jobs$args" || test_rc=$?
read -r passed failed < <(python3 scripts/test-summary.py "$BUILD/meson-logs/testlog.json" \
	"$FAILURES" "$leg")
[ "$test_rc" -eq 0 ] || failed=$((failed > 0 ? failed : 1))
say "suites: $passed passed, $failed failed"

if [ "$DEB" != 0 ]; then
	say "deb: tests/deb/check-deb.sh ($leg's dpkg-buildpackage and lintian)"
	deb_rc=0
	in_root "tests/deb/check-deb.sh" || deb_rc=$?
	case $deb_rc in
	0) passed=$((passed + 1)); say "deb: 1 passed, 0 failed" ;;
	# 77: a packaging tool or build dependency missing, which the root
	# is made to have: a failure here, not a skip.
	*) failed=$((failed + 1)); say "deb: 0 passed, 1 failed"
	   echo "$leg: deb: tests/deb/check-deb.sh (exit $deb_rc)" >>"$FAILURES" ;;
	esac
fi

say "$(( $(date +%s) - start )) s in all"
echo "$leg: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
