"""k-ary randomized response (Warner 1965; k-RR of Kairouz, Oh, Viswanath 2014)."""

from __future__ import annotations

import math

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.neighbours import categories_in
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_epsilon, check_int

__all__ = ["keep_probability", "randomized_response"]


def keep_probability(epsilon: float, k: int) -> float:
    """Return P[report the true value] = e^ε/(e^ε + k − 1), which makes k-RR exactly ε-LDP."""
    return 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))


def _randomize(values: np.ndarray, epsilon: float, k: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Return `size` independent k-RR reports of each entry of `values` (shape (size, len(values)))."""
    keep = rng.random((size, len(values))) < keep_probability(epsilon, k)
    other = (values + rng.integers(1, k, (size, len(values)))) % k
    return np.where(keep, values, other)


@register("randomized_response", expected="consistent")
def randomized_response(*, epsilon: float = 1.0, k: int = 2) -> Mechanism:
    """Return k-ary randomized response applied to each record (integers in [0, k)).

    ε-DP for changing one record (replace-one, local model). Output: one report
    per record. Worst-case pair: one record 0 against 1.
    """
    from dp_accounting import dp_event

    eps = check_epsilon(epsilon, "epsilon", "randomized_response")
    k = check_int(k, "k", "randomized_response", low=2)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return _randomize(np.asarray(data, dtype=int), eps, k, size, rng)

    return Mechanism(
        name="randomized_response",
        sampler=sample,
        claim=Claim(eps, 0.0, Relation.REPLACE_ONE),
        event=dp_event.RandomizedResponseDpEvent(noise_parameter=k / (math.exp(eps) + k - 1), num_buckets=k),
        default_pair=(np.array([0]), np.array([1])),
        neighbours=categories_in(k),
        params={"epsilon": eps, "k": k},
        description=f"{k}-ary randomized response on each record.",
    )
