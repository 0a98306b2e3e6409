"""The objective that chooses a two-dataset test: the bound a candidate would certify on the held-out trials.

Only steers the choice: soundness comes from estimating the chosen test on
fresh samples (`dpaudit.audit.estimators.held_out`).
"""

from __future__ import annotations

import functools

import numpy as np
from dpaudit.attacks.distinguish import Choice, Objective
from dpaudit.attacks.selection_budget import SELECTION_LEVEL
from dpaudit.attacks.two_dataset_play import Steering
from dpaudit.audit.estimators.clopper_pearson import epsilon_from_rates, epsilon_lower_bound, rate_upper_bound
from dpaudit.audit.estimators.intervals import Bands, Interval, RatioInterval
from dpaudit.audit.estimators.rate_ratio import kov_ratio_bounds

__all__ = ["held_out_direction", "projected_bound", "steering"]

FIRST_JUDGED = 16
CEILING_SLACK = 1e-9


def projected_bound(
    n: int, delta: float, beta: float, *, level: float = SELECTION_LEVEL, interval: str = "two-rates"
) -> Objective:
    """Return the objective that chooses a test: the bound it would certify on Poisson(`n`) held-out trials.

    The selection counts are first replaced by their Clopper–Pearson upper
    bounds at `level` (SELECTION_LEVEL, about 2.6 standard errors), so that a
    threshold in a far tail, whose few selection errors are mostly luck, does
    not win among hundreds of candidates (winner's curse); the levels were set
    by `benchmarks/selection_level.py` (`discrete_level` for discrete
    outputs, whose candidates are few). `interval` "ratio" projects the
    one-interval pure-ε bound instead of the two-rates one. Only the first
    best of the two-rates bounds is computed for sure (`_bounds_that_may_win`).
    """

    def objective(fp: np.ndarray, n0: int, fn: np.ndarray, n1: int) -> np.ndarray:
        if interval == "ratio":
            return _projected_directions(fp, n0, fn, n1, n=n, beta=beta, level=level).max(axis=0)
        fpr, fnr = rate_upper_bound(fp, n0, level), rate_upper_bound(fn, n1, level)
        return _bounds_that_may_win(fpr, fnr, n=n, delta=delta, beta=beta)

    return objective


def _bounds_that_may_win(fpr: np.ndarray, fnr: np.ndarray, *, n: int, delta: float, beta: float) -> np.ndarray:
    """Return `epsilon_lower_bound(fpr·n, n, fnr·n, n)` of each candidate that may be the largest; −inf for the others.

    A candidate's bound at n trials is at most its bound at infinitely many,
    `epsilon_from_rates(fpr, fnr)` (a Clopper–Pearson upper bound is at least
    its rate), so once the FIRST_JUDGED candidates of highest such ceiling
    are computed, a candidate whose ceiling is below their best cannot be
    the largest, nor tie with it: the first largest, its index and its
    value are those of computing every candidate, at a few of their costly
    inverse beta functions (about 30 of 500 for a Laplace or Gaussian audit).
    """
    fpr, fnr = np.broadcast_arrays(np.asarray(fpr, dtype=float), np.asarray(fnr, dtype=float))
    if fpr.ndim != 1 or len(fpr) <= FIRST_JUDGED:
        return epsilon_lower_bound(fpr * n, n, fnr * n, n, delta=delta, beta=beta)
    ceiling = epsilon_from_rates(fpr, fnr, delta)
    judged = np.zeros(len(fpr), dtype=bool)
    judged[np.argsort(-ceiling, kind="stable")[:FIRST_JUDGED]] = True
    values = np.full(len(fpr), -np.inf)
    values[judged] = epsilon_lower_bound(fpr[judged] * n, n, fnr[judged] * n, n, delta=delta, beta=beta)
    rest = ~judged & (ceiling >= values.max() - CEILING_SLACK)
    values[rest] = epsilon_lower_bound(fpr[rest] * n, n, fnr[rest] * n, n, delta=delta, beta=beta)
    return values


def _projected_directions(fp, n0: int, fn, n1: int, *, n: int, beta: float, level: float = SELECTION_LEVEL) -> np.ndarray:
    """Return both pure-ε ratio bounds (`kov_ratio_bounds`) projected from selection counts to `n` held-out trials."""
    fpr, fnr = rate_upper_bound(fp, n0, level), rate_upper_bound(fn, n1, level)
    return kov_ratio_bounds(fpr * n, n, fnr * n, n, beta)


def held_out_direction(choice: Choice, n: int, beta: float, level: float) -> int:
    """Return which `kov_ratio_bounds` entry the held-out counts will certify, fixed from the selection counts."""
    m = choice.samples
    return int(np.argmax(_projected_directions(choice.fpr * m, m, choice.fnr * m, m, n=n, beta=beta, level=level)))


def steering(interval: Interval, delta: float, beta: float) -> Steering:
    """Return how `interval`, to certify at (δ, β), steers the two-dataset game (`dpaudit.attacks.two_dataset_play`).

    The objective is `projected_bound` for this interval; the ratio interval
    also fixes its direction from the selection counts (`held_out_direction`);
    the bands interval counts every output, without a split. Sound whatever
    it returns: it only chooses the test, which the estimator judges on
    outputs the choice never saw (bands: a band valid for every threshold).
    """
    objective = functools.partial(projected_bound, delta=delta, beta=beta, interval=interval.name)
    direction = functools.partial(held_out_direction, beta=beta) if isinstance(interval, RatioInterval) else None
    return Steering(objective, direction, histogram=isinstance(interval, Bands))
