#!/usr/bin/env bash
# Fetch one of Debian's kernel images for the guest lab (scripts/guest.sh
# --kernel) from Debian's archive, verify it and extract it, with its
# modules, into a cache outside git:
#
#   6.1-rt   bookworm's linux-image-rt-amd64 (Linux 6.1 with PREEMPT_RT,
#            the per-CPU BH lock held): the linux-image-6.1.0-N-rt-amd64
#            it depends on in this host's apt sources (bookworm,
#            bookworm-security), as the 6.1 cloud image comes from them
#   7.x-rt   trixie-backports' newest linux-image-7.*+deb13-rt-amd64 (past
#            6.18: the BH lock dropped unless PREEMPT_RT_NEEDS_BH_LOCK;
#            past 6.19: threaded busy poll), with its linux-binary-,
#            linux-modules- and linux-base- packages
#   7.x      the same version's linux-image-7.*+deb13-amd64 (generic:
#            the RT image's config without PREEMPT_RT)
#
# trixie-backports is read by apt itself with a private state in the cache
# (its own sources.list, lists and archives; the host's apt is not
# touched), its Release checked against debian-archive-keyring's trixie
# keys. Every .deb is checked against the SHA256 of the signed index, and
# by dpkg-deb (its package name and version), before it is extracted.
#
#   scripts/kernel-fetch.sh KERNEL
#
# Prints the image's path on stdout, CACHE/<release>/boot/vmlinuz-<release>;
# beside it boot/config-<release> (the config the package ships) and
# CACHE/<release>/lib/modules/<release> (depmod run), which guest.sh
# finds from the image's path and mounts over /lib/modules/<release> in
# the guest. Everything else goes to stderr.
#
# KERNEL_FETCH_CACHE: the cache (default /var/cache/libsirq/kernels).
# Exit 1 on failure (the archive unreachable and nothing cached included).
set -euo pipefail

say() { echo "kernel-fetch: $*" >&2; }
die() { say "$*"; exit 1; }

kernel=${1:-}
case $kernel in
6.1-rt | 7.x-rt | 7.x) ;;
*) die "KERNEL must be 6.1-rt, 7.x-rt or 7.x, not '$kernel'" ;;
esac
[ "$(id -u)" -eq 0 ] || die "runs as root (apt, the cache in /var/cache)"
command -v dpkg-deb >/dev/null && command -v depmod >/dev/null || die "dpkg-deb and depmod needed"

cache=${KERNEL_FETCH_CACHE:-/var/cache/libsirq/kernels}
debs=$cache/debs
mkdir -p "$debs"

