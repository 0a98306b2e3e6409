"""Scorers: maps from one output to a real score, higher meaning "more likely from D1".

A scorer is fitted on a training part of the selection split (or needs no
fitting) and is then frozen; it must be picklable so chunks can run on other
processes. Thresholding a score gives the rejection sets of the test.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np
from dpaudit.attacks.features import as_matrix, common_dtype, row_keys, small_range_counts
from dpaudit.attacks.sorted_quantiles import merge_sorted, sorted_quantile

__all__ = ["CategoryLogRatio", "Coordinate", "Logistic", "LowBitsLogRatio", "NaiveBayes", "Scorer", "bin_counts", "key_counts",
           "quadratic_features", "sorted_column_table"]

MANTISSA_BITS = 52
MAX_QUADRATIC_DIM = 24
NAIVE_BAYES_BINS = 64


def quadratic_features(x: np.ndarray) -> np.ndarray:
    """Return [x, x_i x_j for i ≤ j] per row (just x above MAX_QUADRATIC_DIM columns, to bound memory)."""
    if x.shape[1] > MAX_QUADRATIC_DIM:
        return x
    i, j = np.triu_indices(x.shape[1])
    return np.hstack([x, x[:, i] * x[:, j]])


def _low_bits_keys(outputs: np.ndarray, bits: int) -> np.ndarray:
    """Return one int per exact-double output (IEEE-754 bits as uint64): sign, exponent, lowest `bits` mantissa bits."""
    raw = np.asarray(outputs, dtype=np.uint64).reshape(len(outputs))
    return ((raw >> np.uint64(MANTISSA_BITS)) << np.uint64(bits)) | (raw & np.uint64((1 << bits) - 1))


class Scorer(Protocol):
    """What a distinguishing test needs: a name and a vectorized score.

    Inputs of every scorer: the outputs scored, and what it was fitted on,
    the selection split's outputs, drawn before the held-out outputs whose
    errors are counted; never which dataset a held-out output came from.
    """

    name: str

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """Return one float per output."""


@dataclasses.dataclass(frozen=True)
class Coordinate:
    """The output itself (scalar) or one coordinate of a vector output."""

    index: int = 0
    name: str = "value"

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """Return the coordinate of each output (inputs: the outputs alone)."""
        return as_matrix(outputs)[:, self.index]


@dataclasses.dataclass(frozen=True)
class CategoryLogRatio:
    """Empirical log-likelihood ratio of each seen output value (categories, integers, rows).

    Unseen values score 0. Thresholding it gives the rejection sets sorted by
    likelihood ratio, the optimal family for discrete outputs (Neyman–Pearson).
    """

    keys: np.ndarray
    log_ratios: np.ndarray
    dtype: np.dtype
    name: str = "category-likelihood-ratio"

    @classmethod
    def fit(cls, out0: np.ndarray, out1: np.ndarray, *, min_count: int = 1, name: str = "category-likelihood-ratio"
            ) -> "CategoryLogRatio":
        """Fit on every value seen at least `min_count` times in the pooled training outputs (in their `common_dtype`)."""
        out0, out1 = common_dtype(out0, out1)
        return cls(*_log_ratio_table(row_keys(out0), row_keys(out1), min_count), out0.dtype, name)

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """Return each output's fitted log ratio, the output cast to the fitted dtype first (a fixed map, so sound)."""
        return _lookup(self.keys, self.log_ratios, row_keys(outputs.astype(self.dtype, copy=False)))


