"""Turn raw mechanism outputs into what scorers work on: numeric matrices or category codes."""

from __future__ import annotations

import numpy as np

__all__ = ["as_matrix", "common_dtype", "is_categorical", "row_keys"]


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
    keyed as 0.
    """
    if outputs.ndim == 1:
        return outputs.astype(str) if is_categorical(outputs) else outputs
    flat = outputs.reshape(len(outputs), -1)
    if flat.dtype.kind in "OUS":
        return _text_rows(flat)
    flat = np.ascontiguousarray(flat + 0.0 if flat.dtype.kind == "f" else flat)
    return flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()


def _text_rows(flat: np.ndarray) -> np.ndarray:
    """Return each row of a (n, d) array of strings or objects as one string, fields separated by a unit separator."""
    keys = flat[:, 0].astype(str)
    for j in range(1, flat.shape[1]):
        keys = np.char.add(np.char.add(keys, "\x1f"), flat[:, j].astype(str))
    return keys
