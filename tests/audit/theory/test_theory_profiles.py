"""Exact privacy profiles against numerical integration and direct enumeration."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dpaudit.audit.theory import (
    classical_gaussian_sigma,
    epsilon_delta_tradeoff,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_sigma,
    gdp_delta,
    gdp_epsilon,
    gdp_tradeoff,
    laplace_delta,
    laplace_epsilon,
    randomized_response_delta,
    randomized_response_epsilon,
)
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms.builtins.gaussian import gdp_log_delta
from scipy import integrate, stats


def _hockey_stick(p0, p1, epsilon, points):
    """∫ max(0, p0 − e^ε p1), integrated numerically over the real line."""
    def integrand(x):
        return max(0.0, p0(x) - math.exp(epsilon) * p1(x))
    return integrate.quad(integrand, -60, 60, points=points, limit=400, epsabs=1e-14)[0]


def _rr_pmfs(epsilon0, k):
    """Output laws of k-ary RR on inputs 0 and 1."""
    base = np.full(k, 1.0 / (math.exp(epsilon0) + k - 1))
    p0, p1 = base.copy(), base.copy()
    p0[0] = p1[1] = math.exp(epsilon0) / (math.exp(epsilon0) + k - 1)
    return p0, p1


@pytest.mark.parametrize("scale,epsilon", [(1.0, 0.0), (1.0, 0.5), (0.5, 1.2), (2.0, 0.1)])
def test_laplace_delta_matches_integration(scale, epsilon):
    def p0(x):
        return stats.laplace.pdf(x, scale=scale)
    def p1(x):
        return stats.laplace.pdf(x, loc=1.0, scale=scale)
    numeric = _hockey_stick(p0, p1, epsilon, points=[0.0, 1.0])
    assert laplace_delta(epsilon=epsilon, epsilon0=1.0 / scale) == pytest.approx(numeric, abs=1e-9)


@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.01, 0.3])
def test_laplace_epsilon_inverts_delta(delta):
    eps = laplace_epsilon(delta=delta, epsilon0=2.0)
    assert laplace_delta(epsilon=eps, epsilon0=2.0) == pytest.approx(delta, abs=1e-12)
    assert laplace_epsilon(delta=0.0, epsilon0=2.0) == 2.0


@pytest.mark.parametrize("sigma,epsilon", [(1.0, 1.0), (2.0, 0.3), (0.7, 3.0)])
def test_gaussian_delta_matches_integration(sigma, epsilon):
    def p0(x):
        return stats.norm.pdf(x, scale=sigma)
    def p1(x):
        return stats.norm.pdf(x, loc=1.0, scale=sigma)
    crossing = 0.5 + epsilon * sigma**2
    numeric = _hockey_stick(p0, p1, epsilon, points=[crossing])
    assert gaussian_delta(epsilon=epsilon, sigma=sigma) == pytest.approx(numeric, rel=1e-6, abs=1e-12)


def test_gaussian_epsilon_check_value_rounds_up():
    eps = gaussian_epsilon(delta=1e-5, sigma=1.0)
    assert round(eps, 5) == 4.37718
    assert gaussian_delta(epsilon=eps, sigma=1.0) <= 1e-5
    assert gaussian_delta(epsilon=eps - 1e-6, sigma=1.0) > 1e-5
    assert math.isinf(gaussian_epsilon(delta=0.0, sigma=1.0))


def test_gaussian_sigma_check_values_and_soundness():
    sigma = gaussian_sigma(epsilon=1.0, delta=1e-5)
    assert round(sigma, 5) == 3.73063
    assert round(classical_gaussian_sigma(epsilon=1.0, delta=1e-5), 5) == 4.84481
    assert gaussian_delta(epsilon=1.0, sigma=sigma) <= 1e-5
    assert gaussian_delta(epsilon=1.0, sigma=sigma * (1 - 1e-6)) > 1e-5
    assert round(gaussian_epsilon(delta=1e-5, sigma=classical_gaussian_sigma(epsilon=1.0, delta=1e-5)), 3) == 0.751


@pytest.mark.parametrize("epsilon0,k", [(math.log(3.0), 2), (1.0, 5), (2.5, 10)])
def test_randomized_response_profile_matches_enumeration(epsilon0, k):
    p0, p1 = _rr_pmfs(epsilon0, k)
    for epsilon in np.linspace(0.0, epsilon0 + 0.5, 9):
        direct = float(np.sum(np.maximum(0.0, p0 - math.exp(epsilon) * p1)))
        assert randomized_response_delta(epsilon=epsilon, epsilon0=epsilon0, num_buckets=k) == pytest.approx(
            direct, abs=1e-14
        )
    for delta in (1e-6, 1e-2, 0.2):
        eps = randomized_response_epsilon(delta=delta, epsilon0=epsilon0, num_buckets=k)
        assert float(np.sum(np.maximum(0.0, p0 - math.exp(eps) * p1))) <= delta + 1e-14
        assert eps == 0.0 or float(np.sum(np.maximum(0.0, p0 - math.exp(eps - 1e-6) * p1))) > delta


def test_binary_rr_reference_formula():
    eps0, eps = 2.0, 0.5
    expected = (math.exp(eps0) - math.exp(eps)) / (1 + math.exp(eps0))
    assert randomized_response_delta(epsilon=eps, epsilon0=eps0) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("mu", [0.5, 1.0, 3.0])
def test_gdp_tradeoff_is_the_neyman_pearson_curve(mu):
    thresholds = np.linspace(-3, 6, 50)
    alpha = stats.norm.sf(thresholds)
    beta = stats.norm.cdf(thresholds - mu)
    np.testing.assert_allclose(gdp_tradeoff(alpha, mu=mu), beta, atol=1e-12)


@pytest.mark.parametrize("mu,epsilon", [(1.0, 0.5), (2.0, 1.0), (0.5, 0.0)])
def test_gdp_delta_is_the_conjugate_of_the_tradeoff(mu, epsilon):
    alpha = np.concatenate([np.geomspace(1e-12, 0.5, 200_000), np.linspace(0.5, 1.0, 200_000)])
    sup = float(np.max(1.0 - gdp_tradeoff(alpha, mu=mu) - math.exp(epsilon) * alpha))
    assert gdp_delta(epsilon=epsilon, mu=mu) >= sup - 1e-12
    assert gdp_delta(epsilon=epsilon, mu=mu) == pytest.approx(sup, abs=1e-6)


def test_gdp_epsilon_inverts_and_gaussian_region_lies_inside_every_eps_delta_region():
    mu = 1.0
    alpha = np.linspace(0.0, 1.0, 2001)
    for delta in (1e-6, 1e-3, 0.05):
        eps = gdp_epsilon(delta=delta, mu=mu)
        assert gdp_delta(epsilon=eps, mu=mu) <= delta
        assert np.all(gdp_tradeoff(alpha, mu=mu) >= epsilon_delta_tradeoff(alpha, epsilon=eps, delta=delta) - 1e-12)


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_gdp_epsilon_matches_gaussian_mechanism_accounting(mu, delta):
    # μ-GDP is the Gaussian mechanism with sensitivity 1 and σ = 1/μ (Balle & Wang's curve).
    expected = dp_accounting.get_epsilon_gaussian(1.0 / mu, delta)
    assert gdp_epsilon(delta=delta, mu=mu) == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_gdp_epsilon_edges_and_profile_inverse():
    assert gdp_epsilon(delta=1e-5, mu=0.0) == 0.0
    assert gdp_epsilon(delta=0.0, mu=0.0) == 0.0  # 0-GDP is (0, 0)-DP
    assert gdp_epsilon(delta=0.0, mu=1.0) == math.inf
    assert gdp_epsilon(delta=0.5, mu=1.0) == 0.0  # δ(0) = 2Φ(1/2) − 1 ≈ 0.38 < 0.5
    eps = gdp_epsilon(delta=1e-7, mu=3.0)
    assert math.exp(gdp_log_delta(3.0, eps)) == pytest.approx(1e-7, rel=1e-6)
    with pytest.raises(DPAuditError, match="'mu' parameter of gdp_epsilon"):
        gdp_epsilon(delta=1e-5, mu=-1.0)


def test_eps_delta_tradeoff_passes_through_randomized_response():
    eps = 0.8
    corner = 1.0 / (1.0 + math.exp(eps))
    assert epsilon_delta_tradeoff(corner, epsilon=eps) == pytest.approx(corner)
    assert epsilon_delta_tradeoff(0.0, epsilon=eps, delta=0.1) == pytest.approx(0.9)
    assert epsilon_delta_tradeoff(1.0, epsilon=eps, delta=0.1) == 0.0


def test_bad_input_is_one_sentence():
    with pytest.raises(DPAuditError, match="'sigma' parameter of gaussian_delta"):
        gaussian_delta(epsilon=1.0, sigma=0.0)
    with pytest.raises(DPAuditError, match="'num_buckets'"):
        randomized_response_delta(epsilon=1.0, epsilon0=1.0, num_buckets=1)
