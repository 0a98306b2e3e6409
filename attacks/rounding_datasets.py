"""Floating-point rounding datasets, from the bounds of a record's numbers alone (Casacuberta et al., CCS 2022).

Casacuberta, Shoemate, Vadhan and Wagaman ("Widespread underestimation of
sensitivity in differentially private libraries and how to fix it", CCS
2022) break float sums with many records near a power of two and one
record that changes how the partial sums round, and with the same records
in another order. `rounding_datasets(low, high, count=, replace=)` builds
them for records whose numbers lie in [low, high]:

- bounds around 0 ("straddling"): `count` records just above half an ulp of
  U (the upper bound, 1 without one), and U (or the low record) first, so
  that every addition after it rounds up, against the same with it last;
- bounds away from 0 ("offset"): A, the bound nearer 0, and the doubles one
  and two steps of A's ulp inside it. `count` records one step inside A
  and one record at A or two steps inside (the issue-2923 shape of OpenDP's
  sum of squared deviations); and, screened by arithmetic alone, k records
  at one of these values followed by the rest at another, the last (or the
  first) record changed to the third: of every k, the pairs whose sums,
  taken in order as doubles, differ by the most beyond what one record can
  change the real sum (U − L replaced, max(|L|, |U|) added), with the same
  records in another order (the changed one first).

Nothing here reads a mechanism: the screen sums the candidate datasets
themselves (`numpy.cumsum`, one addition after another), so the datasets
are a function of the bounds and `count`. Each pair comes as one number
per record; the caller gives records their width and plays them under its
relation.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

__all__ = ["ROUNDING_KEPT", "ROUNDING_RECORDS", "RoundingPair", "rounding_datasets"]

ROUNDING_RECORDS = 1000
"""The records just above half an ulp in a straddling rounding dataset."""
ROUNDING_KEPT = 2
"""The screened offset pairs kept: those whose float sums move the most beyond one record's real change."""
SCREEN_CELLS = 2**22
"""The screen sums at most about this many doubles per (x, y): every prefix length k, or evenly spaced ones."""
SCREEN_MIN_PREFIXES = 64
"""The screen tries at least this many prefix lengths (all of them in a smaller dataset)."""


@dataclasses.dataclass(frozen=True)
class RoundingPair:
    """A rounding pair as one number per record: `changed` is the index (in d1) of the record added or changed."""

    note: str
    d0: np.ndarray
    d1: np.ndarray
    changed: int


def rounding_datasets(low: float, high: float, *, count: int, replace: bool) -> list[RoundingPair]:
    """Return the rounding pairs for records in [low, high]: straddling bounds, or offset ones (module docstring).

    `count` is the number of records of an offset dataset (a dataset of
    known size: the base's); `replace` plays the changed record as a
    replaced one (d0 and d1 of one length), else as one added to d1. Sound
    as a source of candidates whatever it returns: the caller keeps only
    neighbours.
    """
    offset = math.isfinite(low) and math.isfinite(high) and (low > 0 or high < 0)
    pairs = _offset_pairs(low, high, max(count, 1), replace) if offset else _straddling_pairs(low, high, replace)
    kept: dict[bytes, RoundingPair] = {}
    for pair in pairs:
        kept.setdefault(_key(pair), pair)  # one of each pair of datasets: the screen may build a simple one again
    return list(kept.values())


def _key(pair: RoundingPair) -> bytes:
    """Return the bytes of a pair's two datasets (and where one ends): equal for equal pairs."""
    return len(pair.d0).to_bytes(8, "little") + pair.d0.tobytes() + pair.d1.tobytes()


def _straddling_pairs(low: float, high: float, replace: bool) -> list[RoundingPair]:
    """Return many records just above half an ulp of U, and U first against U last (the low record replaced by it)."""
    big = high if math.isfinite(high) else 1.0
    half = math.nextafter(math.ulp(big) / 2, math.inf)
    if big <= 0 or not low <= half <= big:
        return []
    small = low if math.isfinite(low) else 0.0
    rows = np.full(ROUNDING_RECORDS, half)
    what = f"{ROUNDING_RECORDS} records of {half!r} (just above half an ulp of {big!r})"
    if not replace:
        return [RoundingPair(f"{what}, and {big:g} added first", rows, np.append(big, rows), 0),
                RoundingPair(f"{what}, and {big:g} added last (the same records in another order)", rows,
                             np.append(rows, big), ROUNDING_RECORDS)]
    return [RoundingPair(f"{what}, and {small:g} replaced by {big:g} first", np.append(small, rows), np.append(big, rows), 0),
            RoundingPair(f"{what}, and {small:g} replaced by {big:g} last (the same records in another order)",
                         np.append(rows, small), np.append(rows, big), ROUNDING_RECORDS)]


