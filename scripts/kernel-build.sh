#!/usr/bin/env bash
# Build a Linux 6.1 kernel for the guest lab (scripts/guest.sh --kernel)
# from Debian's linux-source-6.1, one per softirq policy, all from the
# same tree and the same config, so that they differ by the patches only:
#
#   6.1            no patch: ksoftirqd_running(), the policy of 4.9 .. 6.4
#                  (4cd13c21b207), libsirq's `ksoftirqd`
#   6.1+kicinski   the seed's patches 002-004 ("softirq: uncontroversial
#                  change"), libsirq's `kicinski`
#   6.1+mainline   d15121be7485 (6.5) reverting 4cd13c21b207, libsirq's
#                  `mainline`
#
# The config is Debian's own for the cloud kernel (/boot/config-6.1.*-cloud-
# amd64: HZ 250, voluntary preemption, autogroup, CFS), with modules off:
# what the guest needs is built in (virtio-pci, virtiofs, virtio-net,
# veth, pktgen, tun, vfio-pci), and no debug info. Prints the bzImage's
# path on stdout; everything else goes to stderr.
#
#   scripts/kernel-build.sh VARIANT
#
# Cached in KERNEL_CACHE (default /var/cache/libsirq-kernels): the tree
# (extracted once), and one bzImage per variant, rebuilt only when the
# source, the config or a patch changed. The first build takes about
# 25 minutes on 2 cores; another variant, about a minute (only
# kernel/softirq.c changes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
patches=$here/kernel

say() { echo "kernel-build: $*" >&2; }
die() { say "$*"; exit 1; }

variant=${1:-}
case $variant in
6.1) series=() ;;
6.1+kicinski)
	series=(002-patch-softirq-rename-ksoftirqd-running-ksoftirqd-should-handle.patch
		003-patch-softirq-avoid-spurious-stalls-due-to-need-resched.patch
		004-patch-softirq-don-t-yield-if-only-expedited-handlers-are-pendi.patch) ;;
6.1+mainline) series=(mainline-d15121be7485.patch) ;;
*) die "VARIANT must be 6.1, 6.1+kicinski or 6.1+mainline, not '${variant}'" ;;
esac
[ "$(id -u)" -eq 0 ] || die "runs as root (apt-get for the source and the build tools)"

pkgs=(linux-source-6.1 linux-image-cloud-amd64 bc bison flex libelf-dev libssl-dev
	kmod cpio xz-utils make gcc)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cache=${KERNEL_CACHE:-/var/cache/libsirq-kernels}
tarball=$(ls -v /usr/src/linux-source-6.1.tar.xz 2>/dev/null | tail -n 1)
[ -n "$tarball" ] || die "no /usr/src/linux-source-6.1.tar.xz"
debconfig=$(ls -v /boot/config-6.1.*-cloud-amd64 2>/dev/null | tail -n 1)
[ -n "$debconfig" ] || die "no /boot/config-6.1.*-cloud-amd64 (linux-image-cloud-amd64)"
src=$cache/linux-source-6.1
mkdir -p "$cache"

# One key per source, config, patch set and this script.
key=$( { stat -c '%s %Y' "$tarball"; cat "$debconfig" "$0"
	for p in "${series[@]}"; do cat "$patches/$p"; done; } | sha256sum | cut -c1-16)
image=$cache/bzImage-$variant-$key
if [ -s "$image" ]; then
	say "$variant: cached ($image)"
	echo "$image"
	exit 0
fi

if [ ! -f "$src/.sirq-extracted" ]; then
	say "extracting $tarball into $cache (a minute)"
	rm -rf "$src"
	tar -C "$cache" -xJf "$tarball"
	touch "$src/.sirq-extracted"
fi

# The tree is kept clean between builds: a variant's patches go on, the
# build runs, the patches come off, whatever happens.
applied=()
unpatch() {
	local i
	for ((i = ${#applied[@]} - 1; i >= 0; i--)); do
		patch -d "$src" -p1 -R -s <"$patches/${applied[$i]}" ||
			say "could not take ${applied[$i]} off: remove $src to start again"
	done
	applied=()
}
trap unpatch EXIT
for p in "${series[@]}"; do
	say "applying $p"
	patch -d "$src" -p1 -s --no-backup-if-mismatch <"$patches/$p" ||
		die "$p does not apply to $(basename "$tarball")"
	applied+=("$p")
done

say "config: $(basename "$debconfig"), modules off, the guest's drivers built in"
cp "$debconfig" "$src/.config"
cfg() { "$src/scripts/config" --file "$src/.config" "$@"; }
cfg --disable MODULES
for o in VIRTIO VIRTIO_PCI VIRTIO_NET VIRTIO_CONSOLE FUSE_FS VIRTIO_FS VETH NET_PKTGEN \
	TUN VFIO VFIO_PCI VFIO_IOMMU_TYPE1 HUGETLBFS INTEL_IOMMU IRQ_REMAP \
	FTRACE FTRACE_SYSCALLS DYNAMIC_FTRACE; do
	cfg --enable "$o"
done
cfg --disable DEBUG_INFO --disable DEBUG_INFO_DWARF5 --disable DEBUG_INFO_BTF \
	--enable DEBUG_INFO_NONE
cfg --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS ""
suffix=-sirq
[ "$variant" = 6.1 ] || suffix+=-${variant#6.1+}
cfg --set-str LOCALVERSION "$suffix"
cfg --disable LOCALVERSION_AUTO
make -C "$src" olddefconfig >/dev/null

jobs=$(nproc)
say "$variant: make -j$jobs bzImage (about 25 minutes the first time on 2 cores)"
start=$(date +%s)
make -C "$src" -j"$jobs" bzImage >"$cache/build-$variant.log" 2>&1 ||
	{ tail -n 30 "$cache/build-$variant.log" >&2; die "$variant: build failed ($cache/build-$variant.log)"; }
cp "$src/arch/x86/boot/bzImage" "$image.tmp"
mv "$image.tmp" "$image"
say "$variant: built in $(($(date +%s) - start)) s: $image ($(cat "$src/include/config/kernel.release"))"
echo "$image"
