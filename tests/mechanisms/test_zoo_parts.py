"""Parts of zoo mechanisms whose privacy proof rests on them: sensitivities, calibrations, neighbour checks."""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import get_mechanism
from dpaudit.mechanisms.base import check_pair
from dpaudit.mechanisms.builtins.noise import discrete_gaussian_delta, discrete_gaussian_sigma
from dpaudit.mechanisms.builtins.statistics import local_sensitivity_of_median, median_distance


def test_median_distance_has_sensitivity_one() -> None:
    rng = np.random.default_rng(0)
    grid = np.linspace(0, 1, 41)
    for _ in range(300):
        d0 = rng.choice(np.linspace(0, 1, 11), size=int(rng.integers(1, 10)))
        d1 = d0.copy()
        d1[rng.integers(len(d0))] = rng.choice(np.linspace(0, 1, 11))
        assert np.max(np.abs(median_distance(d0, grid) - median_distance(d1, grid))) <= 1


def test_median_distance_is_zero_at_the_median() -> None:
    data = np.array([0.1, 0.9, 0.4, 0.4, 0.7])
    assert median_distance(data, np.array([0.4]))[0] == 0
    assert median_distance(data, np.array([0.9]))[0] == 2


def test_default_pair_of_the_local_sensitivity_median_has_zero_local_sensitivity_on_one_side() -> None:
    d0, d1 = get_mechanism("median_local_sensitivity").default_pair
    assert local_sensitivity_of_median(np.sort(d0)) == 1.0
    assert local_sensitivity_of_median(np.sort(d1)) == 0.0


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-5), (0.3, 1e-6), (3.0, 1e-3)])
def test_discrete_gaussian_calibration_meets_delta(epsilon: float, delta: float) -> None:
    sigma = discrete_gaussian_sigma(epsilon, delta)
    assert discrete_gaussian_delta(epsilon, sigma) <= delta
    assert discrete_gaussian_delta(epsilon, 0.98 * sigma) > delta


def test_mean_pair_is_add_remove() -> None:
    mech = get_mechanism("mean_noise_by_true_count")
    check_pair(mech, *mech.default_pair)
    with pytest.raises(InvalidParameterError):
        check_pair(mech, np.array([0.0, 0.5]), np.array([0.0, 1.0]))  # a replacement, not add/remove


def test_marginal_pairs_must_be_sign_matrices_one_row_apart() -> None:
    mech = get_mechanism("marginals_linf")
    d0, d1 = mech.default_pair
    check_pair(mech, d0, d1)
    d2 = d1.copy()
    d2[1] = -1.0
    with pytest.raises(InvalidParameterError):
        check_pair(mech, d0, d2)


@pytest.mark.parametrize("name", ["sparse_vector", "sparse_vector_lee_clifton", "noisy_max_gumbel_with_value",
                                  "exponential_mechanism", "noisy_hist"])
def test_default_pairs_are_neighbours(name: str) -> None:
    mech = get_mechanism(name)
    check_pair(mech, *mech.default_pair)
