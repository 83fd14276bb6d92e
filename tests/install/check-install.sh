#!/usr/bin/env bash
# Install the build into a scratch prefix, then build and run a consumer
# with nothing but `pkg-config --cflags --libs libsirq`, shared and static.
set -euo pipefail

build=$1
src=$(cd "$(dirname "$0")" && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest" "/var/run/dpdk/sirq-minimal-$$" "/var/run/dpdk/sirq-forwarder-$$" "/var/run/dpdk/sirq-rcu-table-$$"' EXIT

meson install -C "$build" --destdir "$dest" --no-rebuild --quiet
prefix=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')
pcdir=$(dirname "$(find "$dest$prefix" -name libsirq.pc | head -1)")
[ -f "$pcdir/libsirq.pc" ] || { echo "libsirq.pc not installed" >&2; exit 1; }
export PKG_CONFIG_PATH=$pcdir
# Point the staged .pc at its staging prefix; libdpdk's .pc stays as it is.
sed -i "s|^prefix=.*|prefix=$dest$prefix|" "$pcdir/libsirq.pc"
PKG_CONFIG=pkg-config
cc=${CC:-cc}

echo "pkg-config: $($PKG_CONFIG --cflags --libs libsirq)"
# shellcheck disable=SC2046
$cc -Wall -Wextra -Werror -o "$dest/consumer" "$src/consumer.c" \
	$($PKG_CONFIG --cflags --libs libsirq)
LD_LIBRARY_PATH=$(dirname "$(find "$dest$prefix" -name 'libsirq.so' | head -1)") "$dest/consumer"

# Each public header alone, with only the installed include directory:
# no DPDK include path. The engine's needs none; the binding's and the
# umbrella only declare the DPDK types they name. Then the engine-only
# consumer built that way and linked against the shared library.
incdir=$($PKG_CONFIG --variable=includedir libsirq)
for h in sirq_engine.h sirq_lcore.h sirq.h; do
	[ -f "$incdir/$h" ] || { echo "$h not installed in $incdir" >&2; exit 1; }
	printf '#include <%s>\n' "$h" |
		$cc -Wall -Wextra -Werror -std=c11 -fsyntax-only -I"$incdir" -x c - ||
		{ echo "$h does not compile on its own without DPDK" >&2; exit 1; }
done
# shellcheck disable=SC2046
$cc -Wall -Wextra -Werror -o "$dest/consumer-engine" "$src/consumer.c" \
	-I"$incdir" $($PKG_CONFIG --libs libsirq)
LD_LIBRARY_PATH=$(dirname "$(find "$dest$prefix" -name 'libsirq.so' | head -1)") "$dest/consumer-engine"
echo "headers: sirq_engine.h, sirq_lcore.h and sirq.h each compile without DPDK's include path"

# The same program against the static archive. Its DPDK dependency is
# linked shared: Debian's static DPDK wants -dev packages we do not need.
static_libs="$($PKG_CONFIG --libs libsirq |
	sed 's/-lsirq/-Wl,-Bstatic -lsirq -Wl,-Bdynamic/') $($PKG_CONFIG --libs libdpdk numa) -lpthread"
# shellcheck disable=SC2086
$cc -Wall -Wextra -Werror -o "$dest/consumer-static" "$src/consumer.c" \
	$($PKG_CONFIG --cflags libsirq) $static_libs
"$dest/consumer-static"

# The example dataplane of docs/architecture.md, on the binding's header
# (sirq_lcore.h), against the installed library, for one second on a null
# port.
# shellcheck disable=SC2046
$cc -O2 -Wall -Wextra -Werror -o "$dest/minimal" "$src/../../examples/minimal/minimal.c" \
	$($PKG_CONFIG --cflags --libs libsirq libdpdk)
LD_LIBRARY_PATH=$(dirname "$(find "$dest$prefix" -name 'libsirq.so' | head -1)") \
	"$dest/minimal" -l 0 --no-huge -m 128 --no-pci --no-telemetry \
	--file-prefix="sirq-minimal-$$" --vdev=net_null0 -- 1 >"$dest/minimal.json"
grep -q '"rx_packets": [1-9]' "$dest/minimal.json" || {
	echo "minimal: no packets counted" >&2; cat "$dest/minimal.json" >&2; exit 1; }
python3 -c 'import json,sys; json.loads(open(sys.argv[1]).read().split("\n",1)[1])' "$dest/minimal.json"
echo "example: $(head -1 "$dest/minimal.json")"

