#!/bin/bash
# In a guest of scripts/guest.sh: give the igb PF at BDF back to the
# kernel's igb driver, make 2 SR-IOV virtual functions on it, set VF 0's
# MAC to MAC and trust it, bind VF 0 to vfio-pci, then run CMD if
# given. What a user does on a host with an SR-IOV NIC before DPDK
# drives the VF.
#
#   sriov-vf.sh BDF MAC [-- CMD [ARG...]]
#
# Prints VF 0's BDF ("sriov-vf: ... vf0 BDF"). Exits 125 when a step
# fails (saying which), else CMD's status (0 without one).
set -u
pf=$1 mac=$2
shift 2
[ "${1:-}" = -- ] && shift
say() { echo "sriov-vf: $*"; }
fail() { say "$*"; exit 125; }

dev=/sys/bus/pci/devices/$pf
[ -d "$dev" ] || fail "no PCI device $pf"
modprobe igb || fail "modprobe igb (the kernel needs CONFIG_IGB)"
# The VFs stay driverless until bound: no igbvf grabbing them.
echo 0 >"$dev/sriov_drivers_autoprobe" || fail "sriov_drivers_autoprobe"
dpdk-devbind.py --force -b igb "$pf" || fail "cannot bind $pf to igb"
for _ in $(seq 100); do
	[ -d "$dev/net" ] && break
	sleep 0.1
done
ifname=$(ls "$dev/net" 2>/dev/null | head -n 1)
[ -n "$ifname" ] || fail "$pf has no netdev under igb"
# The PF sends nothing of its own (IPv6 solicitations) onto the wire.
echo 1 >"/proc/sys/net/ipv6/conf/$ifname/disable_ipv6" 2>/dev/null
ip link set "$ifname" up || fail "ip link set $ifname up"
echo 2 >"$dev/sriov_numvfs" || fail "cannot make 2 VFs on $pf ($ifname)"
ip link set "$ifname" vf 0 mac "$mac" || fail "cannot set VF 0's MAC"
ip link set "$ifname" vf 0 trust on || fail "cannot trust VF 0"
vf0=$(basename "$(readlink "$dev/virtfn0")")
[ -n "$vf0" ] || fail "no virtfn0 under $pf"
dpdk-devbind.py -b vfio-pci "$vf0" || fail "cannot bind VF 0 ($vf0) to vfio-pci"
say "pf $pf ($ifname), vf0 $vf0, mac $mac"
ip -d link show "$ifname" | sed -n 's/^ *vf /sriov-vf:   vf /p'
[ $# -eq 0 ] || "$@"
