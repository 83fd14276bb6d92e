#!/usr/bin/env python3
"""A deadline NET_RX thread and the kernel's root-domain rule, end to end.

l2fwd-sirq on lcore 1 (two net_null ports, irq mode, pushdown) with
--softirq-thread-sched net_rx=deadline:250/500, while the kernel's
real-time bandwidth control is on (kernel.sched_rt_runtime_us 950000, set
by the test and restored):

1. CPU 1 an ordinary CPU: the reservation is refused. l2fwd-sirq exits 1
   and names the rule (EPERM, the root domain, the exclusive cpuset).
2. After scripts/deadline-cpuset.sh up 1: it starts, its sirq-net_rx/1
   thread is SCHED_DEADLINE with 250 us / 500 us (chrt -p TID),
   it forwards, and exits 0.
3. After scripts/deadline-cpuset.sh down: refused again, as in 1.

Exit 0 on success, 1 on failure, 77 (skip) when the test cannot run: not
root, a single CPU, no cpuset controller, another exclusive cpuset in the
way (the script's reason is printed). Not parallel: while CPU 1 is a root
domain of its own, no task is balanced onto or off it.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
CPUSET = os.path.join(TOP, "scripts", "deadline-cpuset.sh")
L2FWD = os.environ.get("L2FWD_SIRQ", os.path.join(TOP, "build", "apps", "l2fwd-sirq", "l2fwd-sirq"))
RT_RUNTIME = "/proc/sys/kernel/sched_rt_runtime_us"
SKIP = 77
CLASSES = "net_rx=deadline:250/500"


def log(msg):
    print("test_deadline_cpuset: " + msg, flush=True)


def fail(msg):
    log("FAIL: " + msg)
    sys.exit(1)


def l2fwd(tag, seconds, report=None):
    argv = [L2FWD, "-l", "1", "--no-pci", "--no-huge", "-m", "256",
            "--file-prefix=dlcs-%d-%s" % (os.getpid(), tag),
            "--vdev=net_null0", "--vdev=net_null1", "--",
            "--mode", "irq", "--policy", "pushdown",
            "--softirq-thread-sched", CLASSES, "--duration", str(seconds)]
    if report:
        argv += ["--report", report]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def expect_refused(tag):
    p = l2fwd(tag, 1)
    out, _ = p.communicate(timeout=60)
    if p.returncode != 1:
        fail("%s: exit %s, not 1; output:\n%s" % (tag, p.returncode, out))
    for words in ("sirq-net_rx/1 not started", "SCHED_DEADLINE reservation refused",
                  "Operation not permitted", "root domain", "exclusive cpuset"):
        if words not in out:
            fail("%s: the refusal does not say %r; output:\n%s" % (tag, words, out))
    log("%s: refused, exit 1, naming the rule" % tag)


def thread_attrs(pid, comm):
    """chrt -p's policy line and parameters of the thread named comm."""
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() != comm:
                    continue
        except OSError:
            continue
        out = subprocess.run(["chrt", "-p", tid], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True).stdout
        policy = params = None
        for line in out.splitlines():
            if "policy:" in line:
                policy = line.split(":", 1)[1].strip()
            if "parameters:" in line:
                params = line.split(":", 1)[1].strip()
        return policy, params
    return None


def expect_started(tmp):
    report = os.path.join(tmp, "report.json")
    p = l2fwd("up", 3, report)
    attrs = None
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline and p.poll() is None:
        attrs = thread_attrs(p.pid, "sirq-net_rx/1")
        if attrs is not None:
            break
        time.sleep(0.1)
    out, _ = p.communicate(timeout=60)
    if p.returncode != 0:
        fail("up: exit %s, not 0; output:\n%s" % (p.returncode, out))
    if attrs is None:
        fail("up: no sirq-net_rx/1 thread seen while it ran; output:\n%s" % out)
    if attrs != ("SCHED_DEADLINE", "250000/500000/500000"):
        fail("up: sirq-net_rx/1 has policy %s, runtime/deadline/period %s; "
             "wanted SCHED_DEADLINE, 250000/500000/500000 (ns)" % attrs)
    with open(report) as f:
        r = json.load(f)
    rx = r["lcores"][0]["rx_packets"]
    if rx <= 0:
        fail("up: nothing forwarded (rx_packets %d)" % rx)
    log("up: started, sirq-net_rx/1 SCHED_DEADLINE 250/500 us, %d packets, exit 0" % rx)


def main():
    if os.geteuid() != 0:
        log("skip: needs root (cgroups, the sysctl, SCHED_DEADLINE)")
        return SKIP
    if os.cpu_count() < 2 or not os.path.isdir("/sys/devices/system/cpu/cpu1"):
        log("skip: needs CPU 1 and another")
        return SKIP
    with open(RT_RUNTIME) as f:
        saved = f.read().strip()
    st = subprocess.run([CPUSET, "status"], stdout=subprocess.PIPE, text=True)
    if "none made" not in st.stdout:
        log("skip: a root domain is already made here:\n" + st.stdout)
        return SKIP
    try:
        with open(RT_RUNTIME, "w") as f:
            f.write("950000")
        expect_refused("before")
        up = subprocess.run([CPUSET, "up", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
        print(up.stdout, end="")
        if up.returncode == SKIP:
            log("skip: " + up.stdout.strip())
            return SKIP
        if up.returncode != 0:
            fail("deadline-cpuset.sh up 1 exited %d" % up.returncode)
        with tempfile.TemporaryDirectory() as tmp:
            expect_started(tmp)
        down = subprocess.run([CPUSET, "down"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        print(down.stdout, end="")
        if down.returncode != 0:
            fail("deadline-cpuset.sh down exited %d" % down.returncode)
        expect_refused("after")
    finally:
        subprocess.run([CPUSET, "down"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(RT_RUNTIME, "w") as f:
            f.write(saved)
    return 0


if __name__ == "__main__":
    sys.exit(main())
