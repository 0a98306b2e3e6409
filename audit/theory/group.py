"""Group privacy: what (ε, δ)-DP says about datasets k records apart."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from dpaudit.validation import check_delta, check_epsilon, check_int

__all__ = ["group_epsilon", "group_privacy"]

_GRID = 48


def _group_factor(epsilon: float, group_size: int) -> float:
    """Return Σ_{i<k} e^{iε} = (e^{kε} − 1)/(e^ε − 1) (k when ε = 0), the factor on δ in group privacy."""
    if epsilon == 0.0:
        return float(group_size)
    if group_size * epsilon > 700.0:
        return math.inf
    return math.expm1(group_size * epsilon) / math.expm1(epsilon)


def group_privacy(*, epsilon: float, delta: float = 0.0, group_size: int) -> tuple[float, float]:
    """Return (kε, δ(e^{kε} − 1)/(e^ε − 1)): an (ε, δ)-DP mechanism on datasets k records apart.

    Apply the (ε, δ) inequality along a path of k neighbours:
    P0(S) ≤ e^ε P1(S) + δ ≤ … ≤ e^{kε} Pk(S) + δ Σ_{i<k} e^{iε}. Dwork & Roth,
    "The Algorithmic Foundations of Differential Privacy", 2014, Thm 2.2
    (pure case); Vadhan, "The Complexity of Differential Privacy", 2017,
    Lemma 2.2 (approximate case). δ is capped at 1.
    """
    epsilon = check_epsilon(epsilon, "epsilon", "group_privacy")
    delta = check_delta(delta, "delta", "group_privacy")
    k = check_int(group_size, "group_size", "group_privacy")
    return k * epsilon, min(1.0, delta * _group_factor(epsilon, k)) if delta > 0 else 0.0


def group_epsilon(epsilon_of_delta: Callable[[float], float], *, group_size: int, delta: float) -> float:
    """Return the smallest kε_in found for which group privacy gives (kε_in, ≤ δ) for the k-group.

    `epsilon_of_delta` is the single-record profile ε_in(δ_in) (an upper
    bound). Every candidate δ_in (0 and a geometric grid up to δ/k) is checked
    exactly with `group_privacy`'s δ_in (e^{kε_in} − 1)/(e^{ε_in} − 1) ≤ δ, so
    the result is a valid upper bound, though the grid may miss the optimum
    by a little. Returns inf when no candidate is finite.
    """
    k = check_int(group_size, "group_size", "group_epsilon")
    delta = check_delta(delta, "delta", "group_epsilon")
    best = k * epsilon_of_delta(0.0)
    if delta == 0.0:
        return best
    for delta_in in np.geomspace(delta / k * 1e-9, delta / k, _GRID):
        eps_in = epsilon_of_delta(float(delta_in))
        if math.isfinite(eps_in) and delta_in * _group_factor(eps_in, k) <= delta:
            best = min(best, k * eps_in)
    return best
