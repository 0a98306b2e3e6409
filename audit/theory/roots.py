"""Inverting a privacy profile: the smallest ε whose δ(ε) is at most a target, rounded up.

Every ε(δ) in `dpaudit.audit.theory` that has no closed form goes through
`smallest_epsilon`, so that a numerical root is never reported below the true
one: the bracket's upper end is returned and checked, which keeps an upper
bound an upper bound.
"""

from __future__ import annotations

import math
from typing import Callable

__all__ = ["smallest_epsilon"]

_XTOL = 1e-12
_CEILING = 1e4


def smallest_epsilon(delta_of_epsilon: Callable[[float], float], delta: float) -> float:
    """Return the smallest ε ≥ 0 with `delta_of_epsilon(ε) ≤ delta`, never below the true root.

    Sound when `delta_of_epsilon` is non-increasing in ε (every privacy
    profile is: δ(ε) = sup_S P0(S) − e^ε P1(S)). Bisection on the predicate
    keeps a feasible upper end at every step, so the value returned always
    satisfies the target, also where the profile is flat at δ = 0 beyond a
    pure-DP ε (where a root finder may return any point of the flat part).
    Returns `math.inf` when no ε up to 1e4 reaches `delta` (e.g. δ = 0 for a
    mechanism that is not pure DP).
    """
    if delta_of_epsilon(0.0) <= delta:
        return 0.0
    high = 1.0
    while delta_of_epsilon(high) > delta:
        high *= 2.0
        if high > _CEILING:
            return math.inf
    low = high / 2.0 if high > 1.0 else 0.0
    while high - low > _XTOL * max(1.0, high):
        mid = 0.5 * (low + high)
        if delta_of_epsilon(mid) <= delta:
            high = mid
        else:
            low = mid
    return high
