"""Per-example loss gradients of a user's model from its loss function alone, by central or forward differences.

A user's training function is a black box to dpaudit, and so is its model:
all dpaudit can evaluate is `losses(params, x, y)`. The canaries' gradients
at an iterate θ are then (ℓ(θ + h·e_k) − ℓ(θ − h·e_k)) / 2h on the
coordinates k their gradients touch (`touched`, found once at θ₀), two loss
calls per coordinate for all canaries at once. The step h = 10⁻³·max(1, |θ_k|)
keeps the error small for float32 losses too (round-off ~ 10⁻⁷/h, truncation
~ h²); where a loss is infinite (a probability that underflowed to 0) the
difference counts as 0. Scores built on these gradients need not be exact: any score is sound
input to the estimators; precision only decides how much is certified.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["directional_derivatives", "loss_gradients", "touched"]

RELATIVE_STEP = 1e-3
ZERO = 1e-8  # a gradient entry below this (relative to the largest) counts as untouched

Losses = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def loss_gradients(losses: Losses, params: np.ndarray, x: np.ndarray, y: np.ndarray,
                   coordinates: np.ndarray, *, central: bool = True) -> np.ndarray:
    """Return the (m, len(coordinates)) gradients of the m per-example losses at `params` on `coordinates`.

    `central`: central differences (two loss calls per coordinate); else
    forward differences (one call per coordinate and one at `params`: half
    the calls, error ~ h·curvature instead of h², for the scores of every
    step of every run, where precision only decides how much is certified).
    """
    point = np.array(params, dtype=np.float64)
    out = np.empty((len(y), len(coordinates)))
    base = None if central else losses(point, x, y)
    for column, k in enumerate(coordinates):
        centre = point[k]
        step = RELATIVE_STEP * max(1.0, abs(centre))
        point[k] = centre + step
        up = losses(point, x, y)
        point[k] = centre - step
        down, width = (losses(point, x, y), 2.0 * step) if central else (base, step)
        with np.errstate(invalid="ignore"):
            out[:, column] = (up - down) / width
        point[k] = centre
    return np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


def directional_derivatives(losses: Losses, params: np.ndarray, x: np.ndarray, y: np.ndarray, coordinates: np.ndarray,
                            units: np.ndarray) -> np.ndarray:
    """Return the (n, m) derivatives of the n per-example losses at `params` along each of the m unit `units` on `coordinates`.

    Forward differences along each direction: m + 1 loss calls, however many
    coordinates the directions span (against len(coordinates) + 1 for the
    gradients themselves), with the step h = RELATIVE_STEP·max(1, max |θ_k|)
    on those coordinates; error ~ h·curvature, as `loss_gradients(central=False)`.
    """
    point = np.array(params, dtype=np.float64)
    step = RELATIVE_STEP * max(1.0, float(np.abs(point[coordinates]).max(initial=0.0)))
    base = losses(point, x, y)
    out = np.empty((len(y), len(units)))
    for column, unit in enumerate(units):
        moved = point.copy()
        moved[coordinates] += step * unit
        with np.errstate(invalid="ignore"):
            out[:, column] = (losses(moved, x, y) - base) / step
    return np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


def touched(losses: Losses, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Return the coordinates on which any of the m examples' loss gradients at `params` is not zero."""
    grads = np.abs(loss_gradients(losses, params, x, y, np.arange(np.size(params))))
    return np.flatnonzero(grads.max(axis=0) > ZERO * max(1.0, float(grads.max(initial=0.0))))
