"""Ctrl-C during the held-out phase keeps a sound bound from the chunks that finished."""

import itertools
import json

import numpy as np
import pytest
from dpaudit.audit import Interrupted, audit_mechanism
from dpaudit.audit.cli import main
from dpaudit.mechanisms import blackbox


def interrupted_laplace(stop_at_call: int):
    """A Laplace sum that behaves like Ctrl-C on its `stop_at_call`-th batch (2 batches per chunk)."""
    calls = itertools.count(1)

    def fn(data, rng, size):
        if next(calls) == stop_at_call:
            raise KeyboardInterrupt
        return np.sum(data) + rng.laplace(0.0, 1.0, size)

    return blackbox(fn, epsilon=1.0, name="interrupted", default_pair=([0.0], [1.0]), null_record=0.0)


def test_partial_result_uses_only_finished_chunks():
    # 1.2e6 trials: one output to learn its size, 1.2e5 select (2 batches), then chunks of 250,000
    # (2 batches each); the 8th batch is chunk 2.
    with pytest.raises(Interrupted) as info:
        audit_mechanism(interrupted_laplace(8), trials=1_200_000, seed=0)
    partial = info.value.partial
    assert partial.phases.held_out == 500_000 and info.value.done == 500_000
    assert partial.phases.interrupted and partial.to_dict()["lower_bound"]["interrupted"] is True
    # Two chunks of 250,000 held-out trials still certify most of the true ε = 1.
    assert 0.9 < partial.lower_bound.epsilon <= 1.0


def test_interrupt_before_any_chunk_keeps_nothing():
    with pytest.raises(Interrupted) as info:
        audit_mechanism(interrupted_laplace(4), trials=100_000, seed=0)  # size probe, selection, then chunk 0
    assert info.value.partial is None


def test_cli_prints_the_partial_result_and_exits_130(capsys, tmp_path, monkeypatch):
    (tmp_path / "stopper.py").write_text(
        "from tests.execution.test_interrupt_keeps import interrupted_laplace\nmech = interrupted_laplace(8)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["audit", "stopper:mech", "--trials", "1200000", "--json", "--quiet"]) == 130
    captured = capsys.readouterr()
    assert json.loads(captured.out)["lower_bound"]["held_out"] == 500_000
    assert "interrupted" in captured.err
