#!/usr/bin/env bash
# Install dependencies, reserve hugepages if it can (scripts/hugepages.sh),
# build with -Werror, run every test; then run the tests again under
# ASan+UBSan, the engine's stress test under TSan, each libFuzzer target
# for FUZZ_SECONDS (15) from its kept corpus, build and check the
# Debian packages once (tests/deb), build the API reference with
# doxygen's warnings as errors (docs/api), and run the Debian 13 and
# Debian testing legs (scripts/test-debian.sh: DPDK 24.11 and gcc 14,
# DPDK 25.11 and gcc 16). Prints one summary line
# "N passed, N failed" at the end; exit status 0 only if all passed.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Debian roots of the legs at the end (scripts/debian-root.sh), made
# in the background when they are not cached yet, from here: while apt
# installs the rest (dpkg keeps one CPU busy) and the first build
# compiles. Waited for before any test runs: no test shares the machine
# with them.
./scripts/install-deps.sh --roots
roots_log=$(mktemp)
failures=$(mktemp)
trap 'rm -f "$failures" "$roots_log"' EXIT
( for leg in trixie forky; do scripts/debian-root.sh "$leg" >/dev/null & done; wait ) \
	>"$roots_log" 2>&1 &
roots_pid=$!
wait_roots() {
	[ -n "$roots_pid" ] || return 0
	echo "== roots: waiting for scripts/debian-root.sh trixie, forky"
	wait "$roots_pid" || true
	sed 's/^/  /' "$roots_log"
	roots_pid=""
}

./scripts/install-deps.sh || { rc=$?; wait_roots; exit "$rc"; }
# Hugepages for the multi-process tests (tests/mp), reserved when they can
# be; without them those tests say so and skip, and the rest runs as ever.
./scripts/hugepages.sh || echo "test: no hugepages; the mp suite will skip"

# A sanitizer report is a failure, not a warning. verify_asan_link_order=0:
# the l2fwd tests run l2fwd-sirq under stdbuf, whose LD_PRELOAD comes first.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:verify_asan_link_order=0
export TSAN_OPTIONS=halt_on_error=1
export FUZZ_SECONDS=${FUZZ_SECONDS:-15}

jobs=$(nproc)
summary() {	# testlog.json name: "passed failed"; failed tests into $failures
	python3 scripts/test-summary.py "$1" "$failures" "$2"
}

run_suite() {	# name builddir meson-setup-args... -- meson-test-args...
	local name=$1 dir=$2
	shift 2
	local setup=() tests=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do setup+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	tests=("$@")

	echo "== $name: configure $dir ${setup[*]}"
	if [ -d "$dir" ]; then
		meson setup --reconfigure "$dir" "${setup[@]}" >/dev/null
	else
		meson setup "$dir" "${setup[@]}" >/dev/null
	fi
	echo "== $name: build"
	ninja -C "$dir" -j "$jobs"
	wait_roots
	echo "== $name: test ${tests[*]}"
	local rc=0
	meson test -C "$dir" --print-errorlogs --num-processes "$jobs" "${tests[@]}" || rc=$?
	read -r ok bad < <(summary "$dir/meson-logs/testlog.json" "$name")
	echo "== $name: $ok passed, $bad failed"
	passed=$((passed + ok))
	failed=$((failed + bad))
	[ "$rc" -eq 0 ] || failed=$((failed > 0 ? failed : 1))
}

passed=0
failed=0
# ($failures, made above: the failed tests' names, printed again at the
# end where CI's tail shows them.)

run_suite werror build-ci -Dwerror=true -Dbuildtype=debugoptimized --
# Everything that runs on virtual devices; the install check is left out:
# it links an uninstrumented program against the instrumented library.
run_suite sanitize build-asan -Dwerror=true -Dbuildtype=debug \
	-Db_sanitize=address,undefined -Db_lundef=false -Dapps=true -Dtools=true \
	-- --suite unit --suite lcore --suite l2fwd --suite mp --suite stress
