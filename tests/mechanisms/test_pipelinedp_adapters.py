"""PipelineDP adapters: the aggregate and partition selection not flagged, the row-id misuse flagged.

PipelineDP's noise comes from python-dp's unseeded generator; the audits of
correct mechanisms use confidence 0.999 (each flags a correct mechanism
with probability at most 0.001 whatever the draws).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pipeline_dp")

from dpaudit.audit.audits.two_dataset import audit_mechanism  # noqa: E402
from dpaudit.mechanisms import InvalidParameterError, get_mechanism  # noqa: E402
from dpaudit.mechanisms.adapters.pipelinedp import user_pair, users_differ_by_one  # noqa: E402
from dpaudit.mechanisms.registry import registration


@pytest.mark.parametrize("name, trials", [("pipelinedp_count_sum", 5_000), ("pipelinedp_partition_selection", 20_000),
                                          ("pipelinedp_partition_selection_two_users", 20_000)])
@pytest.mark.parametrize("seed", [0, 1])
def test_correct_mechanism_is_not_flagged(name: str, trials: int, seed: int) -> None:
    result = audit_mechanism(get_mechanism(name), trials=trials, seed=seed, confidence=0.999)
    assert result.verdict == "consistent"


@pytest.mark.parametrize("name, trials", [("pipelinedp_count_sum_row_ids", 10_000),
                                          ("pipelinedp_partition_selection_row_ids", 40_000)])
def test_row_ids_as_privacy_ids_are_flagged(name: str, trials: int) -> None:
    mech = get_mechanism(name)
    assert registration(name).expected == "violation"
    result = audit_mechanism(mech, trials=trials, seed=0, confidence=0.999)
    assert result.verdict == "violation"
    assert result.lower_bound.epsilon <= result.upper_bound.epsilon


def test_count_sum_releases_count_and_sum() -> None:
    d0, d1 = user_pair(background=3, added=1, value=1.0, rows=2)
    out = get_mechanism("pipelinedp_count_sum").sample(d1, 2_000, np.random.default_rng(0))
    assert out.shape == (2_000, 2)
    # four users, one record each after bounding; Laplace(2) has sd 2.83, so 0.4 is 6.3 standard errors.
    assert np.all(np.abs(out.mean(axis=0) - 4.0) < 0.4)
    # ε/2 each: variance 2·2² = 8; the sample variance's s.e. is sqrt((μ4 − σ⁴)/n) = sqrt((384 − 64)/2000) = 0.4.
    assert np.all(np.abs(out.var(axis=0) - 8.0) < 2.4)


def test_user_relation() -> None:
    check = users_differ_by_one(0.0, 1.0)
    d0, d1 = user_pair(background=2, added=1, value=1.0, rows=2)
    assert check(d0, d1) is None
    half = d0.copy()
    half[0] = [1.0, np.nan]
    assert check(half, d1) == "the differing user must be absent (a row of nan) in one of them"
    two = d1.copy()
    two[:2] = np.nan
    assert "differ in 2 users" in check(two, d1)
    with pytest.raises(InvalidParameterError, match="not neighbours"):
        audit_mechanism(get_mechanism("pipelinedp_count_sum"), two, d1, trials=100)


@pytest.mark.parametrize("name", ["pipelinedp_count_sum", "pipelinedp_partition_selection"])
def test_a_replay_is_refused_in_one_sentence_that_names_python_dp_and_numpy_s_global_state(name: str) -> None:
    from dpaudit.attacks.replay import NotReplayable
    from dpaudit.audit import audit_replay

    words = rf"^Mechanism '{name}' cannot be replayed: PipelineDP .*python-dp.*numpy's global state[^.]*\.$"
    with pytest.raises(NotReplayable, match=words):
        audit_replay(get_mechanism(name))
