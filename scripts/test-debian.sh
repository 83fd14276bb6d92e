#!/usr/bin/env bash
# The Debian 13 leg: libsirq against DPDK 24.11 and gcc 14, in the cached
# trixie root of scripts/trixie-root.sh, each step through
# scripts/trixie-run.sh (the root as an overlay, the tree at /src, /proc,
# /sys, /dev and a fresh /run mounted in a mount namespace of its own,
# unmounted on exit). There it builds with -Dwerror=true, runs every
# suite that boots no guest, and builds and checks the Debian packages
# for trixie (tests/deb/check-deb.sh: dpkg-buildpackage, lintian without
# errors). Called by scripts/test.sh after the Debian 12 jobs; as root.
#
# Prints "trixie: N passed, N failed" last (the Debian packages count as
# one test, as in scripts/test.sh). Exit 0 when all passed, 1 otherwise,
# 77 (skip) only when Debian's archive cannot be reached to make the root.
#
#   ./scripts/test-trixie.sh
#   TRIXIE_BUILD=DIR       build directory in the tree (default build-trixie)
#   TRIXIE_SUITES="..."    meson suites (default: all but guest and fuzz)
#   TRIXIE_DEB=0           leave out the Debian packages
#   TRIXIE_FAILURES=FILE   append the failed tests' names there (test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${TRIXIE_BUILD:-build-trixie}
SUITES=${TRIXIE_SUITES:-unit lcore l2fwd tcpecho sim stress install mp virtio}
DEB=${TRIXIE_DEB:-1}
FAILURES=${TRIXIE_FAILURES:-/dev/null}
say() { echo "== trixie: $*"; }

[ "$(id -u)" -eq 0 ] || { echo "test-trixie: needs root (chroot, mounts)" >&2; exit 1; }
# Hugepages for the mp and virtio suites; without them they skip.
./scripts/hugepages.sh || say "no hugepages: the mp and virtio suites will skip"

start=$(date +%s)
rc=0
root=$(./scripts/trixie-root.sh) || rc=$?
if [ "$rc" -eq 77 ]; then
	say "SKIP: Debian's archive cannot be reached and no Debian 13 root is cached"
	exit 77
fi
[ "$rc" -eq 0 ] || { say "scripts/trixie-root.sh failed (exit $rc)"; exit 1; }
say "root $root ($(tr '\n' ' ' <"$root/.libsirq-root-ok"))"
in_root() { ./scripts/trixie-run.sh "$1"; }

jobs=$(nproc)
say "configure and build $BUILD -Dwerror=true -Dbuildtype=debugoptimized"
if [ -d "$BUILD" ]; then setup="meson setup --reconfigure"; else setup="meson setup"; fi
build_start=$(date +%s)
if ! in_root "$setup $BUILD -Dwerror=true -Dbuildtype=debugoptimized >/dev/null &&
		ninja -C $BUILD -j $jobs"; then
	echo "trixie: build: meson setup or ninja failed (-Werror, DPDK 24.11, gcc 14)" >>"$FAILURES"
	say "the build failed: no test ran"
	echo "trixie: 0 passed, 1 failed"
	exit 1
fi
say "built in $(( $(date +%s) - build_start )) s"

args=""
for s in $SUITES; do args="$args --suite $s"; done
say "test$args"
test_rc=0
in_root "meson test -C $BUILD --print-errorlogs --num-processes $jobs$args" || test_rc=$?
read -r passed failed < <(python3 scripts/test-summary.py "$BUILD/meson-logs/testlog.json" \
	"$FAILURES" trixie)
[ "$test_rc" -eq 0 ] || failed=$((failed > 0 ? failed : 1))
say "suites: $passed passed, $failed failed"

if [ "$DEB" != 0 ]; then
	say "deb: tests/deb/check-deb.sh (trixie's dpkg-buildpackage and lintian)"
	deb_rc=0
	in_root "tests/deb/check-deb.sh" || deb_rc=$?
	case $deb_rc in
	0) passed=$((passed + 1)); say "deb: 1 passed, 0 failed" ;;
	# 77: a packaging tool or build dependency missing, which the root
	# is made to have: a failure here, not a skip.
	*) failed=$((failed + 1)); say "deb: 0 passed, 1 failed"
	   echo "trixie: deb: tests/deb/check-deb.sh (exit $deb_rc)" >>"$FAILURES" ;;
	esac
fi

say "$(( $(date +%s) - start )) s in all"
echo "trixie: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