# clang jobs: warnings are gated by the gcc job above (clang's -Wcast-align
# also flags the aligned offsetof() casts of the option tables).
# Criterion cannot start under TSan (Snaipe/Criterion#274): the engine's
# dispatcher/worker/raise/tasklet paths run in tests/stress instead.
CC=clang run_suite tsan build-tsan -Dbuildtype=debugoptimized \
	-Db_sanitize=thread -Db_lundef=false -Dapps=false -Dtools=false \
	-- --suite stress
CC=clang run_suite fuzz build-fuzz -Dfuzz=true -Dbuildtype=debug \
	-Db_sanitize=address,undefined -Db_lundef=false -Dtests=false -Dtools=false \
	-- --suite fuzz

# The Debian packages, built once from a copy of the tree (not per build
# directory): about a minute on 2 cores.
echo "== deb: tests/deb/check-deb.sh"
rc=0
tests/deb/check-deb.sh || rc=$?
case $rc in
0) passed=$((passed + 1)); echo "== deb: 1 passed, 0 failed" ;;
77) passed=$((passed + 1)); echo "== deb: skipped (counted as passed, as meson counts SKIP)" ;;
*) failed=$((failed + 1)); echo "== deb: 0 passed, 1 failed"
   echo "deb: tests/deb/check-deb.sh (exit $rc)" >>"$failures" ;;
esac

# The API reference, with doxygen's warnings as errors (docs/api): an
# undocumented public symbol, parameter or return value fails it.
echo "== docs: configure build-docs -Ddocs=true"
rc=0
if [ -d build-docs ]; then
	meson setup --reconfigure build-docs -Ddocs=true -Dtests=false \
		-Dapps=false -Dtools=false >/dev/null || rc=$?
else
	meson setup build-docs -Ddocs=true -Dtests=false -Dapps=false \
		-Dtools=false >/dev/null || rc=$?
fi
if [ "$rc" -eq 0 ]; then
	echo "== docs: build (doxygen)"
	# Always run doxygen: an unchanged header would leave it up to date.
	rm -rf build-docs/docs/api/html
	ninja -C build-docs -j "$jobs" docs/api/html || rc=$?
fi
if [ "$rc" -eq 0 ]; then
	passed=$((passed + 1)); echo "== docs: 1 passed, 0 failed"
else
	failed=$((failed + 1)); echo "== docs: 0 passed, 1 failed"
	echo "docs: the API reference (doxygen warnings above)" >>"$failures"
fi

# The newer Debian legs (scripts/test-debian.sh), each in a root made
# from Debian's archive and cached: Debian 13 (DPDK 24.11, gcc 14: -Werror
# build, every suite that boots no guest but lcore, the Debian packages
# for trixie with lintian) and Debian testing (DPDK 25.11, gcc 16: -Werror
# build, the unit, lcore and sim suites). A leg skips only when Debian's
# archive cannot be reached to make its root.
for leg in trixie forky; do
	echo "== $leg: scripts/test-debian.sh $leg"
	leg_log=$(mktemp)
	rc=0
	SIRQ_LEG_FAILURES=$failures scripts/test-debian.sh "$leg" 2>&1 | tee "$leg_log" ||
		rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 77 ]; then
		echo "== $leg: skipped (Debian's archive cannot be reached)"
	elif counts=$(grep -oE "^$leg: [0-9]+ passed, [0-9]+ failed\$" "$leg_log" | tail -1) &&
		[ -n "$counts" ]; then
		read -r ok bad < <(awk '{ print $2, $4 }' <<<"$counts")
		passed=$((passed + ok))
		failed=$((failed + bad))
		[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || failed=$((failed + 1))
	else
		failed=$((failed + 1))
		echo "$leg: scripts/test-debian.sh $leg (exit $rc, no counts)" >>"$failures"
	fi
	rm -f "$leg_log"
done

if [ -s "$failures" ]; then
	echo "== failed:"
	sed 's/^/  /' "$failures"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
