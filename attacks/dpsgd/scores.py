"""Scores of DP-SGD canaries: white-box (every iterate) and black-box (the final model); higher = member.

White-box (Nasr et al. 2023; Steinke, Nasr and Jagielski 2023): from the
iterates the attacker recovers each step's noisy gradient sum
S_t = (θ_t − θ_{t+1})·q·n/lr. At step t a canary whose clipped gradient is
c_t adds c_t when sampled, so x_t = ⟨S_t, c_t/‖c_t‖⟩/(σC) is N(0, 1) without
it and, when no real example moves that direction, a mixture
(1 − q)·N(0, 1) + q·N(μ_t, 1) with it, μ_t = ‖c_t‖/(σC). The score is the
sum over steps of that mixture's log-likelihood ratio
log(1 − q + q·exp(μ_t x_t − μ_t²/2)), the Neyman–Pearson statistic of each
step; under full batches (q = 1) it is the summed inner product, up to
affine terms. Black-box: the final model's displacement along a Dirac
canary's direction, or an input canary's loss (−loss, or the loss at θ₀
minus the loss at θ_T).

Any score is sound input to the estimators: their guarantees hold whatever
the score, which only decides how much is certified.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from dpaudit.attacks.dpsgd.canaries import DPSGDCanaries
from dpaudit.attacks.dpsgd.data_gradients import data_gradient_moments
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.flat_model import FlatModel

__all__ = ["BLACK_BOX_SCORES", "THREATS", "black_box_scores", "canary_scores", "likelihood_ratio_sum", "white_box_scores"]

WHITE_BOX, BLACK_BOX = "white-box", "black-box"
THREATS = (WHITE_BOX, BLACK_BOX)
LOSS, LOSS_DIFFERENCE = "loss", "loss-difference"
BLACK_BOX_SCORES = (LOSS, LOSS_DIFFERENCE)


def white_box_scores(iterates: np.ndarray, canaries: DPSGDCanaries, *, model: FlatModel, config: DPSGDConfig,
                     sample_rate: float, sum_scale: float, data: TrainingData | None = None) -> np.ndarray:
    """Return each canary's summed per-step log-likelihood ratio from the iterates θ₀ … θ_T ((T + 1, P)): (m,).

    `sum_scale` turns an update into the noisy gradient sum (q·n/lr for the
    trainer's expected batch q·n), `sample_rate` is q. With the training
    `data`, a gradient canary's projections are taken net of the data's
    predicted part and their scale widened by its sampling variance
    (`data_gradients`). The iterates of R runs ((R, T + 1, P)) give (R, m),
    each row what that run's iterates alone give; the data's moments at θ₀
    are then computed once for the runs that share it. Inputs: the iterates
    (the release), and the canaries, model, settings, `sum_scale` (n counts
    the data without canaries) and data, all fixed before the game.
    """
    settings = {"model": model, "config": config, "sample_rate": sample_rate, "sum_scale": sum_scale, "data": data}
    if iterates.ndim == 3:
        starts: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
        return np.stack([_white_box(run, canaries, **settings, starts=starts) for run in iterates])
    return _white_box(iterates, canaries, **settings, starts={})


def _white_box(iterates: np.ndarray, canaries: DPSGDCanaries, *, model: FlatModel, config: DPSGDConfig,
               sample_rate: float, sum_scale: float, data: TrainingData | None,
               starts: dict[bytes, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Return one run's white-box scores (m,) from its iterates (T + 1, P); `starts` holds data moments at θ₀ already computed."""
    sums = (iterates[:-1] - iterates[1:]).astype(np.float64) * sum_scale
    scale = config.noise_multiplier * config.clip_norm
    projections, norms = _projections(iterates[:-1], sums, canaries, model=model, clip_norm=config.clip_norm)
    if data is not None and canaries.gradients is not None:
        directions, _ = _unit_clipped(canaries.gradients.astype(np.float64), config.clip_norm)
        mean, variance = data_gradient_moments(iterates[:-1], directions, model=model, data=data,
                                               clip_norm=config.clip_norm, sample_rate=sample_rate, starts=starts)
        projections, scale = projections - mean, np.sqrt(scale**2 + variance)
    return likelihood_ratio_sum(projections / scale, norms / scale, sample_rate)


def likelihood_ratio_sum(x: np.ndarray, mu: np.ndarray, q: float) -> np.ndarray:
    """Return Σ_t log(1 − q + q·exp(μ_t x_t − μ_t²/2)) over the rows t of (T, m) arrays: each step's Neyman–Pearson statistic.

    x_t is a step's noisy sum projected on the canary's clipped direction in
    units of the noise σC, μ_t the clipped norm in the same units; at q = 1
    the terms are μ_t x_t − μ_t²/2.
    """
    step = mu * x - mu**2 / 2
    return (np.log1p(q * np.expm1(step)) if q < 1 else step).sum(axis=0)


def _projections(thetas: np.ndarray, sums: np.ndarray, canaries: DPSGDCanaries, *, model: FlatModel,
                 clip_norm: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (T, m) projections of each step's noisy sum on each canary's clipped gradient direction, and the norms.

    A gradient canary's clipped gradient is the same at every step (one
    matrix product for all steps); an input canary's is computed at each θ_t.
    """
    if canaries.gradients is not None:
        directions, norms = _unit_clipped(canaries.gradients.astype(np.float64), clip_norm)
        return sums @ directions.T, norms
    steps = [_unit_clipped(_input_gradients(theta, canaries, model).astype(np.float64), clip_norm) for theta in thetas]
    return (np.stack([d @ noisy for (d, _), noisy in zip(steps, sums)]), np.stack([n for _, n in steps]))


def _unit_clipped(grads: np.ndarray, clip_norm: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the unit directions of `grads` and their norms after clipping each to C, as a correct trainer clips."""
    norms = np.linalg.norm(grads, axis=1)
    return grads / np.maximum(norms, 1e-12)[:, None], np.minimum(norms, clip_norm)


def _input_gradients(theta: np.ndarray, canaries: DPSGDCanaries, model: FlatModel) -> np.ndarray:
    torch = model.torch
    grads = model.per_example_gradients(model.tensor(theta), model.tensor(canaries.x),
                                        torch.as_tensor(canaries.y, device=model.device))
    return grads.cpu().numpy()


def black_box_scores(theta0: np.ndarray | None, final: np.ndarray, canaries: DPSGDCanaries, *,
                     losses: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray], score: str = LOSS) -> np.ndarray:
    """Return each canary's black-box score from the final parameters (θ₀ is the public initialisation).

    Dirac canaries: the displacement ⟨θ₀ − θ_T, u⟩ along the canary's
    direction u. Input canaries: −loss(θ_T) ("loss") or loss(θ₀) − loss(θ_T)
    ("loss-difference"), with `losses(params, x, y)` the per-example losses.
    Inputs: θ_T (the release), θ₀ and the canaries, fixed before the game.
    """
    if canaries.gradients is not None:
        directions = canaries.gradients / np.linalg.norm(canaries.gradients, axis=1, keepdims=True)
        return directions.astype(np.float64) @ (theta0 - final).astype(np.float64)
    if score not in BLACK_BOX_SCORES:
        raise InvalidParameterError(f"The black-box score must be one of {', '.join(BLACK_BOX_SCORES)}; got {score!r} instead.")
    final_loss = losses(final, canaries.x, canaries.y)
    if score == LOSS:
        return -final_loss
    if theta0 is None:
        raise InvalidParameterError("The loss-difference score needs the initial parameters; use the loss score.")
    return losses(theta0, canaries.x, canaries.y) - final_loss


