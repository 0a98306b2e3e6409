"""`sorted_quantile` gives numpy.quantile's doubles from sorted values; NaiveBayes bin counts from sorted values equal bincount's."""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.attacks.output_scorers import bin_counts
from dpaudit.attacks.sorted_quantiles import sorted_quantile


def _samples(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    with np.errstate(over="ignore"):
        wide = rng.standard_cauchy(n) * 1e300  # overflows to ±inf at times
    return [rng.laplace(size=n), rng.integers(0, 5, n).astype(float), wide, np.round(rng.normal(size=n), 2)]


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 20_001])
def test_sorted_quantile_equals_numpy_quantile_bit_for_bit(n):
    rng = np.random.default_rng(n)
    levels = np.concatenate([rng.random(64), [0.0, 0.5, 1.0], np.geomspace(1.0 / n, 0.5, 32)])
    for values in _samples(rng, n):
        assert np.array_equal(sorted_quantile(np.sort(values), levels), np.quantile(values, levels), equal_nan=True)


def test_sorted_quantile_with_a_nan_is_numpys_nan():
    values = np.array([0.0, 1.0, np.nan])
    assert np.all(np.isnan(sorted_quantile(np.sort(values), [0.1, 0.9])))


def test_bin_counts_equal_bincount_of_searchsorted():
    rng = np.random.default_rng(3)
    for values in _samples(rng, 5000):
        cuts = np.unique(np.quantile(values, np.linspace(0, 1, 65)[1:-1]))
        expected = np.bincount(np.searchsorted(cuts, values), minlength=len(cuts) + 1)
        assert np.array_equal(bin_counts(cuts, np.sort(values)), expected)
