"""How far the value each recorded draw's noise is added to moved, priced by the law of that noise.

Where a primitive receives the value (`rng.laplace(loc=value, scale=b)`),
the move is the move of its location argument. Where it does not
(`value + rng.laplace(0, b)`), the release minus the frozen noise is the
value, so the release's move is the value's move: it is laid over the
additive draws in the order they were made when their entries add up to
the release's, else charged whole to the draw of smallest scale. The
draws of a law whose scale the program sets itself (`standard_normal`,
`standard_exponential`: `value + σ·rng.standard_normal()`) are not laid
over: their recorded scale, 1, is not the scale of the released noise,
so such a move is "not priced" rather than priced by a scale it never had
(a move of their noise argument cannot happen: they have none). Each move
is priced by its law (`PURE`: Σ|Δ|/scale; `GAUSSIAN`: Σ(Δ/σ)²), a reading
of the recorded noise at this pair, never a certificate.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from dpaudit.attacks.replay.draws import LOCATION, Draw
from dpaudit.attacks.replay.findings import DrawShift

__all__ = ["GAUSSIAN", "PURE", "SCALED", "additive_draws", "argument_shifts", "priced", "release_shifts", "scale_of"]

PURE = ("laplace", "logistic", "exponential", "standard_exponential", "geometric")
"""Laws whose privacy loss at a shift Δ is |Δ|/scale (the geometric's scale is 1/log(1/(1 − p)))."""
GAUSSIAN = ("normal", "standard_normal")
"""Laws whose shift Δ is (Δ/σ)-GDP (Dong, Roth, Su 2019), priced by the exact profile."""
SCALED = ("standard_normal", "standard_exponential")
"""Laws of scale 1 that a program scales itself: a move of the release is never laid over them."""


def scale_of(draw: Draw) -> np.ndarray:
    """Return the scale of an additive draw's noise, entry by entry (an array broadcast to its output)."""
    a = draw.arguments
    if draw.method in ("standard_normal", "standard_exponential"):
        scale: Any = 1.0
    elif draw.method == "geometric":
        p = np.asarray(a["p"], dtype=float)
        with np.errstate(divide="ignore"):
            scale = np.where(p >= 1.0, 0.0, -1.0 / np.log1p(-np.minimum(p, 1.0)))
    else:
        scale = a.get("scale", 1.0)
    return np.broadcast_to(np.asarray(scale, dtype=float), draw.shape) if draw.shape else np.asarray(scale, dtype=float)


def _shift(index: int, draw: Draw, delta: np.ndarray, where: str) -> DrawShift:
    delta = np.nan_to_num(np.abs(delta), nan=np.inf, posinf=np.inf)
    scale = float(np.min(scale_of(draw))) if draw.method in PURE + GAUSSIAN else float("nan")
    return DrawShift(index, draw.method, scale, float(delta.sum()), _l2(delta), where)


def _l2(delta: np.ndarray) -> float:
    """Return the L2 norm of a move (∞ past the float range, never a warning)."""
    with np.errstate(over="ignore"):
        return float(np.sqrt(np.square(delta).sum()))


def argument_shifts(tape: list[Draw], replayed: dict[int, Draw]) -> list[tuple[DrawShift, np.ndarray]]:
    """Return each draw whose location argument moved between D and D′, with the move entry by entry."""
    found = []
    for index, draw in replayed.items():
        name = LOCATION.get(draw.method)
        recorded = tape[index]
        if name is None or recorded.method != draw.method:
            continue
        delta = np.subtract(np.asarray(draw.arguments[name], dtype=float), np.asarray(recorded.arguments[name], dtype=float))
        delta = np.broadcast_to(delta, recorded.shape) if recorded.shape else delta
        if np.any(np.nan_to_num(delta, nan=1.0) != 0):
            found.append((_shift(index, recorded, delta, "argument"), delta))
    return found


def additive_draws(tape: list[Draw]) -> list[tuple[int, Draw]]:
    """Return the draws a move of the release may be laid over, with their positions: location-scale and pure laws
    whose scale is an argument (not `SCALED`)."""
    return [(i, d) for i, d in enumerate(tape) if d.method in PURE + GAUSSIAN + ("gumbel",) and d.method not in SCALED]


def release_shifts(tape: list[Draw], move: np.ndarray) -> list[tuple[DrawShift, np.ndarray]]:
    """Return the release's move laid over the additive draws (in order when their entries match the release's)."""
    additive = additive_draws(tape)
    if not additive or not np.any(move != 0):
        return []
    sizes = [int(np.prod(d.shape)) for _, d in additive]
    if sum(sizes) == move.size:
        parts = np.split(move, np.cumsum(sizes)[:-1])
        return [(_shift(i, d, p.reshape(d.shape), "release"), p) for (i, d), p in zip(additive, parts) if np.any(p != 0)]
    i, d = min(additive, key=lambda item: float(np.min(scale_of(item[1]))) if item[1].method != "gumbel" else math.inf)
    return [(DrawShift(i, d.method, float(np.min(scale_of(d))), float(np.abs(move).sum()), _l2(move), "release"), move)]


def priced(shifts: list[tuple[DrawShift, np.ndarray]], tape: list[Draw]) -> tuple[float, float, tuple[str, ...]]:
    """Return (Σ|Δ|/scale over the pure laws, √Σ(Δ/σ)² over the Gaussian ones, the laws with no price here)."""
    pure, mu2, unpriced = 0.0, 0.0, []
    for shift, delta in shifts:
        draw = tape[shift.index]
        if draw.method not in PURE + GAUSSIAN:
            unpriced.append(draw.describe())
            continue
        delta = np.nan_to_num(np.abs(np.asarray(delta, dtype=float)), nan=np.inf, posinf=np.inf)
        scale = scale_of(draw) if delta.shape == draw.shape else np.asarray(float(np.min(scale_of(draw))))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = np.where(delta == 0, 0.0, delta / scale)
        if draw.method in PURE:
            pure += float(ratio.sum())
        else:
            mu2 += _l2(ratio) ** 2
    return pure, math.sqrt(mu2), tuple(unpriced)
