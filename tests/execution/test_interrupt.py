"""Ctrl-C during an audit on a local Dask cluster: exit 130, one line on stderr, no process left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

psutil = pytest.importorskip("psutil")
pytest.importorskip("distributed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WAIT = 120.0


def wait_for_workers(proc: subprocess.Popen, count: int) -> None:
    """Wait until `proc` has `count` Dask worker processes that have been running a second."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        spawned = [c for c in psutil.Process(proc.pid).children() if "spawn_main" in " ".join(c.cmdline())]
        if len(spawned) >= count and all(time.time() - c.create_time() > 5.0 for c in spawned):
            return
        time.sleep(0.5)
    raise AssertionError("the local cluster did not start")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
def test_ctrl_c_cancels_and_closes_the_cluster():
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [sys.executable, "-m", "dpaudit.audit.cli", "audit", "laplace", "--trials", "1000000000", "--workers", "2"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for_workers(proc, 2)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
        _, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert err == "dpaudit: interrupted.\n"
    assert group_ends(proc.pid), "worker processes outlived the CLI"


def group_ends(pgid: int, within: float = 10.0) -> bool:
    """Return True once no process of group `pgid` is left, False if some still are after `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False
