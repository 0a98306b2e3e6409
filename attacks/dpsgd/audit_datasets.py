"""The datasets a user's loop is audited on, besides the canaries: the user's, a few rows, none, or adversarial rows.

A DP claim holds for every dataset, so a lower bound on any pair of
neighbouring datasets refutes it, and the auditor may pick the dataset on
which a bug shows most (Nasr, Song, Thakurta, Papernot, Carlini, IEEE S&P
2021). What each reveals:

- "canaries" (the canaries alone, where the loop accepts an empty
  dataset): no other example's gradient to hide the canary's, so any
  excess of one example's effect (noise not scaled by C, parameters left
  out of clipping, a sampling rate above the claimed one) shows in full;
- FEW_ROWS of the user's rows: the same for a loop that needs data;
- "adversarial" (`adversarial`): rows against each crafted canary, or raw
  gradients against a Dirac canary through the hook, which show clipping of
  a batch's sum instead of each example;
- "batch-adversarial" (`adversarial`): units of a row against one crafted
  canary and zero rows of the other labels, too many for training to fit,
  so that every batch's sum points against the canary (the same bug, where
  training would fit the few "adversarial" rows);
- "user": the user's own data, as trained in practice (bugs that depend on
  the data's gradients, e.g. on their norms).

Every dataset is fixed before the game: rows drawn from the audit's data
stream, adversarial rows from θ₀ of a probe run.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.attacks.dpsgd.adversarial import (
    ADVERSARIES,
    UNITS,
    adversarial_dataset,
    batch_adversarial_dataset,
    dirac_adversaries,
)
from dpaudit.attacks.dpsgd.canaries import AUTO, CRAFTED, DIRAC, MISLABELLED, DPSGDCanaries
from dpaudit.attacks.dpsgd.user_canaries import user_canaries
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

__all__ = ["ADVERSARIAL", "AUTO", "BATCH_ADVERSARIAL", "CANARIES_ONLY", "FEW_ROWS", "USER_DATA", "AuditDataset", "Candidates",
           "candidate_datasets", "user_dataset"]

USER_DATA, CANARIES_ONLY, ADVERSARIAL, BATCH_ADVERSARIAL = "user", "canaries", "adversarial", "batch-adversarial"
FEW_ROWS = 2
SAME_RATE = 0.01  # relative difference of a hooked loop's sampling rates taken as the same


@dataclasses.dataclass(frozen=True)
class AuditDataset:
    """One dataset a user's loop is audited on: its key (as `dataset=` names it), its label, the trainer on it, its canaries."""

    key: str | int
    label: str
    trainer: UserTrainer
    canaries: DPSGDCanaries


def user_dataset(target: UserTrainer, dataset: str | int, kind: str, m: int, rng: np.random.Generator, *,
                 ladder: bool, dirac_target: str) -> AuditDataset:
    """Return the dataset `dataset` names ("user", "canaries", "adversarial", "batch-adversarial" or k rows drawn
    from `rng`) with its canaries.

    Raises:
        InvalidParameterError: an adversarial dataset with canaries other than crafted ones, or "batch-adversarial"
            for losses that are not finite on any crafted input.
    """
    if dataset in (ADVERSARIAL, BATCH_ADVERSARIAL):
        return _adversarial(target, dataset, kind, rng, ladder=ladder, dirac_target=dirac_target)
    n = target.data.rows
    if dataset == CANARIES_ONLY:
        trainer, label = target.on_rows(np.arange(0)), "the canaries alone"
    elif dataset == USER_DATA or dataset >= n:
        trainer, label = target, f"the user's data ({n} rows)"
    else:
        rows = np.sort(rng.choice(n, size=dataset, replace=False))
        trainer, label = target.on_rows(rows), f"{dataset} of the user's {n} rows (drawn from the seed)"
    return AuditDataset(dataset, label, trainer, user_canaries(kind, m, trainer, rng, ladder=ladder, target=dirac_target))


def _adversarial(target: UserTrainer, dataset: str, kind: str, rng: np.random.Generator, *, ladder: bool,
                 dirac_target: str) -> AuditDataset:
    """Return the "adversarial" dataset of crafted or Dirac canaries, or the "batch-adversarial" one of a crafted
    canary (see `user_dataset`)."""
    if dataset == ADVERSARIAL and kind == DIRAC:
        made = user_canaries(DIRAC, 1, target, rng, ladder=ladder, target=dirac_target)
        record = target.probe_here(np.random.default_rng(rng.integers(2**63)))
        canaries = dirac_adversaries(made, record.settings["sample_rate"], float(np.linalg.norm(record.activity)))
        label = f"adversarial: {len(canaries.background)} gradients against the Dirac canary, with the user's data"
        return AuditDataset(ADVERSARIAL, label, target, canaries)
    if kind != CRAFTED:
        kinds = "crafted or Dirac canaries' (canary='crafted' or 'dirac')" if dataset == ADVERSARIAL else \
            "crafted canaries' (canary='crafted')"
        raise InvalidParameterError(
            f"The {dataset} dataset holds rows whose gradients oppose {kinds}; got {kind!r} canaries; "
            "use another canary kind or dataset."
        )
    if dataset == ADVERSARIAL:
        trainer, canaries = adversarial_dataset(target, rng, ladder=ladder)
        label = f"adversarial: {ADVERSARIES} rows against each crafted canary ({trainer.data.rows} rows)"
        return AuditDataset(ADVERSARIAL, label, trainer, canaries)
    made = _batch_adversarial(target, rng)
    if made is None:
        raise InvalidParameterError(
            f"The losses of {target.name} are not finite on any crafted input, so no row can oppose a batch-adversarial "
            "canary; use another dataset."
        )
    return made


