"""Canaries for a user's own training function, chosen from one probe run before the audited runs."""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.attacks.dpsgd.canaries import (
    BIAS,
    CANARY_KINDS,
    CRAFTED,
    DIRAC,
    DIRAC_SCALE,
    DIRAC_TARGETS,
    MISLABELLED,
    QUIET,
    DPSGDCanaries,
    mislabelled_canaries,
)
from dpaudit.attacks.dpsgd.clip_reach import reaching_canaries
from dpaudit.attacks.dpsgd.numeric_gradients import touched
from dpaudit.mechanisms.dpsgd.hook import HookRecord
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer
from dpaudit.mechanisms.errors import InvalidParameterError

__all__ = ["user_canaries"]


def user_canaries(kind: str, m: int, trainer: UserTrainer, rng: np.random.Generator, *, ladder: bool,
                  target: str = QUIET) -> DPSGDCanaries:
    """Return the canaries of `kind` for `trainer`, with the coordinates their gradients touch.

    θ₀ comes from a probe run on the data alone (outside the game), so the
    canaries are fixed before any audited run. Crafted canaries reach the
    stated clip norm, or form the ladder of `clip_reach` (one canary per
    norm when `ladder`, else m cycling over the norms). Dirac canaries
    (`target` "quiet" or "bias") need the hook in the user's Opacus loop.
    """
    probe_rng = np.random.default_rng(rng.integers(2**63))
    if kind == DIRAC:
        return _hooked_diracs(m, trainer.probe(probe_rng), rng, target)
    theta0 = trainer.initial(probe_rng)
    if kind == CRAFTED:
        return reaching_canaries(m, data=trainer.data, theta0=theta0, clip_norm=trainer.clip_norm,
                                 losses=trainer.losses, rng=rng, per_norm=ladder)
    if kind == MISLABELLED:
        if trainer.data.rows == 0:
            raise InvalidParameterError("Mislabelled canaries are real rows with wrong labels: train on some rows (dataset=20).")
        made = mislabelled_canaries(m, data=trainer.data, rng=rng)
        return dataclasses.replace(made, support=touched(trainer.losses, theta0, made.x, made.y))
    raise InvalidParameterError(f"The canary kind must be one of {', '.join(CANARY_KINDS)}; got {kind!r} instead.")


def _hooked_diracs(m: int, record: HookRecord, rng: np.random.Generator, target: str) -> DPSGDCanaries:
    """Return m Dirac gradients of norm DIRAC_SCALE·C on distinct coordinates of the hooked model.

    The coordinates are the ones the probe run's first batch touched least
    ("quiet", ties in random order) or random biases ("bias"), as
    `canaries.dirac_canaries` picks them in dpaudit's own trainer.
    """
    if target not in DIRAC_TARGETS:
        raise InvalidParameterError(f"The Dirac target must be one of {', '.join(DIRAC_TARGETS)}; got {target!r} instead.")
    if target == BIAS:
        candidates = rng.permutation(np.flatnonzero(record.bias_mask))
    else:
        candidates = np.lexsort((rng.random(record.size), record.activity))
    if m > len(candidates):
        raise InvalidParameterError(f"{m} Dirac canaries need {m} distinct {target} coordinates, but the model has {len(candidates)}.")
    gradients = np.zeros((m, record.size), dtype=np.float32)
    gradients[np.arange(m), candidates[:m]] = DIRAC_SCALE * record.settings["clip_norm"]
    return DPSGDCanaries(DIRAC, gradients=gradients)
