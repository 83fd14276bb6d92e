#!/usr/bin/env python3
"""What the PMDs of QEMU's PCI NIC models answer to libsirq's calls.

One guest with an e1000e (82574L, net_e1000_em), a virtio-net-pci
(net_virtio) and a vmxnet3 (net_vmxnet3), all bound to vfio-pci; this
machine sends each a frame every 20 ms while tests/virtio/pmd_caps.c
asks every port what architecture.md §12 tabulates: descriptor status,
queue count, tx_done_cleanup, monitor condition, Rx interrupt fd, enable
and whether it fired, how long a sent mbuf stays held. The answers must
be the table's: change both together. Exit 0, 1, or 77 (skip).
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import nicpeer  # noqa: E402
from test_guest import free_udp_ports, log  # noqa: E402

MODELS = ["e1000e", "virtio", "vmxnet3"]
ENOTSUP = -95
SUPPORTED = "supported"     # >= 0
# driver: {call: answer}; rx_intr_fired etc. are 1 seen, 0 not, -1 not tried.
WANT = {
    "net_e1000_em": {
        "rx_queue_count": SUPPORTED, "rx_descriptor_status": SUPPORTED,
        "tx_descriptor_status": SUPPORTED, "tx_done_cleanup": ENOTSUP,
        "monitor": ENOTSUP, "rx_intr_fd": 0, "rx_intr_enable": 0,
        # MSI-X: the PMD enables RXT0 in IMS but maps no Rx cause in IVAR.
        "rx_intr_fired": 0, "rx_desc_done_seen": 1, "tx_held_ms": -1,
    },
    "net_virtio": {
        "rx_queue_count": ENOTSUP, "rx_descriptor_status": ENOTSUP,
        "tx_descriptor_status": ENOTSUP, "tx_done_cleanup": ENOTSUP,
        "monitor": 0, "rx_intr_fd": 0, "rx_intr_enable": 0,
        "rx_intr_fired": 1, "monitor_fired": 1, "tx_held_ms": -1,
    },
    "net_vmxnet3": {
        "rx_queue_count": SUPPORTED, "rx_descriptor_status": ENOTSUP,
        "tx_descriptor_status": ENOTSUP, "tx_done_cleanup": ENOTSUP,
        "monitor": ENOTSUP, "rx_intr_fd": 0, "rx_intr_enable": 0,
        "rx_intr_fired": 1, "rx_queue_count_seen": 1, "tx_held_ms": -1,
    },
}


def feed(ports, macs, stop):
    seq = 0
    while not stop.is_set():
        for i, p in enumerate(ports):
            seq += 1
            p.send(nicpeer.build_frame(macs[i], nicpeer.Peer.src_mac(i), i, seq,
                                       nicpeer.DATA, 128, seq % 64, time.monotonic_ns()))
        time.sleep(0.02)


def main():
    if os.geteuid() != 0:
        log("skip: the guest lab runs as root")
        return 77
    caps_bin = os.environ.get("VIRTIO_PMD_CAPS",
                              os.path.join(TOP, "build", "tests", "virtio", "virtio_pmd_caps"))
    out = tempfile.mkdtemp(prefix="guest-caps-")
    udp = free_udp_ports(2 * len(MODELS))
    specs = ["udp=%d:%d" % (udp[2 * i], udp[2 * i + 1]) for i in range(len(MODELS))]
    ports = [nicpeer.Port(i, s) for i, s in enumerate(specs)]
    macs = [nicpeer.mac_bytes("52:54:00:12:34:%02x" % (0x56 + i)) for i in range(len(MODELS))]
    stop = threading.Event()
    feeder = threading.Thread(target=feed, args=(ports, macs, stop), daemon=True)
    feeder.start()
    bdfs = " ".join("-a 0000:00:%02x.0" % (3 + i) for i in range(len(MODELS)))
    # One wedged guest (scripts/guest.sh --wedged-retries) is run again.
    cmd = [os.path.join(TOP, "scripts", "guest.sh"), "--out", out, "--wedged-retries", "1"]
    for m, s in zip(MODELS, specs):
        cmd += ["--nic", "%s,%s" % (m, s)]
    cmd += ["--", "bash", "-c", "%s -l 0 %s --file-prefix caps --log-level lib.eal:notice "
            "-- --wait-ms 3000 > %s/caps.json" % (caps_bin, bdfs, out)]
    log(" ".join(cmd))
    rc = subprocess.run(cmd).returncode
    stop.set()
    feeder.join()
    for p in ports:
        p.close()
    if rc == 77:
        return 77
    fails = []
    try:
        lines = [json.loads(line) for line in open(os.path.join(out, "caps.json")) if line.strip()]
    except (OSError, ValueError) as e:
        lines = []
        fails.append("no answers from pmd_caps (exit %d): %s" % (rc, e))
    seen = set()
    for c in lines:
        drv = c["driver"]
        seen.add(drv)
        log(json.dumps(c))
        for call, want in WANT.get(drv, {}).items():
            got = c.get(call)
            ok = got is not None and (got >= 0 if want == SUPPORTED else got == want)
            if not ok:
                fails.append("%s: %s is %s, the table says %s" % (drv, call, got, want))
    for drv in WANT:
        if drv not in seen:
            fails.append("%s: no answer" % drv)
    subprocess.run(["rm", "-rf", out])
    for f in fails:
        log("FAIL " + f)
    log("%d PMDs, %d disagreements with architecture.md §12" % (len(seen), len(fails)))
    return 1 if fails or rc != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
