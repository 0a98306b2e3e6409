"""StatDP's noisy histograms on a vector of counts, and the bug that uses ε as the noise scale.

Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of Differential
Privacy", CCS 2018, Algs 9 and 10 (DP-Sniper's NoisyHist1/2). Data are the
bin counts; adding or removing one record changes one count by 1
(neighbours: ‖d0 − d1‖₁ ≤ 1). Default pair: (1, …, 1) against (0, 1, …, 1).
"""

from __future__ import annotations

import numpy as np
from dp_accounting import dp_event
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.neighbours import answers_within
from dpaudit.mechanisms.registry import register
from dpaudit.mechanisms.validation import check_int, check_real


def _hist(name: str, eps: float, bins: int, scale: float, buggy: bool, text: str) -> Mechanism:
    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(data, dtype=float) + rng.laplace(0.0, scale, (size, bins))

    d1 = np.ones(bins)
    d1[0] = 0.0
    return Mechanism(
        name=name,
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=dp_event.LaplaceDpEvent(noise_multiplier=scale),
        default_pair=(np.ones(bins), d1),
        neighbours=answers_within(1.0, norm=1),
        params={"epsilon": eps, "bins": bins},
        buggy=buggy,
        description=text,
    )


def _check(owner: str, epsilon: float, bins: int) -> tuple[float, int]:
    return check_real(epsilon, "epsilon", owner, low=0.0, low_open=True), check_int(bins, "bins", owner)


@register("noisy_hist")
def noisy_hist(*, epsilon: float = 1.0, bins: int = 5) -> Mechanism:
    """Return each count + Laplace(1/ε): ε-DP when one record changes one count (StatDP Alg 9)."""
    eps, bins = _check("noisy_hist", epsilon, bins)
    return _hist("noisy_hist", eps, bins, 1.0 / eps, False, "Counts + Laplace(1/ε) (StatDP NoisyHist1).")


@register("noisy_hist_scale_epsilon")
def noisy_hist_scale_epsilon(*, epsilon: float = 0.5, bins: int = 5) -> Mechanism:
    """BUGGY: each count + Laplace(ε) instead of Laplace(1/ε) (StatDP Alg 10).

    True ε = 1/ε, above the claim whenever ε < 1 (10 at ε = 0.1; DP-Sniper certifies 4.60).
    """
    eps, bins = _check("noisy_hist_scale_epsilon", epsilon, bins)
    return _hist("noisy_hist_scale_epsilon", eps, bins, eps, True, "Counts + Laplace(ε) (StatDP NoisyHist2).")
