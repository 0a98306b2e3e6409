"""Conversions between pure DP, Rényi DP, zCDP and (ε, δ)-DP."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_epsilon, check_real

__all__ = ["pure_to_rdp", "pure_to_zcdp", "rdp_to_dp", "zcdp_delta", "zcdp_to_dp", "zcdp_to_dp_simple"]

_LOG_ALPHA_MAX = 12.0


def pure_to_rdp(*, epsilon: float, alpha: float) -> float:
    """Return ε̂(α) = ε − log((1 + e^{−ε})/(1 + e^{−(2α−1)ε}))/(α − 1): ε-DP ⇒ (α, ε̂(α))-RDP, tight.

    Steinke, "Tight RDP & zCDP Bounds from Pure DP", differentialprivacy.org,
    2024, Thm 4 (attained by randomized response).
    """
    epsilon = check_epsilon(epsilon, "epsilon", "pure_to_rdp")
    alpha = check_real(alpha, "alpha", "pure_to_rdp", low=1.0, low_open=True)
    if epsilon == 0.0:
        return 0.0
    gap = -math.exp(-epsilon) * math.expm1(-2.0 * (alpha - 1.0) * epsilon)
    log_ratio = math.log1p(gap / (1.0 + math.exp(-(2.0 * alpha - 1.0) * epsilon)))
    return epsilon - log_ratio / (alpha - 1.0)


def pure_to_zcdp(*, epsilon: float) -> float:
    """Return ρ = ε(e^ε − 1)/(e^ε + 1) (≤ ε²/2): ε-DP ⇒ ρ-zCDP, tight.

    Steinke, "Tight RDP & zCDP Bounds from Pure DP", differentialprivacy.org,
    2024, Thm 5.
    """
    epsilon = check_epsilon(epsilon, "epsilon", "pure_to_zcdp")
    return epsilon * math.tanh(epsilon / 2.0)


def zcdp_to_dp_simple(*, rho: float, delta: float) -> float:
    """Return ε = ρ + 2√(ρ log(1/δ)): ρ-zCDP ⇒ (ε, δ)-DP for every δ > 0.

    Bun & Steinke, "Concentrated Differential Privacy: Simplifications,
    Extensions, and Lower Bounds", TCC 2016 (arXiv 1605.02065), Prop. 1.3.
    """
    rho = check_real(rho, "rho", "zcdp_to_dp_simple", low=0.0)
    delta = _open_delta(delta, "zcdp_to_dp_simple")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def rdp_to_dp(*, alphas: Sequence[float], rdp: Sequence[float], delta: float) -> float:
    """Return min over α of ε_α + log((α − 1)/α) − (log δ + log α)/(α − 1): (α, ε_α)-RDP ⇒ (ε, δ)-DP.

    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential
    Privacy", NeurIPS 2020 (arXiv 2004.00010), Prop. 12; Balle, Barthe,
    Gaboardi, Hsu, Sato, AISTATS 2020, Thm 21. Each order gives a valid
    bound, so the minimum over the orders given is one. Never below 0.
    """
    delta = _open_delta(delta, "rdp_to_dp")
    a = np.asarray(alphas, dtype=float)
    r = np.asarray(rdp, dtype=float)
    if a.shape != r.shape or a.size == 0 or np.any(a <= 1.0):
        raise InvalidParameterError(
            "The 'alphas' and 'rdp' parameters of rdp_to_dp must be non-empty sequences of the same length "
            f"with every order > 1; got {len(a)} orders and {len(r)} values instead."
        )
    eps = r + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
    return max(0.0, float(np.min(eps)))


def zcdp_to_dp(*, rho: float, delta: float) -> float:
    """Return the smallest ε the RDP conversion gives for ρ-zCDP (ε_α = αρ for all α > 1).

    Canonne, Kamath, Steinke, NeurIPS 2020, Prop. 12 / Cor. 13, optimized
    over α numerically; any α gives a valid bound, so an imperfect optimum
    stays an upper bound. At most `zcdp_to_dp_simple`.
    """
    from scipy.optimize import minimize_scalar

    rho = check_real(rho, "rho", "zcdp_to_dp", low=0.0)
    delta = _open_delta(delta, "zcdp_to_dp")
    if rho == 0.0:
        return 0.0

    def eps_at(log_alpha_minus_one: float) -> float:
        alpha = 1.0 + math.exp(log_alpha_minus_one)
        return alpha * rho + math.log1p(-1.0 / alpha) - (math.log(delta) + math.log(alpha)) / (alpha - 1.0)

    best = minimize_scalar(eps_at, bounds=(-12.0, _LOG_ALPHA_MAX), method="bounded", options={"xatol": 1e-10})
    return max(0.0, min(float(best.fun), zcdp_to_dp_simple(rho=rho, delta=delta)))


def zcdp_delta(*, rho: float, epsilon: float) -> float:
    """Return δ(ε) = inf_{α>1} e^{(α−1)(αρ−ε)} (1 − 1/α)^α / (α − 1) for ρ-zCDP.

    Canonne, Kamath, Steinke, NeurIPS 2020 (arXiv 2004.00010), Cor. 13.
    Optimized numerically in log space; every α is valid, so the result is an
    upper bound. Capped at 1.
    """
    from scipy.optimize import minimize_scalar

    rho = check_real(rho, "rho", "zcdp_delta", low=0.0)
    epsilon = check_epsilon(epsilon, "epsilon", "zcdp_delta")
    if rho == 0.0:
        return 0.0

    def log_delta(log_alpha_minus_one: float) -> float:
        alpha = 1.0 + math.exp(log_alpha_minus_one)
        return (alpha - 1.0) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1.0)

    best = minimize_scalar(log_delta, bounds=(-12.0, _LOG_ALPHA_MAX), method="bounded", options={"xatol": 1e-10})
    return math.exp(min(0.0, float(best.fun)))


def _open_delta(delta: object, owner: str) -> float:
    return check_real(delta, "delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