def _steps(low: float, high: float) -> list[float]:
    """Return A (the bound nearer 0) and the doubles one and two ulps of A inside it that lie in [low, high]."""
    anchor, inward = (low, math.inf) if low > 0 else (high, -math.inf)
    values = [anchor]
    for _ in range(2):
        values.append(math.nextafter(values[-1], inward))
    return [v for v in values if low <= v <= high]


def _offset_pairs(low: float, high: float, count: int, replace: bool) -> list[RoundingPair]:
    """Return `count` records one ulp inside A with one record at a neighbouring double, and the screened pairs."""
    values = _steps(low, high)
    if len(values) < 3:
        return []
    many, pairs = values[1], []
    rows = np.full(count - 1 if replace else count, many)
    for other in (values[0], values[2]):
        what = f"{count} records of {many!r} (one ulp inside {values[0]!r})"
        for first in (False, True):
            where = "first" if first else "last"
            d1 = np.append(other, rows) if first else np.append(rows, other)
            d0 = (np.append(many, rows) if first else np.append(rows, many)) if replace else rows
            change = f"one of them replaced by {other!r} {where}" if replace else f"and {other!r} added {where}"
            pairs.append(RoundingPair(f"{what}, {change}", d0, d1, 0 if first else len(d1) - 1))
    return pairs + _screened_pairs(values, high - low if replace else max(abs(low), abs(high)), count, replace)


def _screened_pairs(values: list[float], change: float, count: int, replace: bool) -> list[RoundingPair]:
    """Return the `ROUNDING_KEPT` prefix datasets whose in-order float sums move most beyond `change`, and their reorders.

    A dataset is k records at x followed by the rest at y (x ≠ y among
    `values`), its last record changed to z (replaced, or z added last);
    its twin has the changed record first. Only pairs whose sums, taken one
    addition after another, differ by more than `change` are kept; of the
    pairs of one (x, y, z), the one that moves most.
    """
    if count > SCREEN_CELLS // SCREEN_MIN_PREFIXES:
        return []  # a grid too large to sum here
    ks = _prefix_lengths(count)
    best: dict[tuple[float, float, float], tuple[float, int]] = {}
    for x, y in itertools.permutations(values, 2):
        grid = np.where(np.arange(count)[None, :] < ks[:, None], x, y)
        sums = np.cumsum(grid, axis=1)  # one addition after another, as a loop over the records sums them
        whole = sums[:, -1]
        head = (sums[:, -2] if count > 1 else np.zeros(len(ks))) if replace else whole
        for z in values:
            excess = np.abs((head + z) - whole) - change
            if replace:
                excess[grid[:, -1] == z] = -np.inf  # no record changed
            i = int(np.argmax(excess))
            if excess[i] > 0:
                best[(x, y, z)] = (float(excess[i]), int(ks[i]))
    ranked = sorted(best.items(), key=lambda item: -item[1][0])[:ROUNDING_KEPT]
    return [p for (x, y, z), (_, k) in ranked for p in _screened_pair(k, x, y, z, count, replace)]


def _prefix_lengths(count: int) -> np.ndarray:
    """Return the prefix lengths k the screen tries: every one, or evenly spaced ones keeping a grid under `SCREEN_CELLS`."""
    tried = SCREEN_CELLS // max(count, 1)
    return np.arange(count + 1) if count + 1 <= tried else np.unique(np.linspace(0, count, tried).astype(int))


def _screened_pair(k: int, x: float, y: float, z: float, length: int, replace: bool) -> list[RoundingPair]:
    """Return the dataset of k records at x then the rest at y with its last record changed to z, and the changed one first."""
    rows = np.where(np.arange(length) < k, x, y)
    what = f"{k} records of {x!r} then {length - k} of {y!r}"
    if replace:
        d1 = rows.copy()
        d1[-1] = z
        twin0, twin1 = np.append(rows[-1], rows[:-1]), np.append(z, rows[:-1])
        return [RoundingPair(f"{what}, the last replaced by {z!r}", rows, d1, length - 1),
                RoundingPair(f"{what}, the last replaced by {z!r} first (the same records in another order)", twin0, twin1, 0)]
    return [RoundingPair(f"{what}, and {z!r} added last", rows, np.append(rows, z), length),
            RoundingPair(f"{what}, and {z!r} added first (the same records in another order)", rows, np.append(z, rows), 0)]
