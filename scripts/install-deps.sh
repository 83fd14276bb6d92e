#!/usr/bin/env bash
# Install what libsirq needs to build, test and run on Debian 12, as root.
# Skips apt entirely when everything is already there.
#
#   ./scripts/install-deps.sh          everything scripts/test.sh needs
#   ./scripts/install-deps.sh --demo   what scripts/demo.sh needs: the build
#                                      (meson configures every target, so
#                                      Criterion too) and dpdk-testpmd
#   ./scripts/install-deps.sh --roots  what scripts/debian-root.sh needs, so
#                                      that scripts/test.sh can make the
#                                      Debian roots while the rest installs
set -euo pipefail

# The build of libsirq, its apps, tools and tests; DPDK's dpdk-testpmd.
BUILD_PKGS=(
	gcc
	meson
	ninja-build
	pkg-config
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
)
PKGS=(
	"${BUILD_PKGS[@]}"
	clang
	libclang-rt-14-dev
	iproute2
	# the kernel lab (bench/kernel-lab.sh): a veth end without checksum
	# offload, the receiver's firewall rules
	ethtool
	nftables
	# reads the sirq.* CTF trace back (tests/l2fwd/test_trace.c)
	babeltrace2
	# a refused start leaks nothing and closes no standard fd
	# (tests/l2fwd/test_napi_modes.c; skipped without it)
	valgrind
	# the guest lab (scripts/guest.sh, tests/guest): QEMU with virtiofsd,
	# Debian's 6.1 kernel for the guest (only its image and modules are
	# used: the host keeps booting its own), busybox for the initramfs
	qemu-system-x86
	linux-image-cloud-amd64
	busybox-static
	# Debian packages (scripts/deb.sh, tests/deb)
	dpkg-dev
	debhelper
	help2man
	lintian
	# the API reference (-Ddocs=true, docs/api): HTML only, no graphs,
	# so no graphviz
	doxygen
	# the Debian 13 and testing legs (scripts/debian-root.sh,
	# scripts/test-debian.sh): roots from Debian's archive, DPDK 24.11 and
	# 25.11 inside
	mmdebstrap
)
case ${1:-} in
'') ;;
--demo) PKGS=("${BUILD_PKGS[@]}") ;;
--roots) PKGS=(python3 mmdebstrap) ;;
*) echo "usage: $0 [--demo|--roots]" >&2; exit 2 ;;
esac

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing ${missing[*]}; run as root to install them" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
