"""Neighbour checks: each returns None for a neighbouring pair, else a sentence saying why not."""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

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
