#!/usr/bin/env python3
"""The far end of a guest's NICs, on this machine.

Sends well-formed Ethernet/IPv4/UDP frames into the guest's ports and
takes back what the guest transmits, through the NICs' backends:
QEMU's UDP socket netdev (one frame per datagram) or a tap (AF_PACKET on
the tap interface, which has no address). Checks what l2fwd does: a frame
sent into port P leaves the port paired with it, byte for byte, but for
the MAC addresses l2fwd rewrites (02:00:00:00:00:<out port>, the out
port's MAC) unless told they stay.

Used by tests/guest/test_guest.py; as a program it warms up, sends, and
prints the JSON books:

    nicpeer.py --port udp=40000:40001 --port udp=40002:40003 --pairs 0:1,1:0
"""

import argparse
import json
import os
import random
import socket
import struct
import sys
import threading
import time

MAGIC = b"SIRQ"
# Frame kinds: warm-up frames find the path, data frames are the books,
# link-down frames are sent while the out port's cable is pulled (l2fwd
# drops them: they are not expected back).
WARMUP, DATA, LINKDOWN = 1, 2, 3
KINDS = {WARMUP: "warmup", DATA: "data", LINKDOWN: "linkdown"}
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def ip_checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def build_frame(dst, src, port, seq, kind, size, flow, stamp_ns):
    """An Ethernet frame of SIZE bytes (no FCS): IPv4, UDP, our header.

    FLOW picks the addresses and UDP ports, so RSS spreads flows over
    queues; the payload says port, sequence, kind and send time."""
    hdr = MAGIC + struct.pack("!BBHIQ", kind, port, flow, seq, stamp_ns)
    udp_len = size - 14 - 20
    payload = hdr + bytes((seq * 7 + i) & 0xFF for i in range(udp_len - 8 - len(hdr)))
    sip = bytes([10, 0, port, 1 + flow % 250])
    dip = bytes([10, 1, port, 1 + (flow // 250) % 250])
    sport, dport = 1024 + flow, 4791
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, seq & 0xFFFF, 0,
                     64, 17, 0, sip, dip)
    ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", sport, dport, udp_len, 0)
    pseudo = sip + dip + struct.pack("!BBH", 0, 17, udp_len)
    csum = ip_checksum(pseudo + udp + payload) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", csum)
    return dst + src + b"\x08\x00" + ip + udp + payload


def parse_frame(f):
    """(kind, port, flow, seq, stamp_ns) of one of our frames, else None."""
    off = 14 + 20 + 8
    if len(f) < off + 20 or f[12:14] != b"\x08\x00" or f[off:off + 4] != MAGIC:
        return None
    return struct.unpack("!BBHIQ", f[off + 4:off + 20])


class Port:
    """One guest NIC's backend, seen from this machine."""

    def __init__(self, index, spec):
        self.index = index
        self.spec = spec
        kind, _, arg = spec.partition("=")
        if kind == "udp":
            a, _, b = arg.partition(":")
            self.rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            self.rx.bind(("127.0.0.1", int(a)))
            self.tx = self.rx
            self.dest = ("127.0.0.1", int(b))
            self.send = lambda f: self.tx.sendto(f, self.dest)
        elif kind == "tap":
            self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                    socket.htons(ETH_P_ALL))
            self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            self.rx.bind((arg, 0))
            self.tx = self.rx
            self.send = lambda f: self.tx.send(f)
        else:
            raise ValueError("--port %r: udp=A:B or tap=NAME" % spec)
        self.rx.settimeout(0.2)

    def close(self):
        self.rx.close()


class Peer:
    """Sends into the guest's ports and keeps the books of what returns."""

    def __init__(self, specs, pairs, guest_macs, mac_updating=True, seed=1,
                 burst_max=10):
        self.ports = [Port(i, s) for i, s in enumerate(specs)]
        self.pairs = pairs                  # in port -> out port
        self.guest_macs = guest_macs        # the guest NICs' MACs
        self.mac_updating = mac_updating
        self.burst_max = burst_max
        self.rng = random.Random(seed)
        n = len(self.ports)
        self.sent = {}                      # (in port, seq) -> (frame, kind, burst)
        self.sent_count = [dict.fromkeys(KINDS, 0) for _ in range(n)]
        self.got = [dict.fromkeys(KINDS, 0) for _ in range(n)]
        self.into = [0] * n                 # every frame into the guest's NIC
        self.out = [0] * n                  # every frame out of it
        self.foreign = [0] * n
        self.seen = {}                      # (in port, seq) -> receive time
        self.dups = 0
        self.corrupt = []
        self.latency_ns = []
        self.latency_in = [[] for _ in range(n)]   # ... by the port it entered
        self.burst_start = []               # monotonic ns per data burst
        self.seq = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.last_rx = time.monotonic()
        self.threads = [threading.Thread(target=self._rx, args=(p,), daemon=True)
                        for p in self.ports]
        for t in self.threads:
            t.start()

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join()
        for p in self.ports:
            p.close()

    def expected(self, inp, frame):
        out = self.pairs[inp]
        if not self.mac_updating:
            return out, frame
        return out, bytes([2, 0, 0, 0, 0, out]) + self.guest_macs[out] + frame[12:]

    def _rx(self, port):
        while not self.stop.is_set():
            try:
                f, addr = port.rx.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            now = time.monotonic_ns()
            with self.lock:
                # A tap shows what this machine's kernel sends into it too:
                # that enters the guest's NIC as well.
                if port.spec.startswith("tap=") and addr[2] == PACKET_OUTGOING:
                    self.into[port.index] += 1
                    continue
                self.out[port.index] += 1
                self.last_rx = time.monotonic()
                h = parse_frame(f)
                if h is None:
                    self.foreign[port.index] += 1
                    continue
                kind, inp, _flow, seq, stamp = h
                self.got[port.index][kind] = self.got[port.index].get(kind, 0) + 1
                key = (inp, seq)
                if key in self.seen:
                    self.dups += 1
                    continue
                self.seen[key] = now
                sent = self.sent.get(key)
                if sent is None:
                    self.corrupt.append({"port": port.index, "seq": seq,
                                         "why": "never sent"})
                    continue
                out, want = self.expected(inp, sent[0])
                if port.index != out:
                    self.corrupt.append({"port": port.index, "seq": seq,
                                         "why": "left port %d, not %d" % (port.index, out)})
                elif f != want:
                    self.corrupt.append({"port": port.index, "seq": seq,
                                         "why": "bytes differ (len %d, want %d)" % (len(f), len(want))})
                if kind == DATA:
                    self.latency_ns.append(now - stamp)
                    self.latency_in[inp].append(now - stamp)

    @staticmethod
    def src_mac(port):
        return bytes([0x02, 0x51, 0x52, 0x00, 0x00, port])

    def send_one(self, inp, kind, size=None, flow=None, burst=-1):
        with self.lock:
            self.seq += 1
            seq = self.seq
        size = size or self.rng.randrange(60, 1515)
        flow = self.rng.randrange(0, 4096) if flow is None else flow
        f = build_frame(self.guest_macs[inp], self.src_mac(inp), inp, seq, kind,
                        size, flow, time.monotonic_ns())
        with self.lock:
            self.sent[(inp, seq)] = (f, kind, burst)
            self.sent_count[inp][kind] += 1
            self.into[inp] += 1
        self.ports[inp].send(f)
        return seq

    def warm_up(self, timeout_s=120.0, every_s=0.2):
        """A frame into each port until one comes back through its pair."""
        deadline = time.monotonic() + timeout_s
        for inp in self.pairs:
            while True:
                seq = self.send_one(inp, WARMUP, size=128)
                t_end = time.monotonic() + every_s
                while time.monotonic() < t_end:
                    with self.lock:
                        if (inp, seq) in self.seen:
                            break
                    time.sleep(0.005)
                with self.lock:
                    if (inp, seq) in self.seen:
                        break
                if time.monotonic() > deadline:
                    return False
        return True

    def send_bursts(self, bursts, burst, gap_s, ports=None, flows=None, kind=DATA):
        """BURSTS bursts of 1..BURST frames into each port, GAP_S apart: a
        frame still in a ring when its burst is over waits for the next."""
        ports = list(self.pairs) if ports is None else ports
        for _ in range(bursts):
            b = -1
            if kind == DATA:
                with self.lock:
                    b = len(self.burst_start)
                    self.burst_start.append(time.monotonic_ns())
            for _ in range(self.rng.randint(1, burst)):
                for inp in ports:
                    flow = None if flows is None else self.rng.randrange(0, flows)
                    self.send_one(inp, kind, flow=flow, burst=b)
            time.sleep(gap_s)

    def _missing_data(self):
        return sum(1 for k, v in self.sent.items() if v[1] == DATA and k not in self.seen)

    def wait_quiet(self, quiet_s, max_s):
        """Until every data frame came back, or QUIET_S without a frame."""
        end = time.monotonic() + max_s
        while time.monotonic() < end:
            with self.lock:
                missing = self._missing_data()
                idle = time.monotonic() - self.last_rx
            if missing == 0 or idle > quiet_s:
                return missing
            time.sleep(0.05)
        return missing

    def books(self):
        with self.lock:
            missing = sorted(k for k, v in self.sent.items()
                             if k not in self.seen and v[1] != LINKDOWN)
            late = []
            for k, (_f, kind, b) in sorted(self.sent.items()):
                if kind == DATA and k in self.seen and b + 1 < len(self.burst_start) \
                        and self.seen[k] > self.burst_start[b + 1]:
                    late.append({"port": k[0], "seq": k[1], "burst": b,
                                 "after_next_ms": (self.seen[k] - self.burst_start[b + 1]) / 1e6})
            lat = sorted(self.latency_ns)

            def pct(q, lat=lat):
                return lat[min(len(lat) - 1, int(q * len(lat)))] / 1e3 if lat else None

            def lat_in(i):
                li = sorted(self.latency_in[i])
                return {"p50": pct(0.5, li), "p99": pct(0.99, li)}
            return {
                "ports": [{
                    "port": p.index, "backend": p.spec,
                    "into_guest": self.into[p.index],
                    "out_of_guest": self.out[p.index],
                    "sent": {KINDS[k]: v for k, v in self.sent_count[p.index].items()},
                    "got": {KINDS[k]: v for k, v in self.got[p.index].items()},
                    "foreign": self.foreign[p.index],
                    "latency_us": lat_in(p.index),
                } for p in self.ports],
                "bursts": len(self.burst_start),
                "missing": [{"port": k[0], "seq": k[1], "kind": KINDS[self.sent[k][1]]}
                            for k in missing],
                "late": late,
                "duplicates": self.dups,
                "corrupt": self.corrupt,
                "latency_us": {"p50": pct(0.5), "p99": pct(0.99),
                               "max": lat[-1] / 1e3 if lat else None},
            }


def parse_pairs(s, n):
    if not s:
        return {i: i ^ 1 for i in range(n)}
    pairs = {}
    for item in s.split(","):
        a, _, b = item.partition(":")
        pairs[int(a)] = int(b)
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", action="append", required=True,
                    help="udp=A:B (receive on 127.0.0.1:A, send to :B) or tap=NAME")
    ap.add_argument("--guest-mac", action="append", default=[],
                    help="the guest NIC's MAC, per port (default 52:54:00:12:34:5<6+i>)")
    ap.add_argument("--pairs", default="", help="in:out,... (default 0:1,1:0,...)")
    ap.add_argument("--no-mac-updating", action="store_true")
    ap.add_argument("--bursts", type=int, default=20)
    ap.add_argument("--burst", type=int, default=10, help="largest burst per port")
    ap.add_argument("--gap-ms", type=float, default=20)
    ap.add_argument("--flows", type=int, default=None)
    ap.add_argument("--quiet-s", type=float, default=3)
    a = ap.parse_args()
    macs = [mac_bytes(m) for m in a.guest_mac] or \
        [mac_bytes("52:54:00:12:34:%02x" % (0x56 + i)) for i in range(len(a.port))]
    peer = Peer(a.port, parse_pairs(a.pairs, len(a.port)), macs,
                mac_updating=not a.no_mac_updating, burst_max=a.burst)
    try:
        if not peer.warm_up():
            print("nicpeer: no frame came back", file=sys.stderr)
            return 1
        peer.send_bursts(a.bursts, a.burst, a.gap_ms / 1e3, flows=a.flows)
        peer.wait_quiet(a.quiet_s, 60)
        json.dump(peer.books(), sys.stdout, indent=1)
        print()
    finally:
        peer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
