"""Canaries for a user's own training function, chosen from one probe run before the audited runs."""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.attacks.dpsgd.canaries import (
    CANARY_KINDS,
    CRAFTED,
    DIRAC,
    MISLABELLED,
    QUIET,
    DPSGDCanaries,
    diracs_on,
    mislabelled_canaries,
)
from dpaudit.attacks.dpsgd.clip_reach import reaching_canaries
from dpaudit.attacks.dpsgd.numeric_gradients import touched
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.dpsgd.hook import HookRecord
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

__all__ = ["user_canaries"]


def user_canaries(kind: str, m: int, trainer: UserTrainer, rng: np.random.Generator, *, ladder: bool,
                  target: str = QUIET) -> DPSGDCanaries:
    """Return the canaries of `kind` for `trainer`, with the coordinates their gradients touch.

    θ₀ comes from a probe run on the data alone (outside the game), so the
    canaries are fixed before any audited run. Crafted canaries reach the
    stated clip norm, or form the ladder of `clip_reach` (one canary per
    norm when `ladder`, else m cycling over the norms). Dirac canaries
    (`target` "quiet" or "bias", of norm DIRAC_SCALE·C) need the hook in
    the user's Opacus loop.
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
    """Return m Dirac gradients of norm DIRAC_SCALE·C on the hooked model, placed as in dpaudit's trainer.

    The probe run's first batch gives the activity of each coordinate, and
    its optimizer the clip norm C.
    """
    return diracs_on(m, bias_mask=record.bias_mask, activity=record.activity, clip_norm=record.settings["clip_norm"],
                     rng=rng, target=target)
