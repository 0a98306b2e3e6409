"""The estimator of two-dataset games: an ε lower bound from the held-out counts of a fixed test."""

from __future__ import annotations

from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.rate_ratio import kov_ratio_bounds

__all__ = ["held_out_lower_bound"]


def held_out_lower_bound(evidence: HeldOutCounts, *, delta: float, confidence: float) -> LowerBound:
    """Return the certified ε of `evidence` with probability ≥ `confidence`, assumption-free.

    Without a direction: Kairouz–Oh–Viswanath's ε of (FPR, FNR) at δ with a
    Clopper–Pearson upper bound on each rate at β/2 (β = 1 − confidence;
    Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1). With the direction chosen
    on the selection split: the one ratio interval of that direction, with
    all of β (`rate_ratio`). Sound because the test was fixed before these
    outputs were drawn.
    """
    e, beta = evidence, 1.0 - confidence
    if e.direction is not None:
        epsilon = float(kov_ratio_bounds(e.false_positives, e.n0, e.false_negatives, e.n1, beta)[e.direction])
    else:
        epsilon = float(epsilon_lower_bound(e.false_positives, e.n0, e.false_negatives, e.n1, delta=delta, beta=beta))
    return LowerBound(epsilon=epsilon, confidence=confidence, method="clopper-pearson", delta=delta,
                      trials=e.n0 + e.n1, fpr=e.fpr, fnr=e.fnr, details=e.facts())


