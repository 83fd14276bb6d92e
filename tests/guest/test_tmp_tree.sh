#!/usr/bin/env bash
# scripts/guest.sh run from a tree under /tmp whose --out lies inside it,
# as bench/kernel-lab.sh does from a clone under /tmp (its out/): the guest
# mounts a tmpfs on /tmp, so the tree must be shared again under the
# writable share. Before, the guest panicked: "/bin/bash:
# <tree>/scripts/guest-init.sh: No such file or directory". Here the
# guest runs a script of the tree, reads a file of it and writes into
# out/. Exit 77 where the guest lab cannot run (scripts/guest.sh's 77).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d /tmp/sirq-tmptree.XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/scripts" "$t/out"
cp "$top"/scripts/*.sh "$t/scripts/"
echo "a file of the tree" >"$t/marker"
cat >"$t/scripts/probe.sh" <<EOF
#!/bin/bash
set -e
cat "$t/marker" >"$t/out/seen"
echo "out writable" >>"$t/out/seen"
EOF
rc=0
(cd "$t" && ./scripts/guest.sh --out "$t/out" --timeout 300 --wedged-retries 1 -- bash "$t/scripts/probe.sh") \
	>"$t/guest.log" 2>&1 || rc=$?
if [ "$rc" -eq 77 ]; then
	tail -1 "$t/guest.log"
	exit 77
fi
want=$(printf 'a file of the tree\nout writable')
if [ "$rc" -ne 0 ] || [ "$(cat "$t/out/seen" 2>/dev/null)" != "$want" ]; then
	echo "test_tmp_tree: FAIL: guest.sh from $t with --out $t/out: exit $rc," \
		"out/seen: '$(cat "$t/out/seen" 2>/dev/null || echo missing)'"
	tail -20 "$t/guest.log"
	tail -20 "$t/out/console.log" 2>/dev/null || true
	exit 1
fi
echo "test_tmp_tree: ok: the guest ran $t/scripts/probe.sh and wrote $t/out/seen"
