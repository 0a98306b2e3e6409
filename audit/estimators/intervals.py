"""How a two-dataset test's rates are certified: the strategies a `Bound` takes for the two-dataset game.

- `TwoRates` (the default): a test chosen on a selection split, Clopper–Pearson
  upper bounds on its FPR and FNR at β/2 each on fresh held-out outputs
  (Kairouz, Oh, Viswanath, ICML 2015; Jagielski, Ullman, Oprea, NeurIPS 2020).
- `RatioInterval` (pure ε only): the same split, one Clopper–Pearson interval
  at all of β on the ratio of the rejection set's Poisson counts, its
  direction fixed on the selection split (`rate_ratio`).
- `Bands` (scalar outputs): no split; every output is counted and the
  threshold chosen after, its rates bounded by simultaneous bands
  (`histogram_bands`).

The strategy decides what the game plays as well as how its evidence is
certified: held-out counts (`HeldOutCounts`) for the first two, a histogram
of every output (`OutputHistogram`) for the bands.
"""

from __future__ import annotations

import dataclasses
from typing import Union

from dpaudit.errors import InvalidParameterError

__all__ = ["INTERVALS", "Bands", "Interval", "RatioInterval", "TwoRates", "interval_named"]


@dataclasses.dataclass(frozen=True)
class TwoRates:
    """Clopper–Pearson upper bounds on the held-out FPR and FNR, β/2 each."""

    name = "two-rates"

    def describe(self) -> str:
        """Return a short label for reports."""
        return self.name


@dataclasses.dataclass(frozen=True)
class RatioInterval:
    """One interval at all of β on the ratio of the held-out Poisson counts (pure ε, δ = 0 only)."""

    name = "ratio"

    def describe(self) -> str:
        """Return a short label for reports."""
        return self.name


@dataclasses.dataclass(frozen=True)
class Bands:
    """Every output counted, the threshold chosen after, its rates bounded by simultaneous bands (scalar outputs)."""

    name = "bands"

    def describe(self) -> str:
        """Return a short label for reports."""
        return self.name


Interval = Union[TwoRates, RatioInterval, Bands]

INTERVALS = tuple(kind.name for kind in (TwoRates, RatioInterval, Bands))
"""The names of the intervals, as `audit_mechanism(interval=...)` and the CLI's --interval take them."""


def interval_named(name: object, owner: str = "audit_mechanism") -> Interval:
    """Return the interval strategy called `name` ("two-rates", "ratio" or "bands"); one sentence otherwise."""
    for kind in (TwoRates, RatioInterval, Bands):
        if name == kind.name:
            return kind()
    raise InvalidParameterError(
        f"The 'interval' parameter of {owner} must be one of {', '.join(INTERVALS)}; got {name!r} instead."
    )
