"""A fixed family of threshold tests on a score, with simultaneous Clopper–Pearson boxes.

The tests S_t = {score ≥ t} for thresholds fixed before sampling need no
selection split: their counts are binomial, and a union bound over the
family (each of the 2m one-sided limits at β/(2m)) makes every box hold at
once with probability ≥ 1 − β (Jagielski, Ullman, Oprea, NeurIPS 2020).
So the best ε over the family, at any δ, is a certified lower bound.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from dpaudit.audit.estimators.clopper_pearson import epsilon_from_rates
from dpaudit.audit.results.plots import RateBox, rate_box

__all__ = ["certified_epsilon", "threshold_boxes"]


def threshold_boxes(scores0: np.ndarray, scores1: np.ndarray, thresholds: Sequence[float], *, beta: float) -> list[RateBox]:
    """Return one `RateBox` per threshold t for S_t = {score ≥ t}: FPR on `scores0`, FNR on `scores1`.

    The confidence β is split evenly over the thresholds (union bound).
    """
    s0, s1 = np.sort(scores0), np.sort(scores1)
    t = np.asarray(thresholds, dtype=float)
    fp = len(s0) - np.searchsorted(s0, t, side="left")
    fn = np.searchsorted(s1, t, side="left")
    share = beta / len(t)
    return [rate_box(int(a), len(s0), int(b), len(s1), beta=share) for a, b in zip(fp, fn)]


def certified_epsilon(boxes: Sequence[RateBox], delta: float) -> float:
    """Return the best certified ε at `delta` over a family of boxes from `threshold_boxes`."""
    fpr = np.array([b.fpr_high for b in boxes])
    fnr = np.array([b.fnr_high for b in boxes])
    return float(np.max(epsilon_from_rates(fpr, fnr, delta)))
