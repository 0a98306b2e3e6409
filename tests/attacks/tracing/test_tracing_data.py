"""The tracing population: biases in range, rows with the right means, int8 storage, Tardos' cut-off."""

import math

import numpy as np
import pytest
from dpaudit.attacks.tracing import data as tracing_data
from dpaudit.attacks.tracing.data import column_biases, sample_rows
from dpaudit.mechanisms import InvalidParameterError


@pytest.mark.parametrize("kind", ["uniform", "tardos"])
def test_rows_have_the_column_biases_as_means(kind):
    rng = np.random.default_rng(5)
    p = column_biases(50, kind=kind, rng=rng)
    rows = sample_rows(p, 40_000, rng)
    assert rows.dtype == np.int8 and set(np.unique(rows)) <= {-1, 1}
    # Each column mean has standard deviation √((1 − p²)/n) ≤ 0.005; allow 5 of them.
    assert np.max(np.abs(rows.mean(axis=0) - p)) < 5 * math.sqrt(1 / 40_000)


def test_tardos_biases_respect_the_cutoff_and_uniform_ones_cover_the_interval():
    rng = np.random.default_rng(1)
    cutoff = 0.05
    p = column_biases(100_000, kind="tardos", rng=rng, cutoff=cutoff)
    assert p.min() >= 2 * cutoff - 1 - 1e-12 and p.max() <= 1 - 2 * cutoff + 1e-12
    u = column_biases(100_000, rng=rng)
    assert -1 <= u.min() < -0.99 and 0.99 < u.max() <= 1


def test_rows_do_not_depend_on_the_block_size(monkeypatch):
    p = column_biases(30, rng=np.random.default_rng(2))
    whole = sample_rows(p, 100, np.random.default_rng(3))
    monkeypatch.setattr(tracing_data, "BLOCK_ENTRIES", 30 * 7)
    blocked = sample_rows(p, 100, np.random.default_rng(3))
    assert whole.shape == blocked.shape == (100, 30)
    assert np.array_equal(whole, blocked)


def test_bad_bias_kind_is_one_sentence():
    with pytest.raises(InvalidParameterError, match="'kind' parameter of column_biases must be one of"):
        column_biases(3, kind="beta", rng=np.random.default_rng(0))
