"""Laplace noise rounded to a 2^−20 grid: the idealized Laplace mechanism without floating-point leaks.

Adding raw floating-point Laplace noise to 0 or to 1 leaves different
patterns in the low bits (Mironov, "On Significance of the Least Significant
Bits for Differential Privacy", CCS 2012), which dpaudit's low-bits scorer
finds. The experiments about composition and group privacy study the
mathematical mechanism, so they round the noise to multiples of h = 2^−20:
shifting the data by an integer moves the rounded noise by whole cells, and
each cell's probability changes by at most e^{ε·shift} (the density ratio
bound holds pointwise), so the rounded mechanism keeps exactly the same ε,
and x + noise is computed without rounding for integer x.
"""

from __future__ import annotations

import numpy as np

__all__ = ["grid_laplace"]

GRID_STEP = 2.0**-20


def grid_laplace(scale: float, shape: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Return Laplace(0, `scale`) draws rounded to the nearest multiple of 2^−20."""
    return np.round(rng.laplace(0.0, scale, shape) / GRID_STEP) * GRID_STEP