def canary_scores(theta0: np.ndarray | None, iterates: np.ndarray, canaries: DPSGDCanaries, *, threat: str,
                  trainer: Any, score: str = LOSS) -> np.ndarray:
    """Return the canaries' scores under `threat` ("white-box": the iterates θ₀ … θ_T; "black-box": θ₀ and θ_T).

    `iterates` are one run's ((T + 1, P); scores (m,)) or R runs' ((R, T + 1, P);
    scores (R, m), each run scored alone). `trainer` (a `DPSGDTrainer`,
    `OpacusTrainer` or `UserTrainer`) gives the losses, and for white-box
    the model, the settings and the update normalisation the attacker knows.
    """
    if threat == WHITE_BOX:
        return white_box_scores(iterates, canaries, model=trainer.model, config=trainer.config,
                                sample_rate=trainer.sample_rate, sum_scale=trainer.sum_scale, data=trainer.data)
    if threat == BLACK_BOX:
        finals = iterates[..., -1, :]
        if finals.ndim == 1:
            return black_box_scores(theta0, finals, canaries, losses=trainer.losses, score=score)
        return np.stack([black_box_scores(theta0, final, canaries, losses=trainer.losses, score=score) for final in finals])
    raise InvalidParameterError(f"The threat model must be one of {', '.join(THREATS)}; got {threat!r} instead.")
