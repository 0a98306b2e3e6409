"""Inverting a privacy profile: the smallest ε whose δ(ε) is at most a target, rounded up.

Every ε(δ) in `audit.theory` that has no closed form goes through
`smallest_epsilon`, so that a numerical root is never reported below the true
one: the bracket's upper end is returned and checked, which keeps an upper
bound an upper bound.
"""

from __future__ import annotations

import math
from typing import Callable

from scipy.optimize import brentq

_XTOL = 1e-12
_CEILING = 1e4


def smallest_epsilon(delta_of_epsilon: Callable[[float], float], delta: float) -> float:
    """Return the smallest ε ≥ 0 with `delta_of_epsilon(ε) ≤ delta`, never below the true root.

    Sound when `delta_of_epsilon` is non-increasing in ε (every privacy
    profile is: δ(ε) = sup_S P0(S) − e^ε P1(S)). Returns `math.inf` when no ε
    up to 1e4 reaches `delta` (e.g. δ = 0 for a mechanism that is not pure DP).
    """
    if delta_of_epsilon(0.0) <= delta:
        return 0.0
    high = 1.0
    while delta_of_epsilon(high) > delta:
        high *= 2.0
        if high > _CEILING:
            return math.inf
    root = brentq(lambda eps: delta_of_epsilon(eps) - delta, high / 2.0 if high > 1.0 else 0.0, high, xtol=_XTOL)
    step = _XTOL + 4.0 * abs(root) * 2.0**-52
    upper = root + step
    while delta_of_epsilon(upper) > delta:
        step *= 2.0
        upper = min(root + step, high)
    return upper
