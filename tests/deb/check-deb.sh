#!/usr/bin/env bash
# The Debian packages, as a user gets them: scripts/deb.sh builds them from
# a copy of the tree into a scratch directory (lintian without errors);
# dpkg -c shows each file in the package it belongs to; dpkg -x unpacks
# them into a scratch root, where examples/minimal, examples/forwarder and
# examples/rcu-table build against libsirq-dev with nothing but pkg-config
# and run on that root's libsirq.so.0, and tests/install's consumer links
# the static library.
# Exit 77 (skip) when dpkg-buildpackage, debhelper or a build dependency
# is missing. Called once by scripts/test.sh; about a minute on 2 cores.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v dpkg-buildpackage >/dev/null ||
	skip "dpkg-buildpackage is not installed (apt-get install dpkg-dev)"
command -v dh >/dev/null || skip "debhelper is not installed (apt-get install debhelper)"
unmet=$(cd "$top" && dpkg-checkbuilddeps 2>&1) ||
	skip "build dependencies missing: ${unmet##*dependencies: }"

tmp=$(mktemp -d)
prefix=sirq-deb-$$
trap 'rm -rf "$tmp" "/var/run/dpdk/$prefix" "/var/run/dpdk/$prefix-fwd" "/var/run/dpdk/$prefix-rcu"' EXIT

version=$(cd "$top" && dpkg-parsechangelog -S Version)
meson_version=$(sed -n "s/^[[:space:]]*version: '\([^']*\)',/\1/p" "$top/meson.build" | head -1)
[ "$version" = "$meson_version" ] ||
	fail "debian/changelog is at $version, meson.build at $meson_version"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=/usr/lib/$ma

start=$(date +%s)
DEB_NO_DEPS=1 "$top/scripts/deb.sh" "$tmp/debs"
echo "deb: built and checked in $(( $(date +%s) - start )) s"

# Which package ships each path.
declare -A owner
for p in libsirq0 libsirq-dev sirq-tools; do
	deb=$tmp/debs/${p}_${version}_$arch.deb
	[ -f "$deb" ] || fail "no $deb"
	while read -r path; do
		owner[$path]="${owner[$path]:+${owner[$path]} }$p"
	done < <(dpkg -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }')
done
expect() {	# package path...
	local p=$1 f
	shift
	for f; do
		[ "${owner[$f]:-}" = "$p" ] || fail "$f is in '${owner[$f]:-no package}', not $p"
	done
}
expect libsirq0 "$libdir/libsirq.so.0" "$libdir/libsirq.so.$version"
expect libsirq-dev /usr/include/sirq.h /usr/include/sirq_engine.h \
	/usr/include/sirq_lcore.h "$libdir/libsirq.so" "$libdir/libsirq.a" \
	"$libdir/pkgconfig/libsirq.pc" \
	/usr/share/doc/libsirq-dev/examples/minimal.c /usr/share/doc/libsirq-dev/examples/forwarder.c \
	/usr/share/doc/libsirq-dev/examples/rcu-table.c
programs=(l2fwd-sirq tcp-echo tcp-echo-client sirq-sim)
for prog in "${programs[@]}"; do
	expect sirq-tools "/usr/bin/$prog" "/usr/share/man/man1/$prog.1.gz"
