"""Composition of k (ε, δ)-DP mechanisms: basic, advanced, optimal (KOV), and numerical."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from dpaudit.audit.theory.conversions import pure_to_rdp
from dpaudit.audit.theory.event_pld import privacy_parameters_pld
from dpaudit.audit.theory.roots import smallest_epsilon
from dpaudit.validation import check_delta, check_epsilon, check_int, check_real

__all__ = [
    "RDP_ORDERS",
    "advanced_composition",
    "basic_composition",
    "kov_closed_form",
    "kov_delta",
    "kov_epsilon",
    "kov_heterogeneous",
    "pld_composition_epsilon",
    "rdp_composition_epsilon",
]

RDP_ORDERS = tuple(np.concatenate([np.linspace(1.02, 3.0, 100), np.linspace(3.1, 20.0, 170), np.geomspace(21.0, 4096.0, 120)]))


def basic_composition(*, epsilon: float, delta: float = 0.0, k: int) -> tuple[float, float]:
    """Return (kε, kδ): basic composition of k (ε, δ)-DP mechanisms (Dwork, Kenthapadi, McSherry,
    Mironov, Naor, EUROCRYPT 2006; Dwork & Roth 2014, Thm 3.16). δ is capped at 1."""
    epsilon = check_epsilon(epsilon, "epsilon", "basic_composition")
    delta = check_delta(delta, "delta", "basic_composition")
    k = check_int(k, "k", "basic_composition")
    return k * epsilon, min(1.0, k * delta)


def advanced_composition(*, epsilon: float, delta: float = 0.0, k: int, delta_prime: float) -> tuple[float, float]:
    """Return (√(2k ln(1/δ')) ε + kε(e^ε − 1), kδ + δ'): advanced composition.

    Dwork, Rothblum, Vadhan, "Boosting and Differential Privacy", FOCS 2010,
    Thm III.3 (Dwork & Roth 2014, Thm 3.20). Holds for adaptive composition.
    """
    epsilon = check_epsilon(epsilon, "epsilon", "advanced_composition")
    delta = check_delta(delta, "delta", "advanced_composition")
    k = check_int(k, "k", "advanced_composition")
    delta_prime = check_real(delta_prime, "delta_prime", "advanced_composition", low=0.0, high=1.0, low_open=True)
    growth = k * epsilon * math.expm1(epsilon) if epsilon < 700.0 else math.inf  # e^ε overflows a double above ~709
    eps = math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) * epsilon + growth
    return eps, min(1.0, k * delta + delta_prime)


def kov_delta(*, epsilon: float, delta: float = 0.0, k: int, target_epsilon: float) -> float:
    """Return the exact δ at `target_epsilon` of the k-fold composition of (ε, δ)-DP mechanisms.

    Kairouz, Oh, Viswanath, "The Composition Theorem for Differential
    Privacy", ICML 2015 (arXiv 1311.0776), Thm 3.3, extended to every target
    ε: the worst case is k-fold randomized response with a δ atom, whose
    profile is 1 − (1 − δ)^k (1 − Σ_ℓ C(k, ℓ) [e^{(k−ℓ)ε} − e^{ε' + ℓε}]₊ / (1 + e^ε)^k).
    At ε' = (k − 2i)ε this is the theorem's δ_i. Tight; summed in log space.
    """
    from scipy.special import gammaln, logsumexp

    epsilon = check_epsilon(epsilon, "epsilon", "kov_delta")
    delta = check_delta(delta, "delta", "kov_delta")
    k = check_int(k, "k", "kov_delta")
    target = check_epsilon(target_epsilon, "target_epsilon", "kov_delta")
    ell = np.arange(k + 1)
    loss = (k - 2 * ell) * epsilon
    keep = loss > target
    rr = 0.0
    if keep.any():
        ell = ell[keep]
        log_terms = (
            gammaln(k + 1) - gammaln(ell + 1) - gammaln(k - ell + 1)
            + (k - ell) * epsilon
            + np.log(-np.expm1(target - loss[keep]))
            - k * np.logaddexp(0.0, epsilon)
        )
        rr = min(1.0, float(np.exp(logsumexp(log_terms))))
    survive = math.exp(k * math.log1p(-delta)) if delta > 0 else 1.0
    return min(1.0, 1.0 - survive * (1.0 - rr))


def kov_epsilon(*, epsilon: float, delta: float = 0.0, k: int, target_delta: float) -> float:
    """Return the exact (optimal) ε at `target_delta` of k-fold (ε, δ)-DP composition (KOV Thm 3.3).

    The smallest ε' with `kov_delta(ε') ≤ target_delta`, found by brentq and
    rounded up; inf when target_delta < 1 − (1 − δ)^k.
    """
    target_delta = check_delta(target_delta, "target_delta", "kov_epsilon")
    return smallest_epsilon(
        lambda eps: kov_delta(epsilon=epsilon, delta=delta, k=k, target_epsilon=eps), target_delta
    )


def kov_closed_form(*, epsilon: float, delta: float = 0.0, k: int, delta_prime: float) -> tuple[float, float]:
    """Return KOV's closed form (Thm 3.4): (ε̃, 1 − (1 − δ)^k (1 − δ')) with
    ε̃ = min{kε, kε(e^ε − 1)/(e^ε + 1) + ε√(2k log(e + √(kε²)/δ')),
    kε(e^ε − 1)/(e^ε + 1) + ε√(2k log(1/δ'))}.

    Kairouz, Oh, Viswanath, ICML 2015 (arXiv 1311.0776), Thm 3.4.
    """
    epsilon = check_epsilon(epsilon, "epsilon", "kov_closed_form")
    k = check_int(k, "k", "kov_closed_form")
    return kov_heterogeneous(epsilons=[epsilon] * k, deltas=[check_delta(delta, "delta", "kov_closed_form")] * k,
                             delta_prime=delta_prime)


def kov_heterogeneous(*, epsilons: Sequence[float], deltas: Sequence[float] | None = None,
                      delta_prime: float) -> tuple[float, float]:
    """Return KOV's heterogeneous bound (Thm 3.5) for mechanisms (ε_ℓ, δ_ℓ)-DP, ℓ = 1..k.

    ε̃ = min{Σε_ℓ, Σ ε_ℓ(e^{ε_ℓ} − 1)/(e^{ε_ℓ} + 1) + √(2 Σε_ℓ² log(e + √(Σε_ℓ²)/δ')),
    Σ ε_ℓ(e^{ε_ℓ} − 1)/(e^{ε_ℓ} + 1) + √(2 Σε_ℓ² log(1/δ'))}, at total δ
    1 − (1 − δ') Π(1 − δ_ℓ). Kairouz, Oh, Viswanath, ICML 2015, Thm 3.5.
    """
    eps = np.array([check_epsilon(e, "epsilons", "kov_heterogeneous") for e in epsilons], dtype=float)
    dels = np.zeros_like(eps) if deltas is None else np.array(
        [check_delta(d, "deltas", "kov_heterogeneous") for d in deltas], dtype=float)
    delta_prime = check_real(delta_prime, "delta_prime", "kov_heterogeneous", low=0.0, high=1.0, low_open=True)
    squares = float(np.sum(eps**2))
    drift = float(np.sum(eps * np.tanh(eps / 2.0)))
    candidates = [
        float(eps.sum()),
        drift + math.sqrt(2.0 * squares * math.log(math.e + math.sqrt(squares) / delta_prime)),
        drift + math.sqrt(2.0 * squares * math.log(1.0 / delta_prime)),
    ]
    total_delta = 1.0 - (1.0 - delta_prime) * math.exp(float(np.sum(np.log1p(-dels))))
    return min(candidates), min(1.0, total_delta)


def pld_composition_epsilon(*, epsilon: float, delta: float = 0.0, k: int, target_delta: float) -> float:
    """Return ε at `target_delta` of k-fold (ε, δ)-DP composition by dp_accounting's PLD (numerical).

    The pessimistic PLD of a generic (ε, δ)-DP mechanism self-composed k
    times; agrees with `kov_epsilon` up to discretization (Meiser &
    Mohammadi, CCS 2018; Koskela, Jälkö, Honkela, AISTATS 2020).
    """
    epsilon = check_epsilon(epsilon, "epsilon", "pld_composition_epsilon")
    delta = check_delta(delta, "delta", "pld_composition_epsilon")
    k = check_int(k, "k", "pld_composition_epsilon")
    target_delta = check_delta(target_delta, "target_delta", "pld_composition_epsilon")
    return float(privacy_parameters_pld(epsilon, delta).self_compose(k).get_epsilon_for_delta(target_delta))


def rdp_composition_epsilon(*, epsilon: float, k: int, target_delta: float) -> float:
    """Return ε at `target_delta` of k-fold pure ε-DP composition through Rényi DP (cross-check).

    Each mechanism is (α, ε̂(α))-RDP by the tight pure → RDP conversion
    (Steinke 2024); RDP adds up under composition (Mironov, CSF 2017,
    Prop. 1); dp_accounting's `compute_epsilon` applies the improved
    RDP → (ε, δ) conversion (Canonne, Kamath, Steinke 2020, Prop. 12). Never
    below the optimal `kov_epsilon`.
    """
    from dp_accounting.rdp import rdp_privacy_accountant

    epsilon = check_epsilon(epsilon, "epsilon", "rdp_composition_epsilon")
    k = check_int(k, "k", "rdp_composition_epsilon")
    target_delta = check_delta(target_delta, "target_delta", "rdp_composition_epsilon")
    rdp = [k * pure_to_rdp(epsilon=epsilon, alpha=a) for a in RDP_ORDERS]
    eps, _ = rdp_privacy_accountant.compute_epsilon(RDP_ORDERS, rdp, target_delta)
    return float(eps)
