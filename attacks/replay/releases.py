"""A release as a replay compares it: its shape and categories (its signature) and its numbers, entry by entry.

A release may be a number, an array, text, a list of labels, or a dict
(labels to numbers); dicts and lists of text carry their labels in the
signature, and their numbers (a dict's values in the order of its sorted
keys) in `numbers`. Two releases are compared number by number only when
their signatures agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from dpaudit.mechanisms.outputs import number

__all__ = ["Signature", "numbers", "signature"]

Signature = tuple[str, tuple[int, ...], tuple[str, ...]]
"""(kind, shape, categories): kind "numbers", "text" or "dict"; the categories are a dict's keys or the text's values."""


def _labels(values: Any) -> tuple[str, ...]:
    return tuple(sorted({str(v) for v in values}))


def signature(release: Any) -> Signature:
    """Return what a release's form is made of: its kind, its shape, and its labels (keys, or the text it holds)."""
    if isinstance(release, Mapping):
        return ("dict", (len(release),), _labels(release.keys()))
    arr = np.asarray(release, dtype=object) if not isinstance(release, np.ndarray) else release
    flat = arr.ravel()
    if arr.dtype.kind in "biufc" or all(isinstance(v, (int, float, complex, np.number, bool)) for v in flat):
        return ("numbers", arr.shape, ())
    return ("text", arr.shape, _labels(v for v in flat if not isinstance(v, (int, float, np.number))))


def numbers(release: Any) -> np.ndarray:
    """Return the release's numbers as a flat float array (a dict's values by sorted key; text by `outputs.number`)."""
    if isinstance(release, Mapping):
        return np.array([number(release[k]) for k in sorted(release, key=str)], dtype=float).ravel()
    arr = np.asarray(release)
    if arr.dtype.kind in "biuf":
        return arr.astype(float).ravel()
    if arr.dtype.kind == "c":
        return np.stack([arr.real, arr.imag], axis=-1).astype(float).ravel()
    return np.array([number(v) for v in np.asarray(release, dtype=object).ravel()], dtype=float)
