"""Adversarial datasets: rows whose gradients point against the canary's, so that a batch-level clipping bug shows.

Nasr, Song, Thakurta, Papernot and Carlini, "Adversary instantiation: lower
bounds for differentially private machine learning" (IEEE S&P 2021): a DP
claim holds for every dataset, so the auditor may pick one on which a bug
is largest. Per-example clipping bounds one example's effect on a step's
sum by C whatever the others do; code that clips the batch's summed
gradient instead does not: when the other examples' sum is −a·u with
‖a‖ ≥ C, the clipped sum is −C·u without the canary and +C·u with a canary
b·u of b ≥ a + C, a move of 2C. So the dataset holds, for each crafted
canary b·e_j (label y), ADVERSARIES rows −a·e_j of the same label: at θ₀
(logistic regression) their weight gradients are exactly opposite to the
canary's, their bias gradients alike (small beside the weights when a is
large: a is at least large enough for a cosine of OPPOSED or less with the
canary's gradient). Magnitudes, chosen before the game from θ₀ of a probe run (outside
it): with C stated, each row's gradient norm reaches C (the clip binds as
soon as one is sampled) and the canary's (ADVERSARIES + 1)·C (it outweighs
all of them); without C, the canaries form the ladder of `clip_reach` and
each row reaches 1/(ADVERSARIES + 1) of its canary's norm. With K rows per
canary, Poisson rate q, at least one is in a step's batch with probability
1 − (1 − q)^K (0.96 at q = 0.1, K = 30).

A correct loop treats these rows as any rows: its claim holds on this
dataset as on any other, so the audit stays sound; what this dataset
reveals is clipping of a sum of examples (a batch's, a microbatch's) rather
than of each example.

`batch_adversarial_dataset` goes further for loops whose training would
soon fit a few such rows: UNITS units, each one row −a·e_j of the canary's
label y and one all-zero row of every other label. At uniform predictions
(softmax regression at θ₀) the bias gradients of a unit sum to zero
(Σ_k (p − e_k) = 0), so a unit's gradient lies exactly against the canary's
weights; with UNITS·classes rows a step moves the model by about C/(q·n),
too little to fit them in a few dozen steps, and each batch holds about
q·UNITS of them. Without C, a row's gradient reaches ROW_NORM and the
canary's CANARY_RATIO times that (more than q·UNITS rows at q ≤ 0.2), so
the batch's sum points against the canary with norm above C for C up to
about q·UNITS·ROW_NORM, and the canary turns it around.

`dirac_adversaries` builds the same dataset in gradient space, for a Dirac
canary e_j put into a user's Opacus loop through the hook, with its data:
⌈BATCH_SHARE/q⌉ raw gradients −r·e_j, sampled like examples, so that a
batch holds BATCH_SHARE of them on average. r is ROW_SCALE·C, or more, so
that their sum outweighs the rows' summed gradient DOMINANCE times (its
norm bounded from a probe run's first step); the canary's norm is twice
their sum plus C. A clip of the batch's sum then holds it at −C along e_j
without the canary and turns it to about +C with it. Raw gradients are the
records of the gradient-space threat model the Dirac canary itself belongs
to, and per-example clipping bounds each of them by C.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.attacks.dpsgd.canaries import DIRAC_SCALE, DPSGDCanaries
from dpaudit.attacks.dpsgd.clip_reach import MAGNITUDES, REACH, reaching_canaries, target_norms
from dpaudit.attacks.dpsgd.numeric_gradients import loss_gradients
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

__all__ = ["ADVERSARIES", "UNITS", "adversarial_dataset", "batch_adversarial_dataset", "dirac_adversaries"]

ADVERSARIES = 30
OPPOSED = -0.5  # a row's gradient at θ₀ has at most this cosine with its canary's
UNITS = 100
ROW_NORM = 2.0
CANARY_RATIO = 32.0
BATCH_SHARE = 2.0
ROW_SCALE = 2.0
DOMINANCE = 4.0


def adversarial_dataset(trainer: UserTrainer, rng: np.random.Generator, *, ladder: bool) -> tuple[UserTrainer, DPSGDCanaries]:
    """Return `trainer` on an adversarial dataset (ADVERSARIES rows against each crafted canary), and those canaries.

    θ₀ comes from a probe run on the user's data (outside the game); the
    canaries (one per ladder norm when `ladder`, else one) and the rows are
    fixed before any audited run. A canary of magnitude 0 (the bias
    gradient alone) gets no rows: no input's gradient opposes it.
    """
    probe_rng = np.random.default_rng(rng.integers(2**63))
    theta0 = trainer.initial(probe_rng)
    c = trainer.clip_norm
    norms = target_norms(None) if c is None else ((ADVERSARIES + 1) * c,)
    canaries = reaching_canaries(1, data=trainer.user_data, theta0=theta0, clip_norm=c, losses=trainer.losses, rng=rng,
                                 per_norm=ladder, norms=norms)
    opposed = np.flatnonzero(canaries.magnitudes > 0)
    features = np.argmax(np.abs(canaries.x[opposed]), axis=1)
    labels = canaries.y[opposed]
    wanted = np.array([norms[i % len(norms)] for i in opposed]) / (ADVERSARIES + 1)
    magnitudes = _opposing_magnitudes(canaries, opposed, features, wanted, theta0, trainer)
    x = np.zeros((len(opposed) * ADVERSARIES, trainer.user_data.features), dtype=np.float32)
    rows = np.arange(len(x))
    x[rows, np.repeat(features, ADVERSARIES)] = -np.repeat(magnitudes, ADVERSARIES)
    return trainer.on_data(x, np.repeat(labels, ADVERSARIES)), canaries


def batch_adversarial_dataset(trainer: UserTrainer, rng: np.random.Generator) -> tuple[UserTrainer, DPSGDCanaries] | None:
    """Return `trainer` on UNITS units against one crafted canary (see the module), and that canary; None when the
    canary's loss is not finite at any magnitude above 0 (its input would be all zeros, which no row opposes).

    Norms at θ₀ of a probe run (outside the game): a row's REACH·C with C
    stated, else ROW_NORM; the canary's CANARY_RATIO times a row's.
    """
    theta0 = trainer.initial(np.random.default_rng(rng.integers(2**63)))
    c = trainer.clip_norm
    row_norm = ROW_NORM if c is None else REACH * c
    canary = reaching_canaries(1, data=trainer.user_data, theta0=theta0, clip_norm=c, losses=trainer.losses, rng=rng,
                               per_norm=True, norms=(CANARY_RATIO * row_norm,))
    if canary.magnitudes[0] == 0:
        return None
    feature, label, classes = int(np.argmax(np.abs(canary.x[0]))), int(canary.y[0]), trainer.user_data.classes
    magnitude = _opposing_magnitudes(canary, np.array([0]), np.array([feature]), np.array([row_norm]), theta0, trainer)[0]
    unit = np.zeros((classes, trainer.user_data.features), dtype=np.float32)
    unit[0, feature] = -magnitude
    unit_labels = np.concatenate([[label], np.delete(np.arange(classes), label)])
    return trainer.on_data(np.tile(unit, (UNITS, 1)), np.tile(unit_labels, UNITS)), canary


def dirac_adversaries(canaries: DPSGDCanaries, sample_rate: float, data_norm: float) -> DPSGDCanaries:
    """Return Dirac `canaries` (norm DIRAC_SCALE·C) rescaled, with a background of ⌈BATCH_SHARE/q⌉ gradients against each.

    `sample_rate` q and `data_norm` (an upper bound on the norm of a batch's
    summed gradient of the rows) come from a probe run outside the game.
    """
    grads = canaries.gradients.astype(np.float64)
    units = grads / np.linalg.norm(grads, axis=1, keepdims=True)
    clip = float(np.linalg.norm(grads[0])) / DIRAC_SCALE
    row = max(ROW_SCALE * clip, DOMINANCE * data_norm / BATCH_SHARE)
    count = int(np.ceil(BATCH_SHARE / sample_rate))
    dtype = canaries.gradients.dtype
    return dataclasses.replace(canaries, gradients=(units * (2 * BATCH_SHARE * row + clip)).astype(dtype),
                               background=(-np.repeat(units, count, axis=0) * row).astype(dtype))


def _opposing_magnitudes(canaries: DPSGDCanaries, opposed: np.ndarray, features: np.ndarray, wanted: np.ndarray,
                         theta0: np.ndarray, trainer: UserTrainer) -> np.ndarray:
    """Return for each opposed canary the smallest grid magnitude a > 0 whose row −a·e_j reaches its wanted norm at θ₀
    with a gradient of cosine at most OPPOSED with the canary's (the largest finite one on the grid when none does)."""
    support = canaries.support
    grads = loss_gradients(trainer.losses, theta0, canaries.x[opposed], canaries.y[opposed], support)
    chosen = np.zeros(len(opposed))
    for k, (feature, label) in enumerate(zip(features, canaries.y[opposed])):
        for magnitude in MAGNITUDES[MAGNITUDES > 0]:
            row = np.zeros((1, trainer.user_data.features))
            row[0, feature] = -magnitude
            if not np.isfinite(trainer.losses(theta0, row, np.array([label]))).all():
                break
            chosen[k] = magnitude
            g = loss_gradients(trainer.losses, theta0, row, np.array([label]), support)[0]
            norm = np.linalg.norm(g)
            if norm >= wanted[k] and g @ grads[k] <= OPPOSED * norm * np.linalg.norm(grads[k]):
                break
    return chosen
