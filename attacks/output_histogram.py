"""The evidence of a two-dataset game on scalar outputs: how many outputs fall at and between grid values.

Every threshold test on a real-valued output, "x ≥ t guesses D1" or
"x ≤ t guesses D1", is decided by where x lies against the grid: strictly
between two grid values, or exactly on one. Counting the outputs of each
dataset in those 2G + 1 cells (G grid values) keeps the exact error counts
of every test whose threshold is a grid value, in O(G) memory whatever the
number of outputs; cells are integer counts, so chunks add up in any order.
NaN outputs sort above every number (numpy's order), a fixed rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from dpaudit.attacks.sampling import draw_checked
from dpaudit.mechanisms.base import Mechanism

__all__ = ["CountCells", "OutputHistogram", "cell_counts", "grid_from"]

GRID_SIZE = 4096
"""Grid values at most: the pooled distinct outputs when fewer, else quantiles dense in both tails."""


def grid_from(out0: np.ndarray, out1: np.ndarray, size: int = GRID_SIZE) -> np.ndarray:
    """Return the sorted grid of thresholds: every distinct output if at most `size`, else `size` pooled quantiles.

    The quantile levels are evenly spaced in logit between 1/n and 1 − 1/n,
    so that both tails, where large ε is certified, get as many grid values
    as the middle; each grid value is an output (no interpolation). NaN is
    never a grid value.
    """
    from scipy.special import expit

    pooled = np.concatenate([np.ravel(out0), np.ravel(out1)]).astype(float)
    distinct = np.unique(pooled[~np.isnan(pooled)])
    if distinct.size <= size:
        return distinct
    span = np.log(distinct.size)
    levels = expit(np.linspace(-span, span, size))
    return np.unique(np.quantile(distinct, levels, method="inverted_cdf"))


def cell_counts(grid: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    """Return the 2G + 1 cell counts of `outputs`: cell 2j between grid values j − 1 and j, cell 2j + 1 on value j."""
    x = np.ravel(outputs).astype(float)
    cells = np.searchsorted(grid, x, side="left") + np.searchsorted(grid, x, side="right")
    return np.bincount(cells, minlength=2 * grid.size + 1)


@dataclasses.dataclass(frozen=True)
class OutputHistogram:
    """Cell counts of the outputs on d0 (`cells0`) and d1 (`cells1`) against a `grid`.

    The grid may come from some of the counted outputs (the two-dataset audit
    places it on its first sample): the bands that bound its tests hold at
    every threshold at once, so that choice costs nothing.
    """

    grid: np.ndarray
    cells0: np.ndarray
    cells1: np.ndarray

    @classmethod
    def from_vector(cls, grid: np.ndarray, vector: np.ndarray) -> OutputHistogram:
        """Return the histogram of a runner count vector [cells of d0, cells of d1]."""
        half = 2 * grid.size + 1
        return cls(grid, np.asarray(vector[:half]), np.asarray(vector[half:2 * half]))

    @property
    def n0(self) -> int:
        """The number of outputs on d0."""
        return int(self.cells0.sum())

    @property
    def n1(self) -> int:
        """The number of outputs on d1."""
        return int(self.cells1.sum())

    def error_counts(self, *, d1_high: bool, strict: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Return (fp, fn) of the test at each grid value t: "x ≥ t guesses D1" if `d1_high`, else "x ≤ t".

        `strict` makes the comparisons strict ("x > t", "x < t"), which
        separates outputs that tie with t. fp counts d0 outputs the test
        guesses D1 for; fn counts d1 outputs it does not.
        """
        at_or_below0 = np.cumsum(self.cells0)[1::2]
        at_or_below1 = np.cumsum(self.cells1)[1::2]
        below0 = at_or_below0 - self.cells0[1::2]
        below1 = at_or_below1 - self.cells1[1::2]
        if d1_high:
            return (self.n0 - at_or_below0, at_or_below1) if strict else (self.n0 - below0, below1)
        return (below0, self.n1 - below1) if strict else (at_or_below0, self.n1 - at_or_below1)


@dataclasses.dataclass(frozen=True)
class CountCells:
    """A chunk's work for scalar outputs: draw Poisson(size) outputs on each of d0 and d1 and count them in `grid`'s cells.

    Returns [cell counts of d0 outputs, cell counts of d1 outputs]
    (`cell_counts`, 2G + 1 each; `OutputHistogram.from_vector`).
    """

    mechanism: Mechanism
    d0: Any
    d1: Any
    grid: np.ndarray
    shape: tuple[int, ...]

    def __call__(self, size: int, seed: np.random.SeedSequence) -> np.ndarray:
        out0, out1 = draw_checked(self.mechanism, self.d0, self.d1, size, seed, self.shape)
        return np.concatenate([cell_counts(self.grid, out0), cell_counts(self.grid, out1)]).astype(np.int64)
