"""What the training data add to each step's noisy sum along a canary's direction, as a white-box attacker predicts it.

At step t of DP-SGD the noisy sum is S_t = Σ_{i sampled} c_i(θ_t) + (canaries
sampled) + N(0, σ²C²I), c_i the clipped gradient of real example i. The
attacker sees θ_t and knows the data and C (they are the audit's, common to
both neighbouring datasets), so it can compute every c_i(θ_t); what it does
not know is which examples were sampled. Under Poisson sampling at rate q
the data's part of ⟨S_t, u⟩ therefore has mean q·Σ_i ⟨c_i, u⟩ and variance
q(1 − q)·Σ_i ⟨c_i, u⟩²; under full batches (q = 1) it is known exactly.
Subtracting the mean and adding the variance to σ²C² turns a canary on a
coordinate the data use into one on a coordinate they do not (up to the
sampling variance): the per-step statistic is again (1 − q)·N(0, 1) + q·N(μ, 1)
against N(0, 1), approximately, instead of N(drift, 1) for a drift that
depends on the coordinate and not on membership, which ranks canaries by
their coordinate rather than by membership.

The mean and variance depend only on the released iterates and on public
inputs, never on which canaries were included, so scores built on them are
as sound as any score.
"""

from __future__ import annotations

import numpy as np
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.flat_model import FlatModel

__all__ = ["data_gradient_moments"]


def data_gradient_moments(thetas: np.ndarray, directions: np.ndarray, *, model: FlatModel, data: TrainingData,
                          clip_norm: float, sample_rate: float,
                          starts: dict[bytes, tuple[np.ndarray, np.ndarray]] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return the (T, m) mean and variance of the data's clipped gradient sum along each unit direction at each θ_t.

    `thetas` are θ₀ … θ_{T−1} ((T, P)), `directions` the canaries' unit
    directions ((m, P)). Inputs: the released iterates, and the canaries,
    model, data (without canaries) and settings, fixed before the game. The variance is summed coordinate by coordinate,
    q(1 − q)·Σ_k u_k² Σ_i c_ik²: exact for Dirac directions, the covariances
    between coordinates left out otherwise. Directions that no example's
    gradient touches at θ₀ are taken to stay untouched, and when none is
    touched the other T − 1 steps are not computed: this is exact for the
    weights of inputs that are zero in every example (the quiet coordinates
    of the digits), whose gradients vanish at every θ. `starts` keeps the
    moments at θ₀ by its bytes, for the next run that starts there (every
    run of a game starts from the same public θ₀).
    """
    key, starts = thetas[0].tobytes(), {} if starts is None else starts
    if key not in starts:
        starts[key] = _coordinate_moments(thetas[0], model, data, clip_norm)
    first = starts[key]
    support = np.abs(directions) > 0
    touched = (first[1] > 0) & support.any(axis=0)
    if not touched.any():
        zeros = np.zeros((len(thetas), len(directions)))
        return zeros, zeros
    steps = [first] + [_coordinate_moments(theta, model, data, clip_norm) for theta in thetas[1:]]
    sums, squares = np.stack([s for s, _ in steps]), np.stack([v for _, v in steps])
    return sample_rate * sums @ directions.T, sample_rate * (1 - sample_rate) * squares @ (directions**2).T


def _coordinate_moments(theta: np.ndarray, model: FlatModel, data: TrainingData,
                        clip_norm: float) -> tuple[np.ndarray, np.ndarray]:
    """Return Σ_i c_i(θ) and Σ_i c_i(θ)² (per coordinate, float64) of the data's gradients clipped to C."""
    torch = model.torch
    grads = model.per_example_gradients(model.tensor(theta), model.tensor(data.x),
                                        torch.as_tensor(data.y, device=model.device))
    norms = torch.linalg.vector_norm(grads, dim=1, keepdim=True)
    clipped = (grads * torch.clamp(clip_norm / torch.clamp(norms, min=1e-12), max=1.0)).double()
    return clipped.sum(dim=0).cpu().numpy(), (clipped**2).sum(dim=0).cpu().numpy()
