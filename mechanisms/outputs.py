"""What a black box returned, made into the outputs an audit works on, or one sentence saying why it cannot be.

Non-finite numbers are outputs like any other: NaN, +inf and −inf are
mapped to ±NONFINITE before anything else sees them, and a None output
(among numbers, or always: a function without `return` is a constant
mechanism) to NONFINITE as well; a batch that is None is an error. The map is a fixed post-processing of the
mechanism's output, so a bound certified on the mapped outputs holds for
the mechanism itself (post-processing cannot raise ε); it only merges
those outputs with each other. Vectors of text with number fields (tuples
like ("count", 3.2)) become numbers by another fixed map.
"""

from __future__ import annotations

import types
import zlib
from typing import Any

import numpy as np

from mechanisms.errors import MechanismError

NONFINITE = 2.0**250  # far beyond any real output, yet sums of its fourth power (quadratic features' spread) stay finite


def check_outputs(name: str, out: Any, size: int) -> np.ndarray:
    """Return `out` as an array of `size` outputs, or raise `MechanismError` saying what is wrong."""
    if out is None or isinstance(out, types.GeneratorType):
        raise MechanismError(f"Mechanism '{name}' returned {_what(type(out))} where a batch of outputs was asked for.")
    try:
        arr = np.asarray(out)
    except ValueError as exc:
        raise MechanismError(f"Mechanism '{name}' returned outputs of changing shape ({exc}).") from exc
    if arr.ndim == 0 or arr.shape[0] != size:
        got = "one scalar" if arr.ndim == 0 else f"{arr.shape[0]} outputs"
        raise MechanismError(f"Mechanism '{name}' returned {got} where {size} outputs were asked for.")
    if arr.dtype == object:
        arr = _objects(name, arr)
    if arr.ndim > 1 and arr.dtype.kind == "U":
        arr = _numbers_in_text(arr)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        arr = np.nan_to_num(arr.astype(np.float64), nan=NONFINITE, posinf=NONFINITE, neginf=-NONFINITE)
    return arr


def _objects(name: str, arr: np.ndarray) -> np.ndarray:
    """Return an object array of outputs as numbers when they are numbers or None, else as it is (categories)."""
    if arr.ndim == 1 and arr.size and isinstance(arr[0], (list, tuple, np.ndarray)):
        raise MechanismError(f"Mechanism '{name}' returned outputs of changing shape.")
    kinds = {type(x) for x in arr.flat}
    unusable = [k for k in kinds if issubclass(k, (dict, set, types.GeneratorType))]
    if all(k is type(None) or issubclass(k, (int, float, np.number)) for k in kinds):
        return np.array([np.nan if x is None else x for x in arr.flat], dtype=np.float64).reshape(arr.shape)
    if unusable:
        raise MechanismError(
            f"Mechanism '{name}' returned {_what(unusable[0])}; return numbers, strings or arrays of them."
        )
    return arr


def _numbers_in_text(arr: np.ndarray) -> np.ndarray:
    """Return vectors of text as numbers when some fields are numbers (tuples like ("count", 3.2)), else as they are.

    Fields that all parse as numbers become floats and the others stable
    codes (CRC-32 of the text), a fixed map, so the numbers can be
    thresholded instead of every distinct row being its own category.
    """
    flat = arr.reshape(len(arr), -1)
    columns = [_as_float(flat[:, j]) for j in range(flat.shape[1])]
    if all(c is None for c in columns):
        return arr
    codes = [_text_codes(flat[:, j]) if c is None else c for j, c in enumerate(columns)]
    return np.stack(codes, axis=1).reshape(arr.shape)


def _as_float(texts: np.ndarray) -> np.ndarray | None:
    try:
        return texts.astype(np.float64)
    except ValueError:
        return None


def _text_codes(texts: np.ndarray) -> np.ndarray:
    values, inverse = np.unique(texts, return_inverse=True)
    return np.array([zlib.crc32(v.encode()) for v in values], dtype=np.float64)[inverse.ravel()]


def _what(kind: type) -> str:
    """Return how to name a returned value of type `kind` that is not an output: None for a batch, a dict, a set or a generator."""
    if kind is type(None):
        return "None (does the function forget to return its output?)"
    return f"a {kind.__name__}"
