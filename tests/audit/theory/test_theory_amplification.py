"""Amplification (subsampling, shuffling) and group privacy against exact computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event as de
from dpaudit.audit.theory import (
    gaussian_delta,
    group_epsilon,
    group_privacy,
    poisson_subsampled,
    shuffled_epsilon,
    shuffling_condition,
    smith_subsampled,
    upper_bound,
)
from dpaudit.errors import DPAuditError
from scipy import stats


def _shuffled_rr_delta(epsilon, epsilon0, n):
    """Exact δ(ε) of n shuffled binary-RR reports for the pair (0, 0, ..., 0) vs (1, 0, ..., 0)."""
    low = 1.0 / (1.0 + math.exp(epsilon0))
    counts = np.arange(n + 1)
    rest, rest_shifted = stats.binom.pmf(counts, n - 1, low), stats.binom.pmf(counts - 1, n - 1, low)
    p = (1 - low) * rest + low * rest_shifted
    q = low * rest + (1 - low) * rest_shifted
    return max(float(np.sum(np.maximum(0, p - math.exp(epsilon) * q))),
               float(np.sum(np.maximum(0, q - math.exp(epsilon) * p))))


@pytest.mark.parametrize("epsilon,q", [(1.0, 0.01), (0.5, 0.3), (3.0, 0.05)])
def test_poisson_subsampling_is_the_exact_max_loss_of_the_mixture(epsilon, q):
    a = np.array([math.exp(epsilon), 1.0]) / (1 + math.exp(epsilon))
    b = a[::-1]
    mixture = (1 - q) * a + q * b
    worst = float(np.max(np.abs(np.log(mixture / a))))
    amplified, delta = poisson_subsampled(epsilon=epsilon, q=q)
    assert amplified == pytest.approx(worst, rel=1e-12)
    assert delta == 0.0
    assert poisson_subsampled(epsilon=epsilon, delta=1e-6, q=q)[1] == pytest.approx(q * 1e-6)


def test_subsampled_laplace_pld_agrees_with_the_formula():
    q = 0.05
    bound = upper_bound(de.PoissonSampledDpEvent(q, de.LaplaceDpEvent(1.0)), delta=0.0)
    formula = poisson_subsampled(epsilon=1.0, q=q)[0]
    assert bound.method == "pld"
    assert formula - 1e-9 <= bound.epsilon < formula + 2e-3


def test_smith_is_looser_and_limited_to_epsilon_at_most_one():
    for epsilon in (0.1, 0.5, 1.0):
        for q in (0.001, 0.1, 0.5):
            assert smith_subsampled(epsilon=epsilon, q=q) >= poisson_subsampled(epsilon=epsilon, q=q)[0]
    with pytest.raises(DPAuditError, match="'epsilon' parameter of smith_subsampled"):
        smith_subsampled(epsilon=2.0, q=0.1)


@pytest.mark.parametrize("epsilon0,n,delta", [(1.0, 50_000, 1e-6), (2.0, 200_000, 1e-8), (0.5, 20_000, 1e-5)])
def test_shuffling_bound_is_sound_for_shuffled_randomized_response(epsilon0, n, delta):
    assert shuffling_condition(epsilon0=epsilon0, num_users=n, delta=delta)
    eps = shuffled_epsilon(epsilon0=epsilon0, num_users=n, delta=delta)
    assert eps < epsilon0
    assert _shuffled_rr_delta(eps, epsilon0, n) <= delta
    assert _shuffled_rr_delta(eps / 10, epsilon0, n) > delta


def test_shuffling_falls_back_and_improves_with_n():
    assert shuffled_epsilon(epsilon0=4.0, num_users=1000, delta=1e-6) == 4.0
    values = [shuffled_epsilon(epsilon0=1.0, num_users=n, delta=1e-6) for n in (10_000, 100_000, 1_000_000)]
    assert values[0] > values[1] > values[2]


def test_group_privacy_is_sound_for_the_gaussian():
    sigma, eps, k = 2.0, 0.5, 3
    delta_one = gaussian_delta(epsilon=eps, sigma=sigma)
    group_eps, group_delta = group_privacy(epsilon=eps, delta=delta_one, group_size=k)
    assert group_eps == pytest.approx(k * eps)
    assert group_delta == pytest.approx(delta_one * sum(math.exp(i * eps) for i in range(k)))
    assert gaussian_delta(epsilon=group_eps, sigma=sigma, sensitivity=k) <= group_delta


def test_group_epsilon_candidates_are_feasible():
    sigma, k, target = 3.0, 4, 1e-5
    def profile(d):
        return math.inf if d == 0 else upper_bound(de.GaussianDpEvent(sigma), delta=d).epsilon
    eps = group_epsilon(profile, group_size=k, delta=target)
    assert math.isfinite(eps)
    exact_group = upper_bound(de.GaussianDpEvent(sigma / k), delta=target).epsilon
    assert exact_group <= eps
    assert group_epsilon(lambda d: 0.5, group_size=k, delta=0.0) == pytest.approx(2.0)
