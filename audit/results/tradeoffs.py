"""Trade-off curves (f-DP) of the basic mechanisms and of optimal composition, for plots.

A trade-off curve f maps a test's FPR α to the smallest FNR any test can
have at that FPR; a mechanism's observed (FPR, FNR) points always lie on or
above it (Dong, Roth, Su, "Gaussian Differential Privacy", arXiv 1905.02383,
Def. 2.1). The curves here are symmetric, so the points also lie on or below
1 − f(1 − α).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

import numpy as np
from dpaudit.audit.theory.composition import kov_delta
from dpaudit.audit.theory.profiles import epsilon_delta_tradeoff, gdp_tradeoff
from dpaudit.validation import check_delta, check_epsilon, check_int

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["TradeOff", "event_tradeoff", "kov_tradeoff", "laplace_tradeoff", "randomized_response_tradeoff"]

TradeOff = Callable[[np.ndarray], np.ndarray]


def laplace_tradeoff(alpha: np.ndarray | float, *, epsilon0: float) -> np.ndarray:
    """Return the trade-off curve of Lap(0, b) against Lap(Δ, b), ε0 = Δ/b (vectorized over α).

    f(α) = 1 − e^ε0 α for α < e^−ε0/2, e^−ε0/(4α) for α ≤ 1/2, e^−ε0 (1 − α)
    above: the threshold tests on the output, optimal by Neyman–Pearson
    (the Laplace curve of Dong, Roth, Su, arXiv 1905.02383).
    """
    eps = check_epsilon(epsilon0, "epsilon0", "laplace_tradeoff")
    a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
    middle = math.exp(-eps) / (4.0 * np.maximum(a, 1e-300))
    return np.where(a < math.exp(-eps) / 2.0, 1.0 - math.exp(eps) * a, np.where(a <= 0.5, middle, math.exp(-eps) * (1.0 - a)))


def randomized_response_tradeoff(alpha: np.ndarray | float, *, epsilon0: float, num_buckets: int = 2) -> np.ndarray:
    """Return the trade-off curve of k-ary randomized response for a changed input (vectorized over α).

    With p = e^ε0/(e^ε0 + k − 1) and q = 1/(e^ε0 + k − 1), the optimal
    (randomized) tests interpolate the vertices (0, 1), (q, 1 − p),
    (1 − p, q), (1, 0); for k = 2 this is the (ε0, 0)-DP boundary (Kairouz,
    Oh, Viswanath, ICML 2015, §2).
    """
    eps = check_epsilon(epsilon0, "epsilon0", "randomized_response_tradeoff")
    k = check_int(num_buckets, "num_buckets", "randomized_response_tradeoff", low=2)
    q = 1.0 / (math.exp(eps) + k - 1)
    p = 1.0 - (k - 1) * q
    a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
    return np.interp(a, [0.0, q, 1.0 - p, 1.0], [1.0, 1.0 - p, q, 0.0])


def kov_tradeoff(alpha: np.ndarray | float, *, epsilon: float, delta: float = 0.0, k: int) -> np.ndarray:
    """Return the boundary of the k-fold composed (ε, δ) privacy region (vectorized over α).

    Kairouz, Oh, Viswanath, ICML 2015 (arXiv 1311.0776), Thm 3.3: the
    composed region is the intersection over i = 0..⌊k/2⌋ of the
    ((k − 2i)ε, δ_i)-regions, δ_i from `kov_delta`; attained by k-fold
    randomized response (with a δ atom).
    """
    epsilon = check_epsilon(epsilon, "epsilon", "kov_tradeoff")
    delta = check_delta(delta, "delta", "kov_tradeoff")
    k = check_int(k, "k", "kov_tradeoff")
    curves = []
    for i in range(k // 2 + 1):
        eps_i = (k - 2 * i) * epsilon
        delta_i = kov_delta(epsilon=epsilon, delta=delta, k=k, target_epsilon=eps_i)
        curves.append(epsilon_delta_tradeoff(alpha, epsilon=eps_i, delta=min(delta_i, 1.0)))
    return np.maximum.reduce(curves)


def event_tradeoff(event: dp_event.DpEvent, *, relation: str = "add-remove") -> tuple[TradeOff, str] | None:
    """Return (trade-off curve, label) of a Laplace, Gaussian or randomized-response event, else None.

    Noise multipliers are relative to one record's bound C, as in
    dp_accounting: replace-one doubles the sensitivity. Gaussian noise is
    μ-GDP with μ = Δ/σ (Dong, Roth, Su, arXiv 1905.02383, Thm 2.7).
    """
    from dp_accounting import dp_event

    sensitivity = 2.0 if getattr(relation, "value", relation) == "replace-one" else 1.0
    if isinstance(event, dp_event.LaplaceDpEvent) and event.noise_multiplier > 0:
        eps0 = sensitivity / event.noise_multiplier
        return (lambda a: laplace_tradeoff(a, epsilon0=eps0)), f"Laplace trade-off (ε0 = {eps0:.3g})"
    if isinstance(event, dp_event.GaussianDpEvent) and event.noise_multiplier > 0:
        mu = sensitivity / event.noise_multiplier
        return (lambda a: gdp_tradeoff(a, mu=mu)), f"Gaussian trade-off (μ = {mu:.3g})"
    if isinstance(event, dp_event.RandomizedResponseDpEvent) and 0 < event.noise_parameter and event.num_buckets > 1:
        k = event.num_buckets
        eps0 = math.log1p(k * (1.0 - event.noise_parameter) / event.noise_parameter)
        return (
            (lambda a: randomized_response_tradeoff(a, epsilon0=eps0, num_buckets=k)),
            f"{k}-ary randomized response trade-off (ε0 = {eps0:.3g})",
        )
    return None
