"""The data's part of each step of a user's loop along a canary's direction, as a white-box attacker predicts it.

As `data_gradients` does for dpaudit's trainer: at step t the noisy sum is
S_t = Σ_{i sampled} c_i(θ_t) + (canaries sampled) + N(0, σ²C²I), c_i the
clipped gradient of row i of the data the audit trains on (fixed before
the game, common to both neighbouring datasets). Under Poisson sampling at
the stated rate q, the data's part of ⟨S_t, u⟩ has mean q·Σ_i ⟨c_i, u⟩ and
variance q(1 − q)·Σ_i ⟨c_i, u⟩². A user's model is a black box, so the
rows' ⟨g_i, u⟩ come from their losses by forward differences along u
itself (m + 1 loss calls on the data per step for m canaries, not one per
coordinate of their support: the projection needs nothing else); each row's clip
factor min(1, C/‖g_i‖) is taken at θ₀ of the run, from its whole gradient
(P + 1 loss calls on the data, once per θ₀ in a process; skipped, factor
1, above MAX_PARAMETERS). Precision only decides how much is certified: the
prediction reads the released iterates and inputs fixed before the game,
never which canaries joined the run, so scores built on it are as sound as any.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from dpaudit.attacks.dpsgd.numeric_gradients import directional_derivatives, loss_gradients
from dpaudit.mechanisms.dpsgd.data import TrainingData

__all__ = ["MAX_PARAMETERS", "user_data_moments"]

MAX_PARAMETERS = 5000
FACTORS_KEPT = 8
_FACTORS: dict[tuple, tuple[TrainingData, np.ndarray]] = {}


def user_data_moments(thetas: np.ndarray, directions: list[np.ndarray], support: np.ndarray, *,
                      losses: Callable[..., np.ndarray], data: TrainingData, clip_norm: float,
                      sample_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the (T, m) mean and variance of the data's clipped gradient sum along each canary's direction at each θ_t.

    `thetas` are θ₀ … θ_{T−1} ((T, P)); `directions[t]` the canaries' unit
    directions on `support` at step t ((m, len(support))). Inputs: the
    released iterates, and the data, losses and stated settings, fixed before the game.
    """
    factors = _clip_factors(thetas[0], losses=losses, data=data, clip_norm=clip_norm)
    means, variances = [], []
    for theta, units in zip(thetas, directions):
        along = directional_derivatives(losses, theta, data.x, data.y, support, units) * factors[:, None]
        means.append(sample_rate * along.sum(axis=0))
        variances.append(sample_rate * (1 - sample_rate) * (along**2).sum(axis=0))
    return np.stack(means), np.stack(variances)


def _clip_factors(theta: np.ndarray, *, losses: Callable[..., np.ndarray], data: TrainingData,
                  clip_norm: float) -> np.ndarray:
    """Return each row's clip factor min(1, C/‖g_i(θ)‖) from its whole gradient (1 for models above MAX_PARAMETERS).

    Computed once per (θ, losses, data, C) in a process and kept (read-only)
    for the next FACTORS_KEPT: the runs of a game that start from one θ₀ share them.
    """
    if np.size(theta) > MAX_PARAMETERS:
        return np.ones(data.rows)
    key = (np.asarray(theta, dtype=np.float64).tobytes(), losses, id(data), float(clip_norm))
    kept = _FACTORS.get(key)
    if kept is None or kept[0] is not data:
        norms = np.linalg.norm(loss_gradients(losses, theta, data.x, data.y, np.arange(np.size(theta)), central=False),
                               axis=1)
        factors = np.minimum(1.0, clip_norm / np.maximum(norms, 1e-12))
        factors.setflags(write=False)
        kept = _FACTORS[key] = (data, factors)
        while len(_FACTORS) > FACTORS_KEPT:
            _FACTORS.pop(next(iter(_FACTORS)))
    return kept[1]
