"""Killing a multi-run DP-SGD audit half-way (SIGINT or SIGKILL) and resuming gives the uninterrupted result."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dpaudit.audit.cli import main

pytest.importorskip("torch")

RUNS = 150
ARGS = ["dpsgd", "--sample-rate", "1", "--steps", "5", "--noise-multiplier", "5", "--runs", str(RUNS), "--seed", "3"]


def _json(argv, capsys):
    status = main(argv + ["--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    out.pop("seconds")
    return status, out


def _default_interrupts() -> None:
    """Give the child the default SIGINT disposition, as a terminal would.

    A test run started in the background (`make test &`, nohup) ignores
    SIGINT, and an ignored signal stays ignored across exec.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(out: Path, sig: int, after: int) -> subprocess.CompletedProcess:
    """Start the audit in a child process, send `sig` once `after` runs are saved, and wait for it."""
    child = subprocess.Popen([sys.executable, "-m", "dpaudit.audit.cli", *ARGS, "--store", str(out), "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=_default_interrupts)
    runs, deadline = out / "runs.jsonl", time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if runs.exists() and runs.read_text().count("\n") >= after:
            child.send_signal(sig)
            break
        time.sleep(0.05)
    stdout, stderr = child.communicate(timeout=120)
    return subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)


@pytest.mark.parametrize("sig", [signal.SIGINT, pytest.param(signal.SIGKILL, marks=pytest.mark.slow)])
def test_resume_after_an_interruption_gives_the_uninterrupted_json(tmp_path, capsys, sig):
    expected = _json(ARGS + ["--store", str(tmp_path / "whole")], capsys)
    stopped = _interrupt(tmp_path / "cut", sig, after=20)
    saved = (tmp_path / "cut" / "runs.jsonl").read_text().count("\n")
    assert 20 <= saved < RUNS, "the child finished before it could be interrupted"
    if sig == signal.SIGINT:
        assert stopped.returncode == 130 and "--resume" in stopped.stderr and "Traceback" not in stopped.stderr
    assert _json(ARGS + ["--store", str(tmp_path / "cut"), "--resume"], capsys) == expected
    records = [json.loads(line) for line in (tmp_path / "cut" / "runs.jsonl").read_text().splitlines()]
    assert sorted(r["run"] for r in records) == list(range(RUNS))


def test_a_line_cut_by_a_kill_is_dropped_and_its_run_replayed(tmp_path, capsys):
    args = ARGS[:-4] + ["--runs", "20", "--seed", "4", "--store", str(tmp_path / "r")]
    expected = _json(args[:-1] + [str(tmp_path / "whole")], capsys)
    runs = tmp_path / "r" / "runs.jsonl"
    main(args + ["--json", "--quiet"])
    capsys.readouterr()
    lines = runs.read_text().splitlines(keepends=True)
    runs.write_text("".join(lines[:7]) + lines[7][:9])
    assert _json(args + ["--resume"], capsys) == expected


@pytest.mark.parametrize("extra, message", [
    ([], "already holds runs; pass --resume"),
    (["--resume", "--steps", "6"], "another audit (config differ)"),
])
def test_a_results_folder_is_never_mixed(tmp_path, capsys, extra, message):
    args = ARGS[:-4] + ["--runs", "10", "--store", str(tmp_path / "r")]
    assert main(args + ["--json", "--quiet"]) == 0
    capsys.readouterr()
    assert main(args + extra + ["--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
