"""Noise samplers of the zoo match their laws (tolerances from the sample size)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dpaudit.mechanisms.builtins.floating_point import as_bits, from_bits, full_precision_uniform
from dpaudit.mechanisms.builtins.gaussian import gaussian_delta
from dpaudit.mechanisms.builtins.marginals import linf_ball_noise
from dpaudit.mechanisms.builtins.noise import discrete_gaussian, discrete_gaussian_delta, optimal_gamma, staircase_noise
from dpaudit.mechanisms.builtins.private_selection import exponential_choice
from dpaudit.mechanisms.builtins.sparse_vector import STOPPED, cut_off
from scipy import stats

N = 200_000


def _chi2_pvalue(counts: np.ndarray, probs: np.ndarray) -> float:
    keep = probs * counts.sum() >= 5
    observed, expected = counts[keep], probs[keep] * counts.sum()
    if not keep.all():  # pool the sparse cells into one
        observed = np.append(observed, counts[~keep].sum())
        expected = np.append(expected, probs[~keep].sum() * counts.sum())
    return float(stats.chisquare(observed, expected)[1])


def test_discrete_gaussian_matches_its_pmf() -> None:
    rng = np.random.default_rng(0)
    sigma = 2.5
    draws = discrete_gaussian(sigma, N, rng)
    z = np.arange(-40, 41)
    pmf = np.exp(-(z**2) / (2 * sigma**2))
    pmf /= pmf.sum()
    counts = np.array([np.count_nonzero(draws == v) for v in z])
    assert _chi2_pvalue(counts, pmf) > 1e-3


def test_discrete_gaussian_delta_approaches_the_continuous_one() -> None:
    # For large σ the discrete and continuous Gaussians nearly coincide (Canonne, Kamath, Steinke §1).
    assert discrete_gaussian_delta(0.5, 40.0) == pytest.approx(gaussian_delta(0.5, 40.0), rel=0.02)


def test_staircase_density_ratio_is_e_to_the_epsilon() -> None:
    rng = np.random.default_rng(1)
    eps = 1.0
    x = staircase_noise(eps, 1.0, optimal_gamma(eps), 4 * N, rng)
    # Probability of [0, γ) versus [γ, 1): a·γ against a·e^−ε·(1 − γ).
    g = optimal_gamma(eps)
    low, high = np.count_nonzero((x >= 0) & (x < g)), np.count_nonzero((x >= g) & (x < 1))
    expected = g / (math.exp(-eps) * (1 - g))
    assert abs(low / high - expected) < 6 * expected * math.sqrt(1 / low + 1 / high)


def test_linf_noise_norm_is_gamma_d() -> None:
    rng = np.random.default_rng(2)
    d, scale = 5, 0.3
    norms = np.abs(linf_ball_noise(scale, d, N, rng)).max(axis=1)
    # Density ∝ exp(−‖y‖∞/s) makes ‖y‖∞ ~ Gamma(d, s) (surface of the cube grows like r^{d−1}).
    assert stats.kstest(norms, stats.gamma(d, scale=scale).cdf).pvalue > 1e-3


def test_exponential_choice_matches_weights() -> None:
    rng = np.random.default_rng(3)
    u = np.array([0.0, 1.0, 3.0])
    picks = exponential_choice(u, 1.0, N, rng)
    w = np.exp(0.5 * u)
    assert _chi2_pvalue(np.bincount(picks, minlength=3), w / w.sum()) > 1e-3


def test_full_precision_uniform_is_uniform() -> None:
    rng = np.random.default_rng(4)
    u = full_precision_uniform(N, rng)
    assert u.min() > 0 and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-3


def test_cut_off_stops_after_c_answers() -> None:
    above = np.array([[False, True, True, False, True]])
    assert cut_off(above, 2).tolist() == [[0, 1, 1, STOPPED, STOPPED]]
    assert cut_off(above, None).tolist() == [[0, 1, 1, 0, 1]]


def test_bits_round_trip() -> None:
    x = np.array([0.1, -3.5, 1e-300])
    assert np.array_equal(from_bits(as_bits(x)), x)
