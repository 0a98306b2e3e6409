"""Neighbour checks: each returns None for a neighbouring pair, else a sentence saying why not."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import numpy as np

__all__ = ["NeighbourCheck", "answers_within", "by_relation", "categories_in", "of_length", "records", "records_in", "unchecked"]

NeighbourCheck = Callable[[np.ndarray, np.ndarray], Optional[str]]


def records_in(low: float, high: float, *, max_changed: int = 1) -> NeighbourCheck:
    """Return a check: records in [low, high] and at most `max_changed` of them differ.

    Add/remove is modelled by replacing a record with a null record (0), so the
    datasets keep one length.
    """

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        for name, d in (("d0", d0), ("d1", d1)):
            if not np.issubdtype(d.dtype, np.number) or d.min() < low or d.max() > high:
                return f"records of {name} must be numbers in [{low:g}, {high:g}]"
        changed = int(np.any(d0.reshape(len(d0), -1) != d1.reshape(len(d1), -1), axis=1).sum())
        if changed > max_changed:
            return f"they differ in {changed} records, more than {max_changed}"
        return None

    return check


def answers_within(sensitivity: float, *, norm: float = np.inf) -> NeighbourCheck:
    """Return a check for query-answer vectors: ‖d0 − d1‖_norm ≤ sensitivity (StatDP's convention)."""

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        if not np.issubdtype(d0.dtype, np.number) or not np.issubdtype(d1.dtype, np.number):
            return "query answers must be numbers"
        dist = float(np.linalg.norm((d0 - d1).ravel().astype(float), ord=norm))
        if dist > sensitivity + 1e-12:
            return f"their answers differ by {dist:g} in ℓ{norm:g} norm, more than the sensitivity {sensitivity:g}"
        return None

    return check


def categories_in(num_categories: int, *, max_changed: int = 1) -> NeighbourCheck:
    """Return a check: records are integers in [0, num_categories) and at most `max_changed` differ."""

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        for name, d in (("d0", d0), ("d1", d1)):
            if not np.issubdtype(d.dtype, np.integer) or d.min() < 0 or d.max() >= num_categories:
                return f"records of {name} must be integers in [0, {num_categories})"
        changed = int(np.sum(d0 != d1))
        if changed > max_changed:
            return f"they differ in {changed} records, more than {max_changed}"
        return None

    return check


def of_length(length: int, check: NeighbourCheck) -> NeighbourCheck:
    """Return `check` that also requires both datasets to hold exactly `length` records.

    For mechanisms whose noise is calibrated to a public record count.
    """

    def checked(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        if len(d0) != length:
            return f"the noise is calibrated to {length} records, and the datasets have {len(d0)}"
        return check(d0, d1)

    return checked


def unchecked(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
    """Accept any pair: the caller vouches that d0 and d1 are neighbours (`blackbox(..., neighbours=unchecked)`).

    An audit of a pair that is not neighbouring proves nothing about the
    claim: its `violation` may be false.
    """
    return None


def by_relation(relation: str) -> NeighbourCheck:
    """Return the check of `relation` ("replace-one" or "add-remove") on arrays of records (first axis).

    Replace-one: same length, at most one record differs. Add-remove: one
    dataset is the other with one record inserted, or, with the null record
    convention of the built-ins, both have one length and the one differing
    record is null (all zeros, empty or None) in one of them.
    """

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        if len(d0) == len(d1):
            return _replaced(d0, d1, null_only=relation == "add-remove")
        if relation == "replace-one":
            return f"under replace-one they must have the same length; they have {len(d0)} and {len(d1)} records"
        return _inserted(d0, d1)

    return check


def _rows(d: np.ndarray) -> np.ndarray:
    return d.reshape(len(d), int(np.prod(d.shape[1:], dtype=int)))


def _equal_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return, per record, whether a and b hold the same record (NaN equal to NaN)."""
    a, b = _rows(a), _rows(b)
    if a.dtype != b.dtype:
        a, b = a.astype(object), b.astype(object)
    same = np.asarray(a == b, dtype=bool) | (np.asarray(a != a, dtype=bool) & np.asarray(b != b, dtype=bool))
    return np.all(same, axis=1)


def _replaced(d0: np.ndarray, d1: np.ndarray, *, null_only: bool) -> Optional[str]:
    changed = np.flatnonzero(~_equal_rows(d0, d1))
    if changed.size > 1:
        return f"they differ in {changed.size} records, more than 1"
    if null_only and changed.size and not (_is_null(d0[changed[0]]) or _is_null(d1[changed[0]])):
        return (
            "under add-remove one must hold one record more than the other, or the changed record must be "
            "the null record (0) in one of them; for a replaced record, pass relation='replace-one'"
        )
    return None


def _is_null(record: object) -> bool:
    values = np.asarray(record, dtype=object).ravel()
    return all(v is None or v == 0 or v == "" for v in values.tolist())


def _inserted(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
    long, short = (d0, d1) if len(d0) > len(d1) else (d1, d0)
    if len(long) - len(short) != 1:
        return f"under add-remove they must differ by one record; they have {len(d0)} and {len(d1)} records"
    if long.shape[1:] != short.shape[1:]:
        return "their records have different shapes"
    first = int(np.argmin(np.append(_equal_rows(long[:-1], short), False)))
    if not np.all(_equal_rows(long[first + 1:], short[first:])):
        return "one must be the other with one record added or removed, the others in the same order"
    return None


def records(data: Any) -> np.ndarray:
    """Return `data` as an array of records (first axis): a data frame's rows, a dict's rows across its columns.

    Raises ValueError when `data` is not array-like.
    """
    if hasattr(data, "to_numpy") and hasattr(data, "columns"):
        return np.asarray(data.to_numpy())
    if isinstance(data, Mapping):
        columns = [np.asarray(c) for c in data.values()]
        if not columns or len({len(c) for c in columns}) != 1:
            raise ValueError("a dict of columns needs columns of one length")
        return np.concatenate([c.reshape(len(c), -1).astype(object) for c in columns], axis=1)
    arr = np.asarray(data)
    return arr.reshape(1) if arr.ndim == 0 else arr
