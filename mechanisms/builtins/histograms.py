"""Noisy histograms: Laplace noise on the counts of categorical records, or on a vector of counts.

Records (replace-one): replacing one record moves one count down and another
up: ℓ1 sensitivity 2, so scale 2/ε is ε-DP (Dwork & Roth §3.3). Scale 1/ε
(sensitivity 1, right only for add/remove) makes the replace-one privacy loss
2ε: the classic bug that forgets two bins change.

Counts (StatDP's noisy histograms): Ding, Wang, Wang, Zhang, Kifer,
"Detecting Violations of Differential Privacy", CCS 2018, Algs 9 and 10
(DP-Sniper's NoisyHist1/2). Data are the bin counts; adding or removing one
record changes one count by 1 (neighbours: ‖d0 − d1‖₁ ≤ 1). Default pair:
(1, …, 1) against (0, 1, …, 1). The bug uses ε as the noise scale.
"""

from __future__ import annotations

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.neighbours import answers_within, categories_in
from dpaudit.mechanisms.records import CategoryRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = ["histogram_wrong_sensitivity", "laplace_histogram", "noisy_hist", "noisy_hist_scale_epsilon"]


def _histogram_mechanism(name: str, eps: float, bins: int, scale: float) -> Mechanism:
    from dp_accounting import dp_event

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
        records=CategoryRecords(bins),
        params={"epsilon": eps, "bins": bins},
        description=f"Laplace({scale:g}) noise on each of {bins} counts.",
    )


def _check_records(owner: str, epsilon: float, bins: int) -> tuple[float, int]:
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    return eps, check_int(bins, "bins", owner, low=2)


@register("laplace_histogram", expected="consistent")
def laplace_histogram(*, epsilon: float = 1.0, bins: int = 5) -> Mechanism:
    """Return a histogram of integer records in [0, bins) + Laplace(2/ε) per count: ε-DP (replace-one)."""
    eps, bins = _check_records("laplace_histogram", epsilon, bins)
    return _histogram_mechanism("laplace_histogram", eps, bins, 2.0 / eps)


@register("histogram_wrong_sensitivity", expected="violation")
def histogram_wrong_sensitivity(*, epsilon: float = 1.0, bins: int = 5) -> Mechanism:
    """BUGGY: Laplace(1/ε) per count under replace-one; the true ε is 2ε."""
    eps, bins = _check_records("histogram_wrong_sensitivity", epsilon, bins)
    return _histogram_mechanism("histogram_wrong_sensitivity", eps, bins, 1.0 / eps)


def _hist(name: str, eps: float, bins: int, scale: float, text: str) -> Mechanism:
    from dp_accounting import dp_event

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
        description=text,
    )


def _check_counts(owner: str, epsilon: float, bins: int) -> tuple[float, int]:
    return check_real(epsilon, "epsilon", owner, low=0.0, low_open=True), check_int(bins, "bins", owner)


@register("noisy_hist", expected="consistent")
def noisy_hist(*, epsilon: float = 1.0, bins: int = 5) -> Mechanism:
    """Return each count + Laplace(1/ε): ε-DP when one record changes one count (StatDP Alg 9)."""
    eps, bins = _check_counts("noisy_hist", epsilon, bins)
    return _hist("noisy_hist", eps, bins, 1.0 / eps, "Counts + Laplace(1/ε) (StatDP NoisyHist1).")


@register("noisy_hist_scale_epsilon", expected="violation")
def noisy_hist_scale_epsilon(*, epsilon: float = 0.5, bins: int = 5) -> Mechanism:
    """BUGGY: each count + Laplace(ε) instead of Laplace(1/ε) (StatDP Alg 10).

    True ε = 1/ε, above the claim whenever ε < 1 (10 at ε = 0.1; DP-Sniper certifies 4.60).
    """
    eps, bins = _check_counts("noisy_hist_scale_epsilon", epsilon, bins)
    return _hist("noisy_hist_scale_epsilon", eps, bins, eps, "Counts + Laplace(ε) (StatDP NoisyHist2).")
