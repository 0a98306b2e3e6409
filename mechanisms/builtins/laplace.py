"""The Laplace mechanism on a bounded sum (Dwork, McSherry, Nissim, Smith, TCC 2006)."""

from __future__ import annotations

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.deferred_event import deferred
from dpaudit.mechanisms.neighbours import records_in
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_real

__all__ = ["laplace", "sum_pair"]


def sum_pair(sensitivity: float, n: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Return the worst-case pair for a sum of records in [0, Δ]: one record 0 versus Δ."""
    d0 = np.zeros(n)
    d1 = d0.copy()
    d1[0] = sensitivity
    return d0, d1


@register("laplace", expected="consistent")
def laplace(*, epsilon: float = 1.0, sensitivity: float = 1.0) -> Mechanism:
    """Return sum(data) + Laplace(Δ/ε) noise: ε-DP for records in [0, Δ] (add/remove).

    Worst-case pair: a record 0 against Δ (the sum moves by Δ).
    """
    eps = check_real(epsilon, "epsilon", "laplace", low=0.0, low_open=True)
    delta_1 = check_real(sensitivity, "sensitivity", "laplace", low=0.0, low_open=True)
    scale = delta_1 / eps

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.laplace(np.sum(data), scale, size)  # the same doubles as sum + Laplace(0, scale), one pass fewer

    return Mechanism(
        name="laplace",
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=deferred("LaplaceDpEvent", noise_multiplier=scale / delta_1),
        default_pair=sum_pair(delta_1),
        neighbours=records_in(0.0, delta_1),
        null_record=0.0,
        params={"epsilon": eps, "sensitivity": delta_1},
        description="Laplace noise of scale Δ/ε on a sum of records in [0, Δ].",
    )
