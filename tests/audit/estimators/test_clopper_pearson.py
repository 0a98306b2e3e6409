"""`rate_upper_bound` is statsmodels' Clopper–Pearson upper end, bit for bit, with only the end it needs computed."""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.audit.estimators.clopper_pearson import _raise_to_root, rate_upper_bound


@pytest.mark.parametrize("n", [1, 10, 5_000, 900_000, 10**9])
def test_rate_upper_bound_is_statsmodels_upper_end(n):
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    rng = np.random.default_rng(n)
    counts = np.concatenate([[0, n], rng.integers(0, n + 1, 200), rng.random(50) * n])  # projected counts are real
    for beta in (0.005, 0.025, 0.05, 0.25):
        _, upper = proportion.proportion_confint(counts, n, alpha=2 * beta, method="beta")
        expected = _raise_to_root(counts, np.asarray(float(n)), beta,
                                  np.where(counts >= n, 1.0, np.nan_to_num(upper, nan=1.0)))
        assert np.array_equal(rate_upper_bound(counts, n, beta), expected)
