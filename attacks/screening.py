"""Screening of wide outputs: keep the few coordinates worth a test, chosen on samples of their own.

An output of 10⁵ numbers cannot be held in memory for a selection sample of
useful size, and a test chosen on the 200 outputs that fit misses a leak
in one coordinate. So the audit first draws a screening sample in chunks,
keeping per coordinate only the sums a mean and a variance need (memory of
one output's width), and ranks coordinates by how far their means
(standardized) and their spreads are apart on D0 and D1, and weighs a
linear score over all of them. The test is then chosen, and its rates
estimated, on the kept coordinates and that score only: a fixed map
of the outputs chosen on samples that nothing later reuses, so the
held-out bound stays sound (post-processing, fresh samples).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from dpaudit.attacks.features import as_matrix
from dpaudit.attacks.output_scorers import Coordinate, Scorer
from dpaudit.attacks.sampling import chunk_sizes, draw, per_chunk
from dpaudit.mechanisms.base import Mechanism

__all__ = ["LinearScore", "OnColumns", "Screen", "columns", "on_whole_outputs", "screen_coordinates"]

SCREENED_BY_MEAN = 16
SCREENED_BY_SPREAD = 8


@dataclasses.dataclass(frozen=True)
class Screen:
    """What screening kept: coordinates of the flattened output, and weights of a linear score over all of them.

    The screened view of an output is its `kept` coordinates followed by
    its linear score x·`weights` (`columns`).
    """

    kept: np.ndarray
    weights: np.ndarray

    def width(self) -> int:
        """Return the number of columns of the screened view."""
        return len(self.kept) + 1


def screen_coordinates(
    mech: Mechanism, d0: Any, d1: Any, *, size: int, elements: int, seed: np.random.SeedSequence
) -> Screen:
    """Return the coordinates (of the flattened output) that look most different on d0 and d1, and a linear score.

    Draws `size` outputs per dataset in chunks from `seed`; keeps the
    SCREENED_BY_MEAN coordinates of largest standardized mean gap
    |m1 − m0| / (s0 + s1) and the SCREENED_BY_SPREAD of largest
    |log(s1² / s0²)|. The linear score's weights (m1 − m0) / ((s0² + s1²)/2)
    (a diagonal linear discriminant) add up a leak spread thinly over many
    coordinates, which no single coordinate shows.
    """
    sums = np.zeros((2, 3, elements))  # per dataset: count, sum, sum of squares
    sizes = chunk_sizes(size, per_chunk(elements))
    for chunk, child in zip(sizes, seed.spawn(len(sizes))):
        for k, out in enumerate(draw(mech, d0, d1, chunk, child)):
            x = as_matrix(out)
            sums[k] += [np.full(elements, len(x)), x.sum(axis=0), np.square(x).sum(axis=0)]
    mean = sums[:, 1] / sums[:, 0]
    var = np.maximum(sums[:, 2] / sums[:, 0] - np.square(mean), 0.0)
    gap = np.abs(mean[1] - mean[0]) / (np.sqrt(var[0]) + np.sqrt(var[1]) + 1e-300)
    spread = np.abs(np.log((var[1] + 1e-300) / (var[0] + 1e-300)))
    kept = np.unique(np.concatenate([_top(gap, SCREENED_BY_MEAN), _top(spread, SCREENED_BY_SPREAD)]))
    weights = np.nan_to_num((mean[1] - mean[0]) / ((var[0] + var[1]) / 2 + 1e-300), nan=0.0, posinf=0.0, neginf=0.0)
    return Screen(kept, weights)


def _top(values: np.ndarray, k: int) -> np.ndarray:
    values = np.nan_to_num(values, nan=0.0)
    return np.argsort(-values, kind="stable")[:k]


def columns(out: np.ndarray, screen: Screen) -> np.ndarray:
    """Return the screened view of each output: its kept coordinates, then its linear score (one row per output)."""
    x = as_matrix(out)
    return np.column_stack([x[:, screen.kept], x @ screen.weights])


@dataclasses.dataclass(frozen=True)
class OnColumns:
    """A scorer fitted on the screened view, applied to whole outputs."""

    inner: Scorer
    screen: Screen
    name: str

    def score(self, outputs: np.ndarray) -> np.ndarray:
        return self.inner.score(columns(outputs, self.screen))


@dataclasses.dataclass(frozen=True)
class LinearScore:
    """The screened linear score x·weights of a whole output."""

    weights: np.ndarray
    name: str = "screened linear score"

    def score(self, outputs: np.ndarray) -> np.ndarray:
        return as_matrix(outputs) @ self.weights


def on_whole_outputs(scorer: Scorer, screen: Screen) -> Scorer:
    """Return `scorer`, fitted on the screened view, as a scorer of whole outputs (a coordinate keeps its own index)."""
    if isinstance(scorer, Coordinate) and scorer.index < len(screen.kept):
        index = int(screen.kept[scorer.index])
        return Coordinate(index, f"coordinate[{index}]")
    if isinstance(scorer, Coordinate):
        return LinearScore(screen.weights)
    return OnColumns(scorer, screen, f"{scorer.name} on {screen.width()} screened columns")
