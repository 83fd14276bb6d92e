#!/usr/bin/env bash
# Build the Debian packages libsirq0, libsirq-dev and sirq-tools (debian/)
# with `dpkg-buildpackage -us -uc -b` in a copy of this tree, so the tree
# gets no build output, then check them with lintian (any error fails).
# The .debs (and -dbgsym .debs), .changes, .buildinfo, build.log and
# lintian.txt land in OUTDIR. About a minute on 2 cores.
#
#   ./scripts/deb.sh [OUTDIR]      # default out/deb
#   DEB_NO_DEPS=1                  # skip ./scripts/install-deps.sh (tests/deb)
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-out/deb}
[ -n "${DEB_NO_DEPS:-}" ] || ./scripts/install-deps.sh

version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$work/libsirq-$version
mkdir "$src"

# The work tree as it is (uncommitted changes too), without what git
# ignores (build directories, out/).
echo "deb: copying the tree to $src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi	# not deleted
		done |
		tar --null -T - -cf - | tar -xf - -C "$src"
else
	tar --exclude=./.git --exclude='./build*' --exclude=./out --exclude='./obj-*' \
		-cf - . | tar -xf - -C "$src"
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
echo "deb: dpkg-buildpackage -us -uc -b -jauto (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b -jauto) >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed; the whole log is $out/build.log" >&2
	exit 1
fi

for pattern in 'libsirq*.deb' 'sirq-tools*.deb' 'libsirq_*.changes' 'libsirq_*.buildinfo'; do
	find "$out" -maxdepth 1 -name "$pattern" -delete
done
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
changes=$out/libsirq_${version}_$arch.changes

if command -v lintian >/dev/null; then
	echo "deb: lintian --pedantic --display-info (fails on errors)"
	rc=0
	# TMPDIR: lintian leaves its mldbm-* index files behind.
	TMPDIR=$work lintian --fail-on error --pedantic --display-info "$changes" \
		>"$out/lintian.txt" 2>&1 || rc=$?
	grep -v '^running with root privileges' "$out/lintian.txt" || true
	count() { grep -c "^$1: " "$out/lintian.txt" || true; }
	echo "deb: lintian: $(count E) errors, $(count W) warnings, $(count I) info," \
		"$(count P) pedantic (report: $out/lintian.txt)"
	[ "$rc" -eq 0 ] || { echo "deb: lintian failed (exit $rc)" >&2; exit 1; }
else
	echo "deb: lintian not installed, not run (./scripts/install-deps.sh installs it)"
fi

echo "deb: packages in $out:"
ls -1 "$out"/*.deb