done
for ini in "$top"/config/*.ini; do
	expect sirq-tools "/usr/share/doc/sirq-tools/examples/$(basename "$ini")"
done
# --preset's directory: every preset of the tree.
for ini in "$top"/config/presets/*.ini; do
	expect sirq-tools "/usr/share/libsirq/presets/$(basename "$ini")"
done
# Nothing else in a program or library directory (the benches, tests).
extra=$(printf '%s\n' "${!owner[@]}" | grep -E "^(/usr/bin/|$libdir/[^/]*$)" | sort |
	grep -vxF -e "$libdir/libsirq.so.0" -e "$libdir/libsirq.so.$version" \
		-e "$libdir/libsirq.so" -e "$libdir/libsirq.a" \
		"${programs[@]/#/-e/usr/bin/}" || true)
[ -z "$extra" ] || fail "unexpected files: $extra"
echo "deb: dpkg -c: library, headers, .a, .pc, ${#programs[@]} programs with man pages," \
	"$(ls "$top"/config/*.ini | wc -l) example configs, $(ls "$top"/config/presets/*.ini | wc -l) preset(s), each in its package"

# Dependencies and the symbols file.
dpkg-deb -f "$tmp/debs/libsirq-dev_${version}_$arch.deb" Depends | grep -qF "libsirq0 (= $version)" ||
	fail "libsirq-dev does not depend on libsirq0 (= $version)"
dpkg-deb -f "$tmp/debs/sirq-tools_${version}_$arch.deb" Depends | grep -qF "libsirq0 (>= $version)" ||
	fail "sirq-tools does not depend on libsirq0 (>= $version)"
map_symbols() {
	grep -oE '^[[:space:]]+sirq_[a-z_]+;' "$top/lib/sirq/version.map" | tr -d ' \t;' | sort
}
diff -u <(map_symbols) \
	<(dpkg-deb -I "$tmp/debs/libsirq0_${version}_$arch.deb" symbols |
		awk '$1 ~ /^sirq_.*@/ { sub(/@.*/, "", $1); print $1 }' | sort) ||
	fail "libsirq0's symbols file and lib/sirq/version.map differ"

root=$tmp/root
mkdir "$root"
for p in libsirq0 libsirq-dev sirq-tools; do
	dpkg -x "$tmp/debs/${p}_${version}_$arch.deb" "$root"
done
diff -u <(map_symbols) \
	<(nm -D --defined-only "$root$libdir/libsirq.so.0" |
		awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort) ||
	fail "libsirq.so.0 does not export exactly lib/sirq/version.map"

# Man pages carry each program's own options (the apps' are behind "--",
# their --help alone is EAL's).
declare -A option=([l2fwd-sirq]=portmask [tcp-echo]=tsq [tcp-echo-client]=conns [sirq-sim]=scenario)
for prog in "${programs[@]}"; do
	page=$(zcat "$root/usr/share/man/man1/$prog.1.gz")
	grep -q '^\.SH SYNOPSIS' <<<"$page" || fail "$prog.1 has no synopsis"
	grep -q -- "${option[$prog]}" <<<"$page" || fail "$prog.1 lacks --${option[$prog]}"
done

# The DPDK apps' pages: the sections an operator and a supervisor look
# for, and each option's tag line (the line after .TP) holding the option
# and its argument alone, for every option --help prints. help2man runs a
# description into its tag when it cannot tell them apart (.HP): debian/
# rules puts each description on the line below its option.
for prog in l2fwd-sirq tcp-echo; do
	page=$(zcat "$root/usr/share/man/man1/$prog.1.gz")
	for sect in '"EXIT STATUS"' SIGNALS FILES TELEMETRY STATISTICS; do
		grep -qxF ".SH $sect" <<<"$page" || fail "$prog.1 has no .SH $sect section"
	done
	hp=$(grep -A1 '^\.HP' <<<"$page" | grep -v '^\.HP' || true)
	[ -z "$hp" ] || fail "$prog.1: an option run into its description (.HP): $hp"
	tags=$(awk '/^\.TP$/ { getline; print }' <<<"$page" |
		sed 's/\\f[BIRP]//g; s/\\-/-/g' | grep '^-' || true)
	bad=$(grep -Ev '^(-[A-Za-z], )?--[a-z0-9-]+( [A-Z][^ ]*)?$' <<<"$tags" || true)
	[ -z "$bad" ] || fail "$prog.1: tag lines with more than the option: $bad"
	n=0
	for opt in $(LD_LIBRARY_PATH=$root$libdir "$root/usr/bin/$prog" -- --help |
			sed -nE 's/^  (-[A-Za-z], |    )--([a-z0-9-]+).*/\2/p'); do
		grep -qE -- "^(-[A-Za-z], )?--$opt( |\$)" <<<"$tags" ||
			fail "$prog.1: --$opt of --help has no tag line of its own"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || fail "$prog -- --help printed no option"
