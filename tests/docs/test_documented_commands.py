"""Every command and self-contained Python snippet that README.md and docs/ show runs as written, with the result shown.

Each block runs in a fresh copy of the repository's files (what a clone
holds), from its root, with this environment's `bin` first on the PATH, so
`dpaudit` and `python` are the ones `make install` puts in .venv. The
commands of one block run in order in one copy (a later one may read what
an earlier one wrote). The conventions that say what is expected are in
`documented.py`. Blocks marked `slow` run under `make test-slow`; a command
that an earlier block runs already is run once; installs, the test suite
itself and environments this machine lacks are skipped, each with its reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from documented import ROOT, Block, Command, blocks, commands, pages, printed_numbers, shows
from dpaudit.mechanisms.adapters.tumult_core import tumult_python

BIN = Path(sys.executable).parent
QUICK_TIMEOUT = 600
SLOW_TIMEOUT = 3600


def _skip_reason(command: Command) -> str | None:
    """Return why `command` is not run here, or None to run it."""
    text = command.text
    if re.match(r"make (test|test-slow)\b", text):
        return "it runs the test suite that holds this test"
    if re.match(r"pip install\b", text):
        return "it installs into the environment the tests run in; `make install` and `make install-test` run the same installs"
    if re.match(r"dpaudit env (create|remove)\b", text):
        return ("it builds or deletes a library environment in the user's cache; tests/mechanisms/test_environments.py "
                "builds numpy-only from scratch in a folder of its own")
    if re.search(r"\btumult\b|tumult_", text) and tumult_python() is None:
        return "it needs the Tumult environment tumult-core (`make tumult`), which this machine does not have"
    return None


def _normal(text: str) -> str:
    return " ".join(text.split())


def _plan() -> tuple[list[tuple[Block, list[Command]]], list[tuple[str, str, str]]]:
    """Return the blocks to run with their commands, and the commands not run as (where, command, reason)."""
    runs: list[tuple[Block, list[Command]]] = []
    not_run: list[tuple[str, str, str]] = []
    seen: dict[str, str] = {}
    every = [block for page in pages() for block in blocks(page)]
    # quick blocks first, so a command shown in a quick and a slow block runs in the quick run
    for block in sorted(every, key=lambda b: "slow" in b.marks):
        if block.lang == "python":
            key = block.text.strip()
            if "skip" in block.marks:
                not_run.append((block.where, block.text.splitlines()[0], block.reason or "marked skip"))
            elif key not in seen:
                seen[key] = block.where
                runs.append((block, []))
            continue
        kept, prefix_ran_before = [], True
        for command in commands(block):
            reason = "marked skip: " + block.reason if "skip" in block.marks else _skip_reason(command)
            if reason:
                not_run.append((block.where, command.text, reason))
                continue
            key = f"{_normal(command.text)} -> {command.status} {command.numbers}"
            if prefix_ran_before and key in seen and not kept:
                continue  # the same command with the same expectations, and nothing of this block before it, runs at seen[key]
            prefix_ran_before = False
            seen.setdefault(key, block.where)
            kept.append(command)
        if kept:
            runs.append((block, kept))
    return runs, not_run


RUNS, NOT_RUN = _plan()


def _fresh_copy(target: Path) -> Path:
    """Copy the files a clone holds (tracked and new, not ignored) into `target`; link .venv for the Makefile."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    if (ROOT / ".venv").is_dir():
        (target / ".venv").symlink_to(ROOT / ".venv")
    return target


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    return env


def _run(argv: list[str] | str, where: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=where, env=_environment(), capture_output=True, text=True, timeout=timeout,
                          shell=isinstance(argv, str), executable="/bin/bash" if isinstance(argv, str) else None)


def _check_make(command: Command, where: Path) -> None:
    """Skip a make command that would reinstall into .venv from the copy (its stamps older than pyproject.toml)."""
    if not command.text.startswith("make "):
        return
    dry = _run(f"{command.text} -n", where, 60)
    if "pip install" in dry.stdout:
        pytest.skip(f"`{command.text}` would reinstall .venv from a copy: run `make install` in the repository first")


PARAMS = [pytest.param(block, kept, id=block.where, marks=[pytest.mark.slow] if "slow" in block.marks else [])
          for block, kept in RUNS]


@pytest.mark.parametrize(("block", "kept"), PARAMS)
def test_documented_block_runs_as_written(block: Block, kept: list[Command], tmp_path: Path):
    where = _fresh_copy(tmp_path)
    timeout = SLOW_TIMEOUT if "slow" in block.marks else QUICK_TIMEOUT
    if block.lang == "python":
        script = block.text + "\n"
        tests = re.findall(r"^def (test_\w+)\(", block.text, flags=re.M)
        script += "".join(f"\n{name}()" for name in tests) + "\n"
        (where / "docs_snippet.py").write_text(script, encoding="utf-8")
        done = _run([str(BIN / "python"), "docs_snippet.py"], where, timeout)
        said = done.stdout + done.stderr
        assert done.returncode == 0, f"{block.where}: the snippet failed:\n{said[-3000:]}"
        for number in printed_numbers(block):
            assert shows(number, done.stdout), f"{block.where}: the page shows {number}, the snippet printed:\n{done.stdout[-3000:]}"
        return
    for command in kept:
        _check_make(command, where)
        done = _run(command.text, where, timeout)
        said = done.stdout + done.stderr
        assert done.returncode == command.status, (
            f"{block.where}: `{command.text}` exited {done.returncode}, the page says {command.status}:\n{said[-3000:]}")
        for number in command.numbers:
            assert shows(number, said), f"{block.where}: the page shows {number} for `{command.text}`, it printed:\n{said[-3000:]}"


@pytest.mark.parametrize(("where", "command", "reason"), NOT_RUN, ids=[f"{w}:{c[:40]}" for w, c, _ in NOT_RUN])
def test_documented_command_not_run_here(where: str, command: str, reason: str):
    pytest.skip(f"{where}: `{command}`: {reason}")


def test_the_pages_show_commands_to_run_in_both_runs():
    """The parser finds the blocks: a guard against a change of convention that would make every check above vacuous."""
    quick = [block for block, _ in RUNS if "slow" not in block.marks]
    assert len(RUNS) >= 20 and len(quick) >= 4, (len(RUNS), [block.where for block in quick])
    assert {block.lang for block in quick if block.page == "README.md"} == {"python", "sh"}, "the README's audit and CLI lines"
