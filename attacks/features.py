"""Turn raw mechanism outputs into what scorers work on: numeric matrices or category codes."""

from __future__ import annotations

import numpy as np


def is_categorical(outputs: np.ndarray) -> bool:
    """Return True when outputs are not numbers (strings, objects, booleans)."""
    return outputs.dtype == object or outputs.dtype.kind in "USb"


def as_matrix(outputs: np.ndarray) -> np.ndarray:
    """Return numeric outputs as a float matrix of shape (n, d), one row per output."""
    return np.asarray(outputs, dtype=float).reshape(len(outputs), -1)


def row_keys(outputs: np.ndarray) -> np.ndarray:
    """Return one hashable key per output (the output itself, or its row's bytes for vectors)."""
    if outputs.ndim == 1:
        return outputs.astype(str) if is_categorical(outputs) else outputs
    flat = np.ascontiguousarray(outputs.reshape(len(outputs), -1))
    return flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()
