#!/usr/bin/env bash
# The guest lab: boot a Linux kernel under QEMU with this machine's root
# file system read-only over virtiofs (or 9p), run one command in it as root, and
# return that command's output (on stdout) and exit status.
#
#   scripts/guest.sh [options] [--] CMD [ARG...]
#
# No disk image: the guest's root is the host's / (read-only), with tmpfs
# on /tmp and /run, and OUT (writable) at the same path as on the host. So
# the guest runs the binaries just built here; a tree under /tmp (a clean
# clone there) is shared again, read-only, at its path. Before CMD the guest loads
# vfio-pci, reserves hugepages (scripts/hugepages.sh) and binds every NIC
# given with --nic to vfio-pci with dpdk-devbind.py, as a user does.
# NIC i (from 0) is PCI device 0000:00:0<3+i>.0 in the guest, but an igb,
# which sits behind a PCIe root port of its own at that slot (its SR-IOV
# VFs take device numbers on the port's bus): 0000:0<b>:00.0, b counting
# the igbs from 1 in NIC order. CMD sees them in GUEST_NICS
# (space-separated BDFs) and OUT in GUEST_OUT.
#
# Options:
#   --nic SPEC      a NIC model and its backend on this machine, repeatable:
#                     MODEL,udp=A:B    QEMU sends the guest's frames to
#                                      127.0.0.1:A and receives on
#                                      127.0.0.1:B, one frame per datagram
#                     MODEL,tap=NAME[,queues=N]  a tap NAME on this machine
#                                      (no address; multi-queue with N)
#                   MODEL: e1000e (Intel 82574L), virtio (virtio-net-pci,
#                   modern only, through the vIOMMU), vmxnet3, igb (Intel
#                   82576: QEMU 8.0 or later, below)
#   --no-bind       leave the NICs on their kernel driver (or none)
#   --kernel FILE   the guest's kernel (default: Debian's newest 6.1 image
#                   in /boot; with 9p, scripts/kernel-fetch.sh 7.x's); its
#                   modules come from /lib/modules/<release>
#                   if it has any, else it must have virtiofs built in. An
#                   image extracted from Debian's packages elsewhere
#                   (scripts/kernel-fetch.sh: DIR/boot/vmlinuz-<release>)
#                   brings DIR/lib/modules/<release>, which the guest mounts
#                   over its /lib/modules/<release>
#   --smp N         guest CPUs (default 2)
#   --mem MB        guest memory (default 2048)
#   --hugepages N   2 MB pages the guest reserves before CMD (default 256)
#   --out DIR       a host directory the guest may write (default: a fresh
#                   temporary one, removed at the end)
#   --monitor SOCK  QEMU's human monitor on the unix socket SOCK (set_link)
#   --console FILE  the guest kernel's console log (default: OUT/console.log
#                   for a given --out, else discarded unless the boot fails)
#   --timeout S     kill the guest after S seconds (default 900): exit 124.
#                   A CMD still running a minute before (half-way under
#                   120 s; by the guest's uptime) gets the list of its
#                   processes, their wait channels and each thread's
#                   kernel stack in its output; on the timeout the
#                   console's tail goes to stderr
#   --wedged-retries N
#                   stop a guest whose kernel reports an RCU stall (a vCPU
#                   that stopped taking interrupts: multi-threaded TCG now
#                   and then leaves one halted with its timer's vector in
#                   service) and run CMD again in a new guest, at most N
#                   times; then exit 75. A console file of its own (not
#                   the temporary one) is kept as <name>.wedged-K.log.
#                   CMD sees GUEST_ATTEMPT (1, 2...) and must be one that
#                   can run again. Each guest has the whole --timeout.
#                   Without this option such a guest runs on to its
#                   timeout
#   --append ARGS   more kernel command-line arguments
#   --qemu-trace EV QEMU trace events matching EV (e.g. 'e1000e_irq_*'),
#                   repeatable, into OUT/qemu-trace.log
#   -h, --help
#
# Environment: GUEST_ACCEL=kvm|tcg|auto (default auto: KVM where a guest
# really boots on it, found by one probe boot whose verdict is cached, else
# TCG), GUEST_CACHE (default /var/cache/libsirq-guest: initramfs, probe),
# GUEST_QEMU_ROOT=DIR (a Debian root whose QEMU to run, below),
# GUEST_FS=virtiofs|9p (how the guest reaches this machine's files),
# GUEST_TCG_THREADS=multi|single (TCG's host threads: one per vCPU, or one
# for all; default multi, single under a root's QEMU, below).
#
# QEMU: this machine's, unless a NIC model needs a newer one (igb, which
# QEMU has from 8.0 on; Debian 12's is 7.2). Then the guest runs Debian
# 13's QEMU from the root that scripts/debian-root.sh trixie makes (or
# GUEST_QEMU_ROOT), through that root's own loader and libraries, with
# that root's firmware, and the shares go over 9p, which QEMU serves
# itself: under QEMU 10's TCG a virtiofs root gave the guest stale code
# (virtiofsd writes file data into guest memory behind TCG). Debian 12's
# cloud kernel has no 9p, so such a guest runs Debian 13's generic
# kernel (scripts/kernel-fetch.sh 7.x) unless --kernel says otherwise.
#
# Exit status: CMD's; 124 on timeout; 125 when the guest did not run CMD
# (boot failure: the console's tail goes to stderr); 75 when the guest
# wedged more than --wedged-retries times; 77 when QEMU or the kernel is
# missing and cannot be installed (as tests skip); 2 on bad usage.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")

