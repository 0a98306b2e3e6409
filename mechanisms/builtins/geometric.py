"""The geometric (discrete Laplace) mechanism on an integer sum (Ghosh, Roughgarden, Sundararajan, STOC 2009)."""

from __future__ import annotations

import math

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.builtins.laplace import sum_pair
from dpaudit.mechanisms.neighbours import records_in
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = ["discrete_laplace", "geometric"]


def discrete_laplace(a: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Return `size` draws with P(z) ∝ exp(−a|z|) on the integers (difference of two geometrics)."""
    p = -math.expm1(-a)
    return rng.geometric(p, size) - rng.geometric(p, size)


@register("geometric", expected="consistent")
def geometric(*, epsilon: float = 1.0, sensitivity: int = 1) -> Mechanism:
    """Return sum(data) + discrete Laplace noise with parameter ε/Δ: ε-DP for integer records in [0, Δ]."""
    from dp_accounting import dp_event

    eps = check_real(epsilon, "epsilon", "geometric", low=0.0, low_open=True)
    sens = check_int(sensitivity, "sensitivity", "geometric")
    a = eps / sens

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return int(np.sum(data)) + discrete_laplace(a, size, rng)

    d0, d1 = sum_pair(sens)
    return Mechanism(
        name="geometric",
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=dp_event.DiscreteLaplaceDpEvent(noise_parameter=a, sensitivity=sens),
        default_pair=(d0.astype(int), d1.astype(int)),
        neighbours=records_in(0, sens, integer=True),
        null_record=0,
        params={"epsilon": eps, "sensitivity": sens},
        description="Two-sided geometric noise with parameter ε/Δ on an integer sum.",
    )
