"""Memory stays flat as trials grow: peak RSS of a 10⁷-trial Laplace audit is close to a 10⁵ one's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

GIB = 2**30
GROWTH = 96 * 2**20  # a few chunks and score temporaries; holding every output at 10⁷ alone takes 153 MiB

SCRIPT = """
import json, sys
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.mechanisms.registry import get_mechanism
mech = get_mechanism("laplace")
peaks = []
for trials in (100_000, 10_000_000):
    audit_mechanism(mech, trials=trials, seed=0)
    # VmHWM starts afresh at exec; ru_maxrss would carry over the peak of the pytest process that started this one
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    peaks.append(int(status.split()[0]) * 1024)
print(json.dumps(peaks))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads the peak from /proc/self/status (Linux)")
def test_peak_memory_is_flat_in_trials():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, check=True, cwd=root)
    small, large = json.loads(done.stdout.strip().splitlines()[-1])
    assert large < GIB
    assert large - small < GROWTH
