"""Exact privacy profiles δ(ε) and ε(δ) of the basic mechanisms, and trade-off curves.

A mechanism is (ε, δ)-DP iff δ ≥ δ(ε), its privacy profile (the hockey-stick
divergence of the worst neighbouring pair). The functions here give the
profiles in closed form (or invert them with a root finder that rounds up);
the trade-off curves are the f-DP view of the same regions (Dong, Roth, Su,
"Gaussian Differential Privacy", arXiv 1905.02383).
"""

from __future__ import annotations

import math

import numpy as np
from dpaudit.audit.theory.roots import smallest_epsilon
from dpaudit.mechanisms.builtins.gaussian import analytic_sigma, classical_sigma, gdp_log_delta
from dpaudit.validation import check_delta, check_epsilon, check_int, check_real

__all__ = [
    "classical_gaussian_sigma",
    "epsilon_delta_tradeoff",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_sigma",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_tradeoff",
    "laplace_delta",
    "laplace_epsilon",
    "randomized_response_delta",
    "randomized_response_epsilon",
]


def laplace_delta(*, epsilon: float, epsilon0: float) -> float:
    """Return δ(ε) = max(0, 1 − e^{(ε − ε0)/2}) of the Laplace mechanism with ε0 = Δ/b.

    The hockey-stick divergence of Lap(0, b) and Lap(Δ, b); tight (attained
    by that pair). See Balle, Barthe, Gaboardi, Hsu, Sato, "Hypothesis Testing
    Interpretations and Rényi DP", AISTATS 2020.
    """
    epsilon = check_epsilon(epsilon, "epsilon", "laplace_delta")
    epsilon0 = check_epsilon(epsilon0, "epsilon0", "laplace_delta")
    return max(0.0, -math.expm1((epsilon - epsilon0) / 2.0))


def laplace_epsilon(*, delta: float, epsilon0: float) -> float:
    """Return ε(δ) = max(0, ε0 + 2 log(1 − δ)) of the Laplace mechanism with ε0 = Δ/b (tight).

    The inverse of `laplace_delta`.
    """
    delta = check_delta(delta, "delta", "laplace_epsilon")
    epsilon0 = check_epsilon(epsilon0, "epsilon0", "laplace_epsilon")
    return max(0.0, epsilon0 + 2.0 * math.log1p(-delta))


def gdp_delta(*, epsilon: float, mu: float) -> float:
    """Return δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) of μ-Gaussian DP (tight).

    Dong, Roth, Su, arXiv 1905.02383, Cor. 2.13; identical to the exact
    profile of the Gaussian mechanism with μ = Δ/σ (Balle & Wang, ICML 2018,
    Thm 8). The formula lives in `dpaudit.mechanisms.builtins.gaussian.gdp_log_delta`.
    """
    epsilon = check_epsilon(epsilon, "epsilon", "gdp_delta")
    mu = check_real(mu, "mu", "gdp_delta", low=0.0, low_open=True)
    return math.exp(gdp_log_delta(mu, epsilon))


def gdp_epsilon(*, delta: float, mu: float) -> float:
    """Return the smallest ε ≥ 0 with `gdp_delta(ε, μ) ≤ δ` (brentq, rounded up); inf when δ = 0 < μ.

    Dong, Roth, Su, arXiv 1905.02383, Cor. 2.13 inverted numerically. At
    μ = 0 the trade-off curve is 1 − α (no test beats a coin): 0-GDP is
    (0, 0)-DP, so ε = 0 for every δ.
    """
    delta = check_delta(delta, "delta", "gdp_epsilon")
    mu = check_real(mu, "mu", "gdp_epsilon", low=0.0)
    if mu == 0.0:
        return 0.0
    if delta == 0.0:
        return math.inf
    return smallest_epsilon(lambda eps: gdp_delta(epsilon=eps, mu=mu), delta)


