# SPDX-License-Identifier: BSD-3-Clause
"""What the bench scripts' unit tests share: bench/ on the import path,
and check(), which prints each assertion and keeps the failed ones.

    from checks import check, failures, exit_code
"""
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "bench"))

failures = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def exit_code():
    """Print the count of failures; 1 if any, else 0."""
    print("%d failed" % len(failures))
    return 1 if failures else 0
