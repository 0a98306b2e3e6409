"""Turn raw mechanism outputs into what scorers work on: numeric matrices or category codes."""

from __future__ import annotations

import numpy as np

__all__ = ["as_matrix", "common_dtype", "is_categorical", "row_keys", "small_range_counts"]

RANGE_PER_KEY = 4


def is_categorical(outputs: np.ndarray) -> bool:
    """Return True when outputs are not numbers (strings, objects, booleans)."""
    return outputs.dtype == object or outputs.dtype.kind in "USb"


def as_matrix(outputs: np.ndarray) -> np.ndarray:
    """Return numeric outputs as a float matrix of shape (n, d), one row per output."""
    return np.asarray(outputs, dtype=float).reshape(len(outputs), -1)


def common_dtype(out0: np.ndarray, out1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return both output arrays in one dtype (ints beside floats become floats), so that equal outputs get equal keys."""
    if out0.dtype == out1.dtype:
        return out0, out1
    common = np.result_type(out0.dtype, out1.dtype)
    return out0.astype(common), out1.astype(common)


def row_keys(outputs: np.ndarray) -> np.ndarray:
    """Return one hashable key per output: the output itself, its row's text for strings and objects, else its row's bytes.

    Keys of two arrays compare only in one dtype (`common_dtype`); −0 is
    keyed as 0. A row of one number of 1, 2, 4 or 8 bytes is keyed by the
    integer of its bytes: equal exactly when the bytes are, as the row's
    bytes would be, and sorted and counted as integers rather than byte by
    byte (`numpy.unique` of 2·10⁵ rows about 20 times faster).
    """
    if outputs.ndim == 1:
        return outputs.astype(str) if is_categorical(outputs) else outputs
    flat = outputs.reshape(len(outputs), -1)
    if flat.dtype.kind in "OUS":
        return _text_rows(flat)
    flat = np.ascontiguousarray(flat + 0.0 if flat.dtype.kind == "f" else flat)
    if flat.shape[1] == 1 and flat.dtype.itemsize in (1, 2, 4, 8):
        return flat.view(np.dtype(f"i{flat.dtype.itemsize}")).ravel()
    return flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()


def _text_rows(flat: np.ndarray) -> np.ndarray:
    """Return each row of a (n, d) array of strings or objects as one string, fields separated by a unit separator."""
    keys = flat[:, 0].astype(str)
    for j in range(1, flat.shape[1]):
        keys = np.char.add(np.char.add(keys, "\x1f"), flat[:, j].astype(str))
    return keys


def small_range_counts(k0: np.ndarray, k1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Return `numpy.unique` of integer keys of both samples and how often each is in `k0` and in `k1`, or None.

    Counted by `bincount`, without sorting, when the keys' range is at most
    RANGE_PER_KEY times their number; None for other keys (the caller sorts).
    """
    if k0.dtype.kind not in "iu" or k0.dtype != k1.dtype or not len(k0) or not len(k1):
        return None
    low, high = min(k0.min(), k1.min()), max(k0.max(), k1.max())
    width = int(high) - int(low) + 1
    if width > RANGE_PER_KEY * (len(k0) + len(k1)):
        return None
    c0, c1 = (np.bincount((k - low if low else k).astype(np.intp, copy=False), minlength=width) for k in (k0, k1))
    present = np.flatnonzero(c0 + c1)
    return present.astype(k0.dtype) + low, c0[present], c1[present]
