"""The Laplace histogram under replace-one, and the classic bug that forgets two bins change.

Replacing one record moves one count down and another up: ℓ1 sensitivity 2,
so scale 2/ε is ε-DP (Dwork & Roth §3.3). Scale 1/ε (sensitivity 1, right only
for add/remove) makes the replace-one privacy loss 2ε.
"""

from __future__ import annotations

import numpy as np
from dp_accounting import dp_event
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.neighbours import categories_in
from dpaudit.mechanisms.registry import register
from dpaudit.mechanisms.validation import check_int, check_real


def _histogram_mechanism(name: str, eps: float, bins: int, scale: float, buggy: bool) -> Mechanism:
    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        counts = np.bincount(np.asarray(data, dtype=int), minlength=bins).astype(float)
        return counts + rng.laplace(0.0, scale, (size, bins))

    d0 = np.zeros(10, dtype=int)
    d1 = d0.copy()
    d1[0] = 1
    # A record contributes a one-hot count vector (C = 1); dp_accounting's
    # replace-one analysis of Laplace then covers the ℓ1 change of 2.
    event = dp_event.LaplaceDpEvent(noise_multiplier=scale)
    return Mechanism(
        name=name,
        sampler=sample,
        claim=Claim(eps, 0.0, Relation.REPLACE_ONE),
        event=event,
        default_pair=(d0, d1),
        neighbours=categories_in(bins),
        params={"epsilon": eps, "bins": bins},
        buggy=buggy,
        description=f"Laplace({scale:g}) noise on each of {bins} counts.",
    )


def _check(owner: str, epsilon: float, bins: int) -> tuple[float, int]:
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    return eps, check_int(bins, "bins", owner, low=2)


@register("laplace_histogram")
def laplace_histogram(*, epsilon: float = 1.0, bins: int = 5) -> Mechanism:
    """Return a histogram of integer records in [0, bins) + Laplace(2/ε) per count: ε-DP (replace-one)."""
    eps, bins = _check("laplace_histogram", epsilon, bins)
    return _histogram_mechanism("laplace_histogram", eps, bins, 2.0 / eps, False)


@register("histogram_wrong_sensitivity")
def histogram_wrong_sensitivity(*, epsilon: float = 1.0, bins: int = 5) -> Mechanism:
    """BUGGY: Laplace(1/ε) per count under replace-one; the true ε is 2ε."""
    eps, bins = _check("histogram_wrong_sensitivity", epsilon, bins)
    return _histogram_mechanism("histogram_wrong_sensitivity", eps, bins, 1.0 / eps, True)
