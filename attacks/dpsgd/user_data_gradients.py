"""The data's part of each step of a user's loop along a canary's direction, as a white-box attacker predicts it.

As `data_gradients` does for dpaudit's trainer: at step t the noisy sum is
S_t = Σ_{i sampled} c_i(θ_t) + (canaries sampled) + N(0, σ²C²I), c_i the
clipped gradient of row i of the data the audit trains on (fixed before
the game, common to both neighbouring datasets). Under Poisson sampling at
the stated rate q, the data's part of ⟨S_t, u⟩ has mean q·Σ_i ⟨c_i, u⟩ and
variance q(1 − q)·Σ_i ⟨c_i, u⟩². A user's model is a black box, so the
rows' ⟨g_i, u⟩ come from their losses by forward differences along u
itself (m + 1 loss calls per step for m canaries, not one per coordinate of
their support: the projection needs nothing else); each row's clip factor
min(1, C/‖g_i‖) is taken at θ₀ of the run, from its whole gradient (P + 1
loss calls, once per θ₀ in a process; skipped, factor 1, above MAX_PARAMETERS).

Above SAMPLED_ROWS rows, these calls read a fixed sample of k = SAMPLED_ROWS
of the n rows (drawn without replacement from SAMPLE_SEED, a constant, so
fixed before every game and the same for every run): the sums over the
n rows are estimated as n/k times the sums over the sample, and the
variance is widened by the estimate's own sampling variance
q²·n²·(1 − k/n)·s²/k (s² the sample variance of the k rows' ⟨c_i, u⟩), so
that a step's statistic keeps about unit variance without the canary. This
cuts a step's cost on the digits' 1797 rows about fourteenfold
(`benchmarks/user_dpsgd.py --stated` measures what it costs in power).
Precision only decides how much is certified: the prediction reads the
released iterates and inputs fixed before the game, never which canaries
joined the run, so scores built on it are as sound as any.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from dpaudit.attacks.dpsgd.numeric_gradients import directional_derivatives, loss_gradients
from dpaudit.mechanisms.dpsgd.data import TrainingData

__all__ = ["MAX_PARAMETERS", "SAMPLED_ROWS", "sampled_rows", "user_data_moments"]

MAX_PARAMETERS = 5000
SAMPLED_ROWS = 128
SAMPLE_SEED = 48
FACTORS_KEPT = 8
_FACTORS: dict[tuple, tuple[TrainingData, np.ndarray]] = {}


def user_data_moments(thetas: np.ndarray, directions: list[np.ndarray], support: np.ndarray, *,
                      losses: Callable[..., np.ndarray], data: TrainingData, clip_norm: float,
                      sample_rate: float, sample: int | None = SAMPLED_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """Return the (T, m) mean and variance of the data's clipped gradient sum along each canary's direction at each θ_t.

    `thetas` are θ₀ … θ_{T−1} ((T, P)); `directions[t]` the canaries' unit
    directions on `support` at step t ((m, len(support))); `sample`: the
    rows read (`sampled_rows`; None: all of them, the exact sums). Inputs:
    the released iterates, and the data, losses and stated settings, fixed before the game.
    """
    rows = sampled_rows(data.rows, sample)
    x, y, q = data.x[rows], data.y[rows], sample_rate
    factors = _clip_factors(thetas[0], losses=losses, data=data, rows=rows, clip_norm=clip_norm)
    scale, estimate = data.rows / len(rows), _estimate_variance(data.rows, len(rows))
    means, variances = [], []
    for theta, units in zip(thetas, directions):
        along = directional_derivatives(losses, theta, x, y, support, units) * factors[:, None]
        means.append(q * scale * along.sum(axis=0))
        spread = along.var(axis=0, ddof=1) if len(rows) > 1 else np.zeros(len(units))
        variances.append(q * (1 - q) * scale * (along**2).sum(axis=0) + q**2 * estimate * spread)
    return np.stack(means), np.stack(variances)


def sampled_rows(n: int, sample: int | None = SAMPLED_ROWS) -> np.ndarray:
    """Return the sorted indices of the rows read: all n when `sample` is None or n ≤ sample, else `sample` of them
    drawn without replacement from SAMPLE_SEED (a function of n alone: fixed before the game)."""
    if sample is None or n <= sample:
        return np.arange(n)
    return np.sort(np.random.default_rng(SAMPLE_SEED).choice(n, size=sample, replace=False))


def _estimate_variance(n: int, k: int) -> float:
    """Return n²(1 − k/n)/k, the variance of n × (the mean of k of n values drawn without replacement) per unit of their
    variance (0 when all n are read)."""
    return n * n * (1.0 - k / n) / k


def _clip_factors(theta: np.ndarray, *, losses: Callable[..., np.ndarray], data: TrainingData, rows: np.ndarray,
                  clip_norm: float) -> np.ndarray:
    """Return the clip factor min(1, C/‖g_i(θ)‖) of each of `rows` from its whole gradient (1 above MAX_PARAMETERS).

    Computed once per (θ, losses, data, rows, C) in a process and kept
    (read-only) for the next FACTORS_KEPT: the runs of a game that start from one θ₀ share them.
    """
    if np.size(theta) > MAX_PARAMETERS:
        return np.ones(len(rows))
    key = (np.asarray(theta, dtype=np.float64).tobytes(), losses, id(data), rows.tobytes(), float(clip_norm))
    kept = _FACTORS.get(key)
    if kept is None or kept[0] is not data:
        gradients = loss_gradients(losses, theta, data.x[rows], data.y[rows], np.arange(np.size(theta)), central=False)
        factors = np.minimum(1.0, clip_norm / np.maximum(np.linalg.norm(gradients, axis=1), 1e-12))
        factors.setflags(write=False)
        kept = _FACTORS[key] = (data, factors)
        while len(_FACTORS) > FACTORS_KEPT:
            _FACTORS.pop(next(iter(_FACTORS)))
    return kept[1]