def _log_ratio_table(k0: np.ndarray, k1: np.ndarray, min_count: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Return the sorted keys seen at least `min_count` times and their smoothed log(P1/P0) (+1/2 per count)."""
    keys, c0, c1 = key_counts(k0, k1)
    kept = c0 + c1 >= min_count
    return keys[kept], np.log((c1[kept] + 0.5) / len(k1)) - np.log((c0[kept] + 0.5) / len(k0))


def key_counts(k0: np.ndarray, k1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return `numpy.unique` of the keys of both samples, and how often each is among `k0` and among `k1`."""
    counted = small_range_counts(k0, k1)
    if counted is not None:
        return counted
    keys, inverse = np.unique(np.concatenate([k0, k1]), return_inverse=True)
    return keys, np.bincount(inverse[: len(k0)], minlength=len(keys)), np.bincount(inverse[len(k0):], minlength=len(keys))


def _lookup(keys: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Return values[keys == query] for each query, 0 where the query is not among the sorted `keys`."""
    if len(keys) == 0:
        return np.zeros(len(queries))
    pos = np.clip(np.searchsorted(keys, queries), 0, len(keys) - 1)
    return np.where(keys[pos] == queries, values[pos], 0.0)


@dataclasses.dataclass(frozen=True)
class LowBitsLogRatio:
    """Log-likelihood ratio of (sign, exponent, lowest `bits` mantissa bits) of an exact double (uint64 bits).

    Sees the floating-point artefacts of naive noise samplers: adding a
    shift to fl(b·ln U) moves results across binades and leaves their last
    mantissa bits non-uniform (Mironov, "On Significance of the Least
    Significant Bits for Differential Privacy", CCS 2012; DP-Sniper's
    bit-pattern features, Bichsel et al. S&P 2021 §6.4).
    """

    keys: np.ndarray
    log_ratios: np.ndarray
    bits: int = 2
    name: str = "low-bits-likelihood-ratio"

    @classmethod
    def fit(cls, out0: np.ndarray, out1: np.ndarray, bits: int = 2) -> "LowBitsLogRatio":
        return cls(*_log_ratio_table(_low_bits_keys(out0, bits), _low_bits_keys(out1, bits)), bits)

    def score(self, outputs: np.ndarray) -> np.ndarray:
        return _lookup(self.keys, self.log_ratios, _low_bits_keys(outputs, self.bits))


@dataclasses.dataclass(frozen=True)
class NaiveBayes:
    """Sum over coordinates of histogram log-likelihood ratios (exact for independent noise).

    Each coordinate is cut at quantiles of the pooled training outputs; the
    per-bin ratio is smoothed by adding 1/2 to each count.
    """

    edges: tuple[np.ndarray, ...]
    log_ratios: tuple[np.ndarray, ...]
    name: str = "naive-bayes"

    @classmethod
    def fit(cls, out0: np.ndarray, out1: np.ndarray, bins: int = NAIVE_BAYES_BINS) -> "NaiveBayes":
        x0, x1 = as_matrix(out0), as_matrix(out1)
        tables = [sorted_column_table(np.sort(x0[:, j]), np.sort(x1[:, j]), bins=bins) for j in range(x0.shape[1])]
        return cls(tuple(cuts for cuts, _ in tables), tuple(ratio for _, ratio in tables))

    def score(self, outputs: np.ndarray) -> np.ndarray:
        x = as_matrix(outputs)
        total = np.zeros(len(x))
        for j, (cuts, ratio) in enumerate(zip(self.edges, self.log_ratios)):
            total += ratio[np.searchsorted(cuts, x[:, j])]
        return total


def sorted_column_table(a: np.ndarray, b: np.ndarray, pooled: np.ndarray | None = None, *,
                        bins: int = NAIVE_BAYES_BINS) -> tuple[np.ndarray, np.ndarray]:
    """Return one coordinate's `NaiveBayes` bin edges and smoothed log ratios from its sorted training values.

    `a` and `b` are the coordinate's values on d0 and d1, each sorted;
    `pooled` is their merge (`merge_sorted`), computed here when not given.
    """
    pooled = merge_sorted(a, b) if pooled is None else pooled
    cuts = np.unique(sorted_quantile(pooled, np.linspace(0, 1, bins + 1)[1:-1]))
    c0, c1 = bin_counts(cuts, a), bin_counts(cuts, b)
    return cuts, np.log((c1 + 0.5) / len(b)) - np.log((c0 + 0.5) / len(a))


def bin_counts(cuts: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """Return `np.bincount(np.searchsorted(cuts, values), minlength=len(cuts) + 1)`, read off the sorted values.

    Bin i holds the values in (cuts[i − 1], cuts[i]]: the differences of
    how many sorted values are ≤ each cut (one binary search per cut
    instead of one per value).
    """
    at_most = np.searchsorted(sorted_values, cuts, side="right")
    return np.diff(np.concatenate([[0], at_most, [len(sorted_values)]]))


def _training_rows(out0: np.ndarray, out1: np.ndarray, max_rows: int) -> tuple[np.ndarray, np.ndarray]:
    n0, n1 = min(len(out0), max_rows), min(len(out1), max_rows)
    return np.vstack([as_matrix(out0)[:n0], as_matrix(out1)[:n1]]), np.repeat([0, 1], [n0, n1])


@dataclasses.dataclass(frozen=True)
class Logistic:
    """Log-odds of a logistic regression on the outputs, their squares and products (DP-Sniper style).

    Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper", IEEE S&P 2021, §5. The
    fitted model on standardized degree-2 features is stored as the quadratic
    form x·a + xᵀAx + c, so scoring needs no feature matrix.
    """

    linear: np.ndarray
    quadratic: np.ndarray | None
    intercept: float
    name: str = "logistic"

    @classmethod
    def fit(cls, out0: np.ndarray, out1: np.ndarray, max_rows: int = 30_000) -> "Logistic":
        from sklearn.linear_model import LogisticRegression

        x, y = _training_rows(out0, out1, max_rows)
        quad = quadratic_features(x)
        mean, scale = quad.mean(axis=0), quad.std(axis=0) + 1e-12
        model = LogisticRegression(max_iter=300).fit((quad - mean) / scale, y)
        w = model.coef_[0] / scale
        d = x.shape[1]
        matrix = None
        if len(w) > d:
            matrix = np.zeros((d, d))
            matrix[np.triu_indices(d)] = w[d:]
        return cls(w[:d], matrix, float(model.intercept_[0] - w @ mean))

    def score(self, outputs: np.ndarray) -> np.ndarray:
        x = as_matrix(outputs)
        quadratic = 0.0 if self.quadratic is None else np.einsum("ij,ij->i", x @ self.quadratic, x)
        return x @ self.linear + quadratic + self.intercept
