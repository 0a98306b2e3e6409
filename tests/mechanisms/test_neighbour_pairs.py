"""Pairs that are not neighbours are refused; the data reach the mechanism as given, copied."""

import numpy as np
import pandas as pd
import pytest
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import InvalidParameterError, blackbox
from dpaudit.mechanisms.neighbours import by_relation, unchecked


def laplace_count(data, rng):
    return float(np.sum(data) + rng.laplace(0.0, 1.0))


def test_a_pair_five_records_apart_is_refused_before_any_trial():
    calls = []

    def counted(data, rng):
        calls.append(1)
        return laplace_count(data, rng)

    with pytest.raises(InvalidParameterError, match="not neighbours .* differ in 5 records"):
        audit_mechanism(blackbox(counted, epsilon=1.0), [0] * 5, [1] * 5, trials=1000, seed=0)
    assert not calls


@pytest.mark.parametrize(
    "relation, d0, d1, neighbours",
    [
        ("replace-one", [1, 2, 3], [1, 2, 4], True),
        ("replace-one", [1, 2, 3], [1, 3], False),
        ("replace-one", [[1, 2], [3, 4]], [[1, 2], [3, 5]], True),
        ("replace-one", [[1, 2], [3, 4]], [[1, 9], [3, 5]], False),
        ("add-remove", [1, 2, 3], [1, 3], True),
        ("add-remove", [1, 2, 3], [5, 1, 2, 3], True),
        ("add-remove", [1, 2, 3], [1, 2, 3, 7], True),
        ("add-remove", [1, 2, 3], [3, 2], False),
        ("add-remove", [1, 2, 3], [1], False),
        ("add-remove", [1, 2, 3], [1, 2, 0], False),
        ("add-remove", [1, 2, 3], [1, 2, 4], False),
        ("add-remove", [np.nan, 1.0], [np.nan, 1.0, 2.0], True),
        ("add-remove", ["a", "b"], ["a", "b", "c"], True),
    ],
)
def test_relations_on_arrays(relation, d0, d1, neighbours):
    reason = by_relation(relation)(np.asarray(d0), np.asarray(d1))
    assert (reason is None) == neighbours, reason


def test_an_own_check_or_unchecked_replaces_the_relation_check():
    far = blackbox(laplace_count, epsilon=1.0, neighbours=lambda a, b: "never" if a.sum() == b.sum() else None)
    assert audit_mechanism(far, [0] * 5, [1] * 5, trials=1000, seed=0).lower_bound.epsilon >= 0.0
    with pytest.raises(InvalidParameterError, match="never"):
        audit_mechanism(far, [1], [1], trials=1000, seed=0)
    free = blackbox(laplace_count, epsilon=1.0, neighbours=unchecked)
    assert audit_mechanism(free, [0] * 5, [1] * 5, trials=1000, seed=0).lower_bound.epsilon >= 0.0


def test_a_mechanism_writing_to_its_input_is_audited_as_written_and_the_callers_data_do_not_change():
    # d += noise, then the sum: Laplace(1) per record on a sum of sensitivity 1 is 1-DP at most.
    def drifting(data, rng):
        data += rng.laplace(0.0, 1.0, data.shape)
        return float(data.sum())

    d0, d1 = np.zeros(3), np.array([0.0, 0.0, 1.0])
    res = audit_mechanism(blackbox(drifting, epsilon=1.0, null_record=0.0), d0, d1, trials=40_000, seed=0)
    assert res.verdict == "consistent"
    assert d0.tolist() == [0.0, 0.0, 0.0] and d1.tolist() == [0.0, 0.0, 1.0]


def test_a_batched_mechanism_writing_to_its_input_leaves_the_callers_data_alone():
    def drifting(data, rng, size):
        data += 1.0
        return data.sum() + rng.laplace(0.0, 1.0, size)

    d0, d1 = np.zeros(2), np.array([0.0, 1.0])
    audit_mechanism(blackbox(drifting, epsilon=1.0, relation="replace-one"), d0, d1, trials=1000, seed=0)
    assert d0.tolist() == [0.0, 0.0] and d1.tolist() == [0.0, 1.0]


def test_data_frames_and_dicts_of_columns_reach_the_mechanism_as_given():
    def spend(data, rng):
        return float(np.sum(data["spend"]) + rng.laplace(0.0, 2.0))

    frames = pd.DataFrame({"spend": [1.0, 2.0]}), pd.DataFrame({"spend": [1.0, 2.0, 0.5]})
    assert audit_mechanism(blackbox(spend, epsilon=1.0), *frames, trials=2000, seed=0).verdict == "consistent"
    columns = {"spend": [1.0, 2.0]}, {"spend": [1.0, 2.0, 0.5]}
    assert audit_mechanism(blackbox(spend, epsilon=1.0), *columns, trials=2000, seed=0).verdict == "consistent"
    with pytest.raises(InvalidParameterError, match="differ in 2 records"):
        audit_mechanism(blackbox(spend, epsilon=1.0), pd.DataFrame({"spend": [1.0, 2.0]}),
                        pd.DataFrame({"spend": [3.0, 4.0]}), trials=2000, seed=0)
