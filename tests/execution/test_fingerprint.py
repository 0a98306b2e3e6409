"""Stored runs are reused only by the audit that made them: the fingerprint sees code, closures, globals and data."""

import json

import numpy as np
import pytest
from dpaudit.execution.fingerprint import code_digest, fingerprint, value_digest
from dpaudit.mechanisms import InvalidParameterError

SCALE = 1.0


def _make(scale):
    def train(x, rng):
        return x * scale + rng.normal()
    return train


def _reads_a_global(x):
    return x * SCALE


def test_the_same_code_with_other_closure_values_differs_and_the_same_values_agree():
    assert code_digest(_make(1.0)) == code_digest(_make(1.0))
    assert code_digest(_make(1.0)) != code_digest(_make(2.0))


def test_a_module_level_value_the_code_reads_is_part_of_it(monkeypatch):
    before = code_digest(_reads_a_global)
    monkeypatch.setattr(f"{__name__}.SCALE", 3.0)
    assert code_digest(_reads_a_global) != before


def test_other_code_differs_and_arrays_are_compared_by_value():
    assert code_digest(lambda x: x + 1) != code_digest(lambda x: x + 2)
    assert value_digest(np.arange(3.0)) == value_digest(np.arange(3.0)) != value_digest(np.arange(3.0) + 1e-12)
    assert fingerprint(a=1, b=np.zeros(2)) == fingerprint(b=np.zeros(2), a=1) != fingerprint(a=1, b=np.ones(2))


def _loop(scale):
    def train(x, y, rng):
        return np.cumsum(rng.normal(0.0, scale, (4, 8)), axis=0)
    return train


def _files(folder):
    """Return every file under `folder` (screening parts included) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("change", ["code", "data", "claim"])
def test_resuming_another_target_is_refused_and_leaves_the_folder_as_it_was(tmp_path, change):
    pytest.importorskip("torch")
    from dpaudit.audit import Execution, UserTrainer, audit_dpsgd
    from dpaudit.mechanisms import Claim

    x, y = np.random.default_rng(0).random((6, 3)), np.arange(6) % 2

    def target(scale=1.0, rows=x, eps=1.0):
        return UserTrainer(train=_loop(scale), losses=lambda w, x, y: np.zeros(len(y)), x=rows, y=y, claim=Claim(eps, 1e-5),
                           name="same_name")

    store = tmp_path / "runs"
    audit_dpsgd(target=target(), canary="crafted", threat="black-box", runs=12, execution=Execution(store=store))
    saved = _files(store)
    other = {"code": target(scale=2.0), "data": target(rows=x + 1), "claim": target(eps=2.0)}[change]
    with pytest.raises(InvalidParameterError, match="holds runs of another audit") as refused:
        audit_dpsgd(target=other, canary="crafted", threat="black-box", runs=12, execution=Execution(store=store, resume=True))
    assert "\n" not in str(refused.value)
    assert _files(store) == saved
    assert "fingerprint" in json.loads((store / "setup.json").read_text())
