"""Crafted canaries whose clipped gradient has norm C, whatever C is (Jagielski, Ullman, Oprea, NeurIPS 2020).

A crafted canary is a·e_j: zero except in a feature j no training row uses,
so its gradient falls on weights no real example moves. With a = 1 its
gradient norm is about 1 (logistic regression: ‖p − e_y‖·√(a² + 1) ≤ √2):
against a clip norm of 10 clipping never binds, and a canary that never
reaches C cannot show noise that is wrong relative to C. The magnitude a is
therefore chosen, before any training run, from the gradient norm at θ₀:

- with the clip norm C stated: the smallest a on a grid whose gradient norm
  at θ₀ is at least REACH·C (margin for the canary's loss falling during
  training); a = 0 (the all-zero input, whose gradient is the bias
  gradient alone) is on the grid, and is the canary that shows biases left
  out of clipping when C is small; magnitudes whose losses are not finite
  (a user's softmax overflowing) are not used;
- without it: one canary for each norm of LADDER (clip norms up to about
  10 are reached), chosen the same way. The
  multi-run audit certifies each and reports the best, at confidence
  1 − β/K each (Bonferroni over the K canaries: the ladder is paid for).

The choice uses θ₀ and the data only, never a run's outcome, so it keeps
every estimator's guarantee.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from dpaudit.attacks.dpsgd.canaries import CRAFTED, DPSGDCanaries
from dpaudit.attacks.dpsgd.numeric_gradients import loss_gradients, touched
from dpaudit.mechanisms.dpsgd.data import TrainingData

__all__ = ["LADDER", "REACH", "reaching_canaries", "reaching_magnitudes", "target_norms"]

REACH = 2.0
LADDER = (0.2, 2.0, 20.0)
MAGNITUDES = np.concatenate([[0.0], 2.0 ** np.arange(-6, 13)])


def target_norms(clip_norm: float | None) -> tuple[float, ...]:
    """Return the gradient norms at θ₀ the canaries are to reach: REACH·C, or the LADDER when C is not stated."""
    return LADDER if clip_norm is None else (REACH * clip_norm,)


def reaching_canaries(m: int, *, data: TrainingData, theta0: np.ndarray, clip_norm: float | None,
                      losses: Callable[..., np.ndarray], rng: np.random.Generator, per_norm: bool,
                      norms: tuple[float, ...] | None = None) -> DPSGDCanaries:
    """Return crafted canaries whose gradient norms at θ₀ reach `norms` (default `target_norms(clip_norm)`), and the coordinates they touch.

    `per_norm`: one canary per target norm (the multi-run ladder, m ignored);
    else m canaries cycling over the target norms (one run). Canary i uses
    the unused feature i mod (their number), or when every feature is used
    the least used ones, and a seeded random label.
    """
    unused = data.unused_features()
    if len(unused) == 0:  # no feature is free: the least used ones, so that few rows share the canary's weights
        unused = np.argsort(np.abs(data.x).max(axis=0), kind="stable")
    norms = target_norms(clip_norm) if norms is None else norms
    count = len(norms) if per_norm else m
    features = unused[np.arange(count) % len(unused)]
    labels = rng.integers(0, data.classes, size=count)
    wanted = np.array([norms[i % len(norms)] for i in range(count)])
    magnitudes = reaching_magnitudes(features, labels, wanted, data=data, theta0=theta0, losses=losses)
    x = np.zeros((count, data.features), dtype=np.float32)
    x[np.arange(count), features] = magnitudes
    return DPSGDCanaries(CRAFTED, x=x, y=labels, magnitudes=magnitudes,
                         support=touched(losses, theta0, x, labels))


def reaching_magnitudes(features: np.ndarray, labels: np.ndarray, wanted: np.ndarray, *, data: TrainingData,
                        theta0: np.ndarray, losses: Callable[..., np.ndarray], sign: float = 1.0) -> np.ndarray:
    """Return for each input sign·a·e_j (j in `features`) the smallest grid magnitude a whose gradient norm at θ₀ reaches its wanted norm.

    The grid is walked upwards, all canaries still searching at once (one
    pass of central differences per magnitude); a canary stops at the
    first magnitude that reaches its norm, or before one whose loss is not
    finite (keeping the last finite one).
    """
    coordinates = np.arange(np.size(theta0))
    chosen = np.zeros(len(features))
    searching = np.arange(len(features))
    for magnitude in MAGNITUDES:
        x = np.zeros((len(searching), data.features))
        x[np.arange(len(searching)), features[searching]] = sign * magnitude
        finite = np.isfinite(losses(theta0, x, labels[searching]))
        searching, x = searching[finite], x[finite]
        if len(searching) == 0:
            break
        chosen[searching] = magnitude
        norms = np.linalg.norm(loss_gradients(losses, theta0, x, labels[searching], coordinates), axis=1)
        searching = searching[norms < wanted[searching]]
        if len(searching) == 0:
            break
    return chosen
