"""Transforms: output shapes, neighbouring pairs, and theory upper bounds equal to the theorems."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dpaudit.audit.theory.amplification import poisson_subsampled, shuffled_epsilon
from dpaudit.audit.theory.profiles import gdp_epsilon, laplace_epsilon
from dpaudit.audit.theory.upper_bound import upper_bound
from dpaudit.mechanisms import get_mechanism
from dpaudit.mechanisms.builtins.gaussian import gaussian
from dpaudit.mechanisms.builtins.laplace import laplace
from dpaudit.mechanisms.builtins.randomized_response import randomized_response
from dpaudit.mechanisms.transforms import compose, group, shuffle, subsample


def test_composed_gaussian_bound_is_the_gdp_composition() -> None:
    inner = gaussian(epsilon=1.0, delta=1e-5)
    composed = compose(inner, 4)
    expected = gdp_epsilon(delta=1e-5, mu=math.sqrt(4) / inner.params["sigma"])
    assert upper_bound(composed.event, delta=1e-5).epsilon == pytest.approx(expected, rel=1e-9)
    assert composed.claim.epsilon == 4.0


def test_composition_stacks_independent_outputs() -> None:
    rng = np.random.default_rng(0)
    out = compose(laplace(epsilon=1.0), 3).sample(np.zeros(10), 50_000, rng)
    assert out.shape == (50_000, 3)
    assert abs(np.corrcoef(out[:, 0], out[:, 1])[0, 1]) < 5 / math.sqrt(50_000)


def test_group_laplace_bound_is_k_epsilon() -> None:
    mech = get_mechanism("group_laplace", epsilon=0.7, k=3)
    assert upper_bound(mech.event, delta=1e-3).epsilon == pytest.approx(laplace_epsilon(delta=1e-3, epsilon0=2.1))
    d0, d1 = mech.default_pair
    assert int(np.sum(d0 != d1)) == 3 and mech.neighbours(d0, d1) is None
    far = d1.copy()
    far[5] = 1.0
    assert mech.neighbours(d0, far) is not None


def test_subsampled_laplace_bound_is_the_amplified_epsilon() -> None:
    mech = subsample(laplace(epsilon=2.0), 0.3)
    expected, _ = poisson_subsampled(epsilon=2.0, q=0.3)
    bound = upper_bound(mech.event, delta=1e-6).epsilon
    assert expected * (1 - 1e-3) <= bound <= expected * (1 + 1e-3)
    assert mech.claim.epsilon == pytest.approx(expected)


def test_subsampling_keeps_records_at_rate_q() -> None:
    rng = np.random.default_rng(1)
    mech = subsample(compose(laplace(epsilon=1e6), 1), 0.3)  # almost no noise: the output is the kept sum
    d = np.zeros(10)
    d[:4] = 1.0
    out = mech.sample(d, 40_000, rng).ravel()
    assert abs(out.mean() - 4 * 0.3) < 5 * math.sqrt(4 * 0.3 * 0.7 / 40_000)


def test_shuffled_rr_bound_is_the_clones_bound() -> None:
    mech = shuffle(randomized_response(epsilon=1.0, k=2), 1000)
    expected = shuffled_epsilon(epsilon0=1.0, num_users=1000, delta=1e-6)
    assert upper_bound(mech.event, delta=1e-6, relation="replace-one").epsilon == pytest.approx(expected)
    assert expected < 1.0


def test_shuffle_outputs_the_sorted_multiset() -> None:
    rng = np.random.default_rng(2)
    mech = get_mechanism("shuffled_rr", epsilon=50.0, num_users=6)
    out = mech.sample(np.array([1, 0, 1, 0, 0, 1]), 10, rng)
    assert np.array_equal(out, np.tile([0, 0, 0, 1, 1, 1], (10, 1)))


def test_a_group_adds_records_like_the_replaced_one_when_the_default_pair_has_too_few() -> None:
    d0, d1 = group(randomized_response(epsilon=1.0), 2).default_pair
    assert d0.tolist() == [0, 0] and d1.tolist() == [1, 1]


def test_subsampling_keeps_each_of_many_records_with_probability_q():
    # 100 records of value 1, q = 1/2: the sum is Binomial(100, 1/2), standard deviation 5.
    rng = np.random.default_rng(0)
    draws = subsample(laplace(epsilon=1000.0), 0.5).sample(np.ones(100), 4000, rng)
    # The sample standard deviation of 4000 draws is within 5% of 5 with overwhelming probability.
    assert abs(np.std(draws) - 5.0) < 0.25


def test_subsampling_removes_the_records_it_does_not_keep_and_keeps_a_data_frame_a_data_frame():
    import pandas as pd
    from dpaudit.mechanisms import blackbox

    seen = []

    def count(data, rng):
        seen.append(type(data))
        return float(len(data))

    draws = subsample(blackbox(count, epsilon=1.0), 0.25).sample(pd.DataFrame({"x": np.arange(8.0)}), 2000, np.random.default_rng(3))
    # The kept count is Binomial(8, 1/4): mean 2, standard deviation √1.5 / √2000 for the mean of 2000 draws.
    assert abs(draws.mean() - 2.0) < 5 * math.sqrt(1.5 / 2000)
    assert set(seen) == {pd.DataFrame}
