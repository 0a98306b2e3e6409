"""White-box scores of canaries in a user's own training loop, from its iterates and its loss function.

Each step's update Δ_t = θ_t − θ_{t+1} holds the step's noisy gradient sum.
A canary whose gradient at θ_t is g_t (a Dirac gradient: the same at every
step; an input canary: numerical, from the user's losses, see
`numeric_gradients`) adds its clipped gradient to that sum when sampled, so
the statistic of step t is the update projected on u_t = g_t/‖g_t‖:

- settings stated (`StepSettings`: C, σ, q, lr): x_t = ⟨u_t, Δ_t⟩·B/(lr·σC),
  N(0, 1) without the canary when no other example moves u_t, shifted by
  μ_t = min(‖g_t‖, C)/(σC) when it is sampled; the score is the summed
  per-step log-likelihood ratio (Nasr et al., USENIX Security 2023; as
  `scores.white_box_scores` for dpaudit's trainer), an input canary's
  projection taken net of the data's predicted part (`user_data_gradients`),
  so that a canary is not drowned in the user's data;
- nothing stated: x_t = ⟨u_t, Δ_t⟩/s_t with s_t the step's noise scale
  estimated from the update itself (1.4826 × the median absolute deviation
  of its coordinates: most coordinates of a noisy update are noise), and
  the score Σ_t w_t·x_t, which needs no setting; w_t = min(1, ‖g_t‖/‖g_0‖)
  weighs each step by the canary's gradient norm relative to the run's
  first step (a matched filter for a shift that grows with the clipped
  norm: a step where the canary's loss has fallen to 0 adds noise, no signal).

Any score is sound input to the estimators; these only decide how much is certified.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from dpaudit.attacks.dpsgd.canaries import DPSGDCanaries
from dpaudit.attacks.dpsgd.numeric_gradients import loss_gradients
from dpaudit.attacks.dpsgd.scores import likelihood_ratio_sum
from dpaudit.attacks.dpsgd.user_data_gradients import SAMPLED_ROWS, user_data_moments
from dpaudit.errors import MechanismError
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.step_settings import StepSettings

__all__ = ["noise_scales", "user_white_box_scores"]

MAD_TO_SD = 1.4826
TINY = 1e-12


def user_white_box_scores(iterates: np.ndarray, canaries: DPSGDCanaries, *, losses: Callable[..., np.ndarray],
                          settings: StepSettings | None, rows: int, data: TrainingData | None = None,
                          sample: int | None = SAMPLED_ROWS) -> np.ndarray:
    """Return each canary's white-box score from the iterates θ₀ … θ_T ((T + 1, P)) of a user's training run.

    Inputs: the run's release (its iterates) and what was fixed before the
    game: the canaries, the user's `losses`, the stated `settings` and
    `rows`, the rows of the data the audit trains on without the canaries
    (n in B = q·n when no batch size is stated), and with settings stated
    the `data` the audit trains on (without the canaries): an input
    canary's projections are then taken net of the data's predicted part and
    their scale widened by its sampling variance (`user_data_gradients`,
    read on a fixed `sample` of the data's rows drawn before the game; None: all).
    Nothing that depends on which canaries joined the run.
    """
    if len(iterates) < 2:
        raise MechanismError("A white-box audit needs every step's parameters: train(x, y, rng) returned one row.")
    updates = (iterates[:-1] - iterates[1:]).astype(np.float64)
    projections, norms, directions = _projections(iterates[:-1], updates, canaries, losses)
    if settings is None:
        weights = np.minimum(norms / np.maximum(norms[:1], TINY), 1.0)
        return (weights * projections / noise_scales(updates)[:, None]).sum(axis=0)
    scale = settings.noise_multiplier * settings.clip_norm
    sums = projections * settings.sum_scale(rows)
    if data is not None and data.rows and directions is not None:
        mean, variance = user_data_moments(iterates[:-1], directions[1], directions[0], losses=losses, data=data,
                                           clip_norm=settings.clip_norm, sample_rate=settings.sample_rate,
                                           sample=sample)
        sums, scale = sums - mean, np.sqrt(scale**2 + variance)
    return likelihood_ratio_sum(sums / scale, np.minimum(norms, settings.clip_norm) / scale, settings.sample_rate)


def noise_scales(updates: np.ndarray) -> np.ndarray:
    """Return each update's noise scale, 1.4826 × the median absolute deviation of its coordinates (never 0)."""
    centred = np.abs(updates - np.median(updates, axis=1, keepdims=True))
    mad = MAD_TO_SD * np.median(centred, axis=1)
    return np.where(mad > TINY, mad, np.maximum(centred.std(axis=1), TINY))


def _projections(thetas: np.ndarray, updates: np.ndarray, canaries: DPSGDCanaries,
                 losses: Callable[..., np.ndarray]) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    """Return the (T, m) projections of each update on each canary's gradient direction, the gradient norms, and for
    input canaries (support, each step's unit directions on it) (None for gradient canaries).

    Input canaries' gradients come from forward differences of the user's
    losses on their support; coordinates on which no canary's gradient
    moves at θ₀ of the run (another canary's, when one is played alone) are
    dropped for the later steps, as `touched` drops the rest at θ₀.
    """
    if canaries.gradients is not None:
        grads = canaries.gradients.astype(np.float64)
        norms = np.linalg.norm(grads, axis=1)
        units = grads / np.maximum(norms, TINY)[:, None]
        return updates @ units.T, np.broadcast_to(norms, (len(thetas), len(norms))), None
    support, steps = canaries.support, []
    for step, (theta, update) in enumerate(zip(thetas, updates)):
        grads = loss_gradients(losses, theta, canaries.x, canaries.y, support, central=False)
        if step == 0:
            kept = np.abs(grads).max(axis=0) > 0
            support, grads = support[kept], grads[:, kept]
        norms = np.linalg.norm(grads, axis=1)
        units = grads / np.maximum(norms, TINY)[:, None]
        steps.append((units @ update[support], norms, units))
    return np.stack([p for p, _, _ in steps]), np.stack([n for _, n, _ in steps]), (support, [u for _, _, u in steps])
