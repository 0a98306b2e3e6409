"""How an audit chooses its test: the share of trials spent choosing, and the objective that judges candidates.

The test is chosen on a selection split and estimated on fresh held-out
trials, so nothing here affects soundness; it decides how tight the bound
is. Candidates are judged by the bound they would certify on the held-out
trials, with their selection counts made conservative first, since among
many candidate thresholds the best-looking one is partly luck (the winner's
curse).
"""

from __future__ import annotations

import numpy as np
from dpaudit.attacks.distinguish import Choice, Objective
from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound, rate_upper_bound
from dpaudit.audit.estimators.rate_ratio import kov_ratio_bounds

__all__ = [
    "ATOM_LEVEL",
    "DISCRETE_LEVEL_MASS",
    "DISCRETE_SELECTION",
    "MAX_DISCRETE_LEVEL",
    "MAX_SELECTION_ELEMENTS",
    "MIN_SELECTION",
    "SELECTION_LEVEL",
    "discrete_level",
    "discrete_selection_size",
    "held_out_direction",
    "projected_bound",
    "screening_size",
    "selection_level",
    "split_budget",
]

MAX_SELECTION = 200_000
MAX_SELECTION_ELEMENTS = 20_000_000
MIN_SELECTION = 200
SELECTION_LEVEL = 0.005
DISCRETE_SELECTION = 2_000_000
DISCRETE_SHARE = 0.2
DISCRETE_SELECTION_ELEMENTS = 20_000_000
DISCRETE_LEVEL_MASS = 5.0
MAX_DISCRETE_LEVEL = 0.5
ATOM_LEVEL = 0.1


def split_budget(trials: int, elements: int = 1) -> tuple[int, int]:
    """Return (selection, held-out) sample sizes per dataset: about 10% to choose the test.

    The selection outputs are held in memory at once, so with `elements`
    numbers per output they are also capped at MAX_SELECTION_ELEMENTS in
    all (but never below MIN_SELECTION outputs).
    """
    selection = min(max(trials // 10, min(trials // 3, 2000)), MAX_SELECTION)
    selection = min(selection, max(MIN_SELECTION, MAX_SELECTION_ELEMENTS // max(1, elements)))
    return selection, trials - selection


def screening_size(trials: int, elements: int) -> int:
    """Return how many outputs per dataset screen wide outputs (`dpaudit.audit.audits.screening`), or 0 when they need none.

    Outputs are wide when memory, not the trial count, would cap the
    selection sample (`split_budget`); they are then screened on as many
    outputs as an uncapped selection would hold; the selection on the kept
    coordinates then comes out of the trials left.
    """
    wanted = split_budget(trials)[0]
    return wanted if split_budget(trials, elements)[0] < wanted and trials >= 3 * wanted else 0


def discrete_selection_size(trials: int, elements: int) -> int:
    """Return the selection size for discrete outputs: DISCRETE_SHARE of `trials`, at most DISCRETE_SELECTION (and its memory)."""
    return min(int(trials * DISCRETE_SHARE), DISCRETE_SELECTION, DISCRETE_SELECTION_ELEMENTS // max(1, elements))


def discrete_level(categories: int) -> float:
    """Return the selection level for discrete outputs with `categories` distinct values: DISCRETE_LEVEL_MASS / categories, at most 1/2.

    The winner's curse grows with the number of thresholds compared, and a
    table of K categories has K. With few categories a weak level lets a
    rare category with a high ratio win (sparse vector's best test is one
    category of 0.6% mass); with hundreds, each seen rarely in the tails, a
    strong one is needed (`benchmarks/selection_level.py --discrete`).
    """
    return min(MAX_DISCRETE_LEVEL, DISCRETE_LEVEL_MASS / max(1, categories))


def projected_bound(
    n: int, delta: float, beta: float, *, level: float = SELECTION_LEVEL, interval: str = "two-rates"
) -> Objective:
    """Return the objective that chooses a test: the bound it would certify on Poisson(`n`) held-out trials.

    The selection counts are first replaced by their Clopper–Pearson upper
    bounds at `level` (SELECTION_LEVEL, about 2.6 standard errors), so that a
    threshold in a far tail, whose few selection errors are mostly luck, does
    not win among hundreds of candidates (winner's curse); the levels were set
    by `benchmarks/selection_level.py` (`discrete_level` for discrete
    outputs, whose candidates are few). This only steers the choice:
    soundness comes from estimating the chosen test on fresh samples.
    """

    def objective(fp: np.ndarray, n0: int, fn: np.ndarray, n1: int) -> np.ndarray:
        if interval == "ratio":
            return _projected_directions(fp, n0, fn, n1, n=n, beta=beta, level=level).max(axis=0)
        fpr, fnr = rate_upper_bound(fp, n0, level), rate_upper_bound(fn, n1, level)
        return epsilon_lower_bound(fpr * n, n, fnr * n, n, delta=delta, beta=beta)

    return objective


def _projected_directions(fp, n0: int, fn, n1: int, *, n: int, beta: float, level: float = SELECTION_LEVEL) -> np.ndarray:
    """Return both pure-ε ratio bounds (`kov_ratio_bounds`) projected from selection counts to `n` held-out trials."""
    fpr, fnr = rate_upper_bound(fp, n0, level), rate_upper_bound(fn, n1, level)
    return kov_ratio_bounds(fpr * n, n, fnr * n, n, beta)


def held_out_direction(choice: Choice, n: int, beta: float, level: float) -> int:
    """Return which `kov_ratio_bounds` entry the held-out counts will certify, fixed from the selection counts."""
    m = choice.samples
    return int(np.argmax(_projected_directions(choice.fpr * m, m, choice.fnr * m, m, n=n, beta=beta, level=level)))


def selection_level(categories: int | None) -> float:
    """Return the level that makes the selection counts conservative.

    That is `discrete_level` for discrete outputs of `categories` distinct values, else SELECTION_LEVEL.
    """
    return SELECTION_LEVEL if categories is None else discrete_level(categories)
