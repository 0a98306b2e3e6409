"""How a two-dataset attack spends its trials: the share that chooses the test, screening of wide outputs, and the
levels that make selection counts conservative.

The test is chosen on a selection split and its rates estimated on fresh
held-out trials, so nothing here affects soundness; it decides how tight
the bound is. Among many candidate thresholds the best-looking one is
partly luck (the winner's curse), so candidates are judged on selection
counts made conservative at a level first (`selection_level`).
"""

from __future__ import annotations

__all__ = [
    "ATOM_LEVEL",
    "DISCRETE_LEVEL_MASS",
    "DISCRETE_SELECTION",
    "LARGE_SHARE",
    "MAX_DISCRETE_LEVEL",
    "MAX_LARGE_SELECTION",
    "MAX_SELECTION",
    "MAX_SELECTION_ELEMENTS",
    "MIN_SELECTION",
    "SELECTION_LEVEL",
    "discrete_level",
    "discrete_selection_size",
    "screening_size",
    "selection_level",
    "split_budget",
]

MAX_SELECTION = 200_000
LARGE_SHARE = 50
MAX_LARGE_SELECTION = 2_000_000
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
    """Return (selection, held-out) sample sizes per dataset: about 10% to choose the test, at most MAX_SELECTION.

    Past 10⁷ trials the selection grows again, as 1/LARGE_SHARE of them up
    to MAX_LARGE_SELECTION: the held-out interval narrows as 1/√n, so a
    threshold chosen on a fixed selection sample would cost more than the
    interval leaves (noisy max with its value: seed 0 picks 0.67 at 2·10⁵
    selection outputs, where its ratio is e^0.2445 against e^0.25 at 0;
    `benchmarks/dpsniper_comparison.py`). The selection outputs are held in
    memory at once, so with `elements` numbers per output they are also
    capped at MAX_SELECTION_ELEMENTS in all (but never below MIN_SELECTION
    outputs).
    """
    selection = min(max(trials // 10, min(trials // 3, 2000)), MAX_SELECTION)
    selection = max(selection, min(trials // LARGE_SHARE, MAX_LARGE_SELECTION))
    selection = min(selection, max(MIN_SELECTION, MAX_SELECTION_ELEMENTS // max(1, elements)))
    return selection, trials - selection


def screening_size(trials: int, elements: int) -> int:
    """Return how many outputs per dataset screen wide outputs (`dpaudit.attacks.screening`), or 0 when they need none.

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


def selection_level(categories: int | None) -> float:
    """Return the level that makes the selection counts conservative.

    That is `discrete_level` for discrete outputs of `categories` distinct values, else SELECTION_LEVEL.
    """
    return SELECTION_LEVEL if categories is None else discrete_level(categories)
