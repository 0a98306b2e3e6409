"""Ratio interval on Poisson counts: exact soundness at the boundary, power over two rates, edge cases."""

import numpy as np
import pytest
from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound
from dpaudit.audit.estimators.rate_ratio import kov_ratio_bounds, ratio_epsilon_bound
from scipy.stats import binom

REPS = 20_000


def _allowed(reps: int, beta: float) -> int:
    """The count of bounds above the truth that a level-β bound exceeds with probability 1e-4 only."""
    return int(binom.ppf(1 - 1e-4, reps, beta))


@pytest.mark.parametrize("mean_den", [3.0, 40.0, 2_000.0, 200_000.0])
@pytest.mark.parametrize("beta", [0.05, 0.1])
def test_bound_exceeds_true_ratio_at_most_beta_of_the_time(mean_den, beta):
    epsilon = 1.0
    rng = np.random.default_rng(int(mean_den) + int(100 * beta))
    numerator = rng.poisson(np.exp(epsilon) * mean_den, REPS)
    denominator = rng.poisson(mean_den, REPS)
    above = int(np.count_nonzero(ratio_epsilon_bound(numerator, denominator, beta) > epsilon))
    assert above <= _allowed(REPS, beta)


def test_bound_is_exact_not_merely_conservative_at_large_counts():
    """At the boundary the exceedance rate is close to β (so the test above could fail for a biased bound)."""
    beta, epsilon = 0.1, 0.5
    rng = np.random.default_rng(11)
    numerator = rng.poisson(np.exp(epsilon) * 50_000, REPS)
    denominator = rng.poisson(50_000, REPS)
    rate = np.mean(ratio_epsilon_bound(numerator, denominator, beta) > epsilon)
    assert abs(rate - beta) < 4 * np.sqrt(beta * (1 - beta) / REPS)


def test_tighter_than_two_rates_on_the_same_counts():
    n, fp, fn = 1_000_000, 100_000, 700_000  # P0(S) = 0.1, P1(S) = 0.3: log 3 ≈ 1.0986
    two_rates = float(epsilon_lower_bound(fp, n, fn, n, beta=0.05))
    ratio = float(kov_ratio_bounds(fp, n, fn, n, 0.05)[0])
    assert two_rates < ratio < np.log(3.0)
    assert np.log(3.0) - ratio < 0.7 * (np.log(3.0) - two_rates)


def test_directions_are_the_two_kov_ratios():
    n = 1_000_000
    bounds = kov_ratio_bounds(100_000, n, 700_000, n, 0.05)  # P1(S)/P0(S) = 0.3/0.1; P0(Sᶜ)/P1(Sᶜ) = 0.9/0.7
    assert bounds.shape == (2,)
    assert np.log(3.0) - 0.01 < bounds[0] < np.log(3.0)
    assert np.log(0.9 / 0.7) - 0.01 < bounds[1] < np.log(0.9 / 0.7)
    bounds = kov_ratio_bounds(600_000, n, 100_000, n, 0.05)  # P1(S)/P0(S) = 0.9/0.6; P0(Sᶜ)/P1(Sᶜ) = 0.4/0.1
    assert np.log(1.5) - 0.01 < bounds[0] < np.log(1.5)
    assert np.log(4.0) - 0.01 < bounds[1] < np.log(4.0)


@pytest.mark.parametrize("numerator, denominator", [(0, 0), (0, 10), (5, 5), (3, 30)])
def test_no_evidence_gives_zero(numerator, denominator):
    assert ratio_epsilon_bound(numerator, denominator, 0.05) == 0.0


def test_no_denominator_events_is_finite_and_grows_with_counts():
    small, large = ratio_epsilon_bound(np.array([20, 2_000]), np.array([0, 0]), 0.05)
    assert 0.0 < small < large < np.inf


@pytest.mark.parametrize("p0", [0.05, 0.2])
def test_two_rates_flag_a_tight_event_far_less_often_than_beta(p0):
    """At the boundary P1(S) = e^ε P0(S), the union of two intervals exceeds ε in ≈ 0.5% of runs at β = 0.05."""
    beta, epsilon, n = 0.05, 1.0, 100_000
    rng = np.random.default_rng(int(100 * p0))
    fp = rng.binomial(n, p0, REPS)
    fn = n - rng.binomial(n, np.exp(epsilon) * p0, REPS)
    rate = np.mean(epsilon_lower_bound(fp, n, fn, n, beta=beta) > epsilon)
    assert 0.001 < rate < 0.01