# apt with a private state for one suite: APT=(apt options).
apt_private() {	# name sources-line
	local d=$cache/apt/$1
	mkdir -p "$d/etc" "$d/lists/partial" "$d/archives/partial"
	echo "$2" >"$d/etc/sources.list"
	APT=(-o Dir::Etc::SourceList="$d/etc/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d" -o Dir::State::status=/dev/null
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
	# Refreshed once a day; the archive's signature is checked by apt.
	if [ -z "$(find "$d/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null)" ]; then
		say "apt-get update ($2)"
		apt-get "${APT[@]}" update -qq >&2 ||
			[ -n "$(find "$d/lists" -maxdepth 1 -name '*_Packages*')" ] ||
			die "cannot read $2 (Debian's archive unreachable?)"
	fi
}

# A field of a package's newest version in the index.
field() {	# package field
	apt-cache "${APT[@]}" show --no-all-versions "$1" 2>/dev/null |
		sed -n "s/^$2: //p" | head -n 1
}

# The .deb of a package, downloaded once, checked every time.
fetch_deb() {	# package
	local p=$1 v f sha
	v=$(field "$p" Version)
	[ -n "$v" ] || die "$p is not in the index"
	sha=$(field "$p" SHA256)
	f=$debs/$(basename "$(field "$p" Filename)")
	if [ ! -s "$f" ] || [ "$(sha256sum <"$f" | cut -d' ' -f1)" != "$sha" ]; then
		say "downloading $p $v"
		rm -f "$f"
		(cd "$debs" && apt-get "${APT[@]}" download -qq "$p=$v" >&2) ||
			die "apt-get download $p=$v failed"
	fi
	[ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$sha" ] ||
		die "$f: its SHA256 is not the index's ($sha)"
	[ "$(dpkg-deb -f "$f" Package)" = "$p" ] && [ "$(dpkg-deb -f "$f" Version)" = "$v" ] ||
		die "$f: dpkg-deb reads $(dpkg-deb -f "$f" Package 2>&1) $(dpkg-deb -f "$f" Version 2>&1), not $p $v"
	dpkg-deb --fsys-tarfile "$f" | tar -t >/dev/null || die "$f: its data does not read"
	echo "$f"
}

files=()
case $kernel in
6.1-rt)
	# The host's own sources (bookworm): the same archive as the 6.1 cloud image.
	APT=(-o Debug::NoLocking=1)
	dep=$(field linux-image-rt-amd64 Depends)
	if [ -z "$dep" ]; then
		apt-get update -qq >&2 || true
		dep=$(field linux-image-rt-amd64 Depends)
	fi
	pkg=$(grep -o 'linux-image-6\.1\.[^ ,]*-rt-amd64' <<<"$dep" | head -n 1)
	[ -n "$pkg" ] || die "linux-image-rt-amd64 of this host's sources is not 6.1 ($dep)"
	release=${pkg#linux-image-}
	files+=("$(fetch_deb "$pkg")")
	;;
7.x-rt | 7.x)
	apt_private trixie-backports \
		"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie-backports main"
	# The newest 7.x that has both flavours, so 7.x-rt and 7.x are one version.
	ver=$(apt-cache "${APT[@]}" pkgnames linux-image-7. 2>/dev/null |
		sed -n 's/^linux-image-\(7\.[0-9.]*+deb13\)-rt-amd64$/\1/p' | sort -V |
		while read -r v; do
			apt-cache "${APT[@]}" show "linux-image-$v-amd64" >/dev/null 2>&1 && echo "$v"
		done | tail -n 1)
	[ -n "$ver" ] || die "no linux-image-7.*+deb13-rt-amd64 in trixie-backports"
	flavour=amd64
	[ "$kernel" = 7.x-rt ] && flavour=rt-amd64
	release=$ver-$flavour
	# linux-image-REL is a package of dependencies alone: the image is in
	# linux-binary-, the modules in linux-modules-, the config in linux-base-.
	dep=$(field "linux-image-$release" Depends)
	for p in linux-binary linux-modules linux-base; do
		grep -q "$p-$release " <<<"$dep " || die "linux-image-$release does not depend on $p-$release ($dep)"
		files+=("$(fetch_deb "$p-$release")")
	done
	;;
esac

root=$cache/$release
stamp=$(for f in "${files[@]}"; do basename "$f"; done | sha256sum | cut -c1-16)
if [ "$(cat "$root/.sirq-fetched" 2>/dev/null)" != "$stamp" ]; then
	say "extracting ${#files[@]} package(s) of $release into $root"
	rm -rf "$root" "$root.tmp"
	mkdir -p "$root.tmp"
	for f in "${files[@]}"; do dpkg-deb -x "$f" "$root.tmp"; done
	cd "$root.tmp"
	# trixie's packages are /usr-merged: lib is usr/lib, and the image and
	# config are in the modules' directory.
	[ -e lib ] || [ ! -d usr/lib/modules ] || ln -s usr/lib lib
	mkdir -p boot
	for n in vmlinuz config System.map; do
		[ -e "boot/$n-$release" ] || [ ! -e "lib/modules/$release/$n" ] ||
			ln "lib/modules/$release/$n" "boot/$n-$release"
	done
	[ -s "boot/vmlinuz-$release" ] || die "no vmlinuz of $release in ${files[*]}"
	[ -s "boot/config-$release" ] || die "no config-$release in ${files[*]}"
	[ -d "lib/modules/$release/kernel" ] || die "no modules of $release in ${files[*]}"
	depmod -b "$root.tmp" "$release" || die "depmod -b $root.tmp $release failed"
	[ -s "lib/modules/$release/modules.dep" ] || die "depmod wrote no modules.dep"
	cd /
	echo "$stamp" >"$root.tmp/.sirq-fetched"
	mv "$root.tmp" "$root"
fi
say "$kernel: $release ($(for f in "${files[@]}"; do basename "$f"; done | tr '\n' ' '))"
echo "$root/boot/vmlinuz-$release"