def _batch_adversarial(target: UserTrainer, rng: np.random.Generator) -> AuditDataset | None:
    """Return the "batch-adversarial" dataset and its canary, or None when no crafted input has a finite loss."""
    made = batch_adversarial_dataset(target, rng)
    if made is None:
        return None
    trainer, canaries = made
    label = (f"batch-adversarial: {UNITS} units of a row against the canary and a zero row of each other label "
             f"({trainer.data.rows} rows)")
    return AuditDataset(BATCH_ADVERSARIAL, label, trainer, canaries)


@dataclasses.dataclass(frozen=True)
class Candidates:
    """The datasets `dataset="auto"` screens, and those it left out because the loop failed on them (`failed`:
    "label: why", for the result's `screening_failed`)."""

    datasets: tuple[AuditDataset, ...]
    failed: tuple[str, ...] = ()


def candidate_datasets(target: UserTrainer, kind: str, rng: np.random.Generator, *, dirac_target: str) -> Candidates:
    """Return the datasets `dataset="auto"` screens, each with its ladder of canaries: those that apply and train.

    The canaries alone (not for mislabelled canaries, which are rows of the
    data), FEW_ROWS rows, the two adversarial datasets (crafted canaries) and
    the user's data. A dataset that cannot be built, or on which the loop
    fails in a probe run (outside the game: all its canaries in, then none),
    is left out and named with the reason in `failed`, e.g. the canaries
    alone for a loop that divides by q·n = 0; so is, for Dirac canaries (a
    hooked loop, whose sampling rate its probe runs show), one on which the
    loop samples at another rate than on the user's data (datasets that are
    the user's data are not probed again), which is not a failure and is
    not named.
    """
    keys = [*([CANARIES_ONLY] if kind != MISLABELLED else []), FEW_ROWS,
            *([ADVERSARIAL, BATCH_ADVERSARIAL] if kind == CRAFTED else [ADVERSARIAL] if kind == DIRAC else []), USER_DATA]
    built = [_built(target, key, kind, rng, dirac_target) for key in keys]  # all built, then probed: the draws' order
    probed = [(dataset, why or _fails(dataset, rng)) for dataset, why in built]
    trained = [dataset for dataset, why in probed if why is None]
    failed = [why for _, why in probed if why is not None]
    if kind == DIRAC:
        rate = _sample_rate(target, rng)
        trained = [dataset for dataset in trained if dataset.trainer.data is target.data
                   or abs(_sample_rate(dataset.trainer, rng) - rate) <= SAME_RATE * rate]
    return Candidates(tuple(trained), tuple(failed))


def _sample_rate(trainer: UserTrainer, rng: np.random.Generator) -> float:
    """Return the rate at which the hooked loop samples on `trainer`'s data, from a probe run (outside the game).

    Datasets on which it differs from the user's data's are not screened: a
    loop that derives q from its data's size (Opacus: a fixed batch size
    over n rows) samples every row at q = 1 on a few rows, a different
    mechanism from the one its claim accounts for, which such a dataset
    would refute without any bug in the code.
    """
    return trainer.probe_here(np.random.default_rng(rng.integers(2**63))).settings["sample_rate"]


def _built(target: UserTrainer, key: str | int, kind: str, rng: np.random.Generator,
           dirac_target: str) -> tuple[AuditDataset | None, str | None]:
    """Return the candidate dataset `key` with its ladder of canaries, or None and why it cannot be built."""
    if key == BATCH_ADVERSARIAL:
        made = _batch_adversarial(target, rng)
        return made, None if made is not None else (
            f"{BATCH_ADVERSARIAL}: the losses are not finite on any crafted input, so no row can oppose the canary")
    return user_dataset(target, key, kind, 1, rng, ladder=True, dirac_target=dirac_target), None


def _fails(dataset: AuditDataset, rng: np.random.Generator) -> str | None:
    """Return why the loop fails on `dataset` with all its canaries in or with none (two probe runs), or None."""
    probe_rng = np.random.default_rng(rng.integers(2**63))
    try:
        for included in (True, False):
            mask = np.full(dataset.canaries.size, included)
            dataset.trainer.train(None, dataset.canaries.insertions(mask), probe_rng, keep_iterates=False)
    except MechanismError as error:
        return f"{dataset.label}: {error}"
    return None