def gaussian_delta(*, epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Return the exact δ(ε) of the Gaussian mechanism N(0, σ²) with ℓ2-sensitivity Δ.

    Balle & Wang, "Improving the Gaussian Mechanism for Differential
    Privacy", ICML 2018, Thm 8: δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).
    """
    sigma = check_real(sigma, "sigma", "gaussian_delta", low=0.0, low_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", "gaussian_delta", low=0.0, low_open=True)
    return gdp_delta(epsilon=epsilon, mu=sensitivity / sigma)


def gaussian_epsilon(*, delta: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Return the exact ε(δ) of the Gaussian mechanism (Balle & Wang Thm 8 solved by brentq, rounded up)."""
    sigma = check_real(sigma, "sigma", "gaussian_epsilon", low=0.0, low_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", "gaussian_epsilon", low=0.0, low_open=True)
    return gdp_epsilon(delta=delta, mu=sensitivity / sigma)


def randomized_response_delta(*, epsilon: float, epsilon0: float, num_buckets: int = 2) -> float:
    """Return δ(ε) = max(0, (e^ε0 − e^ε)/(e^ε0 + k − 1)) of k-ary randomized response.

    k-ary RR with ε0 reports the true value with probability
    e^ε0/(e^ε0 + k − 1) and each other value with 1/(e^ε0 + k − 1); changing
    the input (replace-one) moves mass only between two outputs, which gives
    this profile exactly. For k = 2: (e^ε0 − e^ε)/(1 + e^ε0) (Kairouz, Oh,
    Viswanath, ICML 2015, §3).
    """
    epsilon = check_epsilon(epsilon, "epsilon", "randomized_response_delta")
    epsilon0 = check_epsilon(epsilon0, "epsilon0", "randomized_response_delta")
    k = check_int(num_buckets, "num_buckets", "randomized_response_delta", low=2)
    if epsilon >= epsilon0:
        return 0.0
    return -math.expm1(epsilon - epsilon0) / (1.0 + (k - 1) * math.exp(-epsilon0))


def randomized_response_epsilon(*, delta: float, epsilon0: float, num_buckets: int = 2) -> float:
    """Return ε(δ) = max(0, log(e^ε0 − δ(e^ε0 + k − 1))) of k-ary randomized response (tight).

    The inverse of `randomized_response_delta`.
    """
    delta = check_delta(delta, "delta", "randomized_response_epsilon")
    epsilon0 = check_epsilon(epsilon0, "epsilon0", "randomized_response_epsilon")
    k = check_int(num_buckets, "num_buckets", "randomized_response_epsilon", low=2)
    inside = 1.0 - delta * (1.0 + (k - 1) * math.exp(-epsilon0))
    if inside <= math.exp(-epsilon0):
        return 0.0
    return epsilon0 + math.log(inside)


def gdp_tradeoff(alpha: np.ndarray | float, *, mu: float) -> np.ndarray:
    """Return the trade-off curve G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) of μ-GDP (vectorized over α).

    The smallest type II error (FNR) at type I error (FPR) α when testing
    N(0, 1) against N(μ, 1); Dong, Roth, Su, arXiv 1905.02383, Def. 2.7.
    """
    from scipy.special import ndtr, ndtri

    mu = check_real(mu, "mu", "gdp_tradeoff", low=0.0)
    a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
    return ndtr(ndtri(1.0 - a) - mu)


def epsilon_delta_tradeoff(alpha: np.ndarray | float, *, epsilon: float, delta: float = 0.0) -> np.ndarray:
    """Return f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)): the (ε, δ)-DP region's boundary.

    A mechanism is (ε, δ)-DP iff every test's (FPR, FNR) lies on or above
    this curve (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1; Dong, Roth, Su,
    arXiv 1905.02383, Prop. 2.5). Vectorized over α, for plots.
    """
    epsilon = check_epsilon(epsilon, "epsilon", "epsilon_delta_tradeoff")
    delta = check_delta(delta, "delta", "epsilon_delta_tradeoff")
    a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
    return np.maximum.reduce(
        [np.zeros_like(a), 1.0 - delta - math.exp(epsilon) * a, math.exp(-epsilon) * (1.0 - delta - a)]
    )


def gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Return the smallest σ for which N(0, σ²) noise is (ε, δ)-DP: the analytic Gaussian mechanism.

    Balle & Wang, ICML 2018, Thm 8 and Alg. 1, rounded up; the calibration
    is `dpaudit.mechanisms.builtins.gaussian.analytic_sigma`, the one the `gaussian`
    mechanism uses. Valid for every ε > 0, unlike `classical_gaussian_sigma`.
    """
    epsilon = check_real(epsilon, "epsilon", "gaussian_sigma", low=0.0, low_open=True)
    delta = check_real(delta, "delta", "gaussian_sigma", low=0.0, high=1.0, low_open=True, high_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", "gaussian_sigma", low=0.0, low_open=True)
    return analytic_sigma(epsilon, delta, sensitivity)


def classical_gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Return σ = Δ √(2 ln(1.25/δ)) / ε, the classical Gaussian mechanism; sound only for ε < 1.

    Dwork & Roth, "The Algorithmic Foundations of Differential Privacy",
    2014, Thm A.1. Kept for comparison with `gaussian_sigma`.
    """
    epsilon = check_real(epsilon, "epsilon", "classical_gaussian_sigma", low=0.0, low_open=True)
    delta = check_real(delta, "delta", "classical_gaussian_sigma", low=0.0, high=1.0, low_open=True, high_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", "classical_gaussian_sigma", low=0.0, low_open=True)
    return classical_sigma(epsilon, delta, sensitivity)
