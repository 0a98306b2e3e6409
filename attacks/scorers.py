"""Scorers: maps from one output to a real score, higher meaning "more likely from D1".

A scorer is fitted on a training part of the selection split (or needs no
fitting) and is then frozen; it must be picklable so chunks can run on other
processes. Thresholding a score gives the rejection sets of the test.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from attacks.features import as_matrix, row_keys


class Scorer(Protocol):
    """What a distinguishing test needs: a name and a vectorized score."""

    name: str

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """Return one float per output."""


@dataclasses.dataclass(frozen=True)
class Coordinate:
    """The output itself (scalar) or one coordinate of a vector output."""

    index: int = 0
    name: str = "value"

    def score(self, outputs: np.ndarray) -> np.ndarray:
        return as_matrix(outputs)[:, self.index]


@dataclasses.dataclass(frozen=True)
class CategoryLogRatio:
    """Empirical log-likelihood ratio of each seen output value (categories, integers, rows).

    Unseen values score 0. Thresholding it gives the rejection sets sorted by
    likelihood ratio, the optimal family for discrete outputs (Neyman–Pearson).
    """

    keys: np.ndarray
    log_ratios: np.ndarray
    name: str = "category-likelihood-ratio"

    @classmethod
    def fit(cls, out0: np.ndarray, out1: np.ndarray) -> "CategoryLogRatio":
        k0, k1 = row_keys(out0), row_keys(out1)
        keys, inverse = np.unique(np.concatenate([k0, k1]), return_inverse=True)
        c0 = np.bincount(inverse[: len(k0)], minlength=len(keys))
        c1 = np.bincount(inverse[len(k0):], minlength=len(keys))
        ratios = np.log((c1 + 0.5) / len(k1)) - np.log((c0 + 0.5) / len(k0))
        return cls(keys, ratios)

    def score(self, outputs: np.ndarray) -> np.ndarray:
        keys = row_keys(outputs)
        pos = np.clip(np.searchsorted(self.keys, keys), 0, len(self.keys) - 1)
        return np.where(self.keys[pos] == keys, self.log_ratios[pos], 0.0)


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
    def fit(cls, out0: np.ndarray, out1: np.ndarray, bins: int = 64) -> "NaiveBayes":
        x0, x1 = as_matrix(out0), as_matrix(out1)
        edges, ratios = [], []
        for j in range(x0.shape[1]):
            pooled = np.concatenate([x0[:, j], x1[:, j]])
            cuts = np.unique(np.quantile(pooled, np.linspace(0, 1, bins + 1)[1:-1]))
            c0 = np.bincount(np.searchsorted(cuts, x0[:, j]), minlength=len(cuts) + 1)
            c1 = np.bincount(np.searchsorted(cuts, x1[:, j]), minlength=len(cuts) + 1)
            edges.append(cuts)
            ratios.append(np.log((c1 + 0.5) / len(x1)) - np.log((c0 + 0.5) / len(x0)))
        return cls(tuple(edges), tuple(ratios))

    def score(self, outputs: np.ndarray) -> np.ndarray:
        x = as_matrix(outputs)
        total = np.zeros(len(x))
        for j, (cuts, ratio) in enumerate(zip(self.edges, self.log_ratios)):
            total += ratio[np.searchsorted(cuts, x[:, j])]
        return total


@dataclasses.dataclass(frozen=True)
class Logistic:
    """Log-odds of a logistic regression on standardized outputs and their squares (DP-Sniper style)."""

    model: object
    name: str = "logistic"

    @classmethod
    def fit(cls, out0: np.ndarray, out1: np.ndarray, max_rows: int = 50_000) -> "Logistic":
        x = np.vstack([as_matrix(out0)[:max_rows], as_matrix(out1)[:max_rows]])
        y = np.repeat([0, 1], [min(len(out0), max_rows), min(len(out1), max_rows)])
        model = make_pipeline(StandardScaler(), PolynomialFeatures(2), StandardScaler(), LogisticRegression(max_iter=500))
        return cls(model.fit(x, y))

    def score(self, outputs: np.ndarray) -> np.ndarray:
        return self.model.decision_function(as_matrix(outputs))