done
echo "deb: l2fwd-sirq.1, tcp-echo.1: EXIT STATUS, SIGNALS, FILES, TELEMETRY, STATISTICS;" \
	"every option of --help on a tag line of its own"

# The unpacked root is /usr as packaged; its libsirq.pc says so. A copy
# with the root as its prefix is what pkg-config reads (as tests/install
# does): PKG_CONFIG_SYSROOT_DIR would move libdpdk's and numa's flags,
# from the .pc files of the system, into the root as well.
pc=$root$libdir/pkgconfig/libsirq.pc
grep -qx 'prefix=/usr' "$pc" || fail "libsirq.pc: $(grep '^prefix=' "$pc")"
mkdir "$tmp/pc"
sed "s|^prefix=.*|prefix=$root/usr|" "$pc" >"$tmp/pc/libsirq.pc"
export PKG_CONFIG_PATH=$tmp/pc
cc=${CC:-cc}
echo "deb: pkg-config --cflags --libs libsirq: $(pkg-config --cflags --libs libsirq)"

# shellcheck disable=SC2046
$cc -O2 -Wall -Wextra -Werror -o "$tmp/minimal" "$top/examples/minimal/minimal.c" \
	$(pkg-config --cflags --libs libsirq libdpdk)
export LD_LIBRARY_PATH=$root$libdir
resolved=$(ldd "$tmp/minimal" | awk '$1 == "libsirq.so.0" { print $3 }')
[ "$resolved" = "$root$libdir/libsirq.so.0" ] ||
	fail "minimal links libsirq.so.0 from '${resolved:-nowhere}', not the scratch root"
echo "deb: examples/minimal: libsirq.so.0 => $resolved"
if [ "$(id -u)" -eq 0 ]; then
	"$tmp/minimal" -l 0 --no-huge -m 128 --no-pci --no-telemetry \
		--file-prefix="$prefix" --vdev=net_null0 -- 1 >"$tmp/minimal.json"
	grep -q '"rx_packets": [1-9]' "$tmp/minimal.json" ||
		fail "minimal counted no packets: $(cat "$tmp/minimal.json")"
	echo "deb: examples/minimal ran 1 s on net_null: $(head -1 "$tmp/minimal.json")"
else
	echo "deb: not root: examples/minimal built and linked, not run (DPDK's EAL)"
fi

# examples/forwarder, as tests/install runs it: two null ports, 3 s, the
# policy changed after 1 s; it exits 0 only if every mbuf came back.
# shellcheck disable=SC2046
$cc -O2 -Wall -Wextra -Werror -o "$tmp/forwarder" "$top/examples/forwarder/forwarder.c" \
	$(pkg-config --cflags --libs libsirq libdpdk)
"$tmp/forwarder" -- --help >/dev/null
if [ "$(id -u)" -eq 0 ]; then
	"$tmp/forwarder" -l 0,1 --no-huge -m 256 --no-pci --no-telemetry \
		--file-prefix="$prefix-fwd" --vdev=net_null0 --vdev=net_null1 \
		-- --duration 3 --change-after 1 >"$tmp/forwarder.out" ||
		fail "forwarder exited $?: $(cat "$tmp/forwarder.out")"
	grep -q 'control thread: policy [a-z]* -> mainline' "$tmp/forwarder.out" ||
		fail "forwarder did not change the policy: $(cat "$tmp/forwarder.out")"
	grep -q 'timer [1-9][0-9]*, tasklet [1-9][0-9]*, vector [1-9]' "$tmp/forwarder.out" ||
		fail "forwarder's timer, tasklet or vector did not run: $(cat "$tmp/forwarder.out")"
	echo "deb: examples/forwarder ran 3 s on net_null: $(grep '^forwarder: forwarded' "$tmp/forwarder.out")"
