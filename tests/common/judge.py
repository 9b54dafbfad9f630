# SPDX-License-Identifier: GPL-2.0
"""The result lines of the Python judges (tests/operator/check.py,
tests/run/check_pfmon.py), as tests/common/result.c prints them for the C
programs and rig_check (tests/rig/protocol.sh) for the shell scripts:

    PASS: [WHAT: ]name
    FAIL: [WHAT: ]name (why)
    LABEL: N failed             the judge's last line (verdict)
"""


class Judge:
    """Counts the checks it prints; verdict() gives the exit status."""

    def __init__(self, what=None):
        self.prefix = f"{what}: " if what else ""
        self.failed = 0

    def check(self, ok, name, why=""):
        """PASS if ok, else FAIL with why; returns ok"""
        if ok:
            print(f"PASS: {self.prefix}{name}")
        else:
            self.failed += 1
            print(f"FAIL: {self.prefix}{name} ({why})")
        return ok

    def verdict(self, label):
        """prints "LABEL: N failed"; 1 if a check failed, else 0"""
        print(f"{label}: {self.failed} failed")
        return 1 if self.failed else 0