die() { echo "guest: $*" >&2; exit 2; }
say() { echo "guest: $*" >&2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }

args=("$@")	# for a new guest after a wedged one
nics=() traces=() kernel="" smp=2 mem=2048 hugepages=256 out="" monitor="" console=""
timeout_s=900 append="" bind=1 wedged_retries=-1
while [ $# -gt 0 ]; do
	case $1 in
	--nic) [ $# -ge 2 ] || die "--nic needs a SPEC"; nics+=("$2"); shift 2 ;;
	--no-bind) bind=0; shift ;;
	--kernel) [ $# -ge 2 ] || die "--kernel needs a FILE"; kernel=$2; shift 2 ;;
	--smp) smp=${2-}; shift 2 ;;
	--mem) mem=${2-}; shift 2 ;;
	--hugepages) hugepages=${2-}; shift 2 ;;
	--out) out=${2-}; shift 2 ;;
	--monitor) monitor=${2-}; shift 2 ;;
	--console) console=${2-}; shift 2 ;;
	--timeout) timeout_s=${2-}; shift 2 ;;
	--append) append=${2-}; shift 2 ;;
	--wedged-retries)
		[ $# -ge 2 ] || die "--wedged-retries needs a number"
		case $2 in '' | *[!0-9]*) die "--wedged-retries must be a number, not '$2'" ;; esac
		wedged_retries=$2; shift 2 ;;
	--qemu-trace) [ $# -ge 2 ] || die "--qemu-trace needs EVENTS"; traces+=("$2"); shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || die "no command to run in the guest (see --help)"
for v in smp mem hugepages timeout_s; do
	case ${!v} in '' | *[!0-9]*) die "--${v%_s} must be a number, not '${!v}'" ;; esac
done
# Which guest this is, counted from 1 (set by this script for a new guest).
attempt=${GUEST_ATTEMPT:-1}
case $attempt in '' | 0 | *[!0-9]*) die "GUEST_ATTEMPT must be a number >= 1, not '$attempt'" ;; esac
[ "$smp" -ge 1 ] || die "--smp must be at least 1, not '$smp'"
[ "$mem" -ge 512 ] || die "--mem must be at least 512 (MB), not '$mem'"
[ "${#nics[@]}" -le 6 ] || die "at most 6 NICs (PCI slots 3..8), not ${#nics[@]}"

# What the lab needs comes from apt, through the project's installer.
have_kernel() { [ -n "$kernel" ] || ls /boot/vmlinuz-6.1.*-amd64 >/dev/null 2>&1; }
if ! command -v qemu-system-x86_64 >/dev/null || [ ! -x /usr/lib/qemu/virtiofsd ] ||
	! command -v busybox >/dev/null || ! have_kernel; then
	"$top/scripts/install-deps.sh" >&2 || true
