"""Additive noise laws beyond Laplace and Gaussian: staircase, discrete Gaussian, truncated geometric.

Each mechanism adds its noise to a sum of records in [0, Δ] (add/remove,
modelled by a null record 0), like `dpaudit.mechanisms.builtins.laplace`; the default pair is
one record 0 against Δ.
"""

from __future__ import annotations

import math

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.builtins.geometric import discrete_laplace
from dpaudit.mechanisms.builtins.laplace import sum_pair
from dpaudit.mechanisms.neighbours import records_in
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = [
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_gaussian_mechanism",
    "discrete_gaussian_sigma",
    "optimal_gamma",
    "staircase",
    "staircase_noise",
    "truncated_geometric",
]


def optimal_gamma(epsilon: float) -> float:
    """Return γ* = 1/(1 + e^{ε/2}), the staircase step minimising the expected |noise| (Geng & Viswanath Thm 3)."""
    return 1.0 / (1.0 + math.exp(epsilon / 2))


def staircase_noise(epsilon: float, sensitivity: float, gamma: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Return `size` draws of staircase noise (density steps e^{−kε} on [kΔ, (k+1)Δ), split at γΔ).

    Sampler of Geng, Kairouz, Oh, Wang, "The Staircase Mechanism in
    Differential Privacy", IEEE JSTSP 2015, Alg. 1: sign, geometric step G,
    which part of the step (B), uniform position U.
    """
    b = math.exp(-epsilon)
    sign = rng.choice(np.array([-1.0, 1.0]), size)
    step = rng.geometric(1.0 - b, size) - 1.0
    u = rng.random(size)
    upper = rng.random(size) < (1 - gamma) * b / (gamma + (1 - gamma) * b)
    position = np.where(upper, step + gamma + (1 - gamma) * u, step + gamma * u)
    return sign * position * sensitivity


def discrete_gaussian_delta(epsilon: float, sigma: float, sensitivity: int = 1) -> float:
    """Return the exact δ(ε) of discrete Gaussian noise N_Z(0, σ²) on a Δ-sensitive integer query.

    δ = Σ_z max(0, p(z) − e^ε p(z − Δ)), summed over the integers
    (Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential
    Privacy", NeurIPS 2020, Thm 7).
    """
    z = np.arange(-math.ceil(40 * sigma) - sensitivity, math.ceil(40 * sigma) + 2 * sensitivity + 1)
    log_weights = -(z.astype(float) ** 2) / (2 * sigma**2)
    p = np.exp(log_weights - log_weights.max())
    p /= p.sum()
    shifted = np.concatenate([np.zeros(sensitivity), p[:-sensitivity]])
    return float(np.maximum(p - math.exp(epsilon) * shifted, 0.0).sum())


def discrete_gaussian_sigma(epsilon: float, delta: float, sensitivity: int = 1) -> float:
    """Return the smallest σ whose discrete Gaussian is (ε, δ)-DP for sensitivity Δ (root of CKS Thm 7)."""
    from scipy.optimize import brentq

    return brentq(lambda s: discrete_gaussian_delta(epsilon, s, sensitivity) - delta, 0.05, 1e4, xtol=1e-10) + 1e-9


def discrete_gaussian(sigma: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Return `size` draws of N_Z(0, σ²): discrete Laplace proposals with rejection (CKS Alg. 3), vectorized.

    Proposal Y ~ DLap(t), t = ⌊σ⌋ + 1, accepted with probability
    exp(−(|Y| − σ²/t)²/(2σ²)). Exact in law up to the double-precision
    rounding of that probability and of the geometric parameter (CKS use
    exact rational arithmetic; this does not).
    """
    t = math.floor(sigma) + 1
    out = np.empty(0, dtype=np.int64)
    while len(out) < size:
        batch = 2 * (size - len(out)) + 16
        y = discrete_laplace(1.0 / t, batch, rng)
        keep = rng.random(batch) < np.exp(-((np.abs(y) - sigma**2 / t) ** 2) / (2 * sigma**2))
        out = np.concatenate([out, y[keep]])
    return out[:size]


def _eps(owner: str, epsilon: float) -> float:
    return check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)


@register("staircase", expected="consistent")
def staircase(*, epsilon: float = 1.0, sensitivity: float = 1.0, gamma: float | None = None) -> Mechanism:
    """Return sum(data) + staircase noise: ε-DP for records in [0, Δ] (the optimal noise for ℓ1 cost).

    Geng & Viswanath, "The Optimal Noise-Adding Mechanism in Differential
    Privacy", IEEE Trans. Inf. Theory 2016, Thm 3; γ defaults to γ*.
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps = _eps("staircase", epsilon)
    sens = check_real(sensitivity, "sensitivity", "staircase", low=0.0, low_open=True)
    g = optimal_gamma(eps) if gamma is None else check_real(gamma, "gamma", "staircase", low=0.0, high=1.0)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.sum(data) + staircase_noise(eps, sens, g, size, rng)

    return Mechanism(
        name="staircase",
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=EpsilonDeltaDpEvent(eps, 0.0),
        default_pair=sum_pair(sens),
        neighbours=records_in(0.0, sens),
        null_record=0.0,
        params={"epsilon": eps, "sensitivity": sens, "gamma": g},
        description="Staircase noise (Geng & Viswanath) on a sum of records in [0, Δ].",
    )


@register("discrete_gaussian", expected="consistent")
def discrete_gaussian_mechanism(*, epsilon: float = 1.0, delta: float = 1e-5, sensitivity: int = 1) -> Mechanism:
    """Return sum(data) + N_Z(0, σ²), σ the smallest with exact δ(ε) ≤ δ: (ε, δ)-DP for integer records in [0, Δ].

    Canonne, Kamath, Steinke, NeurIPS 2020, Thm 7 (calibration) and Alg. 3 (sampler).
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps = _eps("discrete_gaussian", epsilon)
    dlt = check_real(delta, "delta", "discrete_gaussian", low=0.0, high=1.0, low_open=True, high_open=True)
    sens = check_int(sensitivity, "sensitivity", "discrete_gaussian")
    sigma = discrete_gaussian_sigma(eps, dlt, sens)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return int(np.sum(data)) + discrete_gaussian(sigma, size, rng)

    d0, d1 = sum_pair(sens)
    return Mechanism(
        name="discrete_gaussian",
        sampler=sample,
        claim=Claim(eps, dlt),
        event=EpsilonDeltaDpEvent(eps, dlt),
        default_pair=(d0.astype(int), d1.astype(int)),
        neighbours=records_in(0, sens, integer=True),
        null_record=0,
        params={"epsilon": eps, "delta": dlt, "sensitivity": sens, "sigma": sigma},
        description="Discrete Gaussian noise (Canonne, Kamath, Steinke) on an integer sum.",
    )


@register("truncated_geometric", expected="consistent")
def truncated_geometric(*, epsilon: float = 1.0, num_records: int = 5) -> Mechanism:
    """Return a count of 0/1 records + two-sided geometric noise, clamped to [0, n]: ε-DP.

    Ghosh, Roughgarden, Sundararajan, "Universally Utility-Maximizing
    Privacy Mechanisms", STOC 2009 (clamping is post-processing; at the ends
    the ratio P(Z ≤ 0)/P(Z ≤ −1) is exactly e^ε).
    """
    from dp_accounting import dp_event

    eps = _eps("truncated_geometric", epsilon)
    n = check_int(num_records, "num_records", "truncated_geometric")

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.clip(int(np.sum(data)) + discrete_laplace(eps, size, rng), 0, n)

    d0, d1 = sum_pair(1, n)
    return Mechanism(
        name="truncated_geometric",
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=dp_event.DiscreteLaplaceDpEvent(noise_parameter=eps, sensitivity=1),
        default_pair=(d0.astype(int), d1.astype(int)),
        neighbours=records_in(0, 1, integer=True),
        null_record=0,
        params={"epsilon": eps, "num_records": n},
        description="Two-sided geometric noise on a count, clamped to [0, n].",
    )
