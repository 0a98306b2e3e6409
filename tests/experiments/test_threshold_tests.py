"""`threshold_tests`: each of the 2m one-sided limits of m threshold boxes is Clopper–Pearson at β/(2m)."""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.experiments.threshold_tests import certified_epsilon, threshold_boxes
from scipy.stats import beta as beta_dist

REL = 1e-9


def _cp_upper(k: int, n: int, level: float) -> float:
    """Clopper–Pearson one-sided upper limit: BetaInv(1 − level; k + 1, n − k), 1 when k = n (REFERENCES.md §1)."""
    return 1.0 if k == n else float(beta_dist.ppf(1 - level, k + 1, n - k))


def test_each_limit_is_clopper_pearson_at_beta_over_2m():
    rng = np.random.default_rng(7)
    s0, s1 = rng.normal(0, 1, 5000), rng.normal(1, 1, 4000)
    cuts, beta = [-1.0, 0.0, 0.5, 1.0, 2.0], 0.05
    boxes = threshold_boxes(s0, s1, cuts, beta=beta)
    level = beta / (2 * len(cuts))
    for box, t in zip(boxes, cuts):
        fp, fn = int(np.sum(s0 >= t)), int(np.sum(s1 < t))
        assert (box.fpr, box.fnr) == (fp / len(s0), fn / len(s1))
        assert box.fpr_high == pytest.approx(_cp_upper(fp, len(s0), level), rel=REL)
        assert box.fnr_high == pytest.approx(_cp_upper(fn, len(s1), level), rel=REL)
    # The best ε over the family is KOV's at the upper corners.
    best = max(max(np.log((1 - b.fpr_high) / b.fnr_high), np.log((1 - b.fnr_high) / b.fpr_high)) for b in boxes)
    assert certified_epsilon(boxes, 0.0) == pytest.approx(max(best, 0.0), rel=REL)