else
	echo "deb: not root: examples/forwarder built and linked, not run (DPDK's EAL)"
fi

# examples/rcu-table, as tests/install runs it: two null ports, 3 s, the
# table replaced with RCU from CPU 0 and remote calls made; the control
# thread's sirq_bh_disable() must be refused with -EXDEV. It exits 0 only
# if no lookup met a freed table and every mbuf came back.
# shellcheck disable=SC2046
$cc -O2 -Wall -Wextra -Werror -o "$tmp/rcu-table" "$top/examples/rcu-table/rcu-table.c" \
	$(pkg-config --cflags --libs libsirq libdpdk)
"$tmp/rcu-table" -- --help >/dev/null
if [ "$(id -u)" -eq 0 ]; then
	"$tmp/rcu-table" -l 0,1 --no-huge -m 256 --no-pci --no-telemetry \
		--file-prefix="$prefix-rcu" --vdev=net_null0 --vdev=net_null1 \
		-- --seconds 3 >"$tmp/rcu-table.out" ||
		fail "rcu-table exited $?: $(cat "$tmp/rcu-table.out")"
	grep -q 'sirq_bh_disable() from CPU [0-9]* while lcore [0-9]* ran: -EXDEV' "$tmp/rcu-table.out" ||
		fail "rcu-table's sirq_bh_disable() from another CPU was not refused: $(cat "$tmp/rcu-table.out")"
	grep -q 'forwarded [1-9][0-9]* packets, [1-9][0-9]* table swaps .* [1-9][0-9]* remote calls' "$tmp/rcu-table.out" ||
		fail "rcu-table forwarded nothing, swapped no table or made no remote call: $(cat "$tmp/rcu-table.out")"
	echo "deb: examples/rcu-table ran 3 s on net_null: $(grep '^rcu-table: forwarded' "$tmp/rcu-table.out")"
else
	echo "deb: not root: examples/rcu-table built and linked, not run (DPDK's EAL)"
fi

# The static library: tests/install's consumer, libsirq.a from the root.
static_libs="-L$root$libdir -Wl,-Bstatic -lsirq -Wl,-Bdynamic $(pkg-config --libs libdpdk numa) -lpthread"
# shellcheck disable=SC2046,SC2086
$cc -Wall -Wextra -Werror -o "$tmp/consumer-static" "$top/tests/install/consumer.c" \
	$(pkg-config --cflags libsirq) $static_libs
! ldd "$tmp/consumer-static" | grep -q libsirq || fail "consumer-static is linked to libsirq.so"
"$tmp/consumer-static"

# The packaged programs run on the packaged library (tcp-echo-client is
# kernel TCP only; sirq-sim carries the DPDK-free engine, sirq_engine,
# and must need neither libsirq.so nor DPDK).
for prog in l2fwd-sirq tcp-echo; do
	resolved=$(ldd "$root/usr/bin/$prog" | awk '$1 == "libsirq.so.0" { print $3 }')
	[ "$resolved" = "$root$libdir/libsirq.so.0" ] ||
		fail "$prog links libsirq.so.0 from '${resolved:-nowhere}'"
done
! ldd "$root/usr/bin/sirq-sim" | grep -Eq 'libsirq|librte_' ||
	fail "sirq-sim links libsirq or DPDK: $(ldd "$root/usr/bin/sirq-sim" | grep -E 'libsirq|librte_')"
"$root/usr/bin/l2fwd-sirq" -- --help >/dev/null
"$root/usr/bin/sirq-sim" --scenario stall --policy kicinski --duration-ms 200 --quiet
echo "deb: ok ($(( $(date +%s) - start )) s)"
