"""Pair search: finds the known worst pairs, skips non-neighbours, uses its own seed stream."""

from __future__ import annotations

import json

import numpy as np
import pytest
from dpaudit.attacks.pair_search import InputSpace, search_pair, split_patterns, statdp_patterns
from dpaudit.audit import audit_mechanism
from dpaudit.audit.estimators.projection import projected_bound
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import blackbox, get_mechanism


def search(mech, **kwargs):
    """The pair search steered by the final audit's objective at 10⁶ held-out trials, 95%."""
    return search_pair(mech, objective=projected_bound(1_000_000, mech.claim.delta, 0.05), **kwargs)


def _pattern_name(d0: np.ndarray, d1: np.ndarray) -> str:
    for name, (a, b) in statdp_patterns(len(d0)) + split_patterns(len(d0)):
        if np.array_equal(a, d0) and np.array_equal(b, d1):
            return name
    return "other"


def test_report_noisy_max_worst_pair_is_one_up_rest_down() -> None:
    d0, d1 = search(get_mechanism("report_noisy_max"), budget=300_000, seed=0)
    # One answer moves against all the others (Ding et al. CCS 2018), in any position and orientation.
    moves = np.sign(d1 - d0)
    assert np.all(moves != 0) and min(np.sum(moves > 0), np.sum(moves < 0)) == 1


def test_noisy_max_with_value_worst_pair_moves_all_answers() -> None:
    d0, d1 = search(get_mechanism("noisy_max_with_value"), budget=300_000, seed=0)
    assert _pattern_name(d0, d1).removesuffix("_swapped") in {"all_above", "all_below"}


def test_lee_clifton_worst_statdp_pattern_moves_answers_apart() -> None:
    patterns = [pair for _, pair in statdp_patterns(10)]
    d0, d1 = search(get_mechanism("sparse_vector_lee_clifton"), candidates=patterns, budget=600_000, seed=0)
    # Some answers up, the others down (Lyu et al.: ⊥ answers and ⊤ answers must move apart).
    moves = np.sign(d1 - d0)
    assert np.all(moves != 0) and np.any(moves > 0) and np.any(moves < 0)


def test_random_search_respects_the_input_space_and_neighbours() -> None:
    mech = get_mechanism("laplace")
    d0, d1 = search(mech, budget=60_000, seed=1, space=InputSpace(length=10, low=0.0, high=1.0, kind="records"))
    assert mech.neighbours(d0, d1) is None
    assert np.sum(d0 != d1) == 1


def test_no_neighbouring_candidate_is_an_error() -> None:
    mech = get_mechanism("laplace")
    with pytest.raises(InvalidParameterError):
        search(mech, candidates=[(np.zeros(3), np.ones(3))], budget=1000, seed=0)


def test_audit_with_search_finds_a_pair_and_reports_it() -> None:
    mech = get_mechanism("noisy_max_with_value", epsilon=1.0)
    res = audit_mechanism(mech, trials=200_000, seed=0, search=True)
    assert res.verdict == "violation"
    found = json.loads(json.dumps(res.to_dict()))["lower_bound"]["pair_search"]
    assert mech.neighbours(np.array(found["d0"]), np.array(found["d1"])) is None


def test_search_and_explicit_pair_are_exclusive() -> None:
    mech = get_mechanism("laplace")
    with pytest.raises(InvalidParameterError, match="not both"):
        audit_mechanism(mech, [0.0], [1.0], trials=1000, search=True)


def test_pair_search_on_a_black_box_changes_one_record_only():
    def noisy_sum(data, rng, size):
        return np.sum(data) + rng.laplace(0.0, 1.0, size)

    mech = blackbox(noisy_sum, epsilon=1.0, default_pair=(np.zeros(5), np.eye(5)[0]), null_record=0.0)
    res = audit_mechanism(mech, trials=100_000, seed=0, search=True)
    assert res.verdict == "consistent"
    found = res.to_dict()["lower_bound"]["pair_search"]
    assert np.sum(np.asarray(found["d0"]) != np.asarray(found["d1"])) == 1


def test_a_search_around_an_empty_default_pair_plays_it_without_answer_patterns() -> None:
    # ([], [1.0]) is an add-remove pair of a mechanism with no answers to move: the search must not build
    # StatDP's patterns on 0 answers (numpy's "negative dimensions" before this was fixed).
    mech = blackbox(lambda data, rng, size: rng.laplace(size=size) + len(data), epsilon=1.0, default_pair=([], [1.0]))
    d0, d1 = search(mech, budget=2000, seed=0)
    assert (len(d0), len(d1)) == (0, 1)
