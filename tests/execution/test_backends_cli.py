"""`dpaudit audit laplace --seed 3 --json` prints the same JSON (but for the time) inline and with --workers 2."""

from __future__ import annotations

import json

import pytest
from dpaudit.audit.cli import main

pytest.importorskip("distributed")


def audit_json(capsys, *extra: str) -> tuple[int, dict]:
    status = main(["audit", "laplace", "--seed", "3", "--trials", "300000", "--json", *extra])
    out = json.loads(capsys.readouterr().out)
    out.pop("seconds")
    return status, out


def test_workers_flag_gives_identical_json(capsys):
    assert audit_json(capsys, "--workers", "2") == audit_json(capsys)


def test_workers_and_scheduler_together_is_one_sentence(capsys):
    status = main(["audit", "laplace", "--trials", "1000", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("dpaudit: error: ") and err.count("\n") == 1