# examples/forwarder (docs/guide.md's program), the same way: port 0 to
# port 1 on two null ports for three seconds, its control thread changing
# the policy after one. It exits 0 only if every mbuf came back.
# shellcheck disable=SC2046
$cc -O2 -Wall -Wextra -Werror -o "$dest/forwarder" "$src/../../examples/forwarder/forwarder.c" \
	$($PKG_CONFIG --cflags --libs libsirq libdpdk)
staged_lib=$(dirname "$(find "$dest$prefix" -name 'libsirq.so' | head -1)")
LD_LIBRARY_PATH=$staged_lib "$dest/forwarder" -- --help >/dev/null
LD_LIBRARY_PATH=$staged_lib "$dest/forwarder" -l 0,1 --no-huge -m 256 --no-pci --no-telemetry \
	--file-prefix="sirq-forwarder-$$" --vdev=net_null0 --vdev=net_null1 \
	-- --duration 3 --change-after 1 >"$dest/forwarder.out" || {
	echo "forwarder: exit $?" >&2; cat "$dest/forwarder.out" >&2; exit 1; }
for want in 'control thread: policy [a-z]* -> mainline' \
	'forwarded [1-9][0-9]* packets' 'timer [1-9][0-9]*, tasklet [1-9][0-9]*, vector [1-9]' \
	'clean exit'; do
	grep -q "$want" "$dest/forwarder.out" || {
		echo "forwarder: no '$want' in its output" >&2; cat "$dest/forwarder.out" >&2; exit 1; }
done
echo "example: $(grep '^forwarder: forwarded' "$dest/forwarder.out")"
# examples/rcu-table, the same way: port 0 to port 1 for three seconds
# while a control thread at nice 19 on CPU 0 replaces the lcore's table
# with RCU and makes remote calls; its sirq_bh_disable() from CPU 0 must
# be refused. It exits 0 only if no lookup met a freed table and every
# mbuf came back.
# shellcheck disable=SC2046
$cc -O2 -Wall -Wextra -Werror -o "$dest/rcu-table" "$src/../../examples/rcu-table/rcu-table.c" \
	$($PKG_CONFIG --cflags --libs libsirq libdpdk)
LD_LIBRARY_PATH=$staged_lib "$dest/rcu-table" -- --help >/dev/null
LD_LIBRARY_PATH=$staged_lib "$dest/rcu-table" -l 0,1 --no-huge -m 256 --no-pci --no-telemetry \
	--file-prefix="sirq-rcu-table-$$" --vdev=net_null0 --vdev=net_null1 \
	-- --seconds 3 >"$dest/rcu-table.out" || {
	echo "rcu-table: exit $?" >&2; cat "$dest/rcu-table.out" >&2; exit 1; }
for want in 'sirq_bh_disable() from CPU [0-9]* while lcore [0-9]* ran: -EXDEV' \
	'forwarded [1-9][0-9]* packets, [1-9][0-9]* table swaps' ' [1-9][0-9]* remote calls' \
	'remote_refused [1-9]' 'clean exit'; do
	grep -q -- "$want" "$dest/rcu-table.out" || {
		echo "rcu-table: no '$want' in its output" >&2; cat "$dest/rcu-table.out" >&2; exit 1; }
done
echo "example: $(grep '^rcu-table: forwarded' "$dest/rcu-table.out")"
# docs/guide.md quotes the forwarder in its quick start: each C excerpt
# there must still be in forwarder.c, word for word.
python3 - "$src/../../docs/guide.md" "$src/../../examples/forwarder/forwarder.c" <<'PY'
import re, sys
guide, src = (open(f).read() for f in sys.argv[1:])
quick = guide[guide.index("### 1.4"):guide.index("## 2.")]
gone = [b for b in re.findall(r"```c\n(.*?)```", quick, re.S) if b not in src]
for b in gone:
    print("docs/guide.md quotes what forwarder.c no longer has:\n" + b, file=sys.stderr)
sys.exit(1 if gone else 0)
PY

# Exactly the symbols of the version map are exported.
diff -u <(grep -oE '^[[:space:]]+sirq_[a-z_]+;' "$src/../../lib/sirq/version.map" |
		tr -d ' \t;' | sort) \
	<(nm -D --defined-only "$(find "$dest$prefix" -name 'libsirq.so.*.*' | head -1)" |
		awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort)
echo "install: ok"
