"""Pair search: finds the known worst pairs, skips non-neighbours, uses its own seed stream."""

from __future__ import annotations

import numpy as np
import pytest

from attacks.pair_search import InputSpace, search_pair, split_patterns, statdp_patterns
from mechanisms import get_mechanism
from mechanisms.errors import InvalidParameterError


def _pattern_name(d0: np.ndarray, d1: np.ndarray) -> str:
    for name, (a, b) in statdp_patterns(len(d0)) + split_patterns(len(d0)):
        if np.array_equal(a, d0) and np.array_equal(b, d1):
            return name
    return "other"


def test_report_noisy_max_worst_pair_is_one_up_rest_down() -> None:
    d0, d1 = search_pair(get_mechanism("report_noisy_max"), budget=300_000, seed=0)
    # One answer moves against all the others (Ding et al. CCS 2018), in any position and orientation.
    moves = np.sign(d1 - d0)
    assert np.all(moves != 0) and min(np.sum(moves > 0), np.sum(moves < 0)) == 1


def test_noisy_max_with_value_worst_pair_moves_all_answers() -> None:
    d0, d1 = search_pair(get_mechanism("noisy_max_with_value"), budget=300_000, seed=0)
    assert _pattern_name(d0, d1).removesuffix("_swapped") in {"all_above", "all_below"}


def test_lee_clifton_worst_statdp_pattern_moves_answers_apart() -> None:
    patterns = [pair for _, pair in statdp_patterns(10)]
    d0, d1 = search_pair(get_mechanism("sparse_vector_lee_clifton"), candidates=patterns, budget=600_000, seed=0)
    # Some answers up, the others down (Lyu et al.: ⊥ answers and ⊤ answers must move apart).
    moves = np.sign(d1 - d0)
    assert np.all(moves != 0) and np.any(moves > 0) and np.any(moves < 0)


def test_random_search_respects_the_input_space_and_neighbours() -> None:
    mech = get_mechanism("laplace")
    d0, d1 = search_pair(mech, budget=60_000, seed=1, space=InputSpace(length=10, low=0.0, high=1.0, kind="records"))
    assert mech.neighbours(d0, d1) is None
    assert np.sum(d0 != d1) == 1


def test_no_neighbouring_candidate_is_an_error() -> None:
    mech = get_mechanism("laplace")
    with pytest.raises(InvalidParameterError):
        search_pair(mech, candidates=[(np.zeros(3), np.ones(3))], budget=1000, seed=0)
