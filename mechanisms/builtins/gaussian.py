"""The Gaussian mechanism on a bounded sum, with two calibrations of σ.

- "analytic": the smallest σ that is (ε, δ)-DP, from the exact condition of
  Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy",
  ICML 2018, Thm 8: δ ≥ Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).
- "classical": σ = Δ√(2 ln(1.25/δ))/ε (Dwork & Roth, Thm A.1), proven only
  for ε < 1. `gaussian_classical_large_eps` uses it where it fails.
"""

from __future__ import annotations

import math

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.builtins.laplace import sum_pair
from dpaudit.mechanisms.neighbours import records_in
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_real

__all__ = ["analytic_sigma", "classical_sigma", "gaussian", "gaussian_classical_large_eps", "gaussian_delta", "gdp_log_delta"]


def gdp_log_delta(mu: float, epsilon: float) -> float:
    """Return log δ(ε) of μ-GDP, δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2); μ > 0.

    The one home of this profile in dpaudit: it is the exact profile of the
    Gaussian mechanism with μ = Δ/σ (Balle & Wang, ICML 2018, Thm 8) and of
    μ-GDP (Dong, Roth, Su, arXiv 1905.02383, Cor. 2.13), used by the
    calibration below, by `audit.theory.profiles` and by the GDP estimators.
    Computed in the log domain, so it stays accurate where δ is tiny.
    """
    from scipy.special import log_ndtr

    a = log_ndtr(-epsilon / mu + mu / 2)
    b = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    with np.errstate(divide="ignore"):  # δ(ε) below the smallest double: log δ = −inf
        return float(a + np.log1p(-np.exp(min(b - a, 0.0))))


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Return the exact δ at which N(0, σ²) noise on a Δ-sensitive query is (ε, δ)-DP (Balle & Wang Thm 8)."""
    return math.exp(gdp_log_delta(sensitivity / sigma, epsilon))


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Return the smallest σ with gaussian_delta(ε, σ, Δ) ≤ δ, rounded up (a larger σ is always safe).

    Balle & Wang, ICML 2018, Thm 8 and Alg. 1, solved for σ by brentq; valid
    for every ε > 0, unlike `classical_sigma`.
    """
    from scipy.optimize import brentq

    def excess(sigma: float) -> float:
        return gaussian_delta(epsilon, sigma, sensitivity) - delta

    low, high = sensitivity, sensitivity
    while excess(low) <= 0.0:
        low /= 2.0
    while excess(high) > 0.0:
        high *= 2.0
    sigma = brentq(excess, low, high, xtol=1e-14 * sensitivity, rtol=1e-15)
    step = 1e-13 * sigma
    while excess(sigma) > 0.0:
        sigma += step
        step *= 2.0
    return sigma


def classical_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Return Δ√(2 ln(1.25/δ))/ε (Dwork & Roth Thm A.1; valid only for ε < 1)."""
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def _build(name: str, eps: float, dlt: float, sensitivity: float, sigma: float, text: str) -> Mechanism:
    from dp_accounting import dp_event

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.sum(data) + rng.normal(0.0, sigma, size)

    return Mechanism(
        name=name,
        sampler=sample,
        claim=Claim(eps, dlt),
        event=dp_event.GaussianDpEvent(noise_multiplier=sigma / sensitivity),
        default_pair=sum_pair(sensitivity),
        neighbours=records_in(0.0, sensitivity),
        null_record=0.0,
        params={"epsilon": eps, "delta": dlt, "sensitivity": sensitivity, "sigma": sigma},
        description=text,
    )


def _check(owner: str, epsilon: float, delta: float, sensitivity: float) -> tuple[float, float, float]:
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    dlt = check_real(delta, "delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    return eps, dlt, check_real(sensitivity, "sensitivity", owner, low=0.0, low_open=True)


@register("gaussian", expected="consistent")
def gaussian(
    *, epsilon: float = 1.0, delta: float = 1e-5, sensitivity: float = 1.0, calibration: str = "analytic"
) -> Mechanism:
    """Return sum(data) + N(0, σ²) with σ calibrated to (ε, δ) by `calibration`.

    "analytic" is exact for every ε; "classical" is proven for ε < 1 only, so
    it is refused here above 1 (see `gaussian_classical_large_eps`).
    """
    eps, dlt, sens = _check("gaussian", epsilon, delta, sensitivity)
    if calibration == "analytic":
        sigma = analytic_sigma(eps, dlt, sens)
    elif calibration == "classical" and eps <= 1:
        sigma = classical_sigma(eps, dlt, sens)
    elif calibration == "classical":
        raise InvalidParameterError(
            f"The classical Gaussian calibration is proven only for ε ≤ 1; got epsilon={eps:g} (use calibration='analytic')."
        )
    else:
        raise InvalidParameterError(
            f"The 'calibration' parameter of gaussian must be 'analytic' or 'classical'; got {calibration!r} instead."
        )
    return _build("gaussian", eps, dlt, sens, sigma, f"Gaussian noise, {calibration} calibration.")


@register("gaussian_classical_large_eps", expected="violation", suite_trials=4)
def gaussian_classical_large_eps(*, epsilon: float = 8.0, delta: float = 0.1, sensitivity: float = 1.0) -> Mechanism:
    """BUGGY: σ = Δ√(2 ln(1.25/δ))/ε used for ε > 1, outside its proof.

    At the default (8, 0.1) σ = 0.281Δ and the exact ε at δ = 0.1 is 10.05
    (Balle & Wang Thm 8; `dpaudit bounds gaussian --sigma 0.281 --delta 0.1`).
    """
    eps, dlt, sens = _check("gaussian_classical_large_eps", epsilon, delta, sensitivity)
    sigma = classical_sigma(eps, dlt, sens)
    return _build(
        "gaussian_classical_large_eps", eps, dlt, sens, sigma,
        "Classical Gaussian σ used for ε > 1 (only proven for ε < 1).",
    )