fi
if ! command -v qemu-system-x86_64 >/dev/null || [ ! -x /usr/lib/qemu/virtiofsd ]; then
	say "qemu-system-x86_64 or virtiofsd missing and not installable here"
	exit 77
fi
[ "$(id -u)" -eq 0 ] || { say "the guest lab runs as root (virtiofsd, vfio in the guest)"; exit 77; }

# QEMU's command: this machine's, or a root's (see the header).
qemu_bin=(qemu-system-x86_64)
fs=${GUEST_FS:-virtiofs}	# how the guest reaches this machine's files
need_new_qemu=0
for spec in "${nics[@]}"; do
	case ${spec%%,*} in igb) need_new_qemu=1 ;; esac
done
host_qemu_major=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p')
if [ -n "${GUEST_QEMU_ROOT:-}" ] || { [ "$need_new_qemu" = 1 ] && [ "${host_qemu_major:-0}" -lt 8 ]; }; then
	qroot=${GUEST_QEMU_ROOT:-}
	if [ -z "$qroot" ]; then
		say "igb needs QEMU 8.0 or later, this machine has ${host_qemu_major:-?}: Debian 13's, from its root"
		rc=0
		qroot=$("$top/scripts/debian-root.sh" trixie) || rc=$?
		if [ "$rc" -ne 0 ]; then
			say "no Debian 13 root (scripts/debian-root.sh trixie exit $rc): no QEMU for igb"
			exit 77
		fi
	fi
	[ -x "$qroot/usr/bin/qemu-system-x86_64" ] ||
		{ say "$qroot has no usr/bin/qemu-system-x86_64"; exit 77; }
	qloader=("$qroot/lib64/ld-linux-x86-64.so.2"
		--library-path "$qroot/lib/x86_64-linux-gnu:$qroot/usr/lib/x86_64-linux-gnu")
	qemu_bin=("${qloader[@]}" "$qroot/usr/bin/qemu-system-x86_64"
		-L "$qroot/usr/share/qemu" -L "$qroot/usr/share/seabios")
	export QEMU_MODULE_DIR=$qroot/usr/lib/x86_64-linux-gnu/qemu
	# Under QEMU 10's TCG a virtiofs root hands the guest stale code:
	# virtiofsd, another process, writes file data straight into guest
	# memory, and TCG keeps the code it translated from what a page held
	# before (the guest's PID 1 and ip died on SIGSEGV, with Debian 12's
	# C virtiofsd and with Debian 13's Rust one, kernels 6.1 and 7.3).
	# 9p is served by QEMU itself, whose writes drop that code.
	fs=${GUEST_FS:-9p}
