"""A leak in one coordinate of a wide output is found, in bounded memory."""

import numpy as np
import pytest
from dpaudit.attacks.selection_budget import screening_size, split_budget
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import blackbox

WIDTH = 30_000
LEAK = 21_337


def one_leaking_coordinate(data, rng, size):
    """Laplace(1) noise on every coordinate; one of them also carries the sum (sensitivity 1): 1-DP in all."""
    out = rng.laplace(0.0, 1.0, (size, WIDTH))
    out[:, LEAK] += np.sum(data)
    return out


def test_selection_is_not_capped_at_a_fixed_number_of_wide_outputs():
    assert screening_size(100_000, WIDTH) == split_budget(100_000)[0] > 200
    assert screening_size(100_000, 10) == 0


@pytest.mark.parametrize("claim, verdict", [(0.2, "violation"), (1.0, "consistent")])
def test_a_one_coordinate_leak_among_thirty_thousand_is_found(claim, verdict):
    res = audit_mechanism(blackbox(one_leaking_coordinate, epsilon=claim, null_record=0.0), np.zeros(1), np.ones(1), trials=6000, seed=0)
    assert res.verdict == verdict
    assert res.test.startswith(f"coordinate[{LEAK}]")
    assert LEAK in res.to_dict()["lower_bound"]["screening"]["coordinates"]
    assert 0.3 < res.lower_bound.epsilon <= 1.0


def spread_thin(data, rng, size):
    """N(0, 1) noise on 30 000 coordinates, each shifted by 0.02 · the count: ℓ2 shift 3.5 in all, none visible alone."""
    return rng.normal(0.0, 1.0, (size, WIDTH)) + 0.02 * np.sum(data)


def test_a_leak_spread_thinly_over_every_coordinate_is_found_by_the_linear_score():
    # μ = 0.02·√30 000 ≈ 3.46-GDP, far from (1, 1e-5)-DP; one coordinate alone is 0.02-GDP.
    res = audit_mechanism(blackbox(spread_thin, epsilon=1.0, null_record=0.0, delta=1e-5), np.zeros(1), np.ones(1), trials=6000, seed=0)
    assert res.verdict == "violation" and res.test.startswith("screened linear score")