fi
case $fs in virtiofs | 9p) ;; *) die "GUEST_FS must be virtiofs or 9p, not '$fs'" ;; esac
[ "$fs" = virtiofs ] && [ ${#qemu_bin[@]} -gt 1 ] &&
	say "warning: virtiofs under a root's QEMU: under TCG the guest may run stale code"

# The kernel: Debian 12's cloud image, which has virtiofs but no 9p; for
# 9p, Debian 13's generic 7.x (scripts/kernel-fetch.sh, cached).
if [ -z "$kernel" ] && [ "$fs" = 9p ]; then
	rc=0
	kernel=$("$top/scripts/kernel-fetch.sh" 7.x) || rc=$?
	[ "$rc" -eq 0 ] || { say "no kernel with 9p (scripts/kernel-fetch.sh 7.x exit $rc)"; exit 77; }
fi
if [ -z "$kernel" ]; then
	kernel=$(ls -v /boot/vmlinuz-6.1.*-amd64 2>/dev/null | tail -n 1) || true
	[ -n "$kernel" ] || { say "no Debian 6.1 kernel in /boot (linux-image-cloud-amd64)"; exit 77; }
fi
[ -r "$kernel" ] || die "--kernel: cannot read '$kernel'"

# The release, from the bzImage's setup header (boot protocol 2.00+:
# "HdrS" at 0x202, the version string's offset - 0x200 at 0x20e).
[ "$(dd if="$kernel" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] ||
	die "--kernel: '$kernel' is not a Linux bzImage"
ver_off=$(od -An -tu2 -j526 -N2 "$kernel" | tr -d ' ')
release=$(dd if="$kernel" bs=1 skip=$((ver_off + 512)) count=256 2>/dev/null |
	tr '\0' '\n' | head -n 1 | cut -d' ' -f1)
[ -n "$release" ] || die "--kernel: no version string in '$kernel'"

# The modules' root: / (the host's /lib/modules), or DIR for an image at
# DIR/boot/vmlinuz-<release> with DIR/lib/modules/<release> beside it.
modroot=/
kdir=$(cd "$(dirname "$kernel")/.." && pwd)
if [ "$kdir" != / ] && [ -d "$kdir/lib/modules/$release" ]; then
	modroot=$kdir
	case $modroot in *[!A-Za-z0-9_./+-]*) die "'$modroot' has characters the guest's init cannot pass on" ;; esac
fi

cache=${GUEST_CACHE:-/var/cache/libsirq-guest}
mkdir -p "$cache"
run=$(mktemp -d /tmp/guest.XXXXXX)
own_out=0
if [ -z "$out" ]; then
	out=$run/out
	own_out=1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The guest mounts tmpfs on /tmp and /run: the project's tree and the
# working directory there are shared again, read-only, at their paths.
hidden=()
for d in "$top" "$PWD"; do
	case $d/ in
	/tmp/* | /run/*)
		case " ${hidden[*]-} " in *" $d "*) continue ;; esac
		case $d/ in "$top"/*) [ "$d" = "$top" ] || continue ;; esac
		# Even when OUT lies inside it (a clone under /tmp with its
		# out/): the guest mounts OUT over it afterwards.
		[ "$d" != "$out" ] || continue
		hidden+=("$d") ;;
	esac
done
for d in "$out" "$top" ${hidden[@]+"${hidden[@]}"}; do
	case $d in *[!A-Za-z0-9_./+-]*) die "'$d' has characters the guest's init cannot pass on" ;; esac
done
[ -n "$console" ] || { [ "$own_out" -eq 1 ] && console=$run/console.log || console=$out/console.log; }

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The initramfs: busybox, the modules that reach a virtiofs root, and an
# init that mounts it and hands over to scripts/guest-init.sh. Cached per
# kernel release and per version of this script.
initrd=$cache/initrd-$release-$(cksum <"$0" | cut -d' ' -f1).cpio.gz
if [ ! -s "$initrd" ]; then
	command -v busybox >/dev/null && busybox --list | grep -x insmod >/dev/null ||
		{ say "busybox (static) missing: scripts/install-deps.sh installs busybox-static"; exit 77; }
	say "building the initramfs for $release ($initrd)"
	rm -f "$cache/initrd-$release-"*
	ir=$run/initramfs
	mkdir -p "$ir"/{bin,dev,proc,sys,newroot,lib/modules}
	cp "$(command -v busybox)" "$ir/bin/busybox"
	# The modules in the order modprobe would load them; none when the
	# kernel has virtio-pci and virtiofs built in (a kernel of our own).
	mods=()
	if [ -d "$modroot/lib/modules/$release" ]; then
		while read -r f; do
			m=$(basename "$f")
			m=${m%%.ko*}
			case " ${mods[*]-} " in *" $m "*) continue ;; esac
			case $f in
			*.xz) xz -dc "$f" >"$ir/lib/modules/$m.ko" ;;
			*.zst) zstd -qdc "$f" >"$ir/lib/modules/$m.ko" ;;
			*) cp "$f" "$ir/lib/modules/$m.ko" ;;
			esac
			mods+=("$m")
		done < <(for m in virtio_pci virtiofs 9p 9pnet_virtio; do
			modprobe -d "$modroot" -S "$release" --show-depends "$m" 2>/dev/null
		done | awk '$1 == "insmod" { print $2 }')
	fi
	cat >"$ir/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
fail() { echo "guest: \$*"; echo o >/proc/sysrq-trigger; sleep 5; }
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "guest: init"
case " \$(cat /proc/cmdline) " in *" guest_probe=1 "*) reboot -f ;; esac
for m in ${mods[*]-}; do insmod /lib/modules/\$m.ko || echo "guest: insmod \$m failed"; done
# This machine's directories, over virtiofs or 9p (guest_fs=).
fs=\$(tr ' ' '\\n' </proc/cmdline | sed -n 's/^guest_fs=//p')
share() {	# TAG DIR ro|rw
	if [ "\$fs" = 9p ]; then
		o=trans=virtio,version=9p2000.L,msize=512000
		[ "\$3" = ro ] && o=\$o,ro,cache=loose
		mount -t 9p -o "\$o" "\$1" "\$2"
	else
		mount -t virtiofs -o "\$3" "\$1" "\$2"
	fi
}
share root /newroot ro || fail "cannot mount the host's root over \${fs:-virtiofs}"
r=/newroot
mount -t proc proc \$r/proc
mount -t sysfs sys \$r/sys
mount -t devtmpfs dev \$r/dev
mount -t tmpfs -o mode=1777 tmp \$r/tmp
mount -t tmpfs -o mode=755 run \$r/run
mkdir -p \$r/dev/shm \$r/dev/pts \$r/dev/hugepages
mount -t tmpfs -o mode=1777 shm \$r/dev/shm
mount -t devpts devpts \$r/dev/pts
mount -t tracefs tracefs \$r/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs \$r/sys/kernel/debug 2>/dev/null
# The writable share, at the path it has on the host (made in a tmpfs
# when that path is under /tmp or /run, which the mounts above hide).
ctl=\$(tr ' ' '\\n' </proc/cmdline | sed -n 's/^guest_ctl=//p')
mkdir -p /share
share out /share rw || fail "no 'out' share"
[ -n "\$ctl" ] && [ -f "/share/\$ctl/env" ] || fail "no control directory '\$ctl' in the share"
out=\$(sed -n 's/^GUEST_OUT=//p' "/share/\$ctl/env")
top=\$(sed -n 's/^GUEST_TOP=//p' "/share/\$ctl/env")
hidden=\$(sed -n 's/^GUEST_HIDDEN=//p' "/share/\$ctl/env")
umount /share
# Host directories the tmpfs mounts hide (a tree under /tmp), read-only;
# then the writable share, which may lie inside one of them.
i=0
for d in \$hidden; do
	mkdir -p "\$r\$d"
	share "hidden\$i" "\$r\$d" ro || fail "cannot mount \$d"
	i=\$((i + 1))
done
mkdir -p "\$r\$out" 2>/dev/null
share out "\$r\$out" rw || fail "cannot mount the share at \$out"
# The modules of a kernel extracted elsewhere (kernel-fetch.sh), at
# /lib/modules/<release> (a tmpfs hides the host's others).
mods=\$(sed -n 's/^GUEST_MODULES=//p' "\$r\$out/\$ctl/env")
if [ -n "\$mods" ]; then
	rel=\$(uname -r)
	mount -t tmpfs -o mode=755 modules \$r/lib/modules || fail "cannot mount a tmpfs on /lib/modules"
	mkdir -p \$r/lib/modules/\$rel
	mount -o bind,ro "\$r\$mods/lib/modules/\$rel" \$r/lib/modules/\$rel ||
		fail "cannot mount \$mods/lib/modules/\$rel"
fi
exec chroot /newroot /bin/bash "\$top/scripts/guest-init.sh" "\$out/\$ctl"
EOF
	chmod +x "$ir/init"
	(cd "$ir" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
fi

# What the guest runs, and where it answers: the control directory is the
# writable share's .guest/ (one per run).
ctl=$out/.guest.$$
mkdir -p "$ctl"
{
	printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
	printf '%q ' "$@"
	printf '\n'
} >"$ctl/cmd"
{
	printf 'GUEST_OUT=%s\n' "$out"
	printf 'GUEST_TOP=%s\n' "$top"
	printf 'GUEST_HIDDEN=%s\n' "${hidden[*]-}"
	printf 'GUEST_MODULES=%s\n' "$([ "$modroot" = / ] || echo "$modroot")"
	printf 'GUEST_CTL=%q\n' "$ctl"
	printf 'GUEST_BIND=%q\n' "$bind"
	printf 'GUEST_HUGEPAGES=%q\n' "$hugepages"
	printf 'GUEST_ATTEMPT=%q\n' "$attempt"
	# The guest lists where CMD's processes wait at this uptime, so that
	# a timeout says where they hung.
	if [ "$timeout_s" -ge 120 ]; then
		printf 'GUEST_DUMP_AT=%d\n' $((timeout_s - 60))
	else
		printf 'GUEST_DUMP_AT=%d\n' $((timeout_s / 2))
	fi
	bdfs=()
	nb_ports=0
	for i in "${!nics[@]}"; do
		case ${nics[$i]%%,*} in
		igb) nb_ports=$((nb_ports + 1)); bdfs+=("0000:0$nb_ports:00.0") ;;
		*) bdfs+=("0000:00:0$((3 + i)).0") ;;
		esac
	done
	printf 'GUEST_NICS=%q\n' "${bdfs[*]-}"
} >"$ctl/env"

# KVM or TCG. /dev/kvm may open and create a VM whose guest then hangs
# right after the BIOS (seen on this kind of machine), so a probe boot
# decides once, and its verdict is cached.
accel=${GUEST_ACCEL:-auto}
qver=$("${qemu_bin[@]}" --version | head -n 1 | tr -cd '[:alnum:]._')
probe=$cache/kvm-probe-$qver
if [ "$accel" = auto ]; then
	if [ ! -c /dev/kvm ] || ! { exec 9<>/dev/kvm; } 2>/dev/null; then
		accel=tcg why="no usable /dev/kvm"
	elif [ -f "$probe" ]; then
		accel=$(cut -d' ' -f1 "$probe") why="cached probe: $(cut -d' ' -f2- "$probe")"
	else
		say "probing KVM: one boot to the initramfs (verdict cached in $probe)"
		(timeout 30 "${qemu_bin[@]}" -nodefaults -display none -no-reboot \
			-machine q35 -m 512 -accel kvm -cpu host -kernel "$kernel" \
			-initrd "$initrd" -append "console=ttyS0 guest_probe=1" \
			-serial "file:$run/probe.log" </dev/null >/dev/null 2>&1 || true) 2>/dev/null
		if grep -q '^guest: init' "$run/probe.log" 2>/dev/null; then
			verdict="kvm a KVM guest reached its init"
		else
			verdict="tcg a KVM guest did not reach its init within 30 s"
		fi
		echo "$verdict" >"$probe"
		accel=${verdict%% *} why="probe: ${verdict#* }"
	fi
	exec 9>&-
fi
# One host thread per vCPU, but under a root's QEMU (10.0): there,
# multi-threaded TCG now and then left a vCPU halted with its timer's
# vector in service and the next tick pending behind it (the guest
# kernel's RCU stall; every task with a timer on that CPU asleep for
# good), once in about a hundred l2fwd-sirq runs on igb, and once failed
# an assertion (physmem.c, iotlb_to_section) while the guest made its
# VFs. One thread for both vCPUs: guest_igb took 132 s against 124.
if [ ${#qemu_bin[@]} -gt 1 ]; then
	tcg_threads=${GUEST_TCG_THREADS:-single}
else
	tcg_threads=${GUEST_TCG_THREADS:-multi}
fi
case $tcg_threads in
multi|single) ;;
*) die "GUEST_TCG_THREADS must be multi or single, not '$tcg_threads'" ;;
esac
case $accel in
kvm) accel_args=(-accel kvm -cpu host) ;;
tcg) accel_args=(-accel "tcg,thread=$tcg_threads" -cpu max) ;;
*) die "GUEST_ACCEL must be kvm, tcg or auto, not '$accel'" ;;
esac

# The shares: the host's root (the guest mounts it read-only), OUT, and
# the hidden trees; through virtiofsd (one a share, PCI slots 0x10, 0x11,
# 0x18...) or QEMU's own 9p server.
qemu=("${qemu_bin[@]}" -nodefaults -display none -no-reboot
	-machine q35,kernel-irqchip=split -m "$mem" -smp "$smp"
	-object memory-backend-memfd,id=mem,size="${mem}M",share=on -numa node,memdev=mem
	-device intel-iommu,intremap=on,caching-mode=on
	-kernel "$kernel" -initrd "$initrd"
	-serial "file:$console"
	-chardev "file,id=cmdout,path=$run/cmd.out" -serial chardev:cmdout)
tags=()
share() {	# TAG DIR ro|rw SLOT
	tags+=("$1")
	if [ "$fs" = 9p ]; then
		local o="local,id=fs$1,path=$2,security_model=passthrough,multidevs=remap"
		[ "$3" = rw ] || o+=",readonly=on"
		qemu+=(-fsdev "$o"
			-device "virtio-9p-pci,fsdev=fs$1,mount_tag=$1,bus=pcie.0,addr=$4")
		return
	fi
	/usr/lib/qemu/virtiofsd --socket-path="$run/$1.sock" -o source="$2" \
		-o cache=auto -o sandbox=chroot >"$run/$1.log" 2>&1 &
	pids+=($!)
	qemu+=(-chardev "socket,id=fs$1,path=$run/$1.sock"
		-device "vhost-user-fs-pci,chardev=fs$1,tag=$1,bus=pcie.0,addr=$4")
}
share root / ro 0x10
share out "$out" rw 0x11
for i in "${!hidden[@]}"; do share "hidden$i" "${hidden[$i]}" ro "0x$((18 + i))"; done
if [ "$fs" = virtiofs ]; then
	for _ in $(seq 100); do
		ready=1
		for t in "${tags[@]}"; do [ -S "$run/$t.sock" ] || ready=0; done
		[ "$ready" = 1 ] && break
		sleep 0.05
	done
fi
[ -n "$monitor" ] && qemu+=(-monitor "unix:$monitor,server=on,wait=off")
for t in "${traces[@]}"; do qemu+=(-trace "enable=$t"); done
[ ${#traces[@]} -eq 0 ] || qemu+=(-D "$out/qemu-trace.log")

for i in "${!nics[@]}"; do
	spec=${nics[$i]}
	model=${spec%%,*}
	rest=${spec#"$model"}
	rest=${rest#,}
	backend="" queues=1
	IFS=, read -r -a kv <<<"$rest"
	for o in "${kv[@]}"; do
		case $o in
		udp=*:*)
			a=${o#udp=}
			backend="socket,udp=127.0.0.1:${a%%:*},localaddr=127.0.0.1:${a#*:}" ;;
		tap=*) backend="tap,ifname=${o#tap=},script=no,downscript=no,vhost=off" ;;
		queues=*) queues=${o#queues=} ;;
		*) die "--nic '$spec': unknown option '$o'" ;;
		esac
	done
	[ -n "$backend" ] || die "--nic '$spec': needs udp=A:B or tap=NAME"
	case $queues in '' | *[!0-9]* | 0) die "--nic '$spec': queues must be a number >= 1, not '$queues'" ;; esac
	if [ "$queues" -gt 1 ]; then
		case $backend in
		tap,*) backend+=",queues=$queues" ;;
		*) die "--nic '$spec': several queues need a tap backend" ;;
		esac
	fi
	dev_addr="bus=pcie.0,addr=0x$((3 + i))"
	case $model in
	e1000e) dev="e1000e,netdev=nic$i,$dev_addr" ;;
	# Modern only and through the vIOMMU: without iommu_platform the
	# device's DMA bypasses the IOMMU and DPDK's port start hangs.
	virtio)
		dev="virtio-net-pci,netdev=nic$i,$dev_addr,disable-legacy=on,iommu_platform=on,ats=on"
		# RSS in QEMU itself (eBPF steering needs what a guest lab
		# should not ask for): the guest's PMD spreads flows by hash.
		[ "$queues" -gt 1 ] && dev+=",mq=on,rss=on,vectors=$((2 * queues + 2))"
		;;
	vmxnet3) dev="vmxnet3,netdev=nic$i,$dev_addr" ;;
	# The 82576: 16 queue pairs, RSS computed by QEMU whatever the
	# backend, an MSI-X vector per queue.
	igb)
		qemu+=(-device "pcie-root-port,id=rp$i,bus=pcie.0,addr=0x$((3 + i)),chassis=$((1 + i))")
		dev="igb,netdev=nic$i,bus=rp$i,addr=0x0" ;;
	*) die "--nic '$spec': unknown model '$model' (e1000e, virtio, vmxnet3, igb)" ;;
	esac
	qemu+=(-netdev "$backend,id=nic$i" -device "$dev,mac=52:54:00:12:34:$(printf %02x $((0x56 + i)))")
done

# init_on_alloc=0: Debian zeroes every page it allocates, which under TCG
# takes seconds for the hugepages; hugepages=N reserves them at boot.
cmdline="console=ttyS0 intel_iommu=on iommu=pt panic=-1 quiet init_on_alloc=0"
cmdline+=" hugepages=$hugepages guest_ctl=${ctl##*/} guest_fs=$fs $append"

[ "$accel" = tcg ] && why="${why:+$why, }$tcg_threads-threaded"
say "kernel $release, $accel${why:+ ($why)}, $smp CPUs, $mem MB, ${#nics[@]} NICs"

: >"$run/cmd.out"
# Emptied here, not by QEMU's open: the watcher below must not read a
# former guest's console.
: >"$console"
timeout --foreground -k 5 "$timeout_s" "${qemu[@]}" "${accel_args[@]}" -append "$cmdline" \
	</dev/null >"$run/qemu.log" 2>&1 &
qpid=$!
pids+=("$qpid")
# CMD's output, as the guest writes it to its second serial port.
tail -n +1 -F --pid="$qpid" "$run/cmd.out" 2>/dev/null &
tpid=$!
# The guest kernel's RCU stall report: a vCPU stopped (see --wedged-retries).
wedged_rx="rcu: INFO: [^ ]+ detected stalls on CPUs|rcu: [^ ]+ kthread timer wakeup didn't happen"
if [ "$wedged_retries" -ge 0 ]; then
	# grep's status, not the pipeline's: tail exits on a closed pipe.
	# No kill once CMD has answered (the guest is powering off).
	(grep -q -m 1 -E "$wedged_rx" < <(tail -n +1 -F --pid="$qpid" "$console" 2>/dev/null) &&
		[ ! -f "$ctl/rc" ] && : >"$run/wedged" && kill -TERM "$qpid") >/dev/null 2>&1 &
	pids+=($!)
fi
qrc=0
wait "$qpid" || qrc=$?
wait "$tpid" 2>/dev/null || true

console_tail() {
	say "the guest's console ($console), its last lines:"
	tail -n 30 "$console" >&2 || true
}
if [ -f "$ctl/rc" ]; then
	rc=$(cat "$ctl/rc")
elif [ -f "$run/wedged" ]; then
	say "guest $attempt wedged: its kernel reported an RCU stall (a vCPU that stopped taking interrupts, or a CPU stuck in the kernel):"
	grep -E -A 12 "$wedged_rx" "$console" | head -n 40 >&2 || true
	case $console in
	"$run"/*) ;;
	*)
		mv "$console" "${console%.log}.wedged-$attempt.log"
		say "its console: ${console%.log}.wedged-$attempt.log" ;;
	esac
	if [ "$attempt" -le "$wedged_retries" ]; then
		say "running the command again in a new guest ($((attempt + 1)) of $((wedged_retries + 1)))"
		rm -rf "$ctl"
		cleanup
		trap - EXIT
		GUEST_ATTEMPT=$((attempt + 1)) exec "$0" "${args[@]}"
	fi
	say "the guest wedged $attempt times: giving up"
	rc=75
elif [ "$qrc" -eq 124 ]; then
	say "timed out after $timeout_s s"
	console_tail
	rc=124
else
	say "the guest did not run the command (qemu exit $qrc)"
	console_tail
	tail -n 5 "$run/qemu.log" >&2 || true
	rc=125
fi
rm -rf "$ctl"
exit "$rc"
